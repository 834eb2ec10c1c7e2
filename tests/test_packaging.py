"""The wheel contains every subpackage and the golden vectors (a missing one broke dank-verify)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from verification.schemas import SCHEMAS

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_contains_all_packages_and_data(tmp_path):
    # build from a clean copy (setuptools reuses an in-tree build/ directory), isolated as
    # `pip install .` builds (the build backend comes from PyPI)
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", "build", "*.egg-info", "__pycache__", ".hypothesis", ".pytest_cache"))
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q", "-w", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = tmp_path.glob("dank_kernels-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for pkg in ("dank_fast", "dank_ref", "verification"):
        for init in (ROOT / pkg).rglob("__init__.py"):
            rel = init.relative_to(ROOT).as_posix()
            assert rel in names, f"{rel} missing from the wheel"
    golden = {p.relative_to(ROOT).as_posix() for p in (ROOT / "verification/golden").iterdir()
              if p.suffix in (".npz", ".json")}
    assert golden and golden <= names, sorted(golden - names)
    data = {p.relative_to(ROOT).as_posix() for p in (ROOT / "verification/schemas").iterdir()
            if p.suffix == ".json"} | {"verification/conformance/families.json",
                                       "verification/conformance/large.json"}
    assert len(data) == len(SCHEMAS) + 2 and data <= names, sorted(data - names)


def _third_party_imports(pkg: str) -> set[str]:
    """Top-level names of every absolute import in a package's sources (including lazy ones)."""
    import ast

    names: set[str] = set()
    for path in (ROOT / pkg).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"dank_fast", "dank_ref", "verification"}


def test_main_job_extra_covers_every_import_of_the_packages():
    """`pip install ".[report]"` (the README's main job) must bring every third-party module the
    three packages import, lazily or not: without hypothesis, on a fresh machine every claim
    with a guided search would end as 'check crashed'. Optional engines (dask) are checked
    against their own extra."""
    import re
    import tomllib

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    def dists(reqs):
        return {re.split(r"[<>=!\[ ;]", r, maxsplit=1)[0].lower().replace("-", "_")
                for r in reqs}

    have = dists(meta["dependencies"]) | dists(meta["optional-dependencies"]["report"])
    # pytest: only the conformance kit's pytest plugin and its test module import it, and
    # only pytest itself imports them
    optional = dists(meta["optional-dependencies"]["distributed"]) | {"dsp", "distributed",
                                                                        "pytest"}
    import_to_dist = {"sklearn": "scikit_learn", "dsp": "dsp_cvxpy"}
    missing = set()
    for pkg in ("dank_fast", "dank_ref", "verification"):
        for mod in _third_party_imports(pkg):
            dist = import_to_dist.get(mod, mod)
            if dist not in have and mod not in optional and dist not in optional:
                missing.add(f"{pkg}: {mod}")
    assert not missing, sorted(missing)
