"""Aggregation of the cells into the paper's tables, paired t-tests, verdicts, report.md.

Conventions
-----------
* mean +- std over the repetitions; std with ``ddof = 1`` (MATLAB's ``std``, the paper's tool).
* Significance: two-sided paired t-test (:func:`scipy.stats.ttest_rel`) on the per-split
  values of the same splits, at ``ALPHA = 0.05``; "significantly better" = ``p < 0.05`` and
  the mean difference in the better direction. A constant non-zero difference (zero variance,
  up to round-off) counts as significant, a zero difference as not.
* Verdicts: REPRODUCED / PARTLY / NOT REPRODUCED (NOT RUN when there are no numbers); the rule
  of every claim is printed beside it.
* Cell marks: ``•`` significant (as in the paper), ``†`` at least one final DANK solve of the
  cell did not reach a certified ``tol`` (status other than "converged"), ``‡`` DANK-SVR used
  SVR-CV's ``(sigma, C)`` because its own CV was not run.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter

import numpy as np

from . import paper
from .protocol import Protocol

__all__ = [
    "ALPHA",
    "NORMALISATIONS",
    "aggregate",
    "mean_std",
    "paired_ttest",
    "render_report",
    "verdicts",
]

ALPHA = 0.05
COUNT_RULE = ("REPRODUCED: on at least as many sets as the paper; PARTLY: on at least half as "
              "many; else NOT REPRODUCED")
READING_LABEL = {"cv": "DANK (own CV)", "svm": "DANK (SVM-CV's sigma, C)"}

#: candidate normalisations of the regression error (which one makes SVR-CV comparable?)
NORMALISATIONS = {
    "rel": "sum (g - y)^2 / sum (y - mean y)^2  (the paper's printed formula, = 1 - R^2)",
    "sqrt_rel": "sqrt of the above  (= RMSE / std(y))",
    "rmse_range": "RMSE / (max y - min y)  (RMSE of targets min-max scaled to [0, 1])",
    "mse_range2": "MSE / (max y - min y)^2  (MSE of targets min-max scaled to [0, 1])",
    "rmse": "RMSE on the original scale",
}


# ------------------------------------------------------------------------------ statistics
def mean_std(values) -> dict:
    """Mean, standard deviation (ddof = 1; 0 for a single value), count and the values."""
    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], dtype=float)
    if v.size == 0:
        return dict(mean=float("nan"), std=float("nan"), n=0, values=[])
    return dict(mean=float(v.mean()), std=float(v.std(ddof=1)) if v.size > 1 else 0.0,
                n=int(v.size), values=v.tolist())


def paired_ttest(a, b) -> dict:
    """Two-sided paired t-test of ``a`` against ``b`` (same splits, same order).

    Parameters
    ----------
    a, b : sequence of float
        Per-split values; entry ``k`` of both belongs to split ``k``.

    Returns
    -------
    dict
        ``n``, ``mean_diff`` (``mean(a - b)``), ``t``, ``p`` (nan for ``n < 2``).
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired_ttest needs two 1-D arrays of the same length, got "
                         f"{a.shape} and {b.shape}")
    d = a - b
    n = int(d.size)
    if n < 2:
        return dict(n=n, mean_diff=float(d.mean()) if n else float("nan"), t=float("nan"),
                    p=float("nan"))
    md = float(d.mean())
    sd = float(d.std(ddof=1))
    scale = float(max(np.abs(a).max(), np.abs(b).max()))
    if sd <= 1e-12 * scale:  # a constant difference up to round-off (e.g. 0.80 - 0.05 - 0.75)
        return dict(n=n, mean_diff=md, t=0.0 if md == 0 else math.copysign(math.inf, md),
                    p=1.0 if md == 0 else 0.0)
    # start-up: scipy.stats (seconds to import) only for the t-test
    from scipy.stats import ttest_rel

    res = ttest_rel(a, b)
    return dict(n=n, mean_diff=md, t=float(res.statistic), p=float(res.pvalue))


def significantly(test: dict, direction: int = 1) -> bool:
    """``p < ALPHA`` with the mean difference of sign ``direction``."""
    p = test.get("p", float("nan"))
    return bool(np.isfinite(p) and p < ALPHA and direction * test["mean_diff"] > 0)


def _paired(recs_a: dict, recs_b: dict, get_a, get_b):
    """Values of two methods on the splits where both finished."""
    splits = sorted(set(recs_a) & set(recs_b))
    a, b = [], []
    for s in splits:
        va, vb = get_a(recs_a[s]), get_b(recs_b[s])
        if va is not None and vb is not None:
            a.append(va)
            b.append(vb)
    return a, b


def _by_split(records: dict, dataset: str, method: str) -> dict[int, dict]:
    return {r["split"]: r for r in records.values()
            if r["dataset"] == dataset and r["method"] == method and r.get("status") == "ok"}


def reg_metric(stats: dict, kind: str, y_range: float) -> float:
    """One of :data:`NORMALISATIONS` from ``sse``, ``sst``, ``n``."""
    sse, sst, n = stats["sse"], stats["sst"], stats["n"]
    if kind == "rel":
        return sse / sst
    if kind == "sqrt_rel":
        return math.sqrt(sse / sst)
    if kind == "rmse_range":
        return math.sqrt(sse / n) / y_range
    if kind == "mse_range2":
        return sse / n / y_range**2
    if kind == "rmse":
        return math.sqrt(sse / n)
    raise ValueError(f"unknown normalisation {kind!r}")


# ------------------------------------------------------------------------------ aggregation
def _tau_rec(rec: dict, tau: float) -> dict | None:
    return rec.get("taus", {}).get(f"{tau:g}")


