"""The conformance kit tells right from wrong: an independent correct P1
solver (tests/_conformance_impls.py, importing neither dank_fast nor dank_ref) is certified on
every golden P1 vector; solvers broken in plausible ways each get the right status and reason.
What an implementer in another language meets: progress on stderr, time
limits that grow with n, the tail of a failing program's stderr, the exported instance files
and what "not certified" does not prove."""

from __future__ import annotations

import json
import re
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
    assert console.startswith("conformance: 22/22 certified (svm 22/22); report: ")
    doc = json.loads((out / "results.json").read_text())
    validate(doc, "conformance-results")
    assert [r["status"] for r in doc["results"]] == ["certified"] * 22
    assert all(r["rel_gap"] <= 1e-6 and r["failed"] == [] for r in doc["results"])
    assert doc["results"][0]["meta"] == "independent: SLSQP + projected gradient"
    s = doc["summary"]["svm"]
    assert (s["instances"], s["certified"], s["success_rate"]) == (22, 22, 1.0)
    report = (out / "report.md").read_text()
    assert "| svm | 22 | 22 | 0 | 0 | 0 | 100% |" in report and "## Failures (0)" in report
    # per-sample boxes: the weighted golden vectors are among them
    assert {"p1_weighted", "p1_class_weights"} <= {r["id"] for r in doc["results"]}


