#!/usr/bin/env python
"""Timing benchmark: ``dank_fast.solve_svr`` against scikit-learn's SVR on random draws.

Each draw is one regression problem from this distribution; a run draws ``--draws`` of them
from a fresh seed (printed; ``--seed`` repeats a run, draw ``i`` depends only on the seed and
``i``):

* family, uniform over two: ``sinc`` (``X ~ U[-3, 3]^p``, p U{1..5}, ``y = sinc(x_1) cos(x_2)``
  (``sinc(x_1)`` for p = 1) plus Gaussian noise of standard deviation U[0.05, 0.3]) and
  ``friedman1`` (``make_friedman1``, n_features U{5..10}, noise U[0.2, 2.0]);
* ``n`` log-uniform in [200, 2000] (rounded; ``--max-n`` caps it for quick runs); features
  and targets standardised;
* Gaussian kernel ``K = compute_kernel(X, sigma=sigma)``, sigma = the median pairwise distance
  x 10^U[-0.5, 0.3];
* ``C = 10^U[-1, 2]``; ``epsilon = 10^U[-2, -0.5]`` (the targets have unit variance);
  ``eta = ||d_SVR||^2 x 10^U[-2, 0.5]``, ``d_SVR = ah - ac`` the plain SVR's dual
  (``SVR(kernel="precomputed", C=C, epsilon=epsilon)`` on ``K``; ``eta = 1`` where that norm
  is below 1e-12, the estimators' rule); ``tau = 0.01``.

Per draw: SVR's time (``SVR(kernel="precomputed", C=C, epsilon=epsilon).fit(K, y)``, default
tol, best of at least 3) and DANK's (``solve_svr(K, y, C=C, epsilon=epsilon, eta=eta,
tau=0.01)``, all else at its defaults, best of ``--repeat``), timed in alternation; ``--method
newton`` times Newton from zero instead (``method="newton"``, no start); the solve's status,
certified relative gap, Newton steps and accelerated fallback iterations, support ``|S|`` of
``d = ah - ac`` and rank of ``F``; ``T_eigh``, the time of ``scipy.linalg.eigh`` (best of 3) of
the final support's reduced matrix ``M`` (``_support.support_matrix`` of ``d``); the bound
``max(5 SVR, SVR + 3 T_eigh)`` of ``bench_distribution.py`` and the ratios DANK / SVR and DANK /
bound. BLAS threads are pinned to one by default (``--blas-threads``).

Summary: the median and 90th percentile of DANK / SVR, the shares of draws within the bound
and within twice it, the worst draw, the median Newton steps, the draws that handed over to
the accelerated fallback, and whether every solve is certified. Run
``python benchmarks/bench_svr_distribution.py --help``; ``--draws 2 --max-n 100`` takes seconds.
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
from scipy.spatial.distance import pdist
from sklearn.datasets import make_friedman1
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.dirname(HERE)]
from _support import eigh_time, support_matrix  # noqa: E402
from bench_distribution import (  # noqa: E402
    EIGH_REPEAT,
    bound,
    check_seeded,
    draw_head,
    log,
    seeded_main,
    seeded_parser,
    width_and_box,
    write_results,
)

from dank_fast import compute_kernel, solve_svr  # noqa: E402
from dank_fast.decomposed import ETA_FLOOR  # noqa: E402  (below it eta = 1, the estimators')

FAMILIES = ("sinc", "friedman1")
N_RANGE = (200, 2000)
LOG10_EPSILON = (-2.0, -0.5)
ETA_EXP = (-2.0, 0.5)     # eta = ||d_SVR||^2 x 10^U[...]
TAU = 0.01
SVR_ROUNDS = 3            # SVR fits per draw at least (best taken)
DEFAULT_OUT = os.path.join(HERE, "results", "svr_distribution.json")


def parse_args(argv=None):
    p = seeded_parser("bench_svr_distribution.py", __doc__, DEFAULT_OUT, 1,
                      "DANK solves per draw (best taken)")
    p.add_argument("--method", choices=("auto", "newton"), default="auto",
                   help="solve_svr's method: 'auto' (the default call, Newton from the plain "
                   "SVR's dual) or 'newton' (Newton from zero)")
    args = p.parse_args(argv)
    check_seeded(p, args)
    return args


def draw(seed: int, i: int, max_n: int | None = None) -> dict:
    """The parameters of draw ``i`` of a run with ``seed`` (independent of the other draws);
    ``eta`` is ``eta_factor`` times ``||d_SVR||^2``, known once the data are."""
    rng, d = draw_head(seed, i, FAMILIES, N_RANGE, max_n)
    if d["family"] == "sinc":
        d["n_features"] = int(rng.integers(1, 6))
        d["noise"] = float(rng.uniform(0.05, 0.3))
    else:
        d["n_features"] = int(rng.integers(5, 11))
        d["noise"] = float(rng.uniform(0.2, 2.0))
    d.update(width_and_box(rng))
    d["epsilon"] = float(10 ** rng.uniform(*LOG10_EPSILON))
    d["eta_factor"] = float(10 ** rng.uniform(*ETA_EXP))
    d["data_seed"] = int(rng.integers(2**31 - 1))
    return d


def make_data(d: dict):
    """``(X, y)`` of a draw, features and targets standardised."""
    n, seed = d["n"], d["data_seed"]
    if d["family"] == "sinc":
        rng = np.random.default_rng(seed)
        X = rng.uniform(-3.0, 3.0, (n, d["n_features"]))
        y = np.sinc(X[:, 0]) * (np.cos(X[:, 1]) if X.shape[1] > 1 else 1.0)
        y = y + d["noise"] * rng.standard_normal(n)
    else:
        X, y = make_friedman1(n, n_features=d["n_features"], noise=d["noise"],
                              random_state=seed)
    return StandardScaler().fit_transform(X), (y - y.mean()) / y.std()


def fit_svr(K, y, C: float, epsilon: float):
    """``(seconds, d)``: one plain SVR fit on the precomputed ``K`` and its ``d = ah - ac``."""
    t0 = time.perf_counter()
    svr = SVR(kernel="precomputed", C=C, epsilon=epsilon).fit(K, y)
    seconds = time.perf_counter() - t0
    d = np.zeros(y.size)
    d[svr.support_] = svr.dual_coef_.ravel()
    return seconds, d


def run_draw(d: dict, repeat: int, method: str) -> dict:
    """One draw measured: the record the JSON keeps."""
    X, y = make_data(d)
    sigma = float(np.median(pdist(X))) * d["sigma_factor"]
    K = compute_kernel(X, sigma=sigma)
    C, eps = d["C"], d["epsilon"]
    svr_times, dank_times, res, eta = [], [], None, None
    for r in range(max(SVR_ROUNDS, repeat)):  # alternate: one SVR fit, then one solve
        t_svr, d_svr = fit_svr(K, y, C, eps)
        svr_times.append(t_svr)
        if eta is None:
            d_norm2 = float(d_svr @ d_svr)
            eta = d_norm2 * d["eta_factor"] if d_norm2 >= ETA_FLOOR else 1.0
        if r < repeat:
            t0 = time.perf_counter()
            res = solve_svr(K, y, C=C, epsilon=eps, eta=eta, tau=TAU,
                            **({} if method == "auto" else {"method": method}))
            dank_times.append(time.perf_counter() - t0)
    svr_s, dank_s = min(svr_times), min(dank_times)
    S = np.flatnonzero(res.alpha)
    M = support_matrix(K[np.ix_(S, S)], res.alpha[S], y.size, eta)
    eigh_s = eigh_time(M, EIGH_REPEAT)
    b = bound(svr_s, eigh_s)
    factors = res.F_factors
    return dict(d, method=method, sigma=sigma, eta=eta, d_svr_norm2=d_norm2, tau=TAU,
                svr_s=svr_s, svr_times_s=svr_times, dank_s=dank_s, dank_times_s=dank_times,
                status=res.status, certified=res.status == "converged",
                rel_gap=float(res.rel_gap), support=int(S.size),
                rank_F=None if factors is None else int(factors[0].size),
                newton_iter=int(res.extra.get("newton_iter", 0)),
                accelerated_iter=int(res.extra.get("accelerated_iter", 0)),
                eigh_s=eigh_s, eigh_size=int(M.shape[0]), bound_s=b,
                ratio_svr=dank_s / svr_s, ratio_bound=dank_s / b,
                loadavg=list(os.getloadavg()))


def summarise(records: list[dict]) -> dict:
    ratios = np.array([r["ratio_svr"] for r in records])
    to_bound = np.array([r["ratio_bound"] for r in records])
    worst = max(records, key=lambda r: r["ratio_bound"])
    keep = ("index", "family", "n", "n_features", "noise", "sigma_factor", "sigma", "C",
            "epsilon", "eta_factor", "eta", "svr_s", "dank_s", "eigh_s", "bound_s",
            "ratio_svr", "ratio_bound", "status", "rel_gap", "support", "rank_F",
            "newton_iter", "accelerated_iter")
    return {"draws": len(records),
            "ratio_svr_median": float(np.median(ratios)),
            "ratio_svr_p90": float(np.percentile(ratios, 90)),
            "within_bound": float(np.mean(to_bound <= 1.0)),
            "within_2x_bound": float(np.mean(to_bound <= 2.0)),
            "newton_iter_median": float(np.median([r["newton_iter"] for r in records])),
            "fallback_draws": sum(r["accelerated_iter"] > 0 for r in records),
            "all_certified": all(r["certified"] for r in records),
            "uncertified": sum(not r["certified"] for r in records),
            "worst": {k: worst[k] for k in keep if k in worst}}


def _params(r: dict) -> str:
    return (f"{r['family']}(p={r['n_features']}, noise={r['noise']:.3g}) n={r['n']} "
            f"sigma={r['sigma']:.3g} (x{r['sigma_factor']:.3g}) C={r['C']:.3g} "
            f"epsilon={r['epsilon']:.3g} eta={r['eta']:.3g} (x{r['eta_factor']:.3g})")


def summary_lines(s: dict) -> list[str]:
    w = s["worst"]
    return [f"# {s['draws']} draws: DANK/SVR median {s['ratio_svr_median']:.1f}x, 90th "
            f"percentile {s['ratio_svr_p90']:.1f}x; within the bound "
            f"{100 * s['within_bound']:.0f}%, within twice the bound "
            f"{100 * s['within_2x_bound']:.0f}%; "
            + ("all certified" if s["all_certified"] else f"{s['uncertified']} NOT certified"),
            f"# median {s['newton_iter_median']:.0f} Newton steps; {s['fallback_draws']} draws "
            "handed over to the accelerated fallback",
            f"# worst draw #{w['index']} (DANK/bound {w['ratio_bound']:.2f}, DANK/SVR "
            f"{w['ratio_svr']:.1f}x, {w['newton_iter']} Newton steps, {w['accelerated_iter']} "
            f"accelerated iterations): {_params(w)}"]


def _line(r: dict) -> str:
    return (f"[{r['index']:>2}] {_params(r)}: SVR {1e3 * r['svr_s']:.1f} ms, DANK "
            f"{1e3 * r['dank_s']:.0f} ms ({r['ratio_svr']:.1f}x SVR, {r['ratio_bound']:.2f}x "
            f"bound), eigh {1e3 * r['eigh_s']:.1f} ms at {r['eigh_size']}, |S| {r['support']}, "
            f"rank {r['rank_F']}, {r['newton_iter']} Newton steps + {r['accelerated_iter']} "
            f"accelerated, {r['status']} {r['rel_gap']:.1e}")


def _run(args, seed: int, meta: dict) -> int:
    run_draw(draw(0, 0, max_n=40), 1, args.method)  # warm-up: first calls' imports untimed
    records = []
    for i in range(args.draws):
        rec = run_draw(draw(seed, i, args.max_n), args.repeat, args.method)
        records.append(rec)
        log(_line(rec))
    summary = summarise(records)
    for line in summary_lines(summary):
        print(line)
    write_results(args.out, meta, summary, records)
    return 0


def main(argv=None):
    return seeded_main("bench_svr_distribution.py", parse_args, _run, argv)


if __name__ == "__main__":
    sys.exit(main())
