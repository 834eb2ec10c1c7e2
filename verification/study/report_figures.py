"""The figures of ``dank-verify``'s report: one figure per claim it illustrates.

Each figure is named after the claim it shows (``fig_<claim>_<what>.png``), draws the claim's
bound where the claim has one, and states the run's verdict for that claim on the figure, so
that a reader needs nothing else to see what was tested and what came out:

* ``fig_NR_convergence.png``: claim NR (Algorithm 1, the paper's Figure 4): objective and step
  length of the paper's methods against the certified optimum and the paper's stopping rule.
* ``fig_EMP_F_entries.png``: claim EMP, first part (Figure 2): the entries of ``F*`` split into
  pairs of support vectors and pairs with a non-support vector (``Gamma_ij = 0`` there, which
  is the spike near 1), against the paper's band ``[0.9, 1.1]``.
* ``fig_T3_theorem6.png``: claim T3 (Theorem 6, P3 with ``tau = 0``): the theorem's two sides,
  ``|H(a*, F*) - H(abar, Fbar)|`` and ``1/2 B C^2 Q(pi)``, for ``v = 2..10`` k-means clusters.
* ``fig_T4_screening.png``: claims T4 (Theorem 7) and EMP's screening part (Figure 5c): the
  sub-problem's gradients against the screening threshold, on a symmetric-log axis.

matplotlib is imported inside :func:`figures` only (an optional dependency, the report extra), and
``dank_fast`` on first use: importing either costs start-up time for every other
``dank-verify`` command.
"""

from __future__ import annotations

import os
import textwrap
import warnings

import numpy as np

from .claims._common import fmt, gaussian_kernel
from .claims.decomposition import Q_of, _eval_T3, kmeans_labels, solve_pair
from .claims.empirical import paper_like_data, paper_setting

__all__ = ["figures", "CAPTIONS"]

DPI = 100

#: one caption per figure key, for the report
CAPTIONS = dict(
    NR_convergence="Claim NR (Algorithm 1, cf. the paper's Figure 4): the paper's methods "
                   "against the certified optimum and the paper's stopping rule.",
    EMP_F_entries="Claim EMP (cf. Figure 2): entries of the learned F*, pairs of support "
                  "vectors apart from pairs with a non-support vector (Gamma_ij = 0).",
    T3_theorem6="Claim T3 (Theorem 6, P3, tau = 0): both sides of the theorem against the "
                "number of k-means clusters; points above the bound violate it.",
    T4_screening="Claims T4 (Theorem 7) and EMP's screening part (cf. Figure 5c): sub-problem "
                 "gradients against the screening threshold.")


def instance_text(s: dict, n: int, tau: float | None = None, dataset="breast_cancer") -> str:
    """One line naming the instance; ``tau`` overrides the setting's (P3 figures: 0)."""
    tau = s["tau"] if tau is None else tau
    return (f"{dataset}, n = {n}, Gaussian sigma = {fmt(s['sigma'], 3)}, C = {fmt(s['C'], 3)}, "
            f"eta = {fmt(s['eta'], 4)}, tau = {fmt(tau, 3)}")


def solve_svm(*args, **kwargs):
    """:func:`dank_fast.solve_svm`, imported on first use."""
    # start-up: dank_fast imports scikit-learn (seconds); only the figures need it here
    from dank_fast import solve_svm as solve

    return solve(*args, **kwargs)


def _wrap(text: str, width: int) -> str:
    """Each line of ``text`` wrapped at ``width`` characters (titles must not be clipped)."""
    return "\n".join(textwrap.fill(line, width) for line in text.split("\n"))


def _verdict(verdicts: dict, claim: str) -> str:
    v = verdicts.get(claim)
    return f"{claim}: {v['status']}" if v else f"{claim}: not checked in this run"


def figures(out: str, rng, emp_data=None, verdicts: dict | None = None) -> dict:
    """Write the report's figures into ``out``; returns ``{key: path}``.

    ``verdicts`` maps a claim id to ``{"status": ..., "headline": ...}`` (the run's verdicts,
    shown on the figures); ``emp_data`` is what the EMP check computed (data, setting, ``F*``,
    the partition and the screening quantities), recomputed here when None.
    """
    # start-up: matplotlib is optional (the report extra) and slow to import
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # start-up: as above

    verdicts = verdicts or {}
    os.makedirs(out, exist_ok=True)
    if emp_data is None:
        X, y = paper_like_data(100)
        s = paper_setting(X, y)
        K = gaussian_kernel(X, s["sigma"])
        emp_data = dict(X=X, y=y, setting=s, K=K)
    paths = {}
    for key, draw in (("NR_convergence", _convergence), ("EMP_F_entries", _F_entries),
                      ("T3_theorem6", _theorem6), ("T4_screening", _screening)):
        fig = draw(plt, emp_data, verdicts)
        if fig is None:
            continue
        paths[key] = os.path.join(out, f"fig_{key}.png")
        fig.savefig(paths[key], dpi=DPI)
        plt.close(fig)
    return paths


