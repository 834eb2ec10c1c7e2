"""Sensitivity of Table 1 to the reading of the paper: which reading, if any, reproduces
the paper's DANK column.

For every reading of :mod:`..readings` and every classification set: DANK's test accuracy beside
the paper's, the per-set verdict by Table 1's own rule (:func:`.socmkl._set_verdict`:
paired t-tests against SVM-CV and MKL-uniform on the same splits; a reading that changes the
data is paired against the baselines re-fitted under the same change), and how far the reading's
final solves are from DANK's optimum (their certified relative gaps; for Algorithm 1 how
many stopped by the printed rule and how many at the cap). The conclusion is computed from
these numbers (:func:`conclusion`), so it stays true when the run changes.

This table tests no claim of the paper (it explains the verdicts of Table 1), so it has
``aggregate`` and ``render`` but no ``verdicts``. Old results without reading cells give an
empty table and no section.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter

import numpy as np

from .. import paper
from ..protocol import Protocol
from ..readings import reading_list
from ._common import _by_split, _paired, _tau_rec, mean_std, paired_ttest
from .socmkl import _set_verdict

__all__ = ["aggregate", "conclusion", "render"]

_REF = "dank-cv"
_SHORT = {"REPRODUCED": "R", "PARTLY": "P", "NOT REPRODUCED": "N", "NOT RUN": "-"}
_STOPS = {"stopped": "rule", "max_iter": "cap", "converged": "certified"}


def aggregate(records: dict, proto: Protocol, cls_sets) -> dict:
    """The sensitivity table from the cell records; ``{}`` when no reading cell was run.

    Returns
    -------
    dict
        ``readings`` (method, label, change, baselines of each), ``sets`` (set -> method ->
        row, see :func:`_row`), ``summary`` (method -> :func:`_summary`) and ``conclusion``
        (list of sentences).
    """
    rds = reading_list(proto.stratify)
    methods = {r["method"] for r in records.values()}
    if not any(r.method in methods for r in rds[1:]):
        return {}
    sets = {name: {r.method: _row(records, proto, name, r.method, r.baselines) for r in rds}
            for name in cls_sets}
    summary = {r.method: _summary(sets, r.method) for r in rds}
    labels = {r.method: r.label for r in rds}
    return dict(readings=[dataclasses.asdict(r) for r in rds], sets=sets, summary=summary,
                conclusion=conclusion(sets, summary, labels))


def _row(records: dict, proto: Protocol, name: str, method: str, baselines) -> dict:
    """One reading on one set: accuracy, the paper's, the verdict and the certificates."""
    dank = _by_split(records, name, method)
    pick = (lambda x: _tau_rec(x, proto.tau)) if method == _REF else (lambda x: x)
    svm, mkl = (_by_split(records, name, b) for b in baselines)

    def acc(x):
        return None if pick(x) is None else 100 * pick(x)["test_acc"]

    def base(x):
        return 100 * x["test_acc"]

    test = mean_std([acc(r) for r in dank.values()])
    row = {"DANK": {"test": test}, "SVM-CV": {"test": mean_std([base(r) for r in svm.values()])},
           "MKL-uniform": {"test": mean_std([base(r) for r in mkl.values()])},
           "tests": {f"DANK vs {lab}": paired_ttest(*_paired(dank, recs, acc, base))
                     for lab, recs in (("SVM-CV", svm), ("MKL-uniform", mkl))}}
    verdict = "NOT RUN"
    if test["n"] and row["SVM-CV"]["test"]["n"] and row["MKL-uniform"]["test"]["n"]:
        verdict = _set_verdict(name, row, "DANK")["verdict"]
    solves = [s for r in dank.values() for s in (pick(r) or {}).get("solves", [])]
    pm = paper.SOCMKL[name]["DANK"][1][0]
    return dict(test=test, paper=pm, diff=test["mean"] - pm if test["n"] else float("nan"),
                svm=row["SVM-CV"]["test"], mkl=row["MKL-uniform"]["test"], tests=row["tests"],
                verdict=verdict, rel_gaps=[float(s["rel_gap"]) for s in solves],
                stops=dict(Counter(_STOPS.get(s["status"], "other") for s in solves)))


