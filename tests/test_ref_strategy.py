"""dank_ref's staged default strategy (dank_ref.staged): cheap start, loose SDP, escalation only
when the certificate asks, a time limit for the whole solve, progress when verbose.

Independent checks: the certificate of the returned point is recomputed here with dank_ref's
certificate on the original data, and the "auto" and "tight" strategies (two different routes)
must bracket the same saddle value.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pytest

import dank_ref
import dank_ref.svm
from dank_ref import certificate as rc


def moons(n, seed=0, noise=0.2):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.0, np.pi, size=n)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = np.where(y[:, None] > 0, np.c_[np.cos(t), np.sin(t)],
                 np.c_[1.0 - np.cos(t), 0.5 - np.sin(t)]) + noise * rng.normal(size=(n, 2))
    sq = ((X[:, None] - X[None]) ** 2).sum(-1)
    return np.exp(-sq / (2 * 0.5**2)), y


def no_polish(K, y, a, **kw):
    """A polisher that returns its start: the loose SDP alone cannot reach a tiny gap."""
    return a, kw["score"](a), 0


@pytest.mark.parametrize("eta", [0.1, 20.0])
def test_auto_is_certified_and_agrees_with_tight(eta):
    K, y = moons(30, seed=1)
    kw = dict(C=1.0, eta=eta, tau=0.01, certify_tol=1e-10)
    auto = dank_ref.solve_svm(K, y, **kw)
    tight = dank_ref.solve_svm(K, y, strategy="tight", **kw)
    assert auto.status == tight.status == "optimal" and auto.rel_gap <= 1e-10
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


def test_escalation_runs_only_while_the_certificate_asks(monkeypatch):
    """Without polishing the loose SDP is not certified to 1e-13: Clarabel, then eps = 1e-8."""
    K, y = moons(16, seed=2)
    monkeypatch.setattr(dank_ref.svm, "polish_svm", no_polish)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dank_ref.InaccurateSolutionWarning)
        r = dank_ref.solve_svm(K, y, C=1.0, eta=1.0, tau=0.01, certify_tol=1e-13)
    conic = [(s["stage"], s["solver"], s["eps"]) for s in r.solver_stats["stages"]
             if s["stage"].startswith("sdp")]
    assert conic == [("sdp", "SCS", 1e-4), ("sdp_switch", "CLARABEL", 1e-4),
                     ("sdp_tight", "SCS", 1e-8)]
    # polished, with the default certify_tol (1e-6), nothing escalates
    monkeypatch.undo()
    r6 = dank_ref.solve_svm(K, y, C=1.0, eta=1.0, tau=0.01)
    names = [s["stage"] for s in r6.solver_stats["stages"]]
    assert r6.status == "optimal" and "sdp_tight" not in names and "sdp_switch" not in names
    assert r6.rel_gap <= 1e-6 and r6.solver_stats["stages"][-1]["rel_gap"] <= 1e-6


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
    r = dank_ref.solve_svr(K, y, C=1.0, epsilon=0.1, eta=10.0, certify_tol=1e-10)
    assert r.status == "optimal" and r.solver_stats["stages"][-1]["rel_gap"] <= 1e-10
    Km, ym = moons(20, seed=5)
    labels = np.arange(20) % 2
    for method in ("joint", "blocks"):
        rd = dank_ref.solve_decomposed(Km, ym, labels, C=1.0, eta=20.0, method=method,
                                       certify_tol=1e-10)
        assert rd.status == "optimal" and rd.solver_stats["stages"][-1]["rel_gap"] <= 1e-10


def test_time_limit_bounds_the_whole_solve(monkeypatch):
    """A tiny time limit on n = 80: status 'time_limit', stages skipped, no hang."""
    K, y = moons(80, seed=6)
    monkeypatch.setattr(dank_ref.svm, "polish_svm", no_polish)
    t0 = time.perf_counter()
    with pytest.warns(dank_ref.InaccurateSolutionWarning, match="time limit"):
        r = dank_ref.solve_svm(K, y, C=1.0, eta=1.0, certify_tol=1e-13, time_limit=0.5)
    elapsed = time.perf_counter() - t0
    assert r.status == "time_limit" and r.solver_stats["time_limit_hit"]
    assert r.solver_stats.get("skipped_stages")  # the escalation found no time left
    # only CVXPY's set-up of the SDP is not interruptible (0.55 s and 5.7 s measured at load
    # 8-9 on 2 cores); without the whole-solve deadline the escalation stages (Clarabel, then
    # SCS at 1e-8) would still run after the limit
    assert elapsed < 0.5 + 15.0
    assert r.lower <= r.upper  # a valid certificate of the returned point all the same


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


def test_a_slow_conic_stage_is_capped_and_the_other_solver_certifies(monkeypatch):
    """Issue 20 follow-up (P2 sinc, n = 100: Clarabel 170 s where SCS needs 2 s): a Clarabel
    stage followed by another one stops at its budget; its stop is not the solve's time limit,
    the escalation (SCS) certifies and the result says which solver produced the point."""
    K, y = moons(16, seed=2)
    monkeypatch.setattr(dank_ref.svm, "polish_svm", no_polish)
    budget = dank_ref.svm.stage_budget
    monkeypatch.setattr(dank_ref.svm, "stage_budget",
                        lambda n, s: 1e-3 if s == "CLARABEL" else budget(n, s))
    r = dank_ref.solve_svm(K, y, C=1.0, eta=1.0, tau=0.01, solver="CLARABEL",
                           certify_tol=1e-3)
    st = r.solver_stats
    conic = [(s["stage"], s["solver"]) for s in st["stages"] if s["stage"].startswith("sdp")]
    assert conic == [("sdp", "CLARABEL"), ("sdp_switch", "SCS")]
    assert st["sdp_budget_hit"] and not st["time_limit_hit"]
    assert r.status == "optimal" and r.solver == "CLARABEL"
    assert st["certified_solver"] == "SCS" and "comes from SCS, not the requested" in r.message
    c = rc.svm_certificate(K, y, r.alpha, C=1.0, eta=1.0, tau=0.01)
    assert c.rel_gap <= 1e-3 and c.upper == r.upper


def test_a_solver_predicted_slow_goes_after_the_fast_one(monkeypatch):
    """Clarabel predicted slow (as beyond n ~ 57): SCS first, SCS at eps next, Clarabel last."""
    K, y = moons(16, seed=2)
    monkeypatch.setattr(dank_ref.svm, "polish_svm", no_polish)
    monkeypatch.setattr(dank_ref.svm, "predicted_sdp_seconds",
                        lambda n, s: 1e3 if s == "CLARABEL" else 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dank_ref.InaccurateSolutionWarning)
        r = dank_ref.solve_svm(K, y, C=1.0, eta=1.0, tau=0.01, solver="CLARABEL",
                               certify_tol=1e-13)
    conic = [(s["stage"], s["solver"], s["eps"]) for s in r.solver_stats["stages"]
             if s["stage"].startswith("sdp")]
    assert conic == [("sdp", "SCS", 1e-4), ("sdp_tight", "SCS", 1e-8),
                     ("sdp_switch", "CLARABEL", 1e-4)]


def test_the_clarabel_time_model_and_budget():
    """Calibrated: ~18 s at n = 60 (measured 17-19 s), under FAST_STAGE below n ~ 57."""
    p = dank_ref.svm.predicted_sdp_seconds
    assert p(60, "CLARABEL") == pytest.approx(18.0) and p(500, "SCS") == 0.0
    assert p(50, "CLARABEL") < dank_ref.svm.FAST_STAGE < p(60, "CLARABEL")
    assert dank_ref.svm.stage_budget(40, "CLARABEL") == dank_ref.svm.FAST_STAGE
    assert dank_ref.svm.stage_budget(55, "CLARABEL") == pytest.approx(3.0 * p(55, "CLARABEL"))
    assert dank_ref.svm.stage_budget(100, "SCS") == float("inf")
