"""A cheap sufficient PSD test for smooth kernels: low-rank deflation, then Gershgorin.

docs/validity.md, rule 4, accepts a symmetric ``A`` iff ``lambda_min(A) >= -eps n s``
(``s = max|A_ij|``). Deciding it by a Cholesky factorisation costs ``n^3 / 3`` flops. A smooth
kernel (a Gaussian on a few features, a low-degree polynomial) is numerically of low rank, and
for such a matrix a much cheaper test proves the same bound:

1. a pivoted (diagonal, greedy within blocks) Cholesky, grown by blocks of pivots
   (:class:`PivotedCholesky`), builds ``L`` (``n x r``) until the largest residual diagonal is
   below ``eps s / 2`` (``O(n r^2)``, at matrix-matrix speed);
2. ``A = L L' + R`` exactly for the real ``R = A - L L'``, and ``L L'`` is PSD, so
   ``lambda_min(A) >= lambda_min(R) >= min_i (R_ii - sum_{j != i} |R_ij|)`` (Gershgorin); ``R``
   is computed in row blocks (``O(n^2 r)``), its rounding bounded rigorously.

Only *success* is used (it proves the bound); a failure says nothing, and the caller falls back
to the Cholesky test. ``L`` need not be accurate: any ``L`` makes ``L L'`` PSD, so the rounding
of the pivoted Cholesky never matters, only that of the residual, which is bounded by
``gamma_{r+1} (|A| + |L| |L|')`` entrywise (``gamma_k = k u / (1 - k u)``, Higham, Thm 3.5).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg.blas import dtrsm
from scipy.linalg.lapack import dpstrf

from ._cost import BLOCK, growth_reach, psd_test_pays
from ._rounding import UNIT_ROUNDOFF, gamma

__all__ = ["lowrank_gershgorin_psd", "kernel_factors", "PivotedCholesky"]


def take(A: np.ndarray, P: np.ndarray, cols: np.ndarray | None = None) -> np.ndarray:
    """``A[P]``, or ``A[P][:, cols]`` without the whole rows: the ``rows`` of
    :class:`PivotedCholesky` for a matrix at hand (a new array)."""
    return A[P] if cols is None else A[np.ix_(P, cols)]


class PivotedCholesky:
    """The blocked pivoted (diagonal) Cholesky factor ``L`` of a PSD matrix ``A``
    given by its rows, grown on demand: :meth:`extend` continues where the last call stopped.

    Parameters
    ----------
    rows : callable
        ``rows(P, cols=None)``: the rows ``A[P]`` (``len(P) x n``) for an integer array ``P``,
        or only their entries in the columns ``cols`` (``A[P][:, cols]``); a new array the
        factor may overwrite (:func:`take` for a matrix at hand).
    diag : ndarray of shape (n,)
        ``diag(A)``.
    target : float
        The residual diagonal to reach (``>= 0``).

    Notes
    -----
    Each block takes the ``b = min(BLOCK, r_max - k)`` largest residual diagonals ``P`` above
    the target, factors their ``b x b`` residual block by LAPACK's pivoted Cholesky
    (``dpstrf``, greedy within the block) down to the target, and gets the new columns of the
    pivots ``Q`` it took from their residual rows by one product and one triangular solve. A
    block stops at the target, not at a fraction of the largest residual outside it (a weak
    greedy rule): such a fraction caps the fall of the residual per block, so that the blocks
    number about ``log(max diag / target)`` over the log of its inverse whatever the rank,
    where a block that stops at the target takes as many pivots as its candidates' residual
    has rank above it. The greedy choice within each block takes a few more columns than a
    greedy over all rows. ``O(n r^2)`` time (:func:`dank_fast._cost.growth_flops`) and ``O(n r +
    BLOCK n)`` memory for rank ``r``; ``A`` is never formed, and any ``L`` makes ``L L'`` PSD
    (:attr:`residual` is ``diag(A - L L')`` up to rounding).
    """

    def __init__(self, rows, diag: np.ndarray, target: float):
        self.rows, self.target = rows, target
        self.residual = np.array(diag, dtype=np.float64)
        self.L = np.empty((self.residual.size, 0))

    def done(self) -> bool:
        """Whether the residual diagonal is at most the target."""
        return float(np.max(self.residual, initial=0.0)) <= self.target

    def reach(self, flops: float) -> int:
        """The most columns a growth of at most ``flops`` can reach
        (:func:`dank_fast._cost.growth_reach`)."""
        return growth_reach(self.residual.size, self.L.shape[1], flops)

    def extend(self, r_max: int) -> np.ndarray | None:
        """``L`` (``n x r``, ``r <= r_max``) once the residual diagonal is at most the target,
        or None when that needs more than ``r_max`` columns (the work so far is kept).
        ``O(n (r^2 - k^2))`` time from ``k`` columns (class docstring)."""
        res, k, done = self.residual, self.L.shape[1], self.done()
        if done or k >= r_max:  # nothing to grow (an earlier call may have grown past r_max)
            return self.L if done and k <= r_max else None
        L = np.empty((res.size, max(r_max, k)))
        L[:, :k] = self.L
        while k < r_max:
            P = np.flatnonzero(res > self.target)  # NaN never: not a pivot
            if P.size == 0:
                break
            b = min(BLOCK, r_max - k)
            if P.size > b:  # the b largest
                P = P[np.argpartition(res[P], P.size - b)[P.size - b:]]
            S = self.rows(P, P)  # the pivot block of the residual: 2 b^2 k flops
            if k:
                S -= L[P, :k] @ L[P, :k].T
            np.fill_diagonal(S, res[P])  # the diagonal the pivots were chosen by
            c, piv, m, info = dpstrf(S, tol=self.target, lower=1)
            if info < 0 or m < 1:  # no pivot above the target (NaN on the diagonal)
                break
            Q = P[piv[:m] - 1]
            R = self.rows(Q)  # the residual rows of the pivots taken: one gemm, 2 m k n flops
            if k:
                R -= L[Q, :k] @ L[:, :k].T
            # L_new = R' L_QQ^-T: R' is R's Fortran-ordered view, solved in place
            X = dtrsm(1.0, c[:m, :m], R.T, side=1, lower=1, trans_a=1, overwrite_b=1)
            L[:, k:k + m] = X
            res -= np.einsum("ij,ij->i", X, X)
            k += m
        self.L = L[:, :k]
        return self.L if self.done() else None


def kernel_factors(kd) -> tuple[PivotedCholesky, PivotedCholesky]:
    """The pivoted Cholesky factors of ``K`` and ``K o K`` of the kernel data ``kd`` (kept on it
    as ``kd.lowrank`` and grown by later calls) to the residual diagonal ``eps_psd max|K| / 2``
    and its square: the tolerance at which docs/validity.md accepts ``K`` as PSD."""
    if kd.lowrank is None:
        K, s = kd.K, kd.kappa
        e = 0.5e-8 * s  # eps_psd = 1e-8 of a float64 kernel (docs/validity.md, rule 4)

        def squares(P: np.ndarray, cols: np.ndarray | None = None) -> np.ndarray:
            R = take(K, P, cols)
            return np.multiply(R, R, out=R)

        kd.lowrank = (PivotedCholesky(lambda P, cols=None: take(K, P, cols), kd.diag, e),
                      PivotedCholesky(squares, kd.diag * kd.diag, e * s))
    return kd.lowrank


def lowrank_gershgorin_psd(A: np.ndarray, s: float, eps: float, *,
                           asym: float = 100 * 2.0**-52) -> bool:
    """True when ``lambda_min(A) >= -eps n s`` is proved by the module's test.

    Parameters
    ----------
    A : ndarray of shape (n, n)
        Symmetric float64 matrix with ``max|A_ij| = s``, ``s`` far from the ends of the float64
        range (the caller passes ``1e-100 <= s <= 1e100``), so that ``n s`` and the squares of
        the entries of ``L`` neither overflow nor underflow.
    s : float
        ``max|A_ij|``.
    eps : float
        ``eps_psd`` of docs/validity.md.
    asym : float, default ``100 * 2**-52``
        Largest asymmetry ``|A_ij - A_ji|`` relative to ``s`` that ``A`` may keep
        (``check_kernel_matrix`` keeps it as it is up to this, symmetrising anything larger).

    Returns
    -------
    bool
        True: the bound holds (rigorously, rounding included). False: not decided here.

    Notes
    -----
    ``O(n r^2 + n^2 r)`` time for the rank ``r <= n / 16`` reached, ``O(n r + BLOCK n)``
    memory; False at once where :func:`dank_fast._cost.psd_test_pays` says no, or when the
    residual diagonal stays above ``eps s / 2`` at ``r = n / 16`` (then ``O(n^3 / 256)`` time
    was spent).
    """
    n = A.shape[0]
    if not psd_test_pays(n) or not s > 0.0:
        return False
    # rank r <= n / 16: the residual pass costs 2 n^2 r flops, so the test stays several times
    # cheaper than the Cholesky's n^3 / 3
    L = PivotedCholesky(lambda P, cols=None: take(A, P, cols), np.diagonal(A),
                        0.5 * eps * s).extend(n // 16)
    if L is None:
        return False
    r = L.shape[1]
    g = gamma(r + 1)
    absL = np.abs(L)
    # rounding of R = A - LL' summed over a row: gamma (sum_j |A_ij| + (|L||L|' 1)_i), doubled
    # for the rounding of these non-negative sums themselves (relative n u << 1); plus the
    # asymmetry A may keep (check_kernel_matrix keeps up to asym s per entry): only the upper
    # triangle of R is computed, and each of its entries stands for its mirror image too
    err = 2.0 * g * (n * s + absL @ absL.sum(axis=0)) + n * asym * s
    threshold = -eps * n * s
    slack = 4.0 * n * UNIT_ROUNDOFF  # the computed row sums of |R| (and this test's few operations)
    rowsum = np.zeros(n)
    diag = np.empty(n)
    for lo in range(0, n, BLOCK):  # strips R[lo:hi, lo:]: half the products of the full R
        hi = min(lo + BLOCK, n)
        R = L[lo:hi] @ L[lo:].T  # then R = A - LL' in place: one temporary, not two
        np.subtract(A[lo:hi, lo:], R, out=R)
        idx = np.arange(hi - lo)
        diag[lo:hi] = R[idx, idx]
        absR = np.abs(R, out=R)
        rowsum[lo:hi] += absR.sum(axis=1)
        rowsum[hi:] += absR[:, hi - lo:].sum(axis=0)  # the mirror of the strictly upper part
    return bool(np.all(diag - (rowsum - np.abs(diag)) - slack * rowsum - err >= threshold))