def _summary(sets: dict, method: str) -> dict:
    """One reading over the sets that have numbers: mean ``|ours - paper|``, the mean shift
    against reading (a), the per-set claims reproduced, the certified gaps and the stops."""
    rows = [r[method] for r in sets.values() if r[method]["test"]["n"]]
    diffs = [r["diff"] for r in rows]
    shift = [r[method]["test"]["mean"] - r[_REF]["test"]["mean"] for r in sets.values()
             if r[method]["test"]["n"] and r[_REF]["test"]["n"]]
    gaps = np.array([g for r in rows for g in r["rel_gaps"]], dtype=float)
    stops: Counter = Counter()
    for r in rows:
        stops.update(r["stops"])
    return dict(n_sets=len(rows), mean_abs_diff=_mean(np.abs(diffs)), mean_diff=_mean(diffs),
                mean_shift=_mean(shift),
                reproduced=sum(r["verdict"] == "REPRODUCED" for r in rows),
                n_solves=int(gaps.size),
                gap_median=float(np.median(gaps)) if gaps.size else float("nan"),
                gap_max=float(np.max(gaps)) if gaps.size else float("nan"), stops=dict(stops))


def _mean(v) -> float:
    return float(np.mean(v)) if len(v) else float("nan")


def conclusion(sets: dict, summary: dict, labels: dict) -> list[str]:
    """The conclusion, computed: which reading is closest to the paper's DANK accuracies, how
    many per-set claims each reproduces, whether any reproduces the paper, and how strongly
    the evidence separates the closest reading from reading (a) (a two-sided sign test over
    the sets on which of the two is closer to the paper, and the size of the gain against the
    standard error of a set's mean accuracy)."""
    have = [m for m in labels if summary[m]["n_sets"]]
    if not have:
        return ["No reading has finished cells: nothing to conclude."]
    best = min(have, key=lambda m: (summary[m]["mean_abs_diff"], m != _REF))
    s = summary[best]
    out = [f"Closest to the paper's DANK accuracies: {labels[best]}, mean |ours - paper| = "
           f"{s['mean_abs_diff']:.2f} points over {s['n_sets']} sets (ours "
           f"{'above' if s['mean_diff'] > 0 else 'below'} the paper by {abs(s['mean_diff']):.2f} "
           f"on average)" + ("." if best == _REF else
                             f"; {labels[_REF]}: {summary[_REF]['mean_abs_diff']:.2f}.")]
    most = max(summary[m]["reproduced"] for m in have)
    tops = [labels[m] for m in have if summary[m]["reproduced"] == most]
    counts = ", ".join(f"{labels[m]} {summary[m]['reproduced']}/{summary[m]['n_sets']}"
                       for m in have)
    n = max(summary[m]["n_sets"] for m in have)
    if most >= n:
        out.append(f"{' and '.join(tops)} reproduce(s) the paper's claim on every set "
                   f"({counts}).")
    else:
        out.append(f"No reading reproduces the paper: the most per-set claims (Table 1's "
                   f"rule) any reading reproduces is {most} of {n} ({', '.join(tops)}); "
                   f"{counts}.")
    out.append(_strength(sets, summary, labels, best))
    out += _gap_notes(summary, labels)
    return out


def _strength(sets: dict, summary: dict, labels: dict, best: str) -> str:
    """How strongly the closest reading beats reading (a) at matching the paper."""
    if best == _REF or not summary[_REF]["n_sets"]:
        return (f"No other reading is closer to the paper than {labels[_REF]}: the evidence "
                "points to none of the explanations tested.")
    closer = farther = 0
    se = []
    for r in sets.values():
        b, a = r[best], r[_REF]
        if not (b["test"]["n"] and a["test"]["n"]):
            continue
        closer += abs(b["diff"]) < abs(a["diff"])
        farther += abs(b["diff"]) > abs(a["diff"])
        se.append(a["test"]["std"] / math.sqrt(a["test"]["n"]))
    gain = summary[_REF]["mean_abs_diff"] - summary[best]["mean_abs_diff"]
    p = _sign_test(closer, farther)
    noise = float(np.median(se)) if se else float("nan")
    strong = p < 0.05 and gain > noise
    return (f"Evidence for {labels[best]} over {labels[_REF]}: "
            f"{'strong' if strong else 'weak'} -- closer to the paper on {closer} sets, "
            f"farther on {farther} (two-sided sign test p = {p:.2g}); the gain of {gain:.2f} "
            f"points is {'above' if gain > noise else 'within'} the median standard error of a "
            f"set's mean accuracy ({noise:.2f} points).")


