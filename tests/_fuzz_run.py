"""How the fuzz tests run: profiles, statistics, the time limit, and the assertions.

* **Profiles.** ``DANK_FUZZ_PROFILE`` unset (or ``default``): a few examples per entry point,
  derandomized, so that all fuzz tests together stay well under a minute on 2 shared cores.
  ``DANK_FUZZ_PROFILE=slow``: every fuzz test is marked ``slow`` (so the default run, which
  deselects ``slow``, skips it) and runs ``SLOW_FACTOR`` times as many random examples::

      DANK_FUZZ_PROFILE=slow python -m pytest -m slow tests/

  ``DANK_FUZZ_SLOW_LOG=path`` appends the inputs of every example slower than 2 s.
  ``DANK_FUZZ_STATS=path.json`` writes the number of examples run per entry point and outcome
  (``ok``: a certified result, ``rejected``: a named ValueError/TypeError, ``known-bug``: an
  input that hits a bug listed in ``_fuzz_known.KNOWN_BUGS``) when the process exits.
* **Assertions**: :func:`call` (the verdict of :mod:`_fuzz_rule` against what the entry point
  did), feasibility, brackets and their overlap, dank_ref's bracket of the same point.

Every example runs under :func:`hard_timeout` (``signal.setitimer``): a hang is a failure,
even when the code under test catches the timeout exception (a flag records it).
"""

from __future__ import annotations

import atexit
import json
import math
import os
import re
import signal
import time
import warnings
from collections import Counter
from contextlib import contextmanager

import numpy as np
import pytest
from _fuzz_rule import Verdict
from hypothesis import HealthCheck, settings

from dank_ref import certificate as rc

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
