"""The inner minimiser ``F(a)`` of DANK, its certified value, and the one ``F o K`` product.

``F(a) = J_{tau/2}(M)``, ``M = 11' + Gamma``, ``Gamma = D K D / (4 eta)`` (Lemma 1), and
``h(a) = lin(a) + eta * deficit`` with ``deficit = n^2 - ||F(a)||_F^2 = -(2 1'Gamma 1 +
||Gamma||_F^2) + sum_j psi(l_j)`` over the eigenvalues ``l_j`` of ``M`` (docs/MATH.md sections
3 and 5.1): both ``Gamma`` sums are exact from ``K`` and ``psi`` has slope at most ``tau``, so no
``eta n^2`` cancels anywhere. ``M`` is reduced to the support ``S = {i : d_i != 0}`` in the
basis ``[e_S, 1_{S^c} / sqrt(m)]``, size ``N = |S| + 1`` (``m = n_total - |S|``: a working set's
points outside ``K`` count here with ``d = 0``). Three routes: ``"closed"`` (``tau = 0``: ``F =
M``, no eigensolver), ``"dense"`` (``O(N^3)`` time, ``O(N^2)`` memory) and ``"lanczos"`` (block
Krylov with a certified bound, ``O(N^2 k)`` per round, ``O(N k)`` memory), the last two chosen by
the cost model of :mod:`dank_fast._eigen`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._eigen import Reduced, eigenpairs, psi
from ._kernel_data import KernelData

# KernelData is re-exported: its users import it from here
__all__ = ["KernelData", "LowRankF", "CenteredF", "InnerSolution", "inner_minimiser", "apply_FK"]


@dataclass
class LowRankF:
    """``F = U diag(mu) U'`` with ``mu > 0``: the eigenvalues that survive the threshold.

    ``U`` has one row per point of ``K``; ``ghost`` (shape ``(r,)``) is the row shared by every
    point outside the support (all such rows of ``U`` are equal), including points of the
    problem that are not in ``K`` at all (working sets). ``None`` when there is no such point.
    """

    mu: np.ndarray
    U: np.ndarray
    ghost: np.ndarray | None = None

    @property
    def rank(self) -> int:
        return int(self.mu.size)

    def hadamard_matvec(self, kd: KernelData, x: np.ndarray) -> np.ndarray:
        """``(F o K) x = sum_k mu_k u_k * (K (u_k * x))``: one product of K with an n x r block."""
        if self.mu.size == 0:
            return np.zeros(kd.n)
        S = np.flatnonzero(x)
        if S.size == 0:
            return np.zeros(kd.n)
        block = kd.support_product(S, self.U[S] * x[S, None])
        return np.einsum("ik,ik,k->i", self.U, block, self.mu)

    def dense(self) -> np.ndarray:
        return (self.U * self.mu) @ self.U.T

    def column(self, j) -> np.ndarray:
        """Columns ``F[:, j]`` (``j`` an int or an index array): shape ``(n, len(j))``."""
        j = np.atleast_1d(j)
        return (self.U * self.mu) @ self.U[j].T


@dataclass
class CenteredF:
    """``F = 11' + Gamma``, ``Gamma = d d' o K / (4 eta)``: the exact tau = 0 minimiser."""

    d: np.ndarray
    eta: float
    _kd: KernelData = field(repr=False)

    @property
    def rank(self) -> int:  # rank of 11' + Gamma, not computed cheaply; report support size + 1
        return int(np.count_nonzero(self.d)) + 1

    def hadamard_matvec(self, kd: KernelData, x: np.ndarray) -> np.ndarray:
        """``(F o K) x = K x + d * ((K o K)(d * x)) / (4 eta)``."""
        S = np.flatnonzero(x)
        if S.size == 0:
            return np.zeros(kd.n)
        xs = x[S]
        P = kd.support_product(S, np.column_stack([xs, self.d[S] * xs]))
        P2 = kd.support_product(S, self.d[S] * xs, square=True)
        return P[:, 0] + self.d * P2 / (4 * self.eta)

    def dense(self) -> np.ndarray:
        return 1.0 + np.outer(self.d, self.d) * self._kd.K / (4 * self.eta)

    def column(self, j) -> np.ndarray:
        j = np.atleast_1d(j)
        return 1.0 + self.d[:, None] * self.d[j][None, :] * self._kd.K[:, j] / (4 * self.eta)


@dataclass
class InnerSolution:
    """``F(a)`` and the certified quantities derived from it.

    Attributes
    ----------
    F : LowRankF or CenteredF
        The computed minimiser ``F^`` (exact on the ``"closed"`` and ``"dense"`` routes; the
        Ritz approximation of the module docstring on ``"lanczos"``). Always PSD.
    deficit : float
        Rigorous lower bound of ``n^2 - ||F(a)||_F^2``, so ``h = lin + eta * deficit <= h(a)``.
    excess : float
        Bound on ``phi(F^) - phi*`` (0 on the exact routes): ``h(a) <= lin + eta * (deficit +
        excess)``, and the inner part of the duality gap.
    eigvals : ndarray
        Computed eigenvalues (Ritz values) of ``M(a)``, descending; empty for tau = 0.
    route : str
        ``"closed"``, ``"dense"`` or ``"lanczos"``.
    tail_bound : float
        Upper bound ``g`` of the largest eigenvalue not computed (0 on the exact routes).
    basis : ndarray or None
        On the ``"dense"`` route, the eigenvectors of the reduced ``M`` (columns, in the order
        of ``eigvals``, ``8 N^2`` bytes): the exact Newton curvature reads them
        (:mod:`dank_fast._curvature`). None elsewhere, and in results.
    kk_d2 : ndarray or None
        ``(K o K)[S][:, S] d_S^2`` on the support ``S`` of ``d`` (:meth:`KernelData.gamma_sums`
        computes it anyway): the diagonal of the solvers' Newton curvature. None where ``S``
        is empty, and in results.
    size : float
        The sum of the magnitudes of the terms ``deficit`` adds: ``2 kappa (sum |d|)^2 / (4
        eta)`` (bounds ``2 |d|'|K||d| / (4 eta)``, which the rounding of ``2 1'Gamma 1`` is
        relative to), ``||Gamma||_F^2`` and ``|phi*|``'s bound; the round-off of ``deficit`` is
        a few unit round-offs of it. 0 where no solver compares values of ``h``.
    """

    F: LowRankF | CenteredF
    deficit: float
    excess: float
    eigvals: np.ndarray
    route: str
    tail_bound: float = 0.0
    basis: np.ndarray | None = field(default=None, repr=False)
    kk_d2: np.ndarray | None = field(default=None, repr=False)
    size: float = 0.0


def inner_minimiser(
    kd: KernelData,
    d: np.ndarray,
    eta: float,
    tau: float,
    *,
    route: str = "auto",
    warm: InnerSolution | None = None,
    excess_tol: float | None = None,
) -> InnerSolution:
    """Inner minimiser ``F(a) = J_{tau/2}(11' + Gamma(a))``, Lemma 1, with certified value.

    Parameters
    ----------
    kd : KernelData
    d : ndarray of shape (kd.n,)
        ``a * y`` (P1/P3) or ``ah - ac`` (P2) on the points of ``kd`` (the ``n_total - n``
        points outside ``kd`` have ``d = 0``).
    eta : float > 0
    tau : float >= 0
    route : {"auto", "dense", "lanczos"}
        Ignored when ``tau == 0`` (closed form). ``"auto"`` chooses between the dense
        decomposition and the iterative route by the cost model of :mod:`dank_fast._eigen`.
    warm : InnerSolution, optional
        Previous solution; its Ritz vectors start the iterative route's block.
    excess_tol : float, optional
        Target for ``excess`` on the iterative route (default ``1e-12 * n_total``): the block
        grows, or iterates longer, until the certified excess is below it; where that would
        cost more than the dense decomposition (``"auto"``), the dense one is made.

    Returns
    -------
    InnerSolution
        ``lin + eta * deficit`` is a rigorous lower bound of ``h(a)``; see the module docstring.

    Notes
    -----
    Cost with ``s = |S|``: ``"dense"`` ``O(s^3)`` time and ``O(s^2)`` memory; ``"lanczos"``
    ``O(s^2 k)`` time per round (products with ``K[S][:, S]``; ``k`` the rank of ``F`` + 8),
    ``O(s k)`` memory beyond ``K``; ``tau = 0`` ``O(s^2)``.
    """
    S = np.flatnonzero(d)
    n = kd.n_total
    s = S.size
    dS = d[S]
    quad, sq, tr, kk = kd.gamma_sums(S, dS)
    # (sq / 4 eta) / 4 eta, not sq / (16 eta^2): eta^2 underflows for eta < 1e-154
    one_g_one, g_frob2, g_trace = quad / (4 * eta), sq / (4 * eta) / (4 * eta), tr / (4 * eta)
    size = 2.0 * kd.kappa * float(np.abs(dS).sum()) ** 2 / (4 * eta) + g_frob2
    if tau == 0.0:
        F = CenteredF(d=d, eta=eta, _kd=kd)
        return InnerSolution(F, -(2 * one_g_one + g_frob2), 0.0, np.empty(0), "closed",
                             kk_d2=kk, size=size)
    t = tau / 2.0
    if s == 0:  # M = 11': one eigenvalue n with eigenvector 1/sqrt(n)
        mu = np.array([n - t]) if n > t else np.empty(0)
        U = np.full((kd.n, mu.size), 1.0 / np.sqrt(n))
        F = LowRankF(mu, U, np.full(mu.size, 1.0 / np.sqrt(n)))
        phi = float(psi(np.array([float(n)]), t)[0])
        return InnerSolution(F, phi, 0.0, np.array([float(n)]), "dense", size=abs(phi))
    red = Reduced(kd, d, S, eta)
    # the block of the previous evaluation's iterative route: its Krylov space was 3 blocks
    width = warm.eigvals.size // 3 if warm is not None and warm.route == "lanczos" else 0
    rz = eigenpairs(red, t, g_frob2, g_trace, _warm_block(red, warm),
                    1e-12 * n if excess_tol is None else excess_tol, route, width)
    theta, Uk = rz.theta, rz.U
    keep = theta > t
    mu = theta[keep] - t
    Wk = Uk[:, keep]
    U = np.empty((kd.n, mu.size))
    U[S] = Wk[:s]
    ghost = None
    if red.m > 0:
        ghost = Wk[s] / np.sqrt(red.m)
        rest = np.ones(kd.n, dtype=bool)
        rest[S] = False
        U[rest] = ghost
    deficit = -(2.0 * one_g_one + g_frob2) + rz.deficit_part
    basis = rz.U if rz.route == "dense" else None
    return InnerSolution(LowRankF(mu, U, ghost), deficit, rz.excess, theta, rz.route,
                         rz.tail_bound, basis, kk, size + abs(rz.deficit_part))


def _warm_block(red: Reduced, warm: InnerSolution | None) -> np.ndarray | None:
    """The previous solution's eigenvectors of ``F`` in the reduced basis of ``red`` (the
    iterative route's start block), or None without a low-rank previous ``F``."""
    F = None if warm is None else warm.F
    if not isinstance(F, LowRankF) or F.rank == 0:
        return None
    Wp = np.empty((red.N, F.rank))
    Wp[: red.s] = F.U[red.S]
    if red.m > 0:
        g = F.ghost if F.ghost is not None else np.zeros(F.rank)
        Wp[red.s] = g * np.sqrt(red.m)
    return Wp


def apply_FK(F: LowRankF | CenteredF, kd: KernelData, x: np.ndarray) -> np.ndarray:
    """``(F o K) x`` without forming ``F`` or ``F o K``: the only product route the solvers use."""
    return F.hadamard_matvec(kd, np.asarray(x, dtype=np.float64))
