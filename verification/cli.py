"""``dank-verify``: the verification suite's command line, on top of both sides.

    dank-verify [--quick | --full] [--out DIR] [--seed N] [--budget N]   the study (claims)
    dank-verify certify INSTANCE SOLUTION [--tol T] [--reference] [--quiet]
                                                       exit 0 certified, 1 not, 2 bad input
    dank-verify vectors [--dir DIR]                    regenerate and compare golden vectors
    dank-verify reproduce FILE                         re-check a counterexample (0 = reproduced)
    dank-verify conformance (--impl M:F | --cmd "...")  check an implementation on a test set

``certify``, ``vectors`` and ``conformance`` load only the oracle side; the main run and
``reproduce`` load :mod:`verification.study`, inside their functions.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

from ._argtypes import DOCS_URL, positive
from ._stdout import Parser as _PipeSafeParser
from ._stdout import flush_stdout, write_stdout


def _run(argv):
    """``dank-verify [--quick|--full] [--budget N] [--seed N] [--out DIR] [--no-figures]``."""
    p = _PipeSafeParser(prog="dank-verify", description="Check every claim of the DANK "
                                "paper and the solvers; write report.md, results.json, figures "
                                "and counterexample files. Subcommands: certify, vectors, "
                                "reproduce, conformance.")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true",
                   help="budget 1 (the default): the main job, under a minute on 2 cores")
    g.add_argument("--full", action="store_true", help="budget 6: more instances and searches")
    p.add_argument("--budget", type=int, default=None,
                   help="search budget multiplier (overrides --quick/--full)")
    p.add_argument("--out", default="dank-report",
                   help="output directory (default: dank-report, ignored by git)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of every random draw and of the Hypothesis search; the same "
                        "seed gives the same report (default 0)")
    p.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    a = p.parse_args(argv)
    if a.budget is not None and a.budget < 1:
        p.error("--budget must be >= 1")
    budget = a.budget or (6 if a.full else 1)
    # start-up: each subcommand imports only what it runs (fast --help and errors)
    from .study.runner import run_all

    res = run_all(out=a.out, seed=a.seed, budget=budget, make_figures=not a.no_figures)
    if res["verdicts"]:
        write_stdout("\n".join(f"{v['claim']:12s} {v['status']:20s} {v['headline']}"
                                for v in res["verdicts"]))
    return 0


class _UsageError(Exception):
    """An argument error of a subcommand parser (reported in one line, exit 2)."""


class _Parser(_PipeSafeParser):
    def error(self, message):
        raise _UsageError(message)


def _one_line(exc: BaseException) -> str:
    msg = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _fail(prog: str, what: str, exc: BaseException) -> int:
    """One line on stderr, exit code 2 (bad input or failure to evaluate)."""
    if isinstance(exc, (ValueError, TypeError)) and what == "bad input":
        msg = " ".join(str(exc).split()) or type(exc).__name__
    else:
        msg = _one_line(exc)
    print(f"{prog}: {what}: {msg}", file=sys.stderr)
    return 2


class _Progress:
    """Progress of one certify on stderr: ``prog: [elapsed] phase: done/total``.

    Called as ``progress(phase, done, total)`` (the protocol of :func:`verification.certify`).
    Nothing is printed before ``after`` seconds; then a line at each new phase, at the end of
    a phase, and at most every ``every`` seconds within one (a background thread repeats the
    current phase when a long step, such as a dense ``eigh``, reports nothing).
    """

    def __init__(self, prog: str, after: float, every: float = 5.0) -> None:
        self.prog, self.after, self.every = prog, after, every
        self.t0 = time.monotonic()
        self.state = None
        self.shown_phase = None
        self.last = -float("inf")
        self.printed = False
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True)
        self.thread.start()

    def _print(self, now: float, note: str = "") -> None:
        phase, done, total = self.state
        print(f"{self.prog}: [{now - self.t0:.1f} s] {phase}: {done}/{total}{note}",
              file=sys.stderr, flush=True)
        self.shown_phase, self.last, self.printed = phase, now, True

    def __call__(self, phase: str, done: int, total: int) -> None:
        with self.lock:
            self.state = (phase, done, total)
            now = time.monotonic()
            if now - self.t0 >= self.after and (phase != self.shown_phase or done == total
                                                or now - self.last >= self.every):
                self._print(now)

    def _beat(self) -> None:
        while not self.stop.wait(0.5):
            with self.lock:
                now = time.monotonic()
                if self.state is not None and now - self.t0 >= self.after \
                        and now - self.last >= self.every:
                    self._print(now, " (working)")

    def close(self) -> None:
        """Stop the background thread; say how long it took if anything was printed."""
        self.stop.set()
        self.thread.join()
        if self.printed:
            print(f"{self.prog}: [{time.monotonic() - self.t0:.1f} s] finished", file=sys.stderr,
                  flush=True)


def _nonnegative(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
    if not v >= 0 or v == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {text!r}")
    return v


_CERTIFY_EPILOG = f"""\
file format:
  INSTANCE and SOLUTION are .npz archives or JSON objects (the type is read from the
  content, not the extension), version 1, documented field by field (types, limits,
  examples) on the documentation site and in the docstring of verification.formats:
      {DOCS_URL}/FORMATS.html
      python -c "import verification.formats as f; help(f)"
  what each check means, its tolerance and what "not certified" does not prove:
      {DOCS_URL}/conformance.html

