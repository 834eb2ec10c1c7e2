"""
A large problem through the working-set route
=============================================

The learned ``F`` is ``n x n``, but no route needs it dense.  Given a
:class:`dank_fast.FeatureKernel` (the data and a kernel function, evaluated in blocks),
:func:`dank_fast.solve_svm` solves the *exact* problem on all points with working sets: memory
``8 |W|^2`` bytes for a working set ``W`` near the support, never ``8 n^2``.  The certificate is
that of the full problem.  Here ``n = 6,000`` (an ``n x n`` kernel would take 288 MB); the
route is the same at ``n = 50,000``.
"""

# %%
import time

import numpy as np

from dank_fast import FeatureKernel, solve_svm

rng = np.random.default_rng(0)
n = 6000
X = rng.normal(size=(n, 2))
y = np.where(X[:, 0] * X[:, 1] + 0.1 * rng.normal(size=n) > 0, 1.0, -1.0)
t = time.perf_counter()
res = solve_svm(FeatureKernel(X, sigma=0.7), y, C=1.0, eta=1000.0, tau=0.01, tol=1e-6)
print(f"{res.status}: rel_gap={res.rel_gap:.1e} in {time.perf_counter() - t:.1f} s")
print("route:", res.method, "| support vectors:", int((res.alpha > 0).sum()), "of", n)
assert res.status == "converged"

# %%
# The estimators take this route by themselves when the dense kernel would exceed 1 GiB
# (``DANKClassifier(route="auto")``), and ``DANKClassifier(decomposition=v)`` solves the
# paper's scalable problem P3 on ``v`` k-means clusters instead (next example).