def aggregate(records: dict, proto: Protocol, cls_sets, reg_sets, ds_info: dict) -> dict:
    """Tables from the cell records.

    Parameters
    ----------
    records : dict
        ``{cell key: record}`` of :func:`.runner.run_cells`.
    proto : Protocol
    cls_sets, reg_sets : sequence of str
    ds_info : dict
        Per data set: ``n``, ``d``, ``y_range`` (regression), ``note``.

    Returns
    -------
    dict
        ``socmkl``, ``ucirank``, ``ucireg``, ``certification``, ``warnings``, ``errors``.
    """
    out = {"socmkl": {}, "ucirank": {}, "ucireg": {}, "certification": [], "warnings": {},
           "errors": []}
    primary = proto.readings[0]
    tau0 = proto.tau
    for name in cls_sets:
        svm = _by_split(records, name, "svm-cv")
        mkl = _by_split(records, name, "mkl-uniform")
        dank = {r: _by_split(records, name, f"dank-{r}") for r in proto.readings}
        row = {"SVM-CV": _acc_stats(svm, lambda r: r), "MKL-uniform": _acc_stats(mkl, lambda r: r)}
        for r in proto.readings:
            row[READING_LABEL[r]] = _acc_stats(dank[r], lambda x: _tau_rec(x, tau0))
        row["DANK"] = row[READING_LABEL[primary]]
        tests = {}
        for rd in proto.readings:
            for base, recs in (("SVM-CV", svm), ("MKL-uniform", mkl)):
                a, b = _paired(dank[rd], recs, lambda x: _tau_acc(x, tau0, "test_acc"),
                               lambda x: 100 * x["test_acc"])
                tests[f"{READING_LABEL[rd]} vs {base}"] = paired_ttest(a, b)
        a, b = _paired(mkl, svm, lambda x: 100 * x["test_acc"], lambda x: 100 * x["test_acc"])
        tests["MKL-uniform vs SVM-CV"] = paired_ttest(a, b)
        row["tests"] = tests
        row["params"] = {
            "SVM-CV": _param_modes(svm), "MKL-uniform": _param_modes(mkl, sigma=False),
            **{READING_LABEL[r]: _param_modes(dank[r]) for r in proto.readings}}
        out["socmkl"][name] = row
        rank = {}
        for rd in proto.readings:
            per_tau = {}
            for tau in proto.taus:
                acc = mean_std([_tau_acc(x, tau, "test_acc") for x in dank[rd].values()])
                rk = mean_std([(_tau_rec(x, tau) or {}).get("rank") for x in dank[rd].values()])
                rk6 = mean_std([(_tau_rec(x, tau) or {}).get("rank_1e-6")
                                for x in dank[rd].values()])
                a, b = _paired(dank[rd], dank[rd], lambda x, t=tau: _tau_acc(x, t, "test_acc"),
                               lambda x: _tau_acc(x, tau0, "test_acc"))
                per_tau[f"{tau:g}"] = dict(
                    test=acc, rank=rk, rank_1e6=rk6, vs_tau0=paired_ttest(a, b),
                    uncertified=_n_uncertified(dank[rd].values(), tau))
            rank[READING_LABEL[rd]] = per_tau
        out["ucirank"][name] = rank
    for name in reg_sets:
        yr = ds_info[name]["y_range"]
        svr = _by_split(records, name, "svr-cv")
        dcv = _by_split(records, name, "dank-svr-cv")
        dsv = _by_split(records, name, "dank-svr-svm")
        readings = {}
        for rd in proto.readings:
            if rd == "cv":
                recs, fallback = {}, 0
                for s in set(dcv) | set(dsv):
                    if s in dcv and "skipped" not in dcv[s]:
                        recs[s] = dcv[s]
                    elif s in dsv:
                        recs[s] = dsv[s]
                        fallback += 1
            else:
                recs, fallback = dsv, 0
            readings[rd] = (recs, fallback)
        row = {"SVR-CV": _reg_stats(svr, yr)}
        for rd, (recs, fb) in readings.items():
            row[READING_LABEL[rd]] = _reg_stats(recs, yr)
            row[READING_LABEL[rd]]["fallback_svr_params"] = fb
            row[READING_LABEL[rd]]["uncertified"] = sum(not r.get("certified", False)
                                                        for r in recs.values())
        row["DANK"] = row[READING_LABEL[primary]]
        tests = {}
        for rd, (recs, _) in readings.items():
            for part in ("test", "train"):
                a, b = _paired(recs, svr, lambda x, p=part, r=yr: reg_metric(x[p], "rel", r),
                               lambda x, p=part, r=yr: reg_metric(x[p], "rel", r))
                tests[f"{READING_LABEL[rd]} vs SVR-CV ({part})"] = paired_ttest(a, b)
        row["tests"] = tests
        row["params"] = {"SVR-CV": _param_modes(svr),
                         **{READING_LABEL[rd]: _param_modes(recs)
                            for rd, (recs, _) in readings.items()}}
        row["y_range"] = yr
        out["ucireg"][name] = row
    # certification, warnings, errors
    for key, r in sorted(records.items()):
        if r.get("status") != "ok":
            out["errors"].append(dict(cell=key, error=r.get("error", ""),
                                      traceback=r.get("traceback", "")))
        for cat, k in r.get("warnings", {}).items():
            w = out["warnings"].setdefault(r["method"], {})
            w[cat] = w.get(cat, 0) + k
    out["warning_examples"] = {}
    for r in records.values():
        for cat, msg in r.get("warning_examples", {}).items():
            out["warning_examples"].setdefault(cat, msg)
    out["certification"] = _certification(records)
    return out


def _tau_acc(rec: dict, tau: float, key: str):
    t = _tau_rec(rec, tau)
    return None if t is None else 100 * t[key]


def _acc_stats(recs: dict, pick) -> dict:
    train, test, unc = [], [], 0
    for r in recs.values():
        x = pick(r)
        if x is None:
            continue
        train.append(100 * x["train_acc"])
        test.append(100 * x["test_acc"])
        unc += 0 if x.get("certified", True) else 1
    return dict(train=mean_std(train), test=mean_std(test), uncertified=unc)


def _n_uncertified(recs, tau) -> int:
    return sum(0 if (_tau_rec(r, tau) or {}).get("certified", True) else 1 for r in recs)


def _reg_stats(recs: dict, y_range: float) -> dict:
    out = {}
    for part in ("train", "test"):
        out[part] = {k: mean_std([reg_metric(r[part], k, y_range) for r in recs.values()])
                     for k in NORMALISATIONS}
    return out


