"""`dank-verify ... | head`: a reader that closes stdout early does not change the exit code.

Python ignores SIGPIPE, so a write into a pipe whose reader has gone raises BrokenPipeError;
the command lines drop the rest of their output and exit with the code of their run (0
certified, 1 not, 2 bad input), with nothing on stderr. Each test runs the command in a real
child process: closing the read end of its stdout before it writes makes every write fail,
and piping into ``head -c 1`` makes the failure depend on timing, so that case is repeated.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from verification.formats import load_solution, save_solution
from verification.golden import GOLDEN_DIR

ROOT = Path(__file__).resolve().parent.parent
P1_INST = os.path.join(GOLDEN_DIR, "p1_basic_instance.npz")
P1_SOL = os.path.join(GOLDEN_DIR, "p1_basic_solution.npz")
CLI = [sys.executable, "-m", "verification.cli"]


def _env(buffered: bool) -> dict:
    """The child's environment: this checkout first on the path; stdout block-buffered (the
    default of a pipe) or unbuffered (``PYTHONUNBUFFERED``: every line is its own write)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    env.pop("PYTHONUNBUFFERED", None)
    if not buffered:
        env["PYTHONUNBUFFERED"] = "1"
    return env


def _closed_reader(args, buffered=True):
    """Run ``dank-verify ARGS`` with the read end of its stdout closed before it writes;
    return (exit code, stderr)."""
    proc = subprocess.Popen(CLI + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=ROOT, env=_env(buffered))
    proc.stdout.close()  # the child is still importing: its first write meets a closed pipe
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err.decode()


def _into_head(args, buffered):
    """``dank-verify ARGS | head -c 1``: (exit code of dank-verify, its stderr, head's out)."""
    proc = subprocess.Popen(CLI + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=ROOT, env=_env(buffered))
    head = subprocess.Popen(["head", "-c", "1"], stdin=proc.stdout, stdout=subprocess.PIPE)
    proc.stdout.close()  # head holds the only read end
    got, _ = head.communicate(timeout=120)
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    proc.stderr.close()
    return proc.returncode, err, got


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
def test_certified_into_a_closed_reader_exits_0(buffered):
    for _ in range(3):
        code, err = _closed_reader(["certify", P1_INST, P1_SOL], buffered)
        assert (code, err) == (0, ""), err


@pytest.mark.skipif(not os.path.exists("/usr/bin/head") and not os.path.exists("/bin/head"),
                    reason="no head(1)")
def test_certified_into_head_exits_0():
    """The race of ``| head``: the reader exits after one byte, the rest of the report is
    written before or after that, so the case is repeated."""
    for i in range(6):
        code, err, got = _into_head(["certify", P1_INST, P1_SOL], buffered=i % 2 == 1)
        assert (code, err, got) == (0, "", b"v"), err


def test_not_certified_and_bad_input_keep_their_codes(tmp_path):
    sol = load_solution(P1_SOL)
    bad = tmp_path / "bad.json"
    save_solution(bad, task="svm", alpha=sol["alpha"], bias=-sol["bias"])
    assert _closed_reader(["certify", P1_INST, str(bad)]) == (1, "")
    code, err = _closed_reader(["certify", P1_INST, str(tmp_path / "missing.npz")])
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err


@pytest.mark.parametrize("args", [["--help"], ["certify", "--help"], ["vectors", "--help"],
                                  ["conformance", "--help"], ["reproduce", "--help"],
                                  ["vectors", "--no-regenerate"]],
                         ids=lambda a: " ".join(a))
@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
def test_other_output_into_a_closed_reader(args, buffered):
    assert _closed_reader(args, buffered) == (0, "")
