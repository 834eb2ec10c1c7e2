"""Probabilities of :class:`dank_fast.DANKClassifier` (``probability=True``), as SVC computes them.

libsvm (behind :class:`sklearn.svm.SVC`) fits Platt's sigmoid ``P(positive | f) = 1 / (1 +
exp(A f + B))`` to every binary problem's decision values ``f`` obtained by an internal 5-fold
cross-validation (decision values of points the model was not trained on), then couples the
pairwise probabilities of a multi-class problem into one distribution. Here:

* :func:`cross_val_decisions`: every binary problem's out-of-fold decision values, by refitting
  the estimator (with ``probability=False``) on 5 stratified folds (fewer when a class has fewer
  than 5 samples); the folds are shuffled by the estimator's ``random_state``;
* :func:`fit_sigmoids`: ``(A, B)`` per problem on that problem's samples, by scikit-learn's
  ``_sigmoid_calibration`` (Platt's method with his target smoothing; private, imported
  through :mod:`dank_fast._sklearn_compat` with a fallback);
* :func:`probabilities`: two classes: the sigmoid; one-vs-one problems: the pairwise coupling
  of Wu, Lin and Weng (2004, their method 2, the one libsvm uses); one-vs-rest problems: the
  sigmoids normalised to sum to one.

As for SVC, the probabilities come from other models than the fitted one (the folds' models),
so they may disagree with ``predict`` (an argmax of probabilities can differ from the predicted
class), and they mean little on very small data sets.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from ._sklearn_compat import sigmoid_calibration

__all__ = ["cross_val_decisions", "fit_sigmoids", "probabilities", "pairwise_coupling"]

#: folds of the internal cross-validation (libsvm's 5)
N_FOLDS = 5


def cross_val_decisions(est, X, y, sample_weight, problem_classes) -> np.ndarray:
    """Out-of-fold decision values of every binary problem, shape ``(n, n_problems)``.

    ``est`` is the (unfitted) estimator: each fold refits ``clone(est)`` with
    ``probability=False`` on the other folds (with their sample weights) and evaluates its
    :meth:`pairwise_decision_function` on the fold. ``problem_classes`` are the fitted
    estimator's (each fold's training part holds every class, so its problems are the same).
    """
    classes, y_enc = np.unique(y, return_inverse=True)
    counts = np.bincount(y_enc)
    n_splits = min(N_FOLDS, int(counts.min()))
    if n_splits < 2:
        raise ValueError(
            "probability=True needs at least 2 samples of every class for its internal "
            f"cross-validation (Platt scaling, as SVC); class {classes[np.argmin(counts)]!r} "
            "has 1")
    # start-up: sklearn.model_selection is needed only with probability=True
    from sklearn.model_selection import StratifiedKFold

    rs = est.random_state if est.random_state is not None else 0
    folds = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=rs)
    out = np.zeros((y.size, len(problem_classes)))
    for tr, te in folds.split(X, y_enc):
        fold = clone(est).set_params(probability=False, warm_start=False)
        sw = None if sample_weight is None else np.asarray(sample_weight)[tr]
        fold.fit(X[tr] if not est._precomputed else X[np.ix_(tr, tr)], y[tr], sample_weight=sw)
        Xte = X[te] if not est._precomputed else X[np.ix_(te, tr)]
        out[te] = fold.pairwise_decision_function(Xte)
    return out


def fit_sigmoids(dec: np.ndarray, y_enc: np.ndarray, problem_classes) -> np.ndarray:
    """Platt's ``(A, B)`` of every problem, shape ``(n_problems, 2)``: on the problem's samples
    (a one-vs-one pair: its two classes; one-vs-rest: all), target 1 for its positive class."""
    AB = np.empty((len(problem_classes), 2))
    for p, (neg, pos) in enumerate(problem_classes):
        mask = np.ones(y_enc.size, dtype=bool) if neg < 0 else np.isin(y_enc, (neg, pos))
        target = (y_enc[mask] == pos).astype(np.float64)
        AB[p] = sigmoid_calibration(dec[mask, p], target)
    return AB


def _sigmoid(dec: np.ndarray, AB: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(A f + B))`` column by column, without overflow."""
    z = dec * AB[:, 0] + AB[:, 1]
    return np.exp(-np.logaddexp(0.0, z))


def pairwise_coupling(r: np.ndarray, n_classes: int, max_iter: int = 100) -> np.ndarray:
    """Wu, Lin and Weng's coupling (2004, method 2; libsvm's ``multiclass_probability``).

    ``r[:, k]`` is ``P(class j | class i or j)`` for the ``k``-th pair ``(i, j)`` in the order
    ``(0, 1), (0, 2), ..., (1, 2), ...``. Returns ``p`` of shape ``(n, n_classes)``: the
    minimiser of ``sum_{i != j} (r_ji p_i - r_ij p_j)^2`` on the simplex, by libsvm's fixed-point
    iteration, row by row (each row stops at ``0.005 / n_classes``, as libsvm): a row's result
    does not depend on the other rows.
    """
    m = r.shape[0]
    R = np.zeros((m, n_classes, n_classes))  # R[:, i, j] = P(i | i or j)
    k = 0
    for i in range(n_classes):
        for j in range(i + 1, n_classes):
            R[:, j, i], R[:, i, j] = r[:, k], 1.0 - r[:, k]
            k += 1
    Q = -R.transpose(0, 2, 1) * R  # Q_ij = -r_ji r_ij (i != j)
    diag = np.einsum("mji,mji->mi", R, R)  # Q_ii = sum_j r_ji^2
    Q[:, np.arange(n_classes), np.arange(n_classes)] = diag
    p = np.full((m, n_classes), 1.0 / n_classes)
    eps = 0.005 / n_classes
    active = np.arange(m)  # every row stops on its own (a row's result is the batch's)
    for _ in range(max(max_iter, n_classes)):
        Qa, pa = Q[active], p[active]
        Qp = np.einsum("mij,mj->mi", Qa, pa)
        pQp = np.einsum("mi,mi->m", pa, Qp)
        going = np.max(np.abs(Qp - pQp[:, None]), axis=1) >= eps
        active, Qa, pa, Qp, pQp = (active[going], Qa[going], pa[going], Qp[going],
                                   pQp[going])
        if active.size == 0:
            break
        for t in range(n_classes):
            diff = (-Qp[:, t] + pQp) / Qa[:, t, t]
            pa[:, t] += diff
            pQp = (pQp + diff * (diff * Qa[:, t, t] + 2 * Qp[:, t])) / (1 + diff) ** 2
            Qp = (Qp + diff[:, None] * Qa[:, t, :]) / (1 + diff)[:, None]
            pa /= (1 + diff)[:, None]
        p[active] = pa
    return p


def probabilities(dec: np.ndarray, AB: np.ndarray, problem_classes, n_classes: int
                  ) -> np.ndarray:
    """Class probabilities (rows sum to 1) from the problems' decision values ``dec``."""
    q = _sigmoid(dec, AB)  # P(positive class of problem p)
    if n_classes == 2:
        return np.column_stack([1.0 - q[:, 0], q[:, 0]])
    if problem_classes[0][0] < 0:  # one-vs-rest: normalise
        q = np.clip(q, 1e-12, None)
        return q / q.sum(axis=1, keepdims=True)
    p = pairwise_coupling(np.clip(q, 1e-7, 1 - 1e-7), n_classes)  # libsvm's min_prob
    return p / p.sum(axis=1, keepdims=True)
