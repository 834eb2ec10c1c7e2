"""The tables of the ``dank-reproduce`` report: one module per table, each readable alone.

Every table module has the same three parts: ``aggregate`` (its rows from the cell records),
``verdicts`` (the paper's claims about it) and ``render`` (its section of report.md).

Modules
-------
_common        conventions (means, paired t-tests, marks), statistics and cell formatting
socmkl         Table 1: DANK vs SVM-CV and MKL-uniform (accuracy)
sensitivity    Table 1 under other readings of the paper (Algorithm 1, eta, extension, ...)
ucires         Table 2: the other baselines (LogDet, RF re-run; BMKL, KNPL not)
ucirank        Table 5: accuracy and rank(F) against tau
ucireg         Table 6: DANK-SVR vs SVR-CV (relative error), the normalisation analysis
ucireg_nw      Table 6's NW column re-run (NW-ML, plain NW-CV)
conv           Figure 4: projected gradient vs Algorithm 1 (verdict and section)
large          Table 4: the large-scale benchmark's rows (not re-run)
certification  how many DANK solves were certified (not a table of the paper)
report         all tables from the records, all verdicts, report.md and results.json
"""

from ._common import (
    ALPHA,
    NORMALISATIONS,
    READING_LABEL,
    _count_verdict,
    mean_std,
    paired_ttest,
    reg_metric,
    significantly,
)
from .conv import conv_verdict
from .large import large_verdicts
from .report import aggregate, render_report, verdicts, write_json
from .ucireg import normalisation_analysis

__all__ = [
    "ALPHA",
    "NORMALISATIONS",
    "READING_LABEL",
    "_count_verdict",
    "aggregate",
    "conv_verdict",
    "large_verdicts",
    "mean_std",
    "normalisation_analysis",
    "paired_ttest",
    "reg_metric",
    "render_report",
    "significantly",
    "verdicts",
    "write_json",
]
