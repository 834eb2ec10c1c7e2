"""The report's summary table and results.json: interpretable numbers only (no inf), the
paper's numbering beside each claim id, verdict counts, the cross-check outcome explained."""

import json

import pytest

from verification.cli import main
from verification.study.claims._common import Verdict
from verification.study.runner import outcome_of, render_report, run_all, summarize


def _v(claim, status, ratio, **kw):
    return Verdict(claim=claim, status=status, worst_ratio=ratio, where={"n": 2}, n_instances=10,
                   tolerance=1e-8, statement=f"statement of {claim}", **kw)


VERDICTS = [
    _v("L1", "VIOLATED-DEGENERATE", 0.9999, n_degenerate=3, headline="only where rhs <= 0",
       degenerate_where={"lhs": 0.0, "rhs": -3.5},
       degenerate_counterexample_path="/x/counterexample_L1_degenerate.npz"),
    _v("PG", "VIOLATED", 4.6, n_violations=5, n_degenerate=2, headline="lhs/rhs = 4.6 at worst",
       counterexample_path="/x/counterexample_PG.npz"),
    _v("T3", "VIOLATED", 111.0, n_violations=4, headline="lhs/rhs = 111 at worst"),
    _v("T4", "VACUOUS", None, n_premise_met=0, headline="premise met in 0 of 10 evaluations",
       vacuity="The premise can never be met: the gradient exceeds the threshold."),
    _v("HW", "HOLDS", 0.5, headline="worst lhs/rhs = 0.5"),
    _v("SD", "INCONCLUSIVE", None, headline="no solve certified"),
]
ROWS = [dict(instance=0, n=8, C=1.0, eta=1.0, tau=0.01, method=m, status=s, rel_gap=g,
             n_iter=10, time=0.1, stopped_before_optimal=False, outcome=outcome_of(m, s, g),
             brackets_overlap_ref=True)
        for m, s, g in [("newton", "converged", 1e-10), ("pgm", "stopped", 2e-2),
                        ("paper", "max_iter", 5.8)]]


def test_summary_counts_and_headline_order():
    s = summarize(VERDICTS)
    assert s["counts"] == {"HOLDS": 1, "VIOLATED": 2, "VIOLATED-DEGENERATE": 1, "VACUOUS": 1,
                           "INCONCLUSIVE": 1}
    assert [d["claim"] for d in s["violations"]] == ["T3", "PG"]  # substantive only, largest first


def test_report_table():
    md = render_report(VERDICTS, ROWS, {}, seed=0, budget=1, elapsed=1.0, t_checks=0.5)
    assert "inf" not in md.replace("information", "")
    assert "1 HOLDS, 2 VIOLATED, 1 VIOLATED-DEGENERATE, 1 VACUOUS, 1 INCONCLUSIVE" in md
    table = [line for line in md.splitlines() if line.startswith("| ")]
    row = {line.split(" | ")[0][2:]: line for line in table}
    assert "Lemma 1 [fbound]" in row["L1"] and "**VIOLATED-DEGENERATE**" in row["L1"]
    assert "counterexample_L1_degenerate.npz" in row["L1"]
    assert "Eq. (17) [pgm]" in row["PG"] and "4.6" in row["PG"]
    assert "Theorem 7 [theorsv]" in row["T4"] and "**VACUOUS**" in row["T4"]
    assert "T3 (Theorem 6) lhs/rhs = 111; PG (Eq. (17)) lhs/rhs = 4.6" in md
    assert "*Can the premise be met?* The premise can never be met" in md
    assert "Degenerate cases (rhs <= 0): 3" in md
    assert "dank-verify reproduce counterexample_PG.npz" in md
    for status in ("HOLDS", "VIOLATED", "VIOLATED-DEGENERATE", "VACUOUS", "INCONCLUSIVE"):
        assert f"- **{status}**:" in md                       # every verdict is explained


def test_cross_check_column_is_explained():
    md = render_report(VERDICTS, ROWS, {}, seed=0, budget=1, elapsed=1.0)
    assert "stopped before optimal" not in md
    assert "| pgm | stopped by its rule before the optimum |" in md
    assert "| paper | iteration limit reached |" in md
    assert "declared convergence too early" in md and "||a_t - a_(t-1)|| <= 1e-4" in md


@pytest.mark.parametrize("method,status,gap,text", [
    ("newton", "converged", 1e-10, "certified"),
    ("pgm", "stopped", 1e-2, "before the optimum"),
    ("paper", "stopped", 1e-9, "near the optimum"),
    ("paper", "max_iter", 3.0, "iteration limit"),
])
def test_outcome_of(method, status, gap, text):
    assert text in outcome_of(method, status, gap)


def test_results_json_version_2_has_no_inf(tmp_path):
    res = run_all(out=str(tmp_path), seed=1, budget=1, groups=("L1",), make_figures=False,
                  crosscheck=False)
    text = (tmp_path / "results.json").read_text()

    def refuse(c):
        raise AssertionError(f"non-standard JSON constant {c}")

    data = json.loads(text, parse_constant=refuse)
    assert data["version"] == 2 and data["format"] == "dank-verify-results"
    (v,) = data["verdicts"]
    assert v["claim"] == "L1" and v["name"].startswith("Lemma 1 [fbound]")
    assert v["status"] in ("VIOLATED-DEGENERATE", "HOLDS")
    assert v["worst_ratio"] is None or 0 < v["worst_ratio"] <= 1 + 1e-8
    assert sum(data["summary"]["counts"].values()) == 1
    assert res["verdicts"][0]["n_degenerate"] == v["n_degenerate"]
    assert "| L1 | Lemma 1 [fbound]" in (tmp_path / "report.md").read_text()


def test_cli_help_texts(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--seed SEED seed of every random draw" in out
    assert "default: dank-report" in out
    with pytest.raises(SystemExit) as e:
        main(["--budget", "0"])
    assert e.value.code == 2
