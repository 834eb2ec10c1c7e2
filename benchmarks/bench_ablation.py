#!/usr/bin/env python
"""Ablation benchmark: what each route of the solver core saves, on random draws.

The solver core keeps a route beside the Cholesky factor and the dense and block Krylov
evaluations only where the data need it (docs/ARCHITECTURE.md, "What each route is for"). This
script measures that need: each draw of ``bench_distribution.py``'s distribution (the same
draws for the same seed; ``--max-n`` caps ``n`` and ``--tau`` replaces ``tau = 0.01``) is
solved by the README's call ``solve_svm(K, y, C=C, eta=eta, tau=tau)`` with the whole core and
with one route switched off at a time, in alternation (one solve of each variant per round,
best of ``--repeat`` rounds, CPU time of this process: the solves run on one BLAS thread),
after one solve that no draw pays for (imports done on first use).

The routes, each switched off by replacing one private function of ``dank_fast`` for the
duration of its solves (``tests/test_bench_ablation.py`` checks that every target exists, so
that a renamed function fails the tests instead of measuring nothing):

* ``woodbury``: ``_factor.lowrank_solve`` returns None: every Newton system by the Cholesky
  factor;
* ``exact_hessian``: ``_curvature.exact_curvature_pays`` returns False: the ``tau = 0``
  curvature model on every step;
* ``tail_test``: ``_eigen._tail_below`` returns False: the iterative route bounds the tail by
  its norms alone (its factorisation's flops are still charged to the route's budget);
* ``ray_start``: ``_newton._ray_start`` returns its start: Newton from the SVM's dual itself;
* ``relaxed_start``: ``_newton._relaxed_start`` returns its start: no steps on the relaxed
  problem ``tau = 0``;
* ``predictor``: ``_newton._tau_predictor`` returns the relaxed solution: the true problem's
  Newton steps start there, not from the predictor's step;
* ``exact_rate``: ``_newton._exact_pays`` returns False: Newton stays on the iterative
  route's evaluations and the curvature model whatever rate they converge at (the dense
  evaluations still follow where no step is possible);
* ``secant``: ``_newton._next_scale`` returns 1: every arc of trial points starts at ``t = 1``;
* ``model_limit``: ``_newton.model_limit`` returns no limit: a Newton model takes every
  coordinate the gradient frees at once.

With ``--families`` the problems are instead the dense rows of ``bench_families.py`` (its
families, sizes, ``C`` and ``eta`` rules; ``--max-n`` drops the larger rows; ``--draws`` is
not used and ``--seed`` is recorded but draws nothing): the named rows whose slowdown without a
route is the second rule of docs/ARCHITECTURE.md.

Per route the summary gives the time without it over the time with it: the geometric mean
over the draws (the route's saving on the distribution is ``1 - 1 / mean``), the median, the
90th percentile and the worst draw, the median Newton steps with and without it, the medians
of DANK / SVC (SVC: ``SVC(kernel="precomputed", C=C).fit(K, y)``, best of 3 CPU times), and
whether every solve was certified. Run ``python benchmarks/bench_ablation.py --help``; ``--draws 2
--max-n 200`` takes seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import time
import types
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# this checkout's packages (its git state is the one recorded), then the sibling scripts
sys.path[:0] = [HERE, os.path.dirname(HERE)]
import bench_families  # noqa: E402
from bench_distribution import (  # noqa: E402
    TAU,
    check_seeded,
    draw,
    kernel,
    make_data,
    seeded_main,
    seeded_parser,
    write_results,
)
from bench_families import warm_up  # noqa: E402
from bench_svm import fit_svc  # noqa: E402

import dank_fast  # noqa: E402
from dank_fast import solve_svm  # noqa: E402

#: route -> (module of dank_fast, function replaced, its replacement): module docstring
ROUTES = {
    "woodbury": ("dank_fast._factor", "lowrank_solve", lambda *a, **k: None),
    "exact_hessian": ("dank_fast._curvature", "exact_curvature_pays", lambda *a, **k: False),
    "tail_test": ("dank_fast._eigen", "_tail_below", lambda *a, **k: False),
    "ray_start": ("dank_fast._newton", "_ray_start", lambda problem, z: z),
    "relaxed_start": ("dank_fast._newton", "_relaxed_start",
                      lambda problem, z, tol, steps: (z, 0)),
    "predictor": ("dank_fast._newton", "_tau_predictor", lambda problem, relaxed, ev: ev.z),
    "exact_rate": ("dank_fast._newton", "_exact_pays", lambda *a, **k: False),
    "secant": ("dank_fast._newton", "_next_scale", lambda *a, **k: 1.0),
    "model_limit": ("dank_fast._newton", "model_limit", lambda s: sys.maxsize),
}
SVC_TOL = 1e-3     # SVC's default
SVC_ROUNDS = 3     # SVC fits per draw (best taken)
DEFAULT_OUT = os.path.join(HERE, "results", "ablation.json")


def parse_args(argv=None):
    p = seeded_parser("bench_ablation.py", __doc__, DEFAULT_OUT, 2,
                      "rounds of solves per draw (best taken)")
    p.add_argument("--routes", nargs="+", choices=list(ROUTES), default=argparse.SUPPRESS,
                   metavar="ROUTE",
                   help=f"routes switched off, one at a time, of: {', '.join(ROUTES)} "
                   "(default: all)")
    p.add_argument("--tau", type=float, default=TAU, help="tau of every solve")
    p.add_argument("--families", action="store_true",
                   help="solve bench_families.py's dense rows instead of random draws "
                   "(--max-n drops the larger rows; --draws is not used)")
    args = p.parse_args(argv)
    check_seeded(p, args)
    if not (np.isfinite(args.tau) and args.tau >= 0.0):
        p.error(f"--tau must be finite and >= 0, got {args.tau}")
    args.routes = list(dict.fromkeys(getattr(args, "routes", None) or ROUTES))
    return args


@contextlib.contextmanager
def switched_off(route: str | None):
    """The solver core with ``route`` switched off (:data:`ROUTES`); None: the whole core."""
    if route is None:
        yield
        return
    module_name, name, replacement = ROUTES[route]
    module = importlib.import_module(module_name)
    original = getattr(module, name)  # AttributeError: the route's function was renamed
    setattr(module, name, replacement)
    try:
        yield
    finally:
        setattr(module, name, original)


def _solve(K, y, C, eta, tau, route):
    """One README call with ``route`` switched off: ``(cpu_s, result)``."""
    with switched_off(route), warnings.catch_warnings():
        warnings.simplefilter("ignore", dank_fast.ConvergenceWarning)
        t0 = time.process_time()
        res = solve_svm(K, y, C=C, eta=eta, tau=tau)
        return time.process_time() - t0, res


def run_draw(d: dict, routes: list[str], tau: float, repeat: int) -> dict:
    """One draw: SVC's time and every variant's best time, status and Newton steps."""
    X, y = make_data(d)
    K, sigma = kernel(X, d["sigma_factor"])
    svc_s, a_svc = _svc(K, y, d["C"])
    eta = float(a_svc @ a_svc) * d["eta_factor"]
    return dict(d, sigma=sigma, **_variants(K, y, d["C"], eta, routes, tau, repeat),
                svc_s=svc_s)


def family_rows(max_n: int | None):
    """The dense rows of ``bench_families.py`` (its defaults) with ``n <= max_n``, numbered in
    the table's order: ``(K, y, record)``, the record without times."""
    args = bench_families.parse_args([])
    if max_n is not None:
        args.sizes = [n for n in args.sizes if n <= max_n]
        args.small_eta_sizes = [n for n in args.small_eta_sizes if n <= max_n]
    rows = (p for p in bench_families.dense_problems(args)
            if max_n is None or p.y.size <= max_n)  # (the UCI sets have their own sizes)
    for i, p in enumerate(rows):
        yield p.K, p.y, dict(index=i, family=p.family, n=int(p.y.size), C=p.C, sigma=p.sigma,
                             eta=p.eta, eta_rule=bench_families.eta_label(p.rule, args))


