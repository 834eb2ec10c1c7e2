"""Input validation of the reference package, implementing :doc:`docs/validity.md </validity>`
exactly.

Every public entry point of :mod:`dank_ref` calls these functions before any arithmetic.  A value
of the wrong kind (a ``bool`` where a number is expected, a complex or string array, ...) raises
``TypeError``; a value of the right kind but outside its domain raises ``ValueError``.  Both name
the parameter and the problem.  This is dank_ref's own code: it never imports ``dank_fast``
(the two packages implement the same written rule independently and the tests check that they
agree).  It is public: the oracle side of ``verification`` validates with it.  The checks of
scalar parameters (``check_positive``, ``check_iterations``, ``check_bool``, ...) live in
:mod:`dank_ref._scalar_validation` and are re-exported here; this module checks the arrays (the
kernel, labels, targets, cluster labels, dual vectors, the box) and the instance as a whole (the
representable range, the feasibility tolerance).

Kernel tolerances are *relative* (``K`` is valid iff ``c K`` is, for every ``c > 0``): with
``s = max |K_ij|`` and ``u`` the machine epsilon of the input dtype (``float16``/``float32``: their
own; ``float64``, ``longdouble`` and integers: ``2.2e-16``)

* symmetry: ``max |K_ij - K_ji| <= max(1e-10, 10 u) * s``, then ``K := (K + K') / 2``;
* PSD: ``lambda_min(K) >= -max(1e-8, u) * n * s`` (dense ``eigvalsh`` of ``K / s``);
* ``K = 0`` is valid.

Representable range (``s > 0``): ``1e-100 <= C s n <= 1e100`` and
``1e-100 <= eta / (C^2 s) <= 1e100``, tested in logarithms so that the test itself never
overflows.  A vector box ``C`` (per-sample bounds, :func:`check_box`) is in range iff both its
smallest and its largest entry are, i.e. every ``C_i`` is.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping

import numpy as np

from ._scalar_validation import (
    check_bool,
    check_iterations,
    check_nonnegative,
    check_positive,
    check_time_limit,
    check_tolerance,
)

__all__ = ["check_kernel", "kernel_scale", "check_binary_labels", "check_targets",
           "check_positive", "check_nonnegative", "check_tolerance", "check_iterations",
           "check_bool", "check_time_limit", "check_partition", "check_alpha", "check_range",
           "check_box", "box_max", "feasibility_tolerance", "RANGE_LO", "RANGE_HI", "FEAS_RTOL"]

_F64_EPS = float(np.finfo(np.float64).eps)
#: Lower end of the representable range of docs/validity.md (:func:`check_range`).
RANGE_LO = 1e-100
#: Upper end of the representable range of docs/validity.md (:func:`check_range`).
RANGE_HI = 1e100
#: Relative feasibility tolerance: a point is feasible within ``FEAS_RTOL * C * sqrt(n)``
#: (:func:`feasibility_tolerance`).
FEAS_RTOL = 1e-9


def _dtype_epsilon(dtype: np.dtype) -> float:
    """Machine epsilon ``u`` of validity.md: float16/float32 their own, otherwise float64's."""
    if dtype in (np.dtype(np.float16), np.dtype(np.float32)):
        return float(np.finfo(dtype).eps)
    return _F64_EPS


def _real_array(x, name: str) -> np.ndarray:
    """``x`` as an ndarray whose dtype kind is ``f``, ``i`` or ``u`` (else ``TypeError``)."""
    if isinstance(x, (str, bytes)):
        raise TypeError(f"{name} must be a real numeric array, got {type(x).__name__}")
    try:
        arr = np.asarray(x)
    except (TypeError, ValueError) as exc:  # ragged nested lists, ...
        raise TypeError(f"{name} must be a real numeric array: {exc}") from exc
    kind = arr.dtype.kind
    if kind == "b":
        raise TypeError(f"{name} must be a real numeric array, got a boolean array")
    if kind == "c":
        raise TypeError(
            f"{name} must be a real numeric array, got complex dtype {arr.dtype} (the imaginary "
            "part would be dropped; pass the real part explicitly if that is intended)"
        )
    if kind not in "fiu":
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    return arr


