"""Table 5: DANK's test accuracy and rank(F) against the nuclear-norm weight tau.

One entry per classification set and reading (:func:`aggregate`), the paper's six claims about
tau (:func:`verdicts`) and the report's section (:func:`render`). The ``(sigma, C)`` chosen at
``tau = proto.tau`` is kept for every tau. Conventions: :mod:`._common`.
"""

from __future__ import annotations

import numpy as np

from .. import paper
from ..protocol import Protocol
from ._common import (
    COUNT_RULE,
    READING_LABEL,
    _by_split,
    _count_verdict,
    _fmt,
    _n_uncertified,
    _paired,
    _tau_acc,
    _tau_rec,
    _v,
    mean_std,
    paired_ttest,
    significantly,
)

__all__ = ["aggregate", "render", "verdicts"]


def aggregate(records: dict, proto: Protocol, name: str) -> dict:
    """``{reading label: {tau: stats}}`` of data set ``name``: test accuracy, rank(F) (MATLAB's
    default threshold and ``1e-6 lambda_max``), the paired t-test against ``tau = proto.tau``
    and the number of uncertified solves."""
    tau0 = proto.tau
    rank = {}
    for rd in proto.readings:
        dank = _by_split(records, name, f"dank-{rd}")
        per_tau = {}
        for tau in proto.taus:
            acc = mean_std([_tau_acc(x, tau, "test_acc") for x in dank.values()])
            rk = mean_std([(_tau_rec(x, tau) or {}).get("rank") for x in dank.values()])
            rk6 = mean_std([(_tau_rec(x, tau) or {}).get("rank_1e-6")
                            for x in dank.values()])
            a, b = _paired(dank, dank, lambda x, t=tau: _tau_acc(x, t, "test_acc"),
                           lambda x: _tau_acc(x, tau0, "test_acc"))
            per_tau[f"{tau:g}"] = dict(
                test=acc, rank=rk, rank_1e6=rk6, vs_tau0=paired_ttest(a, b),
                uncertified=_n_uncertified(dank.values(), tau))
        rank[READING_LABEL[rd]] = per_tau
    return rank


def verdicts(tables: dict, proto: Protocol) -> list[dict]:
    """The claims of Table 5 that the run's taus allow (tau = 0 loses accuracy, rank
    <= 17, the rank jumps at tau = 0, decreases in tau, robust up to 0.1, tau = 1 worse,
    tau = 0.01 best)."""
    V = []
    rk = tables["ucirank"]
    tau_s = f"{proto.tau:g}"
    lab = READING_LABEL[proto.readings[0]]
    names = [k for k in rk if rk[k][lab][tau_s]["test"]["n"]]
    have = set(rk[names[0]][lab]) if names else set()
    if names and "0" in have:
        V.append(_tau0_verdict(rk, lab, names))
    if names:
        V.append(_rank_verdict(rk, lab, names, tau_s))
    if names and "0" in have:
        pj = [k for k in rk if paper.UCIRANK[k][0][2] >= 3 * paper.UCIRANK[k][2][2]]
        jump = [k for k in names if rk[k][lab]["0"]["rank"]["mean"]
                >= 3 * rk[k][lab][tau_s]["rank"]["mean"]]
        V.append(_v("UCIrank-jump", "UCIrank",
                    "rank(F) jumps when the nuclear norm is dropped (tau = 0 vs 0.01)",
                    f"rank(tau=0) >= 3 x rank(tau=0.01) on {len(pj)}/{len(rk)}"
                    + (" (e.g. diabetic 340 vs 5)" if "diabetic" in rk else ""),
                    f"{len(jump)}/{len(names)}" + (
                        f" (e.g. diabetic {rk['diabetic'][lab]['0']['rank']['mean']:.0f} vs "
                        f"{rk['diabetic'][lab][tau_s]['rank']['mean']:.1f})"
                        if "diabetic" in names else ""),
                    _count_verdict(len(jump), len(pj), len(names)),
                    COUNT_RULE))
    if names:
        mono = [k for k in names if all(
            rk[k][lab][f"{a:g}"]["rank"]["mean"] >= rk[k][lab][f"{b:g}"]["rank"]["mean"] - 1e-9
            for a, b in zip(proto.taus[:-1], proto.taus[1:], strict=True))]
        V.append(_v("UCIrank-monotone", "UCIrank", "rank(F) decreases as tau grows",
                    f"non-increasing on {len(rk)}/{len(rk)}", f"{len(mono)}/{len(names)}",
                    _count_verdict(len(mono), len(names), len(names)),
                    "REPRODUCED: mean rank non-increasing in tau on every set"))
    V += _tau_range_verdicts(rk, lab, names, have, proto, tau_s)
    return V


