"""verification.study.experiments.compare_runs: verdicts of two dank-reproduce runs side by side."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from verification.study.experiments import compare_runs

ROOT = Path(__file__).resolve().parents[1]


def _run(verdicts, grid=6, splits=3):
    g = [2.0 ** k for k in range(grid)]
    return {"command": "dank-reproduce --x", "protocol": {"sigma_grid": g, "C_grid": g,
                                                         "n_splits": splits},
            "verdicts": [dict(id=i, claim=f"claim {i}", paper="p", ours=f"ours {i} {v}",
                              verdict=v, rule="r") for i, v in verdicts]}


def test_changed_claims_and_transitions_are_found():
    old = _run([("a", "REPRODUCED"), ("b", "PARTLY"), ("c", "NOT REPRODUCED"), ("x", "PARTLY")])
    new = _run([("a", "REPRODUCED"), ("b", "NOT REPRODUCED"), ("c", "PARTLY"), ("y", "NOT RUN")],
               grid=11, splits=10)
    cmp = compare_runs.compare(old, new)
    assert [k for k, _, _ in cmp["changed"]] == ["b", "c"]
    assert [k for k, _, _ in cmp["same"]] == ["a"]
    assert cmp["transitions"] == {("PARTLY", "NOT REPRODUCED"): 1,
                                  ("NOT REPRODUCED", "PARTLY"): 1}
    assert [v["id"] for v in cmp["only_old"]] == ["x"]
    assert [v["id"] for v in cmp["only_new"]] == ["y"]
    md = compare_runs.render(old, new, names=("6x6", "11x11"))
    assert "2 of 3 common claims changed verdict" in md
    assert "(6 x 6 grid, 3 splits)" in md and "(11 x 11 grid, 10 splits)" in md
    assert "| claim b | p | ours b PARTLY **PARTLY** | ours b NOT REPRODUCED **NOT REPRODUCED** |" \
        in md
    assert "claim a" not in md  # unchanged claims only with show_all
    assert "claim a" in compare_runs.render(old, new, show_all=True)
    assert "Only in 6x6: x (PARTLY)" in md and "Only in 11x11: y (NOT RUN)" in md


def test_identical_runs_have_no_changes():
    run = _run([("a", "REPRODUCED"), ("b", "PARTLY")])
    cmp = compare_runs.compare(run, copy.deepcopy(run))
    assert not cmp["changed"] and len(cmp["same"]) == 2
    assert "0 of 2 common claims changed verdict" in compare_runs.render(run, run)


def test_committed_runs_compare(capsys):
    quick = ROOT / "reproduction" / "quick" / "results.json"
    full = ROOT / "reproduction" / "full-6x6" / "results.json"
    if not (quick.exists() and full.exists()):
        pytest.skip("committed runs absent")
    assert compare_runs.main([str(quick), str(full), "--names", "quick,full"]) == 0
    out = capsys.readouterr().out
    n = len(json.loads(full.read_text())["verdicts"])
    assert out.startswith("## Verdicts: quick against full")
    assert "totals full:" in out
    totals = compare_runs.compare(compare_runs.load_run(str(quick)),
                                  compare_runs.load_run(str(full)))["totals"]["new"]
    assert sum(totals.values()) == n


def test_bad_files_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"verdicts": 3}')
    ok = tmp_path / "ok.json"
    ok.write_text(json.dumps(_run([("a", "PARTLY")])))
    assert compare_runs.main([str(bad), str(ok)]) == 2
    assert "bad.json: not a dank-reproduce results.json" in capsys.readouterr().err
    assert compare_runs.main([str(tmp_path / "missing.json"), str(ok)]) == 2
    assert "missing.json: cannot read" in capsys.readouterr().err
    future = tmp_path / "future.json"
    future.write_text(json.dumps({**_run([("a", "PARTLY")]), "format": "dank-reproduce-results",
                                  "version": 2}))
    assert compare_runs.main([str(future), str(ok)]) == 2
    assert "future.json: unsupported format 'dank-reproduce-results' version 2" \
        in capsys.readouterr().err
    current = tmp_path / "current.json"
    current.write_text(json.dumps({**_run([("a", "PARTLY")]), "format": "dank-reproduce-results",
                                   "version": 1}))
    assert compare_runs.main([str(current), str(ok)]) == 0


def test_committed_change_list_and_readme_totals_are_current():
    """reproduction/full/verdicts-vs-6x6.md is exactly compare_runs' output for the two committed
    full runs, and the verdict totals of docs/user_guide/reproducing.md are those of
    reproduction/full (both are generated, never typed)."""
    old = ROOT / "reproduction" / "full-6x6" / "results.json"
    new = ROOT / "reproduction" / "full" / "results.json"
    if not (old.exists() and new.exists()):
        pytest.skip("committed runs absent")
    a, b = compare_runs.load_run(str(old)), compare_runs.load_run(str(new))
    md = compare_runs.render(a, b, names=("6 x 6", "11 x 11"))
    assert (ROOT / "reproduction" / "full" / "verdicts-vs-6x6.md").read_text() == md + "\n"
    totals = compare_runs.compare(a, b)["totals"]["new"]
    line = f"**{compare_runs._totals(totals)}** of {sum(totals.values())} claims"
    assert line in (ROOT / "docs" / "user_guide" / "reproducing.md").read_text()
