"""``dank-verify conformance``: check an implementation on a test set in one command.

    dank-verify conformance (--impl MODULE:FUNCTION | --cmd "PROGRAM ARGS {instance} {solution}")
        [--set golden|families|all|large] [--task svm|svr|decomposed]... [--case ID]... [--tol T]
        [--timeout S] [--timeout-per-1000 T] [--jobs N] [--out DIR] [--format npz|json]
        [--quiet]
    dank-verify conformance --export DIR [--set ...] [--task ...]... [--case ID]...
        [--format npz|json]

Exit code 0: every instance certified (``--export``: the files written); 1: at least one not
certified, error or timeout; 2: bad usage or a failure of the kit itself (one line on stderr;
``--debug`` shows the traceback).  Everything a user needs is on the documentation site's
conformance page (``DOCS_URL/conformance.html``).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time

from .._argtypes import DOCS_URL, positive
from .._stdout import Parser as _PipeSafeParser
from .._stdout import write_stdout
from ..formats.spec import MAX_JSON_BYTES, one_line
from .cases import SETS, export_cases, json_size, load_cases, select_cases
from .families import FAMILIES_VERSION
from .kit import run_cases
from .large import LARGE_VERSION, TIME_LIMITS
from .report import (
    console_lines,
    progress_line,
    results_document,
    write_report,
    write_results,
)
from .runners import TIMEOUT, TIMEOUT_PER_1000, CmdRunner, ImplRunner, time_limit

__all__ = ["main", "run", "export"]

PROG = "dank-verify conformance"
_LARGE_LIMITS = ", ".join(f"{v:g}" for v in TIME_LIMITS.values())
_EPILOG = f"""\
--impl MODULE:FUNCTION
  FUNCTION(instance: dict) -> dict, imported from the current directory or the Python path.
  The instance has task, y, C, eta, tau, K (dense float64 n x n); X and the kernel fields
  when given by features; epsilon (svr); labels (decomposed).  Return alpha (svm,
  decomposed) or alpha_hat and alpha_check (svr), optionally bias, F and meta (a string or
  a dict), as numpy arrays, lists or numbers.  It runs in a worker process: an exception,
  a crash or a hang is that instance's row, never the kit's failure.
--cmd "PROGRAM ARGS {{instance}} {{solution}}"
  Any program: {{instance}} becomes the instance file (.npz, or JSON with --format json),
  {{solution}} the path where it must write its solution (the formats:
  {DOCS_URL}/FORMATS.html).
--export DIR
  Run nothing: write the selected instances into DIR as <id>.npz (or .json), exactly the
  files a --cmd program receives, and DIR/index.json (id, family, task, n, file, time limit
  of each), to reproduce one instance outside the kit, e.g.
    dank-verify conformance --export repro --set families --case fam1_svm_n1000 --format json
    my_solver repro/fam1_svm_n1000.json sol.json
    dank-verify certify repro/fam1_svm_n1000.json sol.json

time limit of an instance of n points: S + T x (n/1000)^2 seconds, --timeout S (default
  {TIMEOUT:g}) and --timeout-per-1000 T (default {TIMEOUT_PER_1000:g}): \
{time_limit(100):.3g} s at n = 100, {time_limit(1000):g} s at
  n = 1,000.  An interpreted solver may need more: raise T (or S); --timeout-per-1000 0
  gives every instance S seconds.
--set large (not part of all): five instances at the paper's scale, given by X and a
  Gaussian kernel (no K: the n x n kernel would exceed 2 GiB), generated into a temporary
  directory on each run (0.31 GB, about 20 s) and checked against their sha256; --case
  generates only the instances named:
    large1_svm_n20000, large1_svm_n50000 (P1, 22 features), large1_svr_n20000 (P2),
    large1_decomposed_n200000 (P3, 100 clusters), large1_decomposed_n464810 (P3, 200).
  Each has its own time limit ({_LARGE_LIMITS} s in that order); --timeout S
  replaces them all by S, --timeout-per-1000 does not apply.  npz only (as JSON the
  P3 instances exceed what a reader accepts).  An --impl function gets K = None and X.
progress: one line per finished instance on stderr ([i/total] id: status (seconds, certified
  relative gap), and the start of the diagnosis when not certified); --quiet silences it.
