#!/usr/bin/env python
"""A large certified solve alone, and beside another busy process: does it keep its share?

Each case runs three times, each time in a fresh process, under one of three conditions:

* ``idle``: nothing else runs (besides what the machine runs anyway; the load average is
  recorded before and after);
* ``nice``: beside one busy process at the lowest priority (``nice 19``): a NumPy loop of
  ``1500 x 1500`` matrix products with the configured BLAS threads, started two seconds
  before the case and stopped after it;
* ``busy``: beside the same loop at normal priority, which takes every core it can.

A case times the plain SVM (libsvm, same kernel) and the DANK fit (its own SVM start included)
one after the other, in the same conditions, and reports both, their ratio, the DANK fit's CPU
time and its certificate. A solve that kept its share of the machine keeps its ratio to the
SVM fit: ``nice`` should not move it, ``busy`` no more than it moves libsvm's (which is
single-threaded). dank_fast runs each solve's BLAS on one thread (``dank_fast/_threads.py``),
whatever is configured; the busy loop uses the configured threads.

Cases:

* ``kit-n50000``: the conformance kit's ``large1_svm_n50000`` (50,000 points, 8 features,
  the kit's ``C``, ``eta`` and ``tau``): ``solve_svm`` on its :class:`dank_fast.FeatureKernel`
  (working sets), against ``svc_dual`` (libsvm on the features);
* ``eeg``, ``ijcnn1``: the exact rows of ``bench_large.py`` (same data and settings),
  ``DANKClassifier(C, gamma, tau=0.01)`` against ``sklearn.svm.SVC(C, gamma)``; they need
  the data sets (``--data-dir``, ``$DANK_DATASETS`` or ``../shared/datasets``) and are left
  out, with a message, without them.

Usage::

    python benchmarks/bench_load.py                      # every case (about 6 minutes)
    python benchmarks/bench_load.py --cases eeg --conditions idle busy

Results: ``benchmarks/results/load.json``; the table on the performance page is generated
from it (``python docs/scripts/tables.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _args import OneLineParser  # noqa: E402

CASES = ("kit-n50000", "eeg", "ijcnn1")
CONDITIONS = ("idle", "nice", "busy")
#: the competing process: matrix products with the configured BLAS threads, forever
BUSY = ("import numpy as np\n"
        "a = np.random.default_rng(0).random((1500, 1500))\n"
        "while True:\n"
        "    a = a @ a\n"
        "    a /= np.abs(a).max()\n")


def run_case(case: str, data_dir: str | None) -> dict:
    """One case in this process: the SVM fit, then the DANK fit (module docstring)."""
    import numpy as np

    import dank_fast

    if case == "kit-n50000":
        from dank_fast._libsvm import svc_dual
        from verification.conformance.large import write_large
        from verification.formats import load_instance

        with tempfile.TemporaryDirectory() as tmp:
            write_large(tmp, ids=["large1_svm_n50000"])
            inst = load_instance(os.path.join(tmp, "large1_svm_n50000.npz"))
        fk = dank_fast.FeatureKernel(inst["X"], sigma=inst["kernel"]["sigma"])
        y = inst["y"]
        t = time.perf_counter()
        svc_dual(fk, y, inst["C"])
        svc_s = time.perf_counter() - t
        t, c = time.perf_counter(), time.process_time()
        res = dank_fast.solve_svm(fk, y, C=inst["C"], eta=inst["eta"], tau=inst["tau"],
                                  tol=1e-6)
    else:
        import bench_large
        from sklearn.svm import SVC

        Xtr, y, _, _ = bench_large.load(case, bench_large.data_dir(data_dir), 0, False)
        s = bench_large.SETTINGS[case]
        t = time.perf_counter()
        SVC(C=s["C"], gamma=s["gamma"]).fit(Xtr, y)
        svc_s = time.perf_counter() - t
        t, c = time.perf_counter(), time.process_time()
        est = dank_fast.DANKClassifier(C=s["C"], gamma=s["gamma"], tau=0.01).fit(Xtr, y)
        res = est.results_[0]  # one binary problem: its certified result
    dank_s, cpu_s = time.perf_counter() - t, time.process_time() - c
    return dict(case=case, n=int(np.asarray(y).size), svc_s=svc_s, dank_s=dank_s,
                dank_cpu_s=cpu_s, ratio=dank_s / svc_s, status=res.status,
                rel_gap=float(res.rel_gap))


def _competitor(condition: str):
    """The busy process of ``condition`` (None for ``idle``), already running."""
    if condition == "idle":
        return None
    code = ("import os\nos.nice(19)\n" if condition == "nice" else "") + BUSY
    proc = subprocess.Popen([sys.executable, "-c", code])
    time.sleep(2.0)  # its BLAS threads are up and busy
    return proc


def measure(case: str, condition: str, data_dir: str | None) -> dict:
    """``case`` in a fresh process under ``condition``; the row, or one with ``error``."""
    load0 = os.getloadavg()
    proc = _competitor(condition)
    try:
        argv = [sys.executable, __file__, "--one", case]
        if data_dir:
            argv += ["--data-dir", data_dir]
        out = subprocess.run(argv, capture_output=True, text=True, check=False)
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()
    if out.returncode != 0:
        tail = " ".join(out.stderr.strip().splitlines()[-1:]) or f"exit {out.returncode}"
        row = dict(case=case, error=tail)
    else:
        row = json.loads(out.stdout.strip().splitlines()[-1])
    return dict(row, condition=condition, load_before=list(load0),
                load_after=list(os.getloadavg()))


def _has_data(data_dir: str | None) -> bool:
    import bench_large

    try:
        bench_large.data_dir(data_dir)
    except SystemExit:
        return False
    return True


def parse_args(argv=None) -> argparse.Namespace:
    p = OneLineParser(
        description="A large certified solve alone, beside a busy process at nice 19, and "
        "beside one at normal priority: its time and its ratio to the SVM fit, each in a "
        "fresh process.")
    p.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES),
                   help="solves to time (default: all; eeg and ijcnn1 need the data sets)")
    p.add_argument("--conditions", nargs="+", choices=CONDITIONS, default=list(CONDITIONS),
                   help="what runs beside each solve (default: all three)")
    p.add_argument("--data-dir", default=None,
                   help="data sets directory (default: $DANK_DATASETS or ../shared/datasets)")
    p.add_argument("--json", default=str(HERE / "results" / "load.json"),
                   help="where to write the rows (default: benchmarks/results/load.json)")
    p.add_argument("--one", choices=CASES, help=argparse.SUPPRESS)  # the child process
    a = p.parse_args(argv)
    p.output("--json", a.json)
    return a


def main(argv=None) -> int:
    a = parse_args(argv)
    if a.one:
        print(json.dumps(run_case(a.one, a.data_dir)))
        return 0
    cases = [c for c in a.cases if c == "kit-n50000" or _has_data(a.data_dir)]
    for c in sorted(set(a.cases) - set(cases)):
        print(f"{c}: left out (no data sets)", file=sys.stderr)
    rows = []
    for case in cases:
        for cond in a.conditions:
            r = measure(case, cond, a.data_dir)
            rows.append(r)
            print(f"{case} {cond}: " + (r["error"] if "error" in r else
                  f"SVC {r['svc_s']:.1f} s, DANK {r['dank_s']:.1f} s ({r['ratio']:.1f}x), "
                  f"{r['status']} {r['rel_gap']:.1e}"), file=sys.stderr, flush=True)
    import bench_large

    meta = dict(bench_large.environment(),
                command="python benchmarks/bench_load.py " + " ".join(argv or sys.argv[1:]),
                busy=BUSY)
    Path(a.json).write_text(json.dumps(dict(meta=meta, rows=rows), indent=1) + "\n")
    return 0 if all("error" not in r for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