def _param_modes(recs: dict, sigma: bool = True) -> dict:
    """The chosen ``(C, sigma)`` of every split, and the most frequent one."""
    ps = [(r.get("C"), r.get("sigma") if sigma else None) for r in recs.values()]
    if not ps:
        return {}
    mode, k = Counter(ps).most_common(1)[0]
    return dict(mode=list(mode), mode_count=k, all=[list(p) for p in ps])


def _certification(records: dict) -> list[dict]:
    """Per (data set, method): final DANK solves certified, and the CV solves' tally."""
    rows: dict[tuple, dict] = {}
    for r in records.values():
        if r.get("status") != "ok" or not r["method"].startswith("dank"):
            continue
        row = rows.setdefault((r["dataset"], r["method"]), dict(
            dataset=r["dataset"], method=r["method"], final_solves=0, final_converged=0,
            final_max_rel_gap=0.0, final_statuses={}, cv_solves=0, cv_converged=0,
            cv_max_rel_gap=0.0, cv_failed_fits=0, cv_failures=[]))
        fits = list(r["taus"].values()) if "taus" in r else ([r] if "solves" in r else [])
        for f in fits:
            for s in f["solves"]:
                row["final_solves"] += 1
                row["final_converged"] += s["status"] == "converged"
                row["final_statuses"][s["status"]] = row["final_statuses"].get(s["status"], 0) + 1
                row["final_max_rel_gap"] = max(row["final_max_rel_gap"], s["rel_gap"])
        cvc = r.get("cv_certificates")
        if cvc:
            row["cv_solves"] += cvc["n_solves"]
            row["cv_converged"] += cvc["n_converged"]
            row["cv_max_rel_gap"] = max(row["cv_max_rel_gap"], cvc["max_rel_gap"])
            row["cv_failed_fits"] += cvc.get("n_failed_fits", 0)
            row["cv_failures"] += [dict(f, split=r["split"]) for f in cvc.get("failures", [])]
    return [rows[k] for k in sorted(rows)]


# ---------------------------------------------------------------------------------- verdicts
def _v(vid, table, claim, paper_s, ours_s, verdict, rule):
    return dict(id=vid, table=table, claim=claim, paper=paper_s, ours=ours_s, verdict=verdict,
                rule=rule)


def _fmt(ms: dict, digits: int = 1) -> str:
    if not ms or ms.get("n", 0) == 0:
        return "n/a"
    return f"{ms['mean']:.{digits}f}±{ms['std']:.{digits}f}"


def _p(test: dict) -> str:
    p = test.get("p", float("nan"))
    return "p=n/a" if not np.isfinite(p) else f"p={p:.2g}"


def _count_verdict(k: int, target: int, total: int) -> str:
    """Count claims: REPRODUCED at the paper's count, PARTLY from half of it, else NOT."""
    if total == 0:
        return "NOT RUN"
    if k >= min(target, total):
        return "REPRODUCED"
    return "PARTLY" if k > 0 and 2 * k >= min(target, total) else "NOT REPRODUCED"


