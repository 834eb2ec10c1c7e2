"""Smoke runs of `dank-verify`."""

import json
import os

import pytest

from verification.cli import main


def test_runner_small(tmp_path):
    """Cheap default-run smoke: two claim groups, report + results written."""
    from verification.runner import run_all

    res = run_all(out=str(tmp_path), seed=1, budget=1, groups=("L1", "HW"), make_figures=False,
                  crosscheck=False)
    assert [v["claim"] for v in res["verdicts"]] == ["L1", "HW"]
    assert "| L1 |" in (tmp_path / "report.md").read_text()


def test_help(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    assert "dank-verify" in capsys.readouterr().out


@pytest.mark.slow
def test_budget1_smoke(tmp_path):
    """Full `--budget 1` run (~25 s on idle 2 cores, slower under load): marked slow."""
    out = tmp_path / "out"
    assert main(["--budget", "1", "--out", str(out), "--seed", "3"]) == 0
    res = json.loads((out / "results.json").read_text())
    claims = {v["claim"] for v in res["verdicts"]}
    assert {"L1", "L2", "T1", "PG", "L3", "T2", "T3", "T4", "NR", "SD", "HW", "EMP"} <= claims
    assert all(v["status"] in ("HOLDS", "VIOLATED", "INCONCLUSIVE") for v in res["verdicts"])
    assert (out / "report.md").exists()
    for p in res["figures"].values():
        assert os.path.getsize(p) > 1000
    for v in res["verdicts"]:
        if v["status"] == "VIOLATED" and v["counterexample_path"] and v["claim"] != "EMP":
            assert main(["reproduce", v["counterexample_path"]]) == 0


def test_reproduce_bad_file(tmp_path):
    p = tmp_path / "x.npz"
    p.write_bytes(b"garbage")
    assert main(["reproduce", str(p)]) == 2


@pytest.mark.slow
def test_quick(tmp_path):
    assert main(["--quick", "--out", str(tmp_path / "q")]) == 0
