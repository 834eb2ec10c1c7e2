"""Table 4: DANK on the large data sets (EEG, ijcnn1, covtype) against SVM-SMO.

Not re-run by ``dank-reproduce``: the rows come from ``benchmarks/results/large.json``
(``benchmarks/bench_large.py``); :func:`large_verdicts` is NOT RUN without them.
"""

from __future__ import annotations

from .. import paper
from ._common import _num, _v

__all__ = ["large_verdicts", "render"]


def large_verdicts(large: list | None) -> list[dict]:
    """Table 4 from ``benchmarks/results/large.json`` (NOT RUN when absent)."""
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


def render(res: dict) -> list[str]:
    """The report's large-scale section: the benchmark's rows beside the paper's, or a note
    that the benchmark has not been run."""
    L = ["## Large-scale table (tablarges)", ""]
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
    return L
