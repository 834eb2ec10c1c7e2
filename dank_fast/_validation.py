"""Input validation of ``dank_fast`` (``docs/validity.md``): scalars, arrays, labels, the
representable range and feasibility; kernel matrices in :mod:`dank_fast._kernel_validation`.

Every public entry point calls these before any arithmetic, so that bad input fails with a
``TypeError`` (wrong kind of object) or ``ValueError`` (right kind, wrong value) whose message
names the parameter and the problem, instead of a NaN deep inside a solver.

The rule (``docs/validity.md``) in brief:

* ``K``: rules 1-4 (real numeric, square, finite, symmetric, PSD), in
  :mod:`dank_fast._kernel_validation`; its scale ``s = max|K_ij|`` (:func:`kernel_scale`) here.
* The box ``C`` (:func:`check_box`): a real, finite number ``> 0``, or a vector of ``n``
  per-sample bounds ``C_i > 0`` (docs/MATH.md section 14); its scale is ``max C``.
* Scalars: ``C, eta`` real, finite, ``> 0``; ``tau, epsilon`` real, finite, ``>= 0`` (bool and
  str rejected, NumPy scalars accepted); iteration limits integers ``>= 1``.
* Representable range (:func:`check_representable`):
  ``1e-100 <= C s n <= 1e100`` and ``1e-100 <= eta / (C^2 s) <= 1e100`` (a vector ``C``: for
  both ``min C`` and ``max C``).
* Labels ``-1/+1`` (P1: both classes, P3: one class allowed), finite real targets (P2), cluster
  labels comparable for equality (no ``NaN``/``None``).
* Feasibility of a candidate (:func:`feasibility_violation`): violation
  ``<= 1e-9 max(C) sqrt(n)``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from fractions import Fraction

import numpy as np

__all__ = [
    "FEASIBILITY_RTOL",
    "REPRESENTABLE_RANGE",
    "box_max",
    "check_binary_labels",
    "check_box",
    "check_cluster_labels",
    "check_feasible",
    "check_finite_array",
    "check_integer",
    "check_labels_pm1",
    "check_nonnegative",
    "check_positive",
    "check_representable",
    "check_solver_options",
    "check_targets",
    "dtype_epsilon",
    "feasibility_violation",
    "kernel_scale",
    "psd_tolerance",
    "symmetry_tolerance",
]

#: ``(lo, hi)`` of both dimensionless scales of the representable range (docs/validity.md).
REPRESENTABLE_RANGE = (1e-100, 1e100)
#: A candidate is feasible when its violation is at most ``FEASIBILITY_RTOL * C * sqrt(n)``.
FEASIBILITY_RTOL = 1e-9

# the range ends as exact rationals of the doubles 1e-100 and 1e100 (what a user types)
_LO_EXACT = Fraction(REPRESENTABLE_RANGE[0])
_HI_EXACT = Fraction(REPRESENTABLE_RANGE[1])
_REAL_KINDS = "fiu"


# --------------------------------------------------------------------------- scalars
def _real_scalar(value, name: str) -> float:
    """``value`` as a float if it is a real number (not bool/str); TypeError otherwise."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(
            f"{name} must be a real number (int or float, not bool or str), "
            f"got {type(value).__name__}"
        )
    try:
        return float(value)
    except OverflowError:  # an int beyond the float range
        return math.inf if value > 0 else -math.inf


def check_positive(value, name: str) -> float:
    """Return ``value`` as a float, raising if it is not a finite real number ``> 0``.

    Python and NumPy integers and floats are accepted; ``bool`` and ``str`` are a
    ``TypeError``; NaN, infinities, zero and negative numbers a ``ValueError``.
    """
    v = _real_scalar(value, name)
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def check_nonnegative(value, name: str) -> float:
    """Return ``value`` as a float, raising if it is not a finite real number ``>= 0``."""
    v = _real_scalar(value, name)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
    return v


