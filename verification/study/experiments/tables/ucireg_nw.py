"""Table 6's NW column re-run: Nadaraya-Watson with a learned metric beside DANK-SVR.

The cells ``nw-ml`` (MLKR, the substitute for Noh et al. 2017's generative local metric, see
:mod:`..baselines.nadaraya`) and ``nw-cv`` (plain NW, bandwidth by CV) on the same splits as
DANK-SVR: one row per set (:func:`aggregate`, relative error as in :mod:`.ucireg`) with paired
t-tests, and the section (:func:`render`; no lines for a results file without these cells).
BMKL is not re-run (:data:`.ucires.NOT_RERUN`). No verdict: the paper makes no claim about NW
beyond "comparable performance" (line 1252).
"""

from __future__ import annotations

from .. import paper
from ..baselines.cells import NWML_MAX_FIT
from ..protocol import Protocol
from ._common import (
    READING_LABEL,
    _by_split,
    _cell,
    _fmt,
    _p,
    _paired,
    _reg_stats,
    paired_ttest,
    reg_metric,
)
from .ucireg import _readings
from .ucires import NOT_RERUN

__all__ = ["aggregate", "render"]


def aggregate(records: dict, proto: Protocol, name: str, yr: float) -> dict:
    """The row of ``name`` (target range ``yr``): errors of NW-ML and NW-CV (every
    normalisation of :mod:`._common`), paired t-tests of DANK (default reading) against NW-ML
    and of NW-ML against NW-CV on the test relative error, cell times and NW-CV's bandwidths."""
    recs = {"NW-ML": _by_split(records, name, "nw-ml"), "NW-CV": _by_split(records, name, "nw-cv")}
    dank, _ = _readings(records, proto, name)[proto.readings[0]]

    def rel(rec: dict) -> float:
        return reg_metric(rec["test"], "rel", yr)

    row = {k: _reg_stats(v, yr) for k, v in recs.items()}
    row["tests"] = {"DANK vs NW-ML": paired_ttest(*_paired(dank, recs["NW-ML"], rel, rel)),
                    "NW-ML vs NW-CV": paired_ttest(*_paired(recs["NW-ML"], recs["NW-CV"], rel,
                                                            rel))}
    row["seconds"] = {k: sum(r.get("seconds", 0.0) for r in v.values()) for k, v in recs.items()}
    row["sigmas"] = [r.get("sigma") for _, r in sorted(recs["NW-CV"].items())]
    row["n_fit"] = max((r.get("n_fit", 0) for r in recs["NW-ML"].values()), default=0)
    return row


def render(res: dict) -> list[str]:
    """The section beside Table 6; no lines without the NW cells."""
    tb = res["tables"]
    if not tb.get("ucireg_nw"):
        return []
    lab = READING_LABEL[res["protocol"]["readings"][0]]
    L = ["### Table 6's NW and BMKL columns re-run", "",
         "Relative error sum (g - y)^2 / sum (y - mean y)^2 on the test half, `paper / ours`. "
         "NW-ML: Nadaraya-Watson with a metric learned by MLKR (Weinberger and Tesauro 2007: "
         "one global Mahalanobis metric minimising the leave-one-out NW error, L-BFGS from "
         "NW-CV's bandwidth) -- a substitute for Noh et al. (2017), whose metric is local and "
         "derived from a generative model; the metric is learned on at most "
         f"{NWML_MAX_FIT} training points. NW-CV: plain NW, bandwidth by the same CV (no "
         "paper column). "
         f"DANK = {lab}. BMKL {NOT_RERUN['BMKL']}.", "",
         "| set | NW paper / NW-ML ours | NW-CV ours | BMKL | DANK test | p DANK vs NW-ML | "
         "p NW-ML vs NW-CV | cell time s (NW-ML / NW-CV) |", "|---" * 8 + "|"]
    for name, row in tb["ucireg_nw"].items():
        pp = paper.UCIREG[name]
        d = tb["ucireg"][name]["DANK"]["test"]["rel"] if name in tb["ucireg"] else {}
        L.append("| " + " | ".join([
            name, _cell(pp["NW"][:2], row["NW-ML"]["test"]["rel"], 3),
            _fmt(row["NW-CV"]["test"]["rel"], 3),
            f"{pp['BMKL'][0]:.3f}±{pp['BMKL'][1]:.3f} / not re-run",
            _cell(pp["DANK test"][:2], d, 3), _p(row["tests"]["DANK vs NW-ML"]),
            _p(row["tests"]["NW-ML vs NW-CV"]),
            f"{row['seconds']['NW-ML']:.0f} / {row['seconds']['NW-CV']:.0f}"]) + " |")
    L.append("")
    return L
