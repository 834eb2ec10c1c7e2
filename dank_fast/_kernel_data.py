"""``KernelData``: a kernel matrix with the blocks, rows and sums of it that the solvers reuse.

The solvers touch ``K`` through the support ``S = {i : d_i != 0}`` of the current point: the
block ``K[S][:, S]`` (the inner eigenproblem, the Newton curvature), the rows ``K[S, :]``
(products ``K[:, S] X``) and the exact sums of :meth:`KernelData.gamma_sums`. Each is cached
for the last ``S`` only, within the memory bounds of :class:`KernelData`'s notes.
"""

from __future__ import annotations

import numpy as np

from ._memory import BLOCK_BYTES

__all__ = ["KernelData", "ROWS"]

#: rows of ``K`` gathered or squared at a time in a pass over it (temporaries ``ROWS x n``, 2 MB
#: at n = 2,000, that stay in cache): the block ``K[S][:, S]``, :meth:`KernelData.gamma_sums`,
#: the Newton curvature, the PSD test's residual (family benchmark, in process, blocks of
#: 4,096 rows: make_classification n = 5,000, C = 1 1.31x the time, moons0.3 n = 5,000,
#: C = 1 1.30x, blobs and moons0.3 n = 2,000, C = 32 1.16x)
ROWS = 128


#: support fraction ``|S| / n`` up to which the block ``K[S][:, S]`` and the columns ``K[:, S]``
#: are copied (and cached for the last ``S``) beyond the ``BLOCK_BYTES`` budget (within it,
#: ``|S| <= 2,896``, they always are); above it, products go through ``K`` itself with
#: zero-padded vectors (family data, in process: make_classification n = 10,000, C = 1,
#: 4,761 support vectors, 4.3x slower without; the family table's rows, n <= 5,000, do
#: not reach it, and make_moons, presolved on its low-rank surrogate, no longer needs it)
COPY_FRACTION = 0.6


