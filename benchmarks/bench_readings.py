#!/usr/bin/env python
"""Cost of the sensitivity readings of ``dank-reproduce`` at ``--full`` size.

Runs every reading cell of :mod:`verification.study.experiments.readings` on every classification
set for the given splits, in this process with one BLAS thread (as a worker of the runner),
at the parameters the default cells of a committed run chose (``--results``, default
``reproduction/full/results.json``), so no CV is re-run. Prints, per data set and per reading
cell, the process CPU time (robust to other jobs on the machine) and the wall time, and the
totals; the load average is printed beside them. Multiply by ``10 / len(splits)`` for the
ten splits of ``--full``.

Usage: ``python benchmarks/bench_readings.py [--splits 0] [--results PATH] [--data-dir DIR]``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict

from threadpoolctl import threadpool_limits

from verification.study.experiments import readings
from verification.study.experiments.data import CLASSIFICATION, load_dataset, resolve_data_dir
from verification.study.experiments.protocol import Cell, Protocol

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the sibling _args.py
from _args import OneLineParser  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _parse(argv=None):
    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("--splits", default="0", help="comma-separated split indices")
    p.add_argument("--results", default=os.path.join(ROOT, "reproduction", "full", "results.json"),
                   help="results.json whose default cells give the parameters (default: the "
                   "checkout's reproduction/full/results.json)")
    p.add_argument("--data-dir", default=None)
    a = p.parse_args(argv)
    p.input("--results", a.results)
    try:
        a.splits = [int(s) for s in a.splits.split(",")]
    except ValueError:
        p.error(f"--splits: comma-separated split indices expected, got {a.splits!r}")
    if any(s < 0 for s in a.splits):
        p.error(f"--splits: indices must be >= 0, got {a.splits}")
    try:
        with open(a.results) as fh:
            a.cells = json.load(fh)["cells"]
    except (ValueError, KeyError, TypeError) as exc:
        p.error(f"--results: {a.results!r} is not a results.json with cells ({exc})")
    return a


def run(splits, cells: dict, data_dir) -> dict:
    """``{(set, method): [cpu seconds, wall seconds]}`` summed over ``splits``."""
    out: dict = defaultdict(lambda: [0.0, 0.0])
    proto = Protocol()
    with threadpool_limits(limits=1):
        for name in CLASSIFICATION:
            ds = load_dataset(name, data_dir)
            for s in splits:
                for m in readings.METHODS:
                    dep = cells[f"{name}/{s:02d}_{readings.DEPENDS[m]}"]
                    t0, w0 = time.process_time(), time.perf_counter()
                    rec = readings.run_reading_cell(Cell(name, s, m), ds, proto, dep)
                    if rec["status"] != "ok":
                        raise RuntimeError(f"{name}/{s} {m}: {rec['error']}")
                    out[name, m][0] += time.process_time() - t0
                    out[name, m][1] += time.perf_counter() - w0
    return out


def main(argv=None) -> int:
    a = _parse(argv)
    splits, cells = a.splits, a.cells
    load0 = os.getloadavg()
    cost = run(splits, cells, resolve_data_dir(a.data_dir))
    print(f"splits {splits}; load average before {load0[0]:.1f}, after {os.getloadavg()[0]:.1f}")
    print(f"{'set':10s} {'ago3 cpu':>9s} {'ascent cpu':>10s} {'rest cpu':>9s} {'all wall':>9s}")
    tot = [0.0, 0.0, 0.0, 0.0]
    for name in CLASSIFICATION:
        row = [cost[name, "dank-ago3"][0], cost[name, "dank-ago3-ascent"][0],
               sum(cost[name, m][0] for m in readings.METHODS if "ago3" not in m),
               sum(cost[name, m][1] for m in readings.METHODS)]
        tot = [t + r for t, r in zip(tot, row, strict=True)]
        print(f"{name:10s} {row[0]:9.2f} {row[1]:10.2f} {row[2]:9.2f} {row[3]:9.1f}")
    print(f"{'total':10s} {tot[0]:9.2f} {tot[1]:10.2f} {tot[2]:9.2f} {tot[3]:9.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