def check_kernel(K, *, name: str = "K") -> np.ndarray:
    """Validate a kernel matrix per :doc:`docs/validity.md </validity>` and return it as symmetric
    float64.

    Parameters
    ----------
    K : array_like, shape (n, n)
        Real numeric (dtype kind ``f``, ``i``, ``u``), square, ``n >= 1``, finite, symmetric and
        positive semidefinite to the relative tolerances of the module docstring.  ``K = 0`` is
        valid.
    name : str, default "K"
        The name used in error messages.

    Returns
    -------
    ndarray, shape (n, n)
        ``(K + K') / 2`` in float64 (computed as ``K/2 + K'/2`` so it cannot overflow).

    Raises
    ------
    TypeError
        ``K`` is not a real numeric array (bool, complex, string, object, ...).
    ValueError
        Wrong shape, non-finite entries, not symmetric or not PSD (the message gives the measured
        asymmetry / smallest eigenvalue and the threshold).

    Notes
    -----
    The PSD test is a dense ``eigvalsh``: O(n^3) time, O(n^2) memory.

    Examples
    --------
    >>> from dank_ref.validation import check_kernel
    >>> check_kernel([[1, 2], [2, 4]]).tolist()
    [[1.0, 2.0], [2.0, 4.0]]
    """
    arr = _real_array(K, name)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be a square 2-D array, got shape {arr.shape}")
    n = arr.shape[0]
    if n < 1:
        raise ValueError(f"{name} must be at least 1 x 1, got shape {arr.shape}")
    u = _dtype_epsilon(arr.dtype)
    K64 = np.asarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(K64)):
        raise ValueError(f"{name} contains NaN or inf")
    s = float(np.max(np.abs(K64)))
    if s == 0.0:
        return np.zeros((n, n))
    eps_sym = max(1e-10, 10.0 * u)
    eps_psd = max(1e-8, u)
    Kn = K64 / s  # relative tests on the normalised matrix: no overflow, scale-free
    asym = float(np.max(np.abs(Kn - Kn.T)))
    if asym > eps_sym:
        raise ValueError(
            f"{name} is not symmetric: max |K - K'| = {asym * s:.3e} > {eps_sym:g} * max|K| "
            f"(max|K| = {s:.3e})"
        )
    Kn = 0.5 * Kn + 0.5 * Kn.T
    lmin = float(np.linalg.eigvalsh(Kn)[0])
    if lmin < -eps_psd * n:
        raise ValueError(
            f"{name} is not positive semidefinite: lambda_min = {lmin * s:.3e} < "
            f"-{eps_psd:g} * n * max|K| = {-eps_psd * n * s:.3e}"
        )
    return 0.5 * K64 + 0.5 * K64.T


def kernel_scale(K: np.ndarray) -> float:
    """Return the scale ``s = max |K_ij|`` of a validated kernel (0.0 for ``K = 0``).

    Parameters
    ----------
    K : ndarray
        A kernel returned by :func:`check_kernel`.

    Returns
    -------
    float
        ``max |K_ij|``, 0.0 for ``K = 0`` or an empty array.
    """
    return float(np.max(np.abs(K))) if K.size else 0.0


