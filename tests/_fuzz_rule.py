"""The rule of docs/validity.md, written for the fuzz tests independently of dank_fast.

:func:`kernel_rule`, :func:`labels_rule`, :func:`scalar_rule`, ... decide validity from the
document, not from ``dank_fast._validation`` (eigenvalues instead of a Cholesky factorisation,
exact rationals for the representable range). Each returns the list of violations
``(parameter name, expected exception types)`` and whether the input lies within a factor 2 of
a relative tolerance (then both outcomes are allowed).
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

# --------------------------------------------------------------------------- the rule
U64 = 2.0**-52
TYPE = (TypeError,)
VALUE = (ValueError,)
EITHER = (TypeError, ValueError)


@dataclass
class Verdict:
    """Violations of docs/validity.md: ``[(name, expected exception types)]``, and ``maybe``:
    parameters within rounding of a tolerance, which may be accepted or rejected."""

    violations: list = field(default_factory=list)
    maybe: list = field(default_factory=list)

    def add(self, name: str, exc=VALUE) -> None:
        self.violations.append((name, exc))

    def unsure(self, name: str, exc=VALUE) -> None:
        self.maybe.append((name, exc))

    def merge(self, other: Verdict) -> Verdict:
        self.violations += other.violations
        self.maybe += other.maybe
        return self

    @property
    def ambiguous(self) -> bool:
        return bool(self.maybe)

    @property
    def valid(self) -> bool:
        return not self.violations


def dtype_u(dtype) -> float:
    """``u`` of docs/validity.md: float16/float32 their own epsilon, otherwise 2^-52."""
    dtype = np.dtype(dtype)
    if dtype == np.float16:
        return 2.0**-10
    if dtype == np.float32:
        return 2.0**-23
    return U64


def as_array(a):
    """``np.asarray(a)`` or None when numpy cannot make a rectangular array of it."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(a)
    except (TypeError, ValueError):
        return None


def real_array_rule(a, name: str, ndim: int | None, v: Verdict, *, allow_bool=False):
    """dtype kind f/i/u (TypeError), dimension, finiteness; returns the float64 array."""
    arr = as_array(a)
    if arr is None:
        v.add(name, EITHER)
        return None
    kinds = "fiu" + ("b" if allow_bool else "")
    if arr.dtype.kind not in kinds:
        v.add(name, TYPE)
        return None
    if ndim is not None and arr.ndim != ndim:
        v.add(name, VALUE)
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        f = arr.astype(np.float64)
    if not np.all(np.isfinite(f)):
        v.add(name, VALUE)
        return None
    return f


def kernel_rule(K, *, name: str = "K", min_n: int = 1) -> tuple[Verdict, np.ndarray | None]:
    """Rule of docs/validity.md for ``K``; returns the verdict and ``(K + K')/2`` in float64.

    Within a factor 2 of either relative tolerance the verdict is ``ambiguous``.
    """
    v = Verdict()
    arr = as_array(K)
    if arr is None or arr.dtype.kind not in "fiu":
        v.add(name, EITHER if arr is None else TYPE)
        return v, None
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] < min_n:
        v.add(name, VALUE)
        return v, None
    with np.errstate(over="ignore", invalid="ignore"):
        A = arr.astype(np.float64)
    if not np.all(np.isfinite(A)):
        v.add(name, VALUE)
        return v, None
    n = A.shape[0]
    s = float(np.max(np.abs(A)))
    if s == 0.0:
        return v, A.copy()
    u = dtype_u(arr.dtype)
    eps_sym, eps_psd = max(1e-10, 10 * u), max(1e-8, u)
    B = A / s  # exact enough: the tolerances are relative
    asym = float(np.max(np.abs(B - B.T)))
    if asym > 2 * eps_sym:
        v.add(name, VALUE)
        return v, None
    if asym > 0.5 * eps_sym:
        v.unsure(name)
    S = 0.5 * (B + B.T)
    lmin = float(np.linalg.eigvalsh(S)[0])
    thr = eps_psd * n
    if lmin < -2 * thr:
        v.add(name, VALUE)
        return v, None
    if lmin < -0.5 * thr:
        v.unsure(name)
    return v, 0.5 * A + 0.5 * A.T


