"""The oracle's evidence of a failed certificate on a small instance (verification/_evidence.py).

A point solved for a related problem (the plain SVM / SVR, DANK with another ``eta``, P3 on the
whole ``K``) is diagnosed as "a different problem", with the related problem named; a point
stopped early (a few iterations of dank_fast's accelerated method, dank_ref's solution moved
towards the start) as "not converged". The related problems' solutions come from solvers
independent of the oracle (scikit-learn's libsvm for the plain problems, dank_fast's Newton
method for DANK). Every number of the evidence is recomputed here from its definition, and the
kit's row with its evidence validates against the ``conformance-results`` schema.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from sklearn.svm import SVC, SVR

import dank_ref.certificate as rc
from verification import _evidence
from verification.conformance.cases import Case
from verification.conformance.diagnosis import diagnose
from verification.conformance.kit import judge
from verification.conformance.runners import Outcome
from verification.formats import kernel_from_X
from verification.oracle import certify, format_report
from verification.schemas import load_schema, validate

N = 30


def _svm_inst(eta=1.0, tau=0.1, C=1.0):
    rng = np.random.default_rng(0)
    X = rng.uniform(0, 1, (N, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=N) > X[:, 1], 1.0, -1.0)
    K = kernel_from_X(X, "gaussian", sigma=0.5)
    return dict(task="svm", K=K, y=y, C=C, eta=eta, tau=tau, epsilon=None, labels=None, n=N)


def _svr_inst():
    rng = np.random.default_rng(1)
    X = np.sort(rng.uniform(-1, 1, N))[:, None]
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=N)
    K = kernel_from_X(X, "gaussian", sigma=0.5)
    return dict(task="svr", K=K, y=y, C=1.0, eta=1.0, tau=0.1, epsilon=0.05, labels=None, n=N)


def _p3_inst():
    inst = _svm_inst(eta=1.0, tau=0.0)
    rng = np.random.default_rng(2)
    labels = (rng.uniform(size=N) > 0.5).astype(np.int64)
    return dict(inst, task="decomposed", labels=labels)


def _dank(inst, **change):
    """dank_fast's Newton solution of ``inst`` with ``change`` (e.g. another eta)."""
    import dank_fast

    i = dict(inst, **change)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if i["task"] == "svm":
            return dank_fast.solve_svm(i["K"], i["y"], C=i["C"], eta=i["eta"], tau=i["tau"],
                                       method="newton", tol=1e-12).alpha
        if i["task"] == "svr":
            r = dank_fast.solve_svr(i["K"], i["y"], C=i["C"], epsilon=i["epsilon"],
                                    eta=i["eta"], tau=i["tau"], method="newton", tol=1e-12)
            return r.extra["alpha_hat"], r.extra["alpha_check"]
        return dank_fast.solve_decomposed(i["K"], i["y"], C=i["C"], eta=i["eta"],
                                          labels=i["labels"], method="newton",
                                          tol=1e-12).alpha


def _early(inst, iters):
    """A few iterations of dank_fast's accelerated projected gradient."""
    import dank_fast

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if inst["task"] == "svm":
            return dank_fast.solve_svm(inst["K"], inst["y"], C=inst["C"], eta=inst["eta"],
                                       tau=inst["tau"], method="accelerated", max_iter=iters,
                                       tol=1e-14).alpha
        if inst["task"] == "svr":
            r = dank_fast.solve_svr(inst["K"], inst["y"], C=inst["C"], epsilon=inst["epsilon"],
                                    eta=inst["eta"], tau=inst["tau"], method="accelerated",
                                    max_iter=iters, tol=1e-14)
            return r.extra["alpha_hat"], r.extra["alpha_check"]
        return dank_fast.solve_decomposed(inst["K"], inst["y"], C=inst["C"], eta=inst["eta"],
                                          labels=inst["labels"], method="accelerated",
                                          max_iter=iters, tol=1e-14).alpha


def _certify(inst, **sol):
    sol = dict(dict(task=inst["task"], bias=None, F=None), **sol)
    return certify(inst, sol, tol=1e-6)


