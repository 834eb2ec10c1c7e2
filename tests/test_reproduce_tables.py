"""Tables, paired t-tests, verdicts and the report writer of dank-reproduce (synthetic records).

What would fail here: an unpaired (or mis-aligned) t-test, a verdict that ignores
significance or direction, a report cell without the paper's number beside ours, an
uncertified DANK cell not marked, the wrong normalisation picked for the regression error.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from verification.study.experiments import paper
from verification.study.experiments.protocol import Protocol
from verification.study.experiments.tables import (
    aggregate,
    normalisation_analysis,
    paired_ttest,
    render_report,
    verdicts,
)

PROTO = Protocol(sigma_grid=(1.0,), C_grid=(1.0,), n_splits=6, taus=(0.0, 0.01, 1.0),
                 readings=("cv",))


def test_paired_ttest_is_paired():
    # a large split-to-split spread shared by both methods, a small consistent difference
    base = np.array([60.0, 90.0, 70.0, 80.0, 65.0, 85.0])
    a = base + np.array([1.0, 1.2, 0.9, 1.1, 1.0, 0.8])
    d = a - base
    t = d.mean() / (d.std(ddof=1) / math.sqrt(d.size))
    p = 2 * stats.t.sf(abs(t), d.size - 1)
    res = paired_ttest(a, base)
    assert res["n"] == 6 and res["mean_diff"] == pytest.approx(d.mean())
    assert res["t"] == pytest.approx(t) and res["p"] == pytest.approx(p)
    assert res["p"] < 1e-4 < 0.5 < stats.ttest_ind(a, base).pvalue  # unpaired: not significant
    assert paired_ttest([1, 2, 3], [1, 2, 3])["p"] == 1.0
    assert paired_ttest([2, 3, 4], [1, 2, 3])["p"] == 0.0  # constant non-zero difference
    assert math.isnan(paired_ttest([1.0], [2.0])["p"])
    with pytest.raises(ValueError, match="same length"):
        paired_ttest([1, 2], [1, 2, 3])


def _records(name, svm, mkl, dank, dank0=None, dank1=None, certified=True, skip=()):
    """Cell records of one classification set; accuracies in [0, 1] per split."""
    recs = {}
    for s in range(len(svm)):
        base = dict(dataset=name, split=s, status="ok", warnings={}, C=1.0, sigma=2.0)
        recs[f"{name}/{s:02d}_svm-cv"] = dict(base, method="svm-cv", train_acc=svm[s] + 0.05,
                                              test_acc=svm[s])
        recs[f"{name}/{s:02d}_mkl-uniform"] = dict(base, method="mkl-uniform",
                                                   train_acc=1.0, test_acc=mkl[s])
        if s in skip:
            continue

        def fit(acc, rank, cert=True):
            return dict(train_acc=min(1.0, acc + 0.08), test_acc=acc, certified=cert, rank=rank,
                        **{"rank_1e-6": rank},
                        solves=[dict(status="converged" if cert else "max_iter", rel_gap=1e-7)])

        taus = {"0": fit(dank[s] if dank0 is None else dank0[s], 50.0),
                "0.01": fit(dank[s], 5.0, certified or s != 0),
                "1": fit(dank[s] if dank1 is None else dank1[s], 1.0)}
        recs[f"{name}/{s:02d}_dank-cv"] = dict(base, method="dank-cv", taus=taus,
                                               cv_certificates=dict(n_solves=10, n_converged=10,
                                                                    max_rel_gap=1e-7))
    return recs


INFO = {"heart": dict(n=270, d=13, note=""), "wine": dict(n=178, d=13, note="")}
SPREAD = np.array([0.80, 0.86, 0.78, 0.84, 0.82, 0.88])
BUMP = np.array([0.05, 0.06, 0.04, 0.05, 0.055, 0.045])


def _verdict(V, vid):
    return next(v for v in V if v["id"] == vid)


def test_significantly_better_is_reproduced_and_pairing_uses_split_ids():
    recs = _records("heart", SPREAD, SPREAD - 0.03, SPREAD + BUMP, dank0=SPREAD + BUMP - 0.02,
                    skip=(5,))
    tb = aggregate(recs, PROTO, ["heart"], [], INFO)
    t = tb["socmkl"]["heart"]["tests"]["DANK (own CV) vs SVM-CV"]
    assert t["n"] == 5  # split 5 has no DANK cell: only common splits are paired
    assert t["mean_diff"] == pytest.approx(100 * BUMP[:5].mean())
    V = verdicts(tb, PROTO)
    assert _verdict(V, "SOCMKL-heart")["verdict"] == "REPRODUCED"
    assert _verdict(V, "UCIrank-tau0")["verdict"] == "REPRODUCED"  # paper: heart bullet too
    row = tb["ucirank"]["heart"]["DANK (own CV)"]
    assert row["0"]["rank"]["mean"] == 50.0 and row["0.01"]["rank"]["mean"] == 5.0


def test_worse_dank_is_not_reproduced_and_nonsignificant_gain_is_partly():
    worse = aggregate(_records("heart", SPREAD, SPREAD - 0.03, SPREAD - BUMP), PROTO, ["heart"],
                      [], INFO)
    assert _verdict(verdicts(worse, PROTO), "SOCMKL-heart")["verdict"] == "NOT REPRODUCED"
    noisy = SPREAD + np.array([0.08, -0.05, 0.07, -0.04, 0.06, -0.03])  # mean +0.015, p > .05
    part = aggregate(_records("heart", SPREAD, SPREAD - 0.05, noisy), PROTO, ["heart"], [], INFO)
    assert part["socmkl"]["heart"]["tests"]["DANK (own CV) vs SVM-CV"]["p"] > 0.05
    assert _verdict(verdicts(part, PROTO), "SOCMKL-heart")["verdict"] == "PARTLY"
    # wine: the paper claims no significance; a slightly lower mean is PARTLY, not a failure
    w = aggregate(_records("wine", SPREAD, SPREAD, SPREAD + np.array(
        [0.01, -0.02, 0.01, -0.02, 0.01, -0.01])), PROTO, ["wine"], [], INFO)
    assert _verdict(verdicts(w, PROTO), "SOCMKL-wine")["verdict"] == "PARTLY"


def _results(tb, V, proto=PROTO, **extra):
    return dict(command="dank-reproduce --test", protocol=proto.to_dict(), tables=tb, verdicts=V,
                datasets={**INFO, **extra.pop("datasets", {})}, versions={"numpy": "x"},
                seconds=1.0, n_cells=1, n_cached=0, jobs=1, protocol_notes=["note"],
                normalisation=extra.pop("normalisation", {}), conv=None, figures={}, large=None,
                large_path="benchmarks/results/large.json")


def test_report_puts_paper_and_ours_side_by_side_and_marks_uncertified():
    tb = aggregate(_records("heart", SPREAD, SPREAD - 0.03, SPREAD + BUMP, certified=False),
                   PROTO, ["heart"], [], INFO)
    V = verdicts(tb, PROTO)
    md = render_report(_results(tb, V))
    ours = tb["socmkl"]["heart"]["DANK"]["test"]
    assert f"87.9±2.9• / {ours['mean']:.1f}±{ours['std']:.1f}•" in md
    svm = tb["socmkl"]["heart"]["SVM-CV"]["test"]
    assert f"81.9±2.4 / {svm['mean']:.1f}±{svm['std']:.1f}" in md
    dank_row = next(ln for ln in md.splitlines() if ln.startswith("| heart | (13, 270)"))
    assert "†" in dank_row  # one final solve of split 0 stopped at max_iter
    assert "80.6±3.5 (not re-run)" in md  # LogDet on heart, Table 2
    assert "84.9±2.2 (109)•" in md  # Table 5 paper cell, tau = 0
    assert "| heart | dank-cv | 17/18 |" in md  # certification table: 6 splits x 3 taus
    assert "NOT RUN" in md  # large-scale rows without benchmarks/results/large.json
    for v in V:
        assert f"**{v['verdict']}**" in md
    certified = aggregate(_records("heart", SPREAD, SPREAD - 0.03, SPREAD + BUMP), PROTO,
                          ["heart"], [], INFO)
    md2 = render_report(_results(certified, verdicts(certified, PROTO)))
    assert "†" not in next(ln for ln in md2.splitlines() if ln.startswith("| heart | (13, 270)"))


def _reg_records(name, paper_rel, splits=4):
    """Records whose relative error equals the paper's numbers exactly (sst = 1 per part)."""
    recs = {}
    for s in range(splits):
        for meth, key in (("svr-cv", "SVR-CV"), ("dank-svr-svm", "DANK")):
            rec = dict(dataset=name, split=s, method=meth, status="ok", warnings={}, C=1.0,
                       sigma=1.0, certified=True, solves=[])
            for part in ("train", "test"):
                rel = paper_rel[f"{key} {part}"][0] * (1 + 0.01 * (s - 1.5))
                rec[part] = dict(n=100, sse=rel, sst=1.0)
            recs[f"{name}/{s:02d}_{meth}"] = rec
        recs[f"{name}/{s:02d}_dank-svr-cv"] = dict(
            dataset=name, split=s, method="dank-svr-cv", status="ok", warnings={},
            skipped="too large")
    return recs