def verdicts(tables: dict, proto: Protocol, conv: dict | None = None,
             large: list | None = None) -> list[dict]:
    """One verdict per empirical claim of the paper (see the module docstring)."""
    V = []
    soc = tables["socmkl"]
    tau_s = f"{proto.tau:g}"
    # ---- Table SOCMKL, per set
    sig_svm, better_svm, sig_both, worse_svm = [], [], [], []
    for name, row in soc.items():
        pp = paper.SOCMKL[name]
        d, s, m = row["DANK"]["test"], row["SVM-CV"]["test"], row["MKL-uniform"]["test"]
        lab = READING_LABEL[proto.readings[0]]
        ts, tm = row["tests"][f"{lab} vs SVM-CV"], row["tests"][f"{lab} vs MKL-uniform"]
        if d["n"] == 0 or s["n"] == 0:
            V.append(_v(f"SOCMKL-{name}", "SOCMKL", f"DANK vs baselines on {name}", "", "",
                        "NOT RUN", "no finished cells"))
            continue
        sv, sm = significantly(ts), significantly(tm)
        if sv:
            sig_svm.append(name)
        if significantly(ts, -1):
            worse_svm.append(name)
        if d["mean"] >= s["mean"]:
            better_svm.append(name)
        if sv and sm:
            sig_both.append(name)
        paper_s = (f"DANK {pp['DANK'][1][0]} vs SVM-CV {pp['SVM-CV'][1][0]}, "
                   f"MKL {pp['MKL-uniform'][1][0]}" + (" •" if pp["bullet"] else ""))
        ours_s = (f"DANK {_fmt(d)} vs SVM-CV {_fmt(s)} ({_p(ts)}), MKL {_fmt(m)} ({_p(tm)})")
        if pp["bullet"]:
            claim = f"DANK significantly better than SVM-CV and MKL-uniform on {name} (5%)"
            if sv and sm:
                verdict = "REPRODUCED"
            elif (d["mean"] > s["mean"] and d["mean"] > m["mean"]) or sv:
                verdict = "PARTLY"
            else:
                verdict = "NOT REPRODUCED"
            rule = ("REPRODUCED: significantly better than both; PARTLY: better mean than both "
                    "or significantly better than SVM-CV only; else NOT REPRODUCED")
        else:
            claim = f"DANK at least as accurate as SVM-CV on {name} (no significance claimed)"
            if d["mean"] >= s["mean"]:
                verdict = "REPRODUCED"
            elif not significantly(ts, -1):
                verdict = "PARTLY"
            else:
                verdict = "NOT REPRODUCED"
            rule = ("REPRODUCED: mean >= SVM-CV's; PARTLY: lower but not significantly; "
                    "NOT REPRODUCED: significantly lower")
        V.append(_v(f"SOCMKL-{name}", "SOCMKL", claim, paper_s, ours_s, verdict, rule))
    n = len([r for r in soc.values() if r["DANK"]["test"]["n"]])
    if soc:
        paper_sig = [k for k in soc if paper.SOCMKL[k]["bullet"]]
        V.append(_v("SOCMKL-count", "SOCMKL",
                    "DANK significantly better than SVM-CV on 6 of the 10 sets",
                    f"{len(paper_sig)}/{len(soc)} of these sets: {', '.join(paper_sig)}",
                    f"{len(sig_svm)}/{n}: {', '.join(sig_svm) or 'none'} (significantly "
                    f"worse on {len(worse_svm)}: {', '.join(worse_svm) or 'none'})",
                    _count_verdict(len(sig_svm), len(paper_sig), n),
                    COUNT_RULE))
        paper_ge = [k for k in soc if paper.SOCMKL[k]["DANK"][1][0]
                    >= paper.SOCMKL[k]["SVM-CV"][1][0]]
        V.append(_v("SOCMKL-mean", "SOCMKL",
                    "DANK's mean test accuracy >= SVM-CV's on every set",
                    f"{len(paper_ge)}/{len(soc)}", f"{len(better_svm)}/{n}: "
                    f"lower on {', '.join(k for k in soc if k not in better_svm) or 'none'}",
                    _count_verdict(len(better_svm), len(paper_ge), n),
                    COUNT_RULE))
        # MKL-uniform overfits
        pk = [k for k in soc if paper.SOCMKL[k]["MKL-uniform"][1][0]
              < paper.SOCMKL[k]["SVM-CV"][1][0]]
        ok = [k for k in soc if soc[k]["MKL-uniform"]["test"]["n"] and soc[k]["SVM-CV"]["test"]["n"]
              and soc[k]["MKL-uniform"]["test"]["mean"] < soc[k]["SVM-CV"]["test"]["mean"]]
        V.append(_v("SOCMKL-mkl", "SOCMKL",
                    "MKL-uniform generalises worse than SVM-CV (lower test accuracy) on most sets",
                    f"{len(pk)}/{len(soc)}: {', '.join(pk) or 'none'}", f"{len(ok)}/{n}: "
                    f"{', '.join(ok) or 'none'}",
                    "REPRODUCED" if 2 * len(ok) > n else ("PARTLY" if ok else "NOT REPRODUCED"),
                    "REPRODUCED: on more than half of the sets; PARTLY: on some"))
        pk = [k for k in soc if paper.SOCMKL[k]["DANK"][0][0] > paper.SOCMKL[k]["SVM-CV"][0][0]]
        ok = [k for k in soc if soc[k]["DANK"]["train"]["n"] and soc[k]["DANK"]["train"]["mean"]
              > soc[k]["SVM-CV"]["train"]["mean"]]
        V.append(_v("SOCMKL-flex", "SOCMKL",
                    "DANK fits the training data better than SVM-CV (flexibility)",
                    f"higher training accuracy on {len(pk)}/{len(soc)}",
                    f"{len(ok)}/{n}", _count_verdict(len(ok), len(pk), n),
                    COUNT_RULE))
    # ---- Table UCIrank
    rk = tables["ucirank"]
    lab = READING_LABEL[proto.readings[0]]
    names = [k for k in rk if rk[k][lab][tau_s]["test"]["n"]]
    have = set(rk[names[0]][lab]) if names else set()
    if names and "0" in have:
        lose0 = [k for k in names if significantly(rk[k][lab]["0"]["vs_tau0"], -1)]
        p0 = [k for k in rk if paper.UCIRANK[k][0][3]]
        loss = [paper.UCIRANK[k][2][0] - paper.UCIRANK[k][0][0] for k in rk]
        ours_loss = [-rk[k][lab]["0"]["vs_tau0"]["mean_diff"] for k in names]
        V.append(_v("UCIrank-tau0", "UCIrank",
                    "tau = 0 loses accuracy against tau = 0.01, significantly on 8 of 10 sets",
                    f"{len(p0)}/{len(rk)} significant ({', '.join(p0)}); mean loss "
                    f"{np.mean(loss):.1f} points",
                    f"{len(lose0)}/{len(names)} significant ({', '.join(lose0) or 'none'}); "
                    f"mean loss {np.mean(ours_loss) if ours_loss else float('nan'):.2f} points",
                    _count_verdict(len(lose0), len(p0), len(names)),
                    COUNT_RULE))
    if names:
        r001 = {k: rk[k][lab][tau_s]["rank"] for k in names}
        mx = max((r["mean"] for r in r001.values()), default=float("nan"))
        over = [k for k, r in r001.items() if r["mean"] > 17]
        V.append(_v("UCIrank-rank", "UCIrank", "rank(F) at tau = 0.01 is <= 17 on every set",
                    f"max {max(paper.UCIRANK[k][2][2] for k in rk)} over these sets",
                    f"max of the per-set means {mx:.1f}; above 17: {', '.join(over) or 'none'}",
                    "NOT RUN" if not names else ("REPRODUCED" if not over else
                                                 ("PARTLY" if len(over) < len(names)
                                                  else "NOT REPRODUCED")),
                    "REPRODUCED: every per-set mean rank <= 17"))
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
    # ---- Table UCIreg
    reg = tables["ucireg"]
    if reg:
        lower_test, lower_train, names, sig_lower, sig_higher = [], [], [], [], []
        for name, row in reg.items():
            pp = paper.UCIREG[name]
            d, s = row["DANK"]["test"]["rel"], row["SVR-CV"]["test"]["rel"]
            if d["n"] == 0 or s["n"] == 0:
                V.append(_v(f"UCIreg-{name}", "UCIreg", f"DANK-SVR vs SVR-CV on {name}", "", "",
                            "NOT RUN", "no finished cells"))
                continue
            names.append(name)
            t = row["tests"][f"{lab} vs SVR-CV (test)"]
            if d["mean"] < s["mean"]:
                lower_test.append(name)
            if significantly(t, -1):
                sig_lower.append(name)
            if significantly(t, 1):
                sig_higher.append(name)
            if row["DANK"]["train"]["rel"]["mean"] < row["SVR-CV"]["train"]["rel"]["mean"]:
                lower_train.append(name)
            pd_, ps = pp["DANK test"][0], pp["SVR-CV test"][0]
            bullet = pp["DANK test"][2]
            mark = " ‡" if row["DANK"].get("fallback_svr_params") else ""
            paper_s = f"DANK {pd_:.3f} vs SVR-CV {ps:.3f}" + (" •" if bullet else "")
            ours_s = f"DANK {_fmt(d, 3)}{mark} vs SVR-CV {_fmt(s, 3)} ({_p(t)})"
            if bullet:
                claim = f"DANK-SVR significantly better than SVR-CV on {name} (5%)"
                verdict = ("REPRODUCED" if significantly(t, -1) else
                           "PARTLY" if d["mean"] < s["mean"] else "NOT REPRODUCED")
                rule = ("REPRODUCED: significantly lower error; PARTLY: lower mean; else NOT "
                        "REPRODUCED")
            else:
                direction = "lower" if pd_ < ps else "higher"
                claim = f"DANK-SVR's test error {direction} than SVR-CV's on {name}"
                same = (d["mean"] < s["mean"]) == (pd_ < ps)
                verdict = "REPRODUCED" if same else ("PARTLY" if not (
                    significantly(t, 1) or significantly(t, -1)) else "NOT REPRODUCED")
                rule = ("REPRODUCED: same direction of the mean difference; PARTLY: opposite "
                        "but not significant; NOT REPRODUCED: significantly opposite")
            V.append(_v(f"UCIreg-{name}", "UCIreg", claim, paper_s, ours_s, verdict, rule))
        pl = [k for k in reg if paper.UCIREG[k]["DANK test"][0] < paper.UCIREG[k]["SVR-CV test"][0]]
        V.append(_v("UCIreg-count", "UCIreg", "DANK-SVR's test error below SVR-CV's on 7 of 8 sets",
                    f"{len(pl)}/{len(reg)}", f"{len(lower_test)}/{len(names)}: "
                    f"{', '.join(lower_test) or 'none'} (significantly lower on "
                    f"{', '.join(sig_lower) or 'none'}; significantly higher on "
                    f"{', '.join(sig_higher) or 'none'})",
                    _count_verdict(len(lower_test), len(pl), len(names)),
                    COUNT_RULE))
        pl = [k for k in reg if paper.UCIREG[k]["DANK train"][0]
              < paper.UCIREG[k]["SVR-CV train"][0]]
        V.append(_v("UCIreg-flex", "UCIreg",
                    "DANK-SVR fits the training data better than SVR-CV (flexibility)",
                    f"lower training error on {len(pl)}/{len(reg)}",
                    f"{len(lower_train)}/{len(names)}",
                    _count_verdict(len(lower_train), len(pl), len(names)),
                    COUNT_RULE))
    if conv:
        V.append(conv_verdict(conv))
    V += large_verdicts(large)
    return V


