"""``solve_svm``: one entry point for the fast solvers of P1 (eq. mainrank)."""

from __future__ import annotations

import time

from ._checked import checked_kernel_data
from ._kernel_data import KernelData
from ._libsvm import svc_dual, svc_iteration_limit
from ._methods import METHODS, run_method
from ._problem import SVMProblem
from ._result import DANKResult
from ._scaling import canonical_factor, recertify_zero_kernel, unscale
from ._threads import blas_threads
from ._validation import (
    box_max,
    check_binary_labels,
    check_box,
    check_finite_array,
    check_nonnegative,
    check_positive,
    check_representable,
    check_solver_options,
)
from .certificate import svm_certificate
from .feature_kernel import FeatureKernel
from .working_set import solve_svm_working_set

# svc_dual and svc_iteration_limit live in dank_fast._libsvm (re-exported here)
__all__ = ["solve_svm", "svc_dual", "svc_iteration_limit", "METHODS"]


def solve_svm(
    K,
    y,
    *,
    C,
    eta: float,
    tau: float = 0.01,
    method: str = "auto",
    tol: float = 1e-6,
    max_iter: int | None = None,
    alpha0=None,
    check_psd: bool = True,
    eig_route: str = "auto",
    **options,
) -> DANKResult:
    """Solve DANK in SVM, eq. mainrank: ``max_{a in A} min_{F PSD} H(a, F)``.

    Parameters
    ----------
    K : array_like of shape (n, n), or FeatureKernel
        PSD initial kernel matrix (checked; pass ``check_psd=False`` to skip the
        O(n^3) test for a kernel you computed yourself). A
        :class:`dank_fast.FeatureKernel` (features plus a PSD kernel function) is solved by
        working sets (:func:`dank_fast.working_set.solve_svm_working_set`) without ever
        forming the ``n x n`` kernel; only ``method="auto"``/``"newton"`` apply there.
    y : array_like of shape (n,)
        Labels in {-1, +1}, both present.
    C : float > 0, or array_like of shape (n,)
        Box constraint ``0 <= a_i <= C``; a vector of ``n`` finite per-sample bounds
        ``C_i > 0`` gives the box-weighted problem ``0 <= a_i <= C_i`` (libsvm's sample and
        class weights times ``C``, docs/MATH.md section 14). Every route takes it: the dense
        methods, the working sets of a :class:`dank_fast.FeatureKernel`, and the plain SVM
        warm start (fitted with ``sample_weight = C / max C``).
    eta : float > 0
        Weight of the centering regulariser ``||F - 11'||_F^2``.
    tau : float >= 0, default 0.01
        Nuclear-norm weight (relative to eta).
    method : {"auto", "accelerated", "newton", "paper", "paper-monotone", "pgm"}
        ``"auto"`` (default): the fastest certified route measured (``benchmarks/``):
        ``"newton"`` started from the plain SVM's dual solution, which it computes itself with
        :class:`sklearn.svm.SVC` (``kernel="precomputed"``, same ``C``, ``svc_dual``'s
        ``tol`` = 1e-4) unless ``alpha0`` is given; Newton hands over to
        ``"accelerated"`` if a step fails to increase ``h``. The SVC fit is included in
        ``time`` and reported in ``extra["warm_start"]``.
        ``"accelerated"``: accelerated projected gradient with
        backtracking and restart, exact projection, stops on the certified
        relative gap ``tol``. ``"newton"``: projected Newton on the free set
        (:mod:`dank_fast._newton`; not in the paper), fastest from a warm start
        such as the plain SVM's solution; hands over to ``"accelerated"`` if a
        Newton step fails to increase ``h``. ``"paper"``: Algorithm ago3 as printed (options
        ``projection``, ``beta_sign``, ``t_max``, ``eps``, see
        :mod:`dank_fast._paper`); ``"paper-monotone"`` its monotone variant;
        ``"pgm"`` the projected gradient of eq. pgm.
    tol : float, default 1e-6
        Target certified relative gap ``gap / 1'a`` (accelerated); for the
        paper's methods it only decides the reported status.
    max_iter : int, optional
        Iteration limit (default 5000 for accelerated; the paper's ``t_max = 2000``;
        for newton: 100 Newton steps, and ``max_iter`` (default 5000) iterations of
        the accelerated fallback).
    alpha0 : array_like, optional
        Warm start (projected onto ``A``); e.g. a plain SVM's dual solution.
    eig_route : {"auto", "dense", "lanczos"}
        How ``F(a)`` is computed when ``tau > 0`` (:func:`dank_fast.inner.inner_minimiser`).

    Returns
    -------
    DANKResult
        ``alpha``, ``bias``, ``lower <= v* <= upper``, ``gap``, ``rel_gap``,
        ``status``, ``n_iter``, ``time``, ``F`` (dense) / ``F_factors``.
        A ``ConvergenceWarning`` is issued when ``"accelerated"`` stops without
        certifying ``tol``.

    Examples
    --------
    >>> import numpy as np
    >>> from dank_fast import solve_svm, compute_kernel
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2)); y = np.where(X[:, 0] + X[:, 1] > 0, 1.0, -1.0)
    >>> res = solve_svm(compute_kernel(X, sigma=1.0), y, C=1.0, eta=10.0, tau=0.01)
    >>> res.status, bool(res.rel_gap <= 1e-6), bool(res.lower <= res.upper)
    ('converged', True, True)
    """
    t0 = time.perf_counter()
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if isinstance(K, FeatureKernel):
        return _solve_features(K, y, C, eta, tau, method, tol, max_iter, alpha0, options)
    kd = K if isinstance(K, KernelData) else checked_kernel_data(K, check_psd=check_psd)
    y = check_binary_labels(y, kd.n)
    C = check_box(C, kd.n)
    eta = check_positive(eta, "eta")
    tau = check_nonnegative(tau, "tau")
    tol, max_iter = check_solver_options(tol, max_iter, eig_route)
    check_representable(C, eta, kd.kappa, kd.n)
    if alpha0 is not None:
        alpha0 = check_finite_array(alpha0, "alpha0", ndim=1)
        if alpha0.shape != y.shape:
            raise ValueError(f"alpha0 must have shape {y.shape}, got {alpha0.shape}")
    if kd.kappa == 0.0 and eta != box_max(C):  # K = 0: a* does not depend on eta
        res = solve_svm(kd, y, C=C, eta=box_max(C), tau=tau, method=method, tol=tol,
                        max_iter=max_iter, alpha0=alpha0, check_psd=False, eig_route=eig_route,
                        **options)
        cert = svm_certificate(kd.K, y, res.alpha, C=C, eta=eta, tau=tau)
        res = recertify_zero_kernel(res, cert, eta, tol)
        res.time = time.perf_counter() - t0
        return res
    # the whole solve is small work on one BLAS thread (_threads.blas_threads: small products
    # must not busy-wait on shared cores, and nested one-thread limits then cost nothing); its
    # large factorisations and eigenproblems run on the user's threads
    with blas_threads(0):
        res, warm = _solve_dense(kd, y, C, eta, tau, method, tol, max_iter,
                                 alpha0, eig_route, options)
    if method == "auto":
        res.method = "auto"
        res.time = time.perf_counter() - t0
        res.extra["warm_start"] = warm
    return res


