#!/usr/bin/env python
"""Timing benchmark: ``dank_fast.solve_svm`` against scikit-learn's SVC on several data families.

Each row is one binary problem (family, ``n``, ``C``) with the paper's settings (Gaussian kernel,
``tau = 0.01``, ``eta = ||a_SVC||^2``, the squared norm of the plain SVM's dual solution), solved
by the README's call ``solve_svm(K, y, C=C, eta=eta, tau=tau)`` (``--call defaults``: method
``auto`` with its own SVC warm start and the PSD test of ``K``) or the same with
``check_psd=False`` (``--call auto``: ``K`` is PSD by construction, so only the solver is timed).

Families:

* ``moons0.2``, ``moons0.3``: ``make_moons(n, noise)``, min-max scaled to ``[0, 1]^2``, sigma 0.5;
* ``blobs``: two overlapping Gaussian blobs, ``X ~ N(0, I_2)``, ``y = sign(x_1 + 0.4 e)``,
  sigma 0.5;
* ``classif``: ``make_classification(n, 20, n_informative=5, flip_y=0.1)``, sigma 3;
* ``diabetic``, ``heart``: the training half (seed 0) of the UCI sets in ``--data-dir``
  (default ``$DANK_DATASETS``, else ``../shared/datasets`` beside the repository), min-max
  scaled, sigma ``sqrt(d) / 2``; skipped when the files are absent (their size is the data
  set's, not ``--sizes``).

Pairing: each repeat fits ``SVC(kernel="precomputed", C=C)`` on the same ``K`` and then runs the
DANK solve, alternately, in the same process; the row's ratio is the median over the repeats of
``DANK time / SVC time`` of the same repeat (the machine's speed drifts: read ratios, not times).
Every DANK solve is certified: a row whose solve did not reach ``status == "converged"`` says so.

Run ``python benchmarks/bench_families.py --help``; ``--quick`` runs a couple of minutes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import warnings

import numpy as np
from sklearn.datasets import make_classification, make_moons

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_svm import blas_info, code_fingerprint, fit_svc, run_solve  # noqa: E402

import dank_fast  # noqa: E402
from dank_fast import compute_kernel  # noqa: E402

SYNTHETIC = ("moons0.2", "moons0.3", "blobs", "classif")
UCI = ("diabetic", "heart")
SIGMA = {"moons0.2": 0.5, "moons0.3": 0.5, "blobs": 0.5, "classif": 3.0}
DEFAULT_DATA_DIR = os.environ.get("DANK_DATASETS") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "shared", "datasets")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--families", nargs="+", default=list(SYNTHETIC + UCI),
                   choices=list(SYNTHETIC + UCI))
    p.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000])
    p.add_argument("--C", type=float, nargs="+", default=[1.0, 32.0])
    p.add_argument("--tau", type=float, default=0.01)
    p.add_argument("--tol", type=float, default=1e-6, help="certified relative gap (--call auto)")
    p.add_argument("--repeat", type=int, default=3, help="paired (SVC, DANK) repeats per row")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--call", choices=["defaults", "auto"], default="defaults",
                   help="'defaults': the README's call (PSD test included); 'auto': "
                   "check_psd=False")
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    p.add_argument("--quick", action="store_true",
                   help="n = 1,000 only, one repeat, no UCI sets (a couple of minutes)")
    p.add_argument("--json", default=None, help="write all rows and metadata to this file")
    args = p.parse_args(argv)
    if min(args.sizes) < 10 or args.repeat < 1:
        p.error("--sizes must be at least 10 and --repeat at least 1")
    if not all(c > 0 for c in args.C) or not args.tau >= 0 or not args.tol > 0:
        p.error("--C and --tol must be positive, --tau >= 0")
    if args.json and not os.path.isdir(os.path.dirname(os.path.abspath(args.json))):
        p.error(f"--json: directory of {args.json!r} does not exist")
    if args.quick:
        args.sizes, args.repeat = [1000], 1
        args.families = [f for f in args.families if f not in UCI]
    return args


def _minmax(X):
    lo, hi = X.min(axis=0), X.max(axis=0)
    return (X - lo) / np.where(hi > lo, hi - lo, 1.0)


def make_family(name, n, seed):
    """``(X, y)`` of a synthetic family, ``y`` in {-1, +1}."""
    rng = np.random.default_rng(seed)
    if name.startswith("moons"):
        X, y = make_moons(n_samples=n, noise=float(name[5:]), random_state=seed)
        return _minmax(X), np.where(y == 1, 1.0, -1.0)
    if name == "blobs":
        X = rng.standard_normal((n, 2))
        return X, np.where(X[:, 0] + 0.4 * rng.standard_normal(n) > 0, 1.0, -1.0)
    X, y = make_classification(n, 20, n_informative=5, flip_y=0.1, random_state=seed)
    return X, np.where(y == 1, 1.0, -1.0)


def load_uci(name, data_dir, seed):
    """The training half (random 50/50 split, ``seed``) of a UCI set, or None when absent."""
    path = os.path.join(data_dir, f"{name}.csv")
    if not os.path.exists(path):
        return None
    raw = np.genfromtxt(path, delimiter=",", skip_header=1, dtype=float)
    X, t = raw[:, :-1], raw[:, -1]
    y = np.where(t == np.max(t), 1.0, -1.0)
    idx = np.random.default_rng(seed).permutation(len(y))[: len(y) // 2]
    return _minmax(X[idx]), y[idx]


def problems(args):
    """``(family, X, y, sigma)`` for every family and size."""
    for fam in args.families:
        if fam in UCI:
            data = load_uci(fam, args.data_dir, args.seed)
            if data is None:
                print(f"# {fam}: not found in {args.data_dir}, skipped", file=sys.stderr)
                continue
            X, y = data
            yield fam, X, y, float(np.sqrt(X.shape[1]) / 2)
            continue
        for n in args.sizes:
            X, y = make_family(fam, n, args.seed)
            yield fam, X, y, SIGMA[fam]


def paired_row(K, y, C, tau, tol, call, repeat):
    """SVC fit and DANK solve alternately, ``repeat`` times: the row's numbers."""
    t_svc, _, a_svm, svc = fit_svc(K, y, C, 1, 1e-3)
    eta = float(a_svm @ a_svm)
    svc_times, dank_times, ratios, res = [], [], [], None
    for _ in range(repeat):
        t_s = fit_svc(K, y, C, 1, 1e-3)[0]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dank_fast.ConvergenceWarning)
            res, wall = run_solve(K, y, C, eta, tau, tol, call, None, None)
        svc_times.append(t_s)
        dank_times.append(wall)
        ratios.append(wall / t_s)
    return {
        "C": C, "eta": eta, "n_SV": int(svc.support_.size),
        "svc_time_s": statistics.median(svc_times), "dank_time_s": statistics.median(dank_times),
        "ratio": statistics.median(ratios), "ratios": ratios,
        "status": res.status, "certified": bool(res.success), "rel_gap": float(res.rel_gap),
        "n_iter": int(res.n_iter), "newton_iter": int(res.extra.get("newton_iter", 0)),
        "handovers": int(res.extra.get("handovers", 0)),
    }


