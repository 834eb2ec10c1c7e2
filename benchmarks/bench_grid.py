#!/usr/bin/env python
"""Timing benchmark: ``DANKClassifier.fit`` over the paper's (sigma, C) grid against SVC.

The paper's protocol (section 6.1.1) chooses DANK's ``(sigma, C)`` by 5-fold
cross-validation over ``sigma, C in {2^-5, ..., 2^5}``: 121 fits per fold, at the UCI sizes
(50 to about 600 training points per fold). For each data set this script takes the training
half of split 0 (``verification.study.experiments.data.make_split``, seed 0), min-max scales it to
``[0, 1]^d`` as the protocol does, and, for the training part of each of the first ``--folds``
CV folds, fits at every grid point:

* ``SVC(C=C, gamma=1/(2 sigma^2))`` on the features (the protocol's SVM: libsvm computes
  the Gaussian kernel itself), median of ``--repeat`` fits;
* ``DANKClassifier(C=C, sigma=sigma, eta="svm", method="newton", tol=1e-6)`` as the protocol
  builds it (kernel, the plain SVM that gives ``eta`` and the warm start, the certified
  Newton solve, one binary problem per class pair).

and, unless ``--no-warm``, the same fit along the grid as a warm-started estimator: one
``DANKClassifier(warm_start=True)`` per ``sigma``, refitted by ``set_params(C=C).fit`` with ``C``
ascending (each fit starts from the previous ``C``'s solution rescaled to the new box, and reuses
the kernel; :mod:`dank_fast._warm`).

The ratio of a grid point is DANK's fit time over SVC's (cold and warm), all measured in the same
run, side by side at each point, and all inclusive of their own kernel (the warm fit's kernel is
the previous fit's, as in a grid search that uses it). The table gives per data set the median
(and quartiles) of the ratio over the grid, the median times, the number of solves that did not
certify ``tol`` and the largest certified relative gap; ``--json`` writes every grid point.

With ``--profile`` each data set's cold fits run once more under cProfile (``_profile.py``),
and its summary gets the time by part of the fits (SVC start, validation, kernel, evaluations of
``F(a)`` and their dense eigendecompositions, Newton systems, final certificate), the number of
evaluations and of Python-level function calls per fit.

Run ``python benchmarks/bench_grid.py --help`` for the options; see benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time
import warnings

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _args import OneLineParser  # noqa: E402
from _profile import COUNTS, PARTS, profiled  # noqa: E402

import dank_fast  # noqa: E402
from dank_fast import DANKClassifier  # noqa: E402

#: parts of a fit in a profile (``_profile.measure``): the solve's parts of ``_profile.PARTS``
#: (``eigen`` every evaluation of ``F(a)``, ``direction`` the Newton systems), the estimator's
#: validation and kernel, and ``dense_eigh_s`` the dense eigendecompositions of ``F(a)``
FIT_PARTS = tuple(p for p in PARTS if p[0] in ("svc_start", "eigen", "direction",
                                               "final_certificate")) + (
    ("validation", "estimators.py", "_validate_training_data"),
    ("validation", "sklearn/base.py", "_validate_params"),
    ("kernel", "kernels.py", "compute_kernel"),
    ("dense_eigh_s", "_eigen.py", "_dense"))
FIT_COUNTS = tuple(c for c in COUNTS if c[0] in ("evaluations", "dense_eigh"))
GRID = tuple(float(2.0**k) for k in range(-5, 6))  # the paper's grid for sigma and C
DEFAULT_SETS = ("heart", "sonar", "monks1", "spect", "fertility", "wine", "diabetic")


def parse_args(argv=None):
    p = OneLineParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--datasets", nargs="+", default=list(DEFAULT_SETS))
    p.add_argument("--data-dir", default=None, help="default: as dank-reproduce finds it")
    p.add_argument("--folds", type=int, default=1, help="CV folds timed (of 5)")
    p.add_argument("--grid", type=int, nargs="+", default=list(range(-5, 6)),
                   help="exponents k of the grid 2^k (sigma and C)")
    p.add_argument("--repeat", type=int, default=3, help="SVC fits per point; median taken")
    p.add_argument("--tol", type=float, default=1e-6)
    p.add_argument("--tau", type=float, default=0.01, help="nuclear-norm weight of DANK")
    p.add_argument("--no-warm", action="store_true", help="skip the warm-started fits")
    p.add_argument("--profile", action="store_true",
                   help="run each data set's cold fits once more under cProfile and add the "
                   "time by part of the fits to its summary")
    p.add_argument("--json", default=None, help="write every grid point to this file")
    args = p.parse_args(argv)
    p.output("--json", args.json)
    from verification.study.experiments.data import CLASSIFICATION  # start-up: the package's CLI

    unknown = [d for d in args.datasets if d not in CLASSIFICATION]
    if unknown:
        p.error(f"--datasets: unknown {', '.join(unknown)}; known: {', '.join(CLASSIFICATION)}")
    if not args.tau >= 0:
        p.error("--tau must be >= 0")
    if args.repeat < 1 or not 1 <= args.folds <= 5:
        p.error("--repeat must be at least 1 and --folds between 1 and 5")
    return args


def training_folds(name: str, data_dir, n_folds: int):
    """``(X, y)`` of the training part of the first ``n_folds`` CV folds of split 0."""
    from verification.study.experiments.data import load_dataset, make_split, resolve_data_dir

    ds = load_dataset(name, resolve_data_dir(data_dir))
    Xtr, ytr, _, _ = make_split(ds, 0, 0)
    cv = StratifiedKFold(5, shuffle=True, random_state=0)
    for k, (tr, _) in enumerate(cv.split(Xtr, ytr)):
        if k >= n_folds:
            break
        yield MinMaxScaler().fit_transform(Xtr[tr]), ytr[tr]


def _timed_fit(est, X, y) -> tuple[float, list, int]:
    """Wall time of ``est.fit(X, y)``, its results and the number of warnings."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", dank_fast.ConvergenceWarning)
        t0 = time.perf_counter()
        est.fit(X, y)
        dt = time.perf_counter() - t0
    return dt, est.results_, len(caught)


