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
    ("dank_fast._threads", "blas_threads(10)"),
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
