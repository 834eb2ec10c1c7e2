"""The sensitivity readings of Table 1: DANK trained another way, one change at a time.

Which reading of the paper, if any, reproduces its DANK column? Every reading is one cell per
(classification set, split). A DANK reading reuses the ``(sigma, C)`` that the split's
``dank-cv`` cell chose (DANK's own 5-fold CV under the default protocol): only the final fit
changes, so a reading costs one DANK fit per split, not 121 x 5. Reading (a), the certified
optimum, is the ``dank-cv`` cell's own final fit at ``tau`` (no cell here).

* ``dank-ago3``: Algorithm 1 exactly as printed (Section 3.2; :mod:`dank_fast._paper`):
  ``a_0 = 0``, ``L`` of Theorem 4, the printed sign of ``beta_t``, the paper's projection,
  ``t_max = 2000``, stop when ``||a_t - a_{t-1}|| <= 1e-4``. Its final point is certified like
  every other (status ``"stopped"``: the rule fired; ``"max_iter"``: the cap).
* ``dank-ago3-ascent``: the same with the ascent-consistent sign of ``beta_t``.
* ``dank-eta-n``: ``eta = n`` (the training part's size) instead of ``||a_SVM||^2``: the order
  the paper's Remark after Lemma 1 asks for ("eta in O(n)", so that ``tr Gamma(a)`` is of
  the order of ``tr 11' = n``). For one-vs-one pairs ``n`` is the whole part's size.
* ``dank-nearest``: the out-of-sample extension matches a test point to its nearest training
  point (``extension="nearest"``) instead of the paper's reciprocal ranks (eq. (11)).
* ``dank-scale-all``: min-max scaling fitted on all the data (both halves) before the split, as
  the paper most likely did, instead of on the training half.
* ``dank-other-split``: the other kind of random halves (plain random when the run stratifies
  by class, stratified when it does not). Sets with an official split (monks1-3, spect) have
  the same halves in both.

The last two change the data, so SVM-CV and MKL-uniform are re-fitted under the same change
(``svm-cv-scale-all``, ``mkl-uniform-scale-all``, ``svm-cv-other-split``,
``mkl-uniform-other-split``) and the verdict pairs DANK with those. Every method is treated
alike: its parameters are the ones its own CV chose under the default protocol in the same
repetition (for the other split: on the default halves), only its final fit sees the change.
Re-choosing them would cost DANK a full CV (121 x 5 fits per split) per reading.

Cost: the certified readings cost one warm-started Newton fit each, the baselines one SVC fit;
Algorithm 1 as printed (``dank-ago3``) costs up to 2000 iterations of one eigendecomposition
each (the solver's own route: dense below 200 support vectors, certified Lanczos above).
``benchmarks/bench_readings.py`` measures them at ``--full`` size.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
from sklearn.preprocessing import MinMaxScaler

from .data import Dataset
from .protocol import Cell, Protocol, _acc, _dank, _dank_fit_eval, _mkl, _svm, run_cell

__all__ = ["AGO3_EPS", "AGO3_T_MAX", "CELLS", "COST", "DEPENDS", "METHODS", "Reading",
           "reading_list", "run_reading_cell", "scaled_on_all"]

#: Algorithm 1's iteration cap and stopping rule as printed (Section 3.2)
AGO3_T_MAX = 2000
AGO3_EPS = 1e-4
_STEP = "dankclassifier"  # make_pipeline's name of the DANK step


@dataclass(frozen=True)
class Reading:
    """One row of the sensitivity table.

    Attributes
    ----------
    method : str
        The DANK cell (``"dank-cv"``: the certified optimum, reading (a)).
    label : str
        Short name in the report.
    change : str
        What differs from reading (a).
    baselines : tuple of str
        The SVM-CV and MKL-uniform cells its verdict is paired against.
    """

    method: str
    label: str
    change: str
    baselines: tuple[str, str] = ("svm-cv", "mkl-uniform")


def reading_list(stratify: bool = True) -> tuple[Reading, ...]:
    """The readings in the report's order; ``stratify`` is the run's default split."""
    other = "plain random halves" if stratify else "stratified halves"
    return (
        Reading("dank-cv", "(a) certified optimum",
                "the default: Newton to a certified relative gap, tau = 0.01"),
        Reading("dank-ago3", "(b) Algorithm 1 as printed",
                f"Algorithm 1 as printed from a0 = 0, stop ||a_t - a_t-1|| <= 1e-4 "
                f"or t = {AGO3_T_MAX}"),
        Reading("dank-ago3-ascent", "(c) Algorithm 1, ascent sign", "as (b) with beta's sign '+'"),
        Reading("dank-eta-n", "(d) eta = n", "eta = n (the Remark's O(n)) not ||a_SVM||^2"),
        Reading("dank-nearest", "(d) nearest extension",
                "test point matched to its nearest training point"),
        Reading("dank-scale-all", "(d) scaling on all data",
                "min-max fitted on both halves before splitting",
                ("svm-cv-scale-all", "mkl-uniform-scale-all")),
        Reading("dank-other-split", f"(d) {other}",
                f"{other} (parameters from the default halves; official splits unchanged)",
                ("svm-cv-other-split", "mkl-uniform-other-split")),
    )


# ------------------------------------------------------------------------------ the cells
def _final_fit(ctx, proto: Protocol, dep: dict, *, prescaled: bool = False, **params) -> dict:
    """DANK's final fit at the ``(sigma, C)`` of ``dep`` (the split's ``dank-cv`` cell) with
    the estimator's ``params`` changed; ``prescaled``: the features are already scaled (the
    pipeline's own scaler is skipped). Certified solve records, train and test accuracy."""
    C, sigma = dep["C"], dep["sigma"]
    Xtr, ytr, Xte, yte, _ = ctx
    change = {f"{_STEP}__{k}": v for k, v in params.items()}
    if prescaled:
        change["minmaxscaler"] = "passthrough"
    rec = _dank_fit_eval(lambda: _dank(C, sigma, proto).set_params(**change), Xtr, ytr, Xte,
                         yte, True, ranks=False)
    rec.update(C=C, sigma=sigma, params_from="dank-cv", changed=_jsonable(params),
               prescaled=prescaled)
    return rec


