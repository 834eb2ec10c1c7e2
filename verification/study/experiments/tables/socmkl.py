"""Table 1: accuracy of DANK against SVM-CV and MKL-uniform on the classification sets.

One row per data set (:func:`aggregate`), one verdict per set plus four count claims
(:func:`verdicts`), and the report's section with the chosen ``(C, sigma)`` (:func:`render`).
Conventions (means, paired t-tests, marks): :mod:`._common`.
"""

from __future__ import annotations

from .. import paper
from ..protocol import Protocol
from ._common import (
    COUNT_RULE,
    READING_LABEL,
    _acc_stats,
    _by_split,
    _cell,
    _count_verdict,
    _fmt,
    _p,
    _paired,
    _param_modes,
    _tau_acc,
    _tau_rec,
    _v,
    paired_ttest,
    significantly,
)

__all__ = ["aggregate", "render", "verdicts"]


def aggregate(records: dict, proto: Protocol, name: str) -> dict:
    """The row of data set ``name``: train/test accuracy of every method and reading, the
    paired t-tests of DANK against both baselines (and MKL-uniform against SVM-CV) and the
    chosen parameters."""
    primary = proto.readings[0]
    tau0 = proto.tau
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
    return row


def _set_verdict(name: str, row: dict, lab: str) -> dict:
    """The verdict of one set: significantly better than both baselines where the paper
    marks it (•), at least as accurate as SVM-CV elsewhere."""
    pp = paper.SOCMKL[name]
    d, s, m = row["DANK"]["test"], row["SVM-CV"]["test"], row["MKL-uniform"]["test"]
    ts, tm = row["tests"][f"{lab} vs SVM-CV"], row["tests"][f"{lab} vs MKL-uniform"]
    sv, sm = significantly(ts), significantly(tm)
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
    return _v(f"SOCMKL-{name}", "SOCMKL", claim, paper_s, ours_s, verdict, rule)


def verdicts(tables: dict, proto: Protocol) -> list[dict]:
    """One verdict per set, then the count claims (significantly better on 6 of 10, mean
    >= SVM-CV's everywhere, MKL-uniform overfits, DANK's flexibility)."""
    V = []
    soc = tables["socmkl"]
    sig_svm, better_svm, worse_svm = [], [], []
    lab = READING_LABEL[proto.readings[0]]
    for name, row in soc.items():
        d, s = row["DANK"]["test"], row["SVM-CV"]["test"]
        ts = row["tests"][f"{lab} vs SVM-CV"]
        if d["n"] == 0 or s["n"] == 0:
            V.append(_v(f"SOCMKL-{name}", "SOCMKL", f"DANK vs baselines on {name}", "", "",
                        "NOT RUN", "no finished cells"))
            continue
        if significantly(ts):
            sig_svm.append(name)
        if significantly(ts, -1):
            worse_svm.append(name)
        if d["mean"] >= s["mean"]:
            better_svm.append(name)
        V.append(_set_verdict(name, row, lab))
    if soc:
        V += _count_verdicts(soc, sig_svm, better_svm, worse_svm)
    return V


def _count_verdicts(soc: dict, sig_svm: list, better_svm: list, worse_svm: list) -> list[dict]:
    """The four count claims of Table 1 over the sets that have numbers."""
    V = []
    n = len([r for r in soc.values() if r["DANK"]["test"]["n"]])
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
    return V


def render(res: dict) -> list[str]:
    """The report's Table 1 section (``paper / ours`` cells), with the chosen
    ``(C, sigma)`` per set; no lines when no classification set was run."""
    proto, tb = res["protocol"], res["tables"]
    if not tb["socmkl"]:
        return []
    lab = READING_LABEL[proto["readings"][0]]
    alt = [READING_LABEL[r] for r in proto["readings"][1:]]
    L = ["## Table 1: accuracy (%), mean ± std over the splits", "",
         f"DANK = {lab} (the default reading)" + (
             f"; the last column is the other reading, {', '.join(alt)}." if alt else "."),
         "", "| set | (d, n) paper / files | MKL-uniform train | MKL-uniform test | "
         "SVM-CV train | SVM-CV test | DANK train | DANK test | p DANK vs SVM-CV | "
         "p DANK vs MKL |" + "".join(f" {a} test |" for a in alt),
         "|---" * (10 + len(alt)) + "|"]
    for name, row in tb["socmkl"].items():
        L.append("| " + " | ".join(_row_cells(name, row, res["datasets"][name], lab, alt)) + " |")
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
    return L


def _row_cells(name: str, row: dict, info: dict, lab: str, alt: list[str]) -> list[str]:
    """The cells of one set's row of the table."""
    pp = paper.SOCMKL[name]
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
    return cells
