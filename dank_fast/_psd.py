"""A cheap sufficient PSD test for smooth kernels: low-rank deflation, then Gershgorin.

docs/validity.md, rule 4, accepts a symmetric ``A`` iff ``lambda_min(A) >= -eps n s``
(``s = max|A_ij|``). Deciding it by a Cholesky factorisation costs ``n^3 / 3`` flops. A smooth
kernel (a Gaussian on a few features, a low-degree polynomial) is numerically of low rank, and
for such a matrix a much cheaper test proves the same bound:

1. a pivoted (greedy, diagonal) Cholesky builds ``L`` (``n x r``) until the largest residual
   diagonal is below ``eps s / 2`` (``O(n r^2)``);
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

from ._eigen import CALL_FLOPS
from ._kernel_data import ROWS
from ._rounding import UNIT_ROUNDOFF, gamma

__all__ = ["lowrank_gershgorin_psd", "kernel_factors", "PivotedCholesky", "worth_trying"]


def worth_trying(n: int) -> bool:
    """Whether the test may be tried before the Cholesky's ``n^3 / 3`` flops: a failed attempt
    (the pivoted Cholesky to ``r = n / 16``: ``n r^2`` flops and four NumPy calls per column,
    :data:`dank_fast._eigen.CALL_FLOPS` each) must cost at most a tenth of the Cholesky."""
    r = n // 16
    return r > 0 and n * r * r + 4 * r * CALL_FLOPS <= n**3 / 30


class PivotedCholesky:
    """The pivoted (greedy, diagonal) Cholesky factor ``L`` of a PSD matrix ``A`` given by its
    rows, grown on demand: :meth:`extend` continues where the last call stopped. ``O(n r^2)``
    time and ``O(n r)`` memory for rank ``r``; ``A`` is never formed, and ``L`` need not be
    accurate for ``L L'`` to be PSD (:attr:`residual` is ``diag(A - L L')`` up to rounding)."""

    def __init__(self, row, diag: np.ndarray, target: float):
        self.row, self.target = row, target
        self.residual = np.array(diag, dtype=np.float64)
        self.L = np.empty((self.residual.size, 0))

    def extend(self, r_max: int) -> np.ndarray | None:
        """``L`` (``n x r``, ``r <= r_max``) once the residual diagonal is at most the target,
        or None when that needs more than ``r_max`` columns (the work so far is kept)."""
        k = self.L.shape[1]
        L = np.empty((self.residual.size, max(r_max, k)))
        L[:, :k] = self.L
        while True:
            p = int(np.argmax(self.residual))
            if self.residual[p] <= self.target or k >= r_max:
                break
            L[:, k] = (self.row(p) - L[:, :k] @ L[p, :k]) / np.sqrt(self.residual[p])
            self.residual -= L[:, k] * L[:, k]
            k += 1
        self.L = L[:, :k]
        return self.L if float(np.max(self.residual, initial=0.0)) <= self.target else None


def kernel_factors(kd) -> tuple[PivotedCholesky, PivotedCholesky]:
    """The pivoted Cholesky factors of ``K`` and ``K o K`` of the kernel data ``kd`` (kept on it
    as ``kd.lowrank`` and grown by later calls) to the residual diagonal ``eps_psd max|K| / 2``
    and its square: the tolerance at which docs/validity.md accepts ``K`` as PSD."""
    if kd.lowrank is None:
        K, s = kd.K, kd.kappa
        e = 0.5e-8 * s  # eps_psd = 1e-8 of a float64 kernel (docs/validity.md, rule 4)
        kd.lowrank = (PivotedCholesky(lambda p: K[p], kd.diag, e),
                      PivotedCholesky(lambda p: K[p] * K[p], kd.diag * kd.diag, e * s))
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
    ``O(n r^2 + n^2 r)`` time for the rank ``r <= n / 16`` reached, ``O(n r + 128 n)`` memory;
    False at once where :func:`worth_trying` says no, or when the residual diagonal stays above
    ``eps s / 2`` at ``r = n / 16`` (then ``O(n^3 / 256)`` time was spent).
    """
    n = A.shape[0]
    if not worth_trying(n) or not s > 0.0:
        return False
    # rank r <= n / 16: the residual pass costs 2 n^2 r flops, so the test stays several times
    # cheaper than the Cholesky's n^3 / 3
    L = PivotedCholesky(lambda p: A[p], np.diagonal(A), 0.5 * eps * s).extend(n // 16)
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
    for lo in range(0, n, ROWS):  # strips R[lo:hi, lo:]: half the products of the full R
        hi = min(lo + ROWS, n)
        R = L[lo:hi] @ L[lo:].T  # then R = A - LL' in place: one temporary, not two
        np.subtract(A[lo:hi, lo:], R, out=R)
        idx = np.arange(hi - lo)
        diag[lo:hi] = R[idx, idx]
        absR = np.abs(R, out=R)
        rowsum[lo:hi] += absR.sum(axis=1)
        rowsum[hi:] += absR[:, hi - lo:].sum(axis=0)  # the mirror of the strictly upper part
    return bool(np.all(diag - (rowsum - np.abs(diag)) - slack * rowsum - err >= threshold))
