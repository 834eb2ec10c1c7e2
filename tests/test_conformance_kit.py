"""The conformance kit tells right from wrong (issue 16 item 7): an independent correct P1
solver (tests/_conformance_impls.py, importing neither dank_fast nor dank_ref) is certified on
every golden P1 vector; solvers broken in plausible ways each get the right status and reason."""

from __future__ import annotations

import json
import sys

import pytest

from verification.cli import main
from verification.conformance.cases import load_cases
from verification.conformance.kit import run_cases
from verification.conformance.runners import CmdRunner, ImplRunner
from verification.schemas import validate

IMPLS = "_conformance_impls"


@pytest.fixture(scope="module")
def p1_cases():
    return {c.id: c for c in load_cases("golden", ("svm",))}


@pytest.fixture(scope="module")
def impl(tmp_path_factory, p1_cases):
    """``run(fn, ids)``: the rows of ``_conformance_impls.fn`` on those P1 vectors, all variants
    served by one worker (``dispatch`` reads the variant's name from a file at each call)."""
    mode = tmp_path_factory.mktemp("mode") / "mode"
    mp = pytest.MonkeyPatch()
    mp.setenv("DANK_CONFORMANCE_MODE", str(mode))
    with ImplRunner(f"{IMPLS}:dispatch", timeout=30.0) as runner:
        def run(fn, ids, timeout=30.0):
            mode.write_text(fn)
            runner.timeout = timeout
            return {r["id"]: r for r in run_cases([p1_cases[i] for i in ids], runner)}

        yield run
    mp.undo()


def test_independent_solver_is_certified_on_every_golden_p1_vector(tmp_path, capsys):
    out = tmp_path / "out"
    code = main(["conformance", "--impl", f"{IMPLS}:correct", "--task", "svm", "--out",
                 str(out)])
    console = capsys.readouterr().out
    assert code == 0, console
    assert console.startswith("conformance: 20/20 certified (svm 20/20); report: ")
    doc = json.loads((out / "results.json").read_text())
    validate(doc, "conformance-results")
    assert [r["status"] for r in doc["results"]] == ["certified"] * 20
    assert all(r["rel_gap"] <= 1e-6 and r["failed"] == [] for r in doc["results"])
    assert doc["results"][0]["meta"] == "independent: SLSQP + projected gradient"
    s = doc["summary"]["svm"]
    assert (s["instances"], s["certified"], s["success_rate"]) == (20, 20, 1.0)
    report = (out / "report.md").read_text()
    assert "| svm | 20 | 20 | 0 | 0 | 0 | 100% |" in report and "## Failures (0)" in report


# break -> (failed checks, words of the diagnosis), each on two vectors where it matters
BREAKS = {
    "gamma_sign": (["gap", "F"], "the inner minimiser is wrong"),
    "threshold_tau": (["gap"], "not converged or a wrong problem"),
    "five_iterations": (["gap"], "not converged or a wrong problem"),
    "infeasible": (["equality"], "infeasible: equality violated by 1e-06"),
    "wrong_bias": (["bias"], "alpha is certified but the bias is not"),
}


@pytest.mark.parametrize("fn", list(BREAKS))
def test_broken_solver_is_not_certified_with_the_right_reason(impl, fn):
    failed, words = BREAKS[fn]
    for row in impl(fn, ["p1_basic", "p1_linear"]).values():
        assert row["status"] == "not certified", row
        assert row["failed"] == failed, row
        assert words in row["diagnosis"], row
        assert len(row["reasons"]) == len(failed)


@pytest.mark.parametrize("fn, status, words", [
    ("raises", "error", "RuntimeError: the solver gave up (at _conformance_impls.py:"),
    ("crashes", "error", "the implementation's process died, exit code 3"),
    ("not_a_dict", "error", "TypeError: the function returned list, not a dict"),
    ("wrong_shape", "error", "invalid solution: alpha must be shape (12,), got shape (11,)"),
])
def test_failing_solver_is_an_error_row(impl, fn, status, words):
    row = impl(fn, ["p1_basic"])["p1_basic"]
    assert row["status"] == status and words in row["diagnosis"], row


