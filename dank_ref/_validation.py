"""Input validation shared by the reference solvers (clear ``ValueError`` messages)."""

from __future__ import annotations

import numpy as np

__all__ = [
    "check_kernel",
    "check_binary_labels",
    "check_targets",
    "check_positive",
    "check_nonnegative",
    "check_partition",
    "check_alpha",
]

PSD_RTOL = 1e-8


def check_kernel(K, *, psd_rtol: float = PSD_RTOL) -> np.ndarray:
    """Return ``K`` as a float ndarray after checking it is a finite, symmetric PSD matrix.

    Non-PSD means ``lambda_min(K) < -psd_rtol * max|K_ij|``.  Symmetry is checked to a relative
    tolerance of ``1e-10 * max|K|`` and the matrix is then exactly symmetrised.
    """
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"K must be a square 2-D array, got shape {K.shape}")
    if K.shape[0] < 2:
        raise ValueError(f"K must be at least 2 x 2, got shape {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError("K contains NaN or inf")
    scale = float(np.max(np.abs(K)))
    if scale == 0.0:
        raise ValueError("K is identically zero")
    asym = float(np.max(np.abs(K - K.T)))
    if asym > 1e-10 * scale:
        raise ValueError(f"K is not symmetric (max |K - K'| = {asym:.3e})")
    K = 0.5 * (K + K.T)
    lmin = float(np.linalg.eigvalsh(K)[0])
    if lmin < -psd_rtol * scale:
        raise ValueError(
            f"K is not positive semidefinite: lambda_min = {lmin:.3e} < -{psd_rtol:g} * max|K|"
        )
    return K


def _vector(v, n: int, name: str) -> np.ndarray:
    v = np.asarray(v, dtype=float)
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {v.shape}")
    if v.shape[0] != n:
        raise ValueError(f"{name} has length {v.shape[0]} but K is {n} x {n}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} contains NaN or inf")
    return v


def check_binary_labels(y, n: int, *, require_both: bool = True) -> np.ndarray:
    """Labels must be a length-``n`` vector with entries in {-1, +1}."""
    y = _vector(y, n, "y")
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError("labels y must take values in {-1, +1}")
    if require_both and (np.all(y == 1.0) or np.all(y == -1.0)):
        raise ValueError(
            "labels y must contain both classes (the bias constraint y'a = 0 needs it)"
        )
    return y


def check_targets(y, n: int) -> np.ndarray:
    """Regression targets: finite length-``n`` vector."""
    return _vector(y, n, "y")


def check_positive(name: str, value) -> float:
    v = float(value)
    if not np.isfinite(v) or v <= 0.0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def check_nonnegative(name: str, value) -> float:
    v = float(value)
    if not np.isfinite(v) or v < 0.0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return v


def check_partition(labels, n: int) -> np.ndarray:
    """Cluster labels: length-``n`` vector of hashable (integer-like) values."""
    labels = np.asarray(labels)
    if labels.ndim != 1 or labels.shape[0] != n:
        raise ValueError(f"labels must be a 1-D array of length {n}, got shape {labels.shape}")
    if labels.dtype.kind == "f" and not np.all(np.isfinite(labels)):
        raise ValueError("labels contain NaN or inf")
    return labels


def check_alpha(alpha, n: int, name: str = "alpha") -> np.ndarray:
    return _vector(alpha, n, name)
