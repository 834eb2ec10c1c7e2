"""Shared machinery of the fuzz tests (``tests/test_fuzz_*.py``).

Three parts:

* **Profiles.** ``DANK_FUZZ_PROFILE`` unset (or ``default``): a few examples per entry point,
  derandomized, so that all fuzz tests together stay well under a minute on 2 shared cores.
  ``DANK_FUZZ_PROFILE=slow``: every fuzz test is marked ``slow`` (so the default run, which
  deselects ``slow``, skips it) and runs ``SLOW_FACTOR`` times as many random examples::

      DANK_FUZZ_PROFILE=slow python -m pytest -m slow tests/test_fuzz_*.py

  ``DANK_FUZZ_SLOW_LOG=path`` appends the inputs of every example slower than 2 s.
  ``DANK_FUZZ_STATS=path.json`` writes the number of examples run per entry point and outcome
  (``ok``: a certified result, ``rejected``: a named ValueError/TypeError, ``known-bug``: an
  input that hits a bug listed in :data:`KNOWN_BUGS`) when the process exits.
* **The rule.** :func:`kernel_rule`, :func:`labels_rule`, :func:`scalar_rule`, ... decide
  validity *from docs/validity.md*, written here independently of ``dank_fast._validation``
  (eigenvalues instead of a Cholesky factorisation, exact rationals for the representable
  range). Each returns the list of violations ``(parameter name, expected exception types)``
  and whether the input lies within a factor 2 of a relative tolerance (then both outcomes
  are allowed).
* **Strategies** for malformed and extreme inputs: arrays of every dtype and shape, NaN/inf
  placement, scaled indefinite / non-symmetric kernels, rank-one and zero kernels, duplicate
  points, labels, scalars, cluster labels.

Every example runs under :func:`hard_timeout` (``signal.setitimer``): a hang is a failure,
even when the code under test catches the timeout exception (a flag records it).
"""

from __future__ import annotations

import atexit
import json
import math
import numbers
import os
import re
import signal
import time
import warnings
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

# --------------------------------------------------------------------------- profiles
PROFILE = os.environ.get("DANK_FUZZ_PROFILE", "default").strip().lower() or "default"
if PROFILE not in ("default", "slow"):
    raise RuntimeError(f"DANK_FUZZ_PROFILE must be 'default' or 'slow', got {PROFILE!r}")
SLOW = PROFILE == "slow"
#: examples in the slow profile = SLOW_FACTOR x those of the default profile
SLOW_FACTOR = int(os.environ.get("DANK_FUZZ_FACTOR", "40"))
#: hard limit of one example (seconds); generous because the 2 cores are shared
EXAMPLE_TIMEOUT = 60.0

_HEALTH = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large,
           HealthCheck.function_scoped_fixture]
settings.register_profile(
    "dank-fuzz-default", max_examples=10, derandomize=True, deadline=None,
    suppress_health_check=_HEALTH, print_blob=True,
)
settings.register_profile(
    "dank-fuzz-slow", max_examples=10 * SLOW_FACTOR, derandomize=False, deadline=None,
    suppress_health_check=_HEALTH, print_blob=True,
)


def fuzz_settings(n: int) -> settings:
    """Settings of a fuzz test with ``n`` examples in the default profile."""
    parent = settings.get_profile("dank-fuzz-slow" if SLOW else "dank-fuzz-default")
    return settings(parent, max_examples=n * SLOW_FACTOR if SLOW else n)


def fuzz(n: int):
    """Decorator: the fuzz settings plus the ``slow`` mark in the slow profile."""

    def wrap(fn):
        fn = fuzz_settings(n)(fn)
        return pytest.mark.slow(fn) if SLOW else fn

    return wrap


# --------------------------------------------------------------------------- statistics
STATS: Counter = Counter()
SLOWEST: dict = {}  # entry -> (seconds, short description) of its slowest example


def record(entry: str, outcome: str) -> None:
    """Count one example of ``entry`` ending in ``outcome`` (ok / rejected / known-bug)."""
    STATS[(entry, outcome)] += 1