def conv_verdict(conv: dict) -> dict:
    """Figure conv: the accelerated method (as printed) converges faster than projected gradient."""
    gp, ga = conv["final"]["pgm"]["rel_gap"], conv["final"]["paper"]["rel_gap"]
    hp, ha = conv["final"]["pgm"]["h"], conv["final"]["paper"]["h"]
    fixed = conv["final"].get("paper-ascent", {})
    ours = (f"after {conv['t_max']} iterations: certified rel. gap PG {gp:.2e}, Algorithm ago3 "
            f"as printed {ga:.2e}" + (f", with the ascent sign {fixed['rel_gap']:.2e}"
                                       if fixed else "") + f"; h: PG {hp:.6g}, ago3 {ha:.6g}")
    verdict = "REPRODUCED" if (ga < gp and ha >= hp) else (
        "PARTLY" if fixed and fixed["rel_gap"] < gp else "NOT REPRODUCED")
    return _v("conv", "Figure conv",
              "On heart, Algorithm ago3 (Nesterov) converges faster than projected gradient",
              "faster in H(a, F) and in ||a_t - a_{t-1}|| (figure, no numbers)", ours, verdict,
              "REPRODUCED: the printed ago3 ends with a smaller certified gap and a larger h; "
              "PARTLY: only the sign-corrected ago3 does")


def _num(v, spec: str) -> str:
    """A number of the large-scale table, blank when absent."""
    return "" if not isinstance(v, (int, float)) or isinstance(v, bool) else format(v, spec)


def large_verdicts(large: list | None) -> list[dict]:
    """Table tablarges from ``benchmarks/results/large.json`` (NOT RUN when absent)."""
    out = []
    for ds in ("EEG", "ijcnn1", "covtype"):
        for meth in ("DANK exact", "DANK scalable"):
            pv = paper.LARGE[ds][meth]
            if pv is None:
                continue
            claim = f"{meth} more accurate than SVM-SMO on {ds}"
            ps = f"{pv[0]} vs {paper.LARGE[ds]['SVM-SMO'][0]}"
            rows = [r for r in (large or []) if r.get("dataset") == ds]
            mine = next((r for r in rows if r.get("method") == meth), None)
            smo = next((r for r in rows if r.get("method") == "SVM-SMO"), None)
            if mine is None or smo is None or mine.get("accuracy") is None:
                out.append(_v(f"large-{ds}-{meth}", "tablarges", claim, ps, "not run",
                              "NOT RUN", "benchmarks/results/large.json has no such rows"))
                continue
            a, b = 100 * float(mine["accuracy"]), 100 * float(smo["accuracy"])
            gap = mine.get("rel_gap")
            ours = f"{a:.2f} vs {b:.2f}" + (f" (certified rel. gap {gap:.1e})"
                                            if isinstance(gap, (int, float)) else "")
            out.append(_v(f"large-{ds}-{meth}", "tablarges", claim, ps, ours,
                          "REPRODUCED" if a > b else "NOT REPRODUCED",
                          "REPRODUCED: higher test accuracy (one run; no significance test)"))
    return out


# -------------------------------------------------------------------------------- rendering
def _cell(paper_ms, ours: dict, digits=1, bullet_p=False, bullet_o=False, mark=""):
    pm, psd = paper_ms
    ps = f"{pm:.{digits}f}±{psd:.{digits}f}" + ("•" if bullet_p else "")
    return f"{ps} / {_fmt(ours, digits)}{'•' if bullet_o else ''}{mark}"


