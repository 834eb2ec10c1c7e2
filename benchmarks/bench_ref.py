#!/usr/bin/env python
"""Time the exact reference (dank_ref, CVXPY) over *families* of instances: the README's table.

Families vary the data shape (moons, blobs, circles, uniform, sinc), the kernel width, ``C``
(0.01 .. 100), ``eta`` (0.1 .. 1000), ``tau`` (0 .. 1) and the class balance.  Every solve asks
for a certified relative gap ``<= 1e-10`` (``tol``) with the default strategy; each
row records the wall time, dank_ref's own certified gap and the stages that ran.  The summary
gives, per problem, size and conic solver, the median and worst time over the families.
Clarabel is skipped where dank_ref's memory estimate refuses it.

    python benchmarks/bench_ref.py --json benchmarks/results/ref.json --readme README.md --seeds 3
    python benchmarks/bench_ref.py --problems P1 --sizes 100 --solvers SCS   # a subset
    python benchmarks/bench_ref.py --strategy tight ...   # the previous default (eps 1e-8)

``--readme`` replaces the text between ``<!-- bench_ref:begin -->`` and
``<!-- bench_ref:end -->`` with the summary table; ``--notes`` puts the per-family table
(between ``<!-- bench_ref_families:begin/end -->``, benchmarks/README.md).  ``--before FILE``
adds the times of an earlier run (same JSON format) to the per-family table; ``--render FILE``
redraws the tables of a saved run without solving anything.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import sys
import time
import warnings
from collections.abc import Callable

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the sibling _args.py
from _args import OneLineParser  # noqa: E402

TARGET_GAP = 1e-10
TARGETS = {("P1", 100): 5.0, ("P1", 200): 30.0, ("P2", 100): 10.0, ("P3", 100): 10.0}
BEGIN, END = "<!-- bench_ref:begin -->", "<!-- bench_ref:end -->"
FAM_BEGIN, FAM_END = "<!-- bench_ref_families:begin -->", "<!-- bench_ref_families:end -->"


def gaussian(X: np.ndarray, sigma: float) -> np.ndarray:
    """``exp(-||x_i - x_j||^2 / (2 sigma^2))``, dense n x n (O(n^2 d) time and memory)."""
    sq = np.sum(X * X, axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0)
    return np.exp(-d2 / (2.0 * sigma**2))


def _moons(n, rng, noise):
    t = rng.uniform(0.0, np.pi, size=n)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = np.where(y[:, None] > 0, np.c_[np.cos(t), np.sin(t)],
                 np.c_[1.0 - np.cos(t), 0.5 - np.sin(t)])
    return X + noise * rng.normal(size=(n, 2)), y


def _blobs(n, rng, frac_pos):
    y = np.where(rng.uniform(size=n) < frac_pos, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    return rng.normal(size=(n, 2)) + 1.5 * y[:, None], y


def _circles(n, rng):
    t = rng.uniform(0.0, 2 * np.pi, size=n)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    r = np.where(y > 0, 0.5, 1.0)
    return np.c_[r * np.cos(t), r * np.sin(t)] + 0.1 * rng.normal(size=(n, 2)), y


def _uniform(n, rng):
    X = rng.uniform(size=(n, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0.5, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    return X, y


def _halves(X):
    """Two clusters for P3: left / right of the median of the first coordinate."""
    return (X[:, 0] > np.median(X[:, 0])).astype(int)


def _p1(data, sigma, **params):
    def make(n, rng):
        X, y = data(n, rng)
        return dict(K=gaussian(X, sigma), y=y, **params)
    return make


def _p2(sigma, fn, **params):
    def make(n, rng):
        X = rng.uniform(-3.0, 3.0, size=(n, 1))
        y = fn(X[:, 0]) + 0.1 * rng.normal(size=n)
        return dict(K=gaussian(X, sigma), y=y, **params)
    return make


def _p3(data, sigma, **params):
    def make(n, rng):
        X, y = data(n, rng)
        return dict(K=gaussian(X, sigma), y=y, labels=_halves(X), **params)
    return make


FAMILIES: dict[str, tuple[str, Callable]] = {
    # make_moons-like, noise 0.2, sigma 0.5, C 1, eta 20
    "moons": ("P1", _p1(lambda n, r: _moons(n, r, 0.2), 0.5, C=1.0, eta=20.0, tau=0.01)),
    "uniform": ("P1", _p1(_uniform, 0.5, C=1.0, eta=1.0, tau=0.01)),
    "blobs-imbalanced": ("P1", _p1(lambda n, r: _blobs(n, r, 0.15), 1.0, C=100.0, eta=1000.0,
                                   tau=1.0)),
    "moons-smallC": ("P1", _p1(lambda n, r: _moons(n, r, 0.3), 0.3, C=0.01, eta=0.1, tau=0.0)),
    "uniform-wide": ("P1", _p1(_uniform, 2.0, C=10.0, eta=0.1, tau=0.5)),
    "circles-narrow": ("P1", _p1(_circles, 0.1, C=1.0, eta=1000.0, tau=0.01)),
    "moons-smalleta": ("P1", _p1(lambda n, r: _moons(n, r, 0.2), 0.5, C=10.0, eta=0.1,
                                 tau=0.01)),
    "sinc": ("P2", _p2(0.5, np.sinc, C=1.0, epsilon=0.1, eta=10.0, tau=0.01)),
    "linear-bigC": ("P2", _p2(2.0, lambda x: 0.5 * x, C=100.0, epsilon=0.01, eta=1000.0,
                              tau=0.0)),
    "sine-smallC": ("P2", _p2(0.3, np.sin, C=0.01, epsilon=0.05, eta=0.1, tau=1.0)),
    "moons-halves": ("P3", _p3(lambda n, r: _moons(n, r, 0.2), 0.5, C=1.0, eta=20.0)),
    "blobs-halves": ("P3", _p3(lambda n, r: _blobs(n, r, 0.3), 1.0, C=10.0, eta=1.0)),
    "uniform-halves-smallC": ("P3", _p3(_uniform, 0.3, C=0.01, eta=0.1)),
}


def solve(problem: str, inst: dict, **kw):
    """Call the dank_ref solver of ``problem`` on ``inst`` (warnings silenced)."""
    import dank_ref

    inst = dict(inst)
    K, y = inst.pop("K"), inst.pop("y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if problem == "P1":
            return dank_ref.solve_svm(K, y, **inst, **kw)
        if problem == "P2":
            return dank_ref.solve_svr(K, y, **inst, **kw)
        labels = inst.pop("labels")
        return dank_ref.solve_decomposed(K, y, labels, **inst, **kw)


def run_one(family: str, n: int, solver: str, seed: int, strategy: str | None) -> dict:
    """One timed, certified solve; the row of the JSON output."""
    problem, make = FAMILIES[family]
    inst = make(n, np.random.default_rng(seed + n))
    kw = dict(solver=solver, tol=TARGET_GAP)
    if strategy is not None:
        kw["strategy"] = strategy
    t0 = time.perf_counter()
    r = solve(problem, inst, **kw)
    wall = time.perf_counter() - t0
    stages = r.solver_stats.get("stages", [])
    return dict(family=family, seed=seed, problem=problem, n=n, solver=solver, time_s=wall,
                rel_gap=float(r.rel_gap), status=r.status,
                candidate=r.solver_stats.get("candidate"),
                stages=[{k: s.get(k) for k in ("stage", "solver", "eps", "time_s",
                                                "polish_time_s", "rel_gap")}
                        for s in stages])


def summary(rows: list[dict]) -> list[str]:
    """Markdown: median / worst time over the families per (problem, n, solver)."""
    out = ["| problem | n | solver | families (solves) | median time | worst time (family) | "
           "worst certified rel. gap | target |", "|---|---|---|---|---|---|---|---|"]
    keys = sorted({(r["problem"], r["n"], r["solver"]) for r in rows},
                  key=lambda k: (k[0], k[1], k[2] != "SCS"))
    for p, n, s in keys:
        rs = [r for r in rows if (r["problem"], r["n"], r["solver"]) == (p, n, s)]
        worst = max(rs, key=lambda r: r["time_s"])
        gap = max(r["rel_gap"] for r in rs)
        ok = all(r["status"] in ("converged", "optimal") for r in rs)  # "optimal": older rows
        limit = TARGETS.get((p, n))
        met = "-" if limit is None else (
            f"<= {limit:g} s: {'met' if ok and worst['time_s'] <= limit else 'missed'}")
        fams = len({r["family"] for r in rs})
        out.append(f"| {p} | {n} | {s} | {fams} ({len(rs)}) | "
                   f"{statistics.median(r['time_s'] for r in rs):.2f} s | "
                   f"{worst['time_s']:.2f} s ({_label(worst)}) | {gap:.1e}"
                   f"{'' if ok else ' (not all certified)'} | {met} |")
    return out


def _label(row: dict) -> str:
    """The family, with ``#seed`` for the extra seeds of ``--seeds`` (seed 0: the family)."""
    seed = row.get("seed", 0)
    return row["family"] if not seed else f"{row['family']} #{seed}"


