"""Table 6: DANK-SVR against SVR-CV on the regression sets (relative error).

One row per data set (:func:`aggregate`), one verdict per set plus two count claims
(:func:`verdicts`), the report's section (:func:`render`) and the search for the normalisation
of the error that makes the paper's SVR-CV column comparable (:func:`normalisation_analysis`).
Conventions: :mod:`._common`.
"""

from __future__ import annotations

import math

import numpy as np

from .. import paper
from ..protocol import Protocol
from ._common import (
    COUNT_RULE,
    NORMALISATIONS,
    READING_LABEL,
    _by_split,
    _cell,
    _count_verdict,
    _fmt,
    _p,
    _paired,
    _param_modes,
    _reg_stats,
    _v,
    paired_ttest,
    reg_metric,
    significantly,
)

__all__ = ["aggregate", "normalisation_analysis", "render", "verdicts"]


def _readings(records: dict, proto: Protocol, name: str) -> dict:
    """``{reading: (records by split, fallbacks)}``: the own-CV reading takes SVR-CV's
    ``(sigma, C)`` (DANK-SVR-SVM's cell) on the splits where its own CV was skipped."""
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
    return readings


def aggregate(records: dict, proto: Protocol, name: str, yr: float) -> dict:
    """The row of data set ``name`` (target range ``yr``): errors under every normalisation,
    paired t-tests against SVR-CV (test and train), fallbacks, uncertified solves and the
    chosen parameters."""
    svr = _by_split(records, name, "svr-cv")
    readings = _readings(records, proto, name)
    row = {"SVR-CV": _reg_stats(svr, yr)}
    for rd, (recs, fb) in readings.items():
        row[READING_LABEL[rd]] = _reg_stats(recs, yr)
        row[READING_LABEL[rd]]["fallback_svr_params"] = fb
        row[READING_LABEL[rd]]["uncertified"] = sum(not r.get("certified", False)
                                                    for r in recs.values())
    row["DANK"] = row[READING_LABEL[proto.readings[0]]]
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
    return row


def _set_verdict(name: str, row: dict, lab: str) -> dict:
    """Significantly lower error where the paper marks it (•), the same direction of the
    mean difference elsewhere."""
    pp = paper.UCIREG[name]
    d, s = row["DANK"]["test"]["rel"], row["SVR-CV"]["test"]["rel"]
    t = row["tests"][f"{lab} vs SVR-CV (test)"]
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
    return _v(f"UCIreg-{name}", "UCIreg", claim, paper_s, ours_s, verdict, rule)


def verdicts(tables: dict, proto: Protocol) -> list[dict]:
    """One verdict per set, then the count claims (lower test error on 7 of 8 sets, DANK-SVR's
    flexibility)."""
    V = []
    reg = tables["ucireg"]
    if not reg:
        return V
    lab = READING_LABEL[proto.readings[0]]
    lower_test, lower_train, names, sig_lower, sig_higher = [], [], [], [], []
    for name, row in reg.items():
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
        V.append(_set_verdict(name, row, lab))
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
    return V


def render(res: dict) -> list[str]:
    """The report's Table 6 section, the chosen ``(C, sigma)`` and the normalisation
    analysis; no lines when no regression set was run."""
    proto, tb = res["protocol"], res["tables"]
    if not tb["ucireg"]:
        return []
    lab = READING_LABEL[proto["readings"][0]]
    alt = [READING_LABEL[r] for r in proto["readings"][1:]]
    rerun = " (NW re-run in the next section)" if tb.get("ucireg_nw") else ""
    L = ["## Table 6: relative error sum (g - y)^2 / sum (y - mean y)^2", "",
         "The paper's printed formula (it calls it RMSE). BMKL and NW (Nadaraya-Watson with "
         f"metric learning, Noh et al. 2017) are the paper's numbers, not re-run{rerun}.", "",
         "| set | (d, n) paper / file | BMKL test | NW test | SVR-CV train | SVR-CV test | "
         "DANK train | DANK test | p DANK vs SVR-CV (test) |" + "".join(
             f" {a} test |" for a in alt), "|---" * (9 + len(alt)) + "|"]
    for name, row in tb["ucireg"].items():
        L.append("| " + " | ".join(_row_cells(name, row, res["datasets"][name], lab, alt)) + " |")
    L += ["", "Chosen (C, sigma), most frequent over the splits (count):", ""]
    for name, row in tb["ucireg"].items():
        parts = [f"{m} C={pm['mode'][0]:g}, sigma={pm['mode'][1]:g} ({pm['mode_count']})"
                 for m, pm in row["params"].items() if pm]
        L.append(f"- {name}: " + "; ".join(parts))
    return L + _render_normalisation(res.get("normalisation", {}), tb["ucireg"])


def _row_cells(name: str, row: dict, info: dict, lab: str, alt: list[str]) -> list[str]:
    """The cells of one set's row of the table."""
    pp = paper.UCIREG[name]
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
    return cells


def _render_normalisation(norm: dict, ucireg: dict) -> list[str]:
    """SVR-CV's test error under each candidate normalisation beside the paper's column."""
    if not norm:
        return []
    L = ["", "### Which normalisation makes SVR-CV's numbers comparable?", "",
         "SVR-CV's test error under each candidate normalisation next to the paper's "
         "SVR-CV test column; score = median over the sets of |log(ours / paper)| "
         "(0 = identical).", "",
         "| normalisation | " + " | ".join(ucireg) + " | score |",
         "|---" * (2 + len(ucireg)) + "|",
         "| paper SVR-CV test | " + " | ".join(
             f"{paper.UCIREG[k]['SVR-CV test'][0]:.3f}" for k in ucireg)
         + " | |"]
    for kind, sc in norm["scores"].items():
        L.append(f"| {kind}: {NORMALISATIONS[kind]} | " + " | ".join(
            f"{ucireg[k]['SVR-CV']['test'][kind]['mean']:.3g}"
            for k in ucireg) + f" | {sc:.2f} |")
    L += ["", norm["conclusion"], ""]
    return L


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
