"""Re-run of the paper's experiments (Tables 1, 2, 5, 6, Figure 4).

``dank-reproduce`` (:mod:`.cli`) re-runs the UCI experiments of section "Experimental
Results" with their protocol on the data sets in ``../shared/datasets`` and gives every
empirical claim of the paper a verdict (REPRODUCED / PARTLY / NOT REPRODUCED), with the
paper's number and ours side by side.

Its modules:

* ``data``: locating and loading the data sets, the 50/50 splits (``MANIFEST.md`` conventions)
* ``paper``: the paper's printed numbers (typed in once; tested against the LaTeX source)
* ``protocol``: the methods (SVM-CV, MKL-uniform, DANK, SVR-CV, DANK-SVR) and the CV protocol
* ``runner``: cells ``(data set, split, method)``, the resumable cache, parallel execution
* ``tables``: one module per table (aggregation, paired t-tests, verdicts, its section of
  report.md); ``tables.report`` assembles report.md and results.json
* ``figures``: Figure 4 (projected gradient vs the accelerated method, certified gap) and the
  paper-vs-ours scatter
* ``cli``: the ``dank-reproduce`` command line
"""

import importlib

#: where each public name lives, loaded on first use
#: (start-up: the data sets are optional)
_LAZY = {
    "load_dataset": ".data",
    "grid_search": ".cv",
    "run_cell": ".protocol",
    "run_cells": ".runner",
    "run_reproduction": ".cli",
}

__all__ = [
    "load_dataset",
    "grid_search",
    "run_cell",
    "run_cells",
    "run_reproduction",
]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
