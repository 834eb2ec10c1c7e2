"""scikit-learn estimator for DANK in SVM (P1, eq. (4)).

:class:`DANKClassifier` learns a data-adaptive kernel ``F o K`` jointly with an
SVM (eq. (4)) through :func:`dank_fast.solve_svm`, and predicts unseen
points with the paper's out-of-sample extension (Section 2.3, eq. (11)):
a test point borrows the column of ``F`` of a matched training point.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.class_weight import compute_class_weight
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from ._cost import BLOCK_BYTES, DENSE_KERNEL_BYTES
from ._estimator_base import sample_boxes
from ._estimator_classifier_fit import ClassifierFitMixin
from ._estimator_decisions import decide, problem_decisions
from ._estimator_multiclass import combined_decisions, predicted_indices
from ._probability import probabilities
from ._sklearn_compat import Interval, StrOptions, fit_context
from ._threads import blas_threads
from .kernels import KERNELS
from .svm import METHODS

__all__ = ["DANKClassifier", "DENSE_KERNEL_BYTES"]


class DANKClassifier(ClassifierFitMixin, ClassifierMixin, BaseEstimator):
    """Data-adaptive non-parametric kernel SVM (DANK, Liu et al., JMLR 2020).

    Solves the saddle problem of eq. (4),

    ``max_{a in A} min_{F PSD} 1'a - 1/2 a'Y(F o K)Y a + eta ||F - 11'||_F^2
    + tau eta ||F||_*``,  ``A = {a : y'a = 0, 0 <= a <= C}``,

    which learns a PSD matrix ``F`` (close to the all-ones matrix) that reweights
    the initial kernel ``K`` entrywise, together with the SVM dual variables
    ``a``. The decision function on a training point ``x_j`` is
    ``f(x_j) = sum_i a_i y_i F_ij k(x_i, x_j) + b``. Unseen points use the
    out-of-sample extension of Section 2.3: a test point ``x'_j`` is matched to
    a training point ``j*`` and borrows its column of ``F``,

    ``f(x'_j) = sum_{i in S} a_i y_i F_{i, j*} k(x_i, x'_j) + b``

    (``S`` the support vectors). With ``eta -> inf`` and ``tau = 0``, ``F -> 11'``
    and the model reduces to the plain SVM with kernel ``K``.

    Parameters
    ----------
    C : float, default=1.0
        Box constraint of the SVM dual (> 0). With weights, sample ``i`` has its own box
        ``C * class_weight_[y_i] * sample_weight[i]`` (libsvm's rule, as :class:`sklearn.svm.SVC`;
        the per-sample boxes of docs/MATH.md section 14).
    kernel : {"rbf", "gaussian", "linear", "poly", "precomputed"}, default="rbf"
        Initial kernel ``K``. ``"rbf"`` and ``"gaussian"`` are the same Gaussian
        kernel. With ``"precomputed"``, ``fit`` takes the (PSD) training kernel
        of shape (n_samples, n_samples) and ``predict``/``decision_function``
        take ``K_test[j, i] = k(x'_j, x_i)`` of shape (n_test, n_samples), as
        :class:`sklearn.svm.SVC` does.
    gamma : float, default=None
        The kernel coefficient of scikit-learn for ``"rbf"``/``"poly"``: the Gaussian is
        ``k(x, x') = exp(-gamma ||x - x'||^2)`` (the paper's width ``sigma`` is ``gamma = 1 /
        (2 sigma^2)``); when it is not given, ``gamma = 1 / n_features``.
    sigma : float, default=None
        Deprecated (removed in the next release): the paper's Gaussian width, ``gamma = 1 /
        (2 sigma^2)``. Giving it issues a ``DeprecationWarning``; giving it with ``gamma`` is a
        ``ValueError`` naming both.
    class_weight : dict, "balanced" or None, default=None
        As :class:`sklearn.svm.SVC`: the box of class ``k`` is ``C * class_weight[k]``;
        ``"balanced"`` uses ``n_samples / (n_classes * np.bincount(y))``
        (:func:`sklearn.utils.class_weight.compute_class_weight`). Stored in
        ``class_weight_``.
    degree : int, default=3
        Degree of the ``"poly"`` kernel ``(gamma <x, x'> + coef0)^degree``.
    coef0 : float, default=1.0
        Independent term of the ``"poly"`` kernel.
    eta : float or "svm", default="svm"
        Weight of the centering regulariser ``||F - 11'||_F^2`` (> 0). ``"svm"``
        is the paper's choice ``eta = ||a_SVM||_2^2``, with ``a_SVM`` the dual
        variables of a plain :class:`sklearn.svm.SVC` (``kernel="precomputed"``,
        same ``C``) fitted on the same ``K`` for each binary problem; if that
        norm is below 1e-12 (degenerate), ``eta = 1`` is used instead. The value
        used is stored in ``eta_``.
    tau : float, default=0.01
        Nuclear-norm weight (relative to ``eta``, >= 0); ``tau = 0`` skips the
        eigendecomposition (``F = 11' + Gamma(a)`` exactly).
    method : {"auto", "newton", "accelerated", "paper", "paper-monotone", "pgm"}, default="auto"
        Solver of :func:`dank_fast.solve_svm`. ``"auto"`` (= ``"newton"`` started from the
        plain SVM's solution, falling back to ``"accelerated"`` if it stalls) is the fastest
        to a certified ``tol``; see ``benchmarks/``.
    tol : float, default=1e-6
        Target certified relative duality gap of the solver.
    max_iter : int, default=None
        Iteration limit of the solver (None: the solver's default).
    extension : {"paper", "nearest"}, default="paper"
        How a test point is matched to a training point (Section 2.3).
        ``"paper"``: reciprocal nearest neighbours ``M_ij = 1/(r s)`` (eq. (11));
        **the prediction of a point depends on the other points of the batch**
        (``r`` ranks test points), so ``predict(X)[k]`` may differ from
        ``predict(X[k:k+1])``. ``"nearest"``: the nearest training point;
        batch-independent. Both match a training point to itself (up to exact
        duplicates). For ``kernel="precomputed"`` Euclidean distances are not
        available; the kernel-induced distance
        ``d^2(x_i, x'_j) = k(x_i, x_i) - 2 k(x_i, x'_j) + c`` is used, where
        ``k(x'_j, x'_j)`` (not provided by the precomputed API) is replaced by a
        constant ``c``. This is exact for ``"nearest"`` and for kernels with a
        constant diagonal (e.g. Gaussian: then it ranks by the largest kernel
        value ``k(x_i, x'_j)``, i.e. by Euclidean distance).
    multi_class : {"ovo", "ovr"}, default="ovo"
        Reduction for more than two classes. ``"ovo"``: one DANK problem per pair
        of classes (as :class:`sklearn.svm.SVC`), prediction by majority vote
        with ties broken by the summed pairwise decision values, exactly as
        :class:`sklearn.multiclass.OneVsOneClassifier` (equivalently
        ``SVC(break_ties=True)``). ``"ovr"``: one problem per class against
        the rest, prediction by the argmax of the decision values.
    decision_function_shape : {"ovr", "ovo"}, default="ovr"
        As :class:`sklearn.svm.SVC` (more than two classes, ``multi_class="ovo"``): ``"ovr"``
        gives one column per class (votes plus scaled confidences), ``"ovo"`` the raw
        pairwise values, shape ``(n_samples, n_classes * (n_classes - 1) / 2)``, positive
        for the *first* class of the pair as SVC's. ``multi_class="ovr"`` takes ``"ovr"``
        only (``"ovo"`` is a ``ValueError`` at ``fit``).
    break_ties : bool, default=False
        As :class:`sklearn.svm.SVC`: with more than two classes and
        ``decision_function_shape="ovr"``, ``predict`` breaks a tie of votes by the
        confidences of ``decision_function``; otherwise the first of the tied classes
        is predicted. ``True`` with ``"ovo"`` is a ``ValueError`` at ``predict``.
    probability : bool, default=False
        Fit Platt's sigmoid to every binary problem's decision values from an internal
        5-fold cross-validation (as SVC does: 5 more fits), for ``predict_proba`` and
        ``predict_log_proba`` (:mod:`dank_fast._probability`). Multi-class: the pairwise
        coupling of Wu, Lin and Weng (libsvm's) for ``multi_class="ovo"``, the one-vs-rest
        sigmoids normalised for ``"ovr"``. As for SVC, the probabilities come from the
        folds' models: they **may be inconsistent with** ``predict`` (the argmax of
        ``predict_proba`` may differ from ``predict``) and mean little on very small data
        sets.
    warm_start_svm : bool, default=True
        Start the DANK solver from the plain SVM's dual solution (libsvm, the same ``C``; for
        ``eta="svm"`` the fit that sets ``eta``); False starts the dense route's Newton from
        zero (the working sets and the decomposition's clusters start from the plain SVM
        whatever it says). Not scikit-learn's ``warm_start`` (below: reuse this estimator's
        previous fit); the two are independent.
    warm_start : bool, default=False
        The convention of scikit-learn: when set and the previous fit of this estimator was on the
        same data (checked in ``fit``: a SHA-256 of ``X``, ``y`` and the binary problems' sample
        indices), every binary problem starts from the previous solution rescaled to the new
        box, ``clip(a_old C / C_old, 0, C)`` (:mod:`dank_fast._warm`), instead of the plain
        SVM's, and the training kernel is reused when the kernel parameters did not change
        (it is kept between fits: ``8 n^2`` bytes). On other data the fit is cold. For the
        paper's grid: one estimator per ``sigma``, ``set_params(C=C).fit(X, y)`` with ``C``
        ascending. Ignored with ``decomposition``. The answer is certified as in a cold fit;
        ``eta="svm"`` still fits the plain SVM for ``eta``.
    decomposition : int, default=None
        Train by the decomposition of Section 4 instead (eqs. (18), (19)): each binary
        problem's training set is split into ``decomposition`` clusters by k-means, and each
        cluster solves P3 independently (no bias, ``tau`` ignored = 0, box constraint only; see
        :func:`dank_fast.solve_decomposed`). No ``n x n`` kernel is formed and no SVM
        is fitted on all points: each cluster's kernel is computed for that cluster, and
        ``eta="svm"`` is ``||abar_SVM||^2`` of the clusters' plain SVMs (the paper's rule for
        the problem actually solved). Prediction: a test point is assigned to its nearest
        k-means centre and the out-of-sample extension is applied *within that cluster*
        (the paper leaves this unspecified; it is the reading consistent with the
        block-diagonal ``Fbar`` of Lemma 5),
        ``f(x') = sum_{i in c} a_i y_i Fbar_{i, j*} k(x_i, x')`` with no bias.
        Not available with ``kernel="precomputed"`` (k-means needs features). The clusters
        are solved with ``method`` in ``{"auto", "newton", "accelerated"}``; another
        ``method`` is a ``ValueError`` at ``fit`` (never replaced silently).
    route : {"auto", "dense", "working-set"}, default="auto"
        How the exact problem (no ``decomposition``) is solved. ``"dense"``: the
        ``n_p x n_p`` kernel of each binary problem (``8 n_p^2`` bytes). ``"working-set"``:
        :class:`dank_fast.FeatureKernel` and working sets
        (:func:`dank_fast.working_set.solve_svm_working_set`): the plain SVM is fitted on
        the features by :class:`sklearn.svm.SVC` (kernel computed on the fly) and only
        ``K[W][:, W]`` of a working set ``W`` near the support is ever formed.
        ``"auto"``: dense while the kernel takes at most 1 GiB (``n_p <= 11,585``),
        working sets above; precomputed kernels are always dense. Working sets solve with
        ``method`` ``"auto"`` or ``"newton"``; another ``method`` there is a ``ValueError``
        at ``fit`` (never replaced silently).
    random_state : int, RandomState instance or None, default=None
        Seed of k-means when ``decomposition`` is set, and of the folds of
        ``probability=True`` (0 when None); the solvers of P1 (and the plain SVM used by
        ``eta="svm"``) are deterministic.
    verbose : bool, default=False
        Print one line per binary problem (solver status and certified gap).
    solver_options : dict, default=None
        Further keyword options of :func:`dank_fast.solve_svm` for the dense and
        working-set routes, e.g. ``{"beta_sign": "ascent"}`` with ``method="paper"``
        (Algorithm 1's options, :mod:`dank_fast._paper`); an option the route's solver
        does not know raises its ``TypeError`` at ``fit``.
    n_jobs : int, default=None
        Binary problems solved at once by joblib (``"ovo"``/``"ovr"`` with more than two
        classes): ``None`` means 1 unless in a :func:`joblib.parallel_backend` context, ``-1``
        all processors. Each worker gets its own problem's data (``8 n_p^2`` bytes of kernel, or
        its feature rows) and solves it as with ``n_jobs=1``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    class_weight_ : ndarray of shape (n_classes,)
        The weight of every class (ones without ``class_weight``), as SVC's.
    support_ : ndarray of shape (n_SV,)
        As SVC's: indices (into the training set) of the support vectors of all binary
        problems (``a_i > 0`` in at least one), grouped by class in the order of
        ``classes_``, ascending within a class.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        ``X[support_]`` (an empty array for ``kernel="precomputed"``, as SVC).
    n_support_ : ndarray of shape (n_classes,), dtype int32
        Support vectors per class.
    dual_coef_ : ndarray of shape (n_classes - 1, n_SV)
        As SVC's (libsvm's layout): two classes, ``a_i y_i`` (positive for ``classes_[1]``);
        more, for the pair ``(i, j)`` the coefficients of class ``i``'s support vectors in
        row ``j - 1`` and of class ``j``'s in row ``i``, with SVC's sign (positive for class
        ``i``). ``multi_class="ovr"`` (not an SVC option): shape ``(n_classes, n_SV)``, row
        ``k`` the problem of class ``k`` against the rest (positive for class ``k``). The
        decision function of DANK involves the learned ``F`` too (``F_rows_``).
    intercept_ : ndarray of shape (n_problems,)
        The bias of every binary problem with SVC's sign (two classes: positive for
        ``classes_[1]``; one-vs-one pairs: positive for the first class of the pair;
        ``"ovr"``: positive for the class).
    fit_status_ : int
        0 when every binary problem's certified relative gap reached ``tol``, else 1 (a
        :class:`dank_fast.ConvergenceWarning` was issued), as SVC's.
    probA_, probB_ : ndarray of shape (n_problems,)
        Platt's sigmoid ``1 / (1 + exp(A f + B))`` of every problem (``probability=True``;
        empty otherwise).
    X_fit_ : ndarray of shape (n_samples, n_features)
        Training data (the training kernel for ``kernel="precomputed"``).
    results_ : list of DANKResult
        Solver output for every binary problem (``alpha``, ``bias``, certified
        ``gap``/``rel_gap``, ``status``, the learned ``F``); ``results_[p].alpha``
        is indexed by the training samples of problem ``p`` (``problem_indices_[p]``).
    problem_classes_ : list of tuple
        Class indices of each binary problem: ``(neg, pos)`` for ``"ovo"`` pairs
        (``classes_[pos]`` is the positive class), ``(-1, k)`` for ``"ovr"``.
    problem_indices_ : list of ndarray
        Training-sample indices used by each binary problem.
    eta_ : ndarray of shape (n_problems,)
        The value of ``eta`` used by each binary problem.
    problem_support_ : list of ndarray
        Indices (into the training set) of the support vectors ``a_i > 0`` of every binary
        problem, ascending.
    problem_dual_coef_ : list of ndarray
        ``a_i y_i`` on each problem's support (positive for the problem's positive class).
    problem_intercept_ : ndarray of shape (n_problems,)
        Bias ``b`` of each binary problem (positive for its positive class).
    sample_box_ : ndarray of shape (n_samples,) or None
        Every sample's box ``C * class_weight_[y_i] * sample_weight_i`` (None without
        weights: the scalar ``C``); a sample of box 0 takes part in no problem, as in libsvm.
    F_rows_ : ndarray or list of ndarray
        Rows ``F[S, :]`` of the learned matrix of each problem (``|S| x n_p``
        where ``n_p`` is the problem's number of training samples), built on demand from
        the factors (``|S| n_p`` memory); prediction never needs them whole.
    models_ : list
        Per-problem prediction state: support, ``a_i y_i``, bias and ``F`` in factored form.
    n_iter_ : ndarray of shape (n_problems,)
        Solver iterations of each binary problem.
    n_features_in_ : int
        Number of features seen during fit.

    See Also
    --------
    dank_fast.solve_svm : The solver used for each binary problem.
    sklearn.svm.SVC : The plain SVM (the limit ``eta -> inf``, ``tau = 0``).

    Notes
    -----
    Binary labels: ``classes_[1]`` is mapped to ``+1`` and ``classes_[0]`` to
    ``-1``, so a positive decision value means ``classes_[1]``.

    The solver is certified: every ``results_[p]`` carries a duality gap; when the
    requested ``tol`` is not certified within ``max_iter``, a
    :class:`dank_fast.ConvergenceWarning` is issued (not silenced).

    Cost (per binary problem with ``n_p`` points, ``|S|`` support vectors, rank ``r`` of
    ``F``): dense route ``8 n_p^2`` bytes for the kernel (kept in ``results_``) plus the
    Newton system on the free support vectors; working-set route ``8 |W|^2`` bytes instead;
    decomposition ``8 max_c n_c^2``. Stored model ``O(n_p r)``. Prediction costs
    ``O(n_p m)`` per problem for the matching, in batches of at most 512 MiB of distances (with
    ``extension="paper"`` a batch is the set of test points the reciprocal ranks are taken
    over: the whole ``X`` whenever it fits), and ``O(|S| m)`` for the decision values, in
    chunks of 256 MiB.

    References
    ----------
    F. Liu, X. Huang, C. Gong, J. Yang, L. Li. "Learning Data-adaptive
    Non-parametric Kernels." JMLR 21, 2020 (eq. (4); Section 2.3).

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from sklearn.model_selection import train_test_split
    >>> from sklearn.pipeline import Pipeline
    >>> from sklearn.preprocessing import MinMaxScaler
    >>> from dank_fast import DANKClassifier
    >>> X, y = make_moons(n_samples=60, noise=0.1, random_state=0)
    >>> X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
    >>> clf = Pipeline([("scale", MinMaxScaler()), ("dank", DANKClassifier(gamma=2.0))])
    >>> clf = clf.fit(X_train, y_train)
    >>> print(round(clf.score(X_test, y_test), 2))
    0.93
    """

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "kernel": [StrOptions(set(KERNELS))],
        "sigma": [Interval(Real, 0.0, None, closed="neither"), None],
        "gamma": [Interval(Real, 0.0, None, closed="neither"), None],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "eta": [Interval(Real, 0.0, None, closed="neither"), StrOptions({"svm"})],
        "tau": [Interval(Real, 0.0, None, closed="left")],
        "method": [StrOptions(set(METHODS))],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "extension": [StrOptions({"paper", "nearest"})],
        "multi_class": [StrOptions({"ovo", "ovr"})],
        "warm_start_svm": ["boolean"],
        "warm_start": ["boolean"],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        "probability": ["boolean"],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
        "break_ties": ["boolean"],
        "decomposition": [Interval(Integral, 1, None, closed="left"), None],
        "route": [StrOptions({"auto", "dense", "working-set"})],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "solver_options": [dict, None],
        "n_jobs": [Integral, None],
    }

    def __init__(
        self,
        C=1.0,
        kernel="rbf",
        *,
        sigma=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        eta="svm",
        tau=0.01,
        method="auto",
        tol=1e-6,
        max_iter=None,
        extension="paper",
        multi_class="ovo",
        warm_start_svm=True,
        warm_start=False,
        decomposition=None,
        route="auto",
        random_state=None,
        verbose=False,
        solver_options=None,
        n_jobs=None,
        class_weight=None,
        probability=False,
        decision_function_shape="ovr",
        break_ties=False,
    ):
        self.C = C
        self.kernel = kernel
        self.sigma = sigma
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.eta = eta
        self.tau = tau
        self.method = method
        self.tol = tol
        self.max_iter = max_iter
        self.extension = extension
        self.multi_class = multi_class
        self.warm_start_svm = warm_start_svm
        self.warm_start = warm_start
        self.decomposition = decomposition
        self.route = route
        self.random_state = random_state
        self.verbose = verbose
        self.solver_options = solver_options
        self.n_jobs = n_jobs
        self.class_weight = class_weight
        self.probability = probability
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties

    # ---------------------------------------------------------------------- fit
    @fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit one DANK problem per binary sub-problem (P1, ``eq. (4)``).

        The input is validated here, once; each binary problem is then solved by its route
        (:func:`dank_fast._routes.choose_route`: dense, working sets or decomposition), which
        takes the validated data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data; for ``kernel="precomputed"`` the PSD training kernel
            of shape (n_samples, n_samples).
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights, as :meth:`sklearn.svm.SVC.fit`: sample ``i``'s box is ``C *
            class_weight_[y_i] * sample_weight[i]`` (non-negative; a sample of weight 0 is
            left out, all zero is a ``ValueError``).

        Returns
        -------
        self : DANKClassifier
            Fitted estimator.
        """
        self._check_width()
        X, classes, y_enc = self._validate_training_data(X, y)
        self.class_weight_ = compute_class_weight(self.class_weight, classes=classes,
                                                  y=classes[y_enc])
        box = sample_boxes(self.C, X, sample_weight,
                           None if self.class_weight is None else self.class_weight_, y_enc)
        # one BLAS thread policy for the kernel and every solve (dank_fast._threads):
        # at the UCI sizes a busy-waiting second thread made the kernel alone 20 ms under load
        with blas_threads():
            self._fit_problems(X, classes, y_enc, box)
        self.probA_, self.probB_ = np.empty(0), np.empty(0)
        if self.probability:
            self._fit_probability(X, classes[y_enc], y_enc, sample_weight)
        return self

    @property
    def F_rows_(self):
        """Rows ``F[S, :]`` of every problem's learned matrix (``|S| x n_p``, built on demand).

        For the decomposition, the lemma's block-diagonal ``Fbar`` (0 across clusters), which
        is what the prediction inside a cluster uses.
        """
        check_is_fitted(self)
        rows = [m.F_cols(self, idx, np.arange(idx.size))
                for m, idx in zip(self.models_, self.problem_indices_, strict=True)]
        return rows[0] if len(rows) == 1 else rows

    # ------------------------------------------------------------------ predict
    def _train_kernel(self, idx, rows, cols) -> np.ndarray:
        """``k(x_i, x_j)`` for training positions ``rows``, ``cols`` of the problem ``idx``."""
        if self._precomputed:
            return self.X_fit_[np.ix_(idx[rows], idx[cols])]
        return self._kernel(self.X_fit_[idx[rows]], self.X_fit_[idx[cols]])

    def _problem_decisions(self, X) -> np.ndarray:
        """Decision values of every binary problem, shape (n_test, n_problems)
        (:func:`._estimator_decisions.problem_decisions` on the validated ``X``)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, order="C", reset=False)
        return problem_decisions(self, X)

    def _decide(self, X, idx, model, pool, match_bytes: int = 1 << 29,
                block_bytes: int = BLOCK_BYTES) -> np.ndarray:
        """``f(x')`` of one problem with ``j*`` matched in ``pool``, in batches of
        ``match_bytes`` and chunks of ``block_bytes`` (:func:`._estimator_decisions.decide`)."""
        return decide(self, X, idx, model, pool, match_bytes, block_bytes)

    def decision_function(self, X):
        """Decision values with the out-of-sample extension (Section 2.3).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test data; for ``kernel="precomputed"`` the kernel between test and
            training points, shape (n_samples, n_samples_fit).

        Returns
        -------
        ndarray of shape (n_samples,), (n_samples, n_classes) or (n_samples, n_pairs)
            Binary: ``f(x)``, positive means ``classes_[1]``. ``multi_class="ovr"``: the
            one-vs-rest values, one column per class. ``multi_class="ovo"`` with
            ``decision_function_shape="ovr"`` (default): the one-vs-one votes plus the
            summed pairwise decision values scaled into (-1/3, 1/3), as
            ``SVC(decision_function_shape="ovr")`` and
            :class:`sklearn.multiclass.OneVsOneClassifier`; with ``"ovo"``: the pairwise
            values with SVC's sign (positive for the first class of the pair; the negated
            :meth:`pairwise_decision_function`).

        Notes
        -----
        With ``extension="paper"`` the value for a point depends on the other
        points of ``X`` (see the ``extension`` parameter).
        """
        return combined_decisions(self._problem_decisions(X), self.classes_.size,
                                  self.multi_class, self.decision_function_shape)

    def pairwise_decision_function(self, X):
        """Raw decision values of every binary problem.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test data (precomputed: kernel against the training points).

        Returns
        -------
        ndarray of shape (n_samples, n_problems)
            Column ``p`` belongs to ``problem_classes_[p]``. For ``"ovo"`` the
            pairs are in scikit-learn's order ``(0, 1), (0, 2), ..., (1, 2), ...``
            and a positive value means the second (higher-index) class of the pair.
        """
        return self._problem_decisions(X)

    def predict(self, X):
        """Predict class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test data (precomputed: kernel against the training points).

        Returns
        -------
        ndarray of shape (n_samples,)
            Binary: ``classes_[1]`` where the decision value is > 0. Multi-class
            ``"ovr"``: the argmax of the decision values. ``"ovo"``: the majority vote of
            the pairs, a tie going to the first of the tied classes, or (``break_ties=True``
            with ``decision_function_shape="ovr"``, as SVC) broken by the summed pairwise
            decision values.
        """
        check_is_fitted(self)
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")
        dec = self._problem_decisions(X)
        return self.classes_[predicted_indices(dec, self.classes_.size, self.multi_class,
                                               self.break_ties)]

    def _check_proba(self) -> bool:
        if not self.probability:
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    @available_if(_check_proba)
    def predict_proba(self, X):
        """Class probabilities by Platt scaling (``probability=True``), as SVC's.

        Each binary problem's decision value goes through its sigmoid (fitted on decision
        values of an internal 5-fold cross-validation); more than two classes are coupled
        (pairwise coupling of Wu, Lin and Weng for ``multi_class="ovo"``, normalisation for
        ``"ovr"``). As SVC's, the result may be inconsistent with ``predict``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test data (precomputed: kernel against the training points).

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``; rows sum to 1.
        """
        dec = self._problem_decisions(X)
        AB = np.column_stack([self.probA_, self.probB_])
        return probabilities(dec, AB, self.problem_classes_, self.classes_.size)

    @available_if(_check_proba)
    def predict_log_proba(self, X):
        """``log(predict_proba(X))`` (``probability=True``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))
