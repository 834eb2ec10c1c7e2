"""A kernel given by features, evaluated in row blocks: never an ``n x n`` array.

:class:`FeatureKernel` holds ``X`` (``n x d``, float64) and a PSD kernel function; it hands out
the rectangles ``K[rows][:, cols]`` that the large-scale certificates need
(:mod:`dank_ref.scale_certificate`), ``block_rows`` rows at a time. It is dank_ref's own code
(it never imports ``dank_fast``).

Kernels (:doc:`docs/MATH.md </MATH>` section 1; :doc:`docs/validity.md </validity>`: PSD by
construction, no test):

* ``"rbf"`` / ``"gaussian"``: ``exp(-||x - z||^2 / (2 sigma^2)) = exp(-gamma ||x - z||^2)``;
* ``"linear"``: ``<x, z>``;
* ``"poly"``: ``(gamma <x, z> + coef0)^degree``, ``coef0 >= 0``, integer ``degree >= 1``
  (``coef0 < 0`` is not PSD in general and is refused).

For each of them ``|K_ij| <= sqrt(K_ii K_jj)`` (PSD), so ``max |K_ij| = max_i K_ii``
(:meth:`FeatureKernel.scale`) costs ``O(n d)``.

Cost: a rectangle ``r x c`` costs ``O(r c d)`` time; the blockwise routines allocate one block
of ``block_rows x c`` float64 at a time (``block_rows`` given, or chosen so that a block holds at
most ``BLOCK_BYTES``).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterator

import numpy as np

__all__ = ["FeatureKernel", "BLOCK_BYTES", "KERNELS"]

#: Default bound on one block of kernel values (bytes), when ``block_rows`` is not given.
BLOCK_BYTES = 32 << 20

#: Accepted kernel names (``"gaussian"`` is ``"rbf"``).
KERNELS = ("rbf", "gaussian", "linear", "poly")


def _positive(name: str, value) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    if not (math.isfinite(v) and v > 0.0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def check_features(X) -> np.ndarray:
    """``X`` as a C-contiguous float64 ``n x d`` array, ``n, d >= 1``, every entry finite.

    Raises
    ------
    TypeError
        Not a real numeric array (bool, complex, strings, objects).
    ValueError
        Not 2-D, empty, or a row holding NaN or inf (the first such row is named).
    """
    arr = np.asarray(X)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"X must be a real numeric array, got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise ValueError(f"X must be a 2-D array of n >= 1 rows and d >= 1 columns, got shape "
                         f"{arr.shape}")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"X[{i}] (row {i} of {arr.shape[0]}) contains NaN or inf "
                         f"({int(bad.sum())} such rows)")
    return arr


class FeatureKernel:
    """A PSD kernel matrix ``K_ij = k(x_i, x_j)`` described by features.

    Parameters
    ----------
    X : array_like of shape (n, d)
        Features, finite (validated by ``dank_ref.features.check_features``).
    kernel : {"rbf", "gaussian", "linear", "poly"}, default="rbf"
    sigma, gamma : float, optional
        Gaussian width: ``sigma`` or ``gamma = 1 / (2 sigma^2)``, at most one (default
        ``gamma = 1 / d``); ``gamma`` also scales the polynomial kernel.
    degree : int, default=3
    coef0 : float, default=1.0
        Polynomial kernel ``(gamma <x, z> + coef0)^degree``, ``coef0 >= 0``.
    block_rows : int, optional
        Rows per block in ``row_blocks`` and ``product``; default: as many as fit in
        ``BLOCK_BYTES`` for the number of columns asked.

    Examples
    --------
    >>> import numpy as np
    >>> fk = FeatureKernel(np.array([[0.0], [1.0], [3.0]]), sigma=1.0, block_rows=2)
    >>> np.allclose(fk.block([0, 2], [1]), np.exp(-np.array([[1.0], [4.0]]) / 2))
    True
    >>> float(fk.scale())
    1.0
    """

    def __init__(self, X, kernel: str = "rbf", *, sigma: float | None = None,
                 gamma: float | None = None, degree: int = 3, coef0: float = 1.0,
                 block_rows: int | None = None) -> None:
        self.X = check_features(X)
        if not isinstance(kernel, str) or kernel.lower() not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
        kernel = "rbf" if kernel.lower() == "gaussian" else kernel.lower()
        if sigma is not None and gamma is not None:
            raise ValueError("give sigma or gamma, not both")
        if sigma is not None:
            if kernel != "rbf":
                raise ValueError(f"sigma applies to the Gaussian kernel only, not {kernel!r}")
            gamma = 1.0 / (2.0 * _positive("sigma", sigma) ** 2)
            if not (math.isfinite(gamma) and gamma > 0.0):
                raise ValueError(f"sigma = {sigma!r} gives gamma = 1/(2 sigma^2) = {gamma!r}")
        elif gamma is not None:
            gamma = _positive("gamma", gamma)
        else:
            gamma = 1.0 / self.X.shape[1]
        if isinstance(degree, (bool, np.bool_)) or not isinstance(degree, numbers.Integral) \
                or int(degree) < 1:
            raise ValueError(f"degree must be an integer >= 1, got {degree!r}")
        if isinstance(coef0, (bool, np.bool_)) or not isinstance(coef0, numbers.Real) \
                or not math.isfinite(float(coef0)) or float(coef0) < 0.0:
            raise ValueError(f"coef0 must be a finite number >= 0 (coef0 < 0 is not PSD), "
                             f"got {coef0!r}")
        if block_rows is not None and (isinstance(block_rows, (bool, np.bool_))
                                       or not isinstance(block_rows, numbers.Integral)
                                       or int(block_rows) < 1):
            raise ValueError(f"block_rows must be an integer >= 1, got {block_rows!r}")
        self.kernel = kernel
        self.gamma = float(gamma)
        self.degree = int(degree)
        self.coef0 = float(coef0)
        self.block_rows = None if block_rows is None else int(block_rows)
        self._sq = np.einsum("ij,ij->i", self.X, self.X)

    # -----------------------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of points."""
        return self.X.shape[0]

    @property
    def d(self) -> int:
        """Number of features."""
        return self.X.shape[1]

    def params(self) -> dict:
        """The kernel's parameters (``kernel``, ``gamma``, ``degree``, ``coef0``)."""
        return {"kernel": self.kernel, "gamma": self.gamma, "degree": self.degree,
                "coef0": self.coef0}

    def subset(self, idx) -> FeatureKernel:
        """The kernel of the points ``idx`` (same function and ``block_rows``)."""
        out = object.__new__(FeatureKernel)
        out.__dict__.update(self.__dict__)
        idx = np.asarray(idx, dtype=np.intp)
        out.X = self.X[idx]
        out._sq = self._sq[idx]
        return out

    def diag(self) -> np.ndarray:
        """``K_ii`` for every point, ``O(n d)``."""
        if self.kernel == "rbf":
            return np.ones(self.n)
        if self.kernel == "linear":
            return self._sq.copy()
        return (self.gamma * self._sq + self.coef0) ** self.degree

    def scale(self) -> float:
        """``max |K_ij| = max_i K_ii`` (PSD), ``O(n d)``."""
        return float(np.max(self.diag()))

    def rows_per_block(self, ncols: int) -> int:
        """``block_rows`` if given, else the rows of ``ncols`` columns that fit in
        ``BLOCK_BYTES``."""
        if self.block_rows is not None:
            return self.block_rows
        return max(1, BLOCK_BYTES // (8 * max(int(ncols), 1)))

    # -----------------------------------------------------------------------------------------
    def _eval(self, ri: np.ndarray | slice, ci: np.ndarray | slice) -> np.ndarray:
        A, B = self.X[ri], self.X[ci]
        G = A @ B.T
        if self.kernel == "linear":
            return G
        if self.kernel == "poly":
            G *= self.gamma
            G += self.coef0
            return G ** self.degree if self.degree > 1 else G
        G *= -2.0
        G += self._sq[ri][:, None]
        G += self._sq[ci][None, :]
        np.maximum(G, 0.0, out=G)
        G *= -self.gamma
        np.exp(G, out=G)
        return G

    def block(self, rows, cols) -> np.ndarray:
        """``K[rows][:, cols]`` as one array (``len(rows) x len(cols)``; the caller bounds it)."""
        ri = np.asarray(rows, dtype=np.intp)
        ci = np.asarray(cols, dtype=np.intp)
        return self._eval(ri, ci)

    def row_blocks(self, cols, rows=None,
                   progress=None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Yield ``(r, K[r][:, cols])`` for consecutive chunks ``r`` of ``rows`` (default: all).

        One block of :meth:`rows_per_block` ``(len(cols))`` rows is alive at a time.
        ``progress``, if given, is called as ``progress(done, total)`` (blocks) before the
        first block and after each block has been used.
        """
        ci = np.asarray(cols, dtype=np.intp)
        ri = np.arange(self.n) if rows is None else np.asarray(rows, dtype=np.intp)
        step = self.rows_per_block(ci.size)
        total = -(-ri.size // step)
        if progress is not None:
            progress(0, total)
        for i, lo in enumerate(range(0, ri.size, step)):
            r = ri[lo:lo + step]
            yield r, self._eval(r, ci)
            if progress is not None:
                progress(i + 1, total)

    def product(self, cols, V: np.ndarray, rows=None, progress=None) -> np.ndarray:
        """``K[rows][:, cols] @ V`` blockwise (``V``: ``len(cols)`` or ``len(cols) x k``).

        Time ``O(len(rows) len(cols) (d + k))``, memory one block plus the result;
        ``progress`` as in :meth:`row_blocks`.
        """
        V = np.asarray(V, dtype=np.float64)
        nr = self.n if rows is None else len(rows)
        out = np.empty((nr,) + V.shape[1:])
        pos = 0
        for r, Kb in self.row_blocks(cols, rows, progress):
            out[pos:pos + r.size] = Kb @ V
            pos += r.size
        return out

    def __repr__(self) -> str:
        return (f"FeatureKernel(n={self.n}, d={self.d}, kernel={self.kernel!r}, "
                f"gamma={self.gamma:.6g}, degree={self.degree}, coef0={self.coef0:.6g}, "
                f"block_rows={self.block_rows})")