def per_family(rows: list[dict], before: list[dict]) -> list[str]:
    """Markdown: one line per solve, with the earlier run's time when ``before`` has it."""
    old = {(r["family"], r.get("seed", 0), r["n"], r["solver"]): r for r in before}
    out = ["| family | problem | n | solver | time | rel. gap | stages (produce+polish) | before |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b = old.get((r["family"], r.get("seed", 0), r["n"], r["solver"]))
        st = ", ".join(s["stage"] + (f" ({s['solver']} {s['eps']:g})" if s.get("eps") else "")
                       + f" {s['time_s']:.1f}+{s.get('polish_time_s') or 0.0:.1f} s"
                       for s in r["stages"]) or "-"
        out.append(f"| {_label(r)} | {r['problem']} | {r['n']} | {r['solver']} | "
                   f"{r['time_s']:.2f} s | {r['rel_gap']:.1e} | {st} | "
                   f"{'-' if b is None else format(b['time_s'], '.2f') + ' s'} |")
    return out


def write_readme(path: str, lines: list[str], begin: str = BEGIN, end: str = END) -> None:
    """Replace the text between the markers ``begin`` and ``end`` of ``path`` by ``lines``."""
    with open(path) as f:
        text = f.read()
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i:
        raise ValueError(f"{path} has no {begin} ... {end} block")
    body = "\n".join(lines)
    with open(path, "w") as f:
        f.write(text[: i + len(begin)] + "\n" + body + "\n" + text[j:])


def main(argv=None) -> int:
    p = OneLineParser(description="Time dank_ref over families of P1/P2/P3 instances "
                                "(certified rel. gap <= 1e-10), per conic solver.")
    p.add_argument("--problems", nargs="+", default=["P1", "P2", "P3"])
    p.add_argument("--families", nargs="+", default=None, choices=sorted(FAMILIES))
    p.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 500],
                   help="sizes n (P2 and P3 only at n <= 100; default 100 200 500)")
    p.add_argument("--solvers", nargs="+", default=["SCS", "CLARABEL"],
                   choices=["SCS", "CLARABEL"])
    p.add_argument("--big-families", type=int, default=2,
                   help="number of P1 families run at n > 200 (default 2)")
    p.add_argument("--strategy", default=None, help="dank_ref's strategy= (default: its own)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--seeds", type=int, default=1,
                   help="instances per family: seeds --seed .. --seed + SEEDS - 1 (default 1)")
    p.add_argument("--json", default=None, help="write the rows (JSON) to this file")
    p.add_argument("--before", default=None, help="JSON of an earlier run, for comparison")
    p.add_argument("--readme", default=None, help="regenerate this file's bench_ref block")
    p.add_argument("--notes", default=None,
                   help="write the per-family table (with --before) into this file's "
                   "bench_ref_families block (benchmarks/README.md)")
    p.add_argument("--render", default=None,
                   help="print (and --readme/--notes) the tables of this JSON, no solve")
    a = p.parse_args(argv)
    p.output("--json", a.json)
    for flag in ("--before", "--readme", "--notes", "--render"):
        p.input(flag, getattr(a, flag[2:]))
    if a.render:
        with open(a.render) as f:
            data = json.load(f)
        return report(data["rows"], data["head"], a)
    rows = run_all(a)
    load = os.getloadavg()
    head = (f"Measured {datetime.date.today()} on 2 shared cores (load average at the end "
            f"{load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f}) by `python benchmarks/bench_ref.py`; "
            f"every solve asks for a certified relative gap <= {TARGET_GAP:g}.")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"head": head, "rows": rows}, f, indent=1)
    return report(rows, head, a)