statuses: certified | not certified (every failed check, its reason and a diagnosis) |
  error (exception, crash, non-zero exit, missing or invalid solution; the last 20 lines of
  the program's stderr, or of the traceback, are kept in report.md and results.json) | timeout
output: DIR/report.md, DIR/results.json; one summary line and the failures on stdout.
exit codes: 0 every instance certified; 1 at least one not; 2 bad usage or a kit failure.
test sets, families, tolerance, what "not certified" means:
  {DOCS_URL}/conformance.html

examples:
  dank-verify conformance --impl verification.conformance.adapters:fast_newton
  dank-verify conformance --cmd "python my_solver.py {{instance}} {{solution}}" --set all
  dank-verify conformance --cmd "octave-cli solve.m {{instance}} {{solution}}" --format json \\
      --set families --timeout-per-1000 1800
"""


def _nonneg(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not math.isfinite(v) or v < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return v


class _UsageError(Exception):
    pass


class _Parser(_PipeSafeParser):
    def error(self, message):
        raise _UsageError(message)


def _parser() -> _Parser:
    p = _Parser(prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
                description="Run an implementation of DANK on every instance of a test set "
                "and certify\nevery answer with the oracle (duality gap recomputed by "
                "dank_ref); or, with --export,\nwrite the instance files.", epilog=_EPILOG)
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--impl", metavar="MODULE:FUNCTION", help="a Python function")
    g.add_argument("--cmd", metavar="COMMAND", help="a program: {instance} {solution}")
    g.add_argument("--export", metavar="DIR", help="write the instance files and index.json "
                   "into DIR; run nothing")
    p.add_argument("--set", choices=SETS, default="golden",
                   help="test set (default golden; all = golden + families; large is apart)")
    p.add_argument("--task", action="append", choices=("svm", "svr", "decomposed"),
                   help="restrict to a task (repeatable; default: every task)")
    p.add_argument("--case", action="append", metavar="ID",
                   help="restrict to the instance ID, e.g. fam1_svm_n1000 or p1_basic "
                   "(repeatable)")
    p.add_argument("--tol", type=positive(float), default=1e-6, metavar="T",
                   help="required certified relative gap (default 1e-6)")
    p.add_argument("--timeout", type=positive(float), default=None, metavar="S",
                   help=f"seconds every instance may take (default {TIMEOUT:g}; the large "
                   "set: each instance's own); see 'time limit' below")
    p.add_argument("--timeout-per-1000", type=_nonneg, default=TIMEOUT_PER_1000, metavar="T",
                   help=f"seconds added at n = 1,000, growing as n^2 (default "
                   f"{TIMEOUT_PER_1000:g})")
    p.add_argument("--jobs", type=positive(int), default=1, metavar="N",
                   help="instances run at the same time (default 1)")
    p.add_argument("--out", default="dank-conformance", metavar="DIR",
                   help="output directory (default dank-conformance)")
    p.add_argument("--format", choices=("npz", "json"), default="npz",
                   help="instance file format for --cmd and --export (default npz)")
    p.add_argument("--quiet", action="store_true",
                   help="no progress lines on stderr")
    p.add_argument("--debug", action="store_true", help="show the traceback of a kit failure")
    return p


def _tasks(a) -> tuple[str, ...]:
    return tuple(dict.fromkeys(a.task)) if a.task else ("svm", "svr", "decomposed")


def _timeout(a) -> float:
    """``--timeout`` as given, else the default."""
    return TIMEOUT if a.timeout is None else float(a.timeout)


def _selected(a, workdir: str) -> list:
    """The cases of ``a.set`` for ``a.task``, restricted to ``a.case`` when given; a given
    ``--timeout`` replaces the large set's own limits; ``--format json`` is refused for an
    instance above the JSON limit before anything runs."""
    names = getattr(a, "case", None)
    if a.set == "large":
        cases = load_cases(a.set, _tasks(a), workdir=workdir, ids=names)
        for c in cases:
            if a.timeout is not None:
                c.time_limit = float(a.timeout)
    else:
        cases = load_cases(a.set, _tasks(a), workdir=workdir)
        cases = select_cases(cases, names) if names else cases
    if getattr(a, "format", "npz") == "json" and (a.cmd or getattr(a, "export", None)):
        big = [c for c in cases if json_size(c) > MAX_JSON_BYTES]
        if big:
            raise ValueError(f"--format json: instance {big[0].id} would take up to "
                             f"{json_size(big[0]) / 2**20:.0f} MiB as JSON, more than the "
                             f"{MAX_JSON_BYTES / 2**20:.0f} MiB a reader accepts; use "
                             "--format npz")
    return cases


def export(a: argparse.Namespace) -> tuple[int, str]:
    """Write the selected instances and ``index.json`` into ``a.export``; return the number of
    instances and the index's path."""
    per = getattr(a, "timeout_per_1000", TIMEOUT_PER_1000)
    with tempfile.TemporaryDirectory(prefix="dank-families-") as tmp:
        cases = _selected(a, tmp)
        limits = {c.id: c.time_limit if c.time_limit is not None else
                  time_limit(c.n, _timeout(a), per) for c in cases}
        return len(cases), export_cases(cases, a.export, a.format, limits, a.set)


def run(a: argparse.Namespace) -> tuple[dict, int]:
    """Run the kit with parsed arguments; return ``(results document, exit code)``.

    Attributes the namespace lacks take the values of a programmatic run: a flat
    ``timeout`` (``timeout_per_1000 = 0``), every case, no progress lines; ``timeout = None``
    is the default limit (the large set: each instance's own).
    """
    t0 = time.perf_counter()
    tasks = _tasks(a)
    per = getattr(a, "timeout_per_1000", 0.0)
    quiet = getattr(a, "quiet", True)
    with tempfile.TemporaryDirectory(prefix="dank-families-") as tmp:
        cases = _selected(a, tmp)
        runner = (ImplRunner(a.impl, _timeout(a), a.jobs, timeout_per_1000=per) if a.impl else
                  CmdRunner(a.cmd, _timeout(a), a.jobs, a.format, timeout_per_1000=per))
        with runner:
            progress = None if quiet else _progress(cases, a, per)
            rows = run_cases(cases, runner, tol=a.tol, progress=progress)
    wall = time.perf_counter() - t0
    impl = f"--impl {a.impl}" if a.impl else f"--cmd {a.cmd}"
    run_info = dict(implementation=impl, set=a.set, tasks=list(tasks),
                    cases=list(getattr(a, "case", None) or []) or None, tol=a.tol,
                    timeout=_timeout(a), timeout_per_1000=per, jobs=a.jobs,
                    families_version=FAMILIES_VERSION, wall_seconds=wall,
                    implementation_seconds=sum(r["time"] for r in rows),
                    load_average=list(os.getloadavg()))
    if a.set == "large":
        run_info["large_version"] = LARGE_VERSION
    doc = results_document(run_info, rows)
    os.makedirs(a.out, exist_ok=True)
    write_results(os.path.join(a.out, "results.json"), doc)
    write_report(os.path.join(a.out, "report.md"), doc)
    if any(r["kit_error"] for r in rows):
        return doc, 2
    return doc, 0 if all(r["status"] == "certified" for r in rows) else 1


def _progress(cases: list, a, per: float):
    """Print the run's header on stderr; return the per-row callback."""
    total = len(cases)
    big = max((c.n for c in cases), default=0)
    if any(c.time_limit is not None for c in cases):
        limits = sorted({c.time_limit for c in cases})
        span = f"{limits[0]:g}" if len(limits) == 1 else f"{limits[0]:g} to {limits[-1]:g}"
        rule = f"each instance's own, {span} s"
    else:
        t = _timeout(a)
        rule = (f"{t:g} s + {per:g} s x (n/1000)^2 ({time_limit(big, t, per):.3g} s at the "
                f"largest, n = {big})")
    print(f"{PROG}: {total} instance{'s' * (total != 1)} of set {a.set}; time limit "
          f"{rule}; progress below, --quiet silences it", file=sys.stderr, flush=True)
    done = [0]

    def show(row: dict) -> None:
        done[0] += 1
        print(progress_line(done[0], total, row), file=sys.stderr, flush=True)

    return show


def main(argv=None) -> int:
    """``dank-verify conformance ...``; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        a = _parser().parse_args(argv)
    except _UsageError as exc:
        print(f"{PROG}: bad arguments: {exc} (see {PROG} --help)", file=sys.stderr)
        return 2
    try:
        if a.export:
            count, index = export(a)
            write_stdout(f"conformance: wrote {count} instance file{'s' * (count != 1)} "
                  f"({a.format}) and {os.path.basename(index)} to {a.export}")
            return 0
        doc, code = run(a)
    except Exception as exc:  # noqa: BLE001 - a kit failure: one line, exit 2
        if a.debug:
            raise
        what = "bad input" if isinstance(exc, (ValueError, TypeError)) else "error"
        print(f"{PROG}: {what}: {type(exc).__name__}: {one_line(exc)}", file=sys.stderr)
        return 2
    write_stdout("\n".join(console_lines(doc, a.out)))
    if code == 2:
        print(f"{PROG}: the oracle could not evaluate some answers (rows marked kit_error)",
              file=sys.stderr)
    return code
