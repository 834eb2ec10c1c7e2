"""The BLAS thread policies of both packages limit every BLAS library a solve uses.

A ``ThreadpoolController`` sees only the libraries loaded when it is made: each package's
policy loads numpy's and scipy's BLAS first, so a one-thread region limits scipy's ``eigh`` too,
whatever the order in which a user's program imports the packages.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_PROBE = """
import {module} as policy
import scipy.linalg  # loaded after the policy, as a later call of the package would load it
import threadpoolctl
with policy.{context}:
    counts = [i["num_threads"] for i in threadpoolctl.threadpool_info()
              if i["user_api"] == "blas"]
print(len(counts), max(counts))
"""


@pytest.mark.parametrize("module, context", [
    ("dank_ref._threads", "single_blas_thread()"),
    ("dank_fast._threads", "blas_threads()"),
])
def test_one_thread_region_limits_every_blas_library(module, context):
    # a fresh interpreter that imports the policy before anything imports scipy.linalg
    code = _PROBE.format(module=module, context=context)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=True,
                         env={"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "2",
                              "PYTHONPATH": str(ROOT)})
    n_libs, most = map(int, out.stdout.split())
    assert n_libs >= 1 and most == 1


_SOLVE = """
import numpy as np, threadpoolctl
from dank_fast import compute_kernel, solve_svm, solve_svr
rng = np.random.default_rng(0)
X = rng.standard_normal((60, 3))
K = compute_kernel(X, kernel="rbf", gamma=0.5)
seen = []
def probe(z, ev):
    seen.append(max(i["num_threads"] for i in threadpoolctl.threadpool_info()
                    if i["user_api"] == "blas"))
solve_{kind}(K, {target}, C=1.0, eta=1.0, method="accelerated", max_iter=3, callback=probe)
outside = max(i["num_threads"] for i in threadpoolctl.threadpool_info()
              if i["user_api"] == "blas")
print(max(seen), outside)
"""


@pytest.mark.parametrize("kind, target", [
    ("svm", "np.where(X[:, 0] > 0, 1.0, -1.0)"),
    ("svr", "X[:, 0] + 0.1 * X[:, 1], epsilon=0.1"),
])
@pytest.mark.filterwarnings("ignore")
def test_a_solve_runs_on_one_blas_thread_and_gives_the_threads_back(kind, target):
    code = _SOLVE.format(kind=kind, target=target)
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=True,
                         env={"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "2",
                              "PYTHONPATH": str(ROOT)})
    inside, outside = map(int, out.stdout.split())
    assert inside == 1 and outside == 2