def _convergence(plt, e, verdicts):
    """Claim NR: objective and step length per iteration (paper's Figure 4)."""
    K, y, s = e["K"], e["y"], e["setting"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = solve_svm(K, y, C=s["C"], eta=s["eta"], tau=s["tau"], method="newton", tol=1e-10)
    runs = [("paper", {}, "Algorithm 1 as printed"),
            ("paper", dict(beta_sign="ascent", projection="exact"),
             "Algorithm 1, ascent sign + exact projection"),
            ("pgm", {}, "projected gradient, eq. (17)"),
            ("accelerated", {}, "accelerated (dank_fast)")]
    fig, ax = plt.subplots(1, 2, figsize=(11, 5.2), layout="constrained")
    for (method, opts, label), color in zip(runs, ("C3", "C1", "C2", "C0"), strict=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = solve_svm(K, y, C=s["C"], eta=s["eta"], tau=s["tau"], method=method, tol=1e-8,
                          max_iter=500 if method != "accelerated" else 2000, **opts)
        h = np.asarray(r.history.get("h", []), float)
        st = np.asarray(r.history.get("step", []), float)
        if h.size:
            ax[0].plot(np.arange(h.size), h, color=color,
                       label=f"{label}: rel. gap {r.rel_gap:.1e}")
        if st.size:
            ax[1].semilogy(np.arange(1, st.size + 1), np.maximum(st, 1e-16), color=color,
                           label=label)
    ax[0].axhline(opt.lower, color="k", ls="--", lw=1,
                  label=f"optimum v* = {opt.lower:.6g} (certified)")
    ax[1].axhline(1e-4, color="k", ls=":", lw=1, label="paper's stopping rule 1e-4")
    ax[0].set(xlabel="iteration t", ylabel="h(a_t)", title="objective (cf. Figure 4a)")
    ax[1].set(xlabel="iteration t", ylabel="||a_t - a_{t-1}||_2",
              title="step length (cf. Figure 4b)")
    handles, labels = ax[0].get_legend_handles_labels()
    h1, l1 = ax[1].get_legend_handles_labels()
    fig.legend(handles + h1[-1:], labels + l1[-1:], loc="outside lower center", ncol=3,
               fontsize=8)
    printed = verdicts.get("NR[printed]")
    fig.suptitle(_wrap(f"Claim NR, O(1/t^2) rate of Algorithm 1 -- verdict "
                       f"{_verdict(verdicts, 'NR')} (ascent sign)"
                       + (f"; as printed: {printed['status']}" if printed else "")
                       + f"\n{instance_text(s, y.size)}", 130), fontsize=10)
    return fig


def _F_entries(plt, e, verdicts):
    """Claim EMP (Figure 2): entries of F*, split by whether the pair has a non-SV."""
    K, y, s = e["K"], e["y"], e["setting"]
    res = e.get("res") or solve_svm(K, y, C=s["C"], eta=s["eta"], tau=s["tau"])
    F, a = res.F, res.alpha
    n = y.size
    sv = a > 1e-8 * s["C"]
    both = np.outer(sv, sv)
    lo, hi = float(F.min()), float(F.max())
    pad = 0.05 * max(hi - lo, 1e-12)
    bins = np.linspace(lo - pad, hi + pad, 61)
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.8), layout="constrained")
    ax[0].hist([F[~both], F[both]], bins=bins, stacked=True, color=["0.6", "C0"],
               label=[f"pairs with a non-support vector ({int((~both).sum())} entries): "
                      "Gamma_ij = 0,\nF_ij = 1 up to the small shift of the soft threshold",
                      f"pairs of support vectors ({int(both.sum())} entries)"])
    ax[0].set_yscale("log")
    ax[0].set_xlim(lo - pad, hi + pad)
    ax[0].set(xlabel="F*_ij", ylabel="number of entries (log scale)")
    ax[0].legend(fontsize=7, loc="upper left")
    inside = 0.9 <= lo and hi <= 1.1
    ax[0].set_title(f"all entries in [{lo:.4f}, {hi:.4f}]: inside the paper's band [0.9, 1.1]"
                    f" {'(claim holds)' if inside else '(claim FAILS)'}", fontsize=9)
    ax[0].ticklabel_format(axis="x", useOffset=False)
    order = np.lexsort((~sv, y))
    im = ax[1].imshow(F[np.ix_(order, order)], cmap="viridis", vmin=lo, vmax=hi)
    cb = fig.colorbar(im, ax=ax[1])
    cb.set_label("F*_ij")
    cb.formatter.set_useOffset(False)
    cb.update_ticks()
    ax[1].set_title("F* (points ordered by class, support vectors first in each)", fontsize=9)
    ax[1].set(xlabel="point j", ylabel="point i")
    rank = int(np.sum(np.linalg.eigvalsh(F) > 1e-8 * np.abs(F).max() * n))
    parts = (f"near 1: {'yes' if inside else 'NO'}; low rank: "
             f"{'yes' if rank <= n // 4 else 'NO'}; screening: fig_T4_screening")
    fig.suptitle(_wrap(f"Claim EMP (cf. Figure 2): F* near 1 and of low rank (rank {rank}, "
                       f"claim <= n/4 = {n // 4}) -- verdict {_verdict(verdicts, 'EMP')} for the "
                       f"three parts together ({parts})\n{instance_text(s, n)}", 130),
                 fontsize=10)
    return fig


