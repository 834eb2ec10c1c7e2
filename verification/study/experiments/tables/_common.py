"""What every table of the report shares: the conventions, the statistics and the formatting.

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

import math
from collections import Counter

import numpy as np

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


# ------------------------------------------------------------------------- cell records
def _tau_rec(rec: dict, tau: float) -> dict | None:
    return rec.get("taus", {}).get(f"{tau:g}")


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


# ---------------------------------------------------------------------- verdicts, cells
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


def _cell(paper_ms, ours: dict, digits=1, bullet_p=False, bullet_o=False, mark=""):
    pm, psd = paper_ms
    ps = f"{pm:.{digits}f}±{psd:.{digits}f}" + ("•" if bullet_p else "")
    return f"{ps} / {_fmt(ours, digits)}{'•' if bullet_o else ''}{mark}"


def _num(v, spec: str) -> str:
    """A number of the large-scale table, blank when absent."""
    return "" if not isinstance(v, (int, float)) or isinstance(v, bool) else format(v, spec)
