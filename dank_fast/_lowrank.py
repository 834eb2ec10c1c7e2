"""The low-rank form of a smooth kernel, and the Newton curvature solved through it.

A smooth kernel on a few features (a Gaussian on two-dimensional data, or a wide one) is
numerically of low rank: a pivoted Cholesky factorisation gives ``K = L L' + E`` with ``E`` PSD
and its diagonal at most a target ``e`` (:class:`PivotedCholesky`, ``O(n r^2)`` for rank
``r``), and ``K o K``, PSD as well (Schur), ``= L2 L2' + E2`` the same way. The Newton
curvature of :func:`dank_fast._curvature.curvature` on the free coordinates ``f`` (signs ``s``,
``D = diag(d_f)``, ``F = U diag(mu) U'``) is

    H = s s' o (c D (K o K) D + F o K) + c diag(kk)
      = Z Z' + c diag(kk) + s s' o (c D E2 D + F o E),
    Z = diag(s) [sqrt(c) D L2, sqrt(mu_1) diag(u_1) L, ..., sqrt(mu_k) diag(u_k) L]

(``f x R``, ``R = r2 + rank(F) r``; for ``F = 11' + Gamma``, ``tau = 0``: ``F o K = K + c D (K o
K) D``). The last term is PSD with norm at most ``rho = max_i F_ii tr E_ff + c max_i d_i^2 tr
E2_ff`` (``lambda_max(A o B) <= max_i A_ii lambda_max(B)`` for PSD ``A``, ``B``), so ``Ht = Z Z' +
diag(c kk + rho)`` satisfies ``H <= Ht <= H + rho I``: like the ``tau = 0`` model itself, it errs
on the side of short steps, by ``rho`` (at most about ``f e``; make_moons, noise 0.3, n =
5,000, C = 32: ``tr E_ff`` 1.0-1.5e-6 against ``c kk`` of 0.04-0.2). ``Ht^-1`` is applied by
Woodbury with ``W = diag(c kk + rho)^-1/2 Z``: ``(I + W W')^-1 = I - W (I + W'W)^-1 W'``, one
Cholesky factor of the ``R x R`` matrix ``I + W'W`` (relative residual of the solves 6e-11 at
``lambda_max(W'W) = 3e4`` on that row; a Newton direction needs far less, and the certificate
does not depend on it). ``O(f R^2 + R^3 / 3)`` time and ``O(f R)`` memory against ``O(f^3 /
3)`` and ``f^2`` for the Cholesky factor of ``H``: used where its flops are fewer, ``R <= 0.53
f``, for kernels of at least ``LOWRANK_MIN_N`` points (:mod:`dank_fast._psd`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.linalg.blas import dsyrk

from ._curvature import correction_diagonal, uses_exact
from ._psd import LOWRANK_MIN_N, kernel_factors
from ._threads import blas_threads

__all__ = ["lowrank_solve"]


def lowrank_solve(problem, ev, free: np.ndarray) -> Callable[[np.ndarray], np.ndarray] | None:
    """``B -> Ht^-1 B`` for the curvature ``Ht`` of the module docstring on ``free``, or None
    where the Cholesky factor of the curvature is the better tool: a kernel that is not a dense
    array, has fewer than ``LOWRANK_MIN_N`` points or is not of rank ``R <= 0.53 f``, the exact
    curvature
    (:func:`dank_fast._curvature.uses_exact`), coupled pairs (P2), or a diagonal that is not
    positive."""
    kd = problem.kd
    f = free.size
    if not isinstance(kd.K, np.ndarray) or kd.n < LOWRANK_MIN_N or uses_exact(problem):
        return None
    dix, sv = problem.d_coordinates(free)
    if np.unique(dix).size < dix.size:  # P2: a free pair shares d_i (not a diagonal + low rank)
        return None
    F = ev.inner.F
    low = hasattr(F, "mu")
    copies = F.rank if low else 1
    budget = int(0.53 * f)  # the largest R with f R^2 + R^3 / 3 <= f^3 / 3
    pk, pk2 = kernel_factors(kd)
    L = pk.extend(budget // (copies + 1))
    if L is None:
        return None
    L2 = pk2.extend(budget - copies * L.shape[1])
    if L2 is None:
        return None
    c = 1.0 / (4.0 * problem.eta)
    d = problem.d_of(ev.z)[dix]
    with blas_threads(f):
        # rho = max_i F_ii tr E_ff + c' max_i d_i^2 tr E2_ff, c' the weight of D (K o K) D
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
        diag = c * correction_diagonal(problem, ev, dix) + max(rho, 0.0)
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
        # (I + W W')^-1 X = X - W (I + W'W)^-1 W'X: a few right-hand sides, memory-bound
        # products on one thread (family benchmark, in process: make_moons noise 0.3,
        # n = 5,000, C = 32 0.75x the time of the user's two threads)
        with blas_threads(X.shape[1]):
            X -= Z @ cho_solve(fac, Z.T @ X, check_finite=False)
        return (X * scale[:, None]).reshape(B.shape)

    return solve