def _sign_test(k: int, m: int) -> float:
    """Two-sided sign test of ``k`` successes against ``m`` failures (exact binomial, p=1/2)."""
    n = k + m
    if n == 0:
        return 1.0
    lo = min(k, m)
    tail = sum(math.comb(n, i) for i in range(lo + 1)) / 2.0**n
    return min(1.0, 2.0 * tail)


def _gap_notes(summary: dict, labels: dict) -> list[str]:
    """How far the uncertified readings' final points are from DANK's optimum."""
    out = []
    for m, s in summary.items():
        st = s["stops"]
        if not s["n_solves"] or st.get("certified", 0) == s["n_solves"]:
            continue
        out.append(f"{labels[m]}: its final points are not DANK's optimum -- certified relative "
                   f"gap median {s['gap_median']:.2g}, max {s['gap_max']:.2g} over "
                   f"{s['n_solves']} solves; {st.get('rule', 0)} stopped by the printed rule, "
                   f"{st.get('cap', 0)} at the iteration cap.")
    return out


# ---------------------------------------------------------------------------------- render
def render(res: dict) -> list[str]:
    """The report's sensitivity section; no lines when the run has no reading cells."""
    tb = res["tables"].get("sensitivity")
    if not tb:
        return []
    rds = tb["readings"]
    L = ["## Sensitivity: which reading of the paper reproduces its DANK column", "",
         "One change at a time from reading (a). Every DANK reading reuses the (sigma, C) that "
         "DANK's own CV chose on the same split (`dank-cv`): only the final fit changes. The "
         "readings that change the data (scaling, split) are paired against SVM-CV and "
         "MKL-uniform re-fitted under the same change, likewise at the parameters their own CV "
         "chose under the default protocol (not re-chosen). Cells: test accuracy (%) "
         "mean ± std and the per-set verdict by Table 1's rule (R reproduced, P partly, "
         "N not reproduced).", "",
         "| set | paper DANK | " + " | ".join(r["label"] for r in rds) + " |",
         "|---" * (2 + len(rds)) + "|"]
    for name, row in tb["sets"].items():
        L.append(f"| {name} | {row[rds[0]['method']]['paper']:.1f} | " + " | ".join(
            _acc_cell(row[r["method"]]) for r in rds) + " |")
    L += ["", "| reading | what changes | mean abs(ours - paper) | mean shift vs (a) | "
          "per-set claims reproduced | certified rel. gap median / max | stops: rule / cap / "
          "certified |", "|---|---|---|---|---|---|---|"]
    for r in rds:
        s = tb["summary"][r["method"]]
        st = s["stops"]
        change = r["change"].replace("|", "\\|")  # a norm's bars would split the cell
        L.append(f"| {r['label']} | {change} | {_num(s['mean_abs_diff'], '.2f')} | "
                 f"{_num(s['mean_shift'], '+.2f')} | {s['reproduced']}/{s['n_sets']} | "
                 f"{_num(s['gap_median'], '.2g')} / {_num(s['gap_max'], '.2g')} | "
                 f"{st.get('rule', 0)} / {st.get('cap', 0)} / {st.get('certified', 0)} |")
    L += ["", "Conclusion (computed from the numbers above):", ""]
    L += [f"- {x}" for x in tb["conclusion"]]
    L.append("")
    return L


def _acc_cell(r: dict) -> str:
    t = r["test"]
    if not t["n"]:
        return "n/a"
    return f"{t['mean']:.1f}±{t['std']:.1f} {_SHORT[r['verdict']]}"


def _num(v, spec: str) -> str:
    """A number of results.json (non-finite ones are written as strings there)."""
    v = float(v)
    return "n/a" if not math.isfinite(v) else format(v, spec)