def report(rows: list[dict], head: str, a: argparse.Namespace) -> int:
    """Print the summary and per-family tables; regenerate the README blocks if asked."""
    before, before_head = [], ""
    if a.before:
        with open(a.before) as f:
            data = json.load(f)
        before = data["rows"] if isinstance(data, dict) else data
        before_head = data.get("head", "") if isinstance(data, dict) else ""
    lines = [head, "", *summary(rows)]
    fam = per_family(rows, before)
    print("\n".join(lines + ["", *fam]))
    if a.readme:
        write_readme(a.readme, lines)
    if a.notes:
        note = [head, ""] + ([f"Before (`{a.before}`): {before_head}", ""] if a.before else [])
        write_readme(a.notes, note + fam, FAM_BEGIN, FAM_END)
    return 0


def run_all(a: argparse.Namespace) -> list[dict]:
    """Run every (family, n, solver) of the command line; rows also saved as they come."""
    import dank_ref

    rows = []
    fams = [f for f in (a.families or FAMILIES) if FAMILIES[f][0] in a.problems]
    for n in a.sizes:
        big = [f for f in fams if FAMILIES[f][0] == "P1"][: a.big_families]
        for fam in fams:
            prob = FAMILIES[fam][0]
            if (prob != "P1" and n > 100) or (n > 200 and fam not in big):
                continue
            for seed in range(a.seed, a.seed + a.seeds):
                for solver in a.solvers:
                    if dank_ref.estimate_memory_bytes(n, solver) > dank_ref.MEMORY_LIMIT_BYTES:
                        continue
                    row = run_one(fam, n, solver, seed, a.strategy)
                    rows.append(row)
                    print(f"[bench_ref] {_label(row)} {prob} n={n} {solver}: {row['time_s']:.2f} "
                          f"s, rel gap {row['rel_gap']:.1e}, {row['status']}", file=sys.stderr,
                          flush=True)
                    if a.json:  # after every row: a long run keeps what it measured
                        with open(a.json, "w") as f:
                            json.dump({"head": "(partial run)", "rows": rows}, f, indent=1)
    return rows


if __name__ == "__main__":
    sys.exit(main())
