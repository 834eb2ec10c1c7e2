"""``dank-verify``: the verification suite's command line.

    dank-verify [--quick | --full] [--out DIR] [--seed N] [--budget N]
    dank-verify certify INSTANCE SOLUTION [--tol T]   exit 0 certified, 1 not, 2 bad input
    dank-verify vectors [--dir DIR]                    regenerate and compare golden vectors
    dank-verify reproduce FILE                         re-check a counterexample (0 = reproduced)
"""

from __future__ import annotations

import argparse
import sys


def _run(argv):
    """``dank-verify [--quick|--full] [--budget N] [--seed N] [--out DIR] [--no-figures]``."""
    p = argparse.ArgumentParser(prog="dank-verify", description="Check every claim of the DANK "
                                "paper and the solvers; write report.md, results.json, figures "
                                "and counterexample files. Subcommands: certify, vectors, "
                                "reproduce.")
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
    from .runner import run_all

    res = run_all(out=a.out, seed=a.seed, budget=budget, make_figures=not a.no_figures)
    for v in res["verdicts"]:
        print(f"{v['claim']:12s} {v['status']:20s} {v['headline']}")
    return 0


def _certify(argv):
    p = argparse.ArgumentParser(prog="dank-verify certify")
    p.add_argument("instance")
    p.add_argument("solution")
    p.add_argument("--tol", type=float, default=1e-6)
    p.add_argument("--no-reference", action="store_true")
    a = p.parse_args(argv)
    from .formats import FormatError, load_instance, load_solution
    from .oracle import certify, format_report

    try:
        inst = load_instance(a.instance)
        sol = load_solution(a.solution, n=inst["y"].size)
    except FormatError as exc:
        print(f"bad input: {exc}", file=sys.stderr)
        return 2
    rep = certify(inst, sol, tol=a.tol, reference=not a.no_reference)
    print(format_report(rep))
    return 0 if rep["certified"] else 1


def _vectors(argv):
    p = argparse.ArgumentParser(prog="dank-verify vectors")
    p.add_argument("--dir", default=None)
    a = p.parse_args(argv)
    from .golden import check_vectors

    ok, lines = check_vectors(a.dir)
    print("\n".join(lines))
    return 0 if ok else 1


def _reproduce(argv):
    """``dank-verify reproduce FILE``: exit 0 if the violation (substantive or degenerate) is
    reproduced, 1 if the claim holds on the file's instance, 2 for a bad file (one line)."""
    p = argparse.ArgumentParser(prog="dank-verify reproduce",
                                description="Re-check a counterexample file written by "
                                "dank-verify. Exit 0: violation reproduced; 1: not violated; "
                                "2: unreadable or invalid file.")
    p.add_argument("file", help="counterexample_<claim>.npz")
    a = p.parse_args(argv)
    from .claims import reproduce_report

    try:
        r = reproduce_report(a.file)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        msg = " ".join(str(exc).split()) or type(exc).__name__
        print(f"bad input: {msg}", file=sys.stderr)
        return 2
    print(r["text"])
    return 0 if r["kind"] != "holds" else 1


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    cmds = {"certify": _certify, "vectors": _vectors, "reproduce": _reproduce}
    if argv and argv[0] in cmds:
        return cmds[argv[0]](argv[1:])
    return _run(argv)


if __name__ == "__main__":
    sys.exit(main())
