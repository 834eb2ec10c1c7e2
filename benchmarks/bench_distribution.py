#!/usr/bin/env python
"""Timing benchmark: ``dank_fast.solve_svm`` against SVC on random draws from a stated distribution.

Each draw is one binary problem from this distribution; a run draws
``--draws`` of them from a fresh seed (printed; ``--seed`` repeats a run, draw ``i`` depends only
on the seed and ``i``):

* family, uniform over four: ``make_moons`` (noise U[0.1, 0.4]); ``make_circles`` (noise
  U[0.05, 0.2], factor U[0.3, 0.8]); overlapping blobs (``X ~ N(0, I_2)``, ``y = sign(x_1 +
  s e)``, ``e ~ N(0, 1)``, s U[0.2, 1.0]); ``make_classification`` (n_features U{5..30},
  n_informative U{2..10} capped at n_features, n_redundant ``min(2, n_features -
  n_informative)`` (scikit-learn's default 2 where it fits), flip_y U[0, 0.2], class_sep
  U[0.5, 1.5]);
* ``n`` log-uniform in [500, 4000] (rounded; ``--max-n`` caps it for quick runs); features
  standardised (``StandardScaler``); labels in {-1, +1};
* Gaussian kernel ``K = compute_kernel(X, sigma=sigma)``, sigma = the median pairwise distance
  x 10^U[-0.5, 0.3];
* ``C = 10^U[-1, 2]``; ``eta = ||a_SVC||^2 x 10^U[-2, 0.5]``, ``a_SVC`` the plain SVM's dual
  solution (``SVC(kernel="precomputed", C=C)`` on ``K``: ``|dual_coef_|`` on ``support_``);
  ``tau = 0.01``.

Per draw: SVC's time (``SVC(kernel="precomputed", C=C).fit(K, y)``, default tol, best of at
least 3) and the relative gap its dual reaches as a plain SVM (:func:`svc_gap`), and DANK's
time (the README's call ``solve_svm(K, y, C=C, eta=eta, tau=0.01)``, all else at its
defaults, so the check of ``K`` and the solver's own SVC start are included; the matrix of
``compute_kernel`` carries the proof that it is PSD and skips the ``O(n^3)`` test,
docs/validity.md, rule 6; best of ``--repeat``), timed in alternation (each round one SVC fit,
then one solve); the solve's status, certified relative gap, support ``|S|`` of ``alpha`` and
rank of ``F``; ``T_eigh``, the time of ``scipy.linalg.eigh`` (best of 3) of the final support's
reduced matrix ``M = v v' + diag(d_S) K_SS diag(d_S) / (4 eta)`` (``d = alpha y``, ``v = [1_S;
sqrt(n - |S|)]``, size ``|S| + 1``; docs/MATH.md's support reduction: one exact evaluation of
``F(a)`` at the solution); the bound ``max(5 SVC, SVC + 3 T_eigh)`` and the ratios DANK / SVC
and DANK / bound, and the same with the check of a writable copy of ``K`` added (what an array
of one's own pays: the PSD test); the time of the cost model's unavoidable work for the solve
(:func:`model_time`: the SVM start, then one evaluation of ``F(a)`` per Newton step and one
more, and one Newton system per step, each timed as its BLAS and LAPACK calls alone at the
solution's sizes) and DANK / that time. ``--profile``: every draw above its bound gets one
more solve under cProfile (the parts of ``benchmarks/_profile.py`` and the top functions by
cumulative and by own time).

BLAS threads are pinned to one by default (``--blas-threads``, with threadpoolctl as in
``bench_svm.py``): on a shared machine two OpenBLAS threads make a solve's time vary
several-fold (benchmarks/README.md, "Threads"); libsvm uses none.

Summary: the median and 90th percentile of DANK / SVC, the shares of draws within the bound and
within twice the bound, the median of the cost model's time / SVC and its share within the
bound, the median of DANK / the cost model's time, the medians of SVC's relative gap (its
dual as a plain SVM, the certificate's formula at ``F = 11'``: the accuracy DANK is timed
against) and of DANK's certified one, whether every solve is certified (``status ==
"converged"``), and the worst draw by DANK / bound with its parameters. Run
``python benchmarks/bench_distribution.py --help``; ``--draws 2 --max-n 300`` takes seconds.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import secrets
import sys
import time
import types

import numpy as np
import scipy
import scipy.linalg
from scipy.spatial.distance import pdist
from sklearn.datasets import make_circles, make_classification, make_moons
from sklearn.preprocessing import StandardScaler

HERE = os.path.dirname(os.path.abspath(__file__))
# this checkout's packages (its git state is the one recorded), then the sibling scripts
sys.path[:0] = [HERE, os.path.dirname(HERE)]
from _args import OneLineParser  # noqa: E402
from _profile import profiled  # noqa: E402
from _support import best_time, eigh_time, support_matrix  # noqa: E402
from bench_families import _profile_line, warm_up  # noqa: E402
from bench_svm import blas_info, code_fingerprint, fit_svc, run_solve  # noqa: E402

import dank_fast  # noqa: E402
from dank_fast import compute_kernel  # noqa: E402
from dank_fast._kernel_validation import validate_kernel_matrix  # noqa: E402
from dank_ref.certificate import svm_primal_gap  # noqa: E402

try:
    import threadpoolctl
except ImportError:  # optional: only needed for --blas-threads
    threadpoolctl = None

FAMILIES = ("moons", "circles", "blobs", "classification")
N_RANGE = (500, 4000)
SIGMA_EXP = (-0.5, 0.3)   # sigma = median pairwise distance x 10^U[...]
LOG10_C = (-1.0, 2.0)
ETA_EXP = (-2.0, 0.5)     # eta = ||a_SVC||^2 x 10^U[...]
TAU = 0.01
SVC_TOL = 1e-3            # SVC's default
SVC_ROUNDS = 3            # SVC fits per draw at least (best taken)
EIGH_REPEAT = 3
TOP_K = 15                # functions kept per profile and ordering
DEFAULT_OUT = os.path.join(HERE, "results", "distribution.json")


def seeded_parser(prog: str, doc: str, out: str, repeat: int, repeat_help: str):
    """The arguments every seeded benchmark of this distribution takes: ``--draws``, ``--seed``,
    ``--out``, ``--repeat``, ``--max-n``, ``--blas-threads`` (checked by :func:`check_seeded`)."""
    p = OneLineParser(prog=prog, description=doc.split("\n\n")[0],
                      formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--draws", type=int, default=30, help="problems drawn")
    p.add_argument("--seed", type=int, default=None,
                   help="seed of the draws; without it a fresh one, printed and stored")
    p.add_argument("--out", default=out, help="results JSON")
    p.add_argument("--repeat", type=int, default=repeat, help=repeat_help)
    p.add_argument("--max-n", type=int, default=None,
                   help="cap on the drawn n (quick runs; the draw is otherwise unchanged)")
    p.add_argument("--blas-threads", type=int, default=1,
                   help="BLAS threads, set with threadpoolctl as bench_svm.py does (0: the "
                   "library's default); on a shared machine 2 OpenBLAS threads make a solve's "
                   "time vary several-fold (benchmarks/README.md, Threads)")
    return p


def check_seeded(p, args) -> None:
    """Refuse (exit 2, one line) the values of :func:`seeded_parser`'s arguments that no run
    takes, and an ``--out`` whose directory is missing."""
    for name in ("draws", "repeat"):
        v = getattr(args, name)
        if v < 1:
            p.error(f"--{name} must be at least 1, got {v}")
    if args.blas_threads < 0:
        p.error(f"--blas-threads must be >= 0, got {args.blas_threads}")
    if args.max_n is not None and args.max_n < 20:
        p.error(f"--max-n must be at least 20, got {args.max_n}")
    if args.seed is not None and not 0 <= args.seed < 2**63:
        p.error(f"--seed must be in [0, 2**63), got {args.seed}")
    p.output("--out", args.out)
    if args.blas_threads and threadpoolctl is None:
        p.error("--blas-threads needs threadpoolctl")


def parse_args(argv=None):
    p = seeded_parser("bench_distribution.py", __doc__, DEFAULT_OUT, 1,
                      "DANK solves per draw (best taken)")
    p.add_argument("--profile", action="store_true",
                   help="profile one more solve of every draw above its bound")
    args = p.parse_args(argv)
    check_seeded(p, args)
    return args


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- the draws
def draw(seed: int, i: int, max_n: int | None = None) -> dict:
    """The parameters of draw ``i`` of a run with ``seed`` (independent of the other draws and
    of ``--draws``); ``eta`` is ``eta_factor`` times ``||a_SVC||^2``, known once the data are."""
    rng, d = draw_head(seed, i, FAMILIES, N_RANGE, max_n)
    family = d["family"]
    if family == "moons":
        d["noise"] = float(rng.uniform(0.1, 0.4))
    elif family == "circles":
        d["noise"] = float(rng.uniform(0.05, 0.2))
        d["factor"] = float(rng.uniform(0.3, 0.8))
    elif family == "blobs":
        d["s"] = float(rng.uniform(0.2, 1.0))
    else:
        d["n_features"] = int(rng.integers(5, 31))
        d["n_informative"] = min(int(rng.integers(2, 11)), d["n_features"])
        d["flip_y"] = float(rng.uniform(0.0, 0.2))
        d["class_sep"] = float(rng.uniform(0.5, 1.5))
    d.update(width_and_box(rng))
    d["eta_factor"] = float(10 ** rng.uniform(*ETA_EXP))
    d["data_seed"] = int(rng.integers(2**31 - 1))
    return d


def draw_head(seed: int, i: int, families: tuple, n_range: tuple, max_n: int | None):
    """``(rng, d)``: the generator of draw ``i`` (``[seed, i]``) and the draw's first entries,
    drawn in this order: the family, uniform over ``families``, and ``n_drawn``, log-uniform in
    ``n_range`` (rounded), with ``n`` capped at ``max_n`` (the SVR benchmark draws them
    alike)."""
    rng = np.random.default_rng([seed, i])
    family = families[int(rng.integers(len(families)))]
    n_drawn = int(round(np.exp(rng.uniform(np.log(n_range[0]), np.log(n_range[1])))))
    return rng, {"index": i, "family": family, "n_drawn": n_drawn,
                 "n": min(n_drawn, max_n) if max_n else n_drawn}


def width_and_box(rng) -> dict:
    """The kernel width's factor ``10^U[SIGMA_EXP]`` and ``C = 10^U[LOG10_C]``, drawn in this
    order (the SVR benchmark draws them alike)."""
    return {"sigma_factor": float(10 ** rng.uniform(*SIGMA_EXP)),
            "C": float(10 ** rng.uniform(*LOG10_C))}


def make_data(d: dict):
    """``(X, y)`` of a draw: features standardised, labels in {-1, +1}."""
    n, seed = d["n"], d["data_seed"]
    if d["family"] == "moons":
        X, t = make_moons(n_samples=n, noise=d["noise"], random_state=seed)
    elif d["family"] == "circles":
        X, t = make_circles(n_samples=n, noise=d["noise"], factor=d["factor"],
                            random_state=seed)
    elif d["family"] == "blobs":
        rng = np.random.default_rng(seed)
        X = rng.standard_normal((n, 2))
        t = X[:, 0] + d["s"] * rng.standard_normal(n) > 0
    else:
        nf, ni = d["n_features"], d["n_informative"]
        X, t = make_classification(n, nf, n_informative=ni, n_redundant=min(2, nf - ni),
                                   flip_y=d["flip_y"], class_sep=d["class_sep"],
                                   random_state=seed)
    return StandardScaler().fit_transform(X), np.where(t == 1, 1.0, -1.0)


def kernel(X, sigma_factor: float):
    """``(K, sigma)``: the Gaussian kernel at ``sigma`` = median pairwise distance x factor."""
    sigma = float(np.median(pdist(X))) * sigma_factor
    return compute_kernel(X, sigma=sigma), sigma


# -------------------------------------------------------------------------------- timing
def reduced_matrix(K, y, alpha, eta: float) -> np.ndarray:
    """:func:`_support.support_matrix` of the support of ``alpha`` (``d = alpha y``)."""
    S = np.flatnonzero(alpha > 0)
    return support_matrix(K[np.ix_(S, S)], alpha[S] * y[S], y.size, eta)


def bound(svc_s: float, eigh_s: float) -> float:
    """The time a draw's DANK solve is judged against: ``max(5 SVC, SVC + 3 T_eigh)``."""
    return max(5 * svc_s, svc_s + 3 * eigh_s)


