"""Strict reading of counterexample files (``counterexample_<claim>[_degenerate].npz``).

A counterexample file is an ``.npz`` archive written by :func:`._common.save_counterexample`:
a 0-d string ``claim``, a 0-d integer ``format_version`` (1), a 0-d string ``params_json``
(a JSON object of scalars) and the claim's real arrays (:data:`ARRAYS`).  The reader

* reads the archive with the oracle's header-first reader (:mod:`verification.formats.containers`):
  never unpickles (object arrays are refused from the header, before any data is read),
  refuses a member whose header announces more than the format's size limit, and turns every
  low-level failure (truncated archive, bad CRC, short data) into a :class:`ValueError`
  naming the file and the problem;
* validates the instance by dank_ref's rule (:mod:`dank_ref.validation`, ``docs/validity.md``):
  the kernel matrix, the labels or targets, the scalars and their representable range, and the
  feasibility of the stored dual points; a bad value is a ``ValueError``, a wrong kind of value
  a ``TypeError``.
"""

from __future__ import annotations

import json
import math

import numpy as np

from dank_ref import validation as V

from ...formats.containers import open_fields

FORMAT_VERSIONS = (1,)
_META = ("claim", "format_version", "params_json")

_P1 = ("K", "y")
ARRAYS = {
    "L1": _P1 + ("a",), "HW": _P1 + ("a",),
    "L2": _P1 + ("a1", "a2"), "T1": _P1 + ("a1", "a2"), "PG": _P1 + ("a1", "a2"),
    "L3": _P1 + ("ah1", "ac1", "ah2", "ac2"), "T2": _P1 + ("ah1", "ac1", "ah2", "ac2"),
    "T3": _P1 + ("labels",), "T4": _P1 + ("labels",),
    "NR": _P1, "NR[printed]": _P1, "SD": _P1,
}
# required parameters beyond C and eta
PARAMS = {
    "L1": ("tau",), "HW": ("tau",), "L2": ("tau",), "T1": ("tau",), "PG": ("tau",),
    "L3": ("tau", "epsilon"), "T2": ("tau", "epsilon"), "T3": (), "T4": (),
    "NR": ("tau", "t", "sign"), "NR[printed]": ("tau", "t", "sign"), "SD": ("tau",),
}
TASK = {c: ("svr" if c in ("L3", "T2") else "p3" if c in ("T3", "T4") else "svm") for c in ARRAYS}


def _read_members(path) -> dict:
    """All members of the archive as arrays, by the oracle's header-first reader
    (:mod:`verification.formats.containers`: sizes checked before reading, never unpickled)."""
    f = open_fields(path)
    try:
        if f.kind != "npz":
            raise ValueError(f"{path}: not a readable .npz archive (a counterexample file is "
                             "the .npz archive written by dank-verify)")
        return {k: np.asarray(f[k]) for k in sorted(f.names)}
    finally:
        f.close()


def _real_array(path, name, a, ndim):
    if a.dtype.kind not in "fiu":
        raise TypeError(f"{path}: {name} must be a real numeric array, got dtype {a.dtype}")
    if a.ndim != ndim:
        raise ValueError(f"{path}: {name} must be {ndim}-dimensional, got shape {a.shape}")
    a = np.asarray(a, dtype=float)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{path}: {name} has non-finite entries")
    return a


def _scalar(path, params, name, positive):
    if name not in params:
        raise ValueError(f"{path}: parameter {name!r} is missing")
    check = V.check_positive if positive else V.check_nonnegative
    return check(params[name], f"{path}: parameter {name!r}")


def _rule(path, fn, *args, **kw):
    """A dank_ref rule (docs/validity.md) with the file named in its error."""
    try:
        return fn(*args, **kw)
    except (TypeError, ValueError) as exc:
        raise type(exc)(f"{path}: {exc}") from None


def check_kernel(path, K):
    """``docs/validity.md``, "Kernel matrix", by :func:`dank_ref.validation.check_kernel`
    (machine epsilon of the stored dtype); returns ``(K + K') / 2``."""
    return _rule(path, V.check_kernel, K)


