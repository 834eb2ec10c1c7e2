"""Kernel matrices: the validity rule of docs/validity.md, kernels computed from ``X``, and
the representable range of an instance.
"""

from __future__ import annotations

import math

import numpy as np

from .spec import F64_EPS, KERNELS

__all__ = ["validate_kernel", "kernel_from_X", "check_representable"]


def validate_kernel(K: np.ndarray, eps: float = F64_EPS, *, what: str = "K") -> np.ndarray:
    """Check ``K`` by the rule of docs/validity.md and return ``(K + K') / 2``.

    ``K`` is a finite float64 ``n x n`` array (``n >= 1``); ``eps`` the machine epsilon of the
    dtype it was stored in.  With ``s = max|K_ij|``: symmetric iff
    ``max|K - K'| <= max(1e-10, 10 eps) s``; PSD iff
    ``lambda_min((K + K')/2) >= -max(1e-8, eps) n s`` (dense ``eigvalsh``, O(n^3)).
    ``K = 0`` is valid.  Raises ``ValueError`` naming the violated rule.
    """
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"{what} must be square, got shape {K.shape}")
    n = K.shape[0]
    if n == 0:
        raise ValueError(f"{what} is empty (n = 0); an instance needs n >= 1 points")
    s = float(np.max(np.abs(K)))
    if s == 0.0:
        return K.copy()
    asym = float(np.max(np.abs(K - K.T)))
    eps_sym = max(1e-10, 10.0 * eps)
    if asym > eps_sym * s:
        raise ValueError(f"{what} is not symmetric: max|K - K'| = {asym:.3g} > "
                         f"{eps_sym:g} * max|K| = {eps_sym * s:.3g}")
    Ks = 0.5 * (K + K.T)
    lmin = float(np.linalg.eigvalsh(Ks)[0])
    eps_psd = max(1e-8, eps)
    if lmin < -eps_psd * n * s:
        raise ValueError(f"{what} is not positive semi-definite: lambda_min = {lmin:.3g} < "
                         f"-{eps_psd:g} * n * max|K| = {-eps_psd * n * s:.3g}")
    return Ks


def kernel_from_X(X, kernel, sigma=None, gamma=None, degree=None, coef0=None) -> np.ndarray:
    """Kernel matrix of the rows of ``X`` (formulas in the module docstring).

    Raises ``ValueError`` when a parameter or the result is not representable (e.g.
    ``sigma = 1e-170``: ``1 / (2 sigma^2)`` overflows) instead of returning inf/NaN.
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


def check_representable(C: float, eta: float, s: float, n: int) -> None:
    """Refuse instances outside the representable range of docs/validity.md (``s = max|K|``).

    ``1e-100 <= C s n <= 1e100`` and ``1e-100 <= eta / (C^2 s) <= 1e100`` (``s = 0`` is
    always representable).  Evaluated in logarithms, so it cannot overflow itself.
    """
    if s == 0.0:
        return
    lc, le, ls, ln = (math.log10(C), math.log10(eta), math.log10(s), math.log10(n))
    svm_scale = lc + ls + ln
    inv_scale = le - 2.0 * lc - ls
    what = f"C = {C:.6g}, eta = {eta:.6g}, max|K| = {s:.6g}, n = {n}"
    if not -100.0 <= svm_scale <= 100.0:
        raise ValueError(f"outside the representable range (docs/validity.md): "
                         f"C * max|K| * n = 1e{svm_scale:.1f} is not in [1e-100, 1e100] "
                         f"({what})")
    if not -100.0 <= inv_scale <= 100.0:
        raise ValueError(f"outside the representable range (docs/validity.md): "
                         f"eta / (C^2 max|K|) = 1e{inv_scale:.1f} is not in [1e-100, 1e100] "
                         f"({what})")