def test_a_hang_is_killed_and_the_next_instance_still_runs(impl):
    rows = impl("hangs_on_large", ["p1_basic", "p1_n2"], timeout=1.0)
    assert rows["p1_basic"]["status"] == "timeout"
    assert rows["p1_basic"]["diagnosis"] == "no answer within 1 s (the worker was killed)"
    assert rows["p1_n2"]["status"] == "certified"


def test_exit_code_1_lists_every_failure(tmp_path, capsys):
    code = main(["conformance", "--impl", f"{IMPLS}:raises", "--task", "svm", "--out",
                 str(tmp_path)])
    lines = capsys.readouterr().out.splitlines()
    assert code == 1
    assert lines[0].startswith("conformance: 0/20 certified (svm 0/20)")
    assert len(lines) == 21 and all(x.startswith("  ERROR ") for x in lines[1:])
    validate(json.loads((tmp_path / "results.json").read_text()), "conformance-results")


@pytest.mark.parametrize("args, words", [
    ([], "one of the arguments --impl --cmd is required"),
    (["--impl", "nocolon"], "--impl must be MODULE:FUNCTION"),
    (["--impl", "no_such_module_xyz:f"], "No module named 'no_such_module_xyz'"),
    (["--impl", f"{IMPLS}:correct", "--timeout", "0"], "must be a finite number > 0"),
    (["--impl", f"{IMPLS}:correct", "--set", "nope"], "invalid choice: 'nope'"),
    (["--cmd", "true {instance}"], "must name a program and contain {solution}"),
])
def test_bad_usage_is_exit_2_in_one_line(tmp_path, capsys, args, words):
    code = main(["conformance", *args, "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and words in err and len(err.splitlines()) == 1, err


SCRIPT = """\
import sys
sys.path.insert(0, {tests!r})
import _conformance_impls as impls
from verification.formats import load_instance, save_solution
inst = load_instance(sys.argv[1])
if inst["n"] == 2:
    sys.exit("refusing n = 2")
if inst["eta"] == 1e-3:
    open(sys.argv[2], "w").write("not a solution")
    sys.exit(0)
save_solution(sys.argv[2], task="svm", **impls.correct(inst))
"""


@pytest.mark.parametrize("fmt, ids", [("npz", ("p1_basic", "p1_n2", "p1_eta_1e-3")),
                                      ("json", ("p1_basic",))])
def test_cmd_runs_a_program_per_instance(p1_cases, tmp_path, monkeypatch, fmt, ids):
    tests = str(__import__("pathlib").Path(__file__).parent)
    script = tmp_path / "solve.py"
    script.write_text(SCRIPT.format(tests=tests))
    monkeypatch.setenv("PYTHONPATH", ":".join(p for p in sys.path if p))
    with CmdRunner(f"{sys.executable} {script} {{instance}} {{solution}}", timeout=60,
                   jobs=2, fmt=fmt) as runner:
        rows = {r["id"]: r for r in run_cases([p1_cases[i] for i in ids], runner)}
    assert rows["p1_basic"]["status"] == "certified"
    assert rows["p1_basic"]["meta"] == "independent: SLSQP + projected gradient"
    if fmt == "npz":
        assert rows["p1_n2"]["diagnosis"] == "the program exited with code 1: refusing n = 2"
        assert rows["p1_eta_1e-3"]["status"] == "error"
        assert rows["p1_eta_1e-3"]["diagnosis"].startswith("unreadable solution: ")


def test_cmd_timeout_kills_the_program(p1_cases):
    with CmdRunner("sh -c 'sleep 30' {instance} {solution}", timeout=0.5) as runner:
        row = run_cases([p1_cases["p1_n2"]], runner)[0]
    assert row["status"] == "timeout" and row["time"] == 0.5