def render_report(res: dict) -> str:
    """report.md from the results dictionary written to results.json."""
    proto = res["protocol"]
    tb = res["tables"]
    lab = READING_LABEL[proto["readings"][0]]
    alt = [READING_LABEL[r] for r in proto["readings"][1:]]
    tau_s = f"{proto['tau']:g}"
    L = ["# DANK: the paper's experiments, re-run", ""]
    L += [f"`{res['command']}` -- seed {proto['seed']}, {proto['n_splits']} splits, "
          f"{proto['n_folds']}-fold CV on a {len(proto['sigma_grid'])} x {len(proto['C_grid'])} "
          f"(sigma, C) grid, {res['seconds'] / 60:.1f} min "
          f"({res['n_cells']} cells, {res['n_cached']} from the cache), jobs {res['jobs']}. "
          f"Versions: " + ", ".join(f"{k} {v}" for k, v in res["versions"].items()) + ".", ""]
    L += ["Every cell is `paper / ours` (paper's number first). `•` significant by a two-sided "
          "paired t-test at 5% (paper's bullets as printed; ours computed on the same splits), "
          "`†` a cell with at least one final DANK solve not certified to the requested gap, "
          "`‡` DANK-SVR with SVR-CV's (sigma, C) (its own CV not run).", ""]
    # verdicts
    rules: dict[str, str] = {}
    for v in res["verdicts"]:
        rules.setdefault(v["rule"], f"r{len(rules) + 1}")
    L += ["## Verdicts", "", "| claim | paper | ours | verdict (rule) |", "|---|---|---|---|"]
    for v in res["verdicts"]:
        L.append(f"| {v['claim']} | {v['paper']} | {v['ours']} | **{v['verdict']}** "
                 f"({rules[v['rule']]}) |")
    cnt = Counter(v["verdict"] for v in res["verdicts"])
    L += ["", "Totals: " + ", ".join(f"{k} {cnt[k]}" for k in
                                     ("REPRODUCED", "PARTLY", "NOT REPRODUCED", "NOT RUN")
                                     if cnt[k]) + ".", "", "Rules:", ""]
    L += [f"- {tag}: {rule}" for rule, tag in rules.items()]
    L.append("")
    # SOCMKL
    if tb["socmkl"]:
        L += ["## Table SOCMKL: accuracy (%), mean ± std over the splits", "",
              f"DANK = {lab} (the default reading)" + (
                  f"; the last column is the other reading, {', '.join(alt)}." if alt else "."),
              "", "| set | (d, n) paper / files | MKL-uniform train | MKL-uniform test | "
              "SVM-CV train | SVM-CV test | DANK train | DANK test | p DANK vs SVM-CV | "
              "p DANK vs MKL |" + "".join(f" {a} test |" for a in alt),
              "|---" * (10 + len(alt)) + "|"]
        for name, row in tb["socmkl"].items():
            pp = paper.SOCMKL[name]
            info = res["datasets"][name]
            ts = row["tests"][f"{lab} vs SVM-CV"]
            tm = row["tests"][f"{lab} vs MKL-uniform"]
            sig = significantly(ts) and significantly(tm)
            unc = " †" if row["DANK"]["uncertified"] else ""
            cells = [name, f"{paper.SOCMKL_DN[name]} / ({info['d']}, {info['n']})",
                     _cell(pp["MKL-uniform"][0], row["MKL-uniform"]["train"]),
                     _cell(pp["MKL-uniform"][1], row["MKL-uniform"]["test"]),
                     _cell(pp["SVM-CV"][0], row["SVM-CV"]["train"]),
                     _cell(pp["SVM-CV"][1], row["SVM-CV"]["test"]),
                     _cell(pp["DANK"][0], row["DANK"]["train"], mark=unc),
                     _cell(pp["DANK"][1], row["DANK"]["test"], bullet_p=pp["bullet"],
                           bullet_o=sig, mark=unc),
                     _p(ts), _p(tm)]
            for a in alt:
                t = row["tests"][f"{a} vs SVM-CV"]
                u = " †" if row[a]["uncertified"] else ""
                cells.append(f"{_fmt(row[a]['test'])}{'•' if significantly(t) else ''}{u} "
                             f"({_p(t)} vs SVM-CV)")
            L.append("| " + " | ".join(cells) + " |")
        L += ["", "Chosen (C, sigma), most frequent over the splits (count):", ""]
        for name, row in tb["socmkl"].items():
            parts = []
            for meth, pm in row["params"].items():
                if pm:
                    C, s = pm["mode"]
                    parts.append(f"{meth} C={C:g}" + (f", sigma={s:g}" if s is not None else "")
                                 + f" ({pm['mode_count']})")
            L.append(f"- {name}: " + "; ".join(parts))
        L.append("")
        L += ["## Table UCIres: the other baselines (paper's numbers, not re-run)", "",
              "| set | LogDet | BMKL | RF | KNPL | DANK paper / ours |",
              "|---|---|---|---|---|---|"]
        for name, row in tb["socmkl"].items():
            pr = paper.UCIRES[name]
            cells = [f"{pr[m][0]:.1f}±{pr[m][1]:.1f}{'•' if pr[m][2] else ''} (not re-run)"
                     for m in ("LogDet", "BMKL", "RF", "KNPL")]
            cells.append(_cell(pr["DANK"][:2], row["DANK"]["test"], bullet_p=pr["DANK"][2]))
            L.append(f"| {name} | " + " | ".join(cells) + " |")
        L.append("")
    # UCIrank
    if tb["ucirank"]:
        taus = proto["taus"]
        L += ["## Table UCIrank: test accuracy (%) and rank(F) against tau", "",
              f"Reading: {lab}; (sigma, C) of tau = {tau_s} kept for every tau. Cell: "
              "`paper acc (rank) / ours acc (rank)`; rank(F) = MATLAB's default numerical rank "
              "(mean over splits and, for multi-class sets, over the one-vs-one problems); "
              "`•` significantly different from tau = 0.01.", "",
              "| set | " + " | ".join(f"tau = {t:g}" for t in taus) + " |",
              "|---" * (1 + len(taus)) + "|"]
        tix = {f"{t:g}": i for i, t in enumerate(paper.TAUS)}
        for name, rr in tb["ucirank"].items():
            row = rr[lab]
            cells = [name]
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
            L.append("| " + " | ".join(cells) + " |")
        L += ["", "rank(F) with a relative threshold instead (eigenvalues > 1e-6 lambda_max(F)), "
              "mean over splits:", "",
              "| set | " + " | ".join(f"tau = {t:g}" for t in taus) + " |",
              "|---" * (1 + len(taus)) + "|"]
        for name, rr in tb["ucirank"].items():
            L.append(f"| {name} | " + " | ".join(
                f"{rr[lab][f'{t:g}']['rank_1e6']['mean']:.1f}" for t in taus) + " |")
        for a in alt:
            L += ["", f"Same table for the other reading, {a} (ours only):", "",
                  "| set | " + " | ".join(f"tau = {t:g}" for t in taus) + " |",
                  "|---" * (1 + len(taus)) + "|"]
            for name, rr in tb["ucirank"].items():
                row = rr[a]
                L.append(f"| {name} | " + " | ".join(
                    f"{_fmt(row[f'{t:g}']['test'])} ({row[f'{t:g}']['rank']['mean']:.1f})"
                    + ("•" if f"{t:g}" != tau_s and (
                        significantly(row[f"{t:g}"]["vs_tau0"], 1)
                        or significantly(row[f"{t:g}"]["vs_tau0"], -1)) else "")
                    for t in taus) + " |")
        L.append("")
    # UCIreg
    if tb["ucireg"]:
        L += ["## Table UCIreg: relative error sum (g - y)^2 / sum (y - mean y)^2", "",
              "The paper's printed formula (it calls it RMSE). BMKL and NW (Nadaraya-Watson with "
              "metric learning, Noh et al. 2017) are the paper's numbers, not re-run.", "",
              "| set | (d, n) paper / file | BMKL test | NW test | SVR-CV train | SVR-CV test | "
              "DANK train | DANK test | p DANK vs SVR-CV (test) |" + "".join(
                  f" {a} test |" for a in alt), "|---" * (9 + len(alt)) + "|"]
        for name, row in tb["ucireg"].items():
            pp = paper.UCIREG[name]
            info = res["datasets"][name]
            t = row["tests"][f"{lab} vs SVR-CV (test)"]
            mk = (" ‡" if row["DANK"].get("fallback_svr_params") else "") + (
                " †" if row["DANK"].get("uncertified") else "")
            cells = [name, f"{paper.UCIREG_DN[name]} / ({info['d']}, {info['n']})",
                     f"{pp['BMKL'][0]:.3f}±{pp['BMKL'][1]:.3f} (not re-run)",
                     f"{pp['NW'][0]:.3f}±{pp['NW'][1]:.3f}{'•' if pp['NW'][2] else ''} "
                     "(not re-run)",
                     _cell(pp["SVR-CV train"][:2], row["SVR-CV"]["train"]["rel"], 3),
                     _cell(pp["SVR-CV test"][:2], row["SVR-CV"]["test"]["rel"], 3),
                     _cell(pp["DANK train"][:2], row["DANK"]["train"]["rel"], 3, mark=mk),
                     _cell(pp["DANK test"][:2], row["DANK"]["test"]["rel"], 3,
                           bullet_p=pp["DANK test"][2], bullet_o=significantly(t, -1), mark=mk),
                     _p(t)]
            for a in alt:
                ta = row["tests"][f"{a} vs SVR-CV (test)"]
                cells.append(f"{_fmt(row[a]['test']['rel'], 3)} ({_p(ta)})")
            L.append("| " + " | ".join(cells) + " |")
        L += ["", "Chosen (C, sigma), most frequent over the splits (count):", ""]
        for name, row in tb["ucireg"].items():
            parts = [f"{m} C={pm['mode'][0]:g}, sigma={pm['mode'][1]:g} ({pm['mode_count']})"
                     for m, pm in row["params"].items() if pm]
            L.append(f"- {name}: " + "; ".join(parts))
        norm = res.get("normalisation", {})
        if norm:
            L += ["", "### Which normalisation makes SVR-CV's numbers comparable?", "",
                  "SVR-CV's test error under each candidate normalisation next to the paper's "
                  "SVR-CV test column; score = median over the sets of |log(ours / paper)| "
                  "(0 = identical).", "",
                  "| normalisation | " + " | ".join(tb["ucireg"]) + " | score |",
                  "|---" * (2 + len(tb["ucireg"])) + "|",
                  "| paper SVR-CV test | " + " | ".join(
                      f"{paper.UCIREG[k]['SVR-CV test'][0]:.3f}" for k in tb["ucireg"])
                  + " | |"]
            for kind, sc in norm["scores"].items():
                L.append(f"| {kind}: {NORMALISATIONS[kind]} | " + " | ".join(
                    f"{tb['ucireg'][k]['SVR-CV']['test'][kind]['mean']:.3g}"
                    for k in tb["ucireg"]) + f" | {sc:.2f} |")
            L += ["", norm["conclusion"], ""]
    # figures and conv
    conv = res.get("conv")
    if conv:
        L += ["## Figure conv: projected gradient vs Algorithm ago3 on heart", "",
              f"heart, split 0 training half ({conv['n']} points), C = {conv['C']:g}, "
              f"sigma = {conv['sigma']:g} ({conv['params_from']}), tau = {conv['tau']:g}, "
              f"eta = ||a_SVM||^2 = {conv['eta']:.4g}, a_0 = 0, t_max = {conv['t_max']}, the "
              "paper's stopping rule ||a_t - a_{t-1}|| <= 1e-4. Certified relative gap every "
              f"{conv['certify_every']} iterations (not shown in the paper). Reference "
              f"v* in [{conv['v_lower']:.10g}, {conv['v_upper']:.10g}] (newton, certified).", "",
              "| method | status | iterations | h(a_T) | certified rel. gap at the end |",
              "|---|---|---|---|---|"]
        for f in conv["final"].values():
            L.append(f"| {f['label']} | {f['status']} | {f['n_iter']} | {f['h']:.8g} | "
                     f"{f['rel_gap']:.2e} |")
        L.append("")
    for k, p in res.get("figures", {}).items():
        L.append(f"![{k}]({os.path.basename(p)})")
    if res.get("figures"):
        L.append("")
    # large
    L += ["## Large-scale table (tablarges)", ""]
    large = res.get("large")
    if large:
        L += [f"From `{res['large_path']}` (the benchmark's run, linked, not re-run here).", "",
              "| set | method | paper acc. (time s, rank) | ours acc. | time s | rank(F) | "
              "rel. gap | status |", "|---|---|---|---|---|---|---|---|"]
        for r in large:
            pv = paper.LARGE.get(r.get("dataset"), {}).get(r.get("method"))
            ps = "x" if pv is None else f"{pv[0]} ({pv[1]} s" + (
                f", rank {pv[2]})" if pv[2] is not None else ")")
            acc = r.get("accuracy")
            L.append(f"| {r.get('dataset')} | {r.get('method')} | {ps} | "
                     f"{'' if acc is None else f'{100 * float(acc):.2f}'} | "
                     f"{_num(r.get('time_s'), '.1f')} | {_num(r.get('rank_F'), 'd')} | "
                     f"{_num(r.get('rel_gap'), '.1e')} | "
                     f"{r.get('status', '')} |")
    else:
        L += [f"`{res.get('large_path', 'benchmarks/results/large.json')}` was not found: the "
              "large-scale benchmark has not been run (its verdicts are NOT RUN). Paper: EEG "
              "DANK exact 96.7 (rank 36) vs SVM-SMO 95.9; ijcnn1 98.9 (rank 342) vs 96.5; "
              "covtype DANK scalable 97.1 vs 96.1."]
    L.append("")
    # certification
    L += ["## Certification of the DANK solves", "",
          "Final fits: the solves whose accuracy is reported (every tau, every one-vs-one "
          "problem); CV fits: the solves inside the 5-fold CV.", "",
          "| set | cell | final solves converged | max final rel. gap | CV solves converged | "
          "max CV rel. gap | CV fits that raised |", "|---|---|---|---|---|---|---|"]
    failed = []
    for r in tb["certification"]:
        if not r["final_solves"] and not r["cv_solves"]:
            continue  # a skipped cell (DANK-SVR's own CV on a large set)
        cv = (f"{r['cv_converged']}/{r['cv_solves']}" if r["cv_solves"] else "-")
        cvg = f"{r['cv_max_rel_gap']:.1e}" if r["cv_solves"] else "-"
        L.append(f"| {r['dataset']} | {r['method']} | {r['final_converged']}/{r['final_solves']}"
                 f" | {r['final_max_rel_gap']:.1e} | {cv} | {cvg} | "
                 f"{r.get('cv_failed_fits', 0)} |")
        failed += [(r["dataset"], r["method"], f) for f in r.get("cv_failures", [])]
    L.append("")
    if failed:
        L += ["CV fits that raised (their (C, sigma) candidate was excluded from that split's "
              "selection; the error is dank_fast's, see the notes):", ""]
        L += [f"- {d} {m} split {f['split']}, fold {f['fold']}, C = {f['C']:g}, sigma = "
              f"{f['sigma']:g}: {f['error'][:160]}" for d, m, f in failed]
        L.append("")
    # warnings and errors
    L += ["## Warnings raised (none suppressed)", ""]
    if tb["warnings"]:
        L += ["| cell type | warning | count | example |", "|---|---|---|---|"]
        for meth, ws in sorted(tb["warnings"].items()):
            for cat, k in sorted(ws.items()):
                ex = tb["warning_examples"].get(cat, "").replace("|", "/").replace("\n", " ")
                L.append(f"| {meth} | {cat} | {k} | {ex[:120]} |")
    else:
        L.append("None.")
    L.append("")
    if tb["errors"]:
        L += ["## Cells that failed", ""] + [f"- `{e['cell']}`: {e['error']}" for e in tb["errors"]]
        L.append("")
    L += ["## Protocol", ""] + [f"- {x}" for x in res["protocol_notes"]]
    L += ["", "Data sets:", ""] + [f"- {k}: {v['n']} points, {v['d']} features"
                                    + (f"; {v['note']}" if v.get("note") else "")
                                    for k, v in res["datasets"].items()]
    return "\n".join(L) + "\n"


