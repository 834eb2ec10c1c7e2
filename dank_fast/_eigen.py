"""Certified top eigenpairs of the reduced ``M = vv' + Gamma_SS`` (:mod:`dank_fast.inner`).

The iterative route of the inner minimiser: one block Krylov step from the previous solution's
eigenvectors, ARPACK or LOBPCG where that is not enough, and the certified bound below, which
makes a partial eigendecomposition as trustworthy as a full one.

Certified bound without a full eigendecomposition
-------------------------------------------------
Let ``U`` (``N x k``, orthonormal) hold Ritz vectors with Rayleigh quotients ``theta_j = u_j'Mu_j``
(``U'MU = diag(theta)`` after the Rayleigh-Ritz step), ``P = UU'``, residual ``R = MU - U
diag(theta)`` and the compressed tail ``G = (I - P) M (I - P)`` (PSD, as a compression of ``M``).

*Lower bound.* For any symmetric ``B <= 2t I`` (i.e. ``Z = 2t I - B`` PSD), weak duality of
``min_{F PSD} ||F - M||^2 + <2t I - Z, F>`` gives ``phi* >= <B, M> - ||B||_F^2 / 4`` (the
unconstrained minimum over ``F`` of the Lagrangian). Take ``B = 2 sum_j b_j u_j u_j' + 2 c G``
with ``b_j = min(theta_j, t)`` and ``c = min(1, t / g)``, ``g >= lambda_max(G)``; ``B`` is
block-diagonal in ``P (+) (I - P)`` and ``<G, M> = ||G||_F^2``, so

    phi* >= sum_j psi(theta_j) + (2c - c^2) ||G||_F^2.

*Upper bound.* ``F^ = sum_{theta_j > t} (theta_j - t) u_j u_j'`` is PSD, and splitting
``F^ - M`` into the blocks of ``P`` and ``I - P`` gives exactly

    phi(F^) = sum_j psi(theta_j) + 2 ||R||_F^2 + ||G||_F^2,

so ``0 <= phi(F^) - phi* <= excess := 2 ||R||_F^2 + (1 - c)^2 ||G||_F^2``.

``g`` is ``min(||G||_F, tr G)`` (both bound the largest eigenvalue of a PSD matrix), with
``tr G = tr M - sum_j theta_j`` and, for ``w = (I - P) v``,
``||G||_F^2 = ||w||^4 + 2 w'Gamma w + ||Gamma||_F^2 - 2 ||Gamma U||_F^2 + ||U'Gamma U||_F^2``:
all exact quantities plus products of ``Gamma`` with ``k + 1`` vectors. When the computed
eigenvalues include every one above ``t`` (``g <= t``), ``c = 1`` and the excess is the
Ritz residual alone (``~1e-20`` relative at ARPACK's tolerance). Where those norms leave
``g > t`` (a slowly decaying spectrum), a Cholesky factorisation decides ``G <= t I``
directly (:func:`_tail_below`), so the block holds the eigenvalues above ``t`` and a few more,
not most of the spectrum.
:class:`dank_fast.inner.InnerSolution` reports ``deficit`` (a rigorous lower bound, so ``lin +
eta * deficit <= h(a)``) and ``excess`` (``h(a) <= lin + eta * (deficit + excess)``, and the
certificate's inner term, see :mod:`dank_fast.certificate`). The dense route is kept as the
check (``excess = 0``)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.linalg import eigh, qr, solve_triangular
from scipy.linalg.blas import dsyr2k, dsyrk
from scipy.linalg.lapack import dpotrf, dsytrf, dsytrf_lwork
from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, LinearOperator, eigsh, lobpcg

from ._kernel_data import KernelData
from ._memory import BLOCK_BYTES

__all__ = ["Reduced", "certified_eigenpairs", "eig_dense", "psi"]


def dense_affordable(N: int) -> bool:
    """Whether a dense decomposition of the reduced ``M`` (``N x N``) may replace the iterative
    route when that needs a fifth of the spectrum or more: while its
    matrix fits in ``BLOCK_BYTES`` (``N <= 2,896``; above, the iterative route keeps widening
    its block)."""
    return 8 * N * N <= BLOCK_BYTES


class Reduced:
    """``M = vv' + Gamma_SS`` in the basis ``[e_S, 1_{S^c} / sqrt(m)]`` (module docstring)."""

    def __init__(self, kd: KernelData, d: np.ndarray, S: np.ndarray, eta: float):
        self.kd, self.S, self.eta = kd, S, eta
        self.s = S.size
        self.m = kd.n_total - self.s
        self.N = self.s + (1 if self.m > 0 else 0)
        self.dS = d[S]
        self.v = np.ones(self.N)
        if self.m > 0:
            self.v[-1] = np.sqrt(self.m)
        self.c = 1.0 / (4.0 * eta)
        self.cdS = self.c * self.dS
        # the block K[S][:, S] itself when the kernel data copy it (an eigensolver calls gamma
        # dozens of times per evaluation: no cache look-up per product)
        self._block = kd.block(S) if kd._copy(S) else None

    def gamma(self, X: np.ndarray) -> np.ndarray:
        """``Gamma_red @ X`` for ``X`` of shape ``(N,)`` or ``(N, b)``."""
        out = np.zeros_like(X, dtype=np.float64)
        one = X.ndim == 1
        dS = self.dS if one else self.dS[:, None]
        Y = dS * X[: self.s]
        P = self._block @ Y if self._block is not None else self.kd.block_product(self.S, Y)
        out[: self.s] = (self.cdS if one else self.cdS[:, None]) * P
        return out

    def matmat(self, X: np.ndarray) -> np.ndarray:
        return np.multiply.outer(self.v, self.v @ X) + self.gamma(X)

    def dense(self) -> np.ndarray:
        s = self.s
        B = np.outer(self.v, self.v)
        B[:s, :s] += self.c * np.outer(self.dS, self.dS) * self.kd.block(self.S)
        return B


