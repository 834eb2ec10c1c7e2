"""``solve_svm``: one entry point for the fast solvers of P1 (eq. (4))."""

from __future__ import annotations

import time

from ._checked import CheckedKernel, kernel_data_of
from ._libsvm import svc_dual, svc_iteration_limit
from ._methods import METHODS, run_method
from ._problem import SVMProblem
from ._result import DANKResult
from ._scaling import canonical_factor, recertify_zero_kernel, unscale
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
    """Solve DANK in SVM, the saddle problem P1 (the paper's eq. (4)):
    ``max_{a in A} min_{F PSD} H(a, F)``, with a certified duality gap.

    Parameters
    ----------
    K : array_like of shape (n, n), or FeatureKernel
        PSD initial kernel matrix, checked as docs/validity.md says (symmetric, finite, PSD up
        to its tolerance). A :class:`dank_fast.FeatureKernel` (features plus a PSD kernel
        function) is solved by working sets without ever forming the ``n x n`` kernel; only
        ``method="auto"`` and ``"newton"`` apply there.
    y : array_like of shape (n,)
        Labels in {-1, +1}, both present.
    C : float > 0, or array_like of shape (n,)
        Box constraint ``0 <= a_i <= C``; a vector of ``n`` finite per-sample bounds
        ``C_i > 0`` gives the box-weighted problem ``0 <= a_i <= C_i`` (libsvm's sample and
        class weights times ``C``, docs/MATH.md section 14). Every route takes it, and the
        plain SVM start is fitted with ``sample_weight = C / max C``.
    eta : float > 0
        Weight of the centering regulariser ``||F - 11'||_F^2``.
    tau : float >= 0, default 0.01
        Nuclear-norm weight (relative to eta).
    method : {"auto", "accelerated", "newton", "paper", "paper-monotone", "pgm"}
        ``"auto"`` (default): ``"newton"`` started from the plain SVM's dual solution, which it
        computes itself with scikit-learn's libsvm (``kernel="precomputed"``, same ``C``,
        ``tol`` = 1e-4) unless ``alpha0`` is given; the SVC fit is included in ``time`` and
        reported in ``extra["warm_start"]``. ``"newton"``: projected Newton on the free set
        (not in the paper; the user guide's "Fast solvers" page and the cost model of the
        ARCHITECTURE page), which hands over to bursts of the accelerated method where a
        Newton step cannot increase ``h``. ``"accelerated"``: accelerated projected gradient
        with backtracking and restart, exact projection. ``"paper"``: the paper's Algorithm 1
        as printed (options ``projection``, ``beta_sign``, ``eps``); ``"paper-monotone"`` its
        monotone variant; ``"pgm"`` the projected gradient of the paper's eq. (17).
    tol : float, default 1e-6
        Target certified relative gap ``gap / 1'a``: ``status == "converged"`` iff it is
        reached; it bounds a weighted mean of the margin errors ``|1 - y_i f_i|`` (docs/MATH.md
        section 5). For the paper's methods it only decides the warning.
    max_iter : int, optional
        The method's outer iterations, the unit of ``result.n_iter``: Newton steps for
        ``"auto"``/``"newton"`` (default 100; the accelerated fallback has its own budget, the
        option ``fallback_iter``, default 5000), iterations for ``"accelerated"`` (default
        5000) and the paper's methods (default 2000, the paper's ``t_max``).
    alpha0 : array_like of shape (n,), optional
        Warm start (moved onto ``A`` keeping its zeros); e.g. a plain SVM's dual solution.
        Newton starts from it or, where that has a higher ``h``, from a point ``s alpha0``
        of its ray, ``0 < s < 1`` (docs/MATH.md section 5.4); for ``tau > 0`` its first
        steps solve the relaxed problem ``tau = 0`` (``F`` in closed form) where a bound
        proves that solution nearer the optimum (section 5.5).
    check_psd : bool, default True
        Run the PSD test of ``K`` (a Cholesky factorisation, ``O(n^3 / 3)``, or a cheaper
        sufficient test for kernels of low numerical rank). ``False`` skips only that test,
        for a kernel you know to be PSD; the other checks always run. The matrix
        :func:`dank_fast.compute_kernel` returns needs neither: it carries a proof and is
        accepted without any pass over it (docs/validity.md, rule 6).
    eig_route : {"auto", "dense", "lanczos"}
        How ``F(a)`` is computed when ``tau > 0`` (:func:`dank_fast.inner_minimiser`):
        ``"auto"`` chooses by flops between the dense decomposition and the certified
        iterative route.
    **options
        Options of the method: ``fallback_iter``, ``burst_iter``, ``record_history``
        (``"auto"``/``"newton"``); ``record_history``, ``check_every``, ``callback``
        (``"accelerated"``); ``projection``, ``beta_sign``, ``eps`` (the paper's methods);
        ``max_rounds``, ``max_add``, ``verbose`` (a :class:`dank_fast.FeatureKernel`).

    Returns
    -------
    DANKResult
        ``alpha``, ``bias``, ``lower <= v* <= upper``, ``gap``, ``rel_gap``, ``status``,
        ``n_iter``, ``time``, ``F`` (dense) / ``F_factors``; the fields every result shares
        are listed in docs/conventions.md.

    Raises
    ------
    ValueError
        An input outside docs/validity.md (a kernel that is not symmetric, finite or PSD, labels
        not in {-1, +1} or of one class, a ``C``, ``eta``, ``tau`` or ``tol`` out of range, an
        instance outside the representable range, an ``alpha0`` of another shape), or an
        unknown ``method``.
    TypeError
        An input of the wrong type, or an option the method does not take (the message lists
        the valid ones).

    Warns
    -----
    ConvergenceWarning
        :class:`dank_fast.ConvergenceWarning` (a subclass of scikit-learn's) whenever the
        certified ``rel_gap > tol``; the bracket is valid all the same.

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
    kd = kernel_data_of(K, check_psd)
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
    res, warm = _solve_dense(kd, y, C, eta, tau, method, tol, max_iter, alpha0, eig_route,
                             options)
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
    kd_c = kd if c == 1.0 else CheckedKernel(kd.K * c, n_total=kd.n_total)
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
    valid = ("max_add", "max_rounds", "verbose")
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise TypeError(f"Unknown solver options for the working-set route: {', '.join(unknown)}; "
                        f"valid options: {', '.join(valid)}")
    return solve_svm_working_set(
        K, y, C=C, eta=eta, tau=tau, tol=tol, alpha0=alpha0, max_iter=max_iter or 100,
        **options,
    )
