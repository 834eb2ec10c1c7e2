#!/usr/bin/env python
"""Timing benchmark: DANK in SVM (``dank_fast.solve_svm``) against scikit-learn's SVC.

For make_moons data at each ``n`` and ``C``, with the paper's settings
(Gaussian kernel, ``tau = 0.01``, ``eta = ||a_SVM||^2``), it prints one table:

* the time and iterations ``accelerated`` and ``newton`` need to reach the certified
  relative gap ``--tol`` (default 1e-6), from a cold start (``a = 0``) and from a
  warm start at the plain SVM's dual solution ``a_SVM``;
* the time of ``paper`` (Algorithm 1 as printed, ``a0 = 0``, ``t_max = 2000``)
  and the certified relative gap it reaches when its own stopping rule
  ``||a_t - a_{t-1}|| <= 1e-4`` fires (or at ``t_max`` when it does not);
* every time as a ratio to the SVC fit time on the same precomputed ``K``
  (median of ``--repeat`` fits), all measured in one run.

The ratio denominator is the SVC fit time alone.  ``eta = ||a_SVM||^2`` needs that
SVC fit, which ``DANKClassifier(eta="svm")`` performs anyway; it is *not* added to
the DANK times (add 1.0 to a ratio to include it).  The kernel time is reported
separately and is excluded from both sides.

Guard: with ``--max-time T`` each DANK solve gets an iteration limit so that it
should not run for much longer than ``T`` seconds: a short pilot solve measures
the seconds per iteration (two pilots of 10 and 30 iterations; their difference
cancels the fixed costs) and ``max_iter = T / (s per iteration)`` (for ``newton``
it bounds its own iterations and its accelerated fallback; for ``paper`` it can cut ``t_max``).
A row whose solve stopped at such a limit is marked ``guard`` in the ``note`` column.

Run ``python benchmarks/bench_svm.py --help`` for the options; see benchmarks/README.md.
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
from sklearn.datasets import make_moons
from sklearn.svm import SVC

try:
    import threadpoolctl
except ImportError:  # optional: only needed for --blas-threads and the report
    threadpoolctl = None

import dank_fast
from dank_fast import compute_kernel, solve_svm

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the sibling _args.py
from _args import OneLineParser  # noqa: E402

DEFAULT_MAX_ITER = {"accelerated": 5000, "newton": 5000, "paper": 2000,  # newton: fallback
                    "auto": 5000, "defaults": 5000}
# rows that run solve_svm as a user would: "defaults" = solve_svm(K, y, C=, eta=, tau=) with
# every other argument at its default (method "auto" with its own SVC fit, the O(n^3) PSD test
# of K); "auto" = the same without the PSD test (check_psd=False: K is PSD by construction)
OWN_START = ("auto", "defaults")
NEWTON_MAX_ITER = 100  # solve_svm's default for newton's own iterations
WARM_METHODS = ("accelerated", "newton")
PILOT_ITER = 10


def parse_args(argv=None):
    p = OneLineParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--sizes", type=int, nargs="+", default=[200, 1000, 2000])
    p.add_argument("--C", type=float, nargs="+", default=[1.0, 32.0])
    p.add_argument("--sigma", type=float, default=0.5, help="Gaussian width (paper's sigma)")
    p.add_argument("--noise", type=float, default=0.2, help="make_moons noise")
    p.add_argument("--seed", type=int, default=0, help="make_moons random_state")
    p.add_argument("--tau", type=float, default=0.01)
    p.add_argument("--tol", type=float, default=1e-6, help="target certified relative gap")
    p.add_argument("--repeat", type=int, default=3, help="SVC fits per (n, C); median taken")
    p.add_argument("--solve-repeat", type=int, default=1,
                   help="DANK solves per row; the median wall time is reported (the machine "
                   "is shared: single timings vary by 2x under load)")
    p.add_argument("--svc-tol", type=float, default=1e-3,
                   help="SVC tol (1e-3: scikit-learn's default; DANKClassifier uses 1e-4)")
    p.add_argument("--methods", nargs="+",
                   default=["defaults", "auto", "accelerated", "newton", "paper"],
                   choices=["defaults", "auto", "accelerated", "newton", "paper"],
                   help="'defaults': solve_svm with all defaults (method auto with its own "
                   "SVC fit, PSD test of K included); 'auto': the same with check_psd=False")
    p.add_argument("--no-warm", action="store_true", help="skip the warm-start rows")
    p.add_argument("--max-time", type=float, default=120.0,
                   help="per-solve time guard in seconds (sets max_iter from a pilot); 0 = off")
    p.add_argument("--blas-threads", type=int, default=None,
                   help="limit BLAS threads with threadpoolctl (default: library default)")
    p.add_argument("--json", default=None, help="write all rows and metadata to this file")
    args = p.parse_args(argv)
    # a run takes minutes: refuse what would fail at its end, before it starts
    for name in ("sizes", "repeat", "solve_repeat"):
        v = getattr(args, name)
        if min(v if isinstance(v, list) else [v]) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1, got {v}")
    positive = {"C": args.C, "sigma": [args.sigma], "tol": [args.tol], "svc_tol": [args.svc_tol]}
    for name, v in positive.items():  # (NaN fails both comparisons: refused too)
        if not all(x > 0 for x in v):
            p.error(f"--{name.replace('_', '-')} must be positive, got {v if len(v) > 1 else v[0]}")
    for name in ("noise", "tau", "max_time"):
        v = getattr(args, name)
        if not v >= 0:
            p.error(f"--{name.replace('_', '-')} must be >= 0, got {v}")
    if args.blas_threads is not None and args.blas_threads < 1:
        p.error(f"--blas-threads must be at least 1, got {args.blas_threads}")
    p.output("--json", args.json)
    return args


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def make_data(n, noise, seed):
    X, y = make_moons(n_samples=n, noise=noise, random_state=seed)
    lo, hi = X.min(axis=0), X.max(axis=0)
    X = (X - lo) / (hi - lo)  # min-max to [0, 1]^2
    return X, np.where(y == 1, 1.0, -1.0)


def fit_svc(K, y, C, repeat, svc_tol):
    times, svc = [], None
    for _ in range(max(1, repeat)):
        t0 = time.perf_counter()
        svc = SVC(kernel="precomputed", C=C, tol=svc_tol).fit(K, y)
        times.append(time.perf_counter() - t0)
    a = np.zeros(K.shape[0])
    a[svc.support_] = np.abs(svc.dual_coef_.ravel())
    return statistics.median(times), times, a, svc


def run_solve(K, y, C, eta, tau, tol, method, alpha0, max_iter):
    """One solve, wall-clock timed around the public call (K is PSD by construction)."""
    if method in OWN_START:  # everything included: the SVC fit of the warm start (and PSD test)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dank_fast.ConvergenceWarning)
            t0 = time.perf_counter()
            if method == "defaults":
                res = solve_svm(K, y, C=C, eta=eta, tau=tau)
            else:
                res = solve_svm(K, y, C=C, eta=eta, tau=tau, tol=tol, check_psd=False)
            wall = time.perf_counter() - t0
        return res, wall
    opts = {}
    if method == "newton":
        # the limit bounds both newton's own iterations (default 100) and its fallback
        opts["fallback_iter"] = max_iter
        if max_iter < DEFAULT_MAX_ITER["newton"]:
            opts["max_iter"] = min(NEWTON_MAX_ITER, max_iter)
    else:
        opts["max_iter"] = max_iter
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dank_fast.ConvergenceWarning)
        t0 = time.perf_counter()
        res = solve_svm(K, y, C=C, eta=eta, tau=tau, method=method, tol=tol,
                        alpha0=alpha0, check_psd=False, **opts)
        wall = time.perf_counter() - t0
    return res, wall


def guard_cap(K, y, C, eta, tau, tol, method, alpha0, max_time):
    """Iteration limit from a short pilot solve (seconds per iteration), or the default."""
    default = DEFAULT_MAX_ITER[method]
    if not max_time or max_time <= 0 or method in OWN_START:
        return default, None
    pilot_method = "paper" if method == "paper" else "accelerated"  # newton's fallback
    # two pilots; the difference cancels the fixed costs (set-up, final certificate)
    r1, w1 = run_solve(K, y, C, eta, tau, tol, pilot_method, alpha0, PILOT_ITER)
    r2, w2 = run_solve(K, y, C, eta, tau, tol, pilot_method, alpha0, 3 * PILOT_ITER)
    if r2.n_iter > r1.n_iter and w2 > w1:
        per_iter = (w2 - w1) / (r2.n_iter - r1.n_iter)
    else:  # converged within the pilot: it is cheap
        per_iter = w2 / max(r2.n_iter, 1)
    cap = max(PILOT_ITER, int(max_time / per_iter))
    return min(default, cap), per_iter


def code_fingerprint():
    """git HEAD of the checkout, the dank_fast files that differ from it, and a hash of the
    dank_fast sources as imported (the package may be edited while a benchmark runs)."""
    import hashlib
    import subprocess

    pkg = os.path.dirname(dank_fast.__file__)
    h = hashlib.sha256()
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            with open(os.path.join(pkg, name), "rb") as f:
                h.update(name.encode() + b"\0" + f.read())
    out = {"dank_fast_sha256": h.hexdigest()[:12], "git_head": "?", "dirty": []}
    try:
        root = os.path.dirname(pkg)
        out["git_head"] = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                                         capture_output=True, text=True).stdout.strip() or "?"
        st = subprocess.run(["git", "-C", root, "status", "--porcelain", "--", "dank_fast"],
                            capture_output=True, text=True).stdout
        out["dirty"] = [line[3:] for line in st.splitlines()]
    except OSError:
        pass
    return out


def blas_info():
    if threadpoolctl is None:
        return "threadpoolctl not installed"
    info = threadpoolctl.threadpool_info()
    return "; ".join(f"{d.get('internal_api')} {d.get('version')} threads={d.get('num_threads')}"
                     for d in info) or "no BLAS found by threadpoolctl"


def fmt_row(r):
    ratio = f"{r['ratio_to_SVC']:.1f}" if r["ratio_to_SVC"] is not None else "-"
    rule = ""
    if r["method"] == "paper":
        rule = "yes" if r["rule_fired"] else "no"
    at = f"{r['rel_gap_at_rule']:.2e}" if r.get("rel_gap_at_rule") is not None else "-"
    if r["method"] != "paper":
        at = ""
    paired = f"{r['ratio_paired']:.1f}" if r.get("ratio_paired") is not None else "-"
    return (f"{r['n']:>5} {r['C']:>5g} {r['method']:<12} {r['start']:<5} {r['time_s']:>9.3f} "
            f"{ratio:>10} {paired:>7} {r['n_iter']:>6} {r['status']:<9} {r['rel_gap']:>9.2e} "
            f"{rule:<5} {at:>9}  {r['note']}")


HEADER = (f"{'n':>5} {'C':>5} {'method':<12} {'start':<5} {'time_s':>9} {'ratio_SVC':>10} "
          f"{'paired':>7} {'n_iter':>6} {'status':<9} {'rel_gap':>9} {'rule':<5} {'gap@rule':>9}"
          "  note")


def main(argv=None):
    args = parse_args(argv)
    limiter = None
    if args.blas_threads is not None:
        if threadpoolctl is None:
            sys.exit("--blas-threads needs threadpoolctl")
        limiter = threadpoolctl.threadpool_limits(limits=args.blas_threads, user_api="blas")

    meta = {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": f"{platform.node()} {platform.machine()} {platform.processor() or ''}".strip(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "sklearn": __import__("sklearn").__version__,
        "scipy": __import__("scipy").__version__,
        "dank_fast": getattr(dank_fast, "__version__", "?"),
        "blas": blas_info(),
        "blas_threads_arg": args.blas_threads,
        "code": code_fingerprint(),
        "loadavg_start": os.getloadavg(),
        "args": vars(args),
    }
    print(f"# DANK-SVM timing benchmark  {meta['date']}")
    print(f"# machine: {meta['machine']}, {meta['cpu_count']} cores; python {meta['python']}, "
          f"numpy {meta['numpy']}, scipy {meta['scipy']}, scikit-learn {meta['sklearn']}")
    print(f"# BLAS: {meta['blas']}")
    code = meta["code"]
    print(f"# code: git {code['git_head']}, dank_fast sources sha256 {code['dank_fast_sha256']}"
          + (f" (uncommitted changes in {len(code['dirty'])} dank_fast files)"
             if code["dirty"] else ""))
    print("# load average (1, 5, 15 min) at start: "
          + ", ".join(f"{v:.2f}" for v in meta["loadavg_start"]))
    print(f"# data: make_moons(n, noise={args.noise}, random_state={args.seed}), min-max to "
          f"[0,1]^2; Gaussian K, sigma={args.sigma}; tau={args.tau}; eta=||a_SVM||^2; "
          f"tol={args.tol:g}")
    print(f"# ratio_SVC = time_s / SVC fit time (median of {args.repeat}, "
          f"SVC tol={args.svc_tol:g}); the SVC fit that gives eta and a_SVM "
          "is not included in time_s, except in the rows 'defaults' and 'auto' (start 'own'), "
          "which fit their own SVC warm start ('defaults' also tests K for PSD)")
    print(f"# guard: --max-time {args.max_time:g} s per solve (0 = off)", flush=True)

    rows, per_n = [], []
    for n in args.sizes:
        X, y = make_data(n, args.noise, args.seed)
        t0 = time.perf_counter()
        K = compute_kernel(X, sigma=args.sigma)
        t_kernel = time.perf_counter() - t0
        for C in args.C:
            t_svc, svc_times, a_svm, svc = fit_svc(K, y, C, args.repeat, args.svc_tol)
            eta = float(a_svm @ a_svm)
            info = {"n": n, "C": C, "kernel_time_s": t_kernel, "svc_time_s": t_svc,
                    "svc_times_s": svc_times, "eta": eta, "n_SV": int(svc.support_.size),
                    "loadavg": os.getloadavg()}
            per_n.append(info)
            log(f"[n={n} C={C:g}] K {t_kernel:.3f}s, SVC {t_svc * 1e3:.2f} ms, eta {eta:.6g}, "
                f"{svc.support_.size} SV, load {info['loadavg'][0]:.2f}")
            for method in args.methods:
                starts = ["own"] if method in OWN_START else ["cold"]
                if method in WARM_METHODS and not args.no_warm:
                    starts.append("warm")
                for start in starts:
                    alpha0 = a_svm if start == "warm" else None
                    cap, per_iter = guard_cap(K, y, C, eta, args.tau, args.tol, method,
                                              alpha0, args.max_time)
                    log(f"  {method} {start}: max_iter {cap}"
                        + (f" (pilot {per_iter * 1e3:.1f} ms/iter)" if per_iter else "") + " ...")
                    walls, paired = [], []
                    for _ in range(max(1, args.solve_repeat)):
                        # one SVC fit right before each solve: on a VM whose speed drifts by
                        # tens of percent over minutes, the ratio of adjacent runs is stable
                        # where the ratio of two medians taken minutes apart is not
                        svc_now = fit_svc(K, y, C, 1, args.svc_tol)[0]
                        res, wall = run_solve(K, y, C, eta, args.tau, args.tol, method, alpha0,
                                              cap)
                        walls.append(wall)
                        paired.append(wall / svc_now)
                    wall = statistics.median(walls)
                    notes = []
                    guarded = cap < DEFAULT_MAX_ITER[method]
                    if method in ("newton", "auto", "defaults"):
                        fb = bool(res.extra.get("fallback"))
                        n_newton = int(res.extra.get("newton_iter", 0))
                        notes.append(f"newton_iter={n_newton}" + (", fallback" if fb else ""))
                        hit = guarded and (
                            (fb and res.n_iter - n_newton >= cap)
                            or (n_newton >= min(NEWTON_MAX_ITER, cap)
                                and res.status != "converged"))
                    else:
                        hit = guarded and res.status == "max_iter" and res.n_iter >= cap
                    if hit:
                        notes.append(f"guard: max_iter={cap}")
                    elif guarded:
                        notes.append(f"(cap {cap} not reached)")
                    if method == "paper":
                        notes.append(f"proj_dist={res.projection_distance:.1e}")
                    row = {
                        "n": n, "C": C, "method": method, "start": start,
                        "time_s": wall, "times_s": walls, "solver_time_s": res.time,
                        "ratio_to_SVC": wall / t_svc if t_svc > 0 else None,
                        "ratio_paired": statistics.median(paired), "ratios_paired": paired,
                        "n_iter": int(res.n_iter), "status": res.status,
                        "rel_gap": float(res.rel_gap), "gap": float(res.gap),
                        "lower": float(res.lower), "upper": float(res.upper),
                        "rule_fired": res.status == "stopped" if method == "paper" else None,
                        "rel_gap_at_rule": float(res.rel_gap)
                        if method == "paper" and res.status == "stopped" else None,
                        "max_iter": cap, "guard_hit": bool(hit),
                        "pilot_s_per_iter": per_iter, "svc_time_s": t_svc, "eta": eta,
                        "loadavg": os.getloadavg(), "note": "; ".join(notes),
                    }
                    rows.append(row)
                    log("  " + fmt_row(row))

    meta["loadavg_end"] = os.getloadavg()
    print()
    print("# per (n, C): kernel time, SVC fit time (median), eta, support vectors, load average")
    for info in per_n:
        print(f"#   n={info['n']:>5} C={info['C']:>3g}: K {info['kernel_time_s']:.4f} s, "
              f"SVC {info['svc_time_s'] * 1e3:.2f} ms, eta={info['eta']:.6g}, "
              f"{info['n_SV']} SV, load {info['loadavg'][0]:.2f}")
    print()
    print(HEADER)
    print("-" * len(HEADER))
    for r in rows:
        print(fmt_row(r))
    print()
    n_big = max(args.sizes)
    for C in args.C:
        def ratio(m, C=C):
            r = [x for x in rows if x["n"] == n_big and x["C"] == C and x["method"] == m
                 and x["start"] == "warm"]
            if not r:
                return "n/a"
            s = f"{r[0]['ratio_to_SVC']:.1f}x (paired {r[0]['ratio_paired']:.1f}x)"
            return s if r[0]["status"] == "converged" else s + f" ({r[0]['status']})"
        def own(m, C=C):
            r = [x for x in rows if x["n"] == n_big and x["C"] == C and x["method"] == m]
            if not r:
                return "n/a"
            s = f"{r[0]['ratio_to_SVC']:.1f}x (paired {r[0]['ratio_paired']:.1f}x)"
            return s if r[0]["status"] == "converged" else s + f" ({r[0]['status']})"
        print(f"n={n_big} C={C:g}: defaults / SVC = {own('defaults')} (all inclusive); auto "
              f"without the PSD test / SVC = {own('auto')}; newton (warm) / SVC = "
              f"{ratio('newton')}; accelerated (warm) / SVC = {ratio('accelerated')}; "
              "target 10x")
    print("# load average at end: " + ", ".join(f"{v:.2f}" for v in meta["loadavg_end"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "per_n_C": per_n, "rows": rows}, f, indent=1, default=str)
    if limiter is not None:
        limiter.restore_original_limits()


if __name__ == "__main__":
    main()
