"""Input validation shared by the fast solvers and estimators.

Every public entry point calls these before any arithmetic, so that bad input
fails with a ``ValueError``/``TypeError`` that names the problem instead of a
NaN deep inside a solver.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = [
    "check_solver_options",
    "check_positive",
    "check_nonnegative",
    "check_kernel_matrix",
    "check_binary_labels",
    "check_finite_array",
]


def check_positive(value: float, name: str) -> float:
    """Return ``value`` as float, raising if it is not a finite number > 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return value


def check_nonnegative(value: float, name: str) -> float:
    """Return ``value`` as float, raising if it is not a finite number >= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return value


def check_finite_array(a, name: str, ndim: int | None = None) -> np.ndarray:
    """Convert to a float64 array and reject NaN/inf and wrong dimensionality."""
    try:
        arr = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric array: {exc}") from exc
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinity")
    return arr


def check_kernel_matrix(K, *, psd_tol: float = 1e-8, check_psd: bool = True) -> np.ndarray:
    """Validate a precomputed kernel matrix: square, finite, symmetric, PSD.

    Parameters
    ----------
    K : array_like of shape (n, n)
    psd_tol : float
        Relative tolerance: the smallest eigenvalue may be as low as
        ``-psd_tol * max(1, max|K|) * n`` (round-off of a PSD kernel).
    check_psd : bool
        Skip the O(n^3) eigenvalue test when False (caller vouches for PSD-ness,
        e.g. a kernel computed here from data).
    """
    K = check_finite_array(K, "K", ndim=2)
    n = K.shape[0]
    if K.shape != (n, n):
        raise ValueError(f"K must be a square matrix, got shape {K.shape}")
    if n == 0:
        raise ValueError("K is empty")
    scale = max(1.0, float(K.max()), -float(K.min()))
    if not np.array_equal(K, K.T):  # exact symmetry (computed kernels) costs one pass
        asym = float(np.max(np.abs(K - K.T)))
        if asym > 1e-10 * scale:
            raise ValueError(f"K must be symmetric (max |K - K'| = {asym:.3g})")
        K = 0.5 * (K + K.T)
    if check_psd and n > 1:
        from scipy.linalg import eigh

        lmin = eigh(K, eigvals_only=True, subset_by_index=[0, 0], driver="evr")[0]
        if lmin < -psd_tol * scale * n:
            raise ValueError(
                f"K is not positive semi-definite: smallest eigenvalue {lmin:.3g} "
                "(DANK needs a PSD kernel so that F o K stays PSD, Schur product theorem)"
            )
    return K


def check_binary_labels(y, n: int | None = None) -> np.ndarray:
    """Validate labels for P1: a 1-D array of -1/+1 with both classes present."""
    y = check_finite_array(y, "y", ndim=1)
    if n is not None and y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but K has {n} rows")
    vals = np.unique(y)
    if not np.all(np.isin(vals, (-1.0, 1.0))):
        raise ValueError(f"y must contain only -1 and +1, got values {vals[:5]}")
    if vals.size < 2:
        raise ValueError("y contains only one class; DANK-SVM needs both -1 and +1")
    return y


def check_solver_options(tol, max_iter, eig_route: str) -> tuple[float, int | None]:
    """Validate the options every ``solve_*`` entry point shares; returns ``(tol, max_iter)``."""
    if max_iter is not None:
        if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral):
            raise TypeError(f"max_iter must be an integer, got {type(max_iter).__name__}")
        if max_iter < 1:
            raise ValueError(f"max_iter must be >= 1, got {max_iter!r}")
        max_iter = int(max_iter)
    tol = check_positive(tol, "tol")
    if eig_route not in ("auto", "dense", "lanczos"):
        raise ValueError(f"eig_route must be 'auto', 'dense' or 'lanczos', got {eig_route!r}")
    return tol, max_iter
