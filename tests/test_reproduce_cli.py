"""The dank-reproduce command line: bad input, an end-to-end smoke run, resume, ``--quick``.

The smoke run (fertility + pyrim, 2 splits, a 2 x 2 grid, 20 iterations of Figure 4) takes
seconds and is skipped without the data sets; the real ``--quick`` is marked slow.
"""

from __future__ import annotations

import json
import os

import pytest

from verification.schemas import validate
from verification.study.experiments import readings
from verification.study.experiments.cli import main
from verification.study.experiments.data import DataDirError, resolve_data_dir


def _data_dir():
    try:
        return resolve_data_dir()
    except DataDirError:
        return None


needs_data = pytest.mark.skipif(_data_dir() is None, reason="data sets not present")


def test_help(capsys):
    with pytest.raises(SystemExit) as e:
        main(["--help"])
    assert e.value.code == 0
    assert "dank-reproduce" in capsys.readouterr().out


def test_missing_data_dir_exits_2(tmp_path, capsys):
    code = main(["--data-dir", str(tmp_path / "absent"), "--out", str(tmp_path / "o")])
    assert code == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "--data-dir" in err


@pytest.mark.parametrize("args, msg", [(["--sets", "iris"], "unknown classification"),
                                       (["--grid-exponents", "a,b"], "--grid-exponents"),
                                       (["--jobs", "0"], "--jobs")])
def test_bad_arguments_exit_2(tmp_path, capsys, args, msg):
    assert main([*args, "--out", str(tmp_path / "o"), "--data-dir", str(tmp_path)]) == 2
    assert msg in capsys.readouterr().err


def test_out_that_cannot_be_a_directory_exits_2(tmp_path, capsys):
    """An ``--out`` under a file is refused in one line before any data is loaded."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert main(["--out", str(blocker / "o"), "--data-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--out" in err[0] and "cannot be made a directory" in err[0]


SMOKE = ["--sets", "fertility", "--reg-sets", "pyrim", "--splits", "2", "--grid-exponents=-1,1",
         "--conv-iters", "20"]


@needs_data
def test_smoke_pipeline_and_resume(tmp_path):
    out = tmp_path / "out"
    args = [*SMOKE, "--out", str(out), "--data-dir", str(_data_dir()), "--seed", "5"]
    assert main(args) == 0
    res = json.loads((out / "results.json").read_text())
    validate(res, "reproduce-results")
    assert res["seed"] == 5 and res["protocol"]["seed"] == 5
    assert (res["format"], res["version"]) == ("dank-reproduce-results", 1)
    assert {"numpy", "scipy", "scikit-learn", "dank_fast"} <= set(res["versions"])
    # 4 + 3 cells of the paper's methods, 2 + 2 of the re-run baselines, the readings, per split
    assert res["n_cells"] == 2 * (4 + 3 + 2 + 2 + len(readings.METHODS)) and res["n_cached"] == 0
    ids = {v["id"] for v in res["verdicts"]}
    assert {"SOCMKL-fertility", "UCIreg-pyrim", "UCIrank-rank", "conv", "UCIres-LogDet"} <= ids
    assert res["tables"]["ucires"]["fertility"]["RF"]["test"]["n"] == 2
    assert res["tables"]["ucireg_nw"]["pyrim"]["NW-ML"]["test"]["rel"]["n"] == 2
    assert all(v["verdict"] in ("REPRODUCED", "PARTLY", "NOT REPRODUCED", "NOT RUN")
               for v in res["verdicts"])
    fert = res["tables"]["socmkl"]["fertility"]
    assert fert["DANK"]["test"]["n"] == 2 and fert["SVM-CV"]["test"]["n"] == 2
    for cert in res["tables"]["certification"]:
        assert cert["final_solves"] > 0
    sens = res["tables"]["sensitivity"]["sets"]["fertility"]
    assert all(sens[m]["test"]["n"] == 2 for m in sens)  # every reading, (a) included
    assert set(sens) == {"dank-cv", *(m for m in readings.CELLS if m.startswith("dank-"))}
    md = (out / "report.md").read_text()
    assert "| fertility |" in md and "| pyrim |" in md and "## Verdicts" in md
    assert "## Sensitivity" in md
    for p in res["figures"].values():
        assert os.path.getsize(p) > 1000
    # rerun: every cell comes from the cache and the tables are identical
    assert main(args) == 0
    again = json.loads((out / "results.json").read_text())
    validate(again, "reproduce-results")  # written from the cache
    assert again["n_cached"] == again["n_cells"]
    assert again["tables"]["socmkl"] == res["tables"]["socmkl"]
    assert again["tables"]["ucireg"] == res["tables"]["ucireg"]
    assert again["tables"]["ucires"] == res["tables"]["ucires"]
    assert [v["verdict"] for v in again["verdicts"]] == [v["verdict"] for v in res["verdicts"]]


@pytest.mark.slow
@needs_data
def test_quick(tmp_path):
    """The real ``dank-reproduce --quick`` (a few minutes on 2 cores)."""
    out = tmp_path / "q"
    assert main(["--quick", "--jobs", "2", "--out", str(out)]) == 0
    res = json.loads((out / "results.json").read_text())
    validate(res, "reproduce-results")
    assert set(res["tables"]["socmkl"]) == {"heart", "sonar", "wine"}
    assert not res["tables"]["errors"]


@pytest.mark.parametrize("args, msg", [(["--conv-iters", "abc"], "invalid int value"),
                                       (["--bogus"], "unrecognized arguments: --bogus")])
def test_a_refused_argument_is_one_line(capsys, args, msg):
    """argparse's own refusals too: exit 2, one line naming the argument, no usage block."""
    with pytest.raises(SystemExit) as e:
        main(args)
    out, err = capsys.readouterr()
    assert e.value.code == 2 and out == ""
    assert err.startswith("dank-reproduce: error:") and err.count("\n") == 1 and msg in err