def labels_rule(y, n: int | None, *, require_both: bool, name: str = "y") -> Verdict:
    """P1 (both classes) / P3 labels: real 1-D, length n, entries exactly -1 or +1."""
    v = Verdict()
    f = real_array_rule(y, name, 1, v)
    if f is None:
        return v
    if n is not None and f.size != n:
        v.add(name, VALUE)
    elif np.any((f != 1.0) & (f != -1.0)):
        v.add(name, VALUE)
    elif require_both and f.size and (np.all(f == 1.0) or np.all(f == -1.0)):
        v.add(name, VALUE)
    return v


def targets_rule(y, n: int | None, name: str = "y") -> Verdict:
    """P2 targets: a finite real 1-D array of length n."""
    v = Verdict()
    f = real_array_rule(y, name, 1, v)
    if f is not None and n is not None and f.size != n:
        v.add(name, VALUE)
    return v


def scalar_rule(x, name: str, kind: str) -> Verdict:
    """``kind``: ``pos`` (C, eta, tol), ``nonneg`` (tau, epsilon), ``int`` (iteration limits).

    A 0-d ndarray is ambiguous (not named by the rule; either a TypeError or accepted).
    """
    v = Verdict()
    if isinstance(x, np.ndarray) and x.ndim == 0 and x.dtype.kind in "fiu":
        v.unsure(name, TYPE)
        x = x[()]
        if kind == "int" and not isinstance(x, numbers.Integral):
            v.add(name, TYPE)
            return v
    if kind == "int":
        if isinstance(x, bool | np.bool_) or not isinstance(x, numbers.Integral):
            v.add(name, TYPE)
        elif x < 1:
            v.add(name, VALUE)
        return v
    if isinstance(x, bool | np.bool_) or not isinstance(x, numbers.Real):
        v.add(name, TYPE)
        return v
    try:
        f = float(x)
    except OverflowError:
        f = math.inf
    if not math.isfinite(f) or (f <= 0 if kind == "pos" else f < 0):
        v.add(name, VALUE)
    return v


_LO, _HI = Fraction(1e-100), Fraction(1e100)


def range_rule(C: float, eta: float, s: float, n: int) -> Verdict:
    """Representable range, exactly (rationals); ambiguous within 1e-9 of an end."""
    v = Verdict()
    if s == 0.0:
        return v
    fC, fe, fs = Fraction(C), Fraction(eta), Fraction(s)
    for q in (fC * fs * n, fe / (fC * fC * fs)):
        if not _LO <= q <= _HI:
            v.add("C", VALUE)  # the message names C, eta and max|K| together
        if abs(q / _LO - 1) < Fraction(1, 10**9) or abs(q / _HI - 1) < Fraction(1, 10**9):
            v.unsure("C")
    return v


def box_rule(C, n: int | None) -> Verdict:
    """``C`` of P1, P2, P3: a scalar ``> 0`` (:func:`scalar_rule`) or a 1-D real array of ``n``
    finite entries ``> 0`` (per-sample boxes, docs/validity.md).  A valid vector is only
    ``unsure`` (an entry point that takes a scalar only may refuse it with a ``TypeError``;
    dank_fast's solvers and certificates take it); a vector of another length
    or with a bad entry is refused (either type: a ``TypeError`` for a non-numeric array, a
    ``ValueError`` for a wrong length or entry)."""
    if not (isinstance(C, list | tuple) or (isinstance(C, np.ndarray) and C.ndim >= 1)):
        return scalar_rule(C, "C", "pos")
    v = Verdict()
    arr = as_array(C)
    ok = (arr is not None and arr.ndim == 1 and arr.dtype.kind in "fiu" and n is not None
          and arr.size == n)
    if ok:
        with np.errstate(over="ignore"):
            f = arr.astype(np.float64)
        ok = bool(np.all(np.isfinite(f)) and np.all(f > 0))
    if ok:
        v.unsure("C", TYPE)
    else:
        v.add("C", EITHER)
    return v


