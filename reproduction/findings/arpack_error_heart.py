"""Reproducer: dank_fast's Lanczos route (eig_route="auto" at n > 100) raises ArpackError.

Instance: the heart training fold on which ``dank-reproduce --quick`` crashed (split 2,
CV fold 0, min-max scaled, n = 108, d = 13), C = 1/32, sigma = 1/32, tau = 0.01,
eta = ||a_SVM||^2 = 0.0844, warm start a_SVM (what DANKClassifier does). Whether ARPACK
raises is not reproducible from run to run (its random start vector and BLAS round-off): on
this instance 2 of 3 consecutive fits raised ``ArpackError: ARPACK error 3: No shifts could
be applied ...`` in one process, 0 of 10 in later runs; ``dank-reproduce`` counts the CV fits
that raised (report: "CV fits that raised").

Fixed (issue 15): ARPACK starts from a fixed vector, and an ARPACK or LOBPCG failure falls
back to LOBPCG / the dense decomposition; this script now reports 0/10 for both routes.
Run from the repository root: ``python reproduction/findings/arpack_error_heart.py``.
"""

import time

import numpy as np
from threadpoolctl import threadpool_limits

from dank_fast import DANKClassifier, compute_kernel, solve_svm

z = np.load("reproduction/findings/arpack_error_heart.npz", allow_pickle=False)
X, y, C, sigma = z["X"], z["y"], float(z["C"]), float(z["sigma"])
K = compute_kernel(X, sigma=sigma)
threadpool_limits(limits=1)  # single-threaded BLAS, as in dank-reproduce's workers
for route in ("auto", "dense"):
    fails, t0 = [], time.perf_counter()
    for _ in range(10):
        try:
            DANKClassifier(C=C, sigma=sigma).fit(X, y)  # the estimator uses the default route
            if route == "dense":
                solve_svm(K, y, C=C, eta=float(z["eta"]), tau=0.01, method="newton",
                          alpha0=z["alpha0"], eig_route="dense")
            fails.append(None)
        except Exception as exc:  # noqa: BLE001
            fails.append(type(exc).__name__)
    print(route, f"{sum(f is not None for f in fails)}/10 raised", set(fails) - {None},
          f"{time.perf_counter() - t0:.2f}s")
