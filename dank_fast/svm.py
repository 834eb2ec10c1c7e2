"""``solve_svm``: one entry point for the fast solvers of P1 (eq. mainrank)."""

from __future__ import annotations

import time

import numpy as np

from ._methods import run_method
from ._problem import SVMProblem
from ._result import DANKResult
from ._scaling import canonical_factor, recertify_zero_kernel, unscale
from ._validation import (
    check_binary_labels,
    check_finite_array,
    check_kernel_matrix,
    check_nonnegative,
    check_positive,
    check_representable,
    check_solver_options,
)
from .feature_kernel import FeatureKernel
from .inner import KernelData
from .working_set import solve_svm_working_set

__all__ = ["solve_svm", "svc_dual", "svc_iteration_limit", "METHODS"]


def svc_iteration_limit(n: int) -> int:
    """Iteration limit of libsvm's SMO behind :func:`svc_dual`: ``max(10^6, 100 n)``.

    SMO's iteration count grows with ``n`` and, much faster, with the conditioning
    ``C max|K|``; scikit-learn's default is no limit. Measured (Gaussian kernels, moons,
    ``tol = 1e-4``): at ``C <= 100`` at most ``40 n`` iterations (n = 200 .. 3000); at
    ``C = 1e4`` up to ``2900 n`` (n = 3000, sigma = 1: 8.7e6 iterations, 5 s; sigma = 0.1:
    4.2e6, 24 s), and 7 points with a linear kernel of scale 4.7e6 needed 6e6 iterations at
    ``C = 10`` and ran for 300 s at ``C = 1e4``. Each iteration costs ``O(n)``, so the limit
    bounds the fit to about ``6 us * max(10^6, 100 n)`` (a few seconds up to ``n = 10^4``)
    while staying far above what well-conditioned problems need (``100 n >= 2.5 x`` the
    largest count measured at ``C <= 100``). The result is only a warm start (and the
    paper's ``eta = ||a||^2``): DANK certifies its own solution from any start.
    """
    return max(10**6, 100 * int(n))


def svc_dual(K: np.ndarray, y: np.ndarray, C: float, tol: float = 1e-4) -> np.ndarray:
    """Dual variables ``a`` of the plain SVM (:class:`sklearn.svm.SVC`, precomputed ``K`` or a
    :class:`FeatureKernel`, whose kernel libsvm then computes from the features).

    The limit ``F = 11'`` of DANK (``eta -> inf``, ``tau = 0``): the paper's ``eta = ||a||^2``
    and the warm start of ``method="auto"``. ``O(SVC)`` time, no copy of ``K``.

    libsvm runs at most :func:`svc_iteration_limit` ``(n)`` iterations. When it stops there
    (ill-conditioned ``C max|K|``) the approximate dual is returned, clipped to ``[0, C]``,
    with a :class:`dank_fast.ConvergenceWarning`: it is still a usable warm start (the
    solvers repair it onto ``A`` and certify their own result), where without a limit the fit
    could run for minutes.
    """
    from sklearn.svm import SVC

    from ._libsvm import fit_limited, max_abs

    limit = svc_iteration_limit(y.size)
    if isinstance(K, FeatureKernel):  # libsvm computes the kernel from the features
        svc, data, scale = (SVC(C=C, tol=tol, max_iter=limit, cache_size=500, **K.svc_params()),
                            K.X, lambda: "kernel from features")
    else:
        svc, data = SVC(kernel="precomputed", C=C, tol=tol, max_iter=limit), K
        scale = lambda: f"C * max|K| = {C * max_abs(K):.3g}"  # noqa: E731
    fit_limited(svc, data, y, lambda: (
        f"the plain SVM (libsvm) of the warm start stopped at its iteration limit ({limit}; "
        f"ill-conditioned: {scale()}); its approximate dual is used as the warm start (and for "
        "eta='svm'), and the DANK solution is still certified"))
    a = np.zeros(y.size)
    a[svc.support_] = np.abs(svc.dual_coef_.ravel())
    return np.minimum(a, C)


METHODS = ("auto", "accelerated", "newton", "paper", "paper-monotone", "pgm")


def solve_svm(
    K,
    y,
    *,
    C: float,
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
    C : float > 0
        Box constraint.
    eta : float > 0
        Weight of the centering regulariser ``||F - 11'||_F^2``.
    tau : float >= 0, default 0.01
        Nuclear-norm weight (relative to eta).
    method : {"auto", "accelerated", "newton", "paper", "paper-monotone", "pgm"}
        ``"auto"`` (default): the fastest certified route measured (``benchmarks/``):
        ``"newton"`` started from the plain SVM's dual solution, which it computes itself with
        :class:`sklearn.svm.SVC` (``kernel="precomputed"``, same ``C``, ``tol=1e-4``) unless
        ``alpha0`` is given; Newton hands over to ``"accelerated"`` if a step fails to increase
        ``h``. The SVC fit is included in ``time`` and reported in ``extra["warm_start"]``.
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
    if isinstance(K, KernelData):
        kd = K
    else:
        kd = KernelData(check_kernel_matrix(K, check_psd=check_psd))
    y = check_binary_labels(y, kd.n)
    C = check_positive(C, "C")
    eta = check_positive(eta, "eta")
    tau = check_nonnegative(tau, "tau")
    tol, max_iter = check_solver_options(tol, max_iter, eig_route)
    check_representable(C, eta, kd.kappa, kd.n)
    if alpha0 is not None:
        alpha0 = check_finite_array(alpha0, "alpha0", ndim=1)
        if alpha0.shape != y.shape:
            raise ValueError(f"alpha0 must have shape {y.shape}, got {alpha0.shape}")
    if kd.kappa == 0.0 and eta != C:  # K = 0: a* does not depend on eta (recertify_zero_kernel)
        from .certificate import svm_certificate

        res = solve_svm(kd, y, C=C, eta=C, tau=tau, method=method, tol=tol, max_iter=max_iter,
                        alpha0=alpha0, check_psd=False, eig_route=eig_route, **options)
        cert = svm_certificate(kd.K, y, res.alpha, C=C, eta=eta, tau=tau)
        res = recertify_zero_kernel(res, cert, eta, tol)
        res.time = time.perf_counter() - t0
        return res
    warm = "given"
    if method == "auto" and alpha0 is None:
        alpha0, warm = svc_dual(kd.K, y, C), "svc"
    # solve the canonical instance (cK, C/c, eta/c), c a power of two (docs/validity.md)
    c = canonical_factor(C, eta, kd.kappa)
    kd_c = kd if c == 1.0 else KernelData(kd.K * c, n_total=kd.n_total)
    problem = SVMProblem(kd_c, y, C / c, eta / c, tau)
    problem.route = eig_route
    res = run_method(problem, method, c=c, tol=tol, max_iter=max_iter, alpha0=alpha0,
                     options=options)
    res = unscale(res, c, kd, eta)
    if method == "auto":
        res.method = "auto"
        res.time = time.perf_counter() - t0
        res.extra["warm_start"] = warm
    return res


def _solve_features(K, y, C, eta, tau, method, tol, max_iter, alpha0, options) -> DANKResult:
    """P1 on a :class:`FeatureKernel`: the working-set route (no ``n x n`` kernel)."""
    if method not in ("auto", "newton"):
        raise ValueError(
            f"a FeatureKernel is solved by working sets with Newton (method='auto' or "
            f"'newton'), not {method!r}; pass a dense kernel for the other methods"
        )
    y = check_binary_labels(y, K.n)
    C = check_positive(C, "C")
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
