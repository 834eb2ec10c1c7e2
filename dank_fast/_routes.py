"""The routes by which the estimators solve one problem: dense, working sets, decomposition.

:class:`dank_fast.DANKClassifier` validates its input once (at ``fit``), then hands each binary
sub-problem to one route; :class:`dank_fast.DANKRegressor` hands each of its problems to
:class:`SVRRoute`. Every route has one interface, :meth:`Route.fit` ``(train, idx, y) ->``
:class:`RouteFit` (the certified result, the ``eta`` used and the prediction model), and takes
validated data: the training set :class:`TrainingData` (features, and the dense kernel when a
dense route needs it), the positions ``idx`` of the problem's points and their labels, and the
problem's box ``C`` (the estimator's scalar ``C``, or per-sample bounds ``C w_i`` from sample
and class weights, docs/MATH.md section 14).

* :class:`DenseRoute`: :func:`dank_fast.solve_svm` on ``K[idx, idx]`` (``8 n_p^2`` bytes);
* :class:`WorkingSetRoute`: :func:`dank_fast.solve_svm` on a :class:`FeatureKernel`
  (``8 |W|^2`` bytes, no ``n_p x n_p`` array);
* :class:`DecompositionRoute`: k-means, then :func:`dank_fast.solve_decomposed` (P3;
  ``8 n_c^2`` bytes for the largest cluster);
* :class:`SVRRoute`: :func:`dank_fast.solve_svr` on ``K[idx, idx]`` (P2; ``8 n_p^2`` bytes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from sklearn.cluster import KMeans

from ._checked import CheckedKernel
from ._cost import dense_kernel_fits
from ._libsvm import svc_dual, svr_dual
from ._result import DANKResult
from .decomposed import ETA_FLOOR, solve_decomposed
from .feature_kernel import FeatureKernel
from .inner import KernelData, LowRankF
from .svm import solve_svm
from .svr import solve_svr

__all__ = [
    "DECOMPOSITION_METHODS",
    "BinaryModel",
    "DecompositionRoute",
    "DenseRoute",
    "Route",
    "RouteFit",
    "Settings",
    "SVRRoute",
    "TrainingData",
    "WorkingSetRoute",
    "choose_route",
]

#: the methods the estimators' decomposition solves its clusters with (the others are refused at
#: ``fit`` with this list, never replaced silently)
DECOMPOSITION_METHODS = ("auto", "newton", "accelerated")


@dataclass(frozen=True)
class Settings:
    """The estimator's hyper-parameters that a route needs (validated by the estimator).

    ``eta`` is a positive float or the paper's rule (``"svm"``: ``||a_SVM||^2``; ``"svr"``:
    ``||ah - ac||^2`` of the plain SVR); ``warm_start`` says whether the plain SVM's (SVR's)
    dual starts the DANK solve; ``epsilon`` is P2's tube half-width (``SVRRoute`` only);
    ``options`` are further keyword options of the route's solver (:func:`dank_fast.solve_svm`
    for the dense and working-set routes, :func:`dank_fast.solve_svr` for ``SVRRoute``).
    """

    C: float
    eta: float | str
    tau: float
    method: str
    tol: float
    max_iter: int | None
    warm_start: bool = True
    kernel_kwargs: dict = field(default_factory=dict)
    decomposition: int | None = None
    random_state: object = None
    verbose: bool = False
    epsilon: float = 0.0
    options: dict = field(default_factory=dict)


@dataclass(frozen=True)
class TrainingData:
    """Validated training data: features ``X`` (or the precomputed kernel) and, when a dense
    route needs it, the kernel ``K`` of all ``n`` training points (``8 n^2`` bytes)."""

    X: np.ndarray
    K: np.ndarray | None = None

    def kernel(self, idx: np.ndarray) -> KernelData:
        """``K[idx, idx]`` wrapped for the solvers (no copy when ``idx`` is every point)."""
        K = self.K if idx.size == self.K.shape[0] else self.K[np.ix_(idx, idx)]
        return CheckedKernel(K)


@dataclass
class BinaryModel:
    """What one binary problem needs to predict: support, dual coefficients, bias and ``F``.

    ``F`` is kept in factored form and its entries ``F[S, j*]`` are built for the matched
    training points of each batch only (``|S| x batch``), never as ``|S| x n_p`` rows:
    ``kind="lowrank"``: ``F = U diag(mu) U'``; ``"centered"`` (tau = 0): ``F = 11' + Gamma``,
    ``Gamma_ij = d_i d_j k(x_i, x_j) / (4 eta)``; ``"decomposed"``: the block-diagonal ``Fbar``
    of Lemma 5 (``11' + Gamma`` inside a cluster, 0 across).
    """

    kind: str
    support: np.ndarray  # positions (within the problem) with a_i > 0
    dual: np.ndarray  # a_i y_i on the support
    bias: float
    d: np.ndarray | None = None
    eta: float = 1.0
    mu: np.ndarray | None = None
    U: np.ndarray | None = None
    labels: np.ndarray | None = None
    centers: np.ndarray | None = None
    route: str = "dense"

    def dual_of(self, S: np.ndarray) -> np.ndarray:
        """``a_i y_i`` for support positions ``S`` (a subset of :attr:`support`)."""
        if S.size == self.support.size:
            return self.dual
        return self.dual[np.searchsorted(self.support, S)]

    def F_cols(self, est, idx, J, S=None) -> np.ndarray:
        """``F[S, J]`` (``S`` defaults to the whole support); ``est._train_kernel`` gives
        ``k(x_i, x_j)`` of the problem's training points."""
        S = self.support if S is None else S
        J = np.asarray(J)
        if self.kind == "lowrank":
            return (self.U[S] * self.mu) @ self.U[J].T
        G = self.d[S][:, None] * self.d[J][None, :] * est._train_kernel(idx, S, J) / (4 * self.eta)
        if self.kind == "centered":
            return 1.0 + G
        same = self.labels[S][:, None] == self.labels[J][None, :]
        return np.where(same, 1.0 + G, 0.0)


class RouteFit(NamedTuple):
    """One solved problem: the certified result, the ``eta`` used and the prediction model
    (:class:`BinaryModel`; ``None`` for :class:`SVRRoute`, whose estimator keeps ``F`` rows)."""

    result: DANKResult
    eta: float
    model: BinaryModel | None


def _model_from_result(res: DANKResult, y: np.ndarray, eta: float) -> BinaryModel:
    """The prediction model of a P1 result (dense or working-set route)."""
    S = np.flatnonzero(res.alpha > 0)
    d = res.alpha * y
    if isinstance(res.inner.F, LowRankF):
        mu, U = res.F_factors  # n_p rows (working sets: the ghost row outside W)
        return BinaryModel(kind="lowrank", support=S, dual=d[S], bias=float(res.bias), mu=mu, U=U)
    return BinaryModel(kind="centered", support=S, dual=d[S], bias=float(res.bias), d=d, eta=eta)


def _eta_rule(a: np.ndarray, settings: Settings) -> tuple[float, np.ndarray | None]:
    """The paper's ``eta = ||a||^2`` of the plain SVM (SVR) dual ``a``, or the given eta, and
    the warm start (``a`` when ``settings.warm_start``)."""
    if isinstance(settings.eta, str):
        eta = float(a @ a)
        if not np.isfinite(eta) or eta < ETA_FLOOR:
            eta = 1.0
    else:
        eta = float(settings.eta)
    return eta, (a if settings.warm_start else None)


def _eta_and_start(plain, settings: Settings, alpha0: np.ndarray | None):
    """``(eta, start)``: :func:`_eta_rule` on the plain SVM's (SVR's) dual ``plain()``, which
    is computed only where the paper's ``eta`` rule needs it or it is the start (no
    ``alpha0`` given, and ``warm_start``); a given ``alpha0`` is the start."""
    if not isinstance(settings.eta, str) and (alpha0 is not None or not settings.warm_start):
        return float(settings.eta), alpha0
    eta, start = _eta_rule(plain(), settings)
    return eta, (start if alpha0 is None else alpha0)


class Route:
    """One way to solve a problem of the estimators; subclasses implement :meth:`fit`."""

    name = "route"

    def __init__(self, settings: Settings):
        self.settings = settings

    def box(self, C) -> float | np.ndarray:
        """The problem's box: ``C`` when given (per-sample bounds of the problem's points, or
        a scalar), else the settings' scalar ``C``."""
        return self.settings.C if C is None else C

    def fit(self, train: TrainingData, idx: np.ndarray, y: np.ndarray,
            alpha0: np.ndarray | None = None, C=None) -> RouteFit:
        """Solve the problem of the points ``idx`` with labels (targets) ``y``.

        Parameters
        ----------
        train : TrainingData
            Validated training data of the estimator (all points).
        idx : ndarray of int
            Positions of the problem's points in ``train``.
        y : ndarray of shape (idx.size,)
            Labels in {-1, +1} (P1, P3) or finite targets (P2).
        alpha0 : ndarray of shape (idx.size,), optional
            A start (the estimator's ``warm_start``: the previous fit's solution, rescaled)
            used instead of the plain SVM's (SVR's); the plain model is then fitted only when
            ``eta`` needs it. Ignored by :class:`DecompositionRoute`.
        C : float or ndarray of shape (idx.size,), optional
            The problem's box (validated): per-sample bounds from the weights, or a scalar;
            ``None``: ``settings.C``.

        Returns
        -------
        RouteFit
        """
        raise NotImplementedError


class DenseRoute(Route):
    """P1 on the dense kernel ``K[idx, idx]``: :func:`dank_fast.solve_svm` from the plain SVM's
    dual (libsvm, iteration-limited). ``8 n_p^2`` bytes for the kernel; ``K`` was validated by
    the estimator, so it is passed as :class:`KernelData` (not re-checked)."""

    name = "dense"

    def fit(self, train: TrainingData, idx: np.ndarray, y: np.ndarray,
            alpha0: np.ndarray | None = None, C=None) -> RouteFit:
        s, C = self.settings, self.box(C)
        kd = train.kernel(idx)
        eta, alpha0 = _eta_and_start(lambda: svc_dual(kd.K, y, C), s, alpha0)
        method = s.method
        if method == "auto" and alpha0 is None:
            method = "newton"  # no warm start wanted: Newton from 0
        res = solve_svm(kd, y, C=C, eta=eta, tau=s.tau, method=method, tol=s.tol,
                        max_iter=s.max_iter, alpha0=alpha0, **s.options)
        return RouteFit(res, eta, _model_from_result(res, y, eta))


class WorkingSetRoute(Route):
    """P1 on all points by working sets (:func:`dank_fast.working_set.solve_svm_working_set`
    through :func:`dank_fast.solve_svm` on a :class:`FeatureKernel`): no ``n_p x n_p`` array,
    ``8 |W|^2`` bytes for the working set's kernel."""

    name = "working-set"

    def fit(self, train: TrainingData, idx: np.ndarray, y: np.ndarray,
            alpha0: np.ndarray | None = None, C=None) -> RouteFit:
        s, C = self.settings, self.box(C)
        kern = FeatureKernel.from_validated(train.X[idx], **s.kernel_kwargs)
        # libsvm on the features
        eta, alpha0 = _eta_and_start(lambda: svc_dual(kern, y, C), s, alpha0)
        # the user's method, never replaced: working sets take "auto" and "newton" and
        # solve_svm says so for another
        res = solve_svm(kern, y, C=C, eta=eta, tau=s.tau, method=s.method, tol=s.tol,
                        max_iter=s.max_iter, alpha0=alpha0, verbose=bool(s.verbose),
                        **s.options)
        return RouteFit(res, eta, _model_from_result(res, y, eta))


class DecompositionRoute(Route):
    """P3 (eqs. (18), (19)) by k-means decomposition of the features
    (:func:`dank_fast.solve_decomposed`, called through its public signature): ``8 n_c^2``
    bytes for the largest cluster's kernel, no ``n_p x n_p`` array."""

    name = "decomposition"

    def fit(self, train: TrainingData, idx: np.ndarray, y: np.ndarray,
            alpha0: np.ndarray | None = None, C=None) -> RouteFit:
        s, C = self.settings, self.box(C)
        X = train.X[idx]
        v = min(int(s.decomposition), y.size)
        km = KMeans(n_clusters=v, random_state=s.random_state, n_init=3).fit(X)
        # the estimator refuses other methods with a decomposition (DECOMPOSITION_METHODS)
        res = solve_decomposed(
            FeatureKernel.from_validated(X, **s.kernel_kwargs), y, C=C,
            eta="svm" if isinstance(s.eta, str) else float(s.eta),
            labels=km.labels_, method=s.method, tol=s.tol, max_iter=s.max_iter,
            certify_full=False,
        )
        d = res.alpha * y
        S = np.flatnonzero(res.alpha > 0)
        model = BinaryModel(kind="decomposed", support=S, dual=d[S], bias=0.0, d=d, eta=res.eta,
                            labels=km.labels_, centers=km.cluster_centers_)
        return RouteFit(res, res.eta, model)


def choose_route(settings: Settings, route: str, n_p: int, precomputed: bool) -> Route:
    """The route of a problem of ``n_p`` points: the decomposition when asked for, else
    ``route`` unless it is ``"auto"``, which takes the dense kernel while its ``8 n_p^2``
    bytes fit in :data:`dank_fast._cost.DENSE_KERNEL_BYTES` (always for a precomputed kernel)
    and working sets beyond."""
    if settings.decomposition is not None:
        return DecompositionRoute(settings)
    if route == "auto":
        route = "dense" if precomputed or dense_kernel_fits(n_p) else "working-set"
    return DenseRoute(settings) if route == "dense" else WorkingSetRoute(settings)


# --------------------------------------------------------------------------- P2 (the regressor)
class SVRRoute(Route):
    """P2 (eq. (22)) on the dense kernel ``K[idx, idx]``: :func:`dank_fast.solve_svr`, ``eta``
    (``eta="svr"``) and the warm start from the plain SVR, as :class:`DenseRoute` takes them from
    the plain SVM. ``8 n_p^2`` bytes."""

    name = "svr"

    def fit(self, train: TrainingData, idx: np.ndarray, y: np.ndarray,
            alpha0: np.ndarray | None = None, C=None) -> RouteFit:
        s, C = self.settings, self.box(C)
        kd = train.kernel(idx)
        eta, alpha0 = _eta_and_start(
            lambda: svr_dual(kd.K, y, C, s.epsilon, for_eta=isinstance(s.eta, str)), s, alpha0)
        method = s.method
        if method == "auto" and alpha0 is None:
            method = "newton"  # no warm start wanted: Newton from 0
        res = solve_svr(kd, y, C=C, epsilon=s.epsilon, eta=eta, tau=s.tau, method=method,
                        tol=s.tol, max_iter=s.max_iter, alpha0=alpha0, **s.options)
        return RouteFit(res, eta, None)