# break -> (failed checks, words of the diagnosis), each on two vectors where it matters
BREAKS = {
    "gamma_sign": (["gap", "F"], "the inner minimiser is wrong"),
    # the oracle's evidence (a reference solve on these small instances) tells these two apart
    "threshold_tau": (["gap"], "a different problem: alpha is near-optimal for DANK with "
                               "tau x 2"),
    "five_iterations": (["gap"], "not converged: no F submitted"),
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
    assert lines[0].startswith("conformance: 0/22 certified (svm 0/22)")
    assert len(lines) == 23 and all(x.startswith("  ERROR ") for x in lines[1:])
    validate(json.loads((tmp_path / "results.json").read_text()), "conformance-results")


@pytest.mark.parametrize("args, words", [
    ([], "one of the arguments --impl --cmd --export is required"),
    (["--impl", f"{IMPLS}:correct", "--export", "x"], "not allowed with argument"),
    (["--impl", f"{IMPLS}:correct", "--timeout-per-1000", "-1"], "must be a finite number >= 0"),
    (["--impl", f"{IMPLS}:correct", "--case", "p1_basik"], "no instance 'p1_basik' in the "
     "selected set and tasks; closest: p1_basic"),
    (["--export", "x", "--case", "fam1_svm_n10"], "family ids are in --set families (the "
     "default set is golden)"),
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


def _sh(script: str) -> str:
    """A ``--cmd`` running ``script`` in sh (``$1`` the instance, ``$2`` the solution)."""
    return f"sh -c '{script}' sh {{instance}} {{solution}}"


def test_progress_is_one_line_per_instance_on_stderr_and_quiet_silences_it(tmp_path, capsys):
    args = ["conformance", "--impl", f"{IMPLS}:correct", "--case", "p1_n2", "--case",
            "p1_basic", "--out", str(tmp_path)]
    assert main(args) == 0
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert err[0].startswith("dank-verify conformance: 2 instances of set golden; time limit "
                             "60 s + 540 s x (n/1000)^2 (60.1 s at the largest, n = 12)")
    assert len(err) == 3, err
    for i, line in enumerate(err[1:], 1):
        assert re.fullmatch(rf"\[{i}/2\] p1_(n2|basic): certified \(\d+\.\d\d s, rel\. gap "
                            r"\S+\)", line), line
    assert {line.split(":")[0].split()[1] for line in err[1:]} == {"p1_n2", "p1_basic"}
    assert captured.out.startswith("conformance: 2/2 certified")
    assert main([*args, "--quiet"]) == 0
    assert capsys.readouterr().err == ""


def test_the_time_limit_grows_with_n_and_keeps_what_the_program_wrote(tmp_path, capsys):
    """S + T (n/1000)^2 with S = 1, T = 40000: 1.16 s at n = 2 (killed during its 3 s sleep),
    6.76 s at n = 12 (it ends by itself, with exit code 3)."""
    cmd = _sh("echo started >&2; sleep 3; echo finished >&2; exit 3")
    code = main(["conformance", "--cmd", cmd, "--case", "p1_n2", "--case", "p1_basic",
                 "--timeout", "1", "--timeout-per-1000", "40000", "--out", str(tmp_path)])
    assert code == 1
    doc = json.loads((tmp_path / "results.json").read_text())
    validate(doc, "conformance-results")
    assert (doc["version"], doc["timeout"], doc["timeout_per_1000"]) == (2, 1.0, 40000.0)
    rows = {r["id"]: r for r in doc["results"]}
    assert rows["p1_n2"]["time_limit"] == pytest.approx(1.16)
    assert rows["p1_n2"]["status"] == "timeout" and rows["p1_n2"]["stderr_tail"] == "started"
    assert rows["p1_n2"]["diagnosis"] == "no solution within 1.16 s (the program was killed)"
    assert rows["p1_basic"]["time_limit"] == pytest.approx(6.76)
    assert rows["p1_basic"]["status"] == "error"
    assert rows["p1_basic"]["diagnosis"] == "the program exited with code 3: finished"
    assert rows["p1_basic"]["stderr_tail"] == "started\nfinished"
    report = (tmp_path / "report.md").read_text()
    assert "time limit per instance 1 s + 40000 s x (n/1000)^2" in report
    captured = capsys.readouterr()
    assert "  ERROR         p1_basic: the program exited with code 3: finished (more in " \
        "report.md)" in captured.out
    progress = captured.err.splitlines()[1:]
    assert [re.sub(r"\(\d+\.\d\d s\)", "(T)", line) for line in progress] == [
        "[1/2] p1_basic: error (T): the program exited with code 3: finished",
        "[2/2] p1_n2: timeout (T): no solution within 1.16 s (the program was killed)"]


OCTAVE = ("for i in $(seq 1 30); do echo \"iteration $i\" >&2; done; "
          "echo \"error: dank_solve: nonconformant arguments (op1 is 12x1, op2 is 1x12)\" >&2; "
          "echo \"error: called from\" >&2; echo \"    dank_solve at line 41 column 7\" >&2; "
          "exit 1")


def test_a_crashing_program_keeps_the_last_20_lines_of_its_stderr(tmp_path):
    """An Octave-like crash: the real error is 3 lines before the end, under 30 lines of
    noise; report.md and results.json keep the last 20 lines."""
    code = main(["conformance", "--cmd", _sh(OCTAVE), "--case", "p1_n2", "--quiet", "--out",
                 str(tmp_path)])
    assert code == 1
    row = json.loads((tmp_path / "results.json").read_text())["results"][0]
    tail = row["stderr_tail"].splitlines()
    assert len(tail) == 20 and tail[0] == "iteration 14"
    assert tail[-3:] == ["error: dank_solve: nonconformant arguments (op1 is 12x1, op2 is 1x12)",
                         "error: called from", "    dank_solve at line 41 column 7"]
    assert row["diagnosis"] == "the program exited with code 1: dank_solve at line 41 column 7"
    report = (tmp_path / "report.md").read_text()
    section = report[report.index("## Stderr of the failures"):report.index("## Every")]
    assert "### p1_n2\n\n```text\niteration 14\n" in section
    assert "error: dank_solve: nonconformant arguments" in section


def test_a_long_stderr_is_cut_to_2000_characters_at_a_line_start(tmp_path):
    """25 lines of 500 characters: the last three (1,502 characters with their newlines; four
    would be 2,003)."""
    long_lines = "for i in $(seq 1 25); do printf \"%0500d\\n\" $i >&2; done; exit 2"
    main(["conformance", "--cmd", _sh(long_lines), "--case", "p1_n2", "--quiet", "--out",
          str(tmp_path)])
    tail = json.loads((tmp_path / "results.json").read_text())["results"][0]["stderr_tail"]
    assert len(tail) == 1502 and tail.splitlines() == [f"{i:0500d}" for i in (23, 24, 25)]


def test_an_exception_keeps_the_end_of_its_traceback(impl):
    row = impl("raises", ["p1_n2"])["p1_n2"]
    tail = row["stderr_tail"].splitlines()
    assert tail[0] == "Traceback (most recent call last):"
    assert "_conformance_impls.py" in tail[1] and tail[-1] == "RuntimeError: the solver gave up"
    assert all("_worker.py" not in line for line in tail)  # the kit's own frame is not shown


COPY = "import shutil, sys; shutil.copy(sys.argv[1], sys.argv[3]); sys.exit(1)"


@pytest.mark.parametrize("fmt", ["json", "npz"])
def test_export_writes_the_files_a_program_receives(tmp_path, capsys, fmt):
    """``--export`` writes exactly the instance file ``--cmd`` passes (here copied by the
    program), an index, and the file solved outside the kit is certified by
    ``dank-verify certify``."""
    exp = tmp_path / "exp"
    code = main(["conformance", "--export", str(exp), "--case", "p1_basic", "--case", "p1_n2",
                 "--format", fmt])
    assert code == 0
    assert capsys.readouterr().out == f"conformance: wrote 2 instance files ({fmt}) and " \
        f"index.json to {exp}\n"
    index = json.loads((exp / "index.json").read_text())
    validate(index, "conformance-export")
    assert [(e["id"], e["file"], e["n"], e["task"]) for e in index["instances"]] == [
        ("p1_basic", f"p1_basic.{fmt}", 12, "svm"), ("p1_n2", f"p1_n2.{fmt}", 2, "svm")]
    assert index["instances"][0]["time_limit"] == pytest.approx(60 + 540 * 0.012 ** 2)
    given = tmp_path / f"given.{fmt}"
    main(["conformance", "--cmd", f"{sys.executable} -c '{COPY}' {{instance}} {{solution}} "
          f"{given}", "--case", "p1_basic", "--format", fmt, "--quiet", "--out",
          str(tmp_path / "run")])
    assert given.read_bytes() == (exp / f"p1_basic.{fmt}").read_bytes()

    import _conformance_impls as impls

    from verification.formats import load_instance, save_solution

    sol = tmp_path / f"sol.{fmt}"
    save_solution(sol, task="svm", **impls.correct(load_instance(exp / f"p1_basic.{fmt}")))
    capsys.readouterr()
    assert main(["certify", str(exp / f"p1_basic.{fmt}"), str(sol), "--no-reference"]) == 0


def test_export_of_a_family_instance_by_features(tmp_path):
    exp = tmp_path / "exp"
    assert main(["conformance", "--export", str(exp), "--set", "families", "--case",
                 "fam1_svr_eta_0.001", "--format", "json"]) == 0
    inst = json.loads((exp / "fam1_svr_eta_0.001.json").read_text())
    validate(inst, "instance")
    assert (inst["task"], inst["kernel"], inst["sigma"], inst["eta"]) == \
        ("svr", "gaussian", 0.5, 1e-3)
    assert "K" not in inst and len(inst["X"]) == 50


def test_not_certified_says_what_it_does_not_prove(tmp_path, capsys):
    """A point 0.1% short of the optimum: the report says the gap is only an upper bound and
    what to do; a certified report has no such note."""
    from verification.formats import load_solution, save_solution
    from verification.golden import GOLDEN_DIR

    inst = f"{GOLDEN_DIR}/p1_basic_instance.npz"
    good = load_solution(f"{GOLDEN_DIR}/p1_basic_solution.npz")
    save_solution(tmp_path / "s.json", task="svm", alpha=good["alpha"] * 0.999)
    assert main(["certify", inst, str(tmp_path / "s.json"), "--no-reference"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-2:] == [
        "  note: NOT CERTIFIED does not prove the point suboptimal: the gap only bounds "
        "v* - lower from above",
        "        (upper is a primal value of the fixed-F problem near alpha); to certify "
        "it, solve to a tighter tol (docs/conformance.md)"]
    assert main(["certify", inst, f"{GOLDEN_DIR}/p1_basic_solution.npz", "--no-reference"]) == 0
    assert "note:" not in capsys.readouterr().out
