"""Eigenpairs of the reduced ``M = vv' + Gamma_SS`` (:mod:`dank_fast.inner`): dense, or by
block Krylov with a certified bound, whichever the cost model says is cheaper.

The bound (``phi(F^) - phi* <= excess``, its lower bound of ``phi*`` and the Cholesky test of
the tail) is derived in docs/MATH.md section 5.1; the choice between the routes is the cost
model of docs/ARCHITECTURE.md (:func:`dank_fast._cost.dense_flops`,
:func:`dank_fast._cost.round_flops`): the iterative route stops in favour of the dense
decomposition as soon as its flops would exceed it, so an evaluation costs at most about twice
that decomposition, and about ``6 N^2 b`` where ``F`` has low rank and the previous
evaluation's eigenvectors start the block of ``b`` vectors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import eigh, qr
from scipy.linalg.blas import dsyr2k, dsyrk
from scipy.linalg.lapack import dpotrf

from ._cost import OVERSAMPLE, dense_flops, round_flops
from ._kernel_data import KernelData
from ._rounding import gamma

__all__ = ["Reduced", "Ritz", "eigenpairs", "psi"]


class Reduced:
    """``M = vv' + Gamma_SS`` in the basis ``[e_S, 1_{S^c} / sqrt(m)]`` (:mod:`dank_fast.inner`)."""

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

    def gamma(self, X: np.ndarray) -> np.ndarray:
        """``Gamma_red @ X`` for ``X`` of shape ``(N,)`` or ``(N, b)``: one product with
        ``K[S][:, S]``, ``2 |S|^2 b`` flops."""
        out = np.zeros_like(X, dtype=np.float64)
        col = (lambda a: a) if X.ndim == 1 else (lambda a: a[:, None])
        out[: self.s] = col(self.cdS) * self.kd.block_product(self.S, col(self.dS) * X[: self.s])
        return out

    def dense(self) -> np.ndarray:
        s = self.s
        B = np.outer(self.v, self.v)
        B[:s, :s] += self.c * np.outer(self.dS, self.dS) * self.kd.block(self.S)
        return B


@dataclass
class Ritz:
    """Eigenpairs (descending ``theta``, vectors ``U``) of the reduced ``M`` with their
    certified bounds: ``deficit_part = sum psi(theta_kept) + (2c - c^2) ||G||_F^2`` (a lower
    bound of ``phi*``), ``excess >= phi(F^) - phi*`` and ``tail_bound >= lambda_max(G)``;
    exact (``excess = 0``) on the dense route."""

    theta: np.ndarray
    U: np.ndarray
    deficit_part: float
    excess: float
    tail_bound: float
    route: str
    psi_sum: float = 0.0  # sum psi(theta_kept)
    tail_frob2: float = 0.0  # ||G||_F^2
    resid2: float = 0.0  # ||R||_F^2 of the kept Ritz vectors

    def below(self, t: float) -> Ritz:
        """The bounds once ``lambda_max(G) <= t`` is known (:func:`_tail_below`): ``c = 1``."""
        return Ritz(self.theta, self.U, self.psi_sum + self.tail_frob2, 2.0 * self.resid2, t,
                    self.route, self.psi_sum, self.tail_frob2, self.resid2)


def psi(theta: np.ndarray, t: float) -> np.ndarray:
    """``min_{f >= 0} (f - theta)^2 + 2 t f``: ``theta^2`` below ``t``, else ``2 t theta - t^2``."""
    return np.where(theta <= t, theta * theta, 2.0 * t * theta - t * t)


def eigenpairs(red: Reduced, t: float, g_frob2: float, g_trace: float, warm: np.ndarray | None,
               excess_tol: float, route: str = "auto", width: int = 0) -> Ritz:
    """The eigenpairs of ``red`` that ``F(a)`` needs, with their certified bound.

    ``route``: ``"dense"`` (always), ``"lanczos"`` (the block Krylov route for as long as
    its bound is not certified, dense only when the space reaches ``N``), or ``"auto"`` (the
    cost model of the module docstring). ``warm``: the previous ``F``'s eigenvectors in the
    reduced basis (``N x r``), the start of the block; ``width``: the block that certified
    the previous evaluation (a spectrum that decays slowly past ``t`` needs more than ``r``
    vectors for its tail bound, every time).
    """
    N = red.N
    width = max((0 if warm is None else warm.shape[1]) + OVERSAMPLE, width)
    budget = dense_flops(N) if route == "auto" else np.inf
    if route == "dense" or (route == "auto" and (3 * width >= N
                                                 or round_flops(N, width) > budget)):
        return _dense(red, t)
    gmax = red.c * red.kd.top_bound(red.S, np.abs(red.dS))
    X = _start_block(red, warm, min(width, N))
    spent = 0.0
    while True:
        spent += round_flops(N, X.shape[1])
        rz = _krylov_round(red, X, t, g_frob2, g_trace, gmax)
        full = rz.theta[-1] > t  # the block holds eigenvalues above t only: some may be missing
        if (not full and rz.excess > excess_tol and rz.tail_bound > t
                and 2.0 * rz.resid2 <= excess_tol and spent + N**3 / 3.0 <= budget):
            spent += N**3 / 3.0  # the norms leave the tail open: one factorisation
            if _tail_below(red, rz.U[:, rz.theta > t], t, g_frob2):
                rz = rz.below(t)
        if rz.U.shape[1] == N or (not full and rz.excess <= excess_tol):
            return rz  # certified, or the whole space (exact up to rounding)
        # eigenvalues above t may lie outside the block (every Ritz value above t, or a tail
        # bound above t): a wider block; only the residuals: the same width, one more round
        # (the explicit route widens every round, so that it ends within log2(N) rounds)
        above = int(np.count_nonzero(rz.theta > t))
        widen = full or rz.tail_bound > t or route != "auto"
        width = max(X.shape[1], above + OVERSAMPLE) * (2 if widen else 1)
        if route == "auto" and (3 * width >= N or spent + round_flops(N, width) > budget):
            return _dense(red, t)
        # restart from the best Ritz vectors; a block of a third of the space or more spans it
        width = N if 3 * width >= N else width
        X = _start_block(red, rz.U[:, :width], width)