def normalisation_analysis(ucireg: dict) -> dict:
    """Score every candidate normalisation of SVR-CV's test error against the paper's column."""
    if not ucireg:
        return {}
    scores = {}
    for kind in NORMALISATIONS:
        errs = []
        for name, row in ucireg.items():
            ours = row["SVR-CV"]["test"][kind]["mean"]
            pv = paper.UCIREG[name]["SVR-CV test"][0]
            if np.isfinite(ours) and ours > 0 and pv > 0:
                errs.append(abs(math.log(ours / pv)))
        scores[kind] = float(np.median(errs)) if errs else float("nan")
    best = min(scores, key=lambda k: scores[k] if np.isfinite(scores[k]) else math.inf)
    concl = (f"Closest to the paper's SVR-CV column: **{best}** ({NORMALISATIONS[best]}), median "
             f"|log ratio| {scores[best]:.2f} (a factor {math.exp(scores[best]):.2f}); the paper's "
             f"own formula (rel) scores {scores['rel']:.2f}. The tables above use the paper's "
             "formula.")
    return dict(scores=scores, best=best, conclusion=concl)


def write_json(path, obj) -> None:
    # start-up: each subcommand imports only what it runs (fast --help and errors)
    from .runner import _json_default as default  # numpy scalars/arrays, as the cell cache

    def clean(x):
        if isinstance(x, float) and not math.isfinite(x):
            return str(x)
        if isinstance(x, dict):
            return {str(k): clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x

    with open(path, "w") as fh:  # compact: the full run has ~640 cells
        json.dump(clean(obj), fh, separators=(",", ":"), default=default)
