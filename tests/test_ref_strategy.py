"""dank_ref's staged default strategy (dank_ref.staged, dank_ref.conic): cheap start, loose SDP,
escalation only when the certificate asks, a time limit for the whole solve, progress when
verbose.

Independent checks: the certificate of the returned point is recomputed here with dank_ref's
certificate on the original data, and the "auto" and "tight" strategies (two different routes)
must bracket the same saddle value.  The order of the stages is read from
:func:`dank_ref.conic.stage_plan`, the plan every solve runs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _ref_cases import svm_instance

import dank_ref
from dank_ref import certificate as rc
from dank_ref.conic import (
    FAST_STAGE,
    check_options,
    estimate_memory_bytes,
    predicted_sdp_seconds,
    sdp_producer,
    stage_budget,
    stage_plan,
)
from dank_ref.staged import finish
from dank_ref.svm import build_svm_problem


def moons(n, seed=0, noise=0.2):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.0, np.pi, size=n)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = np.where(y[:, None] > 0, np.c_[np.cos(t), np.sin(t)],
                 np.c_[1.0 - np.cos(t), 0.5 - np.sin(t)]) + noise * rng.normal(size=(n, 2))
    sq = ((X[:, None] - X[None]) ** 2).sum(-1)
    return np.exp(-sq / (2 * 0.5**2)), y


@pytest.mark.parametrize("eta", [0.1, 20.0])
def test_auto_is_certified_and_agrees_with_tight(eta):
    K, y = moons(30, seed=1)
    kw = dict(C=1.0, eta=eta, tau=0.01, tol=1e-10)
    auto = dank_ref.solve_svm(K, y, **kw)
    tight = dank_ref.solve_svm(K, y, strategy="tight", **kw)
    assert auto.status == tight.status == "converged" and auto.rel_gap <= 1e-10
    # the two routes bracket the same v* (brackets overlap up to the rounding of the bounds)
    slack = 1e-14 * abs(auto.value)
    assert auto.lower <= tight.upper + slack and tight.lower <= auto.upper + slack
    c = rc.svm_certificate(K, y, auto.alpha, C=1.0, eta=eta, tau=0.01)
    assert c.lower == auto.lower and c.upper == auto.upper
    stages = auto.solver_stats["stages"]
    assert stages and stages[-1]["rel_gap"] <= 1e-10
    assert all(s["time_s"] >= 0.0 and s["polish_time_s"] >= 0.0 for s in stages)
    assert auto.solver_stats["candidate"] == stages[-1]["stage"]
    # "tight" runs the SDP first, at eps
    first = tight.solver_stats["stages"][0]
    assert (first["stage"], first["solver"], first["eps"]) == ("sdp", "SCS", 1e-8)


def test_polish_false_is_the_tight_single_solve():
    K, y = moons(12, seed=3)
    r = dank_ref.solve_svm(K, y, C=1.0, eta=1.0, polish=False)
    st = r.solver_stats["stages"][0]
    assert (st["stage"], st["eps"]) == ("sdp", 1e-8) and not r.polished


def test_svr_and_decomposed_record_their_stages():
    rng = np.random.default_rng(4)
    X = rng.uniform(-3, 3, size=(25, 1))
    K = np.exp(-((X - X.T) ** 2) / 0.5)
    y = np.sinc(X[:, 0]) + 0.1 * rng.normal(size=25)
    r = dank_ref.solve_svr(K, y, C=1.0, epsilon=0.1, eta=10.0, tol=1e-10)
    assert r.status == "converged" and r.solver_stats["stages"][-1]["rel_gap"] <= 1e-10
    Km, ym = moons(20, seed=5)
    labels = np.arange(20) % 2
    for method in ("joint", "blocks"):
        rd = dank_ref.solve_decomposed(Km, ym, labels, C=1.0, eta=20.0, method=method,
                                       tol=1e-10)
        assert rd.status == "converged" and rd.solver_stats["stages"][-1]["rel_gap"] <= 1e-10


def test_verbose_reports_every_stage(capfd):
    K, y = moons(12, seed=7)
    dank_ref.solve_svm(K, y, C=1.0, eta=1.0, verbose=True)
    err = capfd.readouterr().err
    assert "[dank_ref" in err and "stage limit_qp" in err and "certified rel_gap" in err
    assert "polish round 1" in err


@pytest.mark.parametrize("value, exc", [("fast", ValueError), (1, TypeError), (None, TypeError)])
def test_bad_strategy_is_refused(value, exc):
    K, y = moons(8)
    with pytest.raises(exc, match="strategy"):
        dank_ref.solve_svm(K, y, C=1.0, eta=1.0, strategy=value)

def test_escalation_order_auto():
    """Loose SDP first, then the other solver at the loose tolerance, then eps; every stage but
    the last gets half of the time left and (Clarabel) a budget."""
    plan = stage_plan(16, check_options(tol=1e-13))
    assert [p[:3] for p in plan] == [("sdp", "SCS", 1e-4), ("sdp_switch", "CLARABEL", 1e-4),
                                     ("sdp_tight", "SCS", 1e-8)]
    assert [p[3] for p in plan] == [0.5, 0.5, 1.0]
    assert plan[1][4] == stage_budget(16, "CLARABEL") and plan[2][4] == math.inf
    # the requested solver first when it is fast (Clarabel below n ~ 57)
    plan = stage_plan(16, check_options(solver="CLARABEL"))
    assert [p[:2] for p in plan] == [("sdp", "CLARABEL"), ("sdp_switch", "SCS"),
                                     ("sdp_tight", "CLARABEL")]
    assert plan[0][4] == FAST_STAGE  # a Clarabel stage followed by another has a budget


def test_tight_and_unpolished_auto_are_one_stage_at_eps():
    for opt in (check_options(strategy="tight"), check_options(polish=False)):
        assert stage_plan(16, opt) == [("sdp", "SCS", 1e-8, 1.0, math.inf)]


def test_escalation_skips_a_solver_its_memory_estimate_refuses():
    opt = check_options(memory_limit=float(estimate_memory_bytes(150, "SCS")))
    assert [p[:2] for p in stage_plan(150, opt)] == [("sdp", "SCS"), ("sdp_tight", "SCS")]


def test_a_solver_predicted_slow_goes_after_the_fast_one():
    """Clarabel at n = 100 (predicted ~5 minutes): SCS first, SCS at eps next, Clarabel last."""
    plan = stage_plan(100, check_options(solver="CLARABEL"))
    assert [p[:3] for p in plan] == [("sdp", "SCS", 1e-4), ("sdp_tight", "SCS", 1e-8),
                                     ("sdp_switch", "CLARABEL", 1e-4)]


def test_polished_default_solve_does_not_escalate():
    K, y = moons(16, seed=2)
    r = dank_ref.solve_svm(K, y, C=1.0, eta=1.0, tau=0.01)
    names = [s["stage"] for s in r.solver_stats["stages"]]
    assert r.status == "converged" and "sdp_tight" not in names and "sdp_switch" not in names
    assert r.rel_gap <= 1e-6 and r.solver_stats["stages"][-1]["rel_gap"] <= 1e-6


def test_time_limit_bounds_the_whole_solve():
    """A short time limit on n = 80 at tol = 1e-13: status 'time_limit', stages are skipped,
    and the returned point still has a valid certificate."""
    K, y = moons(80, seed=6)
    with pytest.warns(dank_ref.ConvergenceWarning, match="time limit"):
        r = dank_ref.solve_svm(K, y, C=1.0, eta=1.0, tol=1e-13, time_limit=0.5)
    assert r.status == "time_limit" and not r.success and r.solver_stats["time_limit_hit"]
    assert r.solver_stats["skipped_stages"]  # the escalation found no time left
    c = rc.svm_certificate(K, y, r.alpha, C=1.0, eta=1.0, tau=0.01)
    assert (c.lower, c.upper) == (r.lower, r.upper) and r.lower <= r.upper


def test_a_conic_stage_stops_at_its_budget_not_at_the_time_limit():
    """A Clarabel stage followed by another stops at its budget (``budget`` of sdp_producer);
    that stop is recorded as the stage's, not as the solve's time limit."""
    K, y = moons(16, seed=2)
    opt = check_options(solver="CLARABEL", eps=1e-12)
    stats, holder = {}, {}
    produce = sdp_producer(lambda: build_svm_problem(K, y, C=1.0, eta=1.0, tau=0.01),
                           opt, 16, stats, holder, tag="sdp", share=0.5, budget=1e-3)
    try:
        produce()
    except dank_ref.SolverError:
        pass  # no usable multiplier after 1 ms: also a budget stop
    assert stats["sdp_budget_hit"] and not stats["time_limit_hit"]
    assert stats["sdp_solver"] == "CLARABEL"


def test_the_result_names_the_solver_whose_point_was_certified():
    """When the escalation's other solver certifies, result.solver stays the requested one and
    the message says where the point comes from."""
    K, y = moons(12, seed=3)
    a = rc.svm_certificate(K, y, np.full(12, 0.5), C=1.0, eta=1.0, tau=0.01)  # y'a = 0
    opt = check_options(solver="CLARABEL", tol=1e300)
    stats = {"time_limit": opt["time_limit"], "time_limit_hit": False,
             "sdp_switch_solver": "SCS", "sdp_switch_eps": 1e-4}
    r = finish(kind="P1", candidates=[("sdp_switch", lambda: np.zeros(12))],
               certify=lambda x: a, polisher=None, opt={**opt, "polish": False}, stats=stats,
               t0=0.0, final=lambda cf: a)
    assert r.status == "converged" and r.solver == "CLARABEL"
    assert r.solver_stats["certified_solver"] == "SCS"
    assert "comes from SCS, not the requested CLARABEL" in r.message


def test_the_clarabel_time_model_and_budget():
    """Calibrated: ~18 s at n = 60 (measured 17-19 s), under FAST_STAGE below n ~ 57."""
    p = predicted_sdp_seconds
    assert p(60, "CLARABEL") == pytest.approx(18.0) and p(500, "SCS") == 0.0
    assert p(50, "CLARABEL") < FAST_STAGE < p(60, "CLARABEL")
    assert stage_budget(40, "CLARABEL") == FAST_STAGE
    assert stage_budget(55, "CLARABEL") == pytest.approx(3.0 * p(55, "CLARABEL"))
    assert stage_budget(100, "SCS") == float("inf")


def test_time_limit_is_honoured():
    """A conic solve is always given a finite time limit; on expiry: status 'time_limit'."""
    K, y = svm_instance(30)
    with pytest.warns(dank_ref.ConvergenceWarning, match="time limit"):
        # certify_tol 1e-14: on a quiet machine SCS reaches rel_gap 3e-7 within 0.05 s, which
        # the default certify_tol (1e-6) would call optimal
        r = dank_ref.solve_svm(K, y, C=1.0, eta=1.0, tau=0.01, eps=1e-14, polish=False,
                               time_limit=0.05, max_iter=10**7, tol=1e-14)
    assert r.status == "time_limit" and r.solver_stats["time_limit_hit"]
    assert r.lower <= r.upper  # still a valid certificate of the returned point
