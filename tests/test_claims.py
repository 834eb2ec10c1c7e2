"""The claim checks (verification/study/claims/): the classification of one evaluation, the
verdicts, planted cases (each check reports VIOLATED for a false bound, HOLDS for the true one),
the guided search and the reduction of counterexamples, T4's vacuity, the screening quantities,
and the claims' closed forms against dank_ref's, value for value."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from verification.study.claims import reproduce
from verification.study.claims._common import (
    STATUSES,
    Tracker,
    Verdict,
    classify,
    describe,
    fmt,
    fmt_ratio,
    gaussian_kernel,
    grad_svr,
    h_svr,
    project_A,
    structured_instances,
)
from verification.study.claims.bounds import EVALUATORS, check_bound
from verification.study.claims.decomposition import check_decomposition, decomposition_instance
from verification.study.claims.guided import guided_search, reduce_points
from verification.study.claims.nesterov import check_NR, check_SD


def _no_inf(obj):
    """JSON text without Infinity/NaN (json.dumps(allow_nan=False) raises otherwise)."""
    return json.dumps(obj, allow_nan=False)


# ---------------------------------------------------------------------------------------------
# one evaluation
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("lhs,rhs,kind", [
    (1.0, 2.0, "holds"),
    (2.0, 2.0, "holds"),
    (2.0 * (1 + 1e-12), 2.0, "holds"),      # round-off is not a violation
    (3.0, 2.0, "violated"),                 # positive bound exceeded: ratio 1.5
    (0.0, -1.0, "degenerate"),              # negative bound: no ratio
    (1e-3, 0.0, "degenerate"),              # zero bound exceeded
    (-2.0, -1.0, "holds"),                  # a negative bound that holds is not a finding
])
def test_classify(lhs, rhs, kind):
    assert classify(lhs, rhs) == kind


def test_classify_rejects_non_finite():
    with pytest.raises(ValueError, match="finite"):
        classify(float("nan"), 1.0)
    with pytest.raises(ValueError, match="finite"):
        classify(1.0, float("inf"))


def test_describe_never_prints_minus_zero_or_inf():
    s = describe(-0.0, -3.5)
    assert "-0 " not in s and "-0," not in s and "inf" not in s
    assert "rhs <= 0: no ratio" in s and "DEGENERATE" in s
    s = describe(3.0, 2.0)
    assert "lhs/rhs = 1.5" in s and "substantive" in s
    assert fmt(-0.0) == "0"


def test_fmt_ratio_keeps_below_one_visible():
    assert fmt_ratio(0.99999) != "1" and float(fmt_ratio(0.99999)) < 1
    assert fmt_ratio(1.0) == "1"
    assert fmt_ratio(4.599, 3) == "4.6"
    assert fmt_ratio(None) == "none"


# ---------------------------------------------------------------------------------------------
# verdicts from hand-built evaluation sequences
# ---------------------------------------------------------------------------------------------
def _arrays():
    return dict(K=np.eye(2), y=np.array([1.0, -1.0]))


def test_verdict_holds():
    tr = Tracker("X")
    tr.record(1.0, 2.0, 0.0, {"n": 2}, _arrays(), {})
    tr.record(0.5, 2.0, 0.0, {"n": 2}, _arrays(), {})
    v = tr.verdict("stmt")
    assert v.status == "HOLDS" and v.worst_ratio == pytest.approx(0.5)
    assert v.n_violations == 0 and v.n_degenerate == 0 and v.n_premise_met is None
    assert "0.5" in v.headline


def test_verdict_substantive_violation_saves_smallest(tmp_path):
    tr = Tracker("X")
    tr.record(1.0, 2.0, 0.0, {"n": 5}, _arrays(), {"C": 1.0})
    tr.record(9.0, 3.0, 0.0, {"n": 5}, _arrays(), {"C": 1.0}, size=5)   # ratio 3, n = 5
    tr.record(3.0, 2.0, 0.0, {"n": 2}, _arrays(), {"C": 1.0}, size=2)   # ratio 1.5, n = 2
    v = tr.verdict("stmt", out_dir=str(tmp_path))
    assert v.status == "VIOLATED"
    assert v.worst_ratio == pytest.approx(3.0)          # the headline number: largest ratio
    assert v.n_violations == 2 and v.n_degenerate == 0
    assert v.counterexample_path.endswith("counterexample_X.npz")
    assert "n=2" in v.message and "1.5" in v.message    # the saved one is the smallest
    assert "3" in v.headline and "2 of 3" in v.headline


def test_verdict_degenerate_only_is_kept_apart(tmp_path):
    tr = Tracker("L1")
    tr.record(0.0, -3.5, 0.0, {"n": 4}, _arrays(), {}, size=4)
    tr.record(0.9, 1.0, 0.0, {"n": 4}, _arrays(), {})
    v = tr.verdict("stmt", out_dir=str(tmp_path), degenerate_note="tau/2 too large")
    assert v.status == "VIOLATED-DEGENERATE"
    assert v.worst_ratio == pytest.approx(0.9)          # only rhs > 0 enters the ratio
    assert v.n_degenerate == 1 and v.n_violations == 0
    assert v.counterexample_path is None
    assert v.degenerate_counterexample_path.endswith("counterexample_L1_degenerate.npz")
    assert v.degenerate_where["rhs"] == -3.5
    assert "tau/2 too large" in v.message
    _no_inf(v.to_dict())


def test_verdict_both_kinds_is_violated_with_degenerate_count():
    tr = Tracker("PG")
    tr.record(0.0, -1.0, 0.0, {"n": 2}, _arrays(), {})
    tr.record(4.6, 1.0, 0.0, {"n": 2}, _arrays(), {})
    v = tr.verdict("stmt")
    assert v.status == "VIOLATED" and v.worst_ratio == pytest.approx(4.6)
    assert v.n_degenerate == 1 and "degenerate" in v.headline


def test_verdict_vacuous_counts_and_argument():
    tr = Tracker("T4", premise=True)
    for _ in range(3):
        tr.record(0.0, 1.0, 0.0, {"n": 2}, premise_met=False)
    v = tr.verdict("stmt", vacuity="the premise contradicts itself")
    assert v.status == "VACUOUS" and v.n_premise_met == 0 and v.n_instances == 3
    assert v.worst_ratio is None                          # nothing was tested: no ratio 0
    assert v.vacuity == "the premise contradicts itself"
    assert "0 of 3" in v.headline


def test_verdict_premise_met_once_is_not_vacuous():
    tr = Tracker("T4", premise=True)
    tr.record(0.0, 1.0, 0.0, {"n": 2}, premise_met=False)
    tr.record(0.0, 1.0, 0.0, {"n": 2}, premise_met=True)
    v = tr.verdict("stmt", vacuity="unused")
    assert v.status == "HOLDS" and v.n_premise_met == 1 and v.vacuity == ""


def test_verdict_inconclusive():
    v = Tracker("SD").verdict("stmt", inconclusive="no solve certified")
    assert v.status == "INCONCLUSIVE" and "no solve certified" in v.message
    assert Tracker("SD").verdict("stmt").status == "INCONCLUSIVE"  # no evaluation at all


def test_verdict_rejects_inf_ratio_and_unknown_status():
    with pytest.raises(ValueError, match="finite"):
        Verdict("X", "HOLDS", float("inf"), {}, 1, 1e-8)
    with pytest.raises(ValueError, match="status"):
        Verdict("X", "FINE", None, {}, 1, 1e-8)
    assert set(STATUSES) == {"HOLDS", "VIOLATED", "VIOLATED-DEGENERATE", "VACUOUS",
                             "INCONCLUSIVE"}


# ---------------------------------------------------------------------------------------------
# the claims' own evaluations on hand-derived instances
# ---------------------------------------------------------------------------------------------
def test_pg_minimal_counterexample_by_hand():
    """n = 2, K = 10 * 11', y = (-1, 1), C = eta = 1, tau = 0, a1 = 0, a2 = (1/2, 1/2).

    d = a2 * y = (-1/2, 1/2); Gamma = 10 d d' / 4 = 0.625 [[1, -1], [-1, 1]], so
    F(a2) = [[1.625, 0.375], [0.375, 1.625]]; (F o K) d = 10 F d = (-6.25, 6.25) and
    grad h(a2) = 1 - y * (F o K) d = (-5.25, -5.25), while grad h(0) = (1, 1):
    lhs = ||(6.25, 6.25)|| = 6.25 sqrt 2.  L_pgm = n + n C^2 lambda_max(K) / (4 eta)
    = 2 + 2 * 20 / 4 = 12 and ||a1 - a2|| = 1 / sqrt 2: rhs = 6 sqrt 2, ratio 25/24.
    """
    arr = dict(K=np.full((2, 2), 10.0), y=np.array([-1.0, 1.0]), a1=np.zeros(2),
               a2=np.array([0.5, 0.5]))
    p = dict(C=1.0, eta=1.0, tau=0.0)
    lhs, rhs, mag = EVALUATORS["PG"](arr, p)
    assert lhs == pytest.approx(6.25 * math.sqrt(2), rel=1e-12)
    assert rhs == pytest.approx(6.0 * math.sqrt(2), rel=1e-12)
    assert classify(lhs, rhs, mag) == "violated"
    # Theorem 4's constant kappa (n + 3 n C^2 ||K||_F / (4 eta)) = 10 (2 + 6 * 20 / 4)
    lhs1, rhs1, _ = EVALUATORS["T1"](arr, p)
    assert lhs1 == pytest.approx(lhs) and rhs1 == pytest.approx(320 / math.sqrt(2))


def test_l1_degenerate_by_hand():
    """K = I (n = 2), C = eta = 1, tau = 10: rhs = 2 - 5 + 2 / 4 = -2.5 < 0 while the
    eigenvalues of 11' + Gamma (at most 2 + 1/4) are all below tau/2 = 5, so F = 0."""
    arr = dict(K=np.eye(2), y=np.array([1.0, -1.0]), a=np.array([0.5, 0.5]))
    lhs, rhs, mag = EVALUATORS["L1"](arr, dict(C=1.0, eta=1.0, tau=10.0))
    assert lhs == 0.0 and rhs == pytest.approx(-2.5)
    assert classify(lhs, rhs, mag) == "degenerate"
    lhs, rhs, mag = EVALUATORS["L1"](arr, dict(C=1.0, eta=1.0, tau=0.0))
    assert classify(lhs, rhs, mag) == "holds" and 0 < lhs < rhs


