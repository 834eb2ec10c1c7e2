"""Initial kernels ``K`` for DANK, computed with scikit-learn's pairwise kernels.

The paper's Gaussian kernel is ``k(x, x') = exp(-||x - x'||^2 / (2 sigma^2))``;
scikit-learn's ``rbf`` kernel is ``exp(-gamma ||x - x'||^2)``, so
``gamma = 1 / (2 sigma^2)``.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics.pairwise import pairwise_kernels

__all__ = ["KERNELS", "compute_kernel", "sigma_to_gamma", "kernel_params"]

KERNELS = ("rbf", "gaussian", "linear", "poly", "precomputed")


def sigma_to_gamma(sigma: float) -> float:
    """Convert the paper's Gaussian width ``sigma`` to scikit-learn's ``gamma``."""
    if not np.isfinite(sigma) or sigma <= 0:
        raise ValueError(f"sigma must be a finite number > 0, got {sigma!r}")
    return 1.0 / (2.0 * float(sigma) ** 2)


def kernel_params(
    kernel: str,
    *,
    sigma: float | None = None,
    gamma: float | None = None,
    degree: int = 3,
    coef0: float = 1.0,
    n_features: int | None = None,
) -> dict:
    """Resolve the keyword arguments passed to ``pairwise_kernels``.

    For the Gaussian kernel exactly one of ``sigma`` and ``gamma`` may be set;
    with neither, ``gamma = 1 / n_features`` (scikit-learn's ``"scale"``-free default).
    """
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    if kernel in ("rbf", "gaussian"):
        if sigma is not None and gamma is not None:
            raise ValueError("give either sigma or gamma for the Gaussian kernel, not both")
        if sigma is not None:
            g = sigma_to_gamma(sigma)
        elif gamma is not None:
            g = float(gamma)
            if not np.isfinite(g) or g <= 0:
                raise ValueError(f"gamma must be a finite number > 0, got {gamma!r}")
        else:
            g = 1.0 / max(1, n_features or 1)
        return {"metric": "rbf", "gamma": g}
    if kernel == "linear":
        return {"metric": "linear"}
    if kernel == "poly":
        g = 1.0 / max(1, n_features or 1) if gamma is None else float(gamma)
        if int(degree) != degree or degree < 1:
            raise ValueError(f"degree must be a positive integer, got {degree!r}")
        return {"metric": "poly", "gamma": g, "degree": int(degree), "coef0": float(coef0)}
    return {"metric": "precomputed"}


def compute_kernel(
    X,
    Z=None,
    kernel: str = "rbf",
    *,
    sigma: float | None = None,
    gamma: float | None = None,
    degree: int = 3,
    coef0: float = 1.0,
) -> np.ndarray:
    """Kernel matrix ``[k(x_i, z_j)]`` (``Z = X`` when omitted).

    Parameters
    ----------
    X : array_like of shape (n, d)
    Z : array_like of shape (m, d), optional
    kernel : {"rbf", "gaussian", "linear", "poly", "precomputed"}
    sigma, gamma : float, optional
        Gaussian width (paper) or scikit-learn's ``gamma = 1/(2 sigma^2)``.
    degree, coef0 : polynomial kernel ``(gamma <x, z> + coef0)^degree``.

    Returns
    -------
    ndarray of shape (n, m)

    Examples
    --------
    >>> import numpy as np
    >>> K = compute_kernel(np.zeros((2, 1)), sigma=1.0)
    >>> K.tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    from ._validation import check_finite_array

    X = check_finite_array(X, "X", ndim=2)
    if Z is not None:
        Z = check_finite_array(Z, "Z", ndim=2)
        if kernel != "precomputed" and Z.shape[1] != X.shape[1]:
            raise ValueError(f"X has {X.shape[1]} features but Z has {Z.shape[1]}")
    params = kernel_params(
        kernel, sigma=sigma, gamma=gamma, degree=degree, coef0=coef0, n_features=X.shape[1]
    )
    if params["metric"] == "precomputed":
        return X if Z is None else Z
    metric = params.pop("metric")
    return pairwise_kernels(X, Z, metric=metric, **params)