def cluster_labels_rule(labels, n: int) -> Verdict:
    """P3 ``labels=``: 1-D, length n, values equal to themselves (no NaN, no None)."""
    v = Verdict()
    if isinstance(labels, str | bytes | set | frozenset | dict):
        v.add("labels", TYPE)
        return v
    if isinstance(labels, np.ndarray):
        arr = labels
    else:
        try:
            items = list(labels)
        except TypeError:
            v.add("labels", TYPE)
            return v
        arr = np.empty(len(items), dtype=object)
        for i, x in enumerate(items):
            arr[i] = x
    if arr.ndim != 1 or arr.shape[0] != n:
        v.add("labels", VALUE)
        return v
    for x in arr.tolist():
        if x is None:
            v.add("labels", VALUE)
            return v
        if isinstance(x, list | dict | set | np.ndarray):
            v.add("labels", TYPE)
            return v
        try:
            if not x == x:
                v.add("labels", VALUE)
                return v
        except Exception:
            v.add("labels", EITHER)
            return v
    return v


def huge_int(*values) -> bool:
    """Some value is a Python int beyond the float range (``float(v)`` raises)."""
    return any(isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2**1024
               for v in values)


def features_rule(X, name: str = "X", *, allow_bool: bool = True) -> Verdict:
    """A 2-D finite real (or boolean) array with at least one row and one column."""
    v = Verdict()
    f = real_array_rule(X, name, 2, v, allow_bool=allow_bool)
    if f is not None and (f.shape[0] == 0 or f.shape[1] == 0):
        v.add(name, VALUE)
    return v


def kernel_spec_rule(kw: dict, *, precomputed_ok: bool) -> Verdict:
    """The kernel docs: a known kernel name; a Gaussian width > 0 (one of sigma/gamma) whose
    gamma = 1/(2 sigma^2) is finite; for "poly" an integer degree in [1, 2^63 - 1] (numpy's
    exponent range) and a finite coef0 >= 0 (else not PSD, docs/validity.md)."""
    v = Verdict()
    kernel = kw.get("kernel", "rbf")
    allowed = ("rbf", "gaussian", "linear", "poly") + (("precomputed",) if precomputed_ok
                                                         else ())
    if not (isinstance(kernel, str) and kernel in allowed):
        v.add("kernel", EITHER)
        return v
    sigma, gamma = kw.get("sigma"), kw.get("gamma")
    if kernel in ("rbf", "gaussian", "poly"):
        if kernel == "poly" and sigma is not None:
            v.add("sigma", EITHER)
        if sigma is not None and gamma is not None:
            v.add("sigma", EITHER)
            v.add("gamma", EITHER)
        if sigma is not None:
            vs = scalar_rule(sigma, "sigma", "pos")
            if vs.valid:
                den = 2.0 * float(sigma) * float(sigma)  # gamma = 1/den: finite, > 0
                if not (den > 0 and math.isfinite(1.0 / den)):
                    vs.add("sigma", VALUE)
            v.merge(vs)
        if gamma is not None:
            v.merge(scalar_rule(gamma, "gamma", "pos"))
    if kernel == "poly":
        deg = kw.get("degree", 3)
        if isinstance(deg, bool | np.bool_) or not isinstance(deg, numbers.Real):
            v.add("degree", TYPE)
        elif not isinstance(deg, numbers.Integral) and not (
                math.isfinite(float(deg)) and int(deg) == deg):
            v.add("degree", VALUE)
        elif deg < 1 or deg > 2**63 - 1:
            v.add("degree", VALUE)
        c0 = kw.get("coef0", 1.0)
        if isinstance(c0, bool | np.bool_) or not isinstance(c0, numbers.Real):
            v.add("coef0", TYPE)
        elif not math.isfinite(float(c0)) or c0 < 0:
            v.add("coef0", VALUE)
    return v
