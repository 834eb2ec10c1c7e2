"""
Exact solve with dank_ref and its certificate
=============================================

:mod:`dank_ref` writes DANK-SVM (problem P1, the paper's eq. (4)) as one semidefinite
program in CVXPY and certifies the point it returns with its own code: ``lower <= v* <= upper``
holds for the true optimal value ``v*``, whatever the conic solver reported.  Its certificate
is then recomputed by :mod:`dank_fast`, an independent implementation.
"""

# %%
# Solve a small instance exactly
# ------------------------------
# ``dank_ref`` is meant for small ``n`` (up to a few hundred points with SCS): it is the
# reference the fast solvers are checked against.
import numpy as np
from sklearn.datasets import make_moons

import dank_ref

X, y01 = make_moons(40, noise=0.2, random_state=0)
y = 2.0 * y01 - 1.0
sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
K = np.exp(-sq / (2 * 0.5**2))                        # Gaussian kernel, sigma = 0.5
ref = dank_ref.solve_svm(K, y, C=1.0, eta=10.0, tau=0.01)
print(ref.status, f"lower={ref.lower:.6f} upper={ref.upper:.6f} rel_gap={ref.rel_gap:.1e}")
assert ref.lower <= ref.upper and ref.rel_gap <= 1e-6

# %%
# The same certificate, computed by the other package
# ---------------------------------------------------
# :func:`dank_fast.svm_certificate` evaluates the bounds of any feasible ``alpha`` from the
# problem data alone.  The two packages share no code, so agreement is a cross-check.
from dank_fast import solve_svm, svm_certificate

cert = svm_certificate(K, y, ref.alpha, C=1.0, eta=10.0, tau=0.01)
print(f"dank_fast's certificate of dank_ref's point: rel_gap={cert.rel_gap:.1e}")
fast = solve_svm(K, y, C=1.0, eta=10.0, tau=0.01, tol=1e-8)
print(f"dank_fast's own solve: [{fast.lower:.6f}, {fast.upper:.6f}]")
assert max(ref.lower, fast.lower) <= min(ref.upper, fast.upper) + 1e-9

# %%
# The learned kernel
# ------------------
# ``F`` rescales ``K`` entry by entry; the learned kernel is ``F o K``.  ``F``'s entries stay
# near 1 (the regulariser ``eta ||F - 11'||_F^2``) and its rank is below ``n`` (the nuclear-norm
# weight ``tau``).  Points are sorted by class.
import matplotlib.pyplot as plt

fig, axes = plt.subplots(1, 2, figsize=(8, 3.4), layout="constrained")
order = np.argsort(y, kind="stable")
for ax, M, title in [(axes[0], K, "K"), (axes[1], ref.F, "F")]:
    im = ax.imshow(M[np.ix_(order, order)], cmap="viridis")
    ax.set_title(title)
    fig.colorbar(im, ax=ax, shrink=0.8)
print("rank of F:", np.linalg.matrix_rank(ref.F, tol=1e-6 * np.abs(ref.F).max()))
