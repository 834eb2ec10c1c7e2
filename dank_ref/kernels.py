r"""Kernel matrices from data: the oracle side's one kernel constructor (numpy / scipy only).

With rows ``x_i`` of ``X``:

* ``"gaussian"``: ``K_ij = exp(-gamma |x_i - x_j|^2)``, ``gamma = 1 / (2 sigma^2)`` unless
  ``gamma`` is given (then ``sigma`` is ignored); the squared distances come from
  ``scipy.spatial.distance.pdist(X, "sqeuclidean")``, so ``K_ii = 1`` exactly and no
  cancellation of ``|x_i|^2 + |x_j|^2 - 2 x_i'x_j`` occurs;
* ``"linear"``: ``K = X X'``;
* ``"polynomial"``: ``K = (gamma X X' + coef0) ** int(degree)``.

The result is symmetrised as ``(K + K') / 2``.  Cost: O(n^2 d) time, O(n^2) memory (the result
itself; the Gaussian route also holds the condensed distances, n (n - 1) / 2 entries).

These are the semantics, bit for bit, of the kernels of the interchange format
(``verification/formats``, :doc:`docs/FORMATS.md </FORMATS>`): the golden vectors depend on them.
"""

from __future__ import annotations

import math

import numpy as np

from .validation import check_positive

__all__ = ["KERNELS", "kernel_from_X", "gaussian_kernel"]

#: The kernel functions :func:`kernel_from_X` evaluates.
KERNELS = ("gaussian", "linear", "polynomial")


def kernel_from_X(X, kernel: str, sigma: float | None = None, gamma: float | None = None,
                  degree: int | None = None, coef0: float | None = None) -> np.ndarray:
    """Compute the kernel matrix of the rows of ``X`` (formulas in the module docstring).

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data, converted to float64.
    kernel : {"gaussian", "linear", "polynomial"}
        The kernel (:data:`KERNELS`).
    sigma, gamma : float, optional
        Gaussian: the width ``sigma`` or ``gamma = 1 / (2 sigma^2)`` (``gamma`` wins).
        Polynomial: ``gamma`` is the factor of ``X X'`` (required).
    degree : int, optional
        Polynomial only (required), applied as ``int(degree)``.
    coef0 : float, optional
        Polynomial only (required).

    Returns
    -------
    ndarray, shape (n, n)
        ``(K + K') / 2`` in float64, every entry finite.

    Raises
    ------
    ValueError
        ``kernel`` not in :data:`KERNELS`; ``sigma`` so small that ``1 / (2 sigma^2)``
        overflows; squared distances or the kernel overflow double precision.

    Notes
    -----
    The parameters are not validated here (the format's reader does that): a missing
    polynomial parameter raises whatever Python's arithmetic raises (``TypeError``).
    O(n^2 d) time, O(n^2) memory.

    Examples
    --------
    >>> import numpy as np
    >>> from dank_ref.kernels import kernel_from_X
    >>> kernel_from_X(np.array([[0.0], [1.0]]), "linear").tolist()
    [[0.0, 0.0], [0.0, 1.0]]
    """
    X = np.asarray(X, dtype=np.float64)
    with np.errstate(all="ignore"):
        if kernel == "gaussian":
            if gamma is None:
                gamma = float(np.float64(0.5) / np.float64(sigma) / np.float64(sigma))
                if not math.isfinite(gamma):
                    raise ValueError(f"sigma = {sigma!r} is too small: gamma = 1 / (2 sigma^2) "
                                     "overflows double precision")
            # scipy.spatial only when a Gaussian kernel is computed (start-up time of the CLI)
            from scipy.spatial.distance import pdist, squareform

            D = squareform(pdist(X, "sqeuclidean")) if X.shape[0] > 1 \
                else np.zeros((X.shape[0], X.shape[0]))
            if not np.all(np.isfinite(D)):
                raise ValueError("the squared distances between rows of X overflow double "
                                 "precision")
            K = np.exp(-gamma * D)
        elif kernel == "linear":
            K = X @ X.T
        elif kernel == "polynomial":
            K = (gamma * (X @ X.T) + coef0) ** int(degree)
        else:
            raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    if not np.all(np.isfinite(K)):
        params = {k: v for k, v in dict(sigma=sigma, gamma=gamma, degree=degree,
                                        coef0=coef0).items() if v is not None}
        raise ValueError(f"the {kernel} kernel of X with {params} overflows double precision "
                         "(X itself is finite)")
    return 0.5 * (K + K.T)


def gaussian_kernel(X, sigma: float) -> np.ndarray:
    """Gaussian kernel ``K_ij = exp(-|x_i - x_j|^2 / (2 sigma^2))`` of the rows of ``X``.

    Exactly ``kernel_from_X(X, "gaussian", sigma=sigma)`` (same bits).

    Parameters
    ----------
    X : array_like, shape (n, d)
        Data.
    sigma : float
        Width, finite and ``> 0``.

    Returns
    -------
    ndarray, shape (n, n)
        The kernel matrix, float64, symmetric.

    Raises
    ------
    TypeError
        ``sigma`` is not a real number.
    ValueError
        ``sigma <= 0`` or not finite, or the kernel is not representable
        (:func:`kernel_from_X`).
    """
    return kernel_from_X(X, "gaussian", sigma=check_positive(sigma, "sigma"))
