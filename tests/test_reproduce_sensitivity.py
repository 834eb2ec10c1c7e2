"""The sensitivity readings of dank-reproduce: their cells on a tiny synthetic set,
and the sensitivity table's aggregation, verdicts, conclusion and section on synthetic records.

What would fail here: a reading that does not reuse dank-cv's (sigma, C), an ago3 reading that
is not the printed algorithm from a0 = 0 with its rule and cap, an eta or extension reading
that changes something else too, scaling not fitted on both halves, the other-split cells on
the run's own halves, a verdict rule other than Table 1's, a typed (not computed)
conclusion, a section in the report of a run without reading cells.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from verification.study.experiments import paper, readings
from verification.study.experiments import protocol as P
from verification.study.experiments.data import Dataset
from verification.study.experiments.runner import plan_cells
from verification.study.experiments.tables import aggregate, render_report
from verification.study.experiments.tables import sensitivity as S

TINY = (0.5, 2.0)


def _dataset(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) * np.array([1.0, 3.0]) + np.array([0.0, 5.0])
    y = np.where(X[:, 0] + 0.4 * rng.normal(size=n) > 0.3, "a", "b")  # imbalanced
    return Dataset("toy", "classification", X, y)


@pytest.fixture(scope="module")
def cells():
    ds = _dataset()
    proto = P.Protocol(sigma_grid=TINY, C_grid=TINY, mkl_sigmas=TINY, n_splits=1,
                       taus=(0.01,))
    base = {m: P.run_cell(P.Cell(ds.name, 0, m), ds, proto)
            for m in ("dank-cv", "svm-cv", "mkl-uniform")}
    assert all(r["status"] == "ok" for r in base.values())
    recs = {m: readings.run_reading_cell(P.Cell(ds.name, 0, m), ds, proto,
                                         base[readings.DEPENDS[m]])
            for m in readings.METHODS}
    return ds, proto, base, recs


def test_every_reading_cell_runs_and_reuses_its_default_cells_parameters(cells):
    _, _, base, recs = cells
    for m, r in recs.items():
        assert r["status"] == "ok", (m, r.get("traceback"))
        dep = base[readings.DEPENDS[m]]
        assert (r["C"], r.get("sigma"), r["params_from"]) == (dep["C"], dep.get("sigma"),
                                                          dep["method"])
        for s in r.get("solves", []):
            assert s["lower"] <= s["upper"] and s["rel_gap"] >= 0
    assert {m for m, r in recs.items() if "solves" in r} == {
        m for m in readings.METHODS if m.startswith("dank-")}


def test_ago3_readings_are_the_printed_algorithm_with_its_rule_and_cap(cells):
    _, _, base, recs = cells
    ref = base["dank-cv"]["taus"]["0.01"]["solves"]
    for m in ("dank-ago3", "dank-ago3-ascent"):
        for s, o in zip(recs[m]["solves"], ref, strict=True):
            assert s["method"] == "paper"
            assert (s["status"] == "max_iter") == (s["n_iter"] == readings.AGO3_T_MAX)
            assert s["status"] in ("stopped", "max_iter") and s["n_iter"] <= readings.AGO3_T_MAX
            assert s["eta"] == o["eta"]  # the paper's eta = ||a_SVM||^2, as the optimum's
            assert s["lower"] <= o["upper"] + 1e-9 * abs(o["upper"])  # never above v*
    g = [s["rel_gap"] for m in ("dank-ago3", "dank-ago3-ascent") for s in recs[m]["solves"]]
    assert max(g) > 10 * max(s["rel_gap"] for s in ref)  # far from the certified optimum


def test_eta_and_extension_readings_change_only_their_part(cells):
    ds, _, base, recs = cells
    dep = base["dank-cv"]
    opt = dep["taus"]["0.01"]["solves"]
    assert [s["eta"] for s in recs["dank-eta-n"]["solves"]] == [float(ds.y.size // 2)] * len(opt)
    assert [s["eta"] for s in recs["dank-eta-n"]["solves"]] != [s["eta"] for s in opt]
    # the nearest-neighbour extension changes the prediction only: the same training solve
    for s, o in zip(recs["dank-nearest"]["solves"], opt, strict=True):
        assert (s["lower"], s["upper"], s["n_iter"]) == (o["lower"], o["upper"], o["n_iter"])
    assert recs["dank-nearest"]["train_acc"] == dep["taus"]["0.01"]["train_acc"]


def _final_acc(ctx, proto, C, sigma, scaler=True):
    Xtr, ytr, Xte, yte, _ = ctx
    m = P._svm(C, sigma, proto)
    if not scaler:
        m.set_params(minmaxscaler="passthrough")
    return m.fit(Xtr, ytr).score(Xte, yte)


def test_scaling_on_all_data_uses_both_halves(cells):
    ds, proto, base, recs = cells
    ctx = readings.scaled_on_all(P.split_context(ds, 0, proto))
    Xtr, _, Xte, _, _ = ctx
    both = np.vstack([Xtr, Xte])
    np.testing.assert_allclose(both.min(axis=0), 0.0, atol=1e-15)
    np.testing.assert_allclose(both.max(axis=0), 1.0, atol=1e-15)
    assert not np.allclose([Xtr.min(axis=0), Xtr.max(axis=0)], [[0, 0], [1, 1]])
    C, sigma = base["svm-cv"]["C"], base["svm-cv"]["sigma"]
    assert recs["svm-cv-scale-all"]["test_acc"] == _final_acc(ctx, proto, C, sigma, False)


def test_other_split_cells_use_the_other_halves(cells):
    ds, proto, base, recs = cells
    plain = dataclasses.replace(proto, stratify=False)
    C, sigma = base["svm-cv"]["C"], base["svm-cv"]["sigma"]
    got = recs["svm-cv-other-split"]
    assert got["test_acc"] == _final_acc(P.split_context(ds, 0, plain), proto, C, sigma)
    X_s, X_p = P.split_context(ds, 0, proto)[0], P.split_context(ds, 0, plain)[0]
    assert not np.array_equal(X_s, X_p)  # the halves differ (the test can tell them apart)


def test_only_the_other_split_cells_flip_the_stratification(monkeypatch):
    seen = {}
    monkeypatch.setattr(readings, "run_cell",
                        lambda cell, ds, proto, dep, **kw: seen.update({cell.method: proto}))
    proto = P.Protocol(n_splits=1)
    for m in readings.METHODS:
        readings.run_reading_cell(P.Cell("toy", 0, m), None, proto, None)
    flipped = {m for m, p in seen.items() if p.stratify != proto.stratify}
    assert flipped == {"dank-other-split", "svm-cv-other-split", "mkl-uniform-other-split"}
    assert all(dataclasses.replace(p, stratify=True) == proto for p in seen.values())


def test_plan_has_the_readings_only_with_danks_own_cv():
    proto = P.Protocol(n_splits=2)
    _, p2 = plan_cells(proto, ["heart"], [])
    assert {c.method for c in p2} == {"dank-svm", "logdet", *readings.METHODS}
    assert all(readings.DEPENDS[m] in ("dank-cv", "svm-cv", "mkl-uniform") for m in readings.CELLS)
    _, p2 = plan_cells(dataclasses.replace(proto, readings=("svm",)), ["heart"], [])
    assert {c.method for c in p2} == {"dank-svm", "logdet"}


# --------------------------------------------------------------------- the table (synthetic)
PROTO = P.Protocol(sigma_grid=(1.0,), C_grid=(1.0,), n_splits=6, taus=(0.01,), readings=("cv",))
INFO = {"heart": dict(n=270, d=13, note=""), "wine": dict(n=178, d=13, note="")}
WOBBLE = np.array([0.02, -0.01, 0.015, -0.02, 0.005, -0.01])  # mean 0


def _solves(status, gap, k=1):
    return [dict(status=status, rel_gap=gap, eta=1.0, lower=0.0, upper=1.0, n_iter=1)] * k


def _fit(acc, status="converged", gap=1e-7):
    return dict(train_acc=1.0, test_acc=acc, certified=status == "converged",
                solves=_solves(status, gap))


def _set_records(name, svm, mkl, dank, reading_acc: dict, status=None):
    """One set: SVM-CV, MKL-uniform, dank-cv and the reading cells (accuracies per split)."""
    recs = {}
    for s in range(len(svm)):
        base = dict(dataset=name, split=s, status="ok", warnings={}, C=1.0, sigma=1.0)
        for m, acc in (("svm-cv", svm), ("mkl-uniform", mkl), ("svm-cv-scale-all", svm),
                       ("mkl-uniform-scale-all", mkl), ("svm-cv-other-split", svm),
                       ("mkl-uniform-other-split", mkl)):
            recs[f"{name}/{s:02d}_{m}"] = dict(base, method=m, train_acc=1.0, test_acc=acc[s])
        recs[f"{name}/{s:02d}_dank-cv"] = dict(base, method="dank-cv",
                                               taus={"0.01": _fit(dank[s])})
        for m in readings.METHODS:
            if m in readings.DEPENDS:
                st, gap = (status or {}).get(m, ("converged", 1e-7))
                acc = reading_acc.get(m, dank)
                recs[f"{name}/{s:02d}_{m}"] = dict(base, method=m, **_fit(acc[s], st, gap))
    return recs


def _paper_acc(name):
    return paper.SOCMKL[name]["DANK"][1][0] / 100 + WOBBLE


def _two_sets(far=0.06, status=None):
    """heart and wine: dank-cv ``far`` below the paper, ago3 equal to the paper on average."""
    recs = {}
    for name in ("heart", "wine"):
        p = _paper_acc(name)
        recs |= _set_records(name, p - far, p - far - 0.02, p - far,
                             {"dank-ago3": p, "dank-eta-n": p - 2 * far}, status)
    return recs


def test_the_reading_that_equals_the_paper_is_concluded_closest():
    tb = aggregate(_two_sets(status={"dank-ago3": ("max_iter", 0.3)}), PROTO, ["heart", "wine"],
                   [], INFO)["sensitivity"]
    summ = tb["summary"]
    assert summ["dank-ago3"]["mean_abs_diff"] == pytest.approx(0.0, abs=1e-9)
    assert summ["dank-cv"]["mean_abs_diff"] == pytest.approx(6.0)
    assert summ["dank-eta-n"]["mean_shift"] == pytest.approx(-6.0)
    assert tb["conclusion"][0].startswith("Closest to the paper's DANK accuracies: (b) Algorithm 1")
    # ago3 is 6 points above SVM-CV on every split: significantly better than both baselines
    assert tb["sets"]["heart"]["dank-ago3"]["verdict"] == "REPRODUCED"
    # equal to SVM-CV: not the significant gain heart's bullet claims, but wine's ">= SVM-CV"
    assert tb["sets"]["heart"]["dank-cv"]["verdict"] == "NOT REPRODUCED"
    assert tb["sets"]["wine"]["dank-cv"]["verdict"] == "REPRODUCED"
    assert tb["sets"]["wine"]["dank-eta-n"]["verdict"] == "NOT REPRODUCED"  # 6 points lower
    assert "reproduce(s) the paper's claim on every set" in tb["conclusion"][1]
    assert "weak" in tb["conclusion"][2] and "closer to the paper on 2 sets" in tb["conclusion"][2]
    assert summ["dank-ago3"]["stops"] == {"cap": 12} and summ["dank-ago3"]["gap_median"] == 0.3
    assert any(c.startswith("(b) Algorithm 1 as printed: its final points are not DANK's optimum")
               for c in tb["conclusion"])


def test_no_reading_closer_than_the_optimum_and_none_reproducing_is_said_plainly():
    recs = {}
    for name in ("heart", "wine"):
        p = _paper_acc(name)
        recs |= _set_records(name, p, p, p - 0.01, {"dank-ago3": p - 0.05})
    tb = aggregate(recs, PROTO, ["heart", "wine"], [], INFO)["sensitivity"]
    assert tb["conclusion"][0].startswith("Closest to the paper's DANK accuracies: (a) certified")
    assert tb["conclusion"][1].startswith("No reading reproduces the paper")
    assert tb["conclusion"][2].startswith("No other reading is closer to the paper")


def test_sign_test_is_the_exact_binomial():
    assert S._sign_test(5, 0) == pytest.approx(2 / 32)
    assert S._sign_test(3, 3) == 1.0 and S._sign_test(0, 0) == 1.0
    assert S._sign_test(9, 1) == pytest.approx(2 * 11 / 1024)


def _results(tb):
    return dict(command="dank-reproduce --test", protocol=PROTO.to_dict(), tables=tb,
                verdicts=[], datasets=INFO, versions={"numpy": "x"}, seconds=1.0, n_cells=1,
                n_cached=0, jobs=1, protocol_notes=["note"], normalisation={}, conv=None,
                figures={}, large=None, large_path="benchmarks/results/large.json")


def test_section_follows_table_socmkl_and_is_absent_without_reading_cells():
    recs = _two_sets()
    tb = aggregate(recs, PROTO, ["heart", "wine"], [], INFO)
    md = render_report(_results(tb))
    assert md.index("## Table 1") < md.index("## Sensitivity") < md.index("## Table 2")
    row = next(ln for ln in md.splitlines() if ln.startswith("| heart | 87.9 |"))
    ago3 = tb["sensitivity"]["sets"]["heart"]["dank-ago3"]["test"]
    assert f"{ago3['mean']:.1f}±{ago3['std']:.1f} R" in row
    for line in tb["sensitivity"]["conclusion"]:
        assert f"- {line}" in md
    summary = [ln for ln in md.splitlines()
               if ln.startswith(("| (b) Algorithm 1", "| (d) eta = n"))]
    assert len(summary) == 2  # the norms' bars are escaped: still 7 cells, 8 separators
    assert all(len(re.findall(r"(?<!\\)\|", ln)) == 8 for ln in summary)
    old = {k: v for k, v in recs.items() if v["method"] not in readings.CELLS}
    tb_old = aggregate(old, PROTO, ["heart", "wine"], [], INFO)
    assert "sensitivity" not in tb_old
    assert "## Sensitivity" not in render_report(_results(tb_old))
