"""The exact reference never shares code with what it checks: dank_ref does not import dank_fast."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import dank_ref

REF_DIR = Path(dank_ref.__file__).resolve().parent


def test_no_dank_fast_import_statement_in_dank_ref():
    offenders = []
    for path in sorted(REF_DIR.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            offenders += [f"{path.name}: {n}" for n in names if n.split(".")[0] == "dank_fast"]
    assert not offenders, offenders


def test_importing_and_using_dank_ref_loads_no_dank_fast_module():
    code = (
        "import sys, pkgutil, importlib, numpy as np\n"
        "import dank_ref\n"
        "for m in pkgutil.walk_packages(dank_ref.__path__, 'dank_ref.'):\n"
        "    importlib.import_module(m.name)\n"
        "from dank_ref import certificate as rc\n"
        "rc.svm_certificate(np.eye(2), np.array([1.0, -1.0]), np.array([0.5, 0.5]), C=1.0,"
        " eta=1.0, tau=0.0)\n"
        "bad = [m for m in sys.modules if m.split('.')[0] == 'dank_fast']\n"
        "assert not bad, bad\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr


def test_the_oracle_building_blocks_load_neither_cvxpy_nor_the_solvers():
    """validation, projection, kernels and certificate need numpy and scipy only; the solvers
    (and cvxpy) load on first use of ``dank_ref.solve_*``."""
    code = (
        "import sys\n"
        "import dank_ref.validation, dank_ref.projection, dank_ref.kernels, dank_ref.certificate\n"
        "import dank_ref\n"
        "heavy = [m for m in sys.modules if m.split('.')[0] == 'cvxpy'"
        " or m in ('dank_ref.svm', 'dank_ref.conic')]\n"
        "assert not heavy, heavy\n"
        "assert callable(dank_ref.solve_svm) and 'cvxpy' in sys.modules\n"
        "assert dank_ref.DEFAULT_TAU == 0.01 and dank_ref.TOL == 1e-6\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