def main(argv=None):
    args = parse_args(argv)
    meta = {
        "command": "python benchmarks/bench_families.py " + " ".join(sys.argv[1:] if argv is None
                                                                     else argv),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": f"{platform.node()} {platform.machine()}", "cpu_count": os.cpu_count(),
        "python": platform.python_version(), "numpy": np.__version__,
        "sklearn": __import__("sklearn").__version__, "blas": blas_info(),
        "code": code_fingerprint(), "args": vars(args),
    }
    print(f"# {meta['command']}  ({meta['date']}, git {meta['code']['git_head']})")
    print(f"{'family':<10} {'n':>5} {'C':>4} {'SV':>5} {'SVC ms':>8} {'DANK ms':>9} "
          f"{'ratio':>7} {'newton':>6} status")
    rows = []
    for fam, X, y, sigma in problems(args):
        K = compute_kernel(X, sigma=sigma)
        for C in args.C:
            r = paired_row(K, y, C, args.tau, args.tol, args.call, args.repeat)
            r.update(family=fam, n=int(y.size), sigma=sigma)
            rows.append(r)
            status = r["status"] if r["certified"] else f"NOT CERTIFIED ({r['status']})"
            print(f"{fam:<10} {r['n']:>5} {C:>4g} {r['n_SV']:>5} {r['svc_time_s'] * 1e3:>8.1f} "
                  f"{r['dank_time_s'] * 1e3:>9.1f} {r['ratio']:>6.1f}x {r['newton_iter']:>6} "
                  f"{status}", flush=True)
    ratios = [r["ratio"] for r in rows]
    if ratios:
        print(f"# median ratio {statistics.median(ratios):.1f}x, worst {max(ratios):.1f}x; "
              f"{sum(not r['certified'] for r in rows)} solves not certified")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
