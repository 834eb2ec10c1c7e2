"""Figure 4 (with the certified gap the paper does not show) and paper-vs-ours figures.

Figure 4 (section "Convergence experiments"): on heart, the objective ``H(a_t, F(a_t)) =
h(a_t)`` and ``||a_t - a_{t-1}||`` per iteration for the projected gradient method (eq. (17))
and the paper's accelerated method (Algorithm 1), both from ``a_0 = 0`` with the paper's
stopping rule (``||a_t - a_{t-1}|| <= 1e-4`` or ``t_max = 2000``). Algorithm 1 is run as
printed and with the ascent sign of its beta step (the printed minus sign belongs to Nesterov's
*minimisation* scheme; see the README's findings). A third panel adds the certified duality
gap ``upper - lower`` of the iterates (exactly projected onto ``A``), computed every few
iterations by :mod:`dank_fast.certificate`.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVC

from dank_fast import compute_kernel, solve_svm

from . import paper
from .data import Dataset, make_split

__all__ = ["conv_experiment", "plot_conv", "plot_rank", "plot_socmkl"]

CONV_METHODS = (
    ("pgm", "projected gradient (eq. (17))", {}),
    ("paper", "Algorithm 1 as printed", {}),
    ("paper-ascent", "Algorithm 1, ascent sign", {"beta_sign": "ascent"}),
)


def conv_experiment(ds: Dataset, *, C: float, sigma: float, tau: float, seed: int,
                    stratify: bool, t_max: int = 2000, certify_every: int = 10,
                    params_from: str = "") -> dict:
    """Run the convergence experiment on the training half of split 0 of ``ds``.

    Returns
    -------
    dict
        Settings, per-method histories (``h``, ``step``, ``gap`` as ``(t, gap)``) and final
        numbers (status, iterations, ``h``, certified ``rel_gap``), and the reference bracket
        of ``v*`` from a certified Newton solve.
    """
    Xtr, ytr, _, _ = make_split(ds, 0, seed, stratify=stratify)
    X = MinMaxScaler().fit_transform(Xtr)
    classes = np.unique(ytr)
    if classes.size != 2:
        raise ValueError(f"the convergence experiment needs a binary set, {ds.name} has "
                         f"{classes.size} classes")
    y = np.where(ytr == classes[1], 1.0, -1.0)
    K = compute_kernel(X, sigma=sigma)
    svc = SVC(kernel="precomputed", C=C, tol=1e-4).fit(K, y)
    eta = float(np.sum(svc.dual_coef_**2))
    ref = solve_svm(K, y, C=C, eta=eta, tau=tau, method="newton", tol=1e-10, check_psd=False)
    out = dict(dataset=ds.name, n=int(y.size), C=C, sigma=sigma, tau=tau, eta=eta, t_max=t_max,
               certify_every=certify_every, params_from=params_from, v_lower=float(ref.lower),
               v_upper=float(ref.upper), ref_status=ref.status, histories={}, final={})
    for key, label, opts in CONV_METHODS:
        method = "pgm" if key == "pgm" else "paper"
        with warnings.catch_warnings():
            # the paper's methods stop on their own rule; the certified gap is reported below
            warnings.simplefilter("ignore")
            r = solve_svm(K, y, C=C, eta=eta, tau=tau, method=method, max_iter=t_max,
                          certify_every=certify_every, check_psd=False, **opts)
        h = [float(v) for v in r.history.get("h", [])]
        step = [float(v) for v in r.history.get("step", [])]
        gap = [(int(t), float(g)) for t, g in r.history.get("gap", [])]
        out["histories"][key] = dict(h=h, step=step, gap=gap)
        out["final"][key] = dict(label=label, status=r.status, n_iter=int(r.n_iter),
                                 h=float(r.lower), rel_gap=float(r.rel_gap), gap=float(r.gap))
    return out


def plot_conv(conv: dict, path: str) -> str:
    """Three panels: ``h(a_t)``, ``||a_t - a_{t-1}||`` and the certified gap, per iteration."""
    # start-up: matplotlib (optional dependency, the report extra) only for figures
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # start-up: as above

    fig, ax = plt.subplots(1, 3, figsize=(14, 4.2))
    styles = {"pgm": ("tab:blue", "--"), "paper": ("tab:red", "-"),
              "paper-ascent": ("tab:green", "-.")}
    for key, hist in conv["histories"].items():
        col, ls = styles.get(key, ("k", ":"))
        lab = conv["final"][key]["label"]
        h = np.asarray(hist["h"])
        if h.size:
            ax[0].plot(np.arange(h.size), h, color=col, ls=ls, label=lab)
        st = np.asarray(hist["step"])
        if st.size:
            ax[1].semilogy(np.arange(1, st.size + 1), np.maximum(st, 1e-16), color=col, ls=ls,
                           label=lab)
        if hist["gap"]:
            t, g = np.asarray(hist["gap"]).T
            ax[2].semilogy(t, np.maximum(g, 1e-16), color=col, ls=ls, label=lab)
    ax[0].axhline(conv["v_lower"], color="k", lw=0.8, ls=":", label="v* (certified)")
    lo = min(conv["v_lower"], *(min(h["h"]) for h in conv["histories"].values() if h["h"]))
    ax[0].set_ylim(lo, conv["v_upper"] + 0.05 * (conv["v_upper"] - lo))
    ax[0].set_title("(a) objective H(a_t, F(a_t)) = h(a_t)")
    ax[1].set_title("(b) ||a_t - a_{t-1}||")
    ax[2].set_title("(c) certified duality gap (not in the paper)")
    for a in ax:
        a.set_xlabel("iteration t")
        a.grid(alpha=0.3)
    ax[1].axhline(1e-4, color="k", lw=0.8, ls=":", label="stopping rule 1e-4")
    ax[0].legend(fontsize=8, loc="best")
    ax[1].legend(fontsize=8)
    ax[2].legend(fontsize=8)
    fig.suptitle(f"Figure 4 re-run: {conv['dataset']}, n = {conv['n']}, C = {conv['C']:g}, "
                 f"sigma = {conv['sigma']:g}, tau = {conv['tau']:g}, eta = {conv['eta']:.3g}",
                 fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_socmkl(socmkl: dict, path: str) -> str:
    """Paper's test accuracy against ours, per method and data set (Table 1)."""
    # start-up: matplotlib (optional dependency, the report extra) only for figures
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # start-up: as above

    fig, ax = plt.subplots(figsize=(6.5, 6))
    marks = {"SVM-CV": ("o", "tab:blue"), "MKL-uniform": ("s", "tab:gray"),
             "DANK": ("*", "tab:red")}
    allv = []
    for meth, (mk, col) in marks.items():
        xs, ys, names = [], [], []
        for name, row in socmkl.items():
            o = row[meth]["test"]
            if o["n"]:
                xs.append(paper.SOCMKL[name][meth][1][0])
                ys.append(o["mean"])
                names.append(name)
        ax.scatter(xs, ys, marker=mk, color=col, s=90 if mk == "*" else 45, label=meth,
                   zorder=3)
        if meth == "DANK":  # labels spread around their points (fewer overlaps)
            pts = sorted(zip(xs, ys, names, strict=True))
            for i, (x, y, n) in enumerate(pts):
                ang = 2 * np.pi * (i * 0.382 % 1.0)  # golden-angle spread of directions
                off = (22 * np.cos(ang), 16 * np.sin(ang))
                ax.annotate(n, (x, y), textcoords="offset points", xytext=off, fontsize=8,
                            ha="center", va="center", color="tab:red", zorder=4,
                            bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none",
                                      alpha=0.8),  # above the markers it would cross
                            arrowprops=dict(arrowstyle="-", color="tab:red", lw=0.5))
        allv += xs + ys
    if allv:
        lo, hi = min(allv) - 3, max(allv) + 3
        ax.plot([lo, hi], [lo, hi], "k:", lw=1, label="ours = paper")
        ax.set_xlim(lo, hi)
        ax.set_ylim(lo, hi)
    ax.set_xlabel("paper: test accuracy (%)")
    ax.set_ylabel("re-run: test accuracy (%), mean over splits")
    ax.set_title("Table 1: paper vs re-run")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=9, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_rank(ucirank: dict, reading: str, taus, path: str) -> str:
    """rank(F) against tau: the paper's (dashed) and ours (solid), one panel per data set."""
    # start-up: matplotlib (optional dependency, the report extra) only for figures
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # start-up: as above

    names = list(ucirank)
    ncol = min(5, len(names))
    nrow = int(np.ceil(len(names) / ncol))
    fig, axs = plt.subplots(nrow, ncol, figsize=(3.0 * ncol, 2.8 * nrow), squeeze=False)
    xs = np.arange(len(taus))
    ptaus = [f"{t:g}" for t in paper.TAUS]
    for ax, name in zip(axs.ravel(), names, strict=False):
        ours = [ucirank[name][reading][f"{t:g}"]["rank"]["mean"] for t in taus]
        pap = [paper.UCIRANK[name][ptaus.index(f"{t:g}")][2] if f"{t:g}" in ptaus else np.nan
               for t in taus]
        ax.semilogy(xs, ours, "o-", color="tab:red", label="ours")
        ax.semilogy(xs, pap, "s--", color="tab:blue", label="paper")
        ax.set_xticks(xs, [f"{t:g}" for t in taus], fontsize=8)
        ax.set_title(name, fontsize=10)
        ax.grid(alpha=0.3)
    for ax in axs[-1]:
        ax.set_xlabel("tau")
    for ax in axs.ravel()[len(names):]:
        ax.axis("off")
    axs[0, 0].legend(fontsize=8)
    axs[0, 0].set_ylabel("rank(F)")
    fig.suptitle("Table 5: rank(F) against tau (x axis), paper vs re-run", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def make_figures(out: str, tables: dict, conv: dict | None, reading_label: str, taus
                 ) -> dict[str, str]:
    """Write every figure that has data; returns name -> path."""
    paths = {}
    if conv:
        paths["conv"] = plot_conv(conv, os.path.join(out, "fig_conv.png"))
    if tables["socmkl"]:
        paths["socmkl"] = plot_socmkl(tables["socmkl"], os.path.join(out, "fig_socmkl.png"))
    if tables["ucirank"]:
        paths["ucirank"] = plot_rank(tables["ucirank"], reading_label, taus,
                                     os.path.join(out, "fig_ucirank.png"))
    return paths