def _dense(red: Reduced, t: float) -> Ritz:
    """Every eigenpair, by LAPACK's divide and conquer (``O(N^3)``, ``8 N^2`` bytes)."""
    lam, W = eigh(red.dense(), driver="evd", overwrite_a=True, check_finite=False)
    lam, W = lam[::-1], W[:, ::-1]
    return Ritz(lam, W, float(np.sort(psi(np.maximum(lam, 0.0), t)).sum()), 0.0, 0.0, "dense")


def _start_block(red: Reduced, warm: np.ndarray | None, width: int) -> np.ndarray:
    """The first block: ``v`` (the direction of the eigenvalue ``~n``; in the block, it makes
    the bound's products with ``(I - P) v`` free, :func:`_certify_basis`), ``warm`` (previous
    eigenvectors, or Ritz vectors) and deterministic random columns up to ``width``."""
    cols = [red.v[:, None]] if warm is None else [red.v[:, None], warm]
    have = sum(c.shape[1] for c in cols)
    if have < width:
        cols.append(np.random.default_rng(red.N).standard_normal((red.N, width - have)))
    return np.hstack(cols)[:, :width]


def _krylov_round(red: Reduced, X: np.ndarray, t: float, g_frob2: float, g_trace: float,
                  gmax: float) -> Ritz:
    """Rayleigh-Ritz on the block Krylov space ``span[X, M X, M^2 X]`` (block Lanczos: each
    block orthogonalised against the previous ones, twice) and its certified bound."""
    Q, _ = qr(X, mode="economic", check_finite=False)
    blocks, products = [Q], [red.gamma(Q)]
    for _ in range(2):
        basis = np.hstack(blocks)
        if basis.shape[1] >= red.N:
            break
        B = _orthogonal_part(basis, np.multiply.outer(red.v, red.v @ blocks[-1]) + products[-1])
        if B.shape[1] == 0:  # an invariant space: Rayleigh-Ritz on it is exact
            break
        blocks.append(B)
        products.append(red.gamma(B))
    return _certify_basis(red, np.hstack(blocks), np.hstack(products), t, g_frob2, g_trace, gmax)