progress: a certify that runs longer than --progress-after seconds (default 3) reports its
  phase (reading, dense certificate, row blocks or clusters done) and the elapsed time on
  stderr, never on stdout; --quiet silences it.

exit codes:
  0  certified: feasible, certified relative gap <= --tol, submitted bias and F consistent
  1  not certified: the report on stdout names every failed check
  2  bad input (unreadable or malformed file, task or size mismatch, bad --tol) or any
     failure to evaluate; one line on stderr (the traceback only with --debug)

examples:
  dank-verify vectors --write vectors     write the test vectors (instance, solution pairs)
  dank-verify certify vectors/p1_basic_instance.npz vectors/p1_basic_solution.npz --tol 1e-9
  dank-verify conformance --export repro --case p1_basic --format json
                                          an instance alone, as input for a solver of yours
"""


def _certify(argv):
    prog = "dank-verify certify"
    p = _Parser(prog=prog, formatter_class=argparse.RawDescriptionHelpFormatter,
                description="Certify a candidate solution of a DANK problem (P1 svm, P2 svr, "
                "P3 decomposed),\ne.g. one from another implementation: feasibility of every "
                "constraint, the duality\ngap recomputed by dank_ref, the submitted bias and F.",
                epilog=_CERTIFY_EPILOG)
    p.add_argument("instance", help="instance file (.npz or JSON, format 'dank-instance')")
    p.add_argument("solution", help="solution file (.npz or JSON, format 'dank-solution')")
    p.add_argument("--tol", type=positive(float), default=1e-6, metavar="T",
                   help="required certified relative gap, finite and > 0 (default 1e-6)")
    p.add_argument("--reference", action="store_true",
                   help="also run the optional cross-check by dank_fast (its certificate of "
                   "the point and the distance to its Newton solution at tol 1e-10: one more "
                   "solve); informative only, never part of the verdict")
    p.add_argument("--no-reference", action="store_true",
                   help=argparse.SUPPRESS)  # no cross-check is the default; a no-op
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--progress-after", type=_nonnegative, default=3.0, metavar="S",
                   help="report progress on stderr once the certify has run S seconds "
                   "(default 3)")
    p.add_argument("--debug", action="store_true",
                   help="on an error, show the full traceback instead of one line")
    try:
        a = p.parse_args(argv)
    except _UsageError as exc:
        print(f"{prog}: bad arguments: {exc} (see {prog} --help)", file=sys.stderr)
        return 2
    # start-up: each subcommand imports only what it runs (fast --help and errors)
    from .formats import load_instance, load_solution
    from .oracle import certify, format_report

    progress = None if a.quiet else _Progress(prog, a.progress_after)
    try:
        return _certify_run(a, prog, progress, load_instance, load_solution, certify,
                            format_report)
    finally:
        if progress is not None:
            progress.close()


def _certify_run(a, prog, progress, load_instance, load_solution, certify, format_report):
    """Read the solution (``O(n)``), then the instance (its size checked against the
    solution's before the kernel is validated or formed), certify, print the report."""
    step = progress or (lambda phase, done, total: None)
    try:
        missing = [path for path in (a.instance, a.solution) if not os.path.exists(path)]
        if missing:  # every missing file in the one line, not only the first read
            raise ValueError("; ".join(f"{path}: no such file" for path in missing))
        step("reading the solution", 0, 1)
        sol = load_solution(a.solution)
        name = "alpha_hat" if sol["task"] == "svr" else "alpha"
        m = sol[name].size

        def check_n(n):
            if n != m:
                raise ValueError(f"{a.solution}: field {name!r} has {m} entries but the "
                                 f"instance has n = {n}")

        step("reading the instance", 0, 1)
        inst = load_instance(a.instance, check_n=check_n)
        if sol["task"] != inst["task"]:
            raise ValueError(f"{a.solution}: solution for task {sol['task']!r} but the instance "
                             f"{a.instance} is task {inst['task']!r}")
    except Exception as exc:  # noqa: BLE001 - exit 2 with one line, never a traceback
        if a.debug:
            raise
        bad = isinstance(exc, (ValueError, TypeError))
        return _fail(prog, "bad input" if bad else "cannot read input", exc)
    try:
        rep = certify(inst, sol, tol=a.tol, reference=a.reference, progress=progress)
        text = format_report(rep)
    except Exception as exc:  # noqa: BLE001 - MemoryError, LinAlgError, ... -> 2
        if a.debug:
            raise
        return _fail(prog, "cannot evaluate", exc)
    write_stdout(text)
    return 0 if rep["certified"] else 1


_VECTORS_EPILOG = """\
exit codes:
  0  every stored vector matches its checksum, is re-certified (rel. gap <= 1e-12 by both
     dank_ref and dank_fast) and (unless --no-regenerate) regenerates to the same instance
     bytes and a certified value bracket overlapping the stored one
  1  some vector does not (one line per vector says which test failed)
  2  bad input (missing directory or MANIFEST.json, malformed manifest) or a failure to
     evaluate; one line on stderr (the traceback only with --debug)

examples:
  dank-verify vectors                       check the packaged vectors
  dank-verify vectors --write NEWDIR        regenerate every vector (files + MANIFEST.json)
"""


def _vectors(argv):
    prog = "dank-verify vectors"
    p = _Parser(prog=prog, formatter_class=argparse.RawDescriptionHelpFormatter,
                description="Check the golden vectors (verification/golden/): checksums, "
                "re-certification,\nregeneration; or write them afresh.",
                epilog=_VECTORS_EPILOG)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--dir", default=None, metavar="DIR",
                   help="directory of the vectors to check (default: the packaged ones)")
    g.add_argument("--write", default=None, metavar="DIR",
                   help="regenerate every vector into DIR (created) instead of checking")
    p.add_argument("--no-regenerate", action="store_true",
                   help="check checksums and re-certify only (no solves)")
    p.add_argument("--debug", action="store_true",
                   help="on an error, show the full traceback instead of one line")
    try:
        a = p.parse_args(argv)
    except _UsageError as exc:
        print(f"{prog}: bad arguments: {exc} (see {prog} --help)", file=sys.stderr)
        return 2
    # start-up: each subcommand imports only what it runs (fast --help and errors)
    from .golden import check_vectors, generate

    try:
        if a.write is not None:
            man = generate(a.write)
            write_stdout(f"wrote {len(man['vectors'])} vectors and MANIFEST.json to {a.write}")
            return 0
        ok, lines = check_vectors(a.dir, regenerate=not a.no_regenerate)
    except Exception as exc:  # noqa: BLE001 - exit 2 with one line
        if a.debug:
            raise
        bad = isinstance(exc, (ValueError, TypeError, OSError))
        return _fail(prog, "bad input" if bad else "cannot evaluate", exc)
    write_stdout("\n".join(lines))
    return 0 if ok else 1


