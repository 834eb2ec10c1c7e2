"""Strict reading of counterexample files (``counterexample_<claim>[_degenerate].npz``).

A counterexample file is an ``.npz`` archive written by :func:`._common.save_counterexample`:
a 0-d string ``claim``, a 0-d integer ``format_version`` (1), a 0-d string ``params_json``
(a JSON object of scalars) and the claim's real arrays (:data:`ARRAYS`).  The reader

* never unpickles (object arrays are refused from the header, before any data is read);
* refuses a member whose header announces more than :data:`MAX_ELEMENTS` entries (no
  allocation from a forged header);
* turns every low-level failure (truncated archive, bad CRC, short data, bad JSON) into a
  :class:`ValueError` naming the file and the problem;
* validates the instance by the project's rule (``docs/validity.md``): the kernel matrix, the
  labels or targets, the scalars and their representable range, and the feasibility of the
  stored dual points; a bad value is a ``ValueError``, a wrong kind of value a ``TypeError``.
"""

from __future__ import annotations

import json
import math
import zipfile
import zlib

import numpy as np

MAX_ELEMENTS = 4_000_000  # n <= 2000 for K; counterexamples are small
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
    """All members of the archive as arrays (header-checked; never unpickled)."""
    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such file") from None
    except (OSError, zipfile.BadZipFile, EOFError) as exc:
        raise ValueError(f"{path}: not a readable .npz archive ({exc})") from None
    out = {}
    with zf:
        for name in zf.namelist():
            if not name.endswith(".npy") or "/" in name:
                raise ValueError(f"{path}: unexpected archive member {name!r}")
            key = name[:-4]
            try:
                with zf.open(name) as fh:
                    major, _ = np.lib.format.read_magic(fh)
                    reader = (np.lib.format.read_array_header_1_0 if major == 1
                              else np.lib.format.read_array_header_2_0)
                    shape, _, dtype = reader(fh)
                if dtype.hasobject:
                    raise ValueError(f"{path}: member {key!r} holds Python objects (refused: "
                                     "files are never unpickled)")
                if math.prod(shape) > MAX_ELEMENTS:
                    raise ValueError(f"{path}: member {key!r} announces shape {shape}, more "
                                     f"than {MAX_ELEMENTS} entries")
                with zf.open(name) as fh:
                    out[key] = np.lib.format.read_array(fh, allow_pickle=False)
            except ValueError as exc:
                if str(exc).startswith(str(path)):
                    raise
                raise ValueError(f"{path}: member {key!r} is malformed or truncated "
                                 f"({exc})") from None
            except (OSError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
                raise ValueError(f"{path}: member {key!r} is truncated or corrupt "
                                 f"({exc})") from None
    return out


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
    v = params[name]
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{path}: parameter {name!r} must be a real number, got {v!r}")
    v = float(v)
    if not math.isfinite(v) or (v <= 0 if positive else v < 0):
        raise ValueError(f"{path}: parameter {name!r} must be finite and "
                         f"{'> 0' if positive else '>= 0'}, got {v!r}")
    return v


def check_kernel(path, K):
    """``docs/validity.md``, "Kernel matrix": real, square, finite, symmetric and PSD within
    relative tolerances; returns ``(K + K') / 2``."""
    u = np.finfo(K.dtype).eps if K.dtype.kind == "f" and K.dtype.itemsize < 8 else 2.2e-16
    K = _real_array(path, "K", K, 2)
    n = K.shape[0]
    if n < 1 or K.shape[1] != n:
        raise ValueError(f"{path}: K must be square n x n with n >= 1, got shape {K.shape}")
    s = float(np.max(np.abs(K)))
    if s == 0.0:
        return K
    if float(np.max(np.abs(K - K.T))) > max(1e-10, 10 * u) * s:
        raise ValueError(f"{path}: K is not symmetric (relative tolerance max(1e-10, 10 u))")
    K = 0.5 * (K + K.T)
    lmin = float(np.linalg.eigvalsh(K)[0])
    if lmin < -max(1e-8, u) * n * s:
        raise ValueError(f"{path}: K is not positive semi-definite (lambda_min = {lmin:.3g})")
    return K


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
    y = _real_array(path, "y", arrays["y"], 1)
    if y.size != n:
        raise ValueError(f"{path}: y has length {y.size}, K is {n} x {n}")
    task = TASK[claim]
    if task != "svr":
        if not np.all(np.isin(y, (-1.0, 1.0))):
            raise ValueError(f"{path}: labels y must be -1 or +1")
        if task == "svm" and (np.all(y == 1) or np.all(y == -1)):
            raise ValueError(f"{path}: labels y must contain both classes")
    arrays["y"] = y
    C = _scalar(path, params, "C", True)
    eta = _scalar(path, params, "eta", True)
    for name in PARAMS[claim]:
        if name not in params:
            raise ValueError(f"{path}: parameter {name!r} is missing")
        if name in ("tau", "epsilon"):
            _scalar(path, params, name, False)
    s = float(np.max(np.abs(K)))
    if s > 0 and not (1e-100 <= C * s * n <= 1e100 and 1e-100 <= eta / (C * C * s) <= 1e100):
        raise ValueError(f"{path}: C = {C:g}, eta = {eta:g}, max|K| = {s:g} are outside the "
                         "representable range (docs/validity.md)")
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
    feas = 1e-9 * C * math.sqrt(n)
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
