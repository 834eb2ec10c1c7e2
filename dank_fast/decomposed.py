"""P3, the decomposed DANK-SVM (eqs. (18), (19); Lemma 5).

P3 (eq. (18)) is P1 without the bias (box ``0 <= a <= C`` only) and without the
nuclear norm (``tau = 0``):

    max_{0 <= a <= C} min_{F PSD} 1'a - 1/2 a'Y(F o K)Y a + eta ||F - 11'||_F^2.

With ``tau = 0`` the inner minimiser is ``F(a) = 11' + Gamma(a)`` and

    h(a) = 1'a - 1/2 d'Kd - eta ||Gamma(a)||_F^2,   d = a o y,

so on the block kernel ``Kbar_ij = K_ij [pi(i) = pi(j)]`` the value separates over the
clusters: ``hbar(a) = sum_c h_c(a^(c))``. :func:`solve_decomposed` partitions the data (k-means
or given labels), solves every cluster's problem (eq. (19)) independently with
``joblib.Parallel`` and concatenates ``abar``.

Lemma 5, corrected
--------------------------
``abar`` is optimal for P3 on ``Kbar`` and the saddle value is ``sum_c v*_c``, as the lemma
says. But the printed ``Fbar = diag(Fbar^(1,1), ..., Fbar^(v,v))`` (zeros off the blocks) is
NOT the minimiser of ``Hbar(abar, .)``: off the blocks ``Kbar`` vanishes, so only the
centering term ``eta (F_ij - 1)^2`` acts there and the minimiser is
``11' + Gamma_Kbar(abar)`` -- the blocks ``Fbar^(c,c)`` on the diagonal and **1** off the blocks.
The block-diagonal matrix costs an extra ``eta * #(off-block entries)`` in ``Hbar``. The
lemma's proof hides this in "Const". :attr:`DecomposedResult.F` is the true minimiser;
:attr:`DecomposedResult.F_blocks` are the per-cluster blocks.

Certificates: one for the concatenated solution on ``Kbar`` -- the sum of the cluster
certificates (``h``, the primal and hence the gap separate over the clusters when there is no
bias), so ``Kbar`` is never formed -- and, separately, the value ``h(abar)`` on the full kernel
``K`` (a lower bound of the saddle value of the full problem mainls, with that problem's own
upper bound).

Scale (Section 4)
-----------------------
With ``K`` a :class:`dank_fast.FeatureKernel`, no ``n x n`` kernel is formed and no SVM is fitted
on all ``n`` points: k-means runs on the features, each cluster's kernel is computed where that
cluster is solved (``O(n_c^2)`` memory, released with the solve: the cluster's result keeps
``O(n_c)``, :mod:`dank_fast.cluster_result`), and ``eta="svm"`` is the paper's rule applied to the
problem that is actually solved (eq. (20)): ``eta = ||abar_SVM||^2``, where ``abar_SVM``
concatenates the plain SVMs of the clusters (the SVM of the block kernel ``Kbar`` with one bias
per cluster). One ``eta``
for every cluster keeps Lemma 5 and the certificate on ``Kbar`` valid. The clusters are
solved by ``joblib`` (``n_jobs``, ``backend``) or on a ``dask.distributed`` cluster
(``client=``): each cluster's data are scattered once and used by both of its tasks (the SVM warm
start and the DANK solve).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np
from joblib import Parallel, delayed

from ._kernel_data import KernelData
from ._kernel_validation import check_kernel_matrix
from ._methods import METHODS, check_options, run_method
from ._p3 import (
    DecomposedProblem,
    block_kernel,
    full_certificate_dense,
    full_certificate_features,
    sum_certificates,
)
from ._result import ConvergenceWarning, DANKResult, SolverResult
from ._scaling import canonical_factor, unscale
from ._validation import (
    box_max,
    check_box,
    check_cluster_labels,
    check_finite_array,
    check_integer,
    check_labels_pm1,
    check_positive,
    check_representable,
    kernel_scale,
)
from .certificate import Certificate
from .cluster_result import SubKernel, attach_kernel, compact_result
from .feature_kernel import FeatureKernel
from .svm import svc_dual

__all__ = ["DecomposedProblem", "DecomposedResult", "solve_decomposed", "block_kernel", "METHODS"]

#: below this the plain SVMs' ``||a||^2`` is degenerate and ``eta = "svm"`` falls back to 1
ETA_FLOOR = 1e-12


@dataclass
class DecomposedResult(SolverResult):
    """Solution of the decomposed problem (P3 on ``Kbar``) with its certificates.

    Has every field of ``dank_fast._result.RESULT_FIELDS`` (docs/conventions.md, "Result
    contract"): ``bias``, ``alpha_hat`` and ``alpha_check`` are None (P3 has no bias and no
    SVR pair), ``n_iter`` is per cluster, the others are the concatenation's or the sum's.

    Attributes
    ----------
    alpha : ndarray of shape (n,)
        The concatenated ``abar`` (in the original sample order).
    labels : ndarray of shape (n,)
        Cluster of every sample.
    blocks : list of ndarray
        Sample indices of every cluster (order of ``np.unique(labels)``).
    results : list of DANKResult
        Per-cluster solver output (``results[c].alpha`` indexed like ``blocks[c]``), kept in
        ``O(n_c)`` memory: ``results[c].kernel`` is a :class:`dank_fast.cluster_result.SubKernel`
        (a view of :attr:`kernel`) and ``results[c].inner.F`` a
        :class:`dank_fast.cluster_result.ClusterF`; ``results[c].F`` forms ``F_c`` on demand.
    certificate : Certificate
        Certificate of ``alpha`` for P3 on ``Kbar`` (eq. (20)): the sum of the cluster
        certificates; ``lower``, ``upper``, ``gap``, ``rel_gap`` below are its fields.
    full_value : float or None
        ``h(abar)`` on the full kernel ``K`` (eq. (18)): a lower bound of the full problem's
        saddle value (None when ``certify_full=False``).
    full_certificate : Certificate or None
        Certificate of ``abar`` for the full problem (its ``upper`` bounds the full saddle
        value from above; its gap measures how far ``abar`` is from optimal for mainls).
    status : str
        ``"converged"`` when the Kbar certificate reaches ``tol`` and every cluster converged,
        else the first of ``"time_limit"``, ``"max_iter"``, ``"stopped"``, ``"stalled"`` that
        some cluster reports (``"stalled"`` when every cluster converged but the sum did not
        reach ``tol``) (``aggregate_status``; the previous release said
        ``"not_converged"``), with a :class:`dank_fast.ConvergenceWarning`.
    n_iter : ndarray of int
        Every cluster's ``n_iter`` (the unit of ``max_iter``).
    method : str or None
        The method every cluster ran (None without clusters).
    projection_distance : float
        The distance moved by the concatenation: ``sqrt(sum_c projection_distance_c^2)`` (the
        clusters' coordinates are disjoint).
    message : str
        One line: the certified relative gap on ``Kbar`` and the clusters' statuses.
    eta : float
        The ``eta`` used (``eta="svm"``: the rule of the module docstring).
    """

    alpha: np.ndarray
    labels: np.ndarray
    blocks: list
    results: list
    certificate: Certificate
    full_value: float | None
    full_certificate: Certificate | None
    status: str
    time: float
    eta: float = 0.0
    y: np.ndarray | None = field(default=None, repr=False)
    bias: None = None
    kernel: object = field(default=None, repr=False)
    extra: dict = field(default_factory=dict, repr=False)

    @property
    def lower(self) -> float:
        return self.certificate.lower

    @property
    def upper(self) -> float:
        return self.certificate.upper

    @property
    def gap(self) -> float:
        return self.certificate.gap

    @property
    def rel_gap(self) -> float:
        return self.certificate.rel_gap

    # P3 has no SVR pair: the names every result shares (docs/conventions.md)
    alpha_hat = None
    alpha_check = None

    @property
    def n_iter(self) -> np.ndarray:
        return np.array([r.n_iter for r in self.results])

    @property
    def method(self) -> str | None:
        return self.results[0].method if self.results else None

    @property
    def projection_distance(self) -> float:
        return math.hypot(*(r.projection_distance for r in self.results))

    @property
    def message(self) -> str:
        counts: dict = {}
        for r in self.results:
            counts[r.status] = counts.get(r.status, 0) + 1
        clusters = ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        return (f"{self.status}: certified relative gap {self.rel_gap:.2e} on Kbar; clusters: "
                f"{clusters or 'none'}")

    @property
    def F_blocks(self) -> list:
        """Per-cluster minimisers ``Fbar^(c,c) = 11' + Gamma(abar^(c))`` (dense)."""
        return [r.F for r in self.results]

    def _kernel_rows(self, rows) -> np.ndarray:
        K = self.kernel
        if isinstance(K, FeatureKernel):
            return K.block(rows, np.arange(K.n))
        return np.asarray(K)[rows]

    @property
    def F(self) -> np.ndarray:
        """The true minimiser of ``Hbar(abar, .)``: ``11' + Gamma_Kbar(abar)`` (1 off-block).

        Dense ``n x n`` (refused above 2 GiB); :attr:`F_blocks` holds the diagonal blocks.
        """
        n = self.alpha.size
        if 8 * n * n > 2 << 30:
            raise MemoryError(f"F is {n} x {n}; use F_blocks")
        d = self.alpha * self.y
        Kbar = self._kernel_rows(np.arange(n)) * (self.labels[:, None] == self.labels[None, :])
        return 1.0 + np.outer(d, d) * Kbar / (4 * self.eta)

    @property
    def F_lemma(self) -> np.ndarray:
        """The lemma's block-diagonal ``Fbar`` (0 off the blocks); not the minimiser."""
        F = np.zeros((self.alpha.size,) * 2)
        for idx, Fc in zip(self.blocks, self.F_blocks, strict=True):
            F[np.ix_(idx, idx)] = Fc
        return F

    def __repr__(self) -> str:
        full = "" if self.full_value is None else f", full_value={self.full_value:.10g}"
        return (
            f"DecomposedResult(n_clusters={len(self.blocks)}, status={self.status!r}, "
            f"gap={self.gap:.3e}, rel_gap={self.rel_gap:.3e}, lower={self.lower:.10g}"
            f"{full}, time={self.time:.3f}s)"
        )


#: the order in which a cluster's status becomes the decomposition's: what a caller can
#: change first (the budget) before what it cannot (the method's rule, floating point)
_STATUS_ORDER = ("time_limit", "max_iter", "stopped", "stalled")


def aggregate_status(results: list, rel_gap: float, tol: float) -> str:
    """The status of the decomposition (a word of :data:`dank_fast._result.STATUSES`):
    ``"converged"`` when every cluster converged and the certificate on ``Kbar`` reached
    ``tol``, else the first of :data:`_STATUS_ORDER` that some cluster reports, else
    ``"stalled"`` (every cluster converged, their sum did not reach ``tol``)."""
    statuses = {r.status for r in results}
    if statuses <= {"converged"} and rel_gap <= tol * (1 + 1e-9):
        return "converged"
    return next((s for s in _STATUS_ORDER if s in statuses), "stalled")


# --------------------------------------------------------------------------- cluster tasks
class _Cluster(NamedTuple):
    """What one cluster's tasks receive: its kernel source and labels (validated data).

    ``source``: the cluster's own features (a :class:`FeatureKernel`, ``8 n_c d`` bytes; the
    kernel is computed by the task) or, on the dense route, its kernel block (``8 n_c^2``).
    """

    source: FeatureKernel | np.ndarray
    y: np.ndarray

    def kernel(self) -> np.ndarray:
        """``K_c`` (``8 n_c^2`` bytes, computed from the features where the task runs)."""
        if isinstance(self.source, FeatureKernel):
            everything = np.arange(self.source.n)
            return self.source.block(everything, everything)
        return self.source


def _payloads(K, y: np.ndarray, blocks: list) -> list:
    """One :class:`_Cluster` per block: the features' rows (no kernel) or the dense block."""
    if isinstance(K, FeatureKernel):
        return [_Cluster(K.subset(idx), y[idx]) for idx in blocks]
    return [_Cluster(np.ascontiguousarray(K[np.ix_(idx, idx)]), y[idx]) for idx in blocks]


def _svc_task(data: _Cluster, C) -> np.ndarray:
    """Dual variables of the plain SVM of one cluster (zero for a one-class cluster)."""
    if np.unique(data.y).size < 2:
        return np.zeros(data.y.size)
    return svc_dual(data.kernel(), data.y, C)


def _solve_task(data: _Cluster, alpha0, C, eta, c, method, tol, max_iter, options) -> DANKResult:
    """One cluster's P3 (eq. (19)) on the canonical instance ``(cK, C/c, eta/c)``.

    Peak memory: ``K_c`` and the solver's caches of it (``8 n_c^2`` to ``24 n_c^2`` bytes) plus
    the Newton system on the free support vectors; all of it is released on return: the
    result is compacted (:func:`dank_fast.cluster_result.compact_result`, ``O(n_c)``).
    """
    K = data.kernel()
    kd = KernelData(K)
    kd_c = kd if c == 1.0 else KernelData(K * c)
    problem = DecomposedProblem(kd_c, data.y, C / c, eta / c)
    res = run_method(problem, method, c=c, tol=tol, max_iter=max_iter, alpha0=alpha0,
                     options=options)
    return compact_result(unscale(res, c, kd, eta))


class _Runner:
    """Maps a cluster task over the clusters: joblib (default) or a dask.distributed Client.

    With dask, the cluster payloads are scattered once (:meth:`distributed.Client.scatter`)
    and every later task refers to them by future: no payload is sent twice. Tasks return
    compact results, so what comes back is ``O(n_c)`` per cluster.
    """

    def __init__(self, payloads, client=None, n_jobs=None, backend=None):
        self.client = client
        self.n_jobs, self.backend = n_jobs, backend
        self.size = len(payloads)
        if client is not None:
            self.data = client.scatter(payloads)
        else:
            self.data = payloads

    def map(self, func, *per_cluster, **common):
        if self.client is not None:
            futures = self.client.map(func, self.data, *per_cluster, pure=False, **common)
            return self.client.gather(futures)
        return Parallel(n_jobs=self.n_jobs, backend=self.backend)(
            delayed(func)(d, *args, **common)
            for d, *args in zip(self.data, *per_cluster, strict=True)
        )


def solve_decomposed(
    K,
    y,
    *,
    C,
    eta: float | str,
    n_clusters: int | None = None,
    labels=None,
    X=None,
    random_state=None,
    n_jobs: int | None = None,
    backend: str | None = None,
    client=None,
    method: str = "auto",
    tol: float = 1e-6,
    max_iter: int | None = None,
    check_psd: bool = True,
    certify_full: bool = True,
    kmeans_n_init: int = 3,
    **options,
) -> DecomposedResult:
    """Solve P3 by k-means decomposition (eq. (19)), certified on ``Kbar``.

    Parameters
    ----------
    K : array_like of shape (n, n), or FeatureKernel
        PSD kernel of all samples, or a :class:`dank_fast.FeatureKernel` (features and a kernel
        function): then no ``n x n`` kernel is ever formed (module docstring, "Scale").
    y : array_like of shape (n,)
        Labels in {-1, +1} (one class per cluster is allowed: no bias constraint).
    C : float > 0, or array_like of shape (n,)
        Box ``0 <= a_i <= C``; a vector of ``n`` finite per-sample bounds ``C_i > 0`` (sample
        and class weights, docs/MATH.md section 14) is sliced per cluster: each cluster is
        solved with its own ``C[idx]``.
    eta : float > 0 or "svm"
        ``"svm"``: ``eta = ||abar_SVM||^2`` from the clusters' plain SVMs (module docstring);
        1 if that is degenerate (below 1e-12).
    n_clusters : int, optional
        Number of k-means clusters (``sklearn.cluster.KMeans(n_clusters,
        random_state=random_state, n_init=kmeans_n_init)`` on the features; 3 restarts:
        ijcnn1's 50 clusters take 3 s with 1, 7 s with 3, ~25 s with 10). Ignored when
        ``labels`` is given.
    labels : array_like of shape (n,), optional
        A given partition (any values comparable for equality; not NaN or None). If neither
        ``labels`` nor ``n_clusters`` is given, one cluster (the undecomposed P3).
    X : array_like of shape (n, d), optional
        Features for k-means with a dense ``K`` (a FeatureKernel carries its own).
    random_state : int, RandomState or None
        Seed of k-means.
    n_jobs, backend :
        Passed to ``joblib.Parallel`` (the caller chooses where the clusters are solved;
        ``backend="dask"`` inside ``joblib.parallel_config`` works too).
    client : distributed.Client, optional
        Solve the clusters on a dask cluster (``dask.distributed``; optional dependency, extra
        ``dank[distributed]``). Cluster data are scattered once.
    method : {"auto", "newton", "accelerated", "paper", "paper-monotone", "pgm"}
        Solver of every cluster. ``"auto"``: Newton from the cluster's plain SVM.
    tol : float
        Target certified relative gap of every cluster.
    certify_full : bool, default True
        Also compute ``h(abar)`` and the certificate on the full kernel ``K`` (dense route:
        ``O(n^2)``; FeatureKernel: ``O(n |S| d)`` time in row blocks).

    Returns
    -------
    DecomposedResult

    Notes
    -----
    Memory, stage by stage (``w`` clusters in flight: the joblib or dask workers):

    * validation and k-means: the data (``8 n d`` for features; a dense ``K``: ``8 n^2``);
    * payloads: the clusters' rows of ``X``, one copy (``8 n d``; dense route: the blocks
      ``K_c``, ``8 sum_c n_c^2``), held until the clusters are solved (dask: on the workers);
    * each cluster in flight: ``K_c`` and the solver's caches of it (``8 n_c^2`` to
      ``24 n_c^2`` bytes) plus the Newton system on the free support vectors (``8 f_c^2``),
      released when the cluster's result is returned: ``w`` of them at a time;
    * results: ``O(n_c)`` per cluster (:mod:`dank_fast.cluster_result`: ``F_c`` as
      ``(d, eta)`` and a view of the caller's kernel), ``O(n)`` in all;
    * ``certify_full`` with a FeatureKernel: row blocks of ``kernel.block_bytes``.

    Measured (make_classification 464,810 x 54, 200 clusters, one process): see
    ``benchmarks/README.md`` (``bench_large.py --datasets covtype-synthetic``). Time
    ``O(sum_c (SVM_c + Newton_c))`` plus k-means.

    Examples
    --------
    >>> import numpy as np
    >>> from dank_fast import FeatureKernel, compute_kernel, solve_decomposed
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-3, 1, (20, 2)), rng.normal(3, 1, (20, 2))])
    >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1.0, -1.0)
    >>> res = solve_decomposed(compute_kernel(X, sigma=1.0), y, C=1.0, eta=10.0,
    ...                        n_clusters=2, X=X, random_state=0)
    >>> len(res.blocks), bool(res.rel_gap <= 1e-6)
    (2, True)
    >>> bool(res.full_value <= res.full_certificate.upper)
    True
    >>> feat = solve_decomposed(FeatureKernel(X, sigma=1.0), y, C=1.0, eta="svm",
    ...                         n_clusters=2, random_state=0)
    >>> bool(feat.success), feat.eta > 0
    (True, True)
    """
    t0 = time.perf_counter()
    plan = _check_plan(C, eta, method, tol, max_iter, options)
    K, kappa = _check_kernel(K, X, check_psd)
    n = K.n if isinstance(K, FeatureKernel) else K.shape[0]
    y = check_labels_pm1(y, n, require_both=False)
    plan = replace(plan, C=check_box(C, n))
    labels = _partition(K, X, n, labels, n_clusters, random_state, kmeans_n_init)
    runner_kw = dict(client=client, n_jobs=n_jobs, backend=backend)
    return _solve_validated(K, y, labels, kappa, plan, runner_kw, certify_full, t0)


@dataclass(frozen=True)
class _Plan:
    """The validated settings of one decomposed solve (internal)."""

    C: float | np.ndarray
    eta: float | str
    method: str
    tol: float
    max_iter: int | None
    options: dict


def _check_plan(C, eta, method, tol, max_iter, options) -> _Plan:
    """Validate the scalar settings of :func:`solve_decomposed` (its public boundary)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    check_options(method, options)  # before k-means and the warm starts
    if isinstance(eta, str):
        if eta != "svm":
            raise ValueError(f"eta must be a number > 0 or 'svm', got {eta!r}")
    else:
        eta = check_positive(eta, "eta")
    # C is checked against n (check_box) once the kernel is known; a scalar already here
    return _Plan(C=check_positive(C, "C") if np.ndim(C) == 0 else C, eta=eta, method=method,
                 tol=check_positive(tol, "tol"),
                 max_iter=None if max_iter is None else check_integer(max_iter, "max_iter"),
                 options=options)


def _check_kernel(K, X, check_psd: bool):
    """``(K, max|K|)``: a FeatureKernel as it is (validated when built), else the checked
    dense kernel."""
    if isinstance(K, FeatureKernel):
        if X is not None:
            raise ValueError("X is given by the FeatureKernel; do not pass X as well")
        return K, K.kappa
    K = check_kernel_matrix(K, check_psd=check_psd)
    return K, kernel_scale(K)


def _partition(K, X, n: int, labels, n_clusters, random_state, kmeans_n_init) -> np.ndarray:
    """The cluster labels: given (checked), k-means on the features, or one cluster."""
    if labels is not None:
        return check_cluster_labels(labels, n)
    if n_clusters is None:
        return np.zeros(n, dtype=np.intp)
    n_clusters = check_integer(n_clusters, "n_clusters")
    if not 1 <= n_clusters <= n:
        raise ValueError(f"n_clusters must be in [1, {n}], got {n_clusters}")
    if isinstance(K, FeatureKernel):
        X = K.X  # validated when the FeatureKernel was built
    elif X is None:
        raise ValueError("n_clusters needs the features X for k-means (or pass labels)")
    else:
        X = check_finite_array(X, "X", ndim=2, allow_bool=True)
        if X.shape[0] != n:
            raise ValueError(f"X has {X.shape[0]} rows but K has {n}")
    # start-up: sklearn.cluster adds ~0.2 s to `import dank_fast`; only k-means needs it
    from sklearn.cluster import KMeans

    return KMeans(n_clusters=n_clusters, random_state=random_state,
                  n_init=kmeans_n_init).fit_predict(X)


def _solve_validated(K, y, labels, kappa, plan: _Plan, runner_kw: dict, certify_full: bool,
                     t0: float) -> DecomposedResult:
    """:func:`solve_decomposed` on validated data (``K``, ``y``, ``labels`` and ``plan``).

    Memory: the payloads (the clusters' features, ``8 n d`` bytes in all; dense route: the
    blocks, ``8 sum_c n_c^2``), one ``K_c`` per cluster in flight, and compact results.
    """
    blocks = _blocks(labels)
    runner = _Runner(_payloads(K, y, blocks), **runner_kw)
    Cs = _cluster_boxes(plan.C, blocks)
    eta, warm = _eta_and_warm(runner, plan, Cs)
    check_representable(plan.C, eta, kappa, y.size)
    # K = 0: Gamma = 0 and P3 has tau = 0, so no term of the problem or of its certificates
    # depends on eta (F = 11'); solve and certify at the well-scaled eta = max C (same numbers)
    eta_s = box_max(plan.C) if kappa == 0.0 else eta
    c = canonical_factor(box_max(plan.C), eta_s, kappa)  # per-sample boxes: from max C
    results = runner.map(_solve_task, warm, Cs, eta=eta_s, c=c, method=plan.method,
                         tol=plan.tol, max_iter=plan.max_iter, options=plan.options)
    del runner  # the payloads and their scattered copies are released here
    results = [attach_kernel(r, SubKernel(K, idx)) for r, idx in zip(results, blocks,
                                                                       strict=True)]
    abar = np.zeros(y.size)
    for idx, r in zip(blocks, results, strict=True):
        abar[idx] = r.alpha
    full = None
    if certify_full:
        full = (full_certificate_features if isinstance(K, FeatureKernel)
                else full_certificate_dense)(K, y, abar, plan.C, eta_s, c)
    return _decomposed_result(K, y, labels, blocks, results, abar, full, eta, plan.tol,
                              engine="joblib" if runner_kw["client"] is None else "dask",
                              t0=t0)


def _blocks(labels: np.ndarray) -> list:
    """Sample indices of every cluster, in the order of :func:`_label_codes`."""
    codes = _label_codes(labels)
    return [np.flatnonzero(codes == c) for c in range(int(codes.max()) + 1)]


def _cluster_boxes(C, blocks: list) -> list:
    """Every cluster's box: the scalar ``C``, or the slice ``C[idx]`` of per-sample bounds."""
    return [C if np.ndim(C) == 0 else C[idx] for idx in blocks]


def _eta_and_warm(runner: _Runner, plan: _Plan, Cs: list) -> tuple[float, list]:
    """``eta`` (given, or the rule of the module docstring) and the clusters' warm starts
    (``Cs``: every cluster's box)."""
    eta, warm = plan.eta, None
    if eta == "svm" or plan.method == "auto":
        warm = runner.map(_svc_task, Cs)
    if eta == "svm":
        eta = float(math.fsum(float(a @ a) for a in warm))
        if not eta >= ETA_FLOOR:
            eta = 1.0
    if plan.method != "auto":
        warm = None
    return eta, warm or [None] * runner.size


def _decomposed_result(K, y, labels, blocks, results, abar, full, eta, tol, *, engine,
                       t0) -> DecomposedResult:
    """Assemble the :class:`DecomposedResult` (certificate on ``Kbar``: the clusters' sum)."""
    cert_bar = sum_certificates([r.certificate for r in results], [r.alpha for r in results])
    full_value, cert_full = (None, None) if full is None else full
    res = DecomposedResult(
        alpha=abar, labels=labels, blocks=blocks, results=results, certificate=cert_bar,
        full_value=full_value, full_certificate=cert_full,
        status=aggregate_status(results, cert_bar.rel_gap, tol), time=time.perf_counter() - t0,
        eta=eta, y=y, kernel=K, extra={"engine": engine},
    )
    if not res.success:  # the clusters' own warnings stay in their worker processes
        warnings.warn(f"DANK decomposed solver did not certify tol={tol:g}: {res.message}",
                      ConvergenceWarning, stacklevel=4)
    return res


def _label_codes(labels: np.ndarray) -> np.ndarray:
    """Integer codes ``0 .. v-1`` of the cluster labels, in the order of first sorted value
    when the labels are sortable (``np.unique``), else of first appearance."""
    try:
        _, codes = np.unique(labels, return_inverse=True)
        return codes.ravel()
    except TypeError:  # mixed, unorderable values: first appearance
        seen: dict = {}
        return np.array([seen.setdefault(v, len(seen)) for v in labels.tolist()], dtype=np.intp)
