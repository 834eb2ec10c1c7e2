"""Kernels given by features: ``K`` evaluated block by block, never as an ``n x n`` array.

:class:`FeatureKernel` describes ``K_ij = k(x_i, x_j)`` for a PSD kernel function (Gaussian,
linear, or polynomial with ``coef0 >= 0``) and the features ``X``. The large-scale routes ask it
for the blocks they need: ``K[W][:, W]`` of a working set, ``K[I][:, S] @ V`` for the gradient
outside it, one cluster's block. Memory is bounded by ``block_bytes`` per temporary.

PSD-ness holds by construction, so no ``O(n^3)`` test is needed (docs/validity.md): the Gaussian
kernel is PSD for every ``gamma > 0``; ``<x, z>`` is a Gram matrix; ``(gamma <x, z> + c)^p`` with
``c >= 0`` and integer ``p >= 1`` is a sum of products of PSD kernels (Schur product theorem).
"""

from __future__ import annotations

import numbers

import numpy as np

from ._validation import check_finite_array
from .kernels import evaluate_kernel, kernel_params

__all__ = ["FeatureKernel"]


class FeatureKernel:
    """A PSD kernel matrix described by features, evaluated in blocks.

    Parameters
    ----------
    X : array_like of shape (n, d)
        Features (finite).
    kernel : {"rbf", "gaussian", "linear", "poly"}, default="rbf"
        Kernel function; ``"rbf"`` and ``"gaussian"`` are the paper's Gaussian kernel.
    sigma, gamma : float, optional
        Gaussian width ``k = exp(-||x - x'||^2 / (2 sigma^2))`` or ``gamma = 1/(2 sigma^2)``
        (at most one; default ``gamma = 1 / d``); ``gamma`` also scales the polynomial kernel.
    degree : int, default=3
    coef0 : float, default=1.0
        Polynomial kernel ``(gamma <x, z> + coef0)^degree``; ``coef0 < 0`` is refused (not PSD).
    block_bytes : int, default=64 MiB
        Largest temporary a blockwise product allocates.

    Examples
    --------
    >>> import numpy as np
    >>> Kf = FeatureKernel(np.array([[0.0], [1.0], [3.0]]), sigma=1.0)
    >>> Kf.n, Kf.kappa
    (3, 1.0)
    >>> np.allclose(Kf.block([0, 2], [1]), np.exp(-np.array([[1.0], [4.0]]) / 2))
    True
    """

    def __init__(
        self,
        X,
        kernel: str = "rbf",
        *,
        sigma: float | None = None,
        gamma: float | None = None,
        degree: int = 3,
        coef0: float = 1.0,
        block_bytes: int = 64 << 20,
    ):
        # booleans are features like any other (0/1), as in compute_kernel
        X = check_finite_array(X, "X", ndim=2, allow_bool=True)
        if X.shape[0] == 0:
            raise ValueError(f"X has no rows (shape {X.shape})")
        if X.shape[1] == 0:
            raise ValueError(f"X has no columns (shape {X.shape}): a kernel needs at least "
                             "one feature")
        self._setup(np.ascontiguousarray(X), dict(kernel=kernel, sigma=sigma, gamma=gamma,
                                                  degree=degree, coef0=coef0), block_bytes)

    def _setup(self, X: np.ndarray, spec: dict, block_bytes) -> None:
        """Check the kernel function and ``block_bytes`` (not ``X``) and set the attributes."""
        if spec["kernel"] == "precomputed":
            raise ValueError("FeatureKernel needs a kernel function, not 'precomputed'")
        self.X = X
        self.kernel = spec["kernel"]
        self.spec = spec
        self.params = kernel_params(**spec, n_features=X.shape[1])
        if isinstance(block_bytes, bool) or not isinstance(block_bytes, numbers.Integral) or (
            block_bytes < 1 << 16
        ):
            raise ValueError(f"block_bytes must be an integer >= 65536, got {block_bytes!r}")
        self.block_bytes = int(block_bytes)
        self.n = X.shape[0]
        self._diag: np.ndarray | None = None

    # ------------------------------------------------------------------ entries
    def block(self, rows, cols) -> np.ndarray:
        """Return the block ``K[rows][:, cols]`` as a dense array.

        Costs ``len(rows) * len(cols)`` entries of memory and O(len(rows) len(cols) d) time.

        Parameters
        ----------
        rows, cols : array_like of int
            Indices of training points.

        Returns
        -------
        ndarray of shape (len(rows), len(cols))
            The kernel's entries.
        """
        A = self.X[np.asarray(rows)]
        B = self.X[np.asarray(cols)]
        return self._eval(A, B)

    def cross(self, Z, cols=None) -> np.ndarray:
        """Return the kernel between new points and training points, ``[k(z_i, x_j)]``.

        Parameters
        ----------
        Z : array_like of shape (m, d)
            New points, finite, with the training data's number of features.
        cols : array_like of int, optional
            Only these training points (default: all).

        Returns
        -------
        ndarray of shape (m, len(cols))
            The cross kernel, ``m * len(cols)`` entries of memory.

        Raises
        ------
        TypeError, ValueError
            ``Z`` not a finite 2-D real array, or with another number of features.
        """
        Z = check_finite_array(Z, "Z", ndim=2, allow_bool=True)
        if Z.shape[1] != self.X.shape[1]:
            raise ValueError(f"Z has {Z.shape[1]} features but X has {self.X.shape[1]}")
        B = self.X if cols is None else self.X[np.asarray(cols)]
        return self._eval(Z, B)

    def _eval(self, A: np.ndarray, B: np.ndarray) -> np.ndarray:
        return evaluate_kernel(A, B, self.params, self.kernel)

    def diag(self) -> np.ndarray:
        """Return the diagonal ``K_ii`` for every point (O(n d) time, cached).

        Returns
        -------
        ndarray of shape (n,)
            The diagonal of the kernel.
        """
        if self._diag is None:
            X = self.X
            metric = self.params["metric"]
            if metric == "rbf":
                self._diag = np.ones(self.n)
            elif metric == "linear":
                self._diag = np.einsum("ij,ij->i", X, X)
            else:
                g, c, p = self.params["gamma"], self.params["coef0"], self.params["degree"]
                self._diag = (g * np.einsum("ij,ij->i", X, X) + c) ** p
        return self._diag

    @property
    def kappa(self) -> float:
        """``max |K_ij|`` = the largest diagonal entry (``|K_ij| <= sqrt(K_ii K_jj)`` for PSD K)."""
        return float(np.max(self.diag()))

    def rows_per_block(self, ncols: int) -> int:
        """Return how many rows of a ``rows x ncols`` float64 temporary fit in ``block_bytes``.

        Parameters
        ----------
        ncols : int
            The number of columns of the temporary.

        Returns
        -------
        int
            At least 1.
        """
        return max(1, self.block_bytes // (8 * max(ncols, 1)))

    def product(self, rows, cols, V: np.ndarray) -> np.ndarray:
        """Return ``K[rows][:, cols] @ V``, computed in row blocks of at most ``block_bytes``.

        ``O(len(rows) * len(cols) * (d + b))`` time for ``V`` of shape ``(len(cols), b)``;
        memory: the result and one block.

        Parameters
        ----------
        rows, cols : array_like of int
            Indices of training points.
        V : array_like of shape (len(cols),) or (len(cols), b)
            The vector or matrix to multiply.

        Returns
        -------
        ndarray of shape (len(rows),) or (len(rows), b)
            The product.
        """
        rows = np.asarray(rows)
        cols = np.asarray(cols)
        V = np.asarray(V, dtype=np.float64)
        out = np.empty((rows.size,) + V.shape[1:])
        if rows.size == 0:
            return out
        B = self.X[cols]
        step = self.rows_per_block(cols.size)
        for lo in range(0, rows.size, step):
            sl = slice(lo, lo + step)
            out[sl] = self._eval(self.X[rows[sl]], B) @ V
        return out

    def dense(self, max_bytes: int = 8 << 30) -> np.ndarray:
        """Return the whole ``n x n`` kernel matrix (``8 n^2`` bytes, O(n^2 d) time).

        Parameters
        ----------
        max_bytes : int, default 8 GiB
            The largest matrix allowed.

        Returns
        -------
        ndarray of shape (n, n)
            The kernel matrix.

        Raises
        ------
        MemoryError
            The matrix would need more than ``max_bytes``.
        """
        need = 8 * self.n * self.n
        if need > max_bytes:
            raise MemoryError(
                f"the {self.n} x {self.n} kernel needs {need / 2**30:.1f} GiB > "
                f"max_bytes = {max_bytes / 2**30:.1f} GiB; use the blockwise routes"
            )
        return self._eval(self.X, self.X)

    def subset(self, idx) -> FeatureKernel:
        """Return the kernel of the points ``idx`` (same function and parameters).

        The rows were validated when this kernel was built: they are not checked again
        (``O(len(idx) d)`` time and memory for the copy of the rows).

        Parameters
        ----------
        idx : array_like of int
            Indices of training points.

        Returns
        -------
        FeatureKernel
            The kernel on ``X[idx]``.
        """
        return self.from_validated(self.X[np.asarray(idx)], self)

    @classmethod
    def from_validated(cls, X: np.ndarray, like: FeatureKernel | None = None,
                       **spec) -> FeatureKernel:
        """A kernel on features ``X`` that a public entry point has already validated.

        Internal constructor (no second pass over ``X``): ``X`` must be a finite, non-empty,
        C-contiguous float64 array of shape ``(n, d)`` (e.g. the output of scikit-learn's
        ``validate_data(..., dtype=np.float64, order="C")``). The kernel function comes from
        ``like`` (same function, parameters and ``block_bytes``) or from ``spec`` (the keyword
        arguments of the constructor, whose parameters are checked as usual).
        """
        out = cls.__new__(cls)
        if like is not None:
            out._setup(X, like.spec, like.block_bytes)
            return out
        block_bytes = spec.pop("block_bytes", 64 << 20)
        full = dict(kernel="rbf", sigma=None, gamma=None, degree=3, coef0=1.0)
        unknown = set(spec) - set(full)
        if unknown:
            raise TypeError(f"unknown kernel arguments {sorted(unknown)}")
        out._setup(X, {**full, **spec}, block_bytes)
        return out

    def svc_params(self) -> dict:
        """Return the keyword arguments of :class:`sklearn.svm.SVC` for the same kernel.

        Returns
        -------
        dict
            ``kernel`` and its parameters (``gamma``, ``degree``, ``coef0``).
        """
        p = dict(self.params)
        metric = p.pop("metric")
        return {"kernel": metric, **p}

    def __repr__(self) -> str:
        return f"FeatureKernel(n={self.n}, d={self.X.shape[1]}, {self.params})"
