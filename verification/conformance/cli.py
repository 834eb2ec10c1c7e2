"""``dank-verify conformance``: check an implementation on a test set in one command.

    dank-verify conformance (--impl MODULE:FUNCTION | --cmd "PROGRAM ARGS {instance} {solution}")
        [--set golden|families|all] [--task svm|svr|decomposed]... [--tol T] [--timeout S]
        [--jobs N] [--out DIR] [--format npz|json]

Exit code 0: every instance certified; 1: at least one not certified, error or timeout; 2: bad
usage or a failure of the kit itself (one line on stderr; ``--debug`` shows the traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

from .._argtypes import positive
from ..formats.spec import one_line
from .cases import SETS, load_cases
from .families import FAMILIES_VERSION
from .kit import run_cases
from .report import console_lines, results_document, write_report, write_results
from .runners import CmdRunner, ImplRunner

__all__ = ["main", "run"]

PROG = "dank-verify conformance"
_EPILOG = """\
--impl MODULE:FUNCTION
  FUNCTION(instance: dict) -> dict, imported from the current directory or the Python path.
  The instance has task, y, C, eta, tau, K (dense float64 n x n); X and the kernel fields
  when given by features; epsilon (svr); labels (decomposed).  Return alpha (svm,
  decomposed) or alpha_hat and alpha_check (svr), optionally bias, F and meta (a string or
  a dict), as numpy arrays, lists or numbers.  It runs in a worker process: an exception,
  a crash or a hang is that instance's row, never the kit's failure.
--cmd "PROGRAM ARGS {instance} {solution}"
  Any program: {instance} becomes the instance file (.npz, or JSON with --format json),
  {solution} the path where it must write its solution (docs/FORMATS.md).

statuses: certified | not certified (every failed check, its reason and a diagnosis) |
  error (exception, crash, non-zero exit, missing or invalid solution) | timeout
output: DIR/report.md, DIR/results.json; one summary line and the failures on stdout.
exit codes: 0 every instance certified; 1 at least one not; 2 bad usage or a kit failure.

examples:
  dank-verify conformance --impl verification.conformance.adapters:fast_newton
  dank-verify conformance --cmd "python my_solver.py {instance} {solution}" --set all
"""


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(message)


def _parser() -> _Parser:
    p = _Parser(prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
                description="Run an implementation of DANK on every instance of a test set "
                "and certify\nevery answer with the oracle (duality gap recomputed by "
                "dank_ref).", epilog=_EPILOG)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--impl", metavar="MODULE:FUNCTION", help="a Python function")
    g.add_argument("--cmd", metavar="COMMAND", help="a program: {instance} {solution}")
    p.add_argument("--set", choices=SETS, default="golden", help="test set (default golden)")
    p.add_argument("--task", action="append", choices=("svm", "svr", "decomposed"),
                   help="restrict to a task (repeatable; default: every task)")
    p.add_argument("--tol", type=positive(float), default=1e-6, metavar="T",
                   help="required certified relative gap (default 1e-6)")
    p.add_argument("--timeout", type=positive(float), default=60.0, metavar="S",
                   help="seconds per instance (default 60)")
    p.add_argument("--jobs", type=positive(int), default=1, metavar="N",
                   help="instances run at the same time (default 1)")
    p.add_argument("--out", default="dank-conformance", metavar="DIR",
                   help="output directory (default dank-conformance)")
    p.add_argument("--format", choices=("npz", "json"), default="npz",
                   help="instance file format for --cmd (default npz)")
    p.add_argument("--debug", action="store_true", help="show the traceback of a kit failure")
    return p


def run(a: argparse.Namespace) -> tuple[dict, int]:
    """Run the kit with parsed arguments; return ``(results document, exit code)``."""
    t0 = time.perf_counter()
    tasks = tuple(dict.fromkeys(a.task)) if a.task else ("svm", "svr", "decomposed")
    with tempfile.TemporaryDirectory(prefix="dank-families-") as tmp:
        cases = load_cases(a.set, tasks, workdir=tmp)
        runner = (ImplRunner(a.impl, a.timeout, a.jobs) if a.impl else
                  CmdRunner(a.cmd, a.timeout, a.jobs, a.format))
        with runner:
            rows = run_cases(cases, runner, tol=a.tol)
    wall = time.perf_counter() - t0
    impl = f"--impl {a.impl}" if a.impl else f"--cmd {a.cmd}"
    run_info = dict(implementation=impl, set=a.set, tasks=list(tasks), tol=a.tol,
                    timeout=a.timeout, jobs=a.jobs, families_version=FAMILIES_VERSION,
                    wall_seconds=wall, implementation_seconds=sum(r["time"] for r in rows),
                    load_average=list(os.getloadavg()))
    doc = results_document(run_info, rows)
    os.makedirs(a.out, exist_ok=True)
    write_results(os.path.join(a.out, "results.json"), doc)
    write_report(os.path.join(a.out, "report.md"), doc)
    if any(r["kit_error"] for r in rows):
        return doc, 2
    return doc, 0 if all(r["status"] == "certified" for r in rows) else 1


def main(argv=None) -> int:
    """``dank-verify conformance ...``; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        a = _parser().parse_args(argv)
    except _UsageError as exc:
        print(f"{PROG}: bad arguments: {exc} (see {PROG} --help)", file=sys.stderr)
        return 2
    try:
        doc, code = run(a)
    except Exception as exc:  # noqa: BLE001 - a kit failure: one line, exit 2
        if a.debug:
            raise
        what = "bad input" if isinstance(exc, (ValueError, TypeError)) else "error"
        print(f"{PROG}: {what}: {type(exc).__name__}: {one_line(exc)}", file=sys.stderr)
        return 2
    print("\n".join(console_lines(doc, a.out)))
    if code == 2:
        print(f"{PROG}: the oracle could not evaluate some answers (rows marked kit_error)",
              file=sys.stderr)
    return code