def test_check_bound_splits_l1_degenerate_from_substantive(tmp_path):
    """tau above the threshold makes the bound negative: a degenerate finding, no ratio."""
    X = np.random.default_rng(0).uniform(0, 1, (6, 2))
    from verification.study.claims._common import gaussian_kernel

    inst = dict(K=gaussian_kernel(X, 0.5), y=np.array([1.0, -1, 1, -1, 1, -1]), C=1.0,
                eta=1.0, tau=100.0, kernel="gaussian", sigma=0.5, kernel_scale=1.0)
    v = check_bound("L1", np.random.default_rng(0), instances=[inst], out_dir=str(tmp_path))
    assert v.status == "VIOLATED-DEGENERATE" and v.worst_ratio is None
    assert v.degenerate_counterexample_path is not None
    inst["tau"] = 0.01
    v = check_bound("L1", np.random.default_rng(0), instances=[inst])
    assert v.status == "HOLDS" and 0 < v.worst_ratio <= 1


# ---------------------------------------------------------------------------------------------
# guided search and reduction
# ---------------------------------------------------------------------------------------------
def test_guided_search_shrinks_a_planted_violation():
    """A bound scaled by 1e-3 is false almost everywhere: the shrunk case has 2 points."""
    tr = Tracker("T1")
    out = guided_search("T1", EVALUATORS["T1"], tr, seed=3, max_examples=40, scale=1e-3)
    assert out["found"] and out["error"] is None
    assert out["n"] == 2 and out["ratio"] > 1
    assert tr.cex["violated"].size == 2 and tr.cex["violated"].key[1] == 0  # preferred
    again = guided_search("T1", EVALUATORS["T1"], Tracker("T1"), seed=3, max_examples=40,
                          scale=1e-3)
    assert again["n"] == out["n"] and again["ratio"] == out["ratio"]  # deterministic


