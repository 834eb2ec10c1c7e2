"""The Newton model's matrix on a kernel of low numerical rank, solved by Woodbury.

With pivoted Cholesky factors ``K = L L' + E`` and ``K o K = L2 L2' + E2``
(:func:`dank_fast._psd.kernel_factors`), the model curvature is ``H = Z Z' + c diag(kk) +
Delta`` with ``Z`` of ``R = r2 + rank(F) r_K`` columns and ``Delta`` PSD of norm at most
``rho``; ``Ht = Z Z' + diag(c kk + rho)`` satisfies ``H <= Ht <= H + rho I`` and is applied by
Woodbury (docs/MATH.md section 5.3). ``f R^2 + R^3 / 3`` flops and ``8 f R`` bytes, used where
that is below the Cholesky factor's ``f^3 / 3`` (:func:`dank_fast._cost.lowrank_columns`); the
factors grow only as far as their flops stay within that ``f^3 / 3`` as
:func:`dank_fast._cost.growth_flops` counts them; the growth is paid once in a solve (the
factors are kept for its later steps).
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
    d_all = problem.d_of(ev.z)
    d = d_all[dix]
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
    diag = c * correction_diagonal(problem, ev, d_all, dix) + max(rho, 0.0)
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