def _plain_svm(inst):
    """The plain SVM's dual (scikit-learn's libsvm, precomputed K, tight tolerance)."""
    m = SVC(kernel="precomputed", C=inst["C"], tol=1e-12).fit(inst["K"], inst["y"])
    a = np.zeros(N)
    a[m.support_] = np.abs(m.dual_coef_[0])
    return a


# ----------------------------------------------------------------------- a different problem
def test_the_plain_svm_with_F_11_is_a_different_problem():
    inst = _svm_inst()
    rep = _certify(inst, alpha=_plain_svm(inst), F=np.ones((N, N)))
    assert rep["failed"] == ["gap", "F"]
    ev = rep["evidence"]
    assert ev["kind"] == "a different problem"
    assert ev["F_nearest"] == "the plain SVM (F = 11', kernel K)"
    assert ev["F_distance"] > 1e-2  # far above rounding
    plain = ev["related"][0]
    assert plain["problem"] == ev["F_nearest"] and plain["rel_gap"] < 1e-9
    assert plain["F_distance"] == 0.0
    own = ev["related"][-1]  # the outer problem of the submitted kernel F o K = K
    assert own["problem"] == "the SVM with the submitted kernel F o K"
    assert own["rel_gap"] < 1e-9 and own["F_distance"] is None
    assert ev["why"].startswith("the submitted F is not F(alpha)")
    assert "alpha is near-optimal for the plain SVM" in ev["why"]
    line = diagnose(rep)
    assert line.startswith("a different problem: the submitted F is not F(alpha)")
    assert "the inner minimiser is wrong" in line and "v* in [" in line


@pytest.mark.parametrize("factor", [2.0, 0.5])
def test_a_dank_solution_of_another_eta_is_a_different_problem(factor):
    """Without F: the point's gap on DANK with that eta is rounding, here it is not."""
    inst = _svm_inst()
    rep = _certify(inst, alpha=_dank(inst, eta=factor * inst["eta"]))
    ev = rep["evidence"]
    assert rep["failed"] == ["gap"] and ev["kind"] == "a different problem", ev["why"]
    assert ev["why"].startswith(f"alpha is near-optimal for DANK with eta x {factor:g} ")
    best = min(ev["related"], key=lambda r: r["rel_gap"])
    assert best["problem"] == f"DANK with eta x {factor:g}" and best["rel_gap"] < 1e-9
    assert diagnose(rep).startswith("a different problem: alpha is near-optimal for DANK with "
                                    f"eta x {factor:g}")


def test_the_plain_svr_is_a_different_problem():
    inst = _svr_inst()
    m = SVR(kernel="precomputed", C=inst["C"], epsilon=inst["epsilon"], tol=1e-12)
    m.fit(inst["K"], inst["y"])
    b = np.zeros(N)
    b[m.support_] = m.dual_coef_[0]
    rep = _certify(inst, alpha_hat=np.maximum(b, 0.0), alpha_check=np.maximum(-b, 0.0))
    ev = rep["evidence"]
    assert ev["kind"] == "a different problem"
    assert ev["why"].startswith("alpha is near-optimal for the plain SVR (F = 11', kernel K)")


def test_p3_solved_on_the_whole_kernel_is_a_different_problem():
    inst = _p3_inst()
    rep = _certify(inst, alpha=_dank(inst, labels=np.zeros(N, np.int64)))
    ev = rep["evidence"]
    assert ev["kind"] == "a different problem"
    assert ev["why"].startswith("alpha is near-optimal for DANK on the whole K")


# ----------------------------------------------------------------------------- not converged
@pytest.mark.parametrize("iters", [5, 12])
def test_a_few_accelerated_iterations_are_not_converged(iters):
    """With its own F(alpha) submitted: F matches, no related problem fits, the value is
    provably below v* and DANK's ascent leads towards the reference solution."""
    inst = _svm_inst()
    a = _early(inst, iters)
    F = rc.svm_certificate(inst["K"], inst["y"], a, C=inst["C"], eta=inst["eta"],
                           tau=inst["tau"]).F
    rep = _certify(inst, alpha=a, F=F)
    assert rep["failed"] == ["gap"], rep["rel_gap"]  # still short of tol after these steps
    ev = rep["evidence"]
    assert ev["kind"] == "not converged", ev["why"]
    assert ev["F_distance"] <= 1e-12 and ev["F_nearest"] is None
    assert ev["shortfall"] > 0 and ev["ascent_cosine"] > 0
    assert ev["why"].startswith("F matches F(alpha); no related problem fits (best: ")
    assert ev["why"].endswith(": a solve to a tighter tol closes the gap")
    assert diagnose(rep).startswith("not converged: F matches F(alpha)")