def _certificates(res: list, prefix: str = "") -> dict:
    return {f"{prefix}newton_iter": [int(r.extra.get("newton_iter", 0)) for r in res],
            f"{prefix}n_iter": [int(r.n_iter) for r in res],
            f"{prefix}status": [r.status for r in res],
            f"{prefix}max_rel_gap": float(f"{max(float(r.rel_gap) for r in res):.3g}"),
            f"{prefix}uncertified": sum(r.status != "converged" for r in res)}


def _cold(C: float, sigma: float, tol: float, tau: float) -> DANKClassifier:
    """The protocol's estimator at one grid point, as a cold fit builds it."""
    return DANKClassifier(C=C, sigma=sigma, eta="svm", method="newton", tol=tol, tau=tau)


def time_point(X, y, C: float, sigma: float, repeat: int, tol: float, warm=None,
               tau: float = 0.01) -> dict:
    """SVC and DANK fit times at one grid point, and DANK's certificates; ``warm``: the
    warm-started estimator of this ``sigma`` (refitted here at ``C``), None to skip."""
    svc_times = []
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        SVC(C=C, gamma=1.0 / (2.0 * sigma * sigma)).fit(X, y)
        svc_times.append(time.perf_counter() - t0)
    t_svc = statistics.median(svc_times)
    est = _cold(C, sigma, tol, tau)
    t_dank, res, n_warn = _timed_fit(est, X, y)
    out = {"C": C, "sigma": sigma, "n": int(y.size), "svc_s": float(f"{t_svc:.4g}"),
           "dank_s": float(f"{t_dank:.4g}"), "ratio": float(f"{t_dank / t_svc:.4g}"),
           **_certificates(res), "warnings": n_warn}
    if warm is not None:
        t_warm, res_w, n_warn_w = _timed_fit(warm.set_params(C=C), X, y)
        out.update({"warm_s": float(f"{t_warm:.4g}"), "warm_ratio": float(f"{t_warm / t_svc:.4g}"),
                    **_certificates(res_w, "warm_"), "warm_warnings": n_warn_w})
    return out