def run_family_row(K, y, rec: dict, routes: list[str], tau: float, repeat: int) -> dict:
    """One family row: as :func:`run_draw`, with the row's own ``eta``."""
    svc_s, _ = _svc(K, y, rec["C"])
    return dict(rec, **_variants(K, y, rec["C"], rec["eta"], routes, tau, repeat), svc_s=svc_s)


def _svc(K, y, C) -> tuple[float, np.ndarray]:
    """SVC's best CPU time (as the solves') of :data:`SVC_ROUNDS` fits, and its dual."""
    svc_s = np.inf
    for _ in range(SVC_ROUNDS):
        t0 = time.process_time()
        a_svc = fit_svc(K, y, C, 1, SVC_TOL)[2]
        svc_s = min(svc_s, time.process_time() - t0)
    return svc_s, a_svc


def _variants(K, y, C, eta, routes: list[str], tau: float, repeat: int) -> dict:
    """The whole core and each route switched off, in alternation, best of ``repeat``."""
    variants = [None, *routes]
    best = dict.fromkeys(variants, np.inf)
    last = {}
    for _ in range(repeat):
        for v in variants:
            t, res = _solve(K, y, C, eta, tau, v)
            best[v], last[v] = min(best[v], t), res

    def record(v):
        res = last[v]
        return {"time_s": best[v], "status": res.status, "rel_gap": float(res.rel_gap),
                "newton_iter": int(res.extra.get("newton_iter", 0))}

    return dict(eta=eta, tau=tau, full=record(None), without={r: record(r) for r in routes})


