"""Plumbing shared by :class:`DANKClassifier` and :class:`DANKRegressor`: the kernel
parameters (``sigma`` deprecated for ``gamma``), the per-sample boxes of sample and class
weights, the parallel fit of the problems and the warm-start state."""

from __future__ import annotations

import warnings

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.utils.validation import _check_sample_weight

from ._routes import TrainingData
from ._warm import WarmState, data_key
from .kernels import compute_kernel

__all__ = ["KernelEstimatorMixin", "fit_problems", "sample_boxes"]


def sample_boxes(C: float, X, sample_weight, class_weight=None, y_enc=None):
    """Every training sample's box ``C w_i`` (libsvm's ``C * class_weight[y_i] *
    sample_weight_i``, docs/MATH.md section 14), or None when every ``w_i`` is 1 (the scalar
    problem, solved exactly as without weights).

    ``sample_weight`` is checked as scikit-learn checks it (``_check_sample_weight``: shape
    ``(n,)``, finite, non-negative); all zero is a ``ValueError``. A sample of weight zero has
    box 0: the estimators drop it from every problem, as libsvm does.
    """
    w = np.ones(X.shape[0])
    if sample_weight is not None:
        w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        if not np.any(w > 0):
            raise ValueError("Sample weights must contain at least one non-zero number (every "
                             "sample has weight zero: no sample is left to fit)")
    if class_weight is not None:
        w = w * np.asarray(class_weight, dtype=np.float64)[y_enc]
    if np.all(w == 1.0):
        return None
    return C * w


def fit_problems(tasks: list, n_jobs: int | None) -> list:
    """``route.fit(train, idx, y, alpha0=alpha0, C=C)`` for every task ``(route, train, idx,
    y, alpha0, C)`` (``C``: the problem's box, None for the estimator's scalar), in order:
    in this process when joblib's ``effective_n_jobs(n_jobs)`` is 1,
    else in parallel by joblib (its default backend, or the one of an enclosing
    ``joblib.parallel_backend``).

    A parallel task receives its own problem's data only (``train`` restricted to ``idx``:
    ``8 n_p^2`` bytes of kernel, or the ``n_p`` feature rows), never the whole training set; at
    most ``2 n_jobs`` tasks are prepared ahead. The warnings a task issues in a worker (e.g. a
    :class:`dank_fast.ConvergenceWarning`) are issued again here.
    """
    if len(tasks) <= 1 or effective_n_jobs(n_jobs) == 1:
        return [route.fit(train, idx, y, alpha0=alpha0, C=C)
                for route, train, idx, y, alpha0, C in tasks]
    jobs = (delayed(_fit_one)(route, _restricted(train, idx), y, alpha0, C)
            for route, train, idx, y, alpha0, C in tasks)
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


def _fit_one(route, train: TrainingData, y: np.ndarray, alpha0, C):
    """One task of :func:`fit_problems` in a worker: the fit and the warnings it issued."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = route.fit(train, np.arange(y.size), y, alpha0=alpha0, C=C)
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

    def _check_width(self) -> None:
        """``sigma`` is deprecated (one release) for scikit-learn's ``gamma = 1 / (2
        sigma^2)``: a ``DeprecationWarning`` when it is given, a ``ValueError`` naming both when
        both are. Called at the start of ``fit``."""
        if self.sigma is None:
            return
        if self.gamma is not None:
            raise ValueError(
                f"give the Gaussian width once: sigma={self.sigma!r} and gamma={self.gamma!r} "
                "are both set (gamma = 1 / (2 sigma^2); sigma is deprecated, use gamma)")
        warnings.warn(
            f"sigma is deprecated and will be removed in the next release; use gamma = 1 / "
            f"(2 sigma^2) = {1.0 / (2.0 * self.sigma ** 2)!r} (scikit-learn's name, as in "
            "sklearn.svm.SVC)", DeprecationWarning, stacklevel=3)

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

    def _remember(self, key: str, results, K, boxes) -> None:
        """Keep this fit's solutions, boxes (one per problem) and training kernel ``K`` for
        the next warm start."""
        if self.warm_start:
            self._warm_state = WarmState(key, tuple(boxes),
                                         tuple(r.alpha.copy() for r in results),
                                         self._kernel_key(), K)