def _tau0_verdict(rk: dict, lab: str, names: list[str]) -> dict:
    """tau = 0 loses accuracy against tau = 0.01, significantly on 8 of 10 sets."""
    lose0 = [k for k in names if significantly(rk[k][lab]["0"]["vs_tau0"], -1)]
    p0 = [k for k in rk if paper.UCIRANK[k][0][3]]
    loss = [paper.UCIRANK[k][2][0] - paper.UCIRANK[k][0][0] for k in rk]
    ours_loss = [-rk[k][lab]["0"]["vs_tau0"]["mean_diff"] for k in names]
    return _v("UCIrank-tau0", "UCIrank",
              "tau = 0 loses accuracy against tau = 0.01, significantly on 8 of 10 sets",
              f"{len(p0)}/{len(rk)} significant ({', '.join(p0)}); mean loss "
              f"{np.mean(loss):.1f} points",
              f"{len(lose0)}/{len(names)} significant ({', '.join(lose0) or 'none'}); "
              f"mean loss {np.mean(ours_loss) if ours_loss else float('nan'):.2f} points",
              _count_verdict(len(lose0), len(p0), len(names)),
              COUNT_RULE)


def _rank_verdict(rk: dict, lab: str, names: list[str], tau_s: str) -> dict:
    """rank(F) at tau = 0.01 is <= 17 on every set."""
    r001 = {k: rk[k][lab][tau_s]["rank"] for k in names}
    mx = max((r["mean"] for r in r001.values()), default=float("nan"))
    over = [k for k, r in r001.items() if r["mean"] > 17]
    return _v("UCIrank-rank", "UCIrank", "rank(F) at tau = 0.01 is <= 17 on every set",
              f"max {max(paper.UCIRANK[k][2][2] for k in rk)} over these sets",
              f"max of the per-set means {mx:.1f}; above 17: {', '.join(over) or 'none'}",
              "NOT RUN" if not names else ("REPRODUCED" if not over else
                                           ("PARTLY" if len(over) < len(names)
                                            else "NOT REPRODUCED")),
              "REPRODUCED: every per-set mean rank <= 17")


def _tau_range_verdicts(rk: dict, lab: str, names: list[str], have: set, proto: Protocol,
                        tau_s: str) -> list[dict]:
    """Robust from tau = 0.01 to 0.1; tau = 1 significantly worse; tau = 0.01 best."""
    V = []
    if names and "0.1" in have:
        p01 = [k for k in rk if paper.UCIRANK[k][3][3]]
        d01 = [k for k in names if significantly(rk[k][lab]["0.1"]["vs_tau0"], 1)
               or significantly(rk[k][lab]["0.1"]["vs_tau0"], -1)]
        V.append(_v("UCIrank-robust", "UCIrank",
                    "robust from tau = 0.01 to 0.1: significantly different on few sets "
                    "(paper: heart and glass)",
                    f"{len(p01)}/{len(rk)} ({', '.join(p01)})",
                    f"{len(d01)}/{len(names)} ({', '.join(d01) or 'none'})",
                    "REPRODUCED" if len(d01) <= len(p01) else "NOT REPRODUCED",
                    "REPRODUCED: significant differences on at most as many sets"))
    if names and "1" in have:
        p1 = [k for k in rk if paper.UCIRANK[k][4][3]
              and paper.UCIRANK[k][4][0] < paper.UCIRANK[k][2][0]]
        w1 = [k for k in names if significantly(rk[k][lab]["1"]["vs_tau0"], -1)]
        V.append(_v("UCIrank-tau1", "UCIrank",
                    "tau = 1 is significantly worse than tau = 0.01 on most sets",
                    f"{len(p1)}/{len(rk)} ({', '.join(p1)})",
                    f"{len(w1)}/{len(names)} ({', '.join(w1) or 'none'})",
                    _count_verdict(len(w1), len(p1), len(names)),
                    COUNT_RULE))
    if names:
        pb = [k for k in rk if paper.UCIRANK[k][2][0] >= max(c[0] for c in paper.UCIRANK[k])]
        best = [k for k in names if rk[k][lab][tau_s]["test"]["mean"] >= max(
            rk[k][lab][f"{t:g}"]["test"]["mean"] for t in proto.taus) - 1e-9]
        V.append(_v("UCIrank-best", "UCIrank",
                    "tau = 0.01 has the best mean test accuracy of the five values on most sets",
                    f"{len(pb)}/{len(rk)}", f"{len(best)}/{len(names)}",
                    _count_verdict(len(best), len(pb), len(names)),
                    COUNT_RULE))
    return V


