#!/usr/bin/env python
"""What holds the memory of a decomposed fit: peak RSS, RSS after the fit, bytes kept by results.

``make_classification(n / 0.8 x 54)``, the first ``n`` rows for training, min-max scaled;
``DANKClassifier(C=32, gamma=0.5, decomposition=v, extension="nearest")`` (covtype's settings at
a smaller size: ``v = n / 2,324`` clusters by default, the paper's points per cluster). Printed:
the peak RSS of the process and its workers during the fit (``_peak.TreePeak``), the RSS after
it, the numpy bytes kept alive by ``results_[0]`` and by its per-cluster results (the shared
training features counted once), against ``8 sum_c n_c^2`` (every cluster's kernel).

It uses the public API only, so the same script measures any checkout (``--repo``)::

    python benchmarks/memory_probe.py --label current --update-readme      # this checkout
    git worktree add /tmp/other REV              # any other revision, to compare with
    python benchmarks/memory_probe.py --label "REV" --repo /tmp/other --update-readme
"""

from __future__ import annotations

import gc
import importlib
import os
import sys
import time
from pathlib import Path

import numpy as np
import psutil
from _args import OneLineParser
from _held import held_bytes
from _peak import GB, TreePeak
from sklearn.datasets import make_classification


def main(argv=None) -> int:
    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=50_000, help="training points (default 50,000)")
    p.add_argument("--v", type=int, default=None, help="clusters (default n / 2,324)")
    p.add_argument("--label", default="this checkout", help="first column of the row")
    p.add_argument("--update-readme", action="store_true",
                   help="put the row into the memory_probe table of benchmarks/README.md")
    p.add_argument("--repo", default=str(Path(__file__).resolve().parents[1]),
                   help="checkout whose dank_fast is measured (default: this one)")
    a = p.parse_args(argv)
    if not os.path.isfile(os.path.join(a.repo, "dank_fast", "__init__.py")):
        p.error(f"--repo: {a.repo!r} holds no dank_fast package")
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
    row = (f"| {a.label} | {a.n} | {len(res.blocks)} | {fit_s:.1f} | {os.getloadavg()[0]:.1f} | "
           f"{res.status}, {res.rel_gap:.1e} | {peak.start_gb:.2f} | {peak.peak_gb:.2f} | "
           f"{psutil.Process().memory_info().rss / GB:.2f} | {held_bytes(res) / GB:.3f} | "
           f"{per_cluster / GB:.3f} | {squares / GB:.3f} |")
    print(f"dank_fast from {sys.modules['dank_fast'].__file__}", HEADER, row, sep="\n")
    if a.update_readme:
        update_readme(a.label, row)
    return 0


HEADER = ("| code | n | clusters | fit s | load | certificate | RSS before GB | peak GB "
          "(process + workers) | RSS after GB | kept by results_[0] GB | by the per-cluster "
          "results GB (shared features aside) | 8 sum n_c^2 GB |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|")


def update_readme(label: str, row: str) -> None:
    """Replace (or add) the row ``label`` of the table between the memory_probe markers."""
    path = Path(__file__).resolve().parent / "README.md"
    text = path.read_text()
    start, end = "<!-- memory_probe:start -->\n", "<!-- memory_probe:end -->"
    i, j = text.index(start) + len(start), text.index(end)
    rows = [r for r in text[i:j].splitlines()[2:] if r and not r.startswith(f"| {label} |")]
    path.write_text(text[:i] + "\n".join([HEADER, *rows, row]) + "\n" + text[j:])


if __name__ == "__main__":
    sys.exit(main())