def _reproduce(argv):
    """``dank-verify reproduce FILE``: exit 0 if the violation (substantive or degenerate) is
    reproduced, 1 if the claim holds on the file's instance, 2 for a bad file (one line)."""
    p = _PipeSafeParser(prog="dank-verify reproduce",
                                description="Re-check a counterexample file written by "
                                "dank-verify. Exit 0: violation reproduced; 1: not violated; "
                                "2: unreadable or invalid file.")
    p.add_argument("file", help="counterexample_<claim>.npz")
    a = p.parse_args(argv)
    # start-up: each subcommand imports only what it runs (fast --help and errors)
    from .study.claims import reproduce_report

    try:
        r = reproduce_report(a.file)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        msg = " ".join(str(exc).split()) or type(exc).__name__
        print(f"dank-verify reproduce: bad input: {msg}", file=sys.stderr)
        return 2
    write_stdout(r["text"])
    return 0 if r["kind"] != "holds" else 1


def _conformance(argv):
    """``dank-verify conformance ...`` (:mod:`verification.conformance.cli`)."""
    from .conformance.cli import main as conformance_main  # start-up time of the other commands

    return conformance_main(argv)


def main(argv=None):
    """Dispatch ``dank-verify [certify|vectors|reproduce|conformance] ...``; returns the exit
    code.

    ``certify``, ``vectors`` and ``conformance`` map every failure to exit code 2 with one line
    on stderr themselves.  For the other commands an unexpected exception is also reported in
    one line with exit code 2; ``--debug`` (removed from their arguments) shows the traceback
    instead.

    A reader that closes stdout early (``dank-verify certify ... | head -n 2``) does not change
    the exit code: the rest of the output is dropped, without a traceback
    (:mod:`verification._stdout`).
    """
    code = _dispatch(argv)
    flush_stdout()
    return code


def _dispatch(argv):
    """:func:`main` before the final flush of stdout."""
    argv = list(sys.argv[1:] if argv is None else argv)
    own = {"certify": _certify, "vectors": _vectors, "conformance": _conformance}
    if argv and argv[0] in own:
        return own[argv[0]](argv[1:])
    cmd, fn = ("reproduce", _reproduce) if argv and argv[0] == "reproduce" else (None, _run)
    rest = argv[1:] if cmd else argv
    debug = "--debug" in rest
    rest = [x for x in rest if x != "--debug"]
    try:
        return fn(rest)
    except Exception as exc:  # noqa: BLE001 - one line, exit 2, unless --debug
        if debug:
            raise
        return _fail("dank-verify" + (f" {cmd}" if cmd else ""), "error", exc)


if __name__ == "__main__":
    sys.exit(main())