def check_box(C, n: int, name: str = "C"):
    """The box of P1, P2, P3: a scalar ``> 0``, or a vector of ``n`` per-sample bounds ``C_i``.

    A real number (Python or NumPy, not bool) is checked by :func:`check_positive` and
    returned as a ``float``. Anything else must be a real
    1-D array of length ``n`` with finite entries ``> 0`` (libsvm's weighted box ``0 <= a_i <=
    C_i``, docs/MATH.md section 14), returned as a float64 copy. A 0-d array is refused like
    any non-number (``TypeError``), as ``dank_ref`` refuses it.

    Raises
    ------
    TypeError
        Not a real number nor a real numeric array (bool, str, complex, ...).
    ValueError
        Naming ``name``: wrong shape or length, an entry NaN, infinite or ``<= 0``.
    """
    if isinstance(C, numbers.Real | bool | np.bool_ | str | bytes) or np.ndim(C) == 0:
        return check_positive(C, name)  # a number, or refused as one (0-d array, str, None)
    arr = _real_array(C, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a number > 0 or a 1-D array of {n} per-sample "
                         f"bounds, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has length {arr.shape[0]} but there are {n} samples")
    arr = np.array(arr, dtype=np.float64, copy=True)
    bad = np.flatnonzero(~(np.isfinite(arr) & (arr > 0)))
    if bad.size:
        i = int(bad[0])
        what = "NaN or inf" if not np.isfinite(arr[i]) else "<= 0"
        raise ValueError(f"{name} must have finite entries > 0 (per-sample bounds); "
                         f"{name}[{i}] = {float(arr[i])!r} is {what}")
    return arr


def box_max(C) -> float:
    """``max C``: the scale of a box (a scalar is its own maximum)."""
    return float(C) if np.ndim(C) == 0 else float(np.max(C))