def _jsonable(params: dict) -> dict:
    return {k: (v if isinstance(v, (int, float, str, bool, dict)) or v is None else str(v))
            for k, v in params.items()}


def _ago3(sign: str):
    def cell(ctx, proto, dep):
        return _final_fit(ctx, proto, dep, method="paper", max_iter=AGO3_T_MAX,
                          warm_start_svm=False,
                          solver_options=dict(beta_sign=sign, projection="paper", eps=AGO3_EPS))
    cell.__doc__ = f"Algorithm 1 (beta sign {sign!r}) at dank-cv's (sigma, C), from a0 = 0."
    return cell


def _cell_eta_n(ctx, proto, dep):
    """``eta = n`` of the training part (the Remark after Lemma 1: eta in O(n))."""
    return _final_fit(ctx, proto, dep, eta=float(ctx[1].size))


def _cell_nearest(ctx, proto, dep):
    """The nearest-neighbour out-of-sample extension."""
    return _final_fit(ctx, proto, dep, extension="nearest")


def scaled_on_all(ctx):
    """``ctx`` with min-max scaling fitted on both halves together (the test half included),
    applied to both: the paper's probable order (scale, then split)."""
    Xtr, ytr, Xte, yte, folds = ctx
    sc = MinMaxScaler().fit(np.vstack([Xtr, Xte]))
    return sc.transform(Xtr), ytr, sc.transform(Xte), yte, folds


def _baseline_fit(build, ctx, proto: Protocol, dep: dict, prescaled: bool) -> dict:
    """A baseline's final fit at the parameters its CV chose (``dep``: its default cell)."""
    Xtr, ytr, Xte, yte, _ = ctx
    C, sigma = dep["C"], dep.get("sigma")
    m = build(C, sigma, proto)
    if prescaled:
        m.set_params(minmaxscaler="passthrough")
    m.fit(Xtr, ytr)
    rec = dict(C=C, params_from=dep["method"], prescaled=prescaled,
               train_acc=_acc(m, Xtr, ytr), test_acc=_acc(m, Xte, yte))
    if sigma is not None:  # MKL-uniform has no sigma (as its default cell)
        rec["sigma"] = sigma
    return rec


def _cell_dank_scale_all(ctx, proto, dep):
    return _final_fit(scaled_on_all(ctx), proto, dep, prescaled=True)


def _cell_svm_scale_all(ctx, proto, dep):
    return _baseline_fit(_svm, scaled_on_all(ctx), proto, dep, prescaled=True)


def _cell_mkl_scale_all(ctx, proto, dep):
    return _baseline_fit(_mkl, scaled_on_all(ctx), proto, dep, prescaled=True)


def _cell_dank_other_split(ctx, proto, dep):
    """DANK on the other halves (``ctx`` is already theirs, :func:`run_reading_cell`)."""
    return _final_fit(ctx, proto, dep)


def _cell_svm_other_split(ctx, proto, dep):
    return _baseline_fit(_svm, ctx, proto, dep, prescaled=False)


def _cell_mkl_other_split(ctx, proto, dep):
    return _baseline_fit(_mkl, ctx, proto, dep, prescaled=False)


CELLS = {
    "dank-ago3": _ago3("printed"), "dank-ago3-ascent": _ago3("ascent"),
    "dank-eta-n": _cell_eta_n, "dank-nearest": _cell_nearest,
    "dank-scale-all": _cell_dank_scale_all, "svm-cv-scale-all": _cell_svm_scale_all,
    "mkl-uniform-scale-all": _cell_mkl_scale_all,
    "dank-other-split": _cell_dank_other_split, "svm-cv-other-split": _cell_svm_other_split,
    "mkl-uniform-other-split": _cell_mkl_other_split,
}
#: every reading cell, in the order they are planned
METHODS = tuple(CELLS)
#: every reading cell needs its method's default cell of the split (the parameters it chose)
DEPENDS = {m: "dank-cv" if m.startswith("dank-") else m.rsplit("-", 2)[0] for m in CELLS}
#: relative cost for the runner's ordering and ETA (one final fit; Algorithm 1: at most 2000 steps)
COST = {m: 3.0 if m.startswith("dank-ago3") else 0.05 for m in CELLS}
_OTHER_SPLIT = {"dank-other-split", "svm-cv-other-split", "mkl-uniform-other-split"}


def run_reading_cell(cell: Cell, ds: Dataset, proto: Protocol, dep: dict | None = None) -> dict:
    """Run one reading cell (:func:`.protocol.run_cell` with this module's cells); the
    other-split cells get the run's protocol with the split's stratification flipped (their
    own halves and folds; the protocol's fingerprint, hence the cache, stays the run's)."""
    if cell.method in _OTHER_SPLIT:
        proto = dataclasses.replace(proto, stratify=not proto.stratify)
    return run_cell(cell, ds, proto, dep, cells=CELLS, depends=DEPENDS)