def _dump_stats() -> None:
    path = os.environ.get("DANK_FUZZ_STATS")
    if not path or not STATS:
        return
    table: dict = {}
    for (entry, outcome), k in sorted(STATS.items()):
        table.setdefault(entry, {})[outcome] = k
    try:
        old = json.loads(open(path).read()) if os.path.exists(path) else {}
    except (OSError, ValueError):
        old = {}
    for entry, outs in table.items():  # accumulate over pytest processes
        for outcome, k in outs.items():
            old.setdefault(entry, {})[outcome] = old.get(entry, {}).get(outcome, 0) + k
    for entry, (sec, _) in SLOWEST.items():
        cur = old.setdefault(entry, {})
        cur["max_seconds"] = round(max(cur.get("max_seconds", 0.0), sec), 3)
    with open(path, "w") as fh:
        json.dump(old, fh, indent=1, sort_keys=True)


atexit.register(_dump_stats)


# --------------------------------------------------------------------------- time limit
class FuzzTimeout(Exception):
    """Raised by :func:`hard_timeout` when an example runs too long."""


_TIMED_OUT = {"flag": False}


@contextmanager
def hard_timeout(seconds: float = EXAMPLE_TIMEOUT):
    """Fail the example if the body runs longer than ``seconds`` (SIGALRM, main thread).

    The handler raises :class:`FuzzTimeout` and sets a flag, so a timeout swallowed by the
    code under test (``except Exception``) is still reported when the body returns.
    """
    if seconds is None or not hasattr(signal, "setitimer"):
        yield
        return
    _TIMED_OUT["flag"] = False

    def handler(signum, frame):
        _TIMED_OUT["flag"] = True
        raise FuzzTimeout(f"example exceeded the hard time limit of {seconds} s (a hang)")

    old = signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    if _TIMED_OUT["flag"]:
        pytest.fail(f"example exceeded the hard time limit of {seconds} s (a hang), and the "
                    "timeout was swallowed by the code under test")


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


# --------------------------------------------------------------------------- assertions
def names(msg: str, name: str) -> bool:
    """``name`` occurs in ``msg`` as a word (``C`` in ``"C = 0"``, not in ``"Casting"``)."""
    if name == "K":  # kernels may be called K, X (precomputed) or "kernel"
        return bool(re.search(r"(?<![A-Za-z_])(K|X|kernel)(?![A-Za-z_])", msg))
    return bool(re.search(rf"(?<![A-Za-z_]){re.escape(name)}(?![A-Za-z_])", msg))


def _note_time(entry: str, t0: float, info) -> None:
    sec = time.perf_counter() - t0
    if sec > SLOWEST.get(entry, (0.0, ""))[0]:
        SLOWEST[entry] = (sec, "")
    log = os.environ.get("DANK_FUZZ_SLOW_LOG")
    if sec > 2.0 and log:  # for finding the inputs that make an entry point slow
        with np.printoptions(threshold=10**6, precision=17), open(log, "a") as fh:
            fh.write(f"[fuzz] slow example of {entry}: {sec:.1f} s: {info!r}\n")


def call(entry: str, verdict: Verdict, fn, *, timeout: float = EXAMPLE_TIMEOUT, info=None,
         namer=None):
    """Run ``fn()`` and check the contract against ``verdict``.

    Invalid input must raise ``ValueError``/``TypeError`` naming a violated parameter (with the
    exception type the rule gives it); valid input must not raise; inputs within a rounding
    band of a tolerance may do either. Any other exception propagates (a failure). ``namer``
    (default :func:`names`) decides whether a message names a parameter. Returns
    ``(result or None, list of warnings)``.
    """
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with hard_timeout(timeout):
            try:
                res = fn()
                _note_time(entry, t0, info)
            except (ValueError, TypeError) as exc:
                _note_time(entry, t0, info)
                msg = str(exc)
                allowed = verdict.violations + verdict.maybe
                if not allowed:
                    raise AssertionError(
                        f"{entry}: valid input rejected with {type(exc).__name__}: {msg}"
                    ) from exc
                namer = namer or names
                ok = [nm for nm, types in allowed if namer(msg, nm) and isinstance(exc, types)]
                if not ok:
                    raise AssertionError(
                        f"{entry}: {type(exc).__name__}({msg!r}) does not name a violated "
                        f"parameter with the right exception type; violations: "
                        f"{[(nm, [t.__name__ for t in ts]) for nm, ts in allowed]}"
                    ) from exc
                record(entry, "rejected")
                return None, caught
    if verdict.violations:
        raise AssertionError(
            f"{entry}: invalid input accepted (silently); violations: "
            f"{[nm for nm, _ in verdict.violations]}"
        )
    record(entry, "ok")
    return res, caught