def test_guided_search_true_bound_finds_nothing():
    tr = Tracker("L2")
    out = guided_search("L2", EVALUATORS["L2"], tr, seed=0, max_examples=30)
    assert not out["found"] and out["examples"] >= 30 and tr.n_viol == 0
    assert tr.worst is not None and tr.worst <= 1


def test_reduce_points_keeps_the_violation():
    rng = np.random.default_rng(1)
    n = 8
    from verification.study.claims._common import gaussian_kernel

    X = rng.uniform(0, 1, (n, 2))
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    arr = dict(K=10 * gaussian_kernel(X, 1.0), y=y, a1=project_A(rng.uniform(0, 1, n), y, 1.0),
               a2=project_A(rng.uniform(0, 1, n), y, 1.0))
    par = dict(C=1.0, eta=1.0, tau=0.0, scale=1e-3)
    assert classify(*EVALUATORS["PG"](arr, par)) == "violated"
    red = reduce_points("PG", EVALUATORS["PG"], arr, par, "violated")
    assert red is not None
    small, lhs, rhs, mag = red
    assert small["y"].size < n and classify(lhs, rhs, mag) == "violated"
    assert set(np.unique(small["y"])) == {-1.0, 1.0}       # still a valid P1 instance
    assert abs(small["y"] @ small["a1"]) < 1e-12 and small["a2"].max() <= 1.0