def _vector(v, n: int, name: str) -> np.ndarray:
    arr = _real_array(v, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has length {arr.shape[0]} but K is {n} x {n}")
    arr = np.asarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf")
    return arr


def check_binary_labels(y, n: int, *, require_both: bool = True) -> np.ndarray:
    """Validate labels: a real 1-D array of length ``n`` with entries exactly -1 or +1.

    Parameters
    ----------
    y : array_like, shape (n,)
        The labels.
    n : int
        The number of points (the kernel's size).
    require_both : bool, default True
        Also demand both classes, hence ``n >= 2`` (P1's bias constraint needs it).

    Returns
    -------
    ndarray of float64, shape (n,)
        The labels.

    Raises
    ------
    TypeError
        ``y`` is not a real numeric array.
    ValueError
        Wrong shape or length, non-finite entries, a value other than +-1, one class only
        when ``require_both``.
    """
    y = _vector(y, n, "y")
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError("labels y must take values in {-1, +1}")
    if require_both and (np.all(y == 1.0) or np.all(y == -1.0)):
        raise ValueError(
            "labels y must contain both classes (the bias constraint y'a = 0 needs it)"
        )
    return y


def check_targets(y, n: int) -> np.ndarray:
    """Validate regression targets: a finite real 1-D array of length ``n``.

    Parameters
    ----------
    y : array_like, shape (n,)
        The targets.
    n : int
        The number of points (the kernel's size).

    Returns
    -------
    ndarray of float64, shape (n,)
        The targets.

    Raises
    ------
    TypeError
        ``y`` is not a real numeric array.
    ValueError
        Wrong shape or length, non-finite entries.
    """
    return _vector(y, n, "y")


def check_partition(labels, n: int) -> np.ndarray:
    """Validate cluster labels and factorise them into integer codes.

    The labels are a 1-D sequence of length ``n`` whose values compare equal to themselves.
    Any such values are accepted (integers, floats including ``inf``, strings, tuples, mixed),
    and two labels name the same cluster iff they compare equal (``1`` and ``1.0`` do, ``1`` and
    ``"1"`` do not).  ``NaN`` and ``None`` are a ``ValueError`` (validity.md: not usable as
    cluster ids); a ``str``, ``bytes``, ``set`` or mapping as the whole argument, or an
    unhashable label, is a ``TypeError``.

    The labels are factorised in Python, one object per sample, never through
    ``np.asarray`` (which turns ``[1, "1"]`` into the strings ``"1", "1"`` and a list of tuples
    into a 2-D array).  O(n) time.

    Parameters
    ----------
    labels : sequence or ndarray, shape (n,)
        One cluster label per point.
    n : int
        The number of points.

    Returns
    -------
    ndarray of int64, shape (n,)
        Cluster codes ``0, 1, ...`` in order of first appearance (equal codes iff equal labels).

    Raises
    ------
    TypeError
        A string, set or mapping as the whole argument, an unhashable or incomparable label.
    ValueError
        Wrong length or shape, a ``NaN`` or ``None`` label.

    Examples
    --------
    >>> from dank_ref.validation import check_partition
    >>> check_partition(["a", "b", "a", 1, 1.0], 5).tolist()
    [0, 1, 0, 2, 2]
    """
    if isinstance(labels, (str, bytes, set, frozenset, Mapping)):
        raise TypeError(
            f"labels must be a 1-D array of length {n}, got {type(labels).__name__} (a string "
            "is not split into characters; sets and mappings have no sample order)"
        )
    if isinstance(labels, np.ndarray):
        if labels.ndim != 1 or labels.shape[0] != n:
            raise ValueError(
                f"labels must be a 1-D array of length {n}, got shape {labels.shape}"
            )
        if labels.dtype.kind in "MmV":
            raise TypeError(f"labels of dtype {labels.dtype} are not supported")
        items = labels.tolist()
    else:
        try:
            items = list(labels)
        except TypeError as exc:
            raise TypeError(f"labels must be a 1-D array of length {n}: {exc}") from exc
        if len(items) != n:
            raise ValueError(f"labels must be a 1-D array of length {n}, got length {len(items)}")
    codes: dict = {}
    out = np.empty(n, dtype=np.int64)
    for i, v in enumerate(items):
        if v is None:
            raise ValueError(f"labels[{i}] is None (a missing cluster label)")
        try:
            same = bool(v == v)
        except Exception as exc:  # noqa: BLE001 - any failure means "not comparable"
            raise TypeError(f"labels[{i}] = {v!r} cannot be compared for equality: {exc}") from exc
        if not same:
            raise ValueError(f"labels[{i}] = {v!r} is not equal to itself (NaN?)")
        try:
            out[i] = codes.setdefault(v, len(codes))
        except TypeError as exc:
            raise TypeError(f"labels[{i}] = {v!r} is not hashable") from exc
    return out


def check_alpha(alpha, n: int, name: str = "alpha") -> np.ndarray:
    """Validate a candidate dual vector: a finite real 1-D array of length ``n``.

    Feasibility is not checked here (see :func:`feasibility_tolerance`).

    Parameters
    ----------
    alpha : array_like, shape (n,)
        The candidate.
    n : int
        The number of points.
    name : str, default "alpha"
        The parameter's name, used in error messages.

    Returns
    -------
    ndarray of float64, shape (n,)
        A copy of ``alpha``.

    Raises
    ------
    TypeError
        ``alpha`` is not a real numeric array.
    ValueError
        Wrong shape or length, non-finite entries.
    """
    return np.array(_vector(alpha, n, name), dtype=np.float64, copy=True)


def check_box(C, n: int, name: str = "C"):
    """Validate the box of P1, P2, P3: a scalar ``> 0`` or a vector of ``n`` per-sample bounds.

    A Python or NumPy real number (not bool) is checked by :func:`check_positive` and returned
    as a ``float``.  Anything else must be a real
    1-D array of length ``n`` with finite entries ``> 0`` (libsvm's weighted box ``0 <= a_i <=
    C_i``), returned as a float64 copy.  Anything 0-dimensional that is not a real number (a
    0-d array, a string, None) is refused by :func:`check_positive` with a ``TypeError``.

    Parameters
    ----------
    C : float or array_like of shape (n,)
        The box.
    n : int
        The number of points.
    name : str, default "C"
        The parameter's name, used in error messages.

    Returns
    -------
    float or ndarray of float64, shape (n,)

    Raises
    ------
    TypeError
        Not a real number nor a real numeric array (bool, str, complex, ...).
    ValueError
        Wrong shape or length, an entry not finite or ``<= 0``.

    Examples
    --------
    >>> from dank_ref.validation import check_box
    >>> check_box(2, 3), check_box([1, 2, 3], 3).tolist()
    (2.0, [1.0, 2.0, 3.0])
    """
    if isinstance(C, numbers.Real) or isinstance(C, (bool, np.bool_)) or np.ndim(C) == 0:
        return check_positive(C, name)  # a scalar, or a 0-d array: checked as a scalar
    arr = _real_array(C, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a number > 0 or a 1-D array of {n} per-sample bounds, "
                         f"got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has length {arr.shape[0]} but there are {n} points")
    arr = np.array(arr, dtype=np.float64, copy=True)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf")
    if not np.all(arr > 0.0):
        i = int(np.flatnonzero(~(arr > 0.0))[0])
        raise ValueError(f"{name} must have entries > 0, got {name}[{i}] = {float(arr[i])!r}")
    return arr


def box_max(C) -> float:
    """``max_i C_i`` of a validated box (the scalar itself for a scalar box)."""
    return float(np.max(C)) if isinstance(C, np.ndarray) else float(C)


def check_range(C, eta: float, s: float, n: int) -> None:
    """Refuse instances outside the representable range of :doc:`docs/validity.md </validity>`.

    With ``s = max|K| > 0``: ``1e-100 <= C s n <= 1e100`` and ``1e-100 <= eta / (C^2 s) <= 1e100``
    (compared in base-10 logarithms, so the test cannot overflow).  ``K = 0`` has no scale and is
    always in range.

    Parameters
    ----------
    C : float or ndarray
        The box bound, ``> 0``; a vector box is in range iff its smallest and its largest
        entry are (both are tested, the message names the one out of range).
    eta : float
        The regulariser weight, ``> 0``.
    s : float
        ``max|K_ij|`` (:func:`kernel_scale`), ``>= 0``.
    n : int
        The number of points, ``>= 1``.

    Raises
    ------
    ValueError
        Naming ``C``, ``eta`` and ``max|K|`` and the offending product.
    """
    if s <= 0.0:
        return
    if isinstance(C, np.ndarray):
        for c in sorted({float(np.max(C)), float(np.min(C))}, reverse=True):
            check_range(c, eta, s, n)
        return
    lc, le, ls, ln = math.log10(C), math.log10(eta), math.log10(s), math.log10(n)
    svm_scale = lc + ls + ln
    gamma_scale = le - 2.0 * lc - ls
    lo, hi = math.log10(RANGE_LO), math.log10(RANGE_HI)
    problems = []
    if not lo <= svm_scale <= hi:
        problems.append(f"C * max|K| * n = 10^{svm_scale:.1f}")
    if not lo <= gamma_scale <= hi:
        problems.append(f"eta / (C^2 * max|K|) = 10^{gamma_scale:.1f}")
    if problems:
        raise ValueError(
            f"instance outside the representable range (C = {C:.3e}, eta = {eta:.3e}, "
            f"max|K| = {s:.3e}, n = {n}): {' and '.join(problems)} not in [1e-100, 1e100]; "
            "the solution's own numbers would overflow or underflow double precision "
            "(docs/validity.md, 'Representable range')"
        )


def feasibility_tolerance(C, n: int) -> float:
    """Return the feasibility tolerance ``1e-9 * C * sqrt(n)`` of
    :doc:`docs/validity.md </validity>`.

    A candidate is feasible iff its largest constraint violation is at most this.  For a
    vector box the tolerance is ``1e-9 * max(C) * sqrt(n)`` for every constraint (each box
    ``a_i <= C_i`` included): the certificate's numbers and a solver's rounding scale with the
    largest bound, not with the smallest.

    Parameters
    ----------
    C : float or ndarray
        The box bound (scalar or per-sample).
    n : int
        The number of points.

    Returns
    -------
    float
        ``FEAS_RTOL * C * sqrt(n)``.

    Examples
    --------
    >>> from dank_ref.validation import feasibility_tolerance
    >>> feasibility_tolerance(1.0, 100)
    1e-08
    """
    return FEAS_RTOL * box_max(C) * math.sqrt(n)