def profile_fits(folds: list, grid: list, tol: float, tau: float) -> dict:
    """The cold fits of one data set once more, under cProfile: seconds by part
    (:data:`FIT_PARTS`), counts (:data:`FIT_COUNTS`), Python-level calls, and ``fits``."""
    def run():
        for X, y in folds:
            for sigma in grid:
                for C in grid:
                    with warnings.catch_warnings():  # the timed fits count them
                        warnings.simplefilter("ignore", dank_fast.ConvergenceWarning)
                        _cold(C, sigma, tol, tau).fit(X, y)
        return {}
    prof = profiled(run, 0, FIT_PARTS, FIT_COUNTS)()["profile"]
    return dict(prof, fits=len(folds) * len(grid) ** 2)


def profile_line(p: dict) -> str:
    """One line of a data set's profile: shares of the profiled time, counts per fit."""
    total = max(p["total_s"], 1e-9)
    keys = ("svc_start", "validation", "kernel", "eigen", "direction", "final_certificate")
    rest = total - sum(p[k] for k in keys)
    shares = ", ".join(f"{k} {100 * p[k] / total:.0f}%" for k in keys)
    return (f"#   profile: {p['total_s']:.2f} s for {p['fits']} fits: {shares} (dense eigh "
            f"{100 * p['dense_eigh_s'] / total:.0f}%), rest {100 * rest / total:.0f}%; per fit "
            f"{p['evaluations'] / p['fits']:.1f} evaluations of F(a), "
            f"{p['calls'] / p['fits']:.0f} Python calls")


def summarise(name: str, points: list[dict]) -> dict:
    ratios = sorted(p["ratio"] for p in points)
    q = np.quantile(ratios, [0.25, 0.5, 0.75])
    warm = {}
    if points and "warm_s" in points[0]:
        w = np.quantile([p["warm_ratio"] for p in points], [0.25, 0.5, 0.75])
        warm = {"warm_ratio_q25": float(w[0]), "warm_ratio_median": float(w[1]),
                "warm_ratio_q75": float(w[2]),
                "warm_median_ms": 1e3 * statistics.median(p["warm_s"] for p in points),
                "warm_total_s": sum(p["warm_s"] for p in points),
                "warm_uncertified": sum(p["warm_uncertified"] for p in points),
                "warm_max_rel_gap": max(p["warm_max_rel_gap"] for p in points),
                "newton_iter_total": sum(sum(p["newton_iter"]) for p in points),
                "warm_newton_iter_total": sum(sum(p["warm_newton_iter"]) for p in points)}
    return {**warm, "dataset": name, "n": sorted({p["n"] for p in points}), "points": len(points),
            "ratio_q25": float(q[0]), "ratio_median": float(q[1]), "ratio_q75": float(q[2]),
            "svc_median_ms": 1e3 * statistics.median(p["svc_s"] for p in points),
            "dank_median_ms": 1e3 * statistics.median(p["dank_s"] for p in points),
            "dank_total_s": sum(p["dank_s"] for p in points),
            "svc_total_s": sum(p["svc_s"] for p in points),
            "uncertified": sum(p["uncertified"] for p in points),
            "max_rel_gap": max(p["max_rel_gap"] for p in points)}


