#!/usr/bin/env python
"""Size and time of the exact reference (dank_ref, CVXPY): the table of the README.

P1 on uniform 2-D data (seeded), Gaussian kernel sigma = 0.5, C = 1, eta = 1, tau = 0.01; for
each n and conic solver (SCS, Clarabel), "raw" (conic solve + dual recovery, no polishing) and
"polished" (the default), with the certified relative gap dank_ref computes itself. Clarabel is
skipped where dank_ref's memory estimate refuses it. Progress on stderr, a markdown table on
stdout; ``--json`` writes the rows.

    python benchmarks/bench_ref.py                     # n = 20 40 60 100 200 (~2 minutes)
    python benchmarks/bench_ref.py --sizes 20 40 --solvers SCS
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
import warnings

import numpy as np


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="Time dank_ref.solve_svm (P1) against n, for SCS "
                                "and Clarabel, raw and polished, with certified gaps.")
    p.add_argument("--sizes", type=int, nargs="+", default=[20, 40, 60, 100, 200],
                   help="problem sizes n (default: 20 40 60 100 200)")
    p.add_argument("--solvers", nargs="+", default=["SCS", "CLARABEL"],
                   choices=["SCS", "CLARABEL"], help="conic solvers (default: both)")
    p.add_argument("--max-raw", type=int, default=60,
                   help="largest n for the unpolished ('raw') rows (default 60)")
    p.add_argument("--seed", type=int, default=0, help="data seed (default 0)")
    p.add_argument("--json", default=None, help="also write the rows to this file")
    a = p.parse_args(argv)

    import dank_ref

    rows = []
    for n in a.sizes:
        rng = np.random.default_rng(a.seed + n)
        X = rng.uniform(size=(n, 2))
        y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0.5, 1.0, -1.0)
        y[:2] = [1.0, -1.0]
        sq = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
        K = np.exp(-sq / (2 * 0.5**2))
        for solver in a.solvers:
            if dank_ref.estimate_memory_bytes(n, solver) > dank_ref.MEMORY_LIMIT_BYTES:
                print(f"[bench_ref] n={n} {solver}: refused by the memory estimate",
                      file=sys.stderr)
                continue
            for polish in ([False, True] if n <= a.max_raw else [True]):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t0 = time.perf_counter()
                    r = dank_ref.solve_svm(K, y, C=1.0, eta=1.0, tau=0.01, solver=solver,
                                           polish=polish)
                    wall = time.perf_counter() - t0
                row = dict(n=n, solver=solver, polished=polish, time_s=wall,
                           rel_gap=float(r.rel_gap), status=r.status)
                rows.append(row)
                print(f"[bench_ref] n={n} {solver} {'polished' if polish else 'raw'}: "
                      f"{wall:.2f} s, rel gap {r.rel_gap:.1e}, {r.status}", file=sys.stderr)
    print(f"Measured {datetime.date.today()} (python benchmarks/bench_ref.py)\n")
    print("| n | solver | raw: time, certified rel. gap | polished: time, certified rel. gap |")
    print("|---|---|---|---|")
    for n in a.sizes:
        for solver in a.solvers:
            cell = {}
            for r in rows:
                if r["n"] == n and r["solver"] == solver:
                    mark = "" if r["status"] == "optimal" else f" ({r['status']})"
                    cell[r["polished"]] = f"{r['time_s']:.2f} s, {r['rel_gap']:.1e}{mark}"
            if cell:
                print(f"| {n} | {solver} | {cell.get(False, '-')} | {cell.get(True, '-')} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