def _solve_dense(kd, y, C, eta, tau, method, tol, max_iter, alpha0, eig_route, options):
    """The validated dense problem: the SVC warm start of ``"auto"``, then ``method`` on the
    canonical instance ``(cK, C/c, eta/c)``, ``c`` a power of two (docs/validity.md), mapped
    back. Returns the result and where its start came from."""
    warm = "given"
    if method == "auto" and alpha0 is None:
        alpha0, warm = svc_dual(kd.K, y, C), "svc"
    c = canonical_factor(box_max(C), eta, kd.kappa)  # per-sample boxes: from max C
    kd_c = kd if c == 1.0 else KernelData(kd.K * c, n_total=kd.n_total)
    problem = SVMProblem(kd_c, y, C / c, eta / c, tau, eig_route)
    res = run_method(problem, method, c=c, tol=tol, max_iter=max_iter, alpha0=alpha0,
                     options=options)
    return unscale(res, c, kd, eta), warm


def _solve_features(K, y, C, eta, tau, method, tol, max_iter, alpha0, options) -> DANKResult:
    """P1 on a :class:`FeatureKernel`: the working-set route (no ``n x n`` kernel)."""
    if method not in ("auto", "newton"):
        raise ValueError(
            f"a FeatureKernel is solved by working sets with Newton (method='auto' or "
            f"'newton'), not {method!r}; pass a dense kernel for the other methods"
        )
    y = check_binary_labels(y, K.n)
    C = check_box(C, K.n)
    eta = check_positive(eta, "eta")
    tau = check_nonnegative(tau, "tau")
    tol, max_iter = check_solver_options(tol, max_iter, "auto")
    check_representable(C, eta, K.kappa, K.n)
    if alpha0 is not None:
        alpha0 = check_finite_array(alpha0, "alpha0", ndim=1)
        if alpha0.shape != y.shape:
            raise ValueError(f"alpha0 must have shape {y.shape}, got {alpha0.shape}")
    unknown = set(options) - {"verbose", "max_rounds", "max_add"}
    if unknown:
        raise TypeError(f"unexpected options for the working-set route: {sorted(unknown)}")
    return solve_svm_working_set(
        K, y, C=C, eta=eta, tau=tau, tol=tol, alpha0=alpha0, max_iter=max_iter or 100,
        **options,
    )
