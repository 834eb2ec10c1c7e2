"""The committed comparison of this project's solvers, qpbenchmark style.

    python -m verification.conformance.compare [--out reproduction/conformance] [--set all]
        [--timeout 30] [--jobs 2] [--only fast_newton,ref_scs]

runs ``dank-verify conformance --impl verification.conformance.adapters:NAME`` for every
adapter (:data:`~.adapters.ADAPTERS`), keeps each run's ``report.md`` and ``results.json`` in
``OUT/NAME/`` and writes ``OUT/README.md``: one table of success rate and shifted geometric
means per solver and task, the failures counted by status, the settings, the wall time and the
load average.  ``--from-results`` rewrites ``README.md`` from the stored ``results.json`` files
without running anything.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time
from types import SimpleNamespace

from .adapters import ADAPTERS
from .cli import run
from .report import GAP_SHIFT, TIME_SHIFT

__all__ = ["main", "comparison_table"]

_PKG = "verification.conformance.adapters"


def _load(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def comparison_table(docs: dict[str, dict]) -> list[str]:
    """Markdown rows: solver x task with success rate and shifted geometric means."""
    lines = ["| solver | task | instances | certified | not certified | error | timeout | "
             f"success rate | time (s, sgm, shift {TIME_SHIFT:g} s) | certified rel. gap "
             f"(sgm, shift {GAP_SHIFT:g}) |", "|---|---|---|---|---|---|---|---|---|---|"]
    for name, doc in docs.items():
        for task, s in doc["summary"].items():
            if task == "all":
                continue
            rate = "-" if s["success_rate"] is None else f"{s['success_rate']:.0%}"
            t = "-" if s["sgm_time"] is None else f"{s['sgm_time']:.3g}"
            g = "-" if s["sgm_rel_gap"] is None else f"{s['sgm_rel_gap']:.2g}"
            lines.append(f"| [`{name}`]({name}/report.md) | {task} | {s['instances']} | "
                         f"{s['certified']} | {s['not_certified']} | {s['error']} | "
                         f"{s['timeout']} | {rate} | {t} | {g} |")
    return lines


def _readme(docs: dict[str, dict], info: dict) -> str:
    first = next(iter(docs.values()))
    lines = ["# Conformance of this project's solvers (`dank-verify conformance`)", "",
             "Every solver of `dank_fast` (each `method=`, including `paper`: Algorithm 1 "
             "exactly as printed) and `dank_ref` (SCS, Clarabel) run through the conformance "
             "kit on the same instances, each answer certified by the oracle "
             "(`verification.oracle.certify`), never by the solver's own status. Adapters: "
             "`verification/conformance/adapters.py`; regenerate with "
             f"`{info['command']}`.", "",
             f"Set `{first['set']}` ({first['summary']['all']['instances']} instances: `golden`, "
             f"the shipped vectors; `families`, the generated ones, version "
             f"{first['families_version']}; `all`, both),"
             f" tol {first['tol']:g}, timeout {first['timeout']:g} s per instance, "
             f"{first['jobs']} jobs. Run {info['date']}: {info['wall']:.0f} s wall in all; load "
             f"average {info['load']} (2 cores shared with other jobs: times are "
             "inflated and noisy). Time: shifted geometric mean with a row in error or timeout "
             "counted at the timeout; gap: over the rows whose gap was evaluated.", ""]
    lines += comparison_table(docs)
    lines += ["", "Each solver's `report.md` lists every failure with its one-line diagnosis; "
              "`results.json` has every row (schema: "
              "`verification/schemas/conformance-results.schema.json`).", ""]
    return "\n".join(lines)


def _run_one(name: str, a) -> tuple[dict, float]:
    out = os.path.join(a.out, name)
    ns = SimpleNamespace(impl=f"{_PKG}:{name}", cmd=None, set=a.set, task=None, tol=1e-6,
                         timeout=a.timeout, jobs=a.jobs, out=out, format="npz")
    t0 = time.perf_counter()
    doc, _ = run(ns)
    return doc, time.perf_counter() - t0


def main(argv=None) -> int:
    """Run (or, with ``--from-results``, only tabulate) the comparison; returns 0."""
    p = argparse.ArgumentParser(prog="python -m verification.conformance.compare",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default="reproduction/conformance")
    p.add_argument("--set", default="all", choices=("golden", "families", "all"))
    p.add_argument("--timeout", type=float, default=30.0)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--only", default=None, help="comma-separated adapters (default: all)")
    p.add_argument("--from-results", action="store_true")
    a = p.parse_args(argv)
    names = a.only.split(",") if a.only else list(ADAPTERS)
    docs, wall = {}, 0.0
    for name in names:
        if a.from_results:
            docs[name] = _load(os.path.join(a.out, name, "results.json"))
            wall += docs[name]["wall_seconds"]
            continue
        docs[name], secs = _run_one(name, a)
        wall += secs
        print(f"{name}: {docs[name]['summary']['all']['certified']}/"
              f"{docs[name]['summary']['all']['instances']} certified in {secs:.0f} s",
              flush=True)
    loads = [d["load_average"][0] for d in docs.values()]
    info = dict(command=" ".join(["python -m verification.conformance.compare",
                                  *(argv if argv is not None else sys.argv[1:])]),
                date=datetime.date.today().isoformat(), wall=wall,
                load=f"{min(loads):.1f} to {max(loads):.1f} (1 min, at the end of each run)")
    with open(os.path.join(a.out, "README.md"), "w", encoding="utf-8") as fh:
        fh.write(_readme(docs, info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