@pytest.mark.parametrize("t", [0.3, 0.03, 0.003])
def test_the_reference_solution_moved_towards_the_start_is_not_converged(t):
    """dank_ref's own solution moved a fraction ``t`` of the way back to a feasible start."""
    import dank_ref

    inst = _svm_inst(eta=10.0, tau=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = dank_ref.solve_svm(inst["K"], inst["y"], C=1.0, eta=10.0, tau=0.01, tol=1e-9)
    y = inst["y"]
    start = np.where(y > 0, 0.5 / np.sum(y > 0), 0.5 / np.sum(y < 0))
    rep = _certify(inst, alpha=ref.alpha + t * (start - ref.alpha))
    ev = rep["evidence"]
    assert ev["kind"] == "not converged", ev["why"]
    assert ev["why"].startswith("no F submitted (a different inner problem outside those "
                                "tried is not excluded)")
    assert ev["shortfall"] > 0


@pytest.mark.parametrize("make", [_svr_inst, _p3_inst])
def test_early_stops_of_svr_and_p3_are_not_converged(make):
    inst = make()
    z = _early(inst, 10)
    sol = (dict(alpha_hat=z[0], alpha_check=z[1]) if inst["task"] == "svr" else dict(alpha=z))
    ev = _certify(inst, **sol)["evidence"]
    assert ev["kind"] == "not converged", ev["why"]


# ----------------------------------------------------------------------- the report's fields
def test_the_evidence_numbers_are_what_they_say():
    """``value`` is the certified lower bound h(alpha), ``v*`` dank_ref's bracket,
    ``shortfall`` (v_lower - h) / scale, ``F_distance`` the relative Frobenius distance, each
    related gap the certificate of the point on that problem; JSON without NaN."""
    import dank_ref

    inst = _svm_inst()
    a = _dank(inst, eta=2.0)
    F = np.ones((N, N))
    rep = _certify(inst, alpha=a, F=F)
    ev = rep["evidence"]
    assert set(ev) == {"kind", "why", "value", "v_star_lower", "v_star_upper",
                       "reference_status", "reference_seconds", "shortfall", "F_distance",
                       "F_nearest", "related", "reference_distance", "ascent_cosine"}
    assert ev["value"] == rep["lower"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = dank_ref.solve_svm(inst["K"], inst["y"], C=1.0, eta=1.0, tau=0.1, tol=1e-9)
    assert ev["reference_status"] == "converged"
    assert ev["v_star_lower"] <= ev["v_star_upper"]
    assert ev["v_star_lower"] == pytest.approx(ref.lower, rel=1e-9)
    assert ev["shortfall"] == pytest.approx((ev["v_star_lower"] - rep["lower"]) / rep["scale"])
    Fa = rc.svm_certificate(inst["K"], inst["y"], a, C=1.0, eta=1.0, tau=0.1).F
    assert ev["F_distance"] == pytest.approx(np.linalg.norm(F - Fa) / np.linalg.norm(Fa))
    assert ev["reference_distance"] == pytest.approx(
        np.linalg.norm(a - ref.alpha) / np.linalg.norm(ref.alpha), rel=1e-4)
    names = [r["problem"] for r in ev["related"]]
    assert names == ["the plain SVM (F = 11', kernel K)", "DANK with eta x 0.25",
                     "DANK with eta x 0.5", "DANK with eta x 2", "DANK with eta x 4",
                     "DANK with tau = 0", "DANK with tau x 0.5", "DANK with tau x 2",
                     "the SVM with the submitted kernel F o K"]
    assert ev["related"][-1]["F_distance"] is None  # the submitted F itself
    # the related gap is the oracle's own gap on that instance
    other = certify(dict(inst, eta=4.0), dict(task="svm", alpha=a, bias=None, F=None),
                    evidence=False)
    r4 = ev["related"][names.index("DANK with eta x 4")]
    assert r4["rel_gap"] * rep["scale"] == pytest.approx(other["gap"], rel=1e-6)
    json.dumps(ev, allow_nan=False)


def test_the_text_report_shows_the_evidence():
    inst = _svm_inst()
    rep = _certify(inst, alpha=_early(inst, 5))
    lines = format_report(rep).split("\n")
    i = lines.index("  evidence: not converged (informative only; dank_ref's reference solve "
                    "and related problems, docs/user_guide/checking.md)")
    ev = rep["evidence"]
    assert lines[i + 1] == f"    why: {ev['why']}"
    assert lines[i + 2].startswith(f"    v*: in [{ev['v_star_lower']!r}, ")
    assert lines[i + 3].startswith(f"    h(alpha): {ev['value']!r} (v* - h(alpha) >= ")
    assert lines[i + 5].startswith("    related problems (relative gap of alpha): the plain SVM")
    assert lines[i + 6] == f"  reason: {rep['reasons'][0]}"  # no F line without F
    assert lines[-2].startswith("  note: NOT CERTIFIED")  # the note stays last


def test_the_kit_row_carries_the_evidence_and_validates():
    inst = _svm_inst()
    case = Case(id="t", set="families", family="t", description="", path="", inst=inst)
    sol = dict(alpha=_plain_svm(inst), F=np.ones((N, N)))
    row = judge(case, Outcome(status="ok", solution=sol, message="", time=0.1))
    assert row["status"] == "not certified" and row["evidence"]["kind"] == "a different problem"
    assert row["diagnosis"].startswith("a different problem: ")
    schema = load_schema("conformance-results")
    validate(json.loads(json.dumps(row)), {"$defs": schema["$defs"], "$ref": "#/$defs/row"})
    bad = dict(row, evidence=dict(row["evidence"], kind="wrong"))
    with pytest.raises(ValueError):
        validate(bad, {"$defs": schema["$defs"], "$ref": "#/$defs/row"})
    certified = dict(alpha=_dank(inst))
    row = judge(case, Outcome(status="ok", solution=certified, message="", time=0.1))
    assert row["status"] == "certified" and "evidence" not in row
    validate(row, {"$defs": schema["$defs"], "$ref": "#/$defs/row"})


def test_evidence_only_where_it_is_asked_for():
    """Not for a certified, infeasible or only-bias failure, nor with ``evidence=False``;
    by default only up to EVIDENCE_MAX_N points; a non-bool is a TypeError."""
    inst = _svm_inst()
    a = _dank(inst)
    assert "evidence" not in _certify(inst, alpha=a)
    assert "evidence" not in _certify(inst, alpha=a, bias=5.0)  # only the bias fails
    bad = a.copy()
    bad[int(np.argmax(a))] += 1e-3
    assert "evidence" not in _certify(inst, alpha=bad)  # infeasible
    early = _early(inst, 5)
    sol = dict(task="svm", alpha=early, bias=None, F=None)
    assert "evidence" not in certify(inst, sol, evidence=False)
    rep = certify(inst, sol)
    assert _evidence.wants_evidence(rep, True, None)
    assert not _evidence.wants_evidence(dict(rep, n=_evidence.EVIDENCE_MAX_N + 1), True, None)
    assert _evidence.wants_evidence(dict(rep, n=_evidence.EVIDENCE_MAX_N + 1), True, True)
    with pytest.raises(TypeError, match="evidence must be True, False or None"):
        certify(inst, sol, evidence=1)


def test_an_indefinite_submitted_kernel_is_no_related_problem():
    """``F o K`` of a submitted ``F`` is a related problem only when it is a kernel."""
    inst = _svm_inst()
    F = np.ones((N, N))
    F[0, 1] = F[1, 0] = -3.0  # symmetric, indefinite with K
    ev = _certify(inst, alpha=_early(inst, 5), F=F)["evidence"]
    assert ev["kind"] == "a different problem"
    assert all("submitted kernel" not in r["problem"] for r in ev["related"])


def test_the_kind_is_unclear_when_the_ascent_leads_away():
    """The fourth criterion, on a synthetic evidence (a concave h and a correct reference
    solve never give it): no F mismatch, no related fit, ascent cosine <= 0."""
    ev = dict(F_distance=None, F_nearest=None, shortfall=1e-3, ascent_cosine=-0.2,
              related=[dict(problem="DANK with eta x 2", rel_gap=0.5, F_distance=None)])
    kind, why = _evidence._kind(ev, dict(rel_gap=1.0))
    assert kind == "unclear" and "leads away from the reference solution" in why
    kind, why = _evidence._kind(dict(ev, ascent_cosine=0.5), dict(rel_gap=1.0))
    assert kind == "not converged"
    fit = dict(ev, ascent_cosine=0.5,
               related=[dict(problem="DANK with eta x 2", rel_gap=2e-3, F_distance=None)])
    assert _evidence._kind(fit, dict(rel_gap=1.0))[0] == "not converged"  # > FIT_MAX
    fit["related"][0]["rel_gap"] = 1e-3
    assert _evidence._kind(fit, dict(rel_gap=1.0))[0] == "a different problem"
    assert _evidence._kind(fit, dict(rel_gap=0.05))[0] == "not converged"  # not 1/100


def test_progress_reports_the_evidence_phase():
    inst = _svm_inst()
    calls = []
    sol = dict(task="svm", alpha=_early(inst, 5), bias=None, F=None)
    rep = certify(inst, sol, progress=lambda *c: calls.append(c))
    phase = "evidence (dank_ref's reference solve, related problems)"
    assert "evidence" in rep and calls[-2:] == [(phase, 0, 1), (phase, 1, 1)]


# ------------------------------------------------------------------------ per-sample boxes
def _boxes(n: int) -> np.ndarray:
    return np.random.default_rng(5).uniform(0.2, 3.0, n)


@pytest.mark.parametrize("make", [_svm_inst, _svr_inst, _p3_inst])
def test_per_sample_boxes_get_evidence_and_the_oracles_related_gaps(make):
    """With a vector ``C`` the evidence is made (it raised a TypeError on ``eta / C``), a DANK
    solution of another ``eta`` is "a different problem", and each related gap is the
    oracle's own gap on that instance, boxes included."""
    inst = make()
    inst = dict(inst, C=_boxes(inst["y"].size))
    if inst["task"] == "svr":
        ah, ac = _dank(inst, eta=2.0 * inst["eta"])
        sol = dict(alpha_hat=ah, alpha_check=ac)
    else:
        sol = dict(alpha=_dank(inst, eta=2.0 * inst["eta"]))
    rep = _certify(inst, **sol)
    ev = rep["evidence"]
    assert ev["kind"] == "a different problem", ev["why"]
    names = [r["problem"] for r in ev["related"]]
    best = ev["related"][int(np.argmin([r["rel_gap"] for r in ev["related"]]))]
    assert best["problem"] == "DANK with eta x 2" and best["rel_gap"] < 1e-9
    other = certify(dict(inst, eta=4.0 * inst["eta"]),
                    dict(dict(task=inst["task"], bias=None, F=None), **sol), evidence=False)
    r4 = ev["related"][names.index("DANK with eta x 4")]
    assert r4["rel_gap"] * rep["scale"] == pytest.approx(max(other["gap"], 0.0), rel=1e-6)
    json.dumps(ev, allow_nan=False)


def test_per_sample_boxes_plain_svm_is_the_nearest_problem():
    """libsvm with ``sample_weight = C_i / max C`` solves the plain SVM of the boxes ``C_i``:
    its point is near-optimal for the plain SVM (weighted hinge) and a different problem."""
    inst = _svm_inst()
    C = _boxes(N)
    inst = dict(inst, C=C)
    m = SVC(kernel="precomputed", C=float(C.max()), tol=1e-12).fit(
        inst["K"], inst["y"], sample_weight=C / C.max())
    a = np.zeros(N)
    a[m.support_] = np.abs(m.dual_coef_[0])
    a = np.minimum(a, C)  # libsvm's rounding at the box
    ev = _certify(inst, alpha=a, F=np.ones((N, N)))["evidence"]
    plain = ev["related"][0]
    assert plain["problem"] == "the plain SVM (F = 11', kernel K)"
    assert plain["rel_gap"] < 1e-6
    assert ev["kind"] == "a different problem"