def render(res: dict) -> list[str]:
    """The report's Table 5 section (``paper acc (rank) / ours acc (rank)``), the rank
    with a relative threshold, and the other readings; no lines without classification sets."""
    proto, tb = res["protocol"], res["tables"]
    if not tb["ucirank"]:
        return []
    lab = READING_LABEL[proto["readings"][0]]
    alt = [READING_LABEL[r] for r in proto["readings"][1:]]
    tau_s = f"{proto['tau']:g}"
    taus = proto["taus"]
    header = ["| set | " + " | ".join(f"tau = {t:g}" for t in taus) + " |",
              "|---" * (1 + len(taus)) + "|"]
    L = ["## Table 5: test accuracy (%) and rank(F) against tau", "",
         f"Reading: {lab}; (sigma, C) of tau = {tau_s} kept for every tau. Cell: "
         "`paper acc (rank) / ours acc (rank)`; rank(F) = MATLAB's default numerical rank "
         "(mean over splits and, for multi-class sets, over the one-vs-one problems); "
         "`•` significantly different from tau = 0.01.", ""] + header
    for name, rr in tb["ucirank"].items():
        L.append("| " + " | ".join([name] + _paper_and_ours(name, rr[lab], taus, tau_s)) + " |")
    L += ["", "rank(F) with a relative threshold instead (eigenvalues > 1e-6 lambda_max(F)), "
          "mean over splits:", ""] + header
    for name, rr in tb["ucirank"].items():
        L.append(f"| {name} | " + " | ".join(
            f"{rr[lab][f'{t:g}']['rank_1e6']['mean']:.1f}" for t in taus) + " |")
    for a in alt:
        L += ["", f"Same table for the other reading, {a} (ours only):", ""] + header
        for name, rr in tb["ucirank"].items():
            row = rr[a]
            L.append(f"| {name} | " + " | ".join(
                f"{_fmt(row[f'{t:g}']['test'])} ({row[f'{t:g}']['rank']['mean']:.1f})"
                + ("•" if f"{t:g}" != tau_s and (
                    significantly(row[f"{t:g}"]["vs_tau0"], 1)
                    or significantly(row[f"{t:g}"]["vs_tau0"], -1)) else "")
                for t in taus) + " |")
    L.append("")
    return L


def _paper_and_ours(name: str, row: dict, taus, tau_s: str) -> list[str]:
    """One cell per tau: the paper's ``acc (rank)`` (``-`` for a tau it did not print), ours,
    ``•`` when significantly different from ``tau_s``, ``†`` for uncertified solves."""
    tix = {f"{t:g}": i for i, t in enumerate(paper.TAUS)}
    cells = []
    for t in taus:
        ts_ = f"{t:g}"
        o = row[ts_]
        if ts_ in tix:
            pm, psd, prk, pb = paper.UCIRANK[name][tix[ts_]]
            ps = f"{pm:.1f}±{psd:.1f} ({prk}){'•' if pb else ''}"
        else:
            ps = "-"
        ob = ts_ != tau_s and (significantly(o["vs_tau0"], 1)
                               or significantly(o["vs_tau0"], -1))
        u = " †" if o["uncertified"] else ""
        cells.append(f"{ps} / {_fmt(o['test'])} ({o['rank']['mean']:.1f})"
                     f"{'•' if ob else ''}{u}")
    return cells