def test_project_A_is_the_euclidean_projection():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(1, 12))
        C = float(10 ** rng.uniform(-2, 2))
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        z = rng.normal(0, 2 * C, n)
        a = project_A(z, y, C)
        assert max(abs(y @ a), -a.min(), a.max() - C) <= 1e-12 * C * n
        for _ in range(3):  # variational inequality (z - a)'(b - a) <= 0 for feasible b
            b = project_A(rng.uniform(0, C, n), y, C)
            assert (z - a) @ (b - a) <= 1e-9 * C * C * n


# ---------------------------------------------------------------------------------------------
# T4: the premise can never be met
# ---------------------------------------------------------------------------------------------
def test_t4_threshold_below_gradient_floor_for_any_feasible_point():
    """The vacuity argument, checked without solving: for any abar in the box and any PSD
    Fbar = 11' + D Kbar D / (4 eta), (grad Hbar)_i >= 1 - B2 C ||Kbar_i||_1 > threshold_i,
    with B2 >= every entry of Fbar (and of an arbitrary F*)."""
    from verification.study.claims._common import gaussian_kernel
    from verification.study.claims.decomposition import block_kernel

    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(2, 12))
        X = rng.uniform(0, 1, (n, 2))
        K = float(10 ** rng.uniform(-1, 1)) * gaussian_kernel(X, float(2 ** rng.uniform(-3, 2)))
        labels = rng.integers(0, 3, n)
        Kb = block_kernel(K, labels)
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        C, eta = float(2 ** rng.uniform(-3, 4)), float(10 ** rng.uniform(-2, 2))
        ab = C * rng.random(n) * (rng.random(n) < 0.7)
        a_s = C * rng.random(n)
        Fb = 1.0 + np.outer(ab * y, ab * y) * Kb / (4 * eta)
        Fs = 1.0 + np.outer(a_s * y, a_s * y) * K / (4 * eta)
        M = np.maximum(Fs, Fb)
        B2 = float(M.max())
        B = B2 - float(M.min())
        g = 1.0 - y * ((Fb * Kb) @ (ab * y))
        k1 = np.abs(Kb).sum(0)
        thr = -(B + B2) * C * (k1 + np.abs(K).max())
        floor = 1.0 - B2 * C * k1
        tol = 1e-12 * max(1.0, B2 * C * k1.max())
        assert np.all(g >= floor - tol)
        assert np.all(g - thr >= 1.0 - tol)