def _theorem6(plt, e, verdicts):
    """Claim T3 (Theorem 6): |H(a*, F*) - H(abar, Fbar)| against 1/2 B C^2 Q(pi), P3, tau = 0."""
    X, K, y, s = e["X"], e["K"], e["y"], e["setting"]
    inst = dict(K=K, y=y, C=s["C"], eta=s["eta"])
    vs, lhs, rhs, Q = [], [], [], []
    for v in range(2, 11):
        labels = kmeans_labels(X, v)
        Kb, full, blk = solve_pair(inst, labels)
        left, right, info = _eval_T3(inst, labels, Kb, full, blk, 1.0)
        if info["B1"] <= 0:  # the premise B1 > 0 fails: the theorem says nothing
            continue
        vs.append(v)
        lhs.append(max(left, 1e-300))
        rhs.append(right)
        Q.append(Q_of(K, labels))
    if not vs:
        return None
    vs, lhs, rhs = np.array(vs), np.array(lhs), np.array(rhs)
    bad = lhs > rhs
    fig, ax = plt.subplots(figsize=(7.2, 5.0), layout="constrained")
    ax.semilogy(vs, rhs, "k--", marker="s", ms=4, label="bound 1/2 B C^2 Q(pi) (Theorem 6)")
    ax.semilogy(vs, lhs, "o-", color="C0", label="|H(a*, F*) - H(abar, Fbar)| (certified)")
    if bad.any():
        ax.scatter(vs[bad], lhs[bad], s=90, facecolors="none", edgecolors="C3", lw=1.5,
                   label=f"violations: {int(bad.sum())} of {vs.size} partitions", zorder=3)
    ax.set_xticks(vs)
    ax.set(xlabel="number of k-means clusters v", ylabel="value (log scale)")
    ax.legend(fontsize=8, loc="best")
    worst = float(np.max(lhs / rhs))
    v = verdicts.get("T3")
    where = ("" if v is None else
             f"\nthe run's verdict {v['status']} ({v['headline']}) comes from its random small "
             "instances; the smallest counterexample is counterexample_T3.npz")
    ax.set_title(_wrap(f"Claim T3, Theorem 6 on P3 (no bias, tau = 0): on this instance lhs/rhs "
                       f"<= {worst:.3g} ({'violated' if bad.any() else 'holds'} here){where}\n"
                       f"{instance_text(s, y.size, tau=0.0)}", 95), fontsize=8)
    return fig


def _screening(plt, e, verdicts):
    """Claims T4 / EMP (Figure 5c): sub-problem gradients against the screening threshold."""
    if "sc" not in e:
        return None
    sc, labels, s, K, y = e["sc"], e["labels"], e["setting"], e["K"], e["y"]
    Kb = K * (labels[:, None] == labels[None, :])
    floor = 1.0 - sc["B2"] * s["C"] * np.abs(Kb).sum(0)
    nonsv = sc["nonsv"]
    order = np.argsort(~nonsv, kind="stable")  # non-support vectors first, then the SVs
    x = np.arange(order.size)
    g, thr, fl = sc["gbar"][order], sc["thr"][order], floor[order]
    ns = nonsv[order]
    fig, ax = plt.subplots(figsize=(9, 5.8), layout="constrained")
    ax.scatter(x[ns], g[ns], s=16, color="C0", marker="o",
               label=f"non-support vectors of the full P3 ({int(ns.sum())})")
    ax.scatter(x[~ns], g[~ns], s=22, color="C2", marker="x",
               label=f"support vectors ({int((~ns).sum())})")
    ax.scatter(x, fl, s=18, marker="_", color="0.45",
               label="proven floor of the gradient: 1 - B2 C ||Kbar_i||_1")
    ax.scatter(x, thr, s=18, marker="_", color="C3",
               label="screening threshold -(B + B2) C (||Kbar_i||_1 + kappa), eq. (21): "
                     "a point below it is screened")
    ax.axvline(ns.sum() - 0.5, color="0.8", lw=1)
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set(xlabel="point (non-support vectors first, then support vectors)",
           ylabel="(grad Hbar(abar, Fbar))_i (symmetric log scale)")
    fig.legend(loc="outside lower center", ncol=2, fontsize=8)
    fig.suptitle(_wrap(f"Screening rule of Theorem 7 (cf. Figure 5c): {int(sc['S'].sum())} of "
                       f"{int(nonsv.sum())} non-support vectors screened (claim: over 40%)"
                       + ("; every gradient lies above its threshold" if not sc["S"].any()
                          else "")
                       + f"\nverdicts {_verdict(verdicts, 'T4')}, {_verdict(verdicts, 'EMP')}; "
                       f"P3 (no bias, tau = 0), {len(np.unique(labels))} k-means clusters; "
                       f"{instance_text(s, y.size, tau=0.0)}", 120), fontsize=9)
    return fig
