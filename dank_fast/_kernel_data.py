"""``KernelData``: a kernel matrix with the blocks, rows and sums of it that the solvers reuse.

The solvers touch ``K`` through the support ``S = {i : d_i != 0}`` of the current point: the
block ``K[S][:, S]`` (the inner eigenproblem, the Newton curvature), the rows ``K[S, :]``
(products ``K[:, S] X``) and the exact sums of :meth:`KernelData.gamma_sums`. The block is
cached for the last ``S`` within the memory rule of :class:`KernelData`.
"""

from __future__ import annotations

import numpy as np

from ._cost import BLOCK, copies_block

__all__ = ["KernelData"]


class KernelData:
    """A kernel matrix with the derived quantities the solvers reuse.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel of the points that may carry weight (``d_i != 0``), validated by the caller.
    n_total : int, optional
        Number of points of the whole problem (default ``n``). Points ``n .. n_total - 1`` are
        not in ``K`` and have ``d = 0`` (a working set leaves them out); they enter ``M = 11' +
        Gamma`` only through the all-ones vector.
    extremes : (float, float), optional
        ``(min K, max K)`` when the caller has them; else two passes over ``K``.
    copy_blocks : bool, optional
        Whether the block ``K[S][:, S]`` is copied (and cached for the last ``S``). By default
        (None) by the memory rule ``dank_fast._cost.copies_block``; otherwise products go
        through the rows ``K[S]`` and gathers are made by row blocks, ``n / |S|`` times the
        flops of the block but no ``|S| x |S|`` copy.

    Notes
    -----
    Memory: ``K`` is used in place; at most one ``|S| x |S|`` copy (the rule above) and
    ``BLOCK x n`` temporaries (``dank_fast._cost.BLOCK``). :meth:`drop_caches` releases
    the copy.
    """

    def __init__(self, K: np.ndarray, *, n_total: int | None = None,
                 extremes: tuple[float, float] | None = None, copy_blocks: bool | None = None):
        self.K = K
        self.n = K.shape[0]
        self.n_total = self.n if n_total is None else int(n_total)
        if self.n_total < self.n:
            raise ValueError(f"n_total = {self.n_total} < n = {self.n}")
        self.diag = np.ascontiguousarray(np.diag(K))
        if extremes is None and self.n:
            extremes = float(np.min(K)), float(np.max(K))
        kmin, kmax = extremes if self.n else (0.0, 0.0)
        self.kappa = float(max(kmax, -kmin)) if self.n else 0.0
        self.nonnegative = kmin >= 0.0
        self.copy_blocks = copy_blocks
        self._block_key: bytes | None = None
        self._block: np.ndarray | None = None
        #: the pivoted Cholesky factors of K and K o K (dank_fast._psd.kernel_factors)
        self.lowrank = None

    def copies(self, s: int) -> bool:
        """Whether a block ``K[S][:, S]`` of ``s`` points is copied (class docstring)."""
        if self.copy_blocks is not None:
            return self.copy_blocks
        return copies_block(s, self.n)

    def drop_caches(self) -> None:
        """Release the cached block (a result keeps its kernel data; the cache served the
        solve only)."""
        self._block_key = self._block = self.lowrank = None

    def block(self, S: np.ndarray) -> np.ndarray:
        """``K[S][:, S]`` (cached for the last ``S`` where :meth:`copies` allows, ``K`` itself
        when ``S`` is everything)."""
        if S.size == self.n:
            return self.K
        key = S.tobytes()
        if key == self._block_key:
            return self._block
        out = np.empty((S.size, S.size))
        for lo in range(0, S.size, BLOCK):  # np.take by row blocks: faster than K[np.ix_(S, S)]
            out[lo:lo + BLOCK] = np.take(self.K[S[lo:lo + BLOCK]], S, axis=1)
        if self.copies(S.size):
            self._block_key, self._block = key, out
        return out

    def support_product(self, S: np.ndarray, X: np.ndarray, square: bool = False) -> np.ndarray:
        """``K[:, S] @ X`` (``(K o K)[:, S] @ X`` with ``square``) for ``X`` of shape ``(|S|,)``
        or ``(|S|, b)``: ``K`` is symmetric, so this is ``(X' K[S, :])'``, summed over blocks
        of ``BLOCK`` rows (``2 |S| n b`` flops, one pass over the rows of the support, no copy
        of ``K[:, S]``)."""
        if S.size == self.n and not square:
            return self.K @ X
        X2 = X.reshape(S.size, -1)
        outT = np.zeros((X2.shape[1], self.n))
        for lo in range(0, S.size, BLOCK):
            rows = self.K[S[lo:lo + BLOCK]]
            outT += X2[lo:lo + BLOCK].T @ (rows * rows if square else rows)
        return outT[0] if X.ndim == 1 else outT.T

    def block_product(self, S: np.ndarray, X: np.ndarray) -> np.ndarray:
        """``K[S][:, S] @ X``: from the cached block where :meth:`copies` allows it, else
        through the rows ``K[S]``."""
        if S.size == self.n or self.copies(S.size):
            return self.block(S) @ X
        return self.support_product(S, X)[S]

    def top_bound(self, S: np.ndarray, a: np.ndarray) -> float:
        """An upper bound of ``lambda_max(diag(a) K[S][:, S] diag(a))`` for ``a >= 0``, by
        Collatz-Wielandt on ``|K|``: for positive ``s``, ``lambda_max(A) <= max_i (|A| s)_i /
        s_i``; with ``s = 1`` and ``s = a`` this is ``max_i a_i (|K| a)_i`` and ``max_i (|K|
        a^2)_i``. Tight when ``K`` is nearly diagonal (narrow kernels), where a Frobenius bound
        is not. Two products with ``|K[S][:, S]|`` (``K`` itself when it has no negative
        entry)."""
        X = np.column_stack([a, a * a])
        if self.nonnegative:
            P = self.block_product(S, X)
        else:
            P = np.empty((S.size, 2))
            for lo in range(0, S.size, BLOCK):
                P[lo:lo + BLOCK] = np.abs(np.take(self.K[S[lo:lo + BLOCK]], S, axis=1)) @ X
        return float(min(np.max(a * P[:, 0]), np.max(P[:, 1])))

    def gamma_sums(self, S: np.ndarray, dS: np.ndarray
                   ) -> tuple[float, float, float, np.ndarray]:
        """``(d'Kd, sum_ij d_i^2 d_j^2 K_ij^2, sum_i d_i^2 K_ii, (K o K)[S][:, S] d_S^2)`` over
        ``S``, exactly.

        ``1'Gamma 1``, ``||Gamma||_F^2`` and ``tr Gamma`` are the first three divided by ``4
        eta``, ``16 eta^2`` and ``4 eta``; the vector, whose dot product with ``d_S^2`` is the
        second, is the diagonal of the Newton curvature on the support
        (:func:`dank_fast._curvature.curvature`). One pass over ``K[S][:, S]`` in chunks of
        ``BLOCK`` rows squared into one buffer (no ``K o K``).
        """
        if S.size == 0:
            return 0.0, 0.0, 0.0, np.zeros(0)
        d2 = dS * dS
        if S.size == self.n or self.copies(S.size):
            src, dv, d2v = self.block(S), dS, d2
            rows_of = np.arange(S.size)
        else:  # row slices of K itself with d zero-padded: no gathered copy
            src, rows_of = self.K, S
            dv = np.zeros(self.n)
            dv[S] = dS
            d2v = dv * dv
        kk = np.empty(S.size)
        Kd = np.empty(S.size)
        buf = np.empty((min(BLOCK, S.size), src.shape[1]))
        for lo in range(0, S.size, BLOCK):
            B = src[rows_of[lo:lo + BLOCK]] if src is self.K else src[lo:lo + BLOCK]
            Kd[lo:lo + BLOCK] = B @ dv
            kk[lo:lo + BLOCK] = np.multiply(B, B, out=buf[: B.shape[0]]) @ d2v
        return float(dS @ Kd), float(d2 @ kk), float(d2 @ self.diag[S]), kk