def test_screening_quantities_on_a_solved_pair():
    """Theorems 6 / 7's quantities at a solved pair (P3 on K and on Kbar):
    Q(pi) is the off-block mass of |K|, the gradient is 1 - y (Fbar o Kbar)(abar y) with
    Fbar = 11' + Gamma_Kbar(abar), every threshold is negative and no screened point is a
    support vector of the full problem."""
    from verification.study.claims.decomposition import (
        Q_of,
        _eval_T3,
        decomposition_instance,
        screening,
        solve_pair,
    )

    inst = decomposition_instance(np.random.default_rng(4), n=14)
    labels = (inst["X"][:, 0] > np.median(inst["X"][:, 0])).astype(int)
    Kb, full, blk = solve_pair(inst, labels)
    K, y, eta = inst["K"], inst["y"], inst["eta"]
    same = labels[:, None] == labels[None, :]
    assert Q_of(K, labels) == pytest.approx(np.abs(K)[~same].sum())
    assert np.array_equal(Kb, K * same)
    lhs, rhs, info = _eval_T3(inst, labels, Kb, full, blk, 1.0)
    assert 0 < info["B1"] <= 1.0 <= info["B2"] and info["Q"] == Q_of(K, labels)
    assert info["H_star_lower"] <= info["H_star_upper"] and lhs >= 0 and rhs >= 0
    sc = screening(inst, labels, Kb, full, blk)
    ab = blk[0]
    Fb = 1.0 + np.outer(ab * y, ab * y) * Kb / (4 * eta)
    assert np.allclose(sc["gbar"], 1.0 - y * ((Fb * Kb) @ (ab * y)))
    assert np.all(sc["thr"] < 0) and not sc["bad"].any()
    assert np.all(sc["excess"] >= sc["excess_bound"] - 1e-9)


def test_t4_check_reports_vacuous_with_margin():
    from verification.study.claims.decomposition import check_decomposition, decomposition_instance

    rng = np.random.default_rng(11)
    insts = [dict(decomposition_instance(rng, n=10), v=2) for _ in range(2)]
    t3, t4 = check_decomposition(rng, instances=insts)
    assert t4.status == "VACUOUS" and t4.n_instances == 2 and t4.n_premise_met == 0
    d = t4.details
    assert d["screened"] == 0 and d["points"] == 20
    assert d["min_gradient_minus_threshold"] >= 1.0          # proven: at least 1
    assert d["min_excess_over_proven_bound"] >= -1e-9
    assert "never" in t4.vacuity and "B2" in t4.vacuity


def test_guided_search_writes_nothing_to_the_working_directory(monkeypatch):
    """Hypothesis' storage points into a temporary directory during the search, removed after
    (dank-verify must not create .hypothesis/ wherever the user runs it)."""
    import os
    import tempfile

    from hypothesis.configuration import storage_directory

    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    seen = []

    def evaluate(arr, par):
        seen.append(storage_directory("x", intent_to_write=False).home_directory)
        return EVALUATORS["HW"](arr, par)

    guided_search("HW", evaluate, Tracker("HW"), seed=0, max_examples=5)
    assert seen and all(str(p).startswith(tempfile.gettempdir()) for p in seen)
    assert "dank-verify-hypothesis-" in str(seen[0]) and not os.path.exists(seen[0])
    assert "dank-verify-hypothesis-" not in str(storage_directory(
        "x", intent_to_write=False).home_directory)                 # restored afterwards