def test_regression_table_fallback_mark_and_normalisation():
    recs = {**_reg_records("housing", paper.UCIREG["housing"]),
            **_reg_records("mpg", paper.UCIREG["mpg"])}
    info = {"housing": dict(n=506, d=13, note="", y_range=45.0),
            "mpg": dict(n=392, d=7, note="", y_range=37.6)}
    tb = aggregate(recs, PROTO, [], ["housing", "mpg"], info)
    row = tb["ucireg"]["housing"]
    assert row["DANK"]["fallback_svr_params"] == 4  # own CV skipped on every split
    assert row["SVR-CV"]["test"]["rel"]["mean"] == pytest.approx(0.267)
    norm = normalisation_analysis(tb["ucireg"])
    assert norm["best"] == "rel" and norm["scores"]["rel"] == pytest.approx(0.0, abs=1e-9)
    V = verdicts(tb, PROTO)
    assert _verdict(V, "UCIreg-housing")["verdict"] == "REPRODUCED"  # same direction as paper
    md = render_report(_results(tb, V, datasets=info, normalisation=norm))
    line = next(ln for ln in md.splitlines() if ln.startswith("| housing |"))
    assert "0.218±0.013 / 0.218" in line and "‡" in line
    assert "0.286±0.027 (not re-run)" in line  # BMKL, paper only