def _orthogonal_part(basis: np.ndarray, B: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the part of ``span(B)`` orthogonal to the orthonormal ``basis``
    (classical Gram-Schmidt twice, then pivoted QR), at most ``N - width`` columns: the bound
    needs an orthonormal block.

    Columns whose remainder is below ``gamma_N`` times ``B``'s largest column are dropped:
    that is the rounding of the products with ``M`` (inner dimension ``N``) that formed them,
    so they carry no direction. Anything above it is kept: the remainder of ``M`` times a
    nearly invariant block is the Ritz residual itself, and dropping it would floor the
    accuracy of ``F^`` (and of the gradient Newton steps on) above the rounding level."""
    scale = float(np.max(np.linalg.norm(B, axis=0), initial=0.0))
    for _ in range(2):
        B = B - basis @ (basis.T @ B)
    Q, R, _ = qr(B, mode="economic", pivoting=True, check_finite=False)
    rank = int(np.count_nonzero(np.abs(np.diag(R)) > gamma(basis.shape[0]) * scale))
    Q = Q[:, : min(rank, basis.shape[0] - basis.shape[1])]
    return Q - basis @ (basis.T @ Q)


def _tail_frob2(U, GU, g_frob2: float, w: np.ndarray, Gw: np.ndarray) -> tuple[float, float]:
    """``||(I - P) M (I - P)||_F^2`` for ``P = UU'`` (module docstring), and ``||w||^2``, from
    ``w = (I - P) v`` and ``Gamma w``."""
    UGU = U.T @ GU
    A2 = g_frob2 - 2.0 * float(np.sum(GU * GU)) + float(np.sum(UGU * UGU))
    ww = float(w @ w)
    return ww * ww + 2.0 * float(w @ Gw) + max(A2, 0.0), ww


def _certify_basis(red: Reduced, Q: np.ndarray, GQ: np.ndarray, t: float, g_frob2: float,
                   g_trace: float, gamma_max: float) -> Ritz:
    """Rayleigh-Ritz on the orthonormal ``Q`` (``GQ = Gamma Q``) and the bound of docs/MATH.md
    section 5.1: ``P`` spanned by the Ritz vectors with ``theta > t``, ``g`` the least of the
    norm, trace, Collatz-Wielandt and ``2 x 2`` bounds listed there."""
    vQ = red.v @ Q
    T = Q.T @ (np.multiply.outer(red.v, vQ) + GQ)
    theta, Z = eigh(0.5 * (T + T.T), check_finite=False)
    theta, Z = theta[::-1], Z[:, ::-1]
    U, GU, vU = Q @ Z, GQ @ Z, vQ @ Z
    R = np.multiply.outer(red.v, vU) + GU - U * theta
    trace_M = red.kd.n_total + g_trace
    keep = theta > t
    # w = (I - P) v for the whole block and for P = span(U[:, keep]): one product for both
    w2 = red.v[:, None] - np.column_stack([U @ vU, U[:, keep] @ vU[keep]])
    # w2 lies in span(Q) but for the part of v off the block, (I - QQ')v = w2[:, 0]: Gamma
    # w2 from the block's products, plus that part's own product unless it is round-off
    Gw2 = GQ @ (Q.T @ w2)
    if np.linalg.norm(w2[:, 0]) > red.N * np.finfo(float).eps * np.linalg.norm(red.v):
        Gw2 += red.gamma(w2[:, [0]] - Q @ (Q.T @ w2[:, [0]]))
    Gb2, wwb = _tail_frob2(U, GU, g_frob2, w2[:, 0], Gw2[:, 0])
    gb = min(np.sqrt(Gb2), max(trace_M - float(theta.sum()), 0.0), wwb + gamma_max)
    GP2, wwP = _tail_frob2(U[:, keep], GU[:, keep], g_frob2, w2[:, 1], Gw2[:, 1])
    g = min(np.sqrt(GP2), max(trace_M - float(theta[keep].sum()), 0.0), wwP + gamma_max)
    if not np.all(keep):
        a = float(theta[~keep].max())
        beta = float(np.sqrt(np.sum(R[:, ~keep] ** 2)))
        g = min(g, 0.5 * (a + gb) + np.hypot(0.5 * (a - gb), beta))
    c = 1.0 if g <= t else t / g
    psi_sum = float(np.sort(psi(theta[keep], t)).sum())
    r2 = float(np.sum(R[:, keep] ** 2))
    return Ritz(theta, U, psi_sum + (2.0 * c - c * c) * GP2, 2.0 * r2 + (1.0 - c) ** 2 * GP2, g,
                "lanczos", psi_sum, GP2, r2)


def _tail_below(red: Reduced, U: np.ndarray, t: float, g_frob2: float) -> bool:
    """Whether ``lambda_max(G) <= t`` for ``G = (I - P) M (I - P)``, ``P = UU'``: a Cholesky
    factorisation of ``(t - delta) I - G`` exists (docs/MATH.md section 5.1; ``delta``: the
    rounding of forming ``G``, and Demmel's ``gamma_{N+1} tr`` for the factorisation, ``tr((t -
    delta) I - G) <= N t``). ``N^3 / 3 + O(N^2 k)`` flops, ``8 N^2`` bytes."""
    N, s, k = red.N, red.s, U.shape[1]
    GU = red.gamma(U)
    Y = GU - 0.5 * U @ (U.T @ GU)
    w = red.v - U @ (red.v @ U)
    C = np.zeros((N, N))  # symmetric: filled in C order, factored as its transpose
    C[:s, :s] = red.kd.block(red.S)
    C[:s, :s] *= -red.cdS[:, None]
    C[:s, :s] *= red.dS
    A = C.T
    if k:
        A = dsyr2k(1.0, U, Y, beta=1.0, c=A, lower=1, overwrite_c=1)
    A = dsyrk(-1.0, w[:, None], beta=1.0, c=A, lower=1, overwrite_c=1)
    # rounding: Gamma's entries, the products Gamma U and U'v (inner dimension N), the rank
    # updates; then the factorisation's backward error
    ww = float(w @ w)
    form = ((2 * k + 3) * np.sqrt(g_frob2) + 2.0 * np.sqrt(k) * float(np.linalg.norm(Y)) + ww
            + 2 * k * float(np.linalg.norm(red.v)) * np.sqrt(ww))
    delta = 1.01 * (gamma(N + 1) * N * t + gamma(N + 2 * k + 6) * form)
    if not delta < 0.5 * t:
        return False
    A[np.diag_indices(N)] += t - delta
    _, info = dpotrf(A, lower=1, clean=0, overwrite_a=1)
    return info == 0
