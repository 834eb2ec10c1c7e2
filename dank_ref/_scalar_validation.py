"""Scalar parameters of the reference package (``docs/validity.md``): positive and nonnegative
numbers, tolerances, the time limit, iteration limits and flags.

A value of the wrong kind (a ``bool`` or a string where a number is expected, a float where an
integer is) raises ``TypeError``; a value of the right kind outside its domain (not finite,
``<= 0``, ``< 1``) raises ``ValueError``.  Both name the parameter and show the value, cut to 40
characters.  Python and NumPy integers and floats are accepted alike; an integer beyond the float
range is refused as not finite.  The checks take ``(value, name)``, in the order of dank_fast's.
They are public through :mod:`dank_ref.validation`, which re-exports every one of them.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

__all__ = ["check_positive", "check_nonnegative", "check_tolerance", "check_time_limit",
           "check_iterations", "check_bool"]


def _real_scalar(value, name: str) -> float:
    """``value`` as a float; an integer beyond the float range becomes ``+-inf`` (refused by
    the callers' finiteness test with their own ``ValueError``)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number (not bool or str), got "
                        f"{type(value).__name__} {_short_repr(value)}")
    try:
        return float(value)
    except OverflowError:  # an int such as 10**400
        return math.inf if value > 0 else -math.inf


def _short_repr(value) -> str:
    """``repr(value)`` cut to 40 characters (a 400-digit integer would swamp the message; a
    too-long int's repr can itself raise ``ValueError``)."""
    try:
        text = repr(value)
    except ValueError:
        return f"<{type(value).__name__} too large to print>"
    return text if len(text) <= 40 else text[:37] + "..."


def check_positive(value, name: str) -> float:
    """Validate a finite real number ``> 0`` (Python or NumPy int/float, not bool).

    Parameters
    ----------
    value : int or float
        The value to check.
    name : str
        The parameter's name, used in error messages.

    Returns
    -------
    float
        ``value`` as a float.

    Raises
    ------
    TypeError
        ``value`` is not a real number (a bool, a string, ...).
    ValueError
        ``value`` is not finite or ``<= 0``.
    """
    return _check_finite(value, name, strict=True)


def check_nonnegative(value, name: str) -> float:
    """Validate a finite real number ``>= 0``: parameters, result and ``TypeError`` as
    :func:`check_positive`; ``ValueError`` where ``value`` is not finite or ``< 0``."""
    return _check_finite(value, name, strict=False)


def _check_finite(value, name: str, *, strict: bool) -> float:
    """A finite real ``value`` above 0 (``strict``) or at least 0, as a float."""
    v = _real_scalar(value, name)
    if not math.isfinite(v) or v < 0.0 or (strict and v == 0.0):
        bound = "> 0" if strict else ">= 0"
        raise ValueError(f"{name} must be a finite number {bound}, got {_short_repr(value)}")
    return v


def check_tolerance(value, name: str) -> float:
    """Validate a tolerance (``eps``, ``tol``): a finite real number ``> 0``, checked, returned
    and refused as by :func:`check_positive`."""
    return check_positive(value, name)


def check_time_limit(value) -> float:
    """Validate ``time_limit`` in seconds: a finite real number ``> 0`` (always a limit),
    checked, returned and refused as by :func:`check_positive` under the name
    ``time_limit``."""
    return check_positive(value, "time_limit")


def check_iterations(value, name: str, *, allow_none: bool = True) -> int | None:
    """Validate an iteration limit: an integer (not bool) ``>= 1``, or None for the default.

    Parameters
    ----------
    value : int or None
        The value to check.
    name : str
        The parameter's name, used in error messages.
    allow_none : bool, default True
        Whether None (the solver's default) is accepted.

    Returns
    -------
    int or None
        ``value`` as an int, or None.

    Raises
    ------
    TypeError
        ``value`` is not an integer (a bool, a float, ...), or None when not allowed.
    ValueError
        ``value < 1``.
    """
    if value is None and allow_none:
        return None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer >= 1, got {type(value).__name__} "
                        f"{_short_repr(value)}")
    if int(value) < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {_short_repr(value)}")
    return int(value)


def check_bool(value, name: str) -> bool:
    """Validate a flag (``polish``, ``verbose``, ...): a ``bool`` only, not 0 or 1.

    Parameters
    ----------
    value : bool
        The value to check.
    name : str
        The parameter's name, used in error messages.

    Returns
    -------
    bool
        ``value``.

    Raises
    ------
    TypeError
        ``value`` is not a bool.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(value).__name__} "
                        f"{_short_repr(value)}")
    return bool(value)
