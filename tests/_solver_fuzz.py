"""Shared checks of the solvers' fuzz tests (tests/test_svm_solvers.py, test_svr.py,
test_decomposed.py).

Every example ends either in a ``ValueError``/``TypeError`` that names a parameter violating
docs/validity.md (the rule is re-implemented in ``_fuzz_strategies``), or in a result whose
bracket satisfies ``lower <= upper``, whose point is feasible (``1e-9 C sqrt(n)``), which is
certified when it says "converged", and whose bracket overlaps the one ``dank_ref``'s
independent certificate computes at the same point. Profiles and counts: ``_fuzz_strategies``.
"""

from __future__ import annotations

import math

import numpy as np
from _fuzz_known import present
from _fuzz_strategies import (
    VALUE,
    Verdict,
    assert_bracket,
    assert_feasible,
    assert_overlap,
    range_rule,
    real_array_rule,
    ref_bracket,
    scalar_rule,
)
from hypothesis import strategies as st

PAPER = ("paper", "paper-monotone", "pgm")
BAD_METHODS = ["Newton", "", None, 3, "auto "]


# --------------------------------------------------------------------------- helpers
def method_rule(method, allowed) -> Verdict:
    v = Verdict()
    if not (isinstance(method, str) and method in allowed):
        v.add("method", (ValueError, TypeError))
    return v


def optional_rule(rule, value, *args) -> Verdict:
    return Verdict() if value is None else rule(value, *args)


def solver_range_rule(K, C, eta, n) -> Verdict:
    """The representable range, when ``K``, ``C`` and ``eta`` are each valid."""
    if K is None or not (scalar_rule(C, "C", "pos").valid and scalar_rule(eta, "eta", "pos")
                         .valid):
        return Verdict()
    return range_rule(float(C), float(eta), float(np.max(np.abs(K))), n)


def huge_start_for_paper(method, alpha0) -> bool:
    """Inputs covered by the known bug 'paper-alpha0-unprojected' (``_fuzz_known``)."""
    if method not in PAPER or alpha0 is None or not present("paper-alpha0-unprojected"):
        return False
    a = np.asarray(alpha0)
    return a.dtype.kind == "f" and a.size > 0 and bool(np.nanmax(np.abs(a)) >= 1e100)


def svc_hang(C, K, uses_svc: bool) -> bool:
    """Inputs covered by the known bug 'svc-warm-start-unbounded': libsvm's iterations grow
    with C max|K| (1 s for 7 points at 5e7, 300 s at 5e10) and with C alone when K = 0
    (C = 1e20 did not finish)."""
    if not uses_svc or K is None or not scalar_rule(C, "C", "pos").valid:
        return False
    big = float(C) > 1e6 or float(C) * float(np.max(np.abs(K)) if np.size(K) else 0.0) > 1e6
    return big and present("svc-warm-start-unbounded")


def alpha0_rule(alpha0, shapes) -> Verdict:
    v = Verdict()
    if alpha0 is None:
        return v
    f = real_array_rule(alpha0, "alpha0", None, v)
    if f is not None and f.shape not in shapes:
        v.add("alpha0", VALUE)
    return v


def method_choices(allowed, good: bool):
    return st.sampled_from(list(allowed)) if good else st.sampled_from(BAD_METHODS)


def iteration_limit(max_iter, method, tol):
    """Keep an example short: the paper's t_max = 2000, or 5000 accelerated iterations towards
    a tolerance of 1e-300, take seconds; an explicit limit is fuzzed on its own."""
    if max_iter is None and (method in PAPER or (isinstance(tol, float) and tol < 1e-9)):
        return 100
    return max_iter


def draw_alpha0(draw, n: int, good: bool = True):
    """Warm starts: none, arbitrary (infeasible, huge) vectors; or malformed ones."""
    kind = draw(st.sampled_from(["none", "none", "random", "huge"] if good else ["bad"]))
    if kind == "none":
        return None
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "random":
        return rng.normal(size=n)
    if kind == "huge":
        return rng.normal(size=n) * 1e200
    return draw(st.sampled_from([np.full(n, np.nan), np.ones(n + 1), np.ones((n, 1)),
                                 np.ones(n) + 0j, np.ones(n, dtype=bool), "x"]))


def scalar_verdict(C, eta, tau, tol, max_iter) -> Verdict:
    v = scalar_rule(C, "C", "pos").merge(scalar_rule(eta, "eta", "pos"))
    v.merge(scalar_rule(tau, "tau", "nonneg")).merge(scalar_rule(tol, "tol", "pos"))
    return v.merge(optional_rule(scalar_rule, max_iter, "max_iter", "int"))


def check_p1_result(res, K, y, C, eta, tau, tol, *, cross=True):
    """Properties of a P1 result (see the module docstring)."""
    y = np.asarray(y, dtype=np.float64)
    n = y.size
    C, eta, tau, tol = float(C), float(eta), float(tau), float(tol)
    assert res.alpha.shape == (n,) and np.all(np.isfinite(res.alpha))
    assert_bracket(res.lower, res.upper, "solve_svm")
    assert res.gap >= 0 and math.isclose(res.upper - res.lower, res.gap, rel_tol=1e-6,
                                         abs_tol=1e-12 * max(abs(res.lower), abs(res.upper)))
    assert_feasible(res.alpha, C, n, y)
    if res.status == "converged":
        assert res.rel_gap <= tol * (1 + 1e-9), (res.status, res.rel_gap, tol)
    assert res.bias is None or math.isfinite(res.bias)
    if cross:
        ref, scale = ref_bracket("svm", K, y, res.alpha, C=C, eta=eta, tau=tau)
        assert_overlap((res.lower, res.upper), ref, scale, "solve_svm vs dank_ref")


# --------------------------------------------------------------------------- solve_svm


def cluster_codes(blocks, n):
    codes = np.empty(n, dtype=np.int64)
    for c, idx in enumerate(blocks):
        codes[idx] = c
    return codes