def psi(theta: np.ndarray, t: float) -> np.ndarray:
    """``min_{f >= 0} (f - theta)^2 + 2 t f``: ``theta^2`` below ``t``, else ``2 t theta - t^2``."""
    return np.where(theta <= t, theta * theta, 2.0 * t * theta - t * t)


def eig_dense(red: Reduced):
    B = red.dense()
    lam, W = eigh(B, driver="evd", overwrite_a=True, check_finite=False)
    return lam[::-1], W[:, ::-1]


def _eig_arpack(red: Reduced, k: int, v0: np.ndarray, tol: float):
    """Top ``k`` eigenpairs of the reduced ``M`` by ARPACK (matrix-free, one product per step)."""
    N = red.N
    op = LinearOperator((N, N), matvec=red.matmat, matmat=red.matmat, dtype=np.float64)
    k = min(k, N - 2)
    if not np.any(v0):  # ARPACK's own start is random: a fixed one keeps every fit repeatable
        v0 = np.random.default_rng(N).uniform(0.5, 1.5, N)
    try:
        lam, W = eigsh(op, k=k, which="LA", v0=v0, tol=tol, maxiter=50 * N)
    except ArpackNoConvergence as exc:  # certify what converged (the bound stays rigorous)
        if exc.eigenvalues.size == 0:
            return _eig_block(red, _pad(red, v0[:, None], k), 1e-10 * N, 200)
        lam, W = exc.eigenvalues, exc.eigenvectors
    except ArpackError:  # ARPACK's own failures: the block method from the same start
        return _eig_block(red, _pad(red, v0[:, None], k), 1e-10 * N, 200)
    order = np.argsort(lam)[::-1]
    return lam[order], W[:, order]


