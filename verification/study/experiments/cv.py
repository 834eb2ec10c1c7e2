"""The cross-validation shared by every cell of dank-reproduce: the grid search with its
tie-break, the scores, and the test-set statistics a cell records.

Kept below :mod:`.protocol` so that the baseline cells (:mod:`.baselines`) use the very same
search and statistics as the paper's methods without importing the protocol.
"""

from __future__ import annotations

import numpy as np

__all__ = ["gamma_of", "grid_search"]


def gamma_of(sigma: float) -> float:
    """scikit-learn's ``gamma`` for the paper's Gaussian width: ``1 / (2 sigma^2)``."""
    return 1.0 / (2.0 * sigma * sigma)



def _score(model, X, y, classification: bool) -> float:
    pred = model.predict(X)
    if classification:
        return float(np.mean(pred == y))
    return -float(np.mean((pred - y) ** 2))


def grid_search(build, candidates, X, y, folds, *, classification: bool, on_fit=None,
                failures: list | None = None):
    """Mean CV score of every candidate; the best is the first maximum (tie-break = order).

    Parameters
    ----------
    build : callable
        ``build(C, sigma)`` returns an unfitted estimator with ``fit`` and ``predict``.
    candidates : list of (float, float)
        The ``(C, sigma)`` grid, in tie-break order.
    X, y : ndarray
        The training part only (the test part never enters).
    folds : list of (ndarray, ndarray)
        ``(train indices, validation indices)`` into ``X`` for every fold.
    classification : bool
        Score by accuracy (True) or minus the mean squared error.
    on_fit : callable, optional
        Called with every fitted model (e.g. to collect certificates).
    failures : list, optional
        If given, a fit or prediction that raises is appended here as
        ``dict(C, sigma, fold, error)`` and its candidate is excluded (score nan, remaining
        folds skipped) instead of propagating the exception. Used for the DANK solvers, whose
        eigen-solver can raise (see the report's list of failed fits).

    Returns
    -------
    best : int
        Index into ``candidates``.
    scores : ndarray of shape (len(candidates),)
        Mean validation score of each candidate (nan for an excluded one).

    Raises
    ------
    RuntimeError
        If ``failures`` is given and every candidate failed.
    Exception
        Whatever a fit or prediction raises, when ``failures`` is None.

    Notes
    -----
    Time: ``len(candidates) * len(folds)`` fits and predictions of ``build``'s estimator
    (for a kernel method on ``m`` training points, each ``O(m^2 d)`` to ``O(m^3)``); memory:
    one fitted model at a time.
    """
    scores = np.empty(len(candidates))
    for k, (C, sigma) in enumerate(candidates):
        s = []
        for f, (tr, va) in enumerate(folds):
            try:
                m = build(C, sigma).fit(X[tr], y[tr])
                if on_fit is not None:
                    on_fit(m)
                s.append(_score(m, X[va], y[va], classification))
            except Exception as exc:
                if failures is None:
                    raise
                failures.append(dict(C=C, sigma=sigma, fold=f,
                                     error=f"{type(exc).__name__}: {exc}"[:300]))
                s = [float("nan")]
                break
        scores[k] = float(np.mean(s))
    if np.all(np.isnan(scores)):
        raise RuntimeError(f"every CV candidate failed; first error: {failures[0]['error']}")
    return int(np.nanargmax(scores)), scores


def _scores_list(scores) -> list:
    """Mean CV score of every candidate (``proto.candidates()`` order; None = excluded)."""
    return [None if not np.isfinite(v) else float(v) for v in scores]


def _acc(model, X, y) -> float:
    return float(np.mean(model.predict(X) == y))


def _reg_stats(model, X, y) -> dict:
    pred = model.predict(X)
    return dict(n=int(y.size), sse=float(np.sum((pred - y) ** 2)),
                sst=float(np.sum((y - y.mean()) ** 2)))


