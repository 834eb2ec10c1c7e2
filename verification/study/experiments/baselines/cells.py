"""The baseline cells of dank-reproduce: ``rf-cv``, ``logdet`` (Table 2) and ``nw-cv``,
``nw-ml`` (Table 6).

Every cell takes the split context ``(Xtr, ytr, Xte, yte, folds)`` of :mod:`..protocol` (same
splits, same CV folds as every other method of the split), scales the inputs to ``[0, 1]^d``
with a scaler fitted on the training part (refitted per fold, a pipeline step) and chooses its
parameters by :func:`..cv.grid_search` (first maximum of the mean CV score in candidate order;
the order puts the smoothest model first, as the protocol's ``C``-ascending, ``sigma``-
descending order does). Random choices (forest, constraint sampling, MLKR's subset) are seeded
from the protocol's seed and the split's folds, so a cell is reproducible.

Parameters where the paper is silent (reported in the protocol notes):

* ``rf-cv``: :class:`sklearn.ensemble.RandomForestClassifier` with ``RF_TREES`` trees;
  ``min_samples_leaf`` in ``(5, 1)`` x ``max_features`` in ``("sqrt", None)`` by CV.
* ``logdet``: :class:`.logdet.LogDetKernelSVC`; ``sigma`` and ``C`` are the split's SVM-CV
  choice (its cell, a dependency), only the slack ``gamma`` in ``LOGDET_GAMMAS`` by CV (the
  smallest, closest to ``K0``, wins ties); at most 100 sweeps of projections per fit; a
  candidate whose projections diverge is excluded (``cv_failures``).
* ``nw-cv``: plain Nadaraya-Watson, ``sigma`` on the protocol's grid by CV.
* ``nw-ml``: :class:`.nadaraya.MLKRRegressor` started at ``nw-cv``'s ``sigma`` (a dependency);
  the metric is learned on at most ``NWML_MAX_FIT`` training points. Targets of both are
  standardised like SVR-CV's (:class:`sklearn.compose.TransformedTargetRegressor`).
"""

from __future__ import annotations

import zlib

import numpy as np
from sklearn.compose import TransformedTargetRegressor
from sklearn.ensemble import RandomForestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler

from ..cv import _acc, _reg_stats, _scores_list, grid_search
from ..data import derive_seed
from .logdet import LogDetKernelSVC
from .nadaraya import MLKRRegressor, NadarayaWatson

__all__ = ["BASELINE_CELLS", "BASELINE_COST", "BASELINE_DEPENDS", "CLS_BASELINES",
           "REG_BASELINES"]

RF_TREES = 100
RF_GRID = [(leaf, feat) for leaf in (5, 1) for feat in ("sqrt", None)]
LOGDET_GAMMAS = (0.01, 0.1, 1.0)
NWML_MAX_FIT = 1000

CLS_BASELINES = ("rf-cv", "logdet")
REG_BASELINES = ("nw-cv", "nw-ml")
BASELINE_DEPENDS = {"logdet": "svm-cv", "nw-ml": "nw-cv"}
#: relative cost for the runner's ordering and ETA (see runner.cell_cost)
BASELINE_COST = {"rf-cv": 0.3, "logdet": 0.5, "nw-cv": 0.1, "nw-ml": 0.5}


def cell_seed(proto, ctx, what: str) -> int:
    """A seed of ``(protocol seed, what, this split's folds)``: the folds are derived from
    ``(seed, data set, split)``, so the seed differs between splits and sets."""
    folds = ctx[4]
    return derive_seed(proto.seed, what, zlib.crc32(np.ascontiguousarray(folds[0][1],
                                                                          dtype=np.int64)))


def _rf(leaf, feat, seed):
    return make_pipeline(MinMaxScaler(), RandomForestClassifier(
        n_estimators=RF_TREES, min_samples_leaf=leaf, max_features=feat, random_state=seed,
        n_jobs=1))


def _cell_rf_cv(ctx, proto):
    Xtr, ytr, Xte, yte, folds = ctx
    seed = cell_seed(proto, ctx, "rf")
    best, scores = grid_search(lambda a, b: _rf(a, b, seed), RF_GRID, Xtr, ytr, folds,
                               classification=True)
    leaf, feat = RF_GRID[best]
    m = _rf(leaf, feat, seed).fit(Xtr, ytr)
    return dict(min_samples_leaf=leaf, max_features=feat, n_estimators=RF_TREES, seed=seed,
                cv_score=float(scores[best]), cv_scores=_scores_list(scores),
                train_acc=_acc(m, Xtr, ytr), test_acc=_acc(m, Xte, yte))


def _logdet(C, sigma, gamma, seed):
    return make_pipeline(MinMaxScaler(), LogDetKernelSVC(sigma=sigma, C=C, gamma=gamma,
                                                         random_state=seed))


def _cell_logdet(ctx, proto, dep):
    Xtr, ytr, Xte, yte, folds = ctx
    C, sigma = dep["C"], dep["sigma"]
    seed = cell_seed(proto, ctx, "logdet")
    cands = [(g, None) for g in LOGDET_GAMMAS]
    failures: list[dict] = []
    best, scores = grid_search(lambda g, _: _logdet(C, sigma, g, seed), cands, Xtr, ytr,
                               folds, classification=True, failures=failures)
    gamma = LOGDET_GAMMAS[best]
    m = _logdet(C, sigma, gamma, seed).fit(Xtr, ytr)
    return dict(C=C, sigma=sigma, gamma=gamma, params_from="svm-cv", seed=seed,
                cv_score=float(scores[best]), cv_scores=_scores_list(scores),
                sweeps=m[-1].info_["sweeps"], converged=m[-1].info_["converged"],
                n_constrained=int(m[-1].P_.size), cv_failures=failures, train_acc=_acc(m, Xtr, ytr),
                test_acc=_acc(m, Xte, yte))


def _standardised(est):
    return TransformedTargetRegressor(regressor=make_pipeline(MinMaxScaler(), est),
                                      transformer=StandardScaler())


def _cell_nw_cv(ctx, proto):
    Xtr, ytr, Xte, yte, folds = ctx
    cands = [(float("nan"), s) for s in sorted(proto.sigma_grid)[::-1]]
    best, scores = grid_search(lambda _, s: _standardised(NadarayaWatson(sigma=s)), cands,
                               Xtr, ytr, folds, classification=False)
    sigma = cands[best][1]
    m = _standardised(NadarayaWatson(sigma=sigma)).fit(Xtr, ytr)
    return dict(sigma=sigma, cv_score=float(scores[best]), cv_scores=_scores_list(scores),
                train=_reg_stats(m, Xtr, ytr), test=_reg_stats(m, Xte, yte))


def _cell_nw_ml(ctx, proto, dep):
    Xtr, ytr, Xte, yte, _ = ctx
    seed = cell_seed(proto, ctx, "nw-ml")
    m = _standardised(MLKRRegressor(sigma=dep["sigma"], max_fit=NWML_MAX_FIT,
                                    random_state=seed)).fit(Xtr, ytr)
    est = m.regressor_[-1]
    return dict(sigma=dep["sigma"], params_from="nw-cv", seed=seed, n_fit=est.n_fit_,
                n_iter=est.n_iter_, loo_loss=est.loss_, train=_reg_stats(m, Xtr, ytr),
                test=_reg_stats(m, Xte, yte))


BASELINE_CELLS = {"rf-cv": _cell_rf_cv, "logdet": _cell_logdet, "nw-cv": _cell_nw_cv,
                  "nw-ml": _cell_nw_ml}