def feasibility(alpha, C: float, eq=None) -> float:
    """``max(|eq'alpha|, -min alpha, max alpha - C, 0)`` (docs/validity.md)."""
    alpha = np.asarray(alpha, dtype=np.float64)
    v = max(float(-alpha.min()), float(alpha.max() - C), 0.0) if alpha.size else 0.0
    if eq is not None:
        v = max(v, abs(float(np.asarray(eq, dtype=np.float64) @ alpha)))
    return v


def assert_feasible(alpha, C: float, n: int, eq=None, what: str = "alpha") -> None:
    viol = feasibility(alpha, C, eq)
    assert viol <= 1e-9 * C * math.sqrt(n), (
        f"{what} is infeasible: violation {viol:.3g} > 1e-9 C sqrt(n) = "
        f"{1e-9 * C * math.sqrt(n):.3g}"
    )


def assert_bracket(lower: float, upper: float, what: str = "certificate") -> None:
    assert math.isfinite(lower) and math.isfinite(upper), (what, lower, upper)
    assert lower <= upper, f"{what}: lower {lower!r} > upper {upper!r}"


def assert_overlap(a: tuple, b: tuple, scale: float, what: str = "") -> None:
    """Brackets ``a = (lo, up)`` and ``b`` both contain ``v*``: they must overlap.

    The slack is ``1e-9 * scale`` (``scale``: the sizes of the numbers the brackets are formed
    from), far below any sign error or missing term.
    """
    slack = 1e-9 * scale
    assert a[0] <= b[1] + slack and b[0] <= a[1] + slack, (
        f"{what}: certified brackets do not overlap: {a} vs {b} (slack {slack:.3g})"
    )


# --------------------------------------------------------------------------- strategies
FLOAT_DTYPES = [np.float64, np.float32, np.float16, np.longdouble]
INT_DTYPES = [np.int64, np.int32, np.int8, np.uint8, np.uint64]


def log_uniform(lo: float, hi: float):
    """Floats ``10^x`` for ``x`` uniform in ``[lo, hi]``."""
    return st.floats(lo, hi, allow_nan=False).map(lambda e: float(10.0**e))


