"""Plumbing shared by :class:`DANKClassifier` and :class:`DANKRegressor`."""

from __future__ import annotations

import numpy as np

from ._warm import WarmState, data_key
from .kernels import compute_kernel

__all__ = ["KernelEstimatorMixin"]


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
