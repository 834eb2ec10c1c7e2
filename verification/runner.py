"""Run every claim check and the solver cross-check; write report.md, results.json, figures."""

from __future__ import annotations

import json
import os
import sys
import time
import warnings

import numpy as np

from .claims import GROUPS, run_group
from .claims._common import _jsonable, draw_instance


def log(msg):
    print(f"[dank-verify] {msg}", file=sys.stderr, flush=True)


def solver_crosscheck(rng, budget=1, n_inst=None):
    """dank_fast methods vs dank_ref on small instances."""
    from dank_fast import solve_svm

    try:
        import dank_ref
    except ImportError:
        dank_ref = None
    rows = []
    n_inst = n_inst or 2 * budget
    for k in range(n_inst):
        inst = draw_instance(rng, n_range=(8, 16), tau_large=False)
        K, y, C, eta, tau = inst["K"], inst["y"], inst["C"], inst["eta"], inst["tau"]
        ref_val = None
        if dank_ref is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    ref = dank_ref.solve_svm(K, y, C=C, eta=eta, tau=tau, solver="SCS")
                    ref_val = (ref.lower, ref.upper)
                except Exception as exc:  # noqa: BLE001
                    log(f"dank_ref failed on instance {k}: {exc!r}")
        for method in ("accelerated", "newton", "paper", "pgm"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = solve_svm(K, y, C=C, eta=eta, tau=tau, method=method, tol=1e-8,
                              max_iter=2000 if method in ("paper", "pgm") else None)
            agree = None
            if ref_val is not None:
                # the two certified brackets must overlap
                agree = bool(r.lower <= ref_val[1] + 1e-9 * max(1, abs(r.lower))
                             and ref_val[0] <= r.upper + 1e-9 * max(1, abs(r.upper)))
            rows.append(dict(instance=k, n=int(y.size), C=C, eta=eta, tau=tau, method=method,
                             status=r.status, rel_gap=float(r.rel_gap), n_iter=int(r.n_iter),
                             time=float(r.time),
                             stopped_before_optimal=bool(r.status == "stopped"
                                                         and r.rel_gap > 1e-6),
                             brackets_overlap_ref=agree))
    return rows


def figures(out, rng, emp_data=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dank_fast import solve_svm

    from .claims._common import gaussian_kernel
    from .claims.decomposition import Q_of, kmeans_labels
    from .claims.empirical import paper_like_data, paper_setting

    paths = {}
    if emp_data is None:
        X, y = paper_like_data(100)
        s = paper_setting(X, y)
        K = gaussian_kernel(X, s["sigma"])
    else:
        X, y, s, K = emp_data["X"], emp_data["y"], emp_data["setting"], emp_data["K"]
    # Figure conv
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    for method in ("paper", "accelerated", "pgm"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = solve_svm(K, y, C=s["C"], eta=s["eta"], tau=s["tau"], method=method, tol=1e-8,
                          max_iter=500 if method != "accelerated" else 2000)
        h = np.asarray(r.history.get("h", []), float)
        st = np.asarray(r.history.get("step", []), float)
        if h.size:
            ax[0].plot(np.arange(h.size), h, label=method)
        if st.size:
            ax[1].semilogy(np.arange(st.size), np.maximum(st, 1e-16), label=method)
    ax[0].set_xlabel("iteration")
    ax[0].set_ylabel("h(a_t)")
    ax[1].set_xlabel("iteration")
    ax[1].set_ylabel("||a_t - a_{t-1}||")
    ax[0].legend()
    ax[1].legend()
    fig.suptitle("Convergence (cf. paper Figure conv)")
    paths["conv"] = os.path.join(out, "fig_conv.png")
    fig.savefig(paths["conv"], dpi=90)
    plt.close(fig)
    # Figure flexiF
    res = emp_data["res"] if emp_data else solve_svm(K, y, C=s["C"], eta=s["eta"], tau=s["tau"])
    F = res.F
    fig, ax = plt.subplots(1, 2, figsize=(10, 4))
    ax[0].hist(F.ravel(), bins=60)
    ax[0].axvline(0.9, color="r", ls="--")
    ax[0].axvline(1.1, color="r", ls="--")
    ax[0].set_title("entries of F*")
    im = ax[1].imshow(F, cmap="viridis")
    fig.colorbar(im, ax=ax[1])
    ax[1].set_title("F* (cf. Figure flexiF)")
    paths["flexiF"] = os.path.join(out, "fig_flexiF.png")
    fig.savefig(paths["flexiF"], dpi=90)
    plt.close(fig)
    # Figure thm4bound: Q(pi) vs number of clusters
    vs = [1, 2, 3, 4, 6, 8, 10]
    Qs = [Q_of(K, kmeans_labels(X, v)) if v > 1 else 0.0 for v in vs]
    fig, ax = plt.subplots(figsize=(5, 4))
    ax.plot(vs, Qs, "o-")
    ax.set_xlabel("number of clusters v")
    ax.set_ylabel("Q(pi)")
    ax.set_title("Q(pi) vs clusters (cf. Figure thm4bound)")
    paths["thm4bound"] = os.path.join(out, "fig_thm4bound.png")
    fig.savefig(paths["thm4bound"], dpi=90)
    plt.close(fig)
    # gradients of support / non-support vectors with the screening threshold
    if emp_data is not None:
        sc = emp_data["sc"]
        fig, ax = plt.subplots(figsize=(6, 4))
        idx = np.arange(sc["gbar"].size)
        sv = ~sc["nonsv"]
        ax.scatter(idx[sv], sc["gbar"][sv], s=10, label="support vectors (full P3)")
        ax.scatter(idx[~sv], sc["gbar"][~sv], s=10, label="non-support vectors")
        ax.plot(idx, sc["thr"], "r-", lw=1, label="screening threshold (Thm theorsv)")
        ax.set_xlabel("point")
        ax.set_ylabel("(grad Hbar(abar, Fbar))_i")
        ax.legend(fontsize=7)
        paths["screening"] = os.path.join(out, "fig_screening.png")
        fig.savefig(paths["screening"], dpi=90)
        plt.close(fig)
    return paths


def run_all(out="dank-verify-out", seed=0, budget=1, groups=GROUPS, make_figures=True,
            crosscheck=True):
    os.makedirs(out, exist_ok=True)
    t0 = time.perf_counter()
    verdicts, emp_data = [], None
    for i, g in enumerate(groups):
        log(f"({i + 1}/{len(groups)}) claim group {g} ...")
        rng = np.random.default_rng([seed, i])
        t = time.perf_counter()
        try:
            if g == "EMP":
                from .claims.empirical import check_EMP

                vs, emp_data = check_EMP(rng, budget=budget, out_dir=out, n=100)
            else:
                vs = run_group(g, rng, budget=budget, out_dir=out)
        except Exception as exc:  # a crashing check is reported, not hidden
            from .claims._common import Verdict

            vs = [Verdict(claim=g, status="INCONCLUSIVE", worst_ratio=float("nan"), where={},
                          n_instances=0, tolerance=0.0, message=f"check crashed: {exc!r}")]
        for v in vs:
            log(f"    {v.claim}: {v.status} (worst ratio {v.worst_ratio:.4g}, "
                f"{time.perf_counter() - t:.1f}s)")
        verdicts += vs
    rows = []
    if crosscheck:
        log("solver cross-check dank_fast vs dank_ref ...")
        rows = solver_crosscheck(np.random.default_rng([seed, 99]), budget)
    figs = {}
    if make_figures:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            log("matplotlib is not installed: figures skipped "
                "(install the report extra: pip install 'dank[report]')")
        else:
            log("figures ...")
            figs = figures(out, np.random.default_rng([seed, 98]), emp_data)
    elapsed = time.perf_counter() - t0
    results = dict(seed=seed, budget=budget, seconds=elapsed,
                   verdicts=[v.to_dict() for v in verdicts], solvers=rows, figures=figs)
    with open(os.path.join(out, "results.json"), "w") as fh:
        json.dump(_jsonable(results), fh, indent=1)
    with open(os.path.join(out, "report.md"), "w") as fh:
        fh.write(render_report(verdicts, rows, figs, seed, budget, elapsed))
    log(f"done in {elapsed:.1f}s: {out}/report.md")
    return results


def render_report(verdicts, rows, figs, seed, budget, elapsed):
    L = ["# DANK verification report", "",
         f"seed {seed}, budget {budget}, {elapsed:.1f} s. A VIOLATED claim is a finding about the "
         "paper (with a counterexample file: `dank-verify reproduce FILE`).", "",
         "| claim | status | worst lhs/rhs | evaluations | counterexample |",
         "|---|---|---|---|---|"]
    for v in verdicts:
        cex = os.path.basename(v.counterexample_path) if v.counterexample_path else ""
        L.append(f"| {v.claim} | **{v.status}** | {v.worst_ratio:.4g} | {v.n_instances} | {cex} |")
    L.append("")
    for v in verdicts:
        L += [f"## {v.claim}: {v.status}", "", f"*Tested statement.* {v.statement}", "",
              f"*Result.* worst ratio {v.worst_ratio:.6g} (tolerance {v.tolerance:g} relative). "
              f"{v.message}", "", f"*Worst case.* `{json.dumps(_jsonable(v.where))}`", ""]
    if rows:
        L += ["## Solver cross-check (dank_fast vs dank_ref)", "",
              "| inst | n | method | status | rel_gap | iters | time (s) | stopped before optimal "
              "| brackets overlap ref |", "|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            L.append(f"| {r['instance']} | {r['n']} | {r['method']} | {r['status']} | "
                     f"{r['rel_gap']:.2e} | {r['n_iter']} | {r['time']:.3f} | "
                     f"{r['stopped_before_optimal']} | {r['brackets_overlap_ref']} |")
        L.append("")
    if figs:
        L += ["## Figures", ""] + [f"![{k}]({os.path.basename(p)})" for k, p in figs.items()]
    return "\n".join(L) + "\n"
