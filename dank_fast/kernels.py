"""Initial kernels ``K`` for DANK, computed with scikit-learn's pairwise kernels.

The paper's Gaussian kernel is ``k(x, x') = exp(-||x - x'||^2 / (2 sigma^2))``;
scikit-learn's ``rbf`` kernel is ``exp(-gamma ||x - x'||^2)``, so
``gamma = 1 / (2 sigma^2)``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.metrics.pairwise import pairwise_kernels

from ._kernel_proof import attach, rounding_bound, symmetrise
from ._validation import check_finite_array, check_positive, psd_tolerance

__all__ = ["KERNELS", "compute_kernel", "sigma_to_gamma", "kernel_params"]

KERNELS = ("rbf", "gaussian", "linear", "poly", "precomputed")
#: largest polynomial degree numpy raises an array to (an int64 exponent)
_MAX_DEGREE = int(np.iinfo(np.int64).max)


def sigma_to_gamma(sigma: float) -> float:
    """Convert the paper's Gaussian width ``sigma`` to scikit-learn's ``gamma = 1/(2 sigma^2)``."""
    sigma = check_positive(sigma, "sigma")
    denom = 2.0 * sigma * sigma  # never raises: under/overflows to 0 / inf
    g = 1.0 / denom if denom > 0.0 else math.inf
    if not (math.isfinite(g) and g > 0.0):
        raise ValueError(f"sigma = {sigma!r} gives gamma = 1/(2 sigma^2) = {g!r}, not a finite "
                         "number > 0")
    return g


def _check_degree(degree) -> int:
    """The polynomial degree: a positive integer (an integral float such as 2.0 is accepted)."""
    if isinstance(degree, bool | np.bool_) or not isinstance(degree, numbers.Real):
        raise TypeError(f"degree must be a positive integer, got {type(degree).__name__}")
    # an Integral is compared as it is: float(10**400) would raise OverflowError
    integral = isinstance(degree, numbers.Integral) or (
        math.isfinite(float(degree)) and int(degree) == degree)
    if not (integral and degree >= 1):
        raise ValueError(
            f"degree must be a positive integer, got {degree!r} (a non-integer power of "
            "<x, z> is not a positive semi-definite kernel in general)"
        )
    if degree > _MAX_DEGREE:  # numpy raises OverflowError for such an exponent
        raise ValueError(
            f"degree = {degree!r} is too large: at most {_MAX_DEGREE} (the largest int64; "
            "any kernel value other than 0 and 1 overflows or underflows long before)"
        )
    return int(degree)


def kernel_params(
    kernel: str,
    *,
    sigma: float | None = None,
    gamma: float | None = None,
    degree: int = 3,
    coef0: float = 1.0,
    n_features: int | None = None,
) -> dict:
    """Resolve and validate the keyword arguments passed to ``pairwise_kernels``.

    For the Gaussian kernel exactly one of ``sigma`` and ``gamma`` may be set; with neither,
    ``gamma = 1 / n_features``. The polynomial kernel ``(gamma <x, z> + coef0)^degree`` is
    positive semi-definite for every data set only when ``gamma > 0``, ``coef0 >= 0`` and the
    degree is a positive integer (then it is a sum of non-negative multiples of powers of the
    linear kernel, Schur product theorem); otherwise it is rejected: DANK's saddle problem is
    convex-concave, and its certificate meaningful, only for a PSD ``K`` (docs/validity.md).

    Raises
    ------
    ValueError
        Unknown kernel, both ``sigma`` and ``gamma``, a non-positive width, or a polynomial
        kernel that is not PSD (``coef0 < 0``, non-integer or non-positive degree).
    TypeError
        A parameter that is not a real number (or is a bool).
    """
    if not isinstance(kernel, str) or kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    if kernel == "poly" and sigma is not None:
        raise ValueError(
            "sigma is the width of the Gaussian kernel; the polynomial kernel takes gamma"
        )
    if kernel in ("rbf", "gaussian", "poly"):
        if sigma is not None and gamma is not None:
            raise ValueError("give either sigma or gamma for the Gaussian kernel, not both")
        if sigma is not None:
            g = sigma_to_gamma(sigma)
        elif gamma is not None:
            g = check_positive(gamma, "gamma")
        else:
            g = 1.0 / max(1, n_features or 1)
    if kernel in ("rbf", "gaussian"):
        return {"metric": "rbf", "gamma": g}
    if kernel == "linear":
        return {"metric": "linear"}
    if kernel == "poly":
        deg = _check_degree(degree)
        if isinstance(coef0, bool | np.bool_) or not isinstance(coef0, numbers.Real):
            raise TypeError(f"coef0 must be a real number, got {type(coef0).__name__}")
        c0 = float(coef0)
        if not math.isfinite(c0):
            raise ValueError(f"coef0 must be a finite number >= 0, got {coef0!r}")
        if c0 < 0.0:
            raise ValueError(
                f"coef0 = {coef0!r} < 0: the polynomial kernel (gamma <x, z> + coef0)^degree "
                "is not positive semi-definite when coef0 < 0 (the points 0 and x with "
                "gamma |x|^2 = -coef0 have the Gram matrix [[c, c], [c, 0]], c = coef0^degree, "
                "whose determinant -c^2 is negative), and DANK needs a PSD kernel for its "
                "saddle problem to be convex-concave and its certificate to mean anything; "
                "use coef0 >= 0"
            )
        return {"metric": "poly", "gamma": g, "degree": deg, "coef0": c0}
    return {"metric": "precomputed"}


def _nonempty(A: np.ndarray, name: str) -> np.ndarray:
    """``A`` unless it has no rows or no columns (named ValueError, not scikit-learn's)."""
    if A.shape[0] == 0 or A.shape[1] == 0:
        raise ValueError(f"{name} must have at least one row and one column, got shape "
                         f"{A.shape}")
    return A


def _describe(params: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items())


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
    """Compute the kernel matrix ``[k(x_i, z_j)]`` (``Z = X`` when omitted).

    Uses scikit-learn's pairwise kernels: O(n m d) time and an n x m array (for a kernel too
    large to hold, use :class:`FeatureKernel`, which works in blocks).

    Parameters
    ----------
    X : array_like of shape (n, d)
        Finite real features (booleans are accepted as 0/1).
    Z : array_like of shape (m, d), optional
        The second set of points (default ``X``).
    kernel : {"rbf", "gaussian", "linear", "poly", "precomputed"}, default "rbf"
        The kernel function; ``"rbf"`` and ``"gaussian"`` are the paper's Gaussian kernel.
    sigma, gamma : float, optional
        Gaussian width (paper) or scikit-learn's ``gamma = 1/(2 sigma^2)``; for ``"poly"``,
        the coefficient ``gamma > 0`` of ``<x, z>`` (``sigma`` is refused there).
    degree : int, default 3
        Polynomial kernel ``(gamma <x, z> + coef0)^degree``: an integer ``>= 1`` (else the
        kernel is not PSD and a ``ValueError`` says so).
    coef0 : float, default 1.0
        Polynomial kernel: ``coef0 >= 0`` (else not PSD).

    Returns
    -------
    ndarray of shape (n, m)
        The kernel matrix. When ``Z`` is omitted: ``n x n``, exactly symmetric and read-only
        (copy it to change it). The solvers then accept it without their ``O(n^3)`` PSD test
        where the rounding of its arithmetic provably keeps it PSD within the tolerance of
        docs/validity.md (rule 6; :mod:`dank_fast._kernel_proof`); a copy is tested as usual.

    Raises
    ------
    TypeError
        ``X`` or ``Z`` not a real numeric array.
    ValueError
        Bad parameters (:func:`kernel_params`), non-finite or empty ``X``/``Z``, or a kernel whose
        values overflow although ``X`` and ``Z`` are finite (the message names the kernel and
        its parameters: e.g. a high ``degree`` on large features).

    Examples
    --------
    >>> import numpy as np
    >>> K = compute_kernel(np.zeros((2, 1)), sigma=1.0)
    >>> K.tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    X = _nonempty(check_finite_array(X, "X", ndim=2, allow_bool=True), "X")
    if Z is not None:
        Z = _nonempty(check_finite_array(Z, "Z", ndim=2, allow_bool=True), "Z")
        if kernel != "precomputed" and Z.shape[1] != X.shape[1]:
            raise ValueError(f"X has {X.shape[1]} features but Z has {Z.shape[1]}")
    params = kernel_params(
        kernel, sigma=sigma, gamma=gamma, degree=degree, coef0=coef0, n_features=X.shape[1]
    )
    if params["metric"] == "precomputed":
        return X if Z is None else Z
    K = evaluate_kernel(X, Z, params, kernel)
    if Z is None and K.dtype == np.float64:
        # PSD by construction up to rounding: the proof, once, instead of a test per solve
        K = symmetrise(K)
        K.flags.writeable = False  # an in-place change would void the proof
        if rounding_bound(params, np.asarray(X, dtype=np.float64)) <= psd_tolerance(K.dtype):
            attach(K)
    return K


def _gaussian(X: np.ndarray, Z: np.ndarray | None, gamma: float) -> np.ndarray:
    """``exp(-gamma ||x - z||^2)`` for float64 features, by scikit-learn's own arithmetic
    (``rbf_kernel`` through ``euclidean_distances``: ``-2 X Z' + |x|^2 + |z|^2``, clipped at 0,
    a zero diagonal for ``Z = X``), in place in one ``n x m`` array, without its input checks:
    they cost more than the kernel at the UCI sizes (108 x 13: 0.07 instead of 0.54 ms per
    kernel, the same values; ``tests/test_kernels.py``).
    """
    XX = np.einsum("ij,ij->i", X, X)
    ZZ = XX if Z is None else np.einsum("ij,ij->i", Z, Z)
    D = X @ (X if Z is None else Z).T
    D *= -2.0
    D += XX[:, None]
    D += ZZ[None, :]
    np.maximum(D, 0.0, out=D)
    if Z is None:
        np.fill_diagonal(D, 0.0)
    D *= -gamma
    return np.exp(D, out=D)


def evaluate_kernel(X: np.ndarray, Z, params: dict, kernel: str) -> np.ndarray:
    """``k(X, Z)`` for the parameters of :func:`kernel_params`; ``ValueError`` on overflow.

    The one place where kernel values are computed from features (:func:`compute_kernel`,
    :class:`dank_fast.FeatureKernel` blocks): finite inputs whose kernel is not finite (a
    high ``degree`` on large features) are refused with the kernel and its parameters named.
    """
    p = dict(params)
    metric = p.pop("metric")
    with np.errstate(over="ignore", invalid="ignore"):
        if metric == "rbf":  # the one Gaussian kernel of dank_fast
            K = _gaussian(np.asarray(X, dtype=np.float64),
                          None if Z is None else np.asarray(Z, dtype=np.float64), p["gamma"])
        else:
            K = pairwise_kernels(X, Z, metric=metric, **p)
    if not np.all(np.isfinite(K)):
        raise ValueError(
            f"the {kernel!r} kernel overflowed ({_describe(p)}): some kernel values are "
            "not finite although X is finite (|values| beyond about 1.8e308); lower the degree "
            "or gamma, or scale the features"
        )
    return K
