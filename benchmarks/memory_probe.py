#!/usr/bin/env python
"""What holds the memory of a decomposed fit: peak RSS, RSS after the fit, bytes kept by results.

``make_classification(n / 0.8 x 54)``, the first ``n`` rows for training, min-max scaled;
``DANKClassifier(C=32, gamma=0.5, decomposition=v, extension="nearest")`` (covtype's settings at
a smaller size: ``v = n / 2,324`` clusters by default, the paper's points per cluster). Printed:
the peak RSS of the process and its workers during the fit (``_peak.TreePeak``), the RSS after
it, the numpy bytes kept alive by ``results_[0]`` and by its per-cluster results (the shared
training features counted once), against ``8 sum_c n_c^2`` (every cluster's kernel).

It uses the public API only, so the same script measures any checkout (``--repo``)::

    python benchmarks/memory_probe.py --n 50000                 # this checkout
    git worktree add /tmp/before 5977344                        # before issue 19 (per-cluster
    python benchmarks/memory_probe.py --n 50000 --repo /tmp/before   # results kept kernels)
"""

from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys
import time
from pathlib import Path

import numpy as np
import psutil
from _held import held_bytes
from _peak import GB, TreePeak
from sklearn.datasets import make_classification


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=50_000, help="training points (default 50,000)")
    p.add_argument("--v", type=int, default=None, help="clusters (default n / 2,324)")
    p.add_argument("--repo", default=str(Path(__file__).resolve().parents[1]),
                   help="checkout whose dank_fast is measured (default: this one)")
    a = p.parse_args(argv)
    sys.path.insert(0, a.repo)
    DANKClassifier = importlib.import_module("dank_fast").DANKClassifier
    v = a.v or max(1, round(a.n / 2324))
    X, y = make_classification(n_samples=round(a.n / 0.8), n_features=54, random_state=0)
    lo, hi = X[: a.n].min(axis=0), X[: a.n].max(axis=0)
    X = (X - lo) / np.where(hi > lo, hi - lo, 1.0)
    gc.collect()
    clf = DANKClassifier(C=32.0, gamma=0.5, decomposition=v, extension="nearest",
                         random_state=0)
    with TreePeak() as peak:
        t = time.perf_counter()
        clf.fit(X[: a.n], y[: a.n])
        fit_s = time.perf_counter() - t
    gc.collect()
    res = clf.results_[0]
    shared = getattr(res, "kernel", None)
    per_cluster = sum(held_bytes(r, skip=(shared,)) for r in res.results)
    squares = sum(8 * b.size**2 for b in res.blocks)
    print(f"dank_fast from {sys.modules['dank_fast'].__file__}; load {os.getloadavg()[0]:.2f}")
    print(f"n = {a.n}, {len(res.blocks)} clusters, fit {fit_s:.1f} s, {res.status}, "
          f"rel. gap {res.rel_gap:.1e}")
    print(f"RSS before the fit {peak.start_gb:.2f} GB, peak during it {peak.peak_gb:.2f} GB, "
          f"after it {psutil.Process().memory_info().rss / GB:.2f} GB")
    print(f"kept by results_[0]: {held_bytes(res) / GB:.3f} GB (the per-cluster results "
          f"{per_cluster / GB:.3f} GB, besides the shared features); every cluster's kernel "
          f"8 sum n_c^2 = {squares / GB:.3f} GB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
