"""The Newton model's matrix on a kernel of low numerical rank, solved by Woodbury.

A smooth kernel on a few features is numerically of low rank: pivoted Cholesky factors give
``K = L L' + E`` and ``K o K = L2 L2' + E2`` with ``E``, ``E2`` PSD and their diagonals at most
the tolerance at which docs/validity.md accepts ``K`` as PSD
(:func:`dank_fast._psd.kernel_factors`, ``O(n r_K^2)``, grown on demand and kept for the
solve). The model curvature of :mod:`dank_fast._curvature` on the free coordinates (signs
``s``, ``D = diag(d_f)``, ``F = U diag(mu) U'``) is then

    H = Z Z' + c diag(kk) + s s' o (c D E2 D + F o E),
    Z = diag(s) [sqrt(c) D L2, sqrt(mu_1) diag(u_1) L, ..., sqrt(mu_k) diag(u_k) L]

(``f x R``, ``R = r2 + rank(F) r_K``; for ``tau = 0``, ``F o K = K + c D (K o K) D``). The last
term is PSD with norm at most ``rho = max_i F_ii tr E_ff + c max_i d_i^2 tr E2_ff``
(``lambda_max(A o B) <= max_i A_ii lambda_max(B)`` for PSD ``A``, ``B``), so ``Ht = Z Z' +
diag(c kk + rho)`` satisfies ``H <= Ht <= H + rho I``: like the model itself, it errs on the
side of short steps, by ``rho``. ``Ht^-1`` is applied by Woodbury with ``W = diag(c kk +
rho)^-1/2 Z``: ``(I + W W')^-1 = I - W (I + W'W)^-1 W'``, one Cholesky factor of ``I + W'W``.

Cost model: ``f R^2 + R^3 / 3`` flops and ``8 f R`` bytes against ``2 f^2 (r + 1) + f^3 / 3``
and ``8 f^2`` for the curvature factored in place; used where its flops are fewer
(``R <= 0.532 f``, :func:`dank_fast._cost.lowrank_columns`). The factors are grown within that
budget only as far as their flops (:func:`dank_fast._cost.growth_flops`: ``n_K k^2`` for ``k``
columns of ``n_K`` rows, each factor, plus the calls of its blocks) stay within the
``f^3 / 3`` of the Cholesky factor they would spare: an attempt that fails (a kernel that is
not of low rank) costs at most one Cholesky factor, at matrix-matrix speed like it, and its
columns are kept for the next model.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.linalg.blas import dsyrk

from ._cost import growth_flops, lowrank_columns
from ._curvature import correction_diagonal
from ._psd import kernel_factors

__all__ = ["lowrank_solve"]


def lowrank_solve(problem, ev, free: np.ndarray
                  ) -> tuple[Callable[[np.ndarray], np.ndarray], Callable] | None:
    """``(B -> Ht^-1 B, v -> v'Ht v)`` for the curvature ``Ht`` of the module docstring on
    ``free``, or None where the Cholesky factor of the curvature is the better tool (module
    docstring), for coupled pairs (P2) and where the diagonal is not positive."""
    kd = problem.kd
    f = free.size
    F = ev.inner.F
    low = hasattr(F, "mu")
    copies = F.rank if low else 1
    budget = lowrank_columns(f)
    dix, sv = problem.d_coordinates(free)
    if np.unique(dix).size < dix.size:  # P2: a free pair shares d_i (not a diagonal + low rank)
        return None
    # a failed attempt may cost the Cholesky factor it would spare: f^3 / 3 flops of growth
    spend = f**3 / 3.0
    pk, pk2 = kernel_factors(kd)
    k0 = pk.L.shape[1]
    L = pk.extend(min(budget // (copies + 1), pk.reach(spend)))
    if L is None:
        return None
    spend -= growth_flops(kd.n, k0, L.shape[1])
    L2 = pk2.extend(min(budget - copies * L.shape[1], pk2.reach(spend)))
    if L2 is None:
        return None
    c = 1.0 / (4.0 * problem.eta)
    d = problem.d_of(ev.z)[dix]
    trE, trE2 = float(pk.residual[dix].sum()), float(pk2.residual[dix].sum())
    if low:
        UF = F.U[dix]
        parts = [np.sqrt(c) * d[:, None] * L2[dix]]
        parts += [np.sqrt(m) * UF[:, [k]] * L[dix] for k, m in enumerate(F.mu)]
        rho = float(np.max((UF * UF) @ F.mu)) * trE + c * float(np.max(d * d)) * trE2
    else:  # F = 11' + Gamma: F o K = K + c D (K o K) D
        parts = [np.sqrt(2.0 * c) * d[:, None] * L2[dix], L[dix]]
        rho = trE + 2.0 * c * float(np.max(d * d)) * trE2
    Z = np.hstack(parts)
    Z *= sv[:, None]
    diag = c * correction_diagonal(problem, ev, problem.d_of(ev.z), dix) + max(rho, 0.0)
    diag += 1e-12 * max(1.0, float(np.max(diag + np.einsum("ij,ij->i", Z, Z))))
    if not np.all(diag > 0.0):
        return None
    scale = 1.0 / np.sqrt(diag)
    Z *= scale[:, None]  # W
    G = dsyrk(1.0, Z, trans=1, lower=1)  # W'W
    G[np.diag_indices_from(G)] += 1.0
    fac = cho_factor(G, lower=True, overwrite_a=True, check_finite=False)

    def solve(B: np.ndarray) -> np.ndarray:
        X = B.reshape(f, -1) * scale[:, None]
        X -= Z @ cho_solve(fac, Z.T @ X, check_finite=False)
        return (X * scale[:, None]).reshape(B.shape)

    def quad(v: np.ndarray) -> float:  # v'Ht v = ||v / scale||^2 + ||W'(v / scale)||^2
        u = v / scale
        w = Z.T @ u
        return float(u @ u + w @ w)

    return solve, quad
