"""scikit-learn estimator for DANK in SVR (P2, eq. (22)).

:class:`DANKRegressor` learns ``F`` jointly with an epsilon-SVR through
:func:`dank_fast.solve_svr` and predicts unseen points with the out-of-sample extension of
Section 2.3 (a test point borrows the column of ``F`` of a matched training point).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.cluster import KMeans
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.utils.validation import check_is_fitted, validate_data

from ._estimator_base import KernelEstimatorMixin, sample_boxes
from ._kernel_validation import check_kernel_matrix
from ._kernel_validation import refuse_non_numeric_kernel as _refuse_boolean_kernel
from ._libsvm import svr_iteration_limit
from ._routes import RouteFit, Settings, SVRRoute, TrainingData
from ._sklearn_compat import Interval, StrOptions, fit_context
from .extension import extended_decision, match_from_distances
from .kernels import KERNELS, kernel_params
from .svr import METHODS

# svr_iteration_limit lives in dank_fast._libsvm (re-exported here)
__all__ = ["DANKRegressor", "relative_error", "svr_iteration_limit"]



def relative_error(y_true, y_pred) -> float:
    """The paper's regression error ("RMSE", section Regression):
    ``sum (g(x_i) - y_i)^2 / sum (y_i - mean(y))^2`` (= 1 - R^2). Undefined for constant y."""
    y_true = np.asarray(y_true, dtype=np.float64)
    y_pred = np.asarray(y_pred, dtype=np.float64)
    den = float(np.sum((y_true - y_true.mean()) ** 2))
    if den == 0.0:
        raise ValueError("relative error is undefined for constant targets")
    return float(np.sum((y_pred - y_true) ** 2) / den)


def _F_rows(F, S: np.ndarray, n: int) -> np.ndarray:
    """Rows ``F[S, :]`` of the learned ``F``; zeros when ``F = 0``.

    ``F = J_{tau/2}(11' + Gamma)`` vanishes when ``tau/2`` exceeds every eigenvalue of
    ``11' + Gamma`` (e.g. ``tau >= 2n`` at ``a = 0``); its factorisation is then empty (rank 0)
    and the prediction is the bias alone.
    """
    mu = getattr(F, "mu", None)
    if (mu is not None and mu.size == 0) or S.size == 0:
        return np.zeros((S.size, n))
    return np.ascontiguousarray(F.column(S).T)


class DANKRegressor(KernelEstimatorMixin, RegressorMixin, BaseEstimator):
    """Data-adaptive non-parametric kernel SVR (DANK in SVR, Liu et al., JMLR 2020).

    Solves eq. (22) (with the bias constraint ``1'(ah - ac) = 0``),

    ``max_{ah, ac} min_{F PSD} -1/2 d'(F o K)d + y'd - eps 1'(ah + ac) + eta ||F - 11'||_F^2
    + tau eta ||F||_*``,  ``d = ah - ac``, ``0 <= ah, ac <= C``,

    and predicts ``f(x_j) = sum_i d_i F_ij k(x_i, x_j) + b`` on training points and, for
    unseen points, ``f(x'_j) = sum_{i in S} d_i F_{i, j*} k(x_i, x'_j) + b`` where ``j*`` is
    the matched training point (Section 2.3). With ``eta -> inf`` and ``tau = 0`` it is the
    plain :class:`sklearn.svm.SVR`.

    Parameters
    ----------
    C : float, default=1.0
        Box constraint (> 0); with ``sample_weight``, sample ``i``'s box is ``C *
        sample_weight[i]`` (libsvm's rule, as :class:`sklearn.svm.SVR`; docs/MATH.md section
        14).
    epsilon : float, default=0.1
        Width of the epsilon-insensitive tube (>= 0). The paper does not state its value.
    kernel, gamma, degree, coef0 :
        Initial kernel, as :class:`dank_fast.DANKClassifier`.
    sigma : float, default=None
        Deprecated (removed in the next release): the paper's Gaussian width, ``gamma = 1 /
        (2 sigma^2)``; a ``DeprecationWarning`` when given, a ``ValueError`` naming both when
        given with ``gamma``.
    eta : float or "svr", default="svr"
        Centering weight. ``"svr"``: ``eta = ||d_SVR||_2^2`` with ``d_SVR`` the dual
        coefficients ``ah - ac`` of a plain :class:`sklearn.svm.SVR` (precomputed kernel,
        same ``C`` and ``epsilon``). The paper fixes ``eta = ||alpha||_2^2`` from the SVM for
        classification and says the regression experiments follow the classification
        settings; ``alpha = ah - ac`` is the SVR's dual variable (eq. (22)). If that norm
        is below 1e-12 (every target inside the tube), ``eta = 1`` is used. Stored in ``eta_``.
    tau : float, default=0.01
    method : {"auto", "newton", "accelerated", "paper", "paper-monotone", "pgm"}, default="auto"
        Solver of :func:`dank_fast.solve_svr`. ``"auto"`` and ``"newton"`` run the same
        projected Newton (with accelerated hand-overs), from the start ``warm_start_svr``
        chooses (the plain SVR's solution, or zero), and differ only in the name each
        result records; ``"auto"`` is the default of :class:`dank_fast.DANKClassifier` and
        :func:`dank_fast.solve_svr` too.
    tol : float, default=1e-6
        Target certified relative duality gap.
    max_iter : int, default=None
        Outer iterations of the method (:func:`dank_fast.solve_svr`): Newton steps for
        ``"auto"`` and ``"newton"`` (default 100; its accelerated fallback has its own
        budget, the solver option ``fallback_iter``), iterations for the others. ``None``:
        the method's default.
    extension : {"paper", "nearest"}, default="paper"
        Out-of-sample matching (see :class:`dank_fast.DANKClassifier`; ``"paper"`` is
        batch-dependent on unseen points).
    decomposition : int, default=None
        ``None``: one problem. An integer ``v``: the training set is partitioned by
        ``KMeans(v, random_state=random_state, n_init=10)`` and one DANK-SVR problem
        (with its own ``eta`` rule, bias and bias constraint) is solved per cluster -- the
        k-means decomposition of Section 4 applied to P2, which the paper does not
        do (its decomposition, eq. (19), is for the SVM and drops the bias; here every
        cluster keeps its bias because targets have cluster-dependent offsets). A test
        point is assigned to its nearest k-means centre and predicted by that cluster's
        model, with the extension restricted to the cluster's training points. Not
        available with ``kernel="precomputed"``.
    warm_start_svr : bool, default=True
        Start the DANK solver from the plain SVR's dual solution (libsvm, the same ``C`` and
        ``epsilon``, ``tol`` = 1e-4; for ``eta="svr"`` the fit that sets ``eta``); False starts
        it from zero. Not scikit-learn's ``warm_start`` (reuse of the previous fit, below);
        independent.
    warm_start : bool, default=False
        The convention of scikit-learn: when set and the previous fit of this estimator was on the
        same data (checked in ``fit``: a SHA-256 of ``X``, ``y`` and the problems' sample
        indices), every problem starts from the previous ``d = ah - ac`` rescaled to the new
        box, ``clip(d C / C_old, -C, C)`` (:mod:`dank_fast._warm`), instead of the plain
        SVR's, and the training kernel is reused when the kernel parameters did not change
        (kept between fits: ``8 n^2`` bytes). On other data the fit is cold. The answer is
        certified as in a cold fit; ``eta="svr"`` still fits the plain SVR for ``eta``.
    random_state : int, RandomState instance or None, default=None
        Seed of k-means (``decomposition``); the solvers are deterministic.
    verbose : bool, default=False
    solver_options : dict, default=None
        Further keyword options of :func:`dank_fast.solve_svr`, e.g. ``{"fallback_iter":
        100}`` to bound Newton's accelerated fallback; an option the method does not know
        raises its ``TypeError`` at ``fit``.

    Attributes
    ----------
    results_ : list of DANKResult
        One per problem (one, or one per cluster); ``results_[p].alpha = ah - ac``.
    model_indices_ : list of ndarray
        Training indices of every problem.
    eta_ : ndarray of shape (n_problems,)
    support_ : ndarray of shape (n_SV,)
        As :class:`sklearn.svm.SVR`'s: indices (into the training set) of the support
        vectors (``ah_i - ac_i != 0``) of every problem, ascending.
    support_vectors_ : ndarray of shape (n_SV, n_features)
        ``X[support_]`` (empty for ``kernel="precomputed"``, as SVR).
    n_support_ : ndarray of shape (1,), dtype int32
        The number of support vectors, as SVR's.
    dual_coef_ : ndarray of shape (1, n_SV)
        As SVR's: ``d_i = ah_i - ac_i`` of the support vectors (the decision function of
        DANK involves the learned ``F`` too, ``F_rows_``).
    intercept_ : ndarray of shape (n_problems,)
        The bias of every problem (shape ``(1,)`` without ``decomposition``, as SVR's).
    fit_status_ : int
        0 when every problem's certified relative gap reached ``tol``, else 1.
    problem_support_, problem_dual_coef_ : list of ndarray
        Every problem's support (training indices, ascending) and ``d_i`` on it.
    F_rows_ : ndarray (one problem) or list of ndarray
        Rows ``F[S, :]`` of every problem's learned matrix.
    sample_box_ : ndarray of shape (n_samples,) or None
        Every sample's box ``C * sample_weight_i`` (None without weights); a sample of weight
        0 takes part in no problem, as in libsvm.
    cluster_centers_ : ndarray or None
        k-means centres when ``decomposition`` is set.
    n_iter_ : ndarray of shape (n_problems,)
    X_fit_ : ndarray
    n_features_in_ : int

    Notes
    -----
    Constant targets raise ``ValueError``: every target then lies in the tube, the optimal
    dual is ``ah = ac = 0``, ``F`` stays at its prior (nothing is learned), the paper's
    ``eta`` rule gives 0 and the paper's relative error is undefined. ``solve_svr`` itself
    accepts them (it returns the constant predictor).

    Examples
    --------
    >>> import numpy as np
    >>> from dank_fast import DANKRegressor
    >>> X = np.linspace(-1, 1, 40)[:, None]; y = np.sin(3 * X[:, 0])
    >>> reg = DANKRegressor(gamma=5.5, epsilon=0.01, C=4.0).fit(X, y)
    >>> bool(reg.score(X, y) > 0.99)
    True
    """

    _parameter_constraints: dict = {
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "epsilon": [Interval(Real, 0.0, None, closed="left")],
        "kernel": [StrOptions(set(KERNELS))],
        "sigma": [Interval(Real, 0.0, None, closed="neither"), None],
        "gamma": [Interval(Real, 0.0, None, closed="neither"), None],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "eta": [Interval(Real, 0.0, None, closed="neither"), StrOptions({"svr"})],
        "tau": [Interval(Real, 0.0, None, closed="left")],
        "method": [StrOptions(set(METHODS))],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left"), None],
        "extension": [StrOptions({"paper", "nearest"})],
        "decomposition": [Interval(Integral, 1, None, closed="left"), None],
        "warm_start_svr": ["boolean"],
        "warm_start": ["boolean"],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "solver_options": [dict, None],
    }

    def __init__(
        self,
        C=1.0,
        epsilon=0.1,
        kernel="rbf",
        *,
        sigma=None,
        gamma=None,
        degree=3,
        coef0=1.0,
        eta="svr",
        tau=0.01,
        method="auto",
        tol=1e-6,
        max_iter=None,
        extension="paper",
        decomposition=None,
        warm_start_svr=True,
        warm_start=False,
        random_state=None,
        verbose=False,
        solver_options=None,
    ):
        self.C = C
        self.epsilon = epsilon
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
        self.decomposition = decomposition
        self.warm_start_svr = warm_start_svr
        self.warm_start = warm_start
        self.random_state = random_state
        self.verbose = verbose
        self.solver_options = solver_options

    def _settings(self) -> Settings:
        """The hyper-parameters of :class:`dank_fast._routes.SVRRoute`."""
        return Settings(
            C=self.C, eta=self.eta, tau=self.tau, method=self.method, tol=self.tol,
            max_iter=self.max_iter, warm_start=self.warm_start_svr, epsilon=self.epsilon,
            options=dict(self.solver_options or {}),
        )

    @fit_context
    def fit(self, X, y, sample_weight=None):
        """Fit DANK-SVR, the problem P2 (``eq. (22)``).

        The input is validated here, once; each problem (one, or one per k-means cluster with
        ``decomposition``) is solved by :class:`dank_fast._routes.SVRRoute` on the validated
        kernel.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, or the PSD training kernel for ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Finite, non-constant real targets.
        sample_weight : array-like of shape (n_samples,), default=None
            Per-sample weights, as :meth:`sklearn.svm.SVR.fit`: sample ``i``'s box is ``C *
            sample_weight[i]`` (non-negative; weight 0 leaves the sample out; all zero is a
            ``ValueError``).

        Returns
        -------
        self : DANKRegressor
            Fitted estimator.
        """
        self._check_width()
        X, y = self._validate_training_data(X, y)
        box = sample_boxes(self.C, X, sample_weight)
        groups, centers = self._groups(X, box)
        boxes = [self.C if box is None else box[idx] for idx in groups]
        key, state = self._warm(X, y, groups)
        starts = None if state is None else state.starts(key, boxes)
        K = None if state is None or self._precomputed else state.kernel(key, self._kernel_key())
        if K is None:
            K = X if self._precomputed else self._kernel(X)
        train = TrainingData(X, K)
        route = SVRRoute(self._settings())
        fits = []
        for p, idx in enumerate(groups):
            fit = route.fit(train, idx, y[idx], alpha0=None if starts is None else starts[p],
                            C=None if box is None else boxes[p])
            fits.append(fit)
            if self.verbose:
                res = fit.result
                print(
                    f"[DANKRegressor] n={idx.size}, eta={fit.eta:.4g}, "
                    f"|S|={np.count_nonzero(res.alpha)}, {res.status}, "
                    f"n_iter={res.n_iter}, rel_gap={res.rel_gap:.2e}"
                )
        self._store_fit(X, groups, centers, fits)
        self.sample_box_ = box
        self._remember(key, self.results_, K, boxes)
        return self

    def _validate_training_data(self, X, y):
        """``(X, y)`` after the one validation of a fit: scikit-learn's ``validate_data``, at
        least two samples, non-constant targets, and the kernel (a precomputed one by the rule
        of docs/validity.md, PSD included; else the kernel parameters)."""
        # a precomputed kernel keeps float32/float16 here: the validity rule takes its
        # tolerances from the input dtype (check_kernel_matrix returns float64)
        dtype = (np.float64, np.float32, np.float16) if self._precomputed else np.float64
        if self._precomputed:
            _refuse_boolean_kernel(X)
        X, y = validate_data(self, X, y, dtype=dtype, order="C", y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        if X.shape[0] < 2:
            raise ValueError(
                f"DANKRegressor needs at least 2 samples, got n_samples = {X.shape[0]} (1 sample)"
            )
        if np.ptp(y) == 0.0:
            raise ValueError(
                "y is constant: every target lies in the epsilon-tube, the optimal SVR dual "
                "is 0, so F stays at its prior (nothing to learn), the paper's eta rule "
                "gives eta = 0 and its relative error is undefined; use "
                "sklearn.dummy.DummyRegressor"
            )
        if self._precomputed:
            if X.shape[0] != X.shape[1]:
                raise ValueError(
                    "Precomputed kernel must be a square matrix of shape "
                    f"(n_samples, n_samples), got {X.shape[0]}x{X.shape[1]}."
                )
            X = check_kernel_matrix(X)
            if self.decomposition is not None:
                raise ValueError("decomposition needs features for k-means, not a kernel")
        else:
            kernel_params(**self._kernel_kwargs(), n_features=X.shape[1])
        return X, y

    def _groups(self, X: np.ndarray, box=None):
        """The problems' points (all, or one group per non-empty k-means cluster; the
        samples of box 0 left out) and the cluster centres (None without ``decomposition``)."""
        n = X.shape[0]
        live = np.ones(n, dtype=bool) if box is None else box > 0
        if self.decomposition is None or self.decomposition == 1:
            return [np.flatnonzero(live)], None
        v = min(int(self.decomposition), n)
        km = KMeans(n_clusters=v, random_state=self.random_state, n_init=10).fit(X)
        # k-means may leave a cluster empty (duplicate points, or all of weight 0): drop it
        keep = [c for c in range(v) if np.any(live & (km.labels_ == c))]
        return ([np.flatnonzero(live & (km.labels_ == c)) for c in keep],
                km.cluster_centers_[keep])

    def _store_fit(self, X, groups, centers, fits: list[RouteFit]) -> None:
        """The fitted attributes (see the class docstring) from the routes' results."""
        supports, dual, F_rows = [], [], []
        for idx, fit in zip(groups, fits, strict=True):
            S = np.flatnonzero(fit.result.alpha != 0.0)
            supports.append(idx[S])
            dual.append(fit.result.alpha[S])
            F_rows.append(_F_rows(fit.result.inner.F, S, idx.size))
        one = len(groups) == 1
        self.X_fit_ = X
        self.results_ = [f.result for f in fits]
        self.model_indices_ = groups
        self.cluster_centers_ = centers
        self.eta_ = np.asarray([f.eta for f in fits], dtype=np.float64)
        self.problem_support_, self.problem_dual_coef_ = supports, dual
        self.F_rows_ = F_rows[0] if one else F_rows
        self.intercept_ = np.asarray([float(f.result.bias) for f in fits], dtype=np.float64)
        self.n_iter_ = np.asarray([f.result.n_iter for f in fits], dtype=np.int64)
        self.fit_status_ = int(not all(f.result.status == "converged" for f in fits))
        # SVR's layout: every support vector once (each sample is in one problem), ascending
        sv = np.concatenate(supports).astype(np.int32)
        order = np.argsort(sv, kind="stable")
        self.support_ = sv[order]
        self.dual_coef_ = np.concatenate(dual)[order][None, :]
        self.support_vectors_ = np.empty((0, 0)) if self._precomputed else X[self.support_]
        self.n_support_ = np.array([sv.size], dtype=np.int32)

    def predict(self, X):
        """Predict with the out-of-sample extension (Section 2.3).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Test data; for ``kernel="precomputed"`` the kernel against the training
            points, shape (n_samples, n_samples_fit).

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, order="C", reset=False)
        one = len(self.results_) == 1
        supports, dual = self.problem_support_, self.problem_dual_coef_
        F_rows = [self.F_rows_] if one else self.F_rows_
        if self.cluster_centers_ is not None:
            assign = np.argmin(euclidean_distances(X, self.cluster_centers_), axis=1)
        else:
            assign = np.zeros(X.shape[0], dtype=np.intp)
        out = np.empty(X.shape[0])
        for p, idx in enumerate(self.model_indices_):
            rows = np.flatnonzero(assign == p)
            if rows.size == 0:
                continue
            Xp = X[rows]
            if self._precomputed:
                K_t = Xp[:, idx].T
                D = np.diag(self.X_fit_)[idx][:, None] - 2.0 * K_t
                K_S = Xp[:, supports[p]].T
            else:
                D = euclidean_distances(self.X_fit_[idx], Xp)
                if supports[p].size == 0:  # every target of the problem in the tube
                    K_S = np.zeros((0, rows.size))
                else:
                    K_S = self._kernel(self.X_fit_[supports[p]], Xp)
            match = match_from_distances(D, self.extension)
            out[rows] = extended_decision(dual[p], F_rows[p], K_S, match, self.intercept_[p])
        return out