def check_integer(value, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int, raising unless it is an integer (not bool) ``>= minimum``."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return int(value)


def check_solver_options(tol, max_iter, eig_route: str) -> tuple[float, int | None]:
    """Validate the options every ``solve_*`` entry point shares; returns ``(tol, max_iter)``."""
    if max_iter is not None:
        max_iter = check_integer(max_iter, "max_iter")
    tol = check_positive(tol, "tol")
    if eig_route not in ("auto", "dense", "lanczos"):
        raise ValueError(f"eig_route must be 'auto', 'dense' or 'lanczos', got {eig_route!r}")
    return tol, max_iter


# --------------------------------------------------------------------------- arrays
def dtype_epsilon(dtype) -> float:
    """Machine epsilon ``u`` of an input dtype as docs/validity.md defines it.

    ``float16``/``float32``: their own epsilon; ``float64``, ``longdouble`` and integers:
    ``2.2e-16`` (the arithmetic is done in float64).
    """
    dtype = np.dtype(dtype)
    if dtype.kind == "f" and dtype.itemsize < 8:
        return float(np.finfo(dtype).eps)
    return float(np.finfo(np.float64).eps)


def symmetry_tolerance(dtype) -> float:
    """``eps_sym = max(1e-10, 10 u)`` (docs/validity.md, rule 4)."""
    return max(1e-10, 10.0 * dtype_epsilon(dtype))


def psd_tolerance(dtype) -> float:
    """``eps_psd = max(1e-8, u)`` (docs/validity.md, rule 4)."""
    return max(1e-8, dtype_epsilon(dtype))


def _real_array(a, name: str, allow_bool: bool = False) -> np.ndarray:
    """``a`` as an ndarray of its own dtype, which must be real numeric.

    The dtype is checked before any conversion to float64, which would silently drop the
    imaginary part of a complex array and turn ``True`` into ``1.0``.
    """
    try:
        arr = np.asarray(a)
    except (TypeError, ValueError) as exc:  # ragged nested sequences, ...
        raise TypeError(f"{name} must be a real numeric array: {exc}") from exc
    kinds = _REAL_KINDS + ("b" if allow_bool else "")
    if arr.dtype.kind not in kinds:
        what = {
            "b": "booleans",
            "c": "complex numbers (even with zero imaginary part)",
            "U": "strings",
            "S": "bytes",
            "O": "Python objects",
            "M": "datetimes",
            "m": "timedeltas",
            "V": "structured records",
        }.get(arr.dtype.kind, f"dtype {arr.dtype}")
        raise TypeError(
            f"{name} must be a real numeric array (dtype kind f, i or u), got {what} "
            f"(dtype {arr.dtype})"
        )
    return arr


def check_finite_array(a, name: str, ndim: int | None = None, *, allow_bool: bool = False
                       ) -> np.ndarray:
    """Check a real numeric array (see :func:`_real_array`), its dimension and finiteness.

    Parameters
    ----------
    a : array_like
    name : str
        Used in the error messages.
    ndim : int, optional
        Required number of dimensions.
    allow_bool : bool, default False
        Accept a boolean array (feature matrices); labels, targets, kernels and dual
        variables never are.

    Returns
    -------
    ndarray of float64
    """
    raw = _real_array(a, name, allow_bool=allow_bool)
    if ndim is not None and raw.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {raw.shape}")
    if raw.dtype.kind == "f" and not np.all(np.isfinite(raw)):
        raise ValueError(f"{name} contains NaN or infinity")
    with np.errstate(over="ignore"):
        arr = np.asarray(raw, dtype=np.float64)
    if not np.all(np.isfinite(arr)):  # longdouble / huge integers beyond the float64 range
        raise ValueError(f"{name} has entries beyond the float64 range (about 1.8e308)")
    return arr


def kernel_scale(K: np.ndarray) -> float:
    """``s = max|K_ij|`` without forming ``|K|`` (0 for an empty or zero matrix)."""
    if K.size == 0:
        return 0.0
    return max(float(K.max()), -float(K.min()), 0.0)


# --------------------------------------------------------------------------- representable range
def _fmt_pow10(log10_value: float) -> str:
    """``10^x`` as ``m.mme+XX`` without overflowing a float."""
    if not math.isfinite(log10_value):
        return "0" if log10_value < 0 else "inf"
    e = math.floor(log10_value)
    return f"{10 ** (log10_value - e):.3g}e{e:+d}"


def check_representable(C: float, eta: float, kernel_scale: float, n: int) -> None:
    """Refuse an instance outside the representable range of docs/validity.md.

    With ``s = kernel_scale = max|K_ij| > 0`` the instance must satisfy

    ``1e-100 <= C s n <= 1e100``  (the SVM scale: quadratic term against ``1'a``) and
    ``1e-100 <= eta / (C^2 s) <= 1e100``  (the inverse scale of ``Gamma = D K D / (4 eta)``).

    The comparisons are exact (rational arithmetic on the float inputs and on the doubles
    ``1e-100`` and ``1e100``), so the boundary is where the written rule puts it: ``C = 1e-100``
    with ``max|K| = 1``, ``n = 1`` is accepted, the next smaller double is not. ``s = 0``
    (``K = 0``) is always representable. Both quantities are invariant under the exact
    rescaling laws of eq. (4)
    (``v*(K, C, eta) = c v*(cK, C/c, eta/c)``, ``v*(sK, C, eta) = v*(K, sC, s eta)/s``), so
    no rescaling can bring an instance outside the range into it.

    Parameters
    ----------
    C : float > 0, or ndarray of per-sample bounds
        Already validated (:func:`check_box`); a vector is checked at ``min C`` and ``max C``.
    eta : float > 0
        Already validated (:func:`check_positive`).
    kernel_scale : float >= 0
        ``max|K_ij|`` (:func:`kernel_scale`).
    n : int >= 1
        Number of samples.

    Raises
    ------
    ValueError
        Naming ``C``, ``eta``, ``max|K|``, ``n`` and the quantity out of range.
    """
    if np.ndim(C) != 0:  # per-sample boxes: both ends of the box (docs/MATH.md section 14)
        C = np.asarray(C, dtype=np.float64)
        for end in (float(C.min()), float(C.max())):
            check_representable(end, eta, kernel_scale, n)
        return
    C = check_positive(C, "C")
    eta = check_positive(eta, "eta")
    s = check_nonnegative(kernel_scale, "kernel_scale (max|K|)")
    n = check_integer(n, "n")
    if s == 0.0:
        return
    fC, fs, fe = Fraction(C), Fraction(s), Fraction(eta)
    svm_scale = fC * fs * n
    gamma_inv = fe / (fC * fC * fs)
    lg_svm = math.log10(C) + math.log10(s) + math.log10(n)
    lg_gam = math.log10(eta) - 2.0 * math.log10(C) - math.log10(s)
    problems = []
    if not _LO_EXACT <= svm_scale <= _HI_EXACT:
        problems.append(
            f"C * max|K| * n = {_fmt_pow10(lg_svm)} is outside [1e-100, 1e100] (the "
            "quadratic term against 1'a: the optimal dual and the value under- or overflow)"
        )
    if not _LO_EXACT <= gamma_inv <= _HI_EXACT:
        problems.append(
            f"eta / (C^2 * max|K|) = {_fmt_pow10(lg_gam)} is outside [1e-100, 1e100] (the "
            "inverse scale of Gamma = D K D / (4 eta): F(a) under- or overflows)"
        )
    if problems:
        raise ValueError(
            f"instance outside the representable range (docs/validity.md) with C = {C:.3g}, "
            f"eta = {eta:.3g}, max|K| = {s:.3g}, n = {n}: " + "; ".join(problems)
            + ". Both quantities are invariant under the exact rescaling laws, so the "
            "instance cannot be solved in double precision."
        )


# --------------------------------------------------------------------------- labels and targets
def check_labels_pm1(y, n: int | None = None, *, require_both: bool = True) -> np.ndarray:
    """Labels of P1 (``require_both=True``) or P3 (``False``): real 1-D, entries exactly +-1.

    Bool and string arrays are a ``TypeError`` (use -1/+1, or let an estimator encode them).
    """
    y = check_finite_array(y, "y", ndim=1)
    if n is not None and y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but K has {n} rows")
    bad = (y != 1.0) & (y != -1.0)
    if np.any(bad):
        vals = np.unique(y[bad])
        raise ValueError(f"y must contain only -1 and +1, got also the values {vals[:5]}")
    if require_both and y.size and (np.all(y == 1.0) or np.all(y == -1.0)):
        raise ValueError(
            "y contains only one class; DANK-SVM (P1) needs both -1 and +1 for its bias "
            "constraint y'a = 0"
        )
    return y


def check_binary_labels(y, n: int | None = None) -> np.ndarray:
    """Labels of P1: :func:`check_labels_pm1` with both classes required."""
    return check_labels_pm1(y, n, require_both=True)


def check_targets(y, n: int | None = None) -> np.ndarray:
    """Targets of P2: a finite real 1-D array (of length ``n``); bool/complex/str rejected."""
    y = check_finite_array(y, "y", ndim=1)
    if n is not None and y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but K has {n} rows")
    return y


def check_cluster_labels(labels, n: int) -> np.ndarray:
    """Cluster labels of P3 (``labels=``): 1-D, length ``n``, comparable for equality.

    Any values that compare equal to themselves are accepted (integers, strings, tuples, ...);
    a ``str``, ``bytes``, ``set`` or mapping as the whole argument is a ``TypeError``;
    ``NaN`` and ``None`` are a ``ValueError`` (a ``NaN`` is not equal to itself, so its points
    would each form a cluster of their own; ``None`` marks a missing label).

    Returns
    -------
    ndarray of shape (n,)
        The labels as an array (object dtype for mixed values).
    """
    if isinstance(labels, str | bytes | set | frozenset | Mapping):
        # a string would be split into characters, a set or a mapping has no order that
        # matches the samples
        raise TypeError(
            f"labels must be a 1-D array of length {n}, got {type(labels).__name__} (a "
            "string is not split into characters; sets and mappings have no sample order)"
        )
    if isinstance(labels, np.ndarray):
        arr = labels
    else:
        try:
            items = list(labels)
        except TypeError as exc:
            raise TypeError(f"labels must be a 1-D array of length {n}: {exc}") from exc
        try:
            arr = np.asarray(items)
        except (TypeError, ValueError):  # ragged: tuples, lists, mixed objects
            arr = None
        # numpy turns [0, nan, "a"] into the strings "0", "nan", "a" and a list of tuples into
        # a 2-D array: keep one Python object per label instead
        if arr is None or arr.ndim != 1 or (
            arr.dtype.kind in "US" and not all(isinstance(v, str | bytes) for v in items)
        ):
            arr = np.empty(len(items), dtype=object)
            for i, v in enumerate(items):
                arr[i] = v
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"labels must be a 1-D array of length {n}, got shape {arr.shape}")
    kind = arr.dtype.kind
    if kind in "fc":
        if np.any(np.isnan(arr)):
            raise ValueError(
                "labels contain NaN; NaN is not equal to itself, so it cannot name a cluster"
            )
    elif kind == "O":
        for i, v in enumerate(arr):
            if v is None:
                raise ValueError(f"labels[{i}] is None (a missing cluster label)")
            try:
                same = bool(v == v)
            except Exception as exc:  # e.g. arrays as labels
                raise TypeError(
                    f"labels[{i}] = {v!r} cannot be compared for equality: {exc}"
                ) from exc
            if not same:
                raise ValueError(f"labels[{i}] = {v!r} is not equal to itself (NaN-like)")
            try:
                hash(v)
            except TypeError as exc:
                raise TypeError(f"labels[{i}] = {v!r} is not hashable") from exc
    elif kind in "MmV":
        raise TypeError(f"labels of dtype {arr.dtype} are not supported")
    return arr


