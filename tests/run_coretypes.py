"""Run the numerically sensitive tests again under a second OpenBLAS core type.

A result that depends on the BLAS kernels (their rounding) must not land: the default test run
uses the core type OpenBLAS picks on this machine (or ``OPENBLAS_CORETYPE`` if set); this script
picks a second one *that the CPU can execute* and that differs from it, and runs the solver,
certificate, estimator and oracle tests under it with one BLAS thread (the default run uses
all cores, so thread-count dependence is caught too).

Candidates, in order: ``SkylakeX`` (needs ``avx512f`` in /proc/cpuinfo), ``Haswell``
(``avx2``), ``Sandybridge`` (``avx``). A core type the CPU lacks would die with an illegal
instruction, so it is never forced. Without OpenBLAS (e.g. an MKL numpy) or /proc/cpuinfo the
script says why and exits 0.

Usage: ``python tests/run_coretypes.py [extra pytest args]`` (the README's test command ends
with it; ``.ci/run`` runs that command). Exit code: pytest's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CANDIDATES = (("SkylakeX", "avx512f"), ("Haswell", "avx2"), ("Sandybridge", "avx"))

#: the tests whose numbers come from BLAS: solvers, certificates, estimators, the oracle
SENSITIVE = [
    "tests/test_svm_solvers.py", "tests/test_newton.py",
    "tests/test_certificate.py", "tests/test_inner.py", "tests/test_svr.py",
    "tests/test_decomposed.py", "tests/test_working_set.py", "tests/test_cross_ref_fast.py",
    "tests/test_ref_certificate.py", "tests/test_golden_vectors.py",
    "tests/test_estimator.py", "tests/test_estimator_input.py", "tests/test_regressor.py",
    "tests/test_libsvm.py",
    "tests/test_certificate_candidates.py", "tests/test_cli_certify.py",
    "tests/test_ref_svm.py", "tests/test_ref_svr.py", "tests/test_ref_hessian.py",
    "tests/test_conformance_kit.py", "tests/test_psd_lowrank.py",
    "tests/test_decomposed_memory.py", "tests/test_warm_start.py", "tests/test_baselines.py",
]

_PROBE = ("import numpy, threadpoolctl; i = [x for x in threadpoolctl.threadpool_info() "
          "if x['internal_api'] == 'openblas']; print(i[0].get('architecture', '') if i else '')")


def cpu_flags() -> set[str]:
    """The CPU's feature flags from /proc/cpuinfo (empty if unreadable)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def openblas_coretype(env: dict[str, str]) -> str:
    """The core type OpenBLAS runs under ``env`` ('' without OpenBLAS)."""
    out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True,
                         check=False)
    return out.stdout.strip() if out.returncode == 0 else ""


def choose(flags: set[str], current: str) -> str | None:
    """The first candidate the CPU supports that differs from ``current``."""
    for name, flag in CANDIDATES:
        if flag in flags and name.lower() != current.lower():
            return name
    return None


def main(argv: list[str]) -> int:
    current = openblas_coretype(dict(os.environ))
    if not current:
        print("run_coretypes: numpy does not use OpenBLAS here; second core type skipped")
        return 0
    flags = cpu_flags()
    second = choose(flags, current)
    supported = [n for n, f in CANDIDATES if f in flags]
    if second is None:
        print(f"run_coretypes: default core type {current}; the CPU supports "
              f"{supported or 'none of the candidates'}: no second core type to run")
        return 0
    env = dict(os.environ, OPENBLAS_CORETYPE=second, OPENBLAS_NUM_THREADS="1")
    got = openblas_coretype(env)
    if got.lower() != second.lower():
        print(f"run_coretypes: OPENBLAS_CORETYPE={second} was not honoured (OpenBLAS reports "
              f"{got!r}); second core type skipped")
        return 0
    root = Path(__file__).resolve().parent.parent
    tests = [t for t in SENSITIVE if (root / t).exists()]
    print(f"run_coretypes: default OpenBLAS core type {current}; CPU supports {supported}; "
          f"running {len(tests)} numerically sensitive test modules under "
          f"OPENBLAS_CORETYPE={second} with 1 BLAS thread", flush=True)
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests, *argv]
    return subprocess.run(cmd, env=env, cwd=root, check=False).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
