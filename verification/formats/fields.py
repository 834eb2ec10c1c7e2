"""Typed access to the fields of one file: one rule for both containers (JSON and ``.npz``).

Each accessor raises :class:`~verification.formats.spec.FormatError` naming the file, the field
and what is wrong (the types are defined in the docstring of :mod:`verification.formats`).
"""

from __future__ import annotations

import json

import numpy as np

from .containers import Fields
from .spec import F64_EPS, KERNEL_FIELDS, READ_VERSIONS, TASKS, FormatError
from .values import check_finite, check_meta, check_range

__all__ = ["require", "string", "integer", "number", "array", "int_array", "meta", "header",
           "box"]


def _describe_json(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return f"the boolean {str(v).lower()}"
    if isinstance(v, str):
        return f"the string {v[:40]!r}"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return repr(v)


def _describe_npy(v: np.ndarray) -> str:
    kinds = {"b": "boolean", "c": "complex", "U": "string", "S": "bytes"}
    what = kinds.get(v.dtype.kind, str(v.dtype))
    return f"a {what} array of shape {v.shape}" if v.ndim else f"a 0-d {what} ({v[()]!r})"


def require(f: Fields, name: str):
    if name not in f:
        raise FormatError(f"{f.path}: missing field {name!r}")
    v = f[name]
    if v is None:
        raise FormatError(f"{f.path}: field {name!r} is null (omit an optional field instead)")
    return v


def string(f: Fields, name: str) -> str:
    v = require(f, name)
    if f.kind == "json":
        if not isinstance(v, str):
            raise FormatError(f"{f.path}: field {name!r} must be a string, got "
                              f"{_describe_json(v)}")
        return v
    if v.ndim != 0 or v.dtype.kind != "U":
        raise FormatError(f"{f.path}: field {name!r} must be a 0-d unicode string, got "
                          f"{_describe_npy(v)}")
    return str(v[()])


def integer(f: Fields, name: str) -> int:
    v = require(f, name)
    if f.kind == "json":
        if type(v) is not int:
            raise FormatError(f"{f.path}: field {name!r} must be an integer, got "
                              f"{_describe_json(v)}")
        return v
    if v.ndim != 0 or v.dtype.kind not in "iu":
        raise FormatError(f"{f.path}: field {name!r} must be a 0-d integer, got "
                          f"{_describe_npy(v)}")
    return int(v[()])


def number(f: Fields, name: str, *, positive=False, nonneg=False) -> float:
    v = require(f, name)
    if f.kind == "json":
        if type(v) not in (int, float):
            raise FormatError(f"{f.path}: field {name!r} must be a number, got "
                              f"{_describe_json(v)}")
        try:
            x = float(v)
        except OverflowError as exc:
            raise FormatError(f"{f.path}: field {name!r} = {v} overflows double precision") \
                from exc
    else:
        if v.ndim != 0 or v.dtype.kind not in "iuf":
            raise FormatError(f"{f.path}: field {name!r} must be a 0-d real number, got "
                              f"{_describe_npy(v)}")
        with np.errstate(over="ignore"):
            x = float(v[()])
    try:
        return check_range(x, f"{f.path}: field {name!r}", positive=positive, nonneg=nonneg)
    except ValueError as exc:
        raise FormatError(str(exc)) from exc


def _nested_json(v: list) -> str:
    """What a list that should be flat is: a list of lists (with its shape when rectangular)."""
    if all(isinstance(r, list) for r in v):
        widths = {len(r) for r in v}
        shape = f" (a 2-D array of shape ({len(v)}, {widths.pop()}))" if len(widths) == 1 else ""
        return f"a list of lists{shape}"
    i = next(i for i, x in enumerate(v) if isinstance(x, list))
    return f"a nested list (entry [{i}] is a list)"


def _wrong_ndim(path: str, name: str, ndim: int, v: np.ndarray, kind: str) -> FormatError:
    if ndim == 1:
        return FormatError(f"{path}: field {name!r} must be a 1-D array of n {kind}, got "
                           f"{_describe_npy(v)}")
    return FormatError(f"{path}: field {name!r} must be {ndim}-D, got shape {v.shape}")


def _json_leaves(v, ndim, path, name, integer):
    """Check a rectangular nested list of JSON numbers; return (shape, flat list)."""
    ok_types = (int,) if integer else (int, float)
    kind = "integers" if integer else "numbers"
    if ndim == 1:
        if not isinstance(v, list):
            raise FormatError(f"{path}: field {name!r} must be a list of {kind}, got "
                              f"{_describe_json(v)}")
        if any(isinstance(x, list) for x in v):
            raise FormatError(f"{path}: field {name!r} must be a 1-D array of n {kind}, got "
                              f"{_nested_json(v)}")
        for i, x in enumerate(v):
            if type(x) not in ok_types:
                raise FormatError(f"{path}: field {name!r}[{i}] must be one of the {kind}, got "
                                  f"{_describe_json(x)}")
        return (len(v),), v
    if not isinstance(v, list) or not all(isinstance(r, list) for r in v):
        raise FormatError(f"{path}: field {name!r} must be a list of lists of {kind} "
                          f"({ndim}-D array)")
    m = len(v[0]) if v else 0
    flat = []
    for i, row in enumerate(v):
        if len(row) != m:
            raise FormatError(f"{path}: field {name!r} is ragged: row {i} has {len(row)} "
                              f"entries, row 0 has {m}")
        for j, x in enumerate(row):
            if type(x) not in ok_types:
                raise FormatError(f"{path}: field {name!r}[{i}][{j}] must be one of the "
                                  f"{kind}, got {_describe_json(x)}")
        flat.extend(row)
    return (len(v), m), flat


def array(f: Fields, name: str, ndim: int):
    """Real array as float64 plus the machine epsilon of its stored dtype (validity.md)."""
    v = require(f, name)
    if f.kind == "json":
        shape, flat = _json_leaves(v, ndim, f.path, name, integer=False)
        try:
            a = np.array(flat, dtype=np.float64).reshape(shape)
        except OverflowError as exc:
            raise FormatError(f"{f.path}: field {name!r} has an integer that overflows double "
                              "precision") from exc
        eps = F64_EPS
    else:
        if v.dtype.kind not in "iuf":
            raise FormatError(f"{f.path}: field {name!r} must be a real numeric array, got "
                              f"{_describe_npy(v)}")
        if v.ndim != ndim:
            raise _wrong_ndim(f.path, name, ndim, v, "numbers")
        eps = float(np.finfo(v.dtype).eps) if v.dtype.kind == "f" and v.itemsize < 8 \
            else F64_EPS
        with np.errstate(over="ignore"):
            a = np.asarray(v, dtype=np.float64)
    try:
        check_finite(a, f"{f.path}: field {name!r}")
    except ValueError as exc:
        raise FormatError(str(exc)) from exc
    return a, eps


def int_array(f: Fields, name: str) -> np.ndarray:
    v = require(f, name)
    if f.kind == "json":
        _, flat = _json_leaves(v, 1, f.path, name, integer=True)
        try:
            return np.array(flat, dtype=np.int64).reshape(-1)
        except OverflowError as exc:
            raise FormatError(f"{f.path}: field {name!r} has an integer outside int64") from exc
    if v.dtype.kind not in "iu":
        raise FormatError(f"{f.path}: field {name!r} must be an integer array, got "
                          f"{_describe_npy(v)}")
    if v.ndim != 1:
        raise _wrong_ndim(f.path, name, 1, v, "integers")
    return np.asarray(v)


def meta(f: Fields, name: str = "meta"):
    """The solution's free-form ``meta``: JSON: a string or an object; ``.npz``: a 0-d string
    (the JSON text of an object is read back as that object)."""
    v = require(f, name)
    if f.kind == "npz":
        text = string(f, name)
        v = text
        if text.lstrip().startswith("{"):
            try:
                v = json.loads(text, parse_constant=_bad_constant)
            except ValueError:
                v = text
            if not isinstance(v, dict):
                v = text
    try:
        return check_meta(v, what=f"{f.path}: field {name!r}")
    except (TypeError, ValueError) as exc:
        raise FormatError(str(exc)) from exc


def box(f: Fields, n: int, version: int):
    """An instance's ``C``: a number ``> 0`` (every version), or from version 2 on a 1-D array
    of ``n`` per-sample boxes, each finite and ``> 0`` (returned as float64).  A version-1 file
    is read as version 1 specifies: ``C`` must be a number."""
    v = require(f, "C")
    scalar = not isinstance(v, list) if f.kind == "json" else v.ndim == 0
    if scalar:
        return number(f, "C", positive=True)
    if version < 2:
        try:
            return number(f, "C", positive=True)  # the error version 1 specifies
        except FormatError as exc:
            raise FormatError(f"{exc} (a vector of per-sample boxes needs version 2)") from None
    C, _ = array(f, "C", 1)
    if C.shape != (n,):
        raise FormatError(f"{f.path}: field 'C' has {C.size} entries but the kernel is "
                          f"{n} x {n} (a vector C gives one box per point)")
    bad = np.flatnonzero(~(C > 0.0))
    if bad.size:
        raise FormatError(f"{f.path}: field 'C'[{int(bad[0])}] must be > 0, got "
                          f"{float(C[bad[0]])!r}")
    return C


def _bad_constant(name):
    raise ValueError(f"non-standard JSON constant {name}")


def header(f: Fields, kind: str, allowed: dict, every: frozenset) -> str:
    fmt = string(f, "format")
    if fmt != kind:
        other = {"dank-instance": "an instance", "dank-solution": "a solution"}.get(fmt)
        hint = f" (this is {other} file)" if other else ""
        raise FormatError(f"{f.path}: field 'format' is {fmt!r}, expected {kind!r}{hint}")
    ver = integer(f, "version")
    if ver not in READ_VERSIONS:
        raise FormatError(f"{f.path}: unsupported version {ver} (this reader reads versions "
                          f"{', '.join(map(str, READ_VERSIONS))})")
    task = string(f, "task")
    if task not in TASKS:
        raise FormatError(f"{f.path}: field 'task' must be one of {TASKS}, got {task!r}")
    unknown = sorted(set(f.names) - every)
    if unknown:
        raise FormatError(f"{f.path}: unknown field(s) {', '.join(map(repr, unknown))}")
    unused = sorted(set(f.names) - allowed[task] - (KERNEL_FIELDS if kind == "dank-instance"
                                                    else frozenset()))
    if unused:
        raise FormatError(f"{f.path}: field(s) {', '.join(map(repr, unused))} not used by "
                          f"task {task!r}")
    return task