def summarise(records: list[dict], routes: list[str]) -> dict:
    """Per route: the ratios of its draws' times without it over with it (module docstring)."""
    full = np.array([r["full"]["time_s"] for r in records])
    svc = np.array([r["svc_s"] for r in records])
    out = {"draws": len(records),
           "full": {"ratio_svc_median": float(np.median(full / svc)),
                    "newton_iter_median": float(np.median(
                        [r["full"]["newton_iter"] for r in records])),
                    "all_certified": all(r["full"]["status"] == "converged" for r in records)}}
    for route in routes:
        t = np.array([r["without"][route]["time_s"] for r in records])
        ratio = t / full
        worst = int(np.argmax(ratio))
        out[route] = {
            "ratio_geomean": float(np.exp(np.mean(np.log(ratio)))),
            "ratio_median": float(np.median(ratio)),
            "ratio_p90": float(np.percentile(ratio, 90)),
            "ratio_worst": float(ratio[worst]), "worst_index": records[worst]["index"],
            "slower_25pct": float(np.mean(ratio > 1.25)),
            "ratio_svc_median": float(np.median(t / svc)),
            "newton_iter_median": float(np.median(
                [r["without"][route]["newton_iter"] for r in records])),
            "all_certified": all(r["without"][route]["status"] == "converged"
                                 for r in records),
        }
    return out


def summary_lines(s: dict, routes: list[str]) -> list[str]:
    f = s["full"]
    lines = [f"# whole core: median DANK/SVC {f['ratio_svc_median']:.1f}x, median Newton steps "
             f"{f['newton_iter_median']:g}, all certified: {f['all_certified']}",
             "| switched off | time without / with: geo. mean | median | p90 | worst (draw) "
             "| draws > 1.25x | median DANK/SVC | median steps | all certified |",
             "|---|---|---|---|---|---|---|---|---|"]
    for route in routes:
        r = s[route]
        lines.append(
            f"| {route} | {r['ratio_geomean']:.3f} | {r['ratio_median']:.3f} | "
            f"{r['ratio_p90']:.2f} | {r['ratio_worst']:.2f} ({r['worst_index']}) | "
            f"{100 * r['slower_25pct']:.0f}% | {r['ratio_svc_median']:.1f}x | "
            f"{r['newton_iter_median']:g} | {r['all_certified']} |")
    return lines


def main(argv=None):
    return seeded_main("bench_ablation.py", parse_args, _run, argv)


def _run(args, seed: int, meta: dict) -> int:
    warm_up(types.SimpleNamespace(tau=args.tau))  # no draw pays a process's first solve
    records = []
    if args.families:
        cases = (run_family_row(K, y, rec, args.routes, args.tau, args.repeat)
                 for K, y, rec in family_rows(args.max_n))
    else:
        cases = (run_draw(draw(seed, i, args.max_n), args.routes, args.tau, args.repeat)
                 for i in range(args.draws))
    for rec in cases:
        records.append(rec)
        i = rec["index"]
        ratios = " ".join(f"{r} {rec['without'][r]['time_s'] / rec['full']['time_s']:.2f}"
                          for r in args.routes)
        print(f"{'row' if args.families else 'draw'} {i:3d} {rec['family']:<14} "
              f"n={rec['n']:5d} C={rec['C']:8.3g}  "
              f"whole {1e3 * rec['full']['time_s']:7.1f} ms ({rec['full']['newton_iter']} "
              f"steps)  without / with: {ratios}", file=sys.stderr, flush=True)
    if not records:  # (--families with a --max-n below every row)
        print(f"bench_ablation.py: error: no family row has n <= {args.max_n}", file=sys.stderr)
        return 2
    summary = summarise(records, args.routes)
    for line in summary_lines(summary, args.routes):
        print(line)
    write_results(args.out, meta, summary, records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