def model_time(K, y, alpha, C, rank: int, eigh_s: float) -> dict:
    """The unavoidable work of docs/ARCHITECTURE.md's cost model for this solve, timed as its
    BLAS and LAPACK calls alone (each best of ``EIGH_REPEAT``) at the solution's sizes: support
    ``S`` (``s`` points), free set ``f`` (``0 < alpha_i < C_i``), rank ``r`` of ``F``.

    One evaluation of ``F(a)``: the pass over ``K[S][:, S]`` for the sums of ``Gamma``; the
    eigenpairs, the cheaper of one warm Krylov round (three products of ``K[S][:, S]`` with
    ``b = r + 8`` columns, the QR of the ``3 b`` columns they span and the Rayleigh-Ritz
    products and ``eigh``: ARCHITECTURE's ``2 N^2 k + 13.3 N k^2 + 4 k^3`` flops for ``k = 3
    b``) and the dense decomposition (``eigh_s``); the gradient, a product of
    the rows ``K[S]`` with ``r + 1`` columns. One Newton system: the curvature (the gather of
    ``K`` on the free set and one pass over it) and its Cholesky factor. The solve is charged
    the start (the SVM fit) and, for its ``k`` Newton steps, ``k + 1`` evaluations and ``k``
    Newton systems (:func:`run_draw`): no interpreter time, no further Krylov rounds or tail
    tests, no rejected trials, held coordinates or cut models. The factor is the Cholesky
    factor's ``f^3 / 3``: on a kernel of low numerical rank the solver's Woodbury factor costs
    less, and DANK / this time can fall below 1 there. Returns the parts in seconds."""
    S = np.flatnonzero(alpha > 0)
    free = np.flatnonzero((alpha > 1e-12 * C) & (alpha < (1.0 - 1e-12) * C))
    if S.size == 0:
        return {"evaluation_s": 0.0, "newton_system_s": 0.0}
    rng = np.random.default_rng(0)
    KS = np.ascontiguousarray(K[np.ix_(S, S)])
    dS = alpha[S] * y[S]
    buf = np.empty_like(KS)
    b = min(rank + 8, S.size // 3 or 1)
    V = rng.standard_normal((S.size, b))
    W = rng.standard_normal((rank + 1, S.size))
    Q = scipy.linalg.qr(rng.standard_normal((S.size, 3 * b)), mode="economic")[0]
    GQ = KS @ Q  # the round's products, timed below as three of b columns

    def rayleigh_ritz():  # the QR of the round's basis, T = Q'(M Q), eigh(T), U and M U
        scipy.linalg.qr(Q, mode="economic", check_finite=False)
        _, Z = scipy.linalg.eigh(Q.T @ GQ, check_finite=False)
        return Q @ Z, GQ @ Z

    sums = best_time(lambda: (KS @ dS, np.multiply(KS, KS, out=buf) @ (dS * dS)), EIGH_REPEAT)
    krylov = (3 * best_time(lambda: KS @ V, EIGH_REPEAT)
              + best_time(rayleigh_ritz, EIGH_REPEAT))
    gradient = best_time(lambda: W @ K[S], EIGH_REPEAT)
    newton = 0.0
    if free.size > 1:
        A = np.take(np.take(K, free, axis=0), free, axis=1)
        A[np.diag_indices_from(A)] += 1.0  # positive definite, as the curvature is
        Hb = np.empty_like(A)
        curvature = best_time(lambda: np.multiply(
            np.take(np.take(K, free, axis=0), free, axis=1), A, out=Hb), EIGH_REPEAT)
        factor = best_time(lambda: scipy.linalg.cho_factor(A, lower=True, check_finite=False),
                           EIGH_REPEAT)
        newton = curvature + factor
    return {"evaluation_s": sums + min(krylov, eigh_s) + gradient, "newton_system_s": newton}


def svc_gap(K, y, C, a) -> float:
    """SVC's relative duality gap as a plain SVM: the certificate's formula (docs/MATH.md
    section 5) at ``F = 11'`` (:func:`dank_ref.certificate.svm_primal_gap` at ``G = K``: the
    exact best bias or the hard-margin point) over ``1'a``: the accuracy of the fit DANK is
    timed against, in the units of DANK's ``rel_gap``. ``O(n |S|)``."""
    S = np.flatnonzero(a)
    d = a * y
    lin = float(a.sum())
    return svm_primal_gap(K[:, S] @ d[S], d, y, C, lin)[0] / lin


def check_time(K) -> float:
    """Seconds of the check of ``K`` (symmetry, finiteness and the PSD test of docs/validity.md)
    for a writable copy: what an array of one's own costs a solve on top of the README call,
    whose ``compute_kernel`` matrix carries its proof and is not tested (validity.md, rule 6)."""
    A = np.array(K)
    t0 = time.perf_counter()
    validate_kernel_matrix(A, check_psd=True)
    return time.perf_counter() - t0


def _readme_call(K, y, C, eta):
    """``solve_svm(K, y, C=C, eta=eta, tau=0.01)``, timed (bench_svm's "defaults" row)."""
    return run_solve(K, y, C, eta, TAU, None, "defaults", None, None)


def run_draw(d: dict, repeat: int, profile: bool) -> dict:
    """One draw measured: the record the JSON keeps."""
    X, y = make_data(d)
    K, sigma = kernel(X, d["sigma_factor"])
    C = d["C"]
    svc_times, dank_times, res, eta = [], [], None, None
    for r in range(max(SVC_ROUNDS, repeat)):  # alternate: one SVC fit, then one solve
        t_svc, _, a_svc, svc = fit_svc(K, y, C, 1, SVC_TOL)
        svc_times.append(t_svc)
        if eta is None:
            a_norm2 = float(a_svc @ a_svc)
            eta = a_norm2 * d["eta_factor"]
            n_sv = int(svc.support_.size)
            svc_rel_gap = svc_gap(K, y, C, a_svc)
        if r < repeat:
            res, wall = _readme_call(K, y, C, eta)
            dank_times.append(wall)
    svc_s, dank_s = min(svc_times), min(dank_times)
    check_s = check_time(K)
    M = reduced_matrix(K, y, res.alpha, eta)
    eigh_s, eigh_size = eigh_time(M, EIGH_REPEAT), int(M.shape[0])
    b = bound(svc_s, eigh_s)
    factors = res.F_factors
    rank = 0 if factors is None else int(factors[0].size)
    steps = int(res.extra.get("newton_iter", 0))
    parts = model_time(K, y, res.alpha, C, rank, eigh_s)
    model_s = svc_s + (steps + 1) * parts["evaluation_s"] + steps * parts["newton_system_s"]
    out = dict(d, sigma=sigma, eta=eta, a_svc_norm2=a_norm2, tau=TAU,
               n_pos=int(np.sum(y > 0)), n_SV_svc=n_sv, svc_rel_gap=svc_rel_gap,
               svc_s=svc_s, svc_times_s=svc_times, dank_s=dank_s, dank_times_s=dank_times,
               ratios_paired=[t / s for t, s in zip(dank_times, svc_times, strict=False)],
               status=res.status, certified=res.status == "converged",
               rel_gap=float(res.rel_gap), support=int(np.count_nonzero(res.alpha > 0)),
               rank_F=None if factors is None else int(factors[0].size),
               newton_iter=int(res.extra.get("newton_iter", 0)), n_iter=int(np.sum(res.n_iter)),
               eigh_s=eigh_s, eigh_size=eigh_size, bound_s=b,
               model_s=model_s, **parts, ratio_model=dank_s / model_s,
               ratio_svc=dank_s / svc_s, ratio_bound=dank_s / b, check_s=check_s,
               ratio_svc_own=(dank_s + check_s) / svc_s,
               ratio_bound_own=(dank_s + check_s) / b,
               loadavg=list(os.getloadavg()))
    if profile and dank_s > b:
        def solve():
            _readme_call(K, y, C, eta)
            return {}
        out["profile"] = profiled(solve, 0, top_k=TOP_K)()["profile"]
    return out


# ------------------------------------------------------------------------------- summary
def summarise(records: list[dict]) -> dict:
    ratios = np.array([r["ratio_svc"] for r in records])
    to_bound = np.array([r["ratio_bound"] for r in records])
    worst = max(records, key=lambda r: r["ratio_bound"])
    keep = ("index", "family", "n", "n_drawn", "noise", "factor", "s", "n_features",
            "n_informative", "flip_y", "class_sep", "sigma_factor", "sigma", "C",
            "eta_factor", "eta", "data_seed", "svc_s", "dank_s", "eigh_s", "bound_s",
            "ratio_svc", "ratio_bound", "status", "rel_gap", "support", "rank_F")
    model = np.array([r["model_s"] / r["svc_s"] for r in records])
    model_bound = np.array([r["model_s"] / r["bound_s"] for r in records])
    own = np.array([r["ratio_svc_own"] for r in records])
    own_bound = np.array([r["ratio_bound_own"] for r in records])
    return {"draws": len(records), "over_bound": over_bound(records),
            "ratio_svc_median": float(np.median(ratios)),
            "own_ratio_svc_median": float(np.median(own)),
            "own_within_bound": float(np.mean(own_bound <= 1.0)),
            "ratio_svc_p90": float(np.percentile(ratios, 90)),
            "within_bound": float(np.mean(to_bound <= 1.0)),
            "within_2x_bound": float(np.mean(to_bound <= 2.0)),
            "model_ratio_svc_median": float(np.median(model)),
            "model_within_bound": float(np.mean(model_bound <= 1.0)),
            "ratio_model_median": float(np.median([r["ratio_model"] for r in records])),
            "svc_rel_gap_median": float(np.median([r["svc_rel_gap"] for r in records])),
            "rel_gap_median": float(np.median([r["rel_gap"] for r in records])),
            "all_certified": all(r["status"] == "converged" for r in records),
            "uncertified": sum(r["status"] != "converged" for r in records),
            "worst": {k: worst[k] for k in keep if k in worst}}


def over_bound(records: list[dict]) -> dict:
    """The draws over their bound: how many; how many of them are judged by ``5 SVC`` (the
    larger term of :func:`bound` where ``3 T_eigh <= 4 SVC``: small supports) and how many by
    ``SVC + 3 T_eigh``; and, of those profiled, how many spend the largest part of the solve
    in evaluations of ``F(a)``, in the Newton systems or elsewhere (SVC start, gradients,
    certificates, the interpreter)."""
    over = [r for r in records if r["ratio_bound"] > 1.0]
    largest = dict.fromkeys(("evaluations", "newton_systems", "rest"), 0)
    for r in over:
        p = r.get("profile")
        if p:
            parts = {"evaluations": p["eigen"], "newton_systems": p["direction"],
                     "rest": p["total_s"] - p["eigen"] - p["direction"]}
            largest[max(parts, key=parts.get)] += 1
    five = sum(bound(r["svc_s"], r["eigh_s"]) == 5 * r["svc_s"] for r in over)
    return {"draws": len(over), "bound_5_svc": five, "bound_svc_3_eigh": len(over) - five,
            "profiled": sum("profile" in r for r in over), "largest_part": largest}


def _params(r: dict) -> str:
    fam = {k: r[k] for k in ("noise", "factor", "s", "n_features", "n_informative", "flip_y",
                             "class_sep") if k in r}
    fam = ", ".join(f"{k}={v:.3g}" if isinstance(v, float) else f"{k}={v}"
                    for k, v in fam.items())
    return (f"{r['family']}({fam}) n={r['n']} sigma={r['sigma']:.3g} "
            f"(x{r['sigma_factor']:.3g}) C={r['C']:.3g} eta={r['eta']:.3g} "
            f"(x{r['eta_factor']:.3g})")


def summary_lines(s: dict, worst: dict) -> list[str]:
    """The printed summary; ``worst`` is the worst draw's full record (its profile, if any)."""
    w = s["worst"]
    out = [f"# {s['draws']} draws: DANK/SVC median {s['ratio_svc_median']:.1f}x, 90th "
            f"percentile {s['ratio_svc_p90']:.1f}x; within the bound "
            f"{100 * s['within_bound']:.0f}%, within twice the bound "
            f"{100 * s['within_2x_bound']:.0f}%; "
            + ("all certified" if s["all_certified"] else f"{s['uncertified']} NOT certified"),
            f"# with the check of an array of one's own (a copy of K, PSD test): median "
            f"{s['own_ratio_svc_median']:.1f}x, within the bound "
            f"{100 * s['own_within_bound']:.0f}%",
            f"# the cost model's unavoidable work (its BLAS and LAPACK calls alone, at each "
            f"draw's sizes and Newton steps): median {s['model_ratio_svc_median']:.1f}x SVC, "
            f"within the bound {100 * s['model_within_bound']:.0f}%; DANK takes a median "
            f"{s['ratio_model_median']:.1f} times it",
            f"# relative gaps: SVC's fit median {s['svc_rel_gap_median']:.1e} (the "
            f"certificate's formula at F = 11'), DANK's certified median "
            f"{s['rel_gap_median']:.1e}",
            _over_line(s["over_bound"]),
            f"# worst draw #{w['index']} (DANK/bound {w['ratio_bound']:.2f}, DANK/SVC "
            f"{w['ratio_svc']:.1f}x): {_params(w)}"]
    if "profile" in worst:
        p = worst["profile"]
        out.append(_profile_line(p))
        out.append("#   own time: " + ", ".join(
            f"{t['function']} {t['tottime']:.3f} s" for t in p["top"]["tottime"][:5]))
    return out


def _over_line(o: dict) -> str:
    line = (f"# over the bound: {o['draws']} draws, {o['bound_5_svc']} judged by 5 x SVC, "
            f"{o['bound_svc_3_eigh']} by SVC + 3 T_eigh")
    if o["profiled"]:
        lp = o["largest_part"]
        line += (f"; largest part of the {o['profiled']} profiled: evaluations of F(a) "
                 f"{lp['evaluations']}, Newton systems {lp['newton_systems']}, the rest "
                 f"{lp['rest']}")
    return line


def _line(r: dict) -> str:
    return (f"[{r['index']:>2}] {_params(r)}: SVC {1e3 * r['svc_s']:.1f} ms, DANK "
            f"{1e3 * r['dank_s']:.0f} ms ({r['ratio_svc']:.1f}x SVC, {r['ratio_bound']:.2f}x "
            f"bound, {r['ratio_model']:.1f}x the cost model's work), eigh "
            f"{1e3 * r['eigh_s']:.1f} ms at {r['eigh_size']}, |S| {r['support']}, "
            f"rank {r['rank_F']}, {r['status']} {r['rel_gap']:.1e}, load {r['loadavg'][0]:.2f}"
            + (f", profiled {r['profile']['total_s']:.2f} s" if "profile" in r else ""))


def main(argv=None):
    return seeded_main("bench_distribution.py", parse_args, _run, argv)


def seeded_main(script: str, parse, run, argv=None) -> int:
    """A seeded benchmark's ``main``: ``args = parse(argv)``, a fresh seed unless ``--seed``
    is given, BLAS threads pinned to ``--blas-threads`` (0: the library's default) and
    ``run(args, seed, meta)``, with ``meta`` the run's header (:func:`run_meta`, printed)."""
    args = parse(argv)
    seed = args.seed if args.seed is not None else secrets.randbits(63)
    argv_list = sys.argv[1:] if argv is None else list(argv)
    limiter = None
    if args.blas_threads:
        limiter = threadpoolctl.threadpool_limits(limits=args.blas_threads, user_api="blas")
    try:
        return run(args, seed, run_meta(script, args, seed, argv_list))
    finally:
        if limiter is not None:
            limiter.restore_original_limits()


def _command(script: str, argv_list: list[str], seed: int | None = None) -> str:
    """The command line; with ``seed``, the one that repeats the run (its ``--seed`` set)."""
    if seed is not None:
        kept, skip = [], False
        for a in argv_list:
            if skip or a == "--seed" or a.startswith("--seed="):
                skip = a == "--seed"
                continue
            kept.append(a)
        argv_list = [*kept, "--seed", str(seed)]
    return " ".join([f"python benchmarks/{script}", *argv_list])


def run_meta(script: str, args, seed: int, argv_list: list[str]) -> dict:
    """The header of a seeded run's results (command, the command that repeats it, machine,
    versions, BLAS, code, arguments, load average), its two lines printed."""
    meta = {
        "command": _command(script, argv_list), "seed": seed,
        "repeat_with": _command(script, argv_list, seed),
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "machine": f"{platform.node()} {platform.machine()}", "cpu_count": os.cpu_count(),
        "python": platform.python_version(), "numpy": np.__version__,
        "scipy": scipy.__version__, "sklearn": __import__("sklearn").__version__,
        "dank_fast": getattr(dank_fast, "__version__", "?"), "blas": blas_info(),
        "blas_threads_arg": args.blas_threads, "code": code_fingerprint(), "args": vars(args),
        "loadavg_start": list(os.getloadavg()),
    }
    print(f"# {meta['command']}  ({meta['date']}, git {meta['code']['git_head']})")
    print(f"# seed {seed} (repeat: {meta['repeat_with']})", flush=True)
    return meta


def write_results(path: str, meta: dict, summary: dict, records: list[dict]) -> None:
    """The results JSON of a seeded run (``meta`` gets the load average at its end)."""
    meta["loadavg_end"] = list(os.getloadavg())
    with open(path, "w") as f:
        json.dump({"meta": meta, "summary": summary, "draws": records}, f, indent=1,
                  default=str)
    print(f"# wrote {path}")


def _run(args, seed: int, meta: dict) -> int:
    warm_up(types.SimpleNamespace(tau=TAU))
    records = []
    for i in range(args.draws):
        rec = run_draw(draw(seed, i, args.max_n), args.repeat, args.profile)
        records.append(rec)
        log(_line(rec))
    summary = summarise(records)
    worst = records[summary["worst"]["index"]]
    for line in summary_lines(summary, worst):
        print(line)
    write_results(args.out, meta, summary, records)
    return 0


if __name__ == "__main__":
    sys.exit(main())
