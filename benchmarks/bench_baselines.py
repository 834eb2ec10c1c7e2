#!/usr/bin/env python
"""Cost of the re-run baselines of ``dank-reproduce`` (cells ``rf-cv``, ``logdet``, ``nw-cv``,
``nw-ml``) per data set, against a budget of about 25 min of cell time at ``--full``.

For each set it runs the baseline cells of the first ``--splits`` splits with the paper's grid
(``--full``'s protocol; ``logdet`` after its ``svm-cv`` dependency, ``nw-ml`` after ``nw-cv``,
the dependency's own time not counted for ``svm-cv``, which the run has anyway), single-
threaded BLAS as the runner, and prints per set the mean seconds per split of every baseline
cell and the extrapolation to 10 splits. The load average is printed beside the numbers
(timings on a shared machine are noisy). ``--json`` writes the rows.

    python benchmarks/bench_baselines.py [--sets a,b] [--splits 1] [--json out.json]
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the checkout's packages

from verification.study.experiments.data import (  # noqa: E402
    CLASSIFICATION,
    REGRESSION,
    load_dataset,
    resolve_data_dir,
)
from verification.study.experiments.protocol import Cell, Protocol, run_cell  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the sibling _args.py
from _args import OneLineParser  # noqa: E402

DEPS = {"classification": ("svm-cv", ("rf-cv", "logdet")),
        "regression": ("nw-cv", ("nw-ml",))}


def measure(name: str, splits: int, proto: Protocol, data_dir) -> dict:
    """Seconds of every baseline cell of ``name`` over ``splits`` splits (and their status)."""
    ds = load_dataset(name, data_dir)
    dep_method, methods = DEPS[ds.task]
    secs: dict[str, float] = {m: 0.0 for m in (*methods, dep_method)
                              if m != "svm-cv"}
    bad = []
    for s in range(splits):
        dep = run_cell(Cell(name, s, dep_method), ds, proto)
        if dep_method in secs:
            secs[dep_method] += dep["seconds"]
        for m in methods:
            r = run_cell(Cell(name, s, m), ds, proto, dep)
            secs[m] += r["seconds"]
            if r["status"] != "ok":
                bad.append(f"{m} split {s}: {r.get('error')}")
    per = {m: v / splits for m, v in secs.items()}
    return dict(dataset=name, splits=splits, seconds_per_split=per,
                full_10_splits=10 * sum(per.values()), errors=bad,
                load=os.getloadavg()[0])


def main(argv=None) -> int:
    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default=",".join((*CLASSIFICATION, *REGRESSION)))
    p.add_argument("--splits", type=int, default=1)
    p.add_argument("--json", default=None)
    a = p.parse_args(argv)
    p.output("--json", a.json)
    proto, data_dir = Protocol(), resolve_data_dir(None)
    rows = []
    with threadpool_limits(limits=1):
        for name in a.sets.split(","):
            row = measure(name, a.splits, proto, data_dir)
            rows.append(row)
            cells = ", ".join(f"{m} {v:.1f}s" for m, v in row["seconds_per_split"].items())
            print(f"{name:10s} {cells} | x10 splits {row['full_10_splits'] / 60:.1f} min | "
                  f"load {row['load']:.1f}" + (f" | ERRORS {row['errors']}" if row["errors"]
                                               else ""), flush=True)
    total = sum(r["full_10_splits"] for r in rows)
    print(f"total at --full (10 splits): {total / 60:.1f} min of cell time")
    if a.json:
        Path(a.json).write_text(json.dumps(dict(rows=rows, total_seconds=total), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
