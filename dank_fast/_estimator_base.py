"""Plumbing shared by :class:`DANKClassifier` and :class:`DANKRegressor`."""

from __future__ import annotations

import warnings

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs

from ._routes import TrainingData
from ._warm import WarmState, data_key
from .kernels import compute_kernel

__all__ = ["KernelEstimatorMixin", "fit_problems"]


def fit_problems(tasks: list, n_jobs: int | None) -> list:
    """``route.fit(train, idx, y, alpha0=alpha0)`` for every task ``(route, train, idx, y,
    alpha0)``, in order: in this process when joblib's ``effective_n_jobs(n_jobs)`` is 1,
    else in parallel by joblib (its default backend, or the one of an enclosing
    ``joblib.parallel_backend``).

    A parallel task receives its own problem's data only (``train`` restricted to ``idx``:
    ``8 n_p^2`` bytes of kernel, or the ``n_p`` feature rows), never the whole training set; at
    most ``2 n_jobs`` tasks are prepared ahead. The warnings a task issues in a worker (e.g. a
    :class:`dank_fast.ConvergenceWarning`) are issued again here.
    """
    if len(tasks) <= 1 or effective_n_jobs(n_jobs) == 1:
        return [route.fit(train, idx, y, alpha0=alpha0) for route, train, idx, y, alpha0 in tasks]
    jobs = (delayed(_fit_one)(route, _restricted(train, idx), y, alpha0)
            for route, train, idx, y, alpha0 in tasks)
    fits = []
    for fit, caught in Parallel(n_jobs=n_jobs)(jobs):
        for w in caught:
            warnings.warn(w.message, w.category, stacklevel=2)
        fits.append(fit)
    return fits


def _restricted(train: TrainingData, idx: np.ndarray) -> TrainingData:
    """The training data of the points ``idx`` (a precomputed kernel is ``X`` and ``K`` at
    once: restricted to ``K[idx, idx]``)."""
    K = None if train.K is None else train.K[np.ix_(idx, idx)]
    return TrainingData(K if train.X is train.K else train.X[idx], K)


def _fit_one(route, train: TrainingData, y: np.ndarray, alpha0):
    """One task of :func:`fit_problems` in a worker: the fit and the warnings it issued."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = route.fit(train, np.arange(y.size), y, alpha0=alpha0)
    return fit, caught


class KernelEstimatorMixin:
    """Kernel parameters, the ``pairwise`` tag and the fitted check of the DANK estimators."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def __sklearn_is_fitted__(self) -> bool:
        # n_features_in_ is set by validate_data even when fit fails later
        return hasattr(self, "results_")

    @property
    def _precomputed(self) -> bool:
        return self.kernel == "precomputed"

    def _kernel_kwargs(self) -> dict:
        return {
            "kernel": self.kernel,
            "sigma": self.sigma,
            "gamma": self.gamma,
            "degree": self.degree,
            "coef0": self.coef0,
        }

    def _kernel(self, A, B=None) -> np.ndarray:
        """``[k(a_i, b_j)]`` for the fitted kernel parameters (not for precomputed)."""
        return compute_kernel(A, B, **self._kernel_kwargs())

    def _warm(self, X, y, indices) -> tuple[str, WarmState | None]:
        """``(key, state)``: the key of this fit's data and problems (:func:`data_key`), and
        the previous fit's :class:`WarmState` when ``warm_start`` is set (None otherwise; a
        state whose key differs gives a cold fit)."""
        if not self.warm_start:
            self._warm_state = None
            return "", None
        return data_key(X, y, indices), getattr(self, "_warm_state", None)

    def _kernel_key(self) -> tuple:
        """The kernel parameters as a comparable tuple (:meth:`WarmState.kernel`)."""
        return tuple(sorted(self._kernel_kwargs().items()))

    def _remember(self, key: str, results, K) -> None:
        """Keep this fit's solutions (and training kernel ``K``) for the next warm start."""
        if self.warm_start:
            self._warm_state = WarmState(key, float(self.C),
                                         tuple(r.alpha.copy() for r in results),
                                         self._kernel_key(), K)
