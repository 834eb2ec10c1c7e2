"""The fit of :class:`dank_fast.DANKClassifier` behind its scikit-learn interface: the one
validation of the training data, one route per binary problem (its box, its warm start, the
training kernel formed once), the fitted attributes in SVC's layout, and Platt's sigmoids.

:class:`ClassifierFitMixin` holds these steps as private methods of the estimator; the
estimator's ``fit`` calls them in order (validation, weights, problems, probabilities). The
binary problems and SVC's layout are :mod:`dank_fast._estimator_multiclass`'s, the routes
:mod:`dank_fast._routes`'s, the parallel solve :func:`dank_fast._estimator_base.fit_problems`.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ._estimator_base import KernelEstimatorMixin, fit_problems
from ._estimator_multiclass import binary_problems, svc_layout
from ._kernel_validation import check_kernel_matrix, refuse_non_numeric_kernel
from ._probability import cross_val_decisions, fit_sigmoids
from ._routes import (
    DECOMPOSITION_METHODS,
    RouteFit,
    Settings,
    TrainingData,
    choose_route,
)
from .kernels import kernel_params

__all__ = ["ClassifierFitMixin"]


class ClassifierFitMixin(KernelEstimatorMixin):
    """The steps of :class:`dank_fast.DANKClassifier`'s ``fit`` on the estimator's
    hyper-parameters: :meth:`_validate_training_data`, :meth:`_fit_problems` (which stores
    the fitted attributes) and :meth:`_fit_probability`."""

    def _validate_training_data(self, X, y):
        """``(X, classes, y_enc)`` after the one validation of a fit: scikit-learn's
        ``validate_data``, the kernel (a precomputed one by the rule of docs/validity.md, PSD
        included; else the kernel parameters), at least two classes, and the routes that need
        features."""
        # a precomputed kernel keeps float32/float16 here: the validity rule takes its
        # tolerances from the input dtype (check_kernel_matrix returns float64)
        dtype = (np.float64, np.float32, np.float16) if self._precomputed else np.float64
        if self._precomputed:
            refuse_non_numeric_kernel(X)  # before validate_data casts booleans / strings
        X, y = validate_data(self, X, y, dtype=dtype, order="C")
        check_classification_targets(y)
        if self._precomputed:
            if X.shape[0] != X.shape[1]:
                raise ValueError(
                    "Precomputed kernel must be a square matrix of shape "
                    f"(n_samples, n_samples), got {X.shape[0]}x{X.shape[1]}."
                )
            X = check_kernel_matrix(X)  # symmetric and PSD, else a clear ValueError
        else:
            # resolves and checks sigma/gamma/degree/coef0 (PSD kernels only)
            kernel_params(**self._kernel_kwargs(), n_features=X.shape[1])
        classes, y_enc = np.unique(y, return_inverse=True)
        if classes.size < 2:
            raise ValueError(
                "DANKClassifier needs samples of at least two classes, but the data "
                f"contain only one class: {classes[0]!r}"
            )
        if self.decomposition is not None and self._precomputed:
            raise ValueError("decomposition needs features for k-means, not a precomputed kernel")
        if self.decomposition is not None and self.method not in DECOMPOSITION_METHODS:
            raise ValueError(
                f"method={self.method!r} does not solve the clusters of a decomposition (P3); "
                f"use one of {DECOMPOSITION_METHODS} with decomposition={self.decomposition!r}")
        if self.multi_class == "ovr" and self.decision_function_shape == "ovo" and (
                classes.size > 2):
            raise ValueError("decision_function_shape='ovo' needs multi_class='ovo' (one "
                             "problem per pair of classes); multi_class='ovr' gives one "
                             "decision value per class: use decision_function_shape='ovr'")
        if self.route == "working-set" and self._precomputed:
            raise ValueError("route='working-set' needs features, not a precomputed kernel")
        return X, classes, y_enc

    def _settings(self) -> Settings:
        """The hyper-parameters the routes need (:mod:`dank_fast._routes`)."""
        return Settings(
            C=self.C, eta=self.eta, tau=self.tau, method=self.method, tol=self.tol,
            max_iter=self.max_iter, warm_start=self.warm_start_svm,
            kernel_kwargs=self._kernel_kwargs(), decomposition=self.decomposition,
            random_state=self.random_state, verbose=bool(self.verbose),
            options=dict(self.solver_options or {}),
        )

    def _fit_problems(self, X, classes, y_enc, box) -> None:
        """Solve every binary problem by its route and store the fitted attributes (``box``:
        every sample's box, None for the scalar ``C``)."""
        problems = list(binary_problems(y_enc, classes.size, self.multi_class, box))
        boxes = [self.C if box is None else box[idx] for _, idx, _ in problems]
        settings = self._settings()
        routes = [choose_route(settings, self.route, idx.size, self._precomputed)
                  for _, idx, _ in problems]
        dense = any(r.name == "dense" for r in routes)
        key, state = self._warm(X, y_enc, [idx for _, idx, _ in problems])
        starts = None if state is None else state.starts(key, boxes)
        train = TrainingData(X, self._training_kernel(X, key, state) if dense else None)
        tasks = [(route, train, idx, yb, None if starts is None else starts[p],
                  None if box is None else boxes[p])
                 for p, ((_, idx, yb), route) in enumerate(zip(problems, routes, strict=True))]
        fits = fit_problems(tasks, self.n_jobs)
        for (pair, idx, _), route, fit in zip(problems, routes, fits, strict=True):
            fit.model.route = route.name
            if self.verbose:
                print(
                    f"[DANKClassifier] problem {pair}: n={idx.size}, route={route.name}, "
                    f"eta={fit.eta:.4g}, |S|={fit.model.support.size}, {fit.result.status}, "
                    f"rel_gap={fit.result.rel_gap:.2e}"
                )
        self._store_fit(X, classes, y_enc, problems, fits)
        self.sample_box_ = box
        self._remember(key, self.results_, train.K, boxes)

    def _training_kernel(self, X, key, state) -> np.ndarray:
        """The dense training kernel: the precomputed one, the warm start's when it is the
        same (:meth:`WarmState.kernel`), else computed (``O(n^2 d)``)."""
        if self._precomputed:
            return X
        K = None if state is None else state.kernel(key, self._kernel_key())
        return self._kernel(X) if K is None else K

    def _store_fit(self, X, classes, y_enc, problems, fits: list[RouteFit]) -> None:
        """The fitted attributes (see the class docstring) from the routes' results."""
        models = [f.model for f in fits]
        indices = [idx for _, idx, _ in problems]
        self.classes_ = classes
        self.X_fit_ = X
        self.results_ = [f.result for f in fits]
        self.models_ = models
        self.problem_classes_ = [pair for pair, _, _ in problems]
        self.problem_indices_ = indices
        self.eta_ = np.asarray([f.eta for f in fits], dtype=np.float64)
        self.problem_support_ = [idx[m.support] for idx, m in zip(indices, models, strict=True)]
        self.problem_dual_coef_ = [m.dual for m in models]
        self.problem_intercept_ = np.asarray([m.bias for m in models], dtype=np.float64)
        self.n_iter_ = np.asarray(
            [int(np.sum(f.result.n_iter)) for f in fits], dtype=np.int64,
        )
        self._store_svc_layout(X, y_enc, classes.size)
        self.fit_status_ = int(not all(f.result.status == "converged" for f in fits))
        if self.decomposition is not None:
            self.cluster_centers_ = [m.centers for m in models]
            self.cluster_labels_ = [m.labels for m in models]

    def _store_svc_layout(self, X, y_enc, n_classes: int) -> None:
        """``support_``, ``support_vectors_``, ``n_support_``, ``dual_coef_``, ``intercept_``
        in :class:`sklearn.svm.SVC`'s layout (class docstring) from the problems' ones."""
        layout = svc_layout(y_enc, n_classes, self.multi_class, self.problem_classes_,
                            self.problem_support_, self.problem_dual_coef_,
                            self.problem_intercept_)
        self.support_ = layout.support
        self.support_vectors_ = (np.empty((0, 0)) if self._precomputed else X[layout.support])
        self.n_support_ = layout.n_support
        self.dual_coef_ = layout.dual_coef
        self.intercept_ = layout.intercept

    def _fit_probability(self, X, y, y_enc, sample_weight) -> None:
        """Platt's sigmoids from an internal 5-fold cross-validation (:mod:`._probability`)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # sigma: warned once in fit
            dec = cross_val_decisions(self, X, y, sample_weight, self.problem_classes_)
        AB = fit_sigmoids(dec, y_enc, self.problem_classes_)
        self.probA_, self.probB_ = AB[:, 0].copy(), AB[:, 1].copy()
