"""Table UCIres: the paper's other baselines (LogDet, BMKL, RF, KNPL), printed beside our DANK.

These baselines are not re-run: the section shows the paper's numbers and our DANK test
accuracy from Table SOCMKL's rows (:mod:`.socmkl`).
"""

from __future__ import annotations

from .. import paper
from ._common import _cell

__all__ = ["render"]


def render(res: dict) -> list[str]:
    """The report's Table UCIres section; no lines when no classification set was run."""
    tb = res["tables"]
    if not tb["socmkl"]:
        return []
    L = ["## Table UCIres: the other baselines (paper's numbers, not re-run)", "",
         "| set | LogDet | BMKL | RF | KNPL | DANK paper / ours |",
         "|---|---|---|---|---|---|"]
    for name, row in tb["socmkl"].items():
        pr = paper.UCIRES[name]
        cells = [f"{pr[m][0]:.1f}±{pr[m][1]:.1f}{'•' if pr[m][2] else ''} (not re-run)"
                 for m in ("LogDet", "BMKL", "RF", "KNPL")]
        cells.append(_cell(pr["DANK"][:2], row["DANK"]["test"], bullet_p=pr["DANK"][2]))
        L.append(f"| {name} | " + " | ".join(cells) + " |")
    L.append("")
    return L