# ---------------------------------------------------------------------------------------------
# the claims' closed forms against dank_ref's, value for value
# ---------------------------------------------------------------------------------------------
def test_closed_forms_equal_dank_ref_value_for_value():
    """``F_of``, ``h_svm``, ``grad_svm`` (claims) = ``inner_F``, ``h_svm``, ``grad_h_svm``
    (dank_ref.certificate) on random instances, tau = 0 and tau > 0 (the eigenvalue cut) and
    tau past every eigenvalue (F = 0); ``h_svr`` is ``b'y - eps 1'(ah + ac)`` plus the same
    inner value at ``d = ah - ac``."""
    import dank_ref.certificate as rc
    from verification.study.claims._common import F_of, draw_instance, grad_svm, h_svm, h_svr

    rng = np.random.default_rng(3)
    for _ in range(40):
        inst = draw_instance(rng, task="svm")
        K, y, C, eta, tau = (inst[k] for k in ("K", "y", "C", "eta", "tau"))
        a = C * rng.random(y.size)
        for t in (0.0, tau, 10.0 * y.size * (1.0 + C * C * float(np.abs(K).max()) / eta)):
            F = F_of(K, a * y, eta, t)
            Fr = rc.inner_F(K, a * y, eta=eta, tau=t)
            scale = max(1.0, float(np.abs(Fr).max()))
            assert np.max(np.abs(F - Fr)) <= 1e-10 * scale
            hr = rc.h_svm(K, y, a, eta=eta, tau=t)
            assert h_svm(K, y, a, eta, t) == pytest.approx(hr, rel=1e-10, abs=1e-10 * scale)
            g, gr = grad_svm(K, y, a, eta, t), rc.grad_h_svm(K, y, a, eta=eta, tau=t)
            assert np.max(np.abs(g - gr)) <= 1e-10 * max(1.0, float(np.abs(gr).max()))
        sv = draw_instance(rng, task="svr")
        K, ys, C, eta, tau, eps = (sv[k] for k in ("K", "y", "C", "eta", "tau", "epsilon"))
        ah, ac = C * rng.random(ys.size), C * rng.random(ys.size)
        Fr = rc.inner_F(K, ah - ac, eta=eta, tau=tau)
        want = float((ah - ac) @ ys - eps * np.sum(ah + ac)
                     + eta * (ys.size ** 2 - np.sum(Fr * Fr)))
        assert h_svr(K, ys, ah, ac, eps, eta, tau) == pytest.approx(want, rel=1e-9, abs=1e-9)


def _gauss_instance(seed=0, n=10, tau=0.01, eta=5.0, C=1.0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, 2))
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    return dict(X=X, K=gaussian_kernel(X, 0.5), y=y, C=C, eta=eta, tau=tau, epsilon=0.05,
                kernel="gaussian", sigma=0.5, kernel_scale=1.0)


@pytest.mark.parametrize("claim,false_scale", [("L1", 0.05), ("HW", 0.5), ("L2", 1e-3),
                                               ("T1", 1e-3), ("PG", 1e-3), ("L3", 1e-3),
                                               ("T2", 1e-3)])
def test_bound_planted(claim, false_scale, tmp_path):
    inst = [_gauss_instance(1)]
    ok = check_bound(claim, np.random.default_rng(0), budget=1, scale=1.0, instances=inst)
    assert ok.status == "HOLDS", ok
    bad = check_bound(claim, np.random.default_rng(0), budget=1, scale=false_scale,
                      instances=inst, out_dir=str(tmp_path))
    assert bad.status == "VIOLATED"
    assert bad.counterexample_path is not None
    c, lhs, rhs, still = reproduce(bad.counterexample_path)
    assert c == claim and still and lhs > rhs