def test_count_claims_need_half_the_papers_count_for_partly():
    from verification.study.experiments.tables import _count_verdict

    assert _count_verdict(6, 6, 10) == "REPRODUCED"
    assert _count_verdict(3, 6, 10) == "PARTLY"
    assert _count_verdict(2, 6, 10) == "NOT REPRODUCED"
    assert _count_verdict(0, 0, 10) == "REPRODUCED"
    assert _count_verdict(2, 6, 2) == "REPRODUCED"  # only 2 sets were run
    assert _count_verdict(0, 3, 0) == "NOT RUN"


def test_large_json_of_the_benchmark_is_read_and_judged(tmp_path):
    """benchmarks/bench_large.py writes {"environment": ..., "rows": [...]} with lower-case set
    names: the reader must match them to the paper's table (a bare list is accepted too)."""
    import json

    import pytest

    from verification.study.experiments.cli import _read_large
    from verification.study.experiments.tables import large_verdicts

    rows = [{"dataset": "eeg", "method": "SVM-SMO", "accuracy": 0.960},
            {"dataset": "eeg", "method": "DANK exact", "accuracy": 0.965, "rel_gap": 1e-7},
            {"dataset": "eeg", "method": "DANK scalable", "accuracy": 0.955}]
    path = tmp_path / "large.json"
    for doc in ({"environment": {}, "rows": rows}, rows):
        path.write_text(json.dumps(doc))
        v = {r["claim"]: r["verdict"] for r in large_verdicts(_read_large(path))}
        assert v["DANK exact more accurate than SVM-SMO on EEG"] == "REPRODUCED"
        assert v["DANK scalable more accurate than SVM-SMO on EEG"] == "NOT REPRODUCED"
        assert v["DANK exact more accurate than SVM-SMO on ijcnn1"] == "NOT RUN"
    path.write_text(json.dumps({"rows": 3}))
    with pytest.raises(ValueError, match="rows"):
        _read_large(path)
    assert _read_large(tmp_path / "absent.json") is None


@pytest.mark.parametrize("run", ["quick", "full", "full-6x6"])
def test_committed_report_is_rendered_byte_for_byte(run):
    """report.md of the committed reproduction is exactly what render_report writes from its
    results.json (guards every split or refactor of the table modules)."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "reproduction" / run
    res = json.loads((root / "results.json").read_text())
    assert render_report(res) == (root / "report.md").read_text()