def fmt(s: dict) -> str:
    n = "/".join(str(v) for v in s["n"])
    row = (f"| {s['dataset']} | {n} | {s['points']} | {s['svc_median_ms']:.2f} | "
           f"{s['dank_median_ms']:.1f} | {s['ratio_median']:.1f} "
           f"({s['ratio_q25']:.1f}-{s['ratio_q75']:.1f}) | "
           f"{s['dank_total_s'] / s['svc_total_s']:.1f} | {s['uncertified']} | "
           f"{s['max_rel_gap']:.1e} |")
    if "warm_ratio_median" not in s:
        return row
    return row + (f" {s['warm_median_ms']:.1f} | {s['warm_ratio_median']:.1f} "
                  f"({s['warm_ratio_q25']:.1f}-{s['warm_ratio_q75']:.1f}) | "
                  f"{s['warm_total_s'] / s['svc_total_s']:.1f} | "
                  f"{s['newton_iter_total']} / {s['warm_newton_iter_total']} | "
                  f"{s['warm_uncertified']} | {s['warm_max_rel_gap']:.1e} |")


HEADER = ("| data set | n (fold) | fits | SVC ms (median) | DANK ms (median) | "
          "ratio median (q25-q75) | ratio of totals | uncertified | max rel. gap |")
WARM_HEADER = (" warm ms (median) | warm ratio median (q25-q75) | warm ratio of totals | "
               "Newton steps cold / warm | warm uncertified | warm max rel. gap |")


def header(warm: bool) -> str:
    cols = HEADER + (WARM_HEADER if warm else "")
    return cols + "\n|" + "---|" * (cols.count("|") - 1)


def main(argv=None):
    args = parse_args(argv)
    grid = [float(2.0**k) for k in args.grid]
    load0 = os.getloadavg()
    print(f"# DANKClassifier grid benchmark "
          f"{datetime.datetime.now().astimezone().isoformat(timespec='seconds')}")
    print(f"# {platform.node()}, {os.cpu_count()} cores; numpy {np.__version__}; "
          f"load average at start {load0[0]:.2f}")
    print(f"# dank_fast from {os.path.dirname(dank_fast.__file__)}")
    print(f"# grid 2^k, k in {args.grid} for sigma and C; {args.folds} fold(s) of 5; "
          f"tol {args.tol:g}, tau {args.tau:g}")
    print(header(not args.no_warm), flush=True)
    summaries, points_all = [], []
    for name in args.datasets:
        points = []
        folds = list(training_folds(name, args.data_dir, args.folds))
        for X, y in folds:
            for sigma in grid:  # C ascending within a sigma: the order a warm start uses
                warm = None if args.no_warm else DANKClassifier(
                    sigma=sigma, eta="svm", method="newton", tol=args.tol, tau=args.tau,
                    warm_start=True)
                for C in sorted(grid):
                    points.append(time_point(X, y, C, sigma, args.repeat, args.tol, warm,
                                             args.tau))
        s = summarise(name, points)
        s["loadavg"] = os.getloadavg()
        summaries.append(s)
        points_all.extend(dict(p, dataset=name) for p in points)
        print(fmt(s), flush=True)
        if args.profile:
            s["profile"] = profile_fits(folds, grid, args.tol, args.tau)
            print(profile_line(s["profile"]), flush=True)
    med = statistics.median(p["ratio"] for p in points_all)
    med_w = (statistics.median(p["warm_ratio"] for p in points_all) if not args.no_warm
             else None)
    load1 = os.getloadavg()
    warm_txt = "" if med_w is None else f", warm-started along C {med_w:.2f}"
    print(f"# all {len(points_all)} fits: median ratio {med:.2f}{warm_txt}; load average at "
          f"end {load1[0]:.2f}, {load1[1]:.2f}, {load1[2]:.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "loadavg_start": load0, "loadavg_end": load1,
                       "median_ratio": med, "median_warm_ratio": med_w,
                       "summaries": summaries, "points": points_all},
                      f, separators=(",", ":"))


if __name__ == "__main__":
    sys.exit(main())
