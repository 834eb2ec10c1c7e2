"""Rules on values shared by the file reader, the writers and the in-memory API: finite arrays,
labels and the ``meta`` field.

Each check raises ``ValueError`` (or ``TypeError`` for the wrong kind of object) whose message
starts with ``what`` (e.g. ``"field 'y'"`` or ``"y"``), so the caller names the file or the
argument.
"""

from __future__ import annotations

import json
import math

import numpy as np

from dank_ref import validation as V

from . import spec

__all__ = ["check_range", "check_finite", "check_labels", "check_meta"]


def check_range(x: float, what: str, *, positive=False, nonneg=False) -> float:
    """``x`` finite (and ``> 0`` / ``>= 0`` if asked: :func:`dank_ref.validation.check_positive`
    / ``check_nonnegative``); returns it."""
    if positive:
        return V.check_positive(x, what)
    if nonneg:
        return V.check_nonnegative(x, what)
    if not math.isfinite(x):
        raise ValueError(f"{what} must be finite, got {x!r}")
    return x


def check_finite(a: np.ndarray, what: str) -> None:
    """Every entry of the float64 array ``a`` finite; otherwise a ``ValueError`` naming the
    first bad index (row first), e.g. ``field 'X' contains NaN or infinity (at index (7, 1))``.
    O(size of ``a``) time, a boolean temporary of that size."""
    finite = np.isfinite(a)
    if not finite.all():
        bad = np.argwhere(~finite)[0]
        raise ValueError(f"{what} contains NaN or infinity (at index "
                         f"{tuple(int(i) for i in bad)})")


def check_labels(y: np.ndarray, task: str, what: str = "field 'y'") -> None:
    """P1 / P3 labels are exactly -1 or +1 (P1 needs both classes); P2 targets are free:
    :func:`dank_ref.validation.check_binary_labels`, the error prefixed by ``what``.

    ``y`` is a finite float64 vector (checked by the caller).  O(n).
    """
    if task not in ("svm", "decomposed"):
        return
    try:
        V.check_binary_labels(y, y.size, require_both=task == "svm")
    except ValueError as exc:
        bad = np.flatnonzero((y != 1.0) & (y != -1.0))  # the message names the first entry
        at = f" (got y[{bad[0]}] = {float(y[bad[0]])!r})" if bad.size else ""
        raise ValueError(f"{what}: {exc}{at}") from None


def _plain(v):
    """numpy scalars and arrays as JSON values (for a ``meta`` object built in Python)."""
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.generic):
        return v.item()
    raise TypeError(f"{type(v).__name__} is not a JSON value")


def check_meta(meta, what: str = "field 'meta'"):
    """A solution's free-form ``meta``: a string, or a JSON object (a ``dict`` with string keys).

    Returns the value normalised to plain JSON types (a ``str`` or a ``dict``); its JSON text
    is at most :data:`~verification.formats.spec.MAX_META_CHARS` characters.  Raises
    ``TypeError`` for any other kind of value, ``ValueError`` when it is too long or holds
    a non-finite number.
    """
    if isinstance(meta, str):
        text = meta
    elif isinstance(meta, dict):
        if not all(isinstance(k, str) for k in meta):
            raise TypeError(f"{what} must be a JSON object: its keys must be strings")
        try:
            text = json.dumps(meta, default=_plain, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{what} must be a JSON object ({spec.one_line(exc)})") from exc
        meta = json.loads(text)
    else:
        raise TypeError(f"{what} must be a string or a JSON object (dict), got "
                        f"{type(meta).__name__}")
    if len(text) > spec.MAX_META_CHARS:
        raise ValueError(f"{what} has {len(text)} characters of JSON text, more than the "
                         f"{spec.MAX_META_CHARS} limit")
    return meta