def _eig_block(red: Reduced, X0: np.ndarray, tol: float, maxiter: int):
    """Top eigenpairs of the reduced ``M`` by LOBPCG from the block ``X0`` (block products)."""
    N = red.N
    op = LinearOperator((N, N), matvec=red.matmat, matmat=red.matmat, dtype=np.float64)
    try:
        with warnings.catch_warnings():  # convergence is judged by the certificate
            warnings.simplefilter("ignore", UserWarning)
            lam, W = lobpcg(op, X0, largest=True, tol=tol, maxiter=maxiter)
    except (np.linalg.LinAlgError, ValueError, ArpackError):
        # an iterative eigensolver's failure is a reason to change tools, never an exception
        # for the user: the dense decomposition where affordable, else a fresh seeded block
        if dense_affordable(N):
            lam, W = eig_dense(red)
            return lam[: X0.shape[1]], W[:, : X0.shape[1]]
        X1 = np.random.default_rng(N + X0.shape[1]).standard_normal(X0.shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            lam, W = lobpcg(op, np.linalg.qr(X1)[0], largest=True, tol=tol, maxiter=maxiter)
    order = np.argsort(lam)[::-1]
    return lam[order], W[:, order]


@dataclass
class _Ritz:
    theta: np.ndarray
    U: np.ndarray
    deficit_part: float  # sum psi(theta) + (2c - c^2) ||G||^2
    excess: float
    tail_bound: float
    psi_sum: float  # sum psi(theta) over the kept Ritz values
    tail_frob2: float  # ||G||_F^2
    resid2: float  # ||R||_F^2 of the kept Ritz vectors

    def below(self, t: float) -> _Ritz:
        """The bounds once ``lambda_max(G) <= t`` is known (:func:`_tail_below`): ``c = 1``."""
        return _Ritz(self.theta, self.U, self.psi_sum + self.tail_frob2, 2.0 * self.resid2, t,
                     self.psi_sum, self.tail_frob2, self.resid2)


def _tail_frob2(U, GU, g_frob2: float, w: np.ndarray, Gw: np.ndarray) -> tuple[float, float]:
    """``||(I - P) M (I - P)||_F^2`` for ``P = UU'`` (module docstring formula), and
    ``||w||^2``, from ``w = (I - P) v`` and ``Gamma w`` (:func:`_certify_ritz` forms both tails'
    ``w`` and multiplies them by ``Gamma`` in one product)."""
    UGU = U.T @ GU
    A2 = g_frob2 - 2.0 * float(np.sum(GU * GU)) + float(np.sum(UGU * UGU))
    ww = float(w @ w)
    return ww * ww + 2.0 * float(w @ Gw) + max(A2, 0.0), ww


def _certify_ritz(red: Reduced, W: np.ndarray, t: float, g_frob2: float, g_trace: float,
                  gamma_max: float = np.inf):
    """Rayleigh-Ritz on ``span(W)`` and the certified bounds of the module docstring.

    ``P`` is spanned by the Ritz vectors with ``theta > t`` (those in ``F^``); the other Ritz
    vectors ``V`` of the block sharpen the bound on ``lambda_max(G)``: in the basis ``[V, the
    complement of the block]``, ``G = [[diag(theta_V), R_V'], [R_V, G_b]]`` (joint Rayleigh-Ritz
    makes every residual orthogonal to the whole block), so ``lambda_max(G)`` is at most the
    largest eigenvalue of ``[[max theta_V, ||R_V||], [||R_V||, g_b]]`` with
    ``g_b = min(||G_b||_F, tr G_b)`` for the compression ``G_b`` off the whole block. A third
    bound holds for flat tails (many small eigenvalues, where both norms exceed ``t``):
    ``G = (I - P)(vv' + Gamma)(I - P)``, so ``lambda_max(G) <= ||(I - P) v||^2 + gamma_max`` for
    any ``gamma_max >= lambda_max(Gamma)`` (:func:`_gamma_max_bound`).
    """
    Q, _ = qr(W, mode="economic", check_finite=False)
    return _certify_basis(red, Q, red.gamma(Q), t, g_frob2, g_trace, gamma_max)


def _certify_basis(red: Reduced, Q: np.ndarray, GQ: np.ndarray, t: float, g_frob2: float,
                   g_trace: float, gamma_max: float):
    """:func:`_certify_ritz` on an orthonormal ``Q`` whose product ``GQ = Gamma Q`` is known."""
    vQ = red.v @ Q
    MQ = np.multiply.outer(red.v, vQ) + GQ
    T = Q.T @ MQ
    theta, Z = eigh(0.5 * (T + T.T))
    theta, Z = theta[::-1], Z[:, ::-1]
    U = Q @ Z
    GU = GQ @ Z
    vU = vQ @ Z
    R = np.multiply.outer(red.v, vU) + GU - U * theta
    trace_M = red.kd.n_total + g_trace
    keep = theta > t
    # w = (I - P) v for the whole block and for P = span(U[:, keep]): one product for both
    w2 = red.v[:, None] - np.column_stack([U @ vU, U[:, keep] @ vU[keep]])
    Gw2 = red.gamma(w2)
    # compression off the whole block
    Gb2, wwb = _tail_frob2(U, GU, g_frob2, w2[:, 0], Gw2[:, 0])
    gb = min(np.sqrt(Gb2), max(trace_M - float(theta.sum()), 0.0), wwb + gamma_max)
    # compression off P = span(U[:, keep])
    GP2, wwP = _tail_frob2(U[:, keep], GU[:, keep], g_frob2, w2[:, 1], Gw2[:, 1])
    trGP = max(trace_M - float(theta[keep].sum()), 0.0)
    g = min(np.sqrt(GP2), trGP, wwP + gamma_max)
    if not np.all(keep):
        a = float(theta[~keep].max())
        beta = float(np.sqrt(np.sum(R[:, ~keep] ** 2)))
        g = min(g, 0.5 * (a + gb) + np.hypot(0.5 * (a - gb), beta))
    c = 1.0 if g <= t else t / g
    r2 = float(np.sum(R[:, keep] ** 2))
    psi_sum = float(np.sort(psi(theta[keep], t)).sum())
    part = psi_sum + (2.0 * c - c * c) * GP2
    excess = 2.0 * r2 + (1.0 - c) ** 2 * GP2
    return _Ritz(theta, U, part, excess, g, psi_sum, GP2, r2)


def _tail_below(red: Reduced, U: np.ndarray, t: float, g_frob2: float) -> bool:
    """Whether ``lambda_max(G) <= t`` for the compression ``G = (I - P) M (I - P)`` off
    ``P = UU'``, decided by a Cholesky factorisation of ``(t - delta) I - G``.

    The norms that :func:`_certify_ritz` bounds ``lambda_max(G)`` by need every eigenvalue
    of ``M`` whose square is not negligible beside ``t^2`` inside the block: on a slowly
    decaying spectrum (noisy labels, many bounded support vectors) that is dozens of Ritz
    pairs when a handful are above ``t``. The factorisation decides ``G <= t I`` whatever the
    tail: with ``w = (I - P) v`` and ``Y = Gamma U - U (U'Gamma U) / 2``,
    ``G = Gamma + ww' - UY' - YU'`` is formed in one ``N x N`` array (a copy of the block
    ``K[S][:, S]`` updated in place by rank-``2k + 1`` products), and ``delta`` covers the
    rounding of that formation and the factorisation's backward error (``gamma_{N+1} tr``,
    Demmel's bound; ``tr((t - delta) I - G) <= N t``). ``O(N^3 / 3 + N^2 k)`` time,
    ``8 N^2`` bytes (callers check :func:`dense_affordable`).
    """
    N, s, k = red.N, red.s, U.shape[1]
    GU = red.gamma(U)
    Y = GU - 0.5 * U @ (U.T @ GU)
    w = red.v - U @ (red.v @ U)
    C = np.empty((N, N))  # symmetric: filled in C order, factored as its transpose
    if red._block is not None:
        C[:s, :s] = red._block
    else:  # K[S][:, S] into C itself (the kernel data keep no copy)
        red.kd.block_into(red.S, C[:s, :s])
    C[:s, :s] *= -red.cdS[:, None]
    C[:s, :s] *= red.dS
    C[s:], C[:, s:] = 0.0, 0.0
    A = C.T
    if k:
        A = dsyr2k(1.0, U, Y, beta=1.0, c=A, lower=1, overwrite_c=1)
    A = dsyrk(-1.0, w[:, None], beta=1.0, c=A, lower=1, overwrite_c=1)
    u = np.finfo(float).eps / 2
    gam = lambda m: m * u / (1.0 - m * u)  # noqa: E731
    # rounding: Gamma's entries, the products Gamma U and U'v (inner dimension N), the rank
    # updates; then the factorisation's backward error
    ww = float(w @ w)
    form = ((2 * k + 3) * np.sqrt(g_frob2) + 2.0 * np.sqrt(k) * float(np.linalg.norm(Y)) + ww
            + 2 * k * float(np.linalg.norm(red.v)) * np.sqrt(ww))
    delta = 1.01 * (gam(N + 1) * N * t + gam(N + 2 * k + 6) * form)
    if not delta < 0.5 * t:
        return False
    A[np.diag_indices(N)] += t - delta
    _, info = dpotrf(A, lower=1, clean=0, overwrite_a=1)
    return info == 0


def _gamma_max_bound(red: Reduced) -> float:
    """An upper bound of ``lambda_max(Gamma_SS)`` (:meth:`KernelData.top_bound`)."""
    return red.c * red.kd.top_bound(red.S, np.abs(red.dS))


def certified_eigenpairs(red: Reduced, warm: np.ndarray | None, width: int, t: float,
                         g_frob2: float, g_trace: float, excess_tol: float, route: str):
    """Certified top eigenpairs: blocks grown until the bound's excess is below ``excess_tol``.

    With a previous solution, one block Krylov step from its eigenvectors comes first
    (:func:`_warm_krylov`); where that is not certified, the eigen-engine is ARPACK
    (implicitly restarted Lanczos, started from that step's Ritz vectors), LOBPCG where ARPACK
    fails. Where the norms of :func:`_certify_ritz` leave
    the tail above ``t`` and the reduced matrix fits the block budget, one Cholesky
    factorisation decides it (:func:`_tail_below`) instead of a wider block; a failed one
    widens the block. Returns None when the dense decomposition is the better tool (route
    ``"auto"``, :func:`dense_affordable`, and the block would need a fifth of the spectrum).

    ``warm``: the previous solution's eigenvectors in the reduced basis (or None), the start of
    the block; ``width``: the size of the block that certified it (0 if none). The first block
    has that size, so that a Newton solve does not grow it anew at every evaluation
    (diabetic, n = 460, rank 11: three ARPACK runs of 15, 30 and 60 vectors per evaluation).
    """
    N = red.N
    if (rz := _range_ritz(red, t, g_frob2, g_trace)) is not None:
        return rz
    rank = 0 if warm is None else warm.shape[1]
    b = max(6, rank + 4)
    if route == "auto" and dense_affordable(N) and 5 * b >= N:
        return None  # a fifth of the spectrum or more: the dense decomposition
    v0 = red.v if warm is None else warm.sum(axis=1)  # ARPACK's start: the warm directions
    gmax = _gamma_max_bound(red)
    arpack_tol = 1e-13
    if width > b:
        b = min(width, max(N // 5 - 1, b))  # the block that certified last time
    factor_tail = dense_affordable(N)  # the tail decided by a factorisation (_tail_below)
    if rank:
        rz, certified = _warm_krylov(red, warm, t, g_frob2, g_trace, gmax, excess_tol,
                                     factor_tail)
        if certified:
            return rz
        v0 = rz.U[:, : max(1, int(np.count_nonzero(rz.theta > t)))].sum(axis=1)
    rz = None
    counted = False
    for _ in range(8):
        if 5 * b >= N:  # a fifth of the spectrum or more
            if route == "auto" and dense_affordable(N):
                return None  # the dense decomposition is the better tool
            if dense_affordable(N):  # explicit "lanczos" on a small problem: exact Ritz blocks
                lam, V = eig_dense(red)
                b = min(max(b, int(np.count_nonzero(lam > t)) + 2), N)
                while True:
                    rz = _certify_ritz(red, V[:, :b], t, g_frob2, g_trace, gmax)
                    if rz.excess <= excess_tol or b == N:
                        return rz
                    b = min(N, 2 * b)
            b = min(b, N - 2)
        lam, W = _eig_arpack(red, b, v0, arpack_tol)
        rz = _certify_ritz(red, W, t, g_frob2, g_trace, gmax)
        full = rz.theta[-1] > t  # every computed eigenvalue is above t: some may be missing
        if not full and rz.excess > excess_tol and rz.tail_bound > t and factor_tail:
            keep = rz.theta > t
            if _tail_below(red, rz.U[:, keep], t, g_frob2):
                rz = rz.below(t)
            else:  # an eigenvalue of the tail at t: the block widens as below
                factor_tail = False
        if not full and rz.excess <= excess_tol:
            break
        if full and not counted and dense_affordable(N):
            # the first full block: the count above t is the inertia of M - t I (one LDL'
            # factorisation), not doublings (make_classification, small eta: 6 ARPACK runs of
            # 6 to 192 vectors before the dense route, for 651 eigenvalues above t)
            counted = True
            b = max(_count_above(red, t) + 4, 2 * b)
        elif full or (rz.tail_bound > t and (1.0 - t / rz.tail_bound) ** 2
                      * rz.tail_bound ** 2 > 0.5 * excess_tol):
            b *= 2  # the tail holds eigenvalues above t: widen the block
        else:  # residuals dominate: iterate longer
            arpack_tol = max(arpack_tol * 1e-2, 1e-16)
        v0 = rz.U[:, : max(1, int(np.count_nonzero(rz.theta > t)))].sum(axis=1)
    return rz


def _range_ritz(red: Reduced, t: float, g_frob2: float, g_trace: float):
    """Where the kernel data hold a factor ``K[S][:, S] = L_S L_S'`` of ``r + 1 < N`` columns
    (:class:`dank_fast._surrogate.FactorKernelData`), the range of ``M = vv' + c D L_S L_S' D``
    is spanned by ``[v, D L_S]``: Rayleigh-Ritz on that basis is the eigendecomposition of
    ``M`` (its bound certifies it, residuals at round-off). None otherwise. ``O(N r^2)``."""
    LS = red.kd.range_factor(red.S)
    if LS is None or LS.shape[1] + 1 >= red.N:
        return None
    Z = np.column_stack([red.v, np.zeros((red.N, LS.shape[1]))])
    Z[: red.s, 1:] = red.dS[:, None] * LS
    Q, _ = qr(Z, mode="economic", check_finite=False)
    return _certify_basis(red, Q, red.gamma(Q), t, g_frob2, g_trace, _gamma_max_bound(red))


def _count_above(red: Reduced, t: float) -> int:
    """The number of eigenvalues of the reduced ``M`` above ``t``: the positive inertia of
    ``M - t I`` (Sylvester's law) from its Bunch-Kaufman factorisation ``L D L'``, whose
    ``2 x 2`` pivots are counted by their own eigenvalues. Exact up to the eigenvalues within
    rounding of ``t`` (a width for the eigensolver, never part of a bound). ``O(N^3 / 3)``
    time, ``8 N^2`` bytes."""
    A = red.dense()
    A[np.diag_indices(red.N)] -= t
    lwork, _ = dsytrf_lwork(red.N, lower=1)
    ldu, ipiv, info = dsytrf(A, lower=1, lwork=int(lwork), overwrite_a=1)
    d = np.diagonal(ldu)
    one = ipiv > 0
    count = int(np.count_nonzero(one & (d > 0)))
    first = np.flatnonzero(~one)[::2]  # a 2 x 2 pivot: two consecutive negative entries
    for k in first:
        count += int(np.count_nonzero(np.linalg.eigvalsh(ldu[k:k + 2, k:k + 2]) > 0))
    return count


def _warm_krylov(red: Reduced, warm: np.ndarray, t: float, g_frob2: float, g_trace: float,
                 gmax: float, excess_tol: float, factor_tail: bool) -> tuple[_Ritz, bool]:
    """Rayleigh-Ritz on the block Krylov space ``span[X, M X, M^2 X]`` of the previous
    solution's eigenvectors ``X``, and whether its bound is certified (excess below
    ``excess_tol``, every eigenvalue above ``t`` inside the block).

    Between consecutive evaluations of a solve ``M`` changes little, so ``X`` is nearly
    invariant and one block step refines it to the certificate's accuracy. The space is built
    by block Lanczos (:func:`_next_block`): three orthonormal blocks ``Q_1 = X, Q_2, Q_3`` of
    width ``rank``, each multiplied by ``Gamma`` once, and the certificate's products are
    those same products (three block products, BLAS-3, one pass over ``K[S][:, S]`` each),
    where orthonormalising ``[X, R, M R]`` first would need five. When it is not certified its
    Ritz vectors start ARPACK. ``O(N^2 rank)`` time, ``O(N rank)`` memory (the tail test of
    :func:`_tail_below` where the norms leave it open: ``O(N^3 / 3)``, ``8 N^2`` bytes).
    """
    Q, _ = qr(warm, mode="economic", check_finite=False)
    blocks, products = [Q], [red.gamma(Q)]
    for _ in range(2):
        basis = np.hstack(blocks)
        if basis.shape[1] >= red.N:
            break
        last, G = blocks[-1], products[-1]
        Q = _next_block(basis, np.multiply.outer(red.v, red.v @ last) + G)
        blocks.append(Q)
        products.append(red.gamma(Q))
    rz = _certify_basis(red, np.hstack(blocks), np.hstack(products), t, g_frob2, g_trace, gmax)
    if rz.theta[-1] > t:  # every Ritz value above t: eigenvalues may be missing
        return rz, False
    if rz.excess <= excess_tol:
        return rz, True
    if (rz.tail_bound > t and factor_tail and 2.0 * rz.resid2 <= excess_tol
            and _tail_below(red, rz.U[:, rz.theta > t], t, g_frob2)):
        return rz.below(t), True
    return rz, False


def _next_block(basis: np.ndarray, MQ: np.ndarray) -> np.ndarray:
    """The next orthonormal block of block Lanczos: ``M Q`` (``Q`` the last block of the
    orthonormal ``basis``) orthogonalised against ``basis`` and normalised, twice (classical
    Gram-Schmidt with Cholesky QR, each repeated: orthonormal to working precision, BLAS-3), at
    most ``N - width`` columns.

    Cholesky QR is orthonormal to working precision after two passes while ``cond(B)`` is
    below about ``1e6`` (its factor's diagonal says so). Where ``M Q`` has (nearly) no part
    outside ``basis`` (an invariant block) or is that ill-conditioned, Householder QR of what
    is left, orthogonalised in turn, gives the block: any orthonormal directions outside
    ``basis`` serve Rayleigh-Ritz, which stays exact for the basis it gets."""
    B = MQ[:, : basis.shape[0] - basis.shape[1]]
    for _ in range(2):
        B = B - basis @ (basis.T @ B)
        L, info = dpotrf(B.T @ B, lower=1, clean=1)
        dL = np.abs(np.diag(L))
        if info != 0 or not np.min(dL) > 1e-6 * np.max(dL):  # cond(B) beyond ~1e6
            break
        B = solve_triangular(L, B.T, lower=True, check_finite=False).T
    else:
        return B
    Q, _ = qr(B, mode="economic", check_finite=False)
    Q = Q - basis @ (basis.T @ Q)
    Q, _ = qr(Q, mode="economic", check_finite=False)
    return Q


def _pad(red: Reduced, W: np.ndarray, b: int) -> np.ndarray:
    """An orthonormal block of ``b`` columns: the independent directions of ``W`` first,
    completed by deterministic random vectors (lobpcg rejects dependent start blocks)."""
    rng = np.random.default_rng(1000 * b + W.shape[1])
    W = np.hstack([W[:, :b], rng.standard_normal((red.N, b))])
    Q, R, piv = qr(W, mode="economic", pivoting=True, check_finite=False)
    diag = np.abs(np.diag(R))
    indep = diag > 1e-10 * diag[0]
    return Q[:, indep][:, :b]