def validate(path, claim: str, arrays: dict, params: dict) -> None:
    """Check a loaded counterexample by ``docs/validity.md``; raises ValueError/TypeError."""
    missing = [k for k in ARRAYS[claim] if k not in arrays]
    extra = [k for k in arrays if k not in ARRAYS[claim]]
    if missing or extra:
        raise ValueError(f"{path}: claim {claim} needs arrays {list(ARRAYS[claim])}; "
                         f"missing {missing}, unexpected {extra}")
    K = check_kernel(path, arrays["K"])
    arrays["K"] = K
    n = K.shape[0]
    task = TASK[claim]
    if task == "svr":
        y = _rule(path, V.check_targets, arrays["y"], n)
    else:
        y = _rule(path, V.check_binary_labels, arrays["y"], n, require_both=task == "svm")
    arrays["y"] = y
    C = _scalar(path, params, "C", True)
    eta = _scalar(path, params, "eta", True)
    for name in PARAMS[claim]:
        if name not in params:
            raise ValueError(f"{path}: parameter {name!r} is missing")
        if name in ("tau", "epsilon"):
            _scalar(path, params, name, False)
    _rule(path, V.check_range, C, eta, V.kernel_scale(K), n)
    if "scale" in params:
        sc = params["scale"]
        if isinstance(sc, bool) or not isinstance(sc, (int, float)) or not math.isfinite(sc):
            raise TypeError(f"{path}: parameter 'scale' must be a finite real number")
    if claim.startswith("NR"):
        t, sign = params["t"], params["sign"]
        if isinstance(t, bool) or not isinstance(t, (int, float)) or t != int(t) or t < 0 \
                or t > 100000:
            raise ValueError(f"{path}: parameter 't' must be an integer in [0, 100000]")
        if sign not in (1, -1, 1.0, -1.0) or isinstance(sign, bool):
            raise ValueError(f"{path}: parameter 'sign' must be +1 or -1")
    feas = V.feasibility_tolerance(C, n)
    for name in ARRAYS[claim][2:]:
        v = _real_array(path, name, arrays[name], 1)
        if v.size != n:
            raise ValueError(f"{path}: {name} has length {v.size}, expected {n}")
        arrays[name] = v
    if task == "p3":
        lab = arrays["labels"]
        if not np.all(lab == np.round(lab)):
            raise ValueError(f"{path}: cluster labels must be integers")
        return
    if task == "svm":
        for name in ARRAYS[claim][2:]:
            a = arrays[name]
            viol = max(abs(float(y @ a)), -float(a.min()), float(a.max()) - C)
            if viol > feas:
                raise ValueError(f"{path}: {name} is not feasible (max(|y'a|, -min a, max a - C)"
                                 f" = {viol:.3g} > 1e-9 C sqrt(n))")
        return
    for s_ in ("1", "2"):
        ah, ac = arrays["ah" + s_], arrays["ac" + s_]
        viol = max(abs(float(ah.sum() - ac.sum())), -float(min(ah.min(), ac.min())),
                   float(max(ah.max(), ac.max())) - C)
        if viol > feas:
            raise ValueError(f"{path}: (ah{s_}, ac{s_}) is not feasible ({viol:.3g} > "
                             "1e-9 C sqrt(n))")


def load_counterexample(path, known=None):
    """Load and validate a counterexample file; returns ``(claim, arrays, params)``.

    Raises
    ------
    ValueError
        Unreadable, truncated or malformed file, unknown claim or format version, an invalid
        instance (``docs/validity.md``) or an infeasible stored point.
    TypeError
        A value of the wrong kind (e.g. a string where a number is expected).
    """
    known = ARRAYS if known is None else known
    z = _read_members(path)
    for k in _META:
        if k not in z:
            raise ValueError(f"{path}: not a counterexample file (no {k!r} entry)")
    claim_a, ver_a, par_a = z.pop("claim"), z.pop("format_version"), z.pop("params_json")
    if claim_a.shape != () or claim_a.dtype.kind != "U":
        raise ValueError(f"{path}: 'claim' must be a string")
    claim = str(claim_a)
    if claim not in known:
        raise ValueError(f"{path}: unknown claim {claim!r} (known: {', '.join(known)})")
    if ver_a.shape != () or ver_a.dtype.kind not in "iu" or int(ver_a) not in FORMAT_VERSIONS:
        raise ValueError(f"{path}: unsupported format_version {ver_a!r} (supported: "
                         f"{FORMAT_VERSIONS})")
    if par_a.shape != () or par_a.dtype.kind != "U":
        raise ValueError(f"{path}: 'params_json' must be a string")
    try:
        params = json.loads(str(par_a))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: params_json is not valid JSON ({exc})") from None
    if not isinstance(params, dict):
        raise ValueError(f"{path}: params_json must be a JSON object")
    validate(path, claim, z, params)
    return claim, z, params