def test_pg_violated_by_non_normalised_kernel():
    """PG's constant misses kappa: a kernel scaled by 10 breaks it (a finding)."""
    rng = np.random.default_rng(0)
    insts = [i for i in structured_instances(rng) if i["kernel_scale"] == 10.0]
    v = check_bound("PG", rng, budget=1, instances=insts)
    assert v.status == "VIOLATED" and v.worst_ratio > 1.5


def test_svr_gradient_finite_difference():
    inst = _gauss_instance(2, n=6, tau=0.3)
    rng = np.random.default_rng(3)
    K, y = inst["K"], rng.normal(size=6)
    ah, ac = rng.uniform(0, 1, 6), rng.uniform(0, 1, 6)
    g = grad_svr(K, y, ah, ac, 0.1, 2.0, 0.3)
    e = 1e-6
    for i in range(12):
        d = np.zeros(12)
        d[i] = e
        hp = h_svr(K, y, ah + d[:6], ac + d[6:], 0.1, 2.0, 0.3)
        hm = h_svr(K, y, ah - d[:6], ac - d[6:], 0.1, 2.0, 0.3)
        assert abs((hp - hm) / (2 * e) - g[i]) < 1e-5 * max(1, abs(g[i]))


def test_decomposition_planted():
    rng = np.random.default_rng(5)
    inst = decomposition_instance(rng, n=12)
    inst["v"] = 2
    t3, t4 = check_decomposition(rng, instances=[inst], scale_T3=1e6, scale_T4=1.0)
    assert t3.status == "HOLDS"
    # the rule as printed never screens anything: nothing tested, and said so
    assert t4.status == "VACUOUS" and t4.n_premise_met == 0 and "never" in t4.vacuity
    t3b, t4b = check_decomposition(rng, instances=[inst], scale_T3=1e-6, scale_T4=0.0)
    assert t3b.status == "VIOLATED"
    # scale 0: the rule reduces to "abar_i = 0 and grad_i <= 0", i.e. every sub-problem
    # non-support vector; some of these are support vectors of the full problem here (seed 5)
    assert t4b.status == "VIOLATED"


def test_nr_planted():
    inst = [_gauss_instance(4, n=8)]
    ok, printed = check_NR(np.random.default_rng(0), budget=1, instances=inst)
    assert ok.status == "HOLDS"
    bad, _ = check_NR(np.random.default_rng(0), budget=1, instances=inst, scale=1e-6)
    assert bad.status == "VIOLATED"


def test_sd_planted():
    inst = [_gauss_instance(6, n=6)]
    (ok,) = check_SD(np.random.default_rng(0), instances=inst)
    assert ok.status == "HOLDS"
    (bad,) = check_SD(np.random.default_rng(0), instances=inst, scale=-1.0)
    # a negative planted bound fails, but only as a degenerate (rhs <= 0) violation
    assert bad.status == "VIOLATED-DEGENERATE" and bad.n_degenerate == 1
    assert bad.n_violations == 0 and bad.degenerate_counterexample_path is None  # no out_dir


def test_no_local_constants_during_a_search():
    """Hypothesis harvests numeric constants from "local" modules (dank's own sources when it is
    installed in editable mode, none from site-packages); the claims' search switches that off,
    so one seed gives one search everywhere (editable or not, the same PG ratios)."""
    pytest.importorskip("hypothesis")
    providers = pytest.importorskip("hypothesis.internal.conjecture.providers")
    from verification.study.claims.guided import _no_local_constants

    with _no_local_constants():
        c = providers._get_local_constants()
        assert not (c.integers or c.floats or c.bytes or c.strings)
        assert providers.CONSTANTS_CACHE == {}