# --------------------------------------------------------------------------- feasibility
def feasibility_violation(alpha, C, eq=None, target: float = 0.0) -> float:
    """``max(|eq'alpha - target|, -min alpha, max(alpha - C), 0)`` (no equality when ``eq`` is
    None); ``C`` a scalar or per-sample bounds of ``alpha``'s length.

    P1: ``alpha = a``, ``eq = y``; P2: ``alpha = [ah; ac]``, ``eq = [1; -1]``, ``C`` of length
    ``n`` or ``2n`` (a vector of ``n`` boxes both halves); P3: ``eq=None``.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    if np.ndim(C) != 0 and np.size(C) != alpha.size:
        C = np.tile(C, alpha.size // np.size(C))
    v = max(float(-alpha.min()), float(np.max(alpha - C)), 0.0) if alpha.size else 0.0
    if eq is not None:
        v = max(v, abs(float(np.asarray(eq, dtype=np.float64) @ alpha) - target))
    return v


def check_feasible(alpha, C, n: int, eq=None, name: str = "alpha") -> float:
    """Raise unless :func:`feasibility_violation` ``<= 1e-9 max(C) sqrt(n)`` (docs/validity.md).

    Returns the violation. ``n`` is the number of samples (P2: half the length of ``[ah; ac]``).
    """
    v = feasibility_violation(alpha, C, eq)
    tol = FEASIBILITY_RTOL * box_max(C) * math.sqrt(n)
    if not v <= tol:
        raise ValueError(
            f"{name} is not feasible: violation {v:.3g} > 1e-9 * max(C) * sqrt(n) = {tol:.3g}"
        )
    return v