class KernelData:
    """A kernel matrix with the derived quantities the solvers reuse.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel of the points that may carry weight (``d_i != 0``).
    n_total : int, optional
        Number of points of the whole problem (default ``n``). Points ``n .. n_total - 1`` are
        not in ``K`` and have ``d = 0`` (a working set leaves them out); they enter ``M = 11' +
        Gamma`` only through the all-ones vector.
    extremes : (float, float), optional
        ``(min K, max K)`` when the caller has them
        (:func:`dank_fast._validation.validate_kernel_matrix`); else two passes over ``K``.
    copy_blocks : bool, optional
        Whether blocks ``K[S][:, S]`` and columns ``K[:, S]`` are copied: by default (None)
        while ``|S| <= COPY_FRACTION n`` or ``8 |S|^2 <= BLOCK_BYTES``; False never copies
        (products through ``K`` itself), True always copies.

    Notes
    -----
    Memory: ``K`` is used in place. ``K[:, S]`` and ``K[S][:, S]`` are copied (and cached for the
    last ``S``) as ``copy_blocks`` says; otherwise products go through ``K`` itself with
    zero-padded vectors (``n^2`` instead of ``|S|^2`` work, no copy). :meth:`drop_caches`
    releases both.
    """

    def __init__(self, K: np.ndarray, *, n_total: int | None = None,
                 extremes: tuple[float, float] | None = None, copy_blocks: bool | None = None):
        self.K = K
        self.n = K.shape[0]
        self.n_total = self.n if n_total is None else int(n_total)
        if self.n_total < self.n:
            raise ValueError(f"n_total = {self.n_total} < n = {self.n}")
        self.diag = np.ascontiguousarray(np.diag(K))
        if extremes is None and self.n:  # (min K, max K), e.g. from validate_kernel_matrix
            extremes = float(np.min(K)), float(np.max(K))
        kmin, kmax = extremes if self.n else (0.0, 0.0)
        self.kappa = float(max(kmax, -kmin)) if self.n else 0.0
        self.nonnegative = kmin >= 0.0
        self.copy_blocks = copy_blocks
        self._K2: np.ndarray | None = None
        self._cols_key: bytes | None = None
        self._cols: np.ndarray | None = None
        self._block_key: bytes | None = None
        self._block: np.ndarray | None = None
        #: the pivoted Cholesky factors of ``K`` and ``K o K`` (:mod:`dank_fast._lowrank`)
        self.lowrank = None

    @property
    def K2(self) -> np.ndarray:
        """Elementwise square ``K o K`` (used by the tau = 0 route on large supports)."""
        if self._K2 is None:
            self._K2 = self.K * self.K
        return self._K2

    def _copy(self, S: np.ndarray | int) -> bool:
        """Whether a block ``K[S][:, S]`` of ``S`` (indices, or their number) is copied."""
        if self.copy_blocks is not None:
            return self.copy_blocks
        s = S if isinstance(S, int) else S.size
        return s <= COPY_FRACTION * self.n or 8 * s * s <= BLOCK_BYTES

    def columns(self, S: np.ndarray) -> np.ndarray:
        """``K[:, S]`` (cached for the last ``S``; ``K`` itself when ``S`` is everything)."""
        if S.size == self.n:
            return self.K
        key = S.tobytes()
        if key != self._cols_key:
            self._cols = np.take(self.K, S, axis=1)  # 4x faster than K[:, S] (n = 2,000)
            self._cols_key = key
        return self._cols

    def drop_caches(self) -> None:
        """Release the cached ``K[:, S]`` and ``K[S][:, S]`` (a result keeps its kernel data;
        the caches served the solve only)."""
        self._cols_key = self._cols = self._block_key = self._block = self.lowrank = None

    def block(self, S: np.ndarray) -> np.ndarray:
        """``K[S][:, S]`` (cached for the last ``S``)."""
        if S.size == self.n:
            return self.K
        key = S.tobytes()
        if key != self._block_key:
            self._block = np.empty((S.size, S.size))
            self._gather(S, self._block)
            self._block_key = key
        return self._block

    def support_product(self, S: np.ndarray, X: np.ndarray) -> np.ndarray:
        """``K[:, S] @ X`` for ``X`` of shape ``(|S|,)`` or ``(|S|, b)``, without copying
        ``K[:, S]`` (unless :meth:`columns` holds it already).

        ``K`` is symmetric, so ``K[:, S] @ X = (X' K[S, :])'``, summed over blocks of ``ROWS``
        rows of ``K[S, :]`` (``ROWS x n`` temporaries): ``|S| n b`` flops, one pass over the
        rows of the support.
        """
        if S.tobytes() == self._cols_key:
            return self._cols @ X
        if S.size == self.n:
            return self.K @ X
        X2 = X.reshape(S.size, -1)
        outT = np.zeros((X2.shape[1], self.n))
        for lo in range(0, S.size, ROWS):
            outT += X2[lo:lo + ROWS].T @ self.K[S[lo:lo + ROWS]]
        return outT[0] if X.ndim == 1 else outT.T

    def block_product(self, S: np.ndarray, X: np.ndarray) -> np.ndarray:
        """``K[S][:, S] @ X`` (see :meth:`support_product`)."""
        if self._copy(S):
            return self.block(S) @ X
        return self.support_product(S, X)[S]

    def abs_block_product(self, S: np.ndarray, X: np.ndarray) -> np.ndarray:
        """``|K[S][:, S]| @ X`` (``K`` itself when it has no negative entry)."""
        if self.nonnegative:
            return self.block_product(S, X)
        out = np.empty((S.size,) + X.shape[1:])
        for lo in range(0, S.size, ROWS):
            rows = S[lo:lo + ROWS]
            out[lo:lo + ROWS] = np.abs(self.K[np.ix_(rows, S)]) @ X
        return out

    def dense_size(self, S: np.ndarray) -> int:
        """The dimension of the dense work of an evaluation on the support ``S`` (for the BLAS
        thread policy, :func:`dank_fast._threads.blas_threads`): ``|S|`` here."""
        return S.size

    def range_factor(self, S: np.ndarray) -> np.ndarray | None:
        """A factor ``L_S`` with ``K[S][:, S] = L_S L_S'`` exactly, where the kernel data hold
        one (:class:`dank_fast._surrogate.FactorKernelData`); None here."""
        return None

    def block_into(self, S: np.ndarray, out: np.ndarray) -> None:
        """``out[...] = K[S][:, S]`` (the cached block, else by row blocks of ``K[S]``)."""
        if self._copy(S):
            out[...] = self.block(S)
        else:
            self._gather(S, out)

    def _gather(self, S: np.ndarray, out: np.ndarray) -> None:
        """``out[...] = K[S][:, S]`` by row blocks of ``K[S]`` (``ROWS x n`` temporaries; np.take
        is faster than ``K[np.ix_(S, S)]``: 0.62 vs 1.07 ms at ``|S| = 680``, n = 2,000)."""
        for lo in range(0, S.size, ROWS):
            out[lo:lo + ROWS] = np.take(self.K[S[lo:lo + ROWS]], S, axis=1)

    def top_bound(self, S: np.ndarray, a: np.ndarray) -> float:
        """An upper bound of ``lambda_max(diag(a) K[S][:, S] diag(a))`` for ``a >= 0``, by
        Collatz-Wielandt on ``|K|``.

        For any symmetric ``A`` and positive ``s``, ``lambda_max(A) <= rho(|A|) <= max_i
        (|A| s)_i / s_i``. With ``|A| = D |K| D`` and ``s = 1`` or ``s = a`` this is ``max_i a_i
        (|K| a)_i`` resp. ``max_i (|K| a^2)_i``: two products with ``|K[S][:, S]|`` (``K``
        itself for a non-negative kernel such as the Gaussian). Tight when ``K`` is nearly
        diagonal (narrow kernels), exactly where a Frobenius bound is not.
        """
        P = self.abs_block_product(S, np.column_stack([a, a * a]))
        return float(min(np.max(a * P[:, 0]), np.max(P[:, 1])))

    def gamma_sums(self, S: np.ndarray, dS: np.ndarray
                   ) -> tuple[float, float, float, np.ndarray]:
        """``(d'Kd, sum_ij d_i^2 d_j^2 K_ij^2, sum_i d_i^2 K_ii, (K o K)[S][:, S] d_S^2)`` over
        ``S``, exactly.

        ``1'Gamma 1``, ``||Gamma||_F^2`` and ``tr Gamma`` are the first three divided by ``4
        eta``, ``16 eta^2`` and ``4 eta``; the vector (length ``|S|``), whose dot product with
        ``d_S^2`` is the second, is the diagonal of the Newton curvature model on the support
        (:func:`dank_fast._curvature.curvature`). One pass over ``K[S][:, S]`` in row chunks of
        ``ROWS`` (one chunk-sized buffer, no ``K o K``).
        """
        if S.size == 0:
            return 0.0, 0.0, 0.0, np.zeros(0)
        d2 = dS * dS
        if self._copy(S):
            src, rows_of, dv, d2v = self.block(S), S, dS, d2
        else:  # contiguous row slices of K itself, d zero-padded: no fancy-indexed copies
            src, rows_of = self.K, np.arange(self.n)
            dv = np.zeros(self.n)
            dv[S] = dS
            d2v = dv * dv
        kk = np.empty(rows_of.size)
        Kd = np.empty(rows_of.size)
        # row chunks that stay in cache while they are read twice and squared into one buffer
        # (a 3.6 MB block at |S| = 676 was read three times and squared into a new temporary)
        sqbuf = np.empty((min(ROWS, rows_of.size), src.shape[1]))
        for lo in range(0, rows_of.size, ROWS):
            rows = slice(lo, min(lo + ROWS, rows_of.size))
            B = src[rows]
            Kd[rows] = B @ dv
            B2 = np.multiply(B, B, out=sqbuf[: rows.stop - lo])
            kk[rows] = B2 @ d2v
        quad = float(dv @ Kd)
        if rows_of.size != S.size:
            kk = kk[S]
        sq = float(d2 @ kk)
        tr = float(d2 @ self.diag[S])
        return quad, sq, tr, kk

