"""
Fast certified solve with dank_fast
===================================

:func:`dank_fast.solve_svm` solves DANK-SVM (P1) to a *certified* relative duality gap: the
returned ``lower`` and ``upper`` bracket the optimal value, whatever path the solver took.
"""

# %%
# One solve and its certificate
# -----------------------------
from sklearn.datasets import make_moons

from dank_fast import compute_kernel, solve_svm

X, y01 = make_moons(200, noise=0.2, random_state=0)
y = 2.0 * y01 - 1.0
K = compute_kernel(X, sigma=0.5)              # Gaussian, k = exp(-|x-x'|^2 / (2 sigma^2))
res = solve_svm(K, y, C=1.0, eta=50.0, tau=0.01, tol=1e-8)
print(res.status, res.method, f"gap={res.gap:.2e}", f"rel_gap={res.rel_gap:.2e}")
assert res.success and res.lower <= res.upper and res.rel_gap <= 1e-8
F = res.F                                      # dense n x n; res.F_factors gives (mu, U)

# %%
# The methods
# -----------
# ``method="auto"`` (the default) runs Newton on the free set from the plain SVM's solution;
# ``"accelerated"`` is an accelerated projected gradient; ``"paper"`` is the paper's
# Algorithm 1 exactly as printed (here stopped after 200 iterations, far from the optimum:
# its step has the sign of a minimisation).  Only ``status == "converged"`` is a success, and
# it is decided by the certificate, never by the solver's own stopping rule.
import warnings

for method in ["auto", "accelerated", "paper"]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the ConvergenceWarning of the capped run
        r = solve_svm(K, y, C=1.0, eta=50.0, tau=0.01, tol=1e-6, method=method,
                      max_iter=200 if method == "paper" else None)
    print(f"{method:12s} {r.status:10s} rel_gap={r.rel_gap:.1e} iterations={r.n_iter}")