@st.composite
def psd_kernels(draw, n: int | None = None, max_n: int = 7, extreme: bool = False):
    """A valid PSD kernel of a chosen structure, possibly scaled (1e-12 .. 1e12) or cast."""
    if n is None:
        n = draw(st.integers(1, max_n))
    kind = draw(st.sampled_from(["gaussian", "gaussian", "linear", "rank-one", "zero",
                                 "duplicates", "identity", "integer"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    d = draw(st.integers(1, 3))
    if kind in ("gaussian", "duplicates"):
        X = rng.normal(size=(n, d))
        if kind == "duplicates" and n > 1:
            X[rng.integers(0, n, size=n // 2 + 1)] = X[0]
        sigma = float(10.0 ** draw(st.floats(-1, 1)))
        D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
        K = np.exp(-D / (2 * sigma**2))
    elif kind == "linear":
        X = rng.normal(size=(n, d))
        K = X @ X.T
    elif kind == "rank-one":
        u = rng.normal(size=n)
        u[rng.random(n) < 0.2] = 0.0
        K = np.outer(u, u)
    elif kind == "zero":
        K = np.zeros((n, n))
    elif kind == "identity":
        K = np.diag(rng.random(n) + draw(st.sampled_from([0.0, 1.0])))
    else:
        Xi = rng.integers(-3, 4, size=(n, d))
        K = (Xi @ Xi.T).astype(draw(st.sampled_from([np.int64, np.int32, np.int8])))
        return K
    K = 0.5 * (K + K.T)
    if extreme:
        scale = float(10.0 ** draw(st.integers(-150, 150)))
    else:
        scale = float(10.0 ** draw(st.integers(-12, 12)))
    K = K * scale
    dtype = draw(st.sampled_from([np.float64, np.float64, np.float64, np.float32,
                                  np.float16, np.longdouble]))
    with np.errstate(over="ignore", under="ignore"):
        K = K.astype(dtype)
    if draw(st.booleans()) and n > 1 and K.dtype == np.float64:
        K = np.asfortranarray(K)
    return K


@st.composite
def bad_kernels(draw, n: int | None = None, max_n: int = 7):
    """An invalid (or borderline) kernel: asymmetric, indefinite, non-finite, wrong kind/shape."""
    if n is None:
        n = draw(st.integers(1, max_n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = float(10.0 ** draw(st.integers(-12, 12)))
    kind = draw(st.sampled_from(["asym", "indefinite", "nan", "inf", "complex", "bool",
                                 "object", "str", "0d", "1d", "empty", "nonsquare", "3d",
                                 "none", "ragged", "neg-eig-small", "asym-small"]))
    base = rng.normal(size=(n, n))
    base = base @ base.T + np.eye(n)
    if kind == "asym":
        E = rng.normal(size=(n, n))
        E[np.diag_indices(n)] = 0.0
        if n == 1:
            return np.array([[np.nan]]) if draw(st.booleans()) else np.array([[-1.0]]) * scale
        return (base + 10.0 ** draw(st.floats(-6, 0)) * np.abs(base).max() * E) * scale
    if kind == "asym-small":  # near the symmetry tolerance: either outcome is allowed
        E = np.triu(rng.normal(size=(n, n)), 1)
        return (base + 10.0 ** draw(st.floats(-12, -8)) * np.abs(base).max() * E) * scale
    if kind == "indefinite":
        w, Q = np.linalg.eigh(base)
        w[0] = -10.0 ** draw(st.floats(-5, 0)) * w[-1]
        K = (Q * w) @ Q.T
        return 0.5 * (K + K.T) * scale
    if kind == "neg-eig-small":  # around the PSD tolerance
        w, Q = np.linalg.eigh(base)
        w[0] = -10.0 ** draw(st.floats(-10, -6)) * n * w[-1]
        K = (Q * w) @ Q.T
        return 0.5 * (K + K.T) * scale
    if kind in ("nan", "inf"):
        K = base * scale
        i, j = rng.integers(0, n, size=2)
        val = np.nan if kind == "nan" else draw(st.sampled_from([np.inf, -np.inf]))
        K[i, j] = val
        if draw(st.booleans()):
            K[j, i] = val
        return K
    if kind == "complex":
        return (base * scale).astype(complex) + 1j * draw(st.sampled_from([0.0, 1e-300, 1.0]))
    if kind == "bool":
        return np.eye(n, dtype=bool)
    if kind == "object":
        return (base * scale).astype(object)
    if kind == "str":
        return (base * scale).astype(str)
    if kind == "0d":
        return np.float64(scale)
    if kind == "1d":
        return np.ones(n) * scale
    if kind == "empty":
        return np.zeros(draw(st.sampled_from([(0, 0), (0,), (0, 3)])))
    if kind == "nonsquare":
        return np.ones((n, n + 1)) * scale
    if kind == "3d":
        return np.ones((n, n, 1)) * scale
    if kind == "none":
        return None
    return [[1.0] * n] * (n - 1) + [[1.0] * (n + 1)]  # ragged


def kernels(max_n: int = 7, n: int | None = None, extreme: bool = False, good=None):
    """Valid kernels (``good=True``), invalid or borderline ones (``False``), or either."""
    if good is True:
        return psd_kernels(n=n, max_n=max_n, extreme=extreme)
    if good is False:
        return bad_kernels(n=n, max_n=max_n)
    return st.one_of(psd_kernels(n=n, max_n=max_n, extreme=extreme),
                     bad_kernels(n=n, max_n=max_n))


def bad_params(*params: str, max_bad: int = 2):
    """Which parameters of an example to corrupt: none in about 60% of the examples."""
    some = st.frozensets(st.sampled_from(params), min_size=1, max_size=max_bad)
    return st.integers(0, 9).flatmap(lambda k: st.just(frozenset()) if k < 6 else some)


@st.composite
def pm1_labels(draw, n: int, *, good: bool = True):
    """Labels for P1/P3: +-1 in various containers (``good``), or malformed ones."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    if n >= 2 and draw(st.booleans()):
        y[0], y[1] = 1.0, -1.0
    if good:
        form = draw(st.sampled_from(["f64", "int", "list", "f32", "i8"]))
        if form == "int":
            return y.astype(np.int64)
        if form == "list":
            return [int(v) for v in y]
        if form == "f32":
            return y.astype(np.float32)
        if form == "i8":
            return y.astype(np.int8)
        return y
    kind = draw(st.sampled_from(["one-class", "strings", "bools", "01", "nan", "short",
                                 "long", "2d", "complex", "object", "twos", "none", "inf"]))
    if kind == "one-class":
        return np.full(n, draw(st.sampled_from([1.0, -1.0])))
    if kind == "strings":
        return np.where(y > 0, "a", "b")
    if kind == "bools":
        return y > 0
    if kind == "01":
        return (y > 0).astype(np.int64)
    if kind in ("nan", "inf"):
        y = y.copy()
        y[draw(st.integers(0, n - 1))] = np.nan if kind == "nan" else np.inf
        return y
    if kind == "short":
        return y[:-1]
    if kind == "long":
        return np.append(y, 1.0)
    if kind == "2d":
        return y[:, None]
    if kind == "complex":
        return y.astype(complex)
    if kind == "object":
        return y.astype(object)
    if kind == "twos":
        return 2.0 * y
    return None


@st.composite
def real_targets(draw, n: int, *, good: bool = True):
    """Targets for P2: finite reals, possibly huge or tiny (``good``), or malformed ones."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    y = rng.normal(size=n) * float(10.0 ** draw(st.integers(-6, 6)))
    if good:
        form = draw(st.sampled_from(["f64", "const", "int", "list", "f32"]))
        if form == "const":
            return np.full(n, y[0])
        if form == "int":
            return np.round(y).astype(np.int64)
        if form == "list":
            return y.tolist()
        if form == "f32":
            return y.astype(np.float32)
        return y
    kind = draw(st.sampled_from(["nan", "inf", "strings", "bools", "short", "2d", "complex",
                                 "object", "none"]))
    if kind in ("nan", "inf"):
        y[draw(st.integers(0, n - 1))] = np.nan if kind == "nan" else -np.inf
        return y
    if kind == "strings":
        return y.astype(str)
    if kind == "bools":
        return y > 0
    if kind == "short":
        return y[1:]
    if kind == "2d":
        return y[None, :]
    if kind == "complex":
        return y + 0j
    if kind == "object":
        return y.astype(object)
    return None


def good_positive(lo: float = -4, hi: float = 4):
    """Valid positive reals of several Python/NumPy types."""
    return st.one_of(
        log_uniform(lo, hi),
        log_uniform(lo, hi).map(np.float64),
        log_uniform(max(lo, -30), min(hi, 30)).map(np.float32),
        st.integers(1, 1000),
        st.integers(1, 1000).map(np.int64),
    )


BAD_SCALARS = [0, 0.0, -1.0, -1e-300, float("nan"), float("inf"), -float("inf"), True, False,
               np.bool_(True), "1.0", None, 1 + 0j, complex(1, 1), [1.0], np.float64("nan"),
               10**400, -(10**400), np.array([1.0]), np.array(1.0), b"1"]


def positive_scalars(lo: float = -4, hi: float = 4, good: bool = True):
    """``C``, ``eta``: valid reals of several types, sometimes extreme (1e-300 .. 1e300, which
    may leave the representable range); or anything from :data:`BAD_SCALARS`."""
    if not good:
        return st.sampled_from(BAD_SCALARS)
    return st.integers(0, 7).flatmap(
        lambda k: log_uniform(-300, 300) if k == 0 else good_positive(lo, hi))


def nonneg_scalars(hi: float = 1.0, good: bool = True):
    """``tau``, ``epsilon``: zero or positive reals (``good``), or bad scalars."""
    if not good:
        return st.sampled_from([v for v in BAD_SCALARS if v is not False and v != 0] + [-0.5])
    return st.one_of(st.just(0.0), st.just(0), log_uniform(-6, hi), log_uniform(-6, hi),
                     log_uniform(-6, hi).map(np.float64))


def iteration_limits(good: bool = True):
    """``max_iter``: None or small integers of several types (``good``), or bad values."""
    if not good:
        return st.sampled_from([0, -1, 1.0, 2.5, True, "10", float("nan"), np.int8(0)])
    return st.one_of(st.none(), st.integers(1, 30), st.integers(1, 30).map(np.int64))


def tolerances(good: bool = True):
    """``tol``: 1e-12 .. 1e-1, or 1e-300 / 1e300 (``good``); or bad values."""
    if not good:
        return st.sampled_from([0.0, -1e-6, float("nan"), float("inf"), "1e-6", True, None])
    return st.one_of(log_uniform(-12, -1), log_uniform(-12, -1), st.sampled_from([1e-300, 1e300]))


@st.composite
def cluster_labels(draw, n: int, *, good: bool = True):
    """P3 ``labels=``: ints, floats, strings, tuples, mixed objects, bools (``good``); or
    NaN, None, wrong length, 2-D, a set, a string, unhashable values."""
    k = draw(st.integers(1, max(1, n)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    codes = rng.integers(0, k, size=n)
    kind = draw(st.sampled_from(["int", "int", "float", "str", "tuple", "mixed", "bool",
                                 "numpy-str"] if good else
                                ["nan", "none", "short", "2d", "set", "string",
                                 "list-values"]))
    if kind == "int":
        return codes if draw(st.booleans()) else codes.tolist()
    if kind == "float":
        return codes.astype(float)
    if kind == "str":
        return [f"c{c}" for c in codes]
    if kind == "numpy-str":
        return np.array([f"c{c}" for c in codes])
    if kind == "tuple":
        return [(int(c), "x") for c in codes]
    if kind == "mixed":
        return [int(c) if c % 2 else f"c{c}" for c in codes]
    if kind == "bool":
        return codes % 2 == 0
    if kind == "nan":
        out = codes.astype(float)
        out[draw(st.integers(0, n - 1))] = np.nan
        return out if draw(st.booleans()) else out.tolist()
    if kind == "none":
        out = codes.tolist()
        out[draw(st.integers(0, n - 1))] = None
        return out
    if kind == "short":
        return codes[:-1]
    if kind == "2d":
        return codes[:, None]
    if kind == "set":
        return set(range(n))
    if kind == "string":
        return ("ab" * n)[:n]
    return [[int(c)] for c in codes]  # list values: not hashable


# --------------------------------------------------------------------------- features, kernels
@st.composite
def features(draw, max_n: int = 7, *, good: bool = True, n: int | None = None):
    """Feature matrices: finite floats/ints/bools with duplicate rows and scales 1e-3 .. 1e3
    (``good``), or NaN/inf, 1-D, empty, no columns, complex, strings."""
    if n is None:
        n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.normal(size=(n, d)) * float(10.0 ** draw(st.integers(-3, 3)))
    if n > 2 and draw(st.booleans()):
        X[1] = X[0]
    kinds = (["f64"] * 4 + ["f32", "int", "bool", "fortran", "list"] if good else
             ["nan", "inf", "1d", "empty", "nocols", "complex", "str", "object", "3d"])
    kind = draw(st.sampled_from(kinds))
    if kind == "f32":
        return X.astype(np.float32)
    if kind == "int":
        return np.round(X).astype(np.int64)
    if kind == "bool":
        return X > 0
    if kind == "fortran":
        return np.asfortranarray(X)
    if kind == "list":
        return X.tolist()
    if kind in ("nan", "inf"):
        X[draw(st.integers(0, n - 1)), 0] = np.nan if kind == "nan" else np.inf
        return X
    if kind == "1d":
        return X[:, 0]
    if kind == "empty":
        return np.zeros((0, d))
    if kind == "nocols":
        return np.zeros((n, 0))
    if kind == "complex":
        return X + 0j
    if kind == "str":
        return X.astype(str)
    if kind == "object":
        return X.astype(object)
    if kind == "3d":
        return X[:, :, None]
    return X


def features_rule(X, name: str = "X", *, allow_bool: bool = True) -> Verdict:
    """A 2-D finite real (or boolean) array with at least one row and one column."""
    v = Verdict()
    f = real_array_rule(X, name, 2, v, allow_bool=allow_bool)
    if f is not None and (f.shape[0] == 0 or f.shape[1] == 0):
        v.add(name, VALUE)
    return v


def _widths():
    return st.floats(-2, 2).map(lambda e: float(10.0**e))


@st.composite
def kernel_specs(draw, *, good: bool = True, precomputed: bool = False):
    """Keyword arguments of FeatureKernel / compute_kernel / the estimators' kernel."""
    names = ["rbf", "gaussian", "linear", "poly"] + (["precomputed"] if precomputed else [])
    kernel = draw(st.sampled_from(names))
    kw: dict = {"kernel": kernel}
    if kernel in ("rbf", "gaussian") and draw(st.booleans()):
        kw[draw(st.sampled_from(["sigma", "gamma"]))] = draw(_widths())
    if kernel == "poly":
        if draw(st.booleans()):
            kw["gamma"] = draw(_widths())
        kw["degree"] = draw(st.sampled_from([1, 2, 3, 2.0, np.int64(2)]))
        kw["coef0"] = draw(st.sampled_from([0.0, 1.0, 0.5, np.float32(2.0), 1]))
    if good:
        return kw
    what = draw(st.sampled_from(["kernel", "sigma", "gamma", "both", "poly-sigma", "degree",
                                 "coef0"]))
    if what == "kernel":
        kw["kernel"] = draw(st.sampled_from(["sigmoid", "RBF", None, 3, ""] +
                                            ([] if precomputed else ["precomputed"])))
    elif what in ("sigma", "gamma"):
        kw["kernel"] = "rbf" if kernel not in ("rbf", "gaussian", "poly") else kernel
        if kw["kernel"] == "poly" and what == "sigma":
            what = "gamma"
        kw.pop("sigma", None), kw.pop("gamma", None)
        kw[what] = draw(st.sampled_from([0.0, -1.0, "1", float("nan"), float("inf"), True,
                                         1e-200 if what == "sigma" else -1e-300]))
    elif what == "both":
        kw.update(kernel="rbf", sigma=1.0, gamma=1.0)
    elif what == "poly-sigma":
        kw.update(kernel="poly", sigma=1.0)
    elif what == "degree":
        kw.update(kernel="poly", degree=draw(st.sampled_from(
            [0, -1, 2.5, True, "2", float("nan"), 10**400, None])))
    else:
        kw.update(kernel="poly", coef0=draw(st.sampled_from(
            [-1.0, -1e-300, float("nan"), float("inf"), "1", True, None])))
    return kw


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


# --------------------------------------------------------------------------- cross-certificates
def ref_bracket(task: str, K, y, point, *, C: float, eta: float, tau: float = 0.0,
                epsilon: float = 0.0, labels=None):
    """dank_ref's certificate (its own code) of ``point``, on the exactly rescaled instance.

    Like the oracle, dank_ref is evaluated at ``(C K, 1, eta / C)`` and ``point / C``
    (docs/validity.md: ``v*(K, C, eta) = C v*(C K, 1, eta / C)``), where its unscaled
    arithmetic cannot overflow for any instance in the representable range; the bracket is
    multiplied back by ``C``. ``point``: ``alpha`` (svm, decomposed) or ``[ah; ac]`` (svr).
    Returns ``((lower, upper), scale)``, ``scale`` summing the sizes of the terms the bounds
    are formed from (for the rounding slack of :func:`assert_overlap`).
    """
    from dank_ref import certificate as rc

    y = np.asarray(y, dtype=np.float64)
    n = y.size
    Kc, etac = np.asarray(K, dtype=np.float64) * C, eta / C
    p = np.asarray(point, dtype=np.float64) / C
    if labels is not None:
        Kc = Kc * (labels[:, None] == labels[None, :])
    with np.errstate(all="ignore"):
        if task == "svm":
            cert = rc.svm_certificate(Kc, y, p, C=1.0, eta=etac, tau=tau, validate=False,
                                      project=True)
            d = cert.alpha * y
            lin = float(np.abs(cert.alpha).sum())
        elif task == "svr":
            cert = rc.svr_certificate(Kc, y, p[:n], p[n:], C=1.0, epsilon=epsilon, eta=etac,
                                      tau=tau, validate=False, project=True)
            d = cert.alpha
            lin = abs(float(d @ y)) + epsilon * float(np.abs(p).sum()) + float(np.abs(y).sum())
        else:
            cert = rc.decomposed_certificate(Kc, y, p, C=1.0, eta=etac, validate=False,
                                             project=True)
            d = cert.alpha * y
            lin = float(np.abs(cert.alpha).sum())
        gam = float(np.abs(np.outer(d, d) * Kc).sum()) / (4 * etac)
        scale = (abs(cert.lower) + abs(cert.upper) + lin + abs(float(d @ Kc @ d))
                 + etac * gam * gam + etac * tau * n * (n + gam))
    return (cert.lower * C, cert.upper * C), scale * C
