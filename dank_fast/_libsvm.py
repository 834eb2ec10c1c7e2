"""libsvm fits with an iteration limit whose ConvergenceWarning becomes dank_fast's own, and the
plain SVM's and SVR's duals (``svc_dual``, ``svr_dual``): the warm starts of P1's and P2's
routes and the paper's ``eta``.

Per-sample boxes ``C_i`` (docs/MATH.md section 14) are libsvm's own weights: scikit-learn's
libsvm sets the box of sample ``i`` to ``C * sample_weight[i]`` (and ``C * class_weight[y_i]``),
so a vector ``C`` is fitted as ``C0 = max C`` with ``sample_weight = C / C0``.

A low module: the dense solver (:mod:`dank_fast.svm`), the working sets
(:mod:`dank_fast.working_set`), the decomposition and the estimators all take the plain SVM from
here, so none of them imports another for it.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

import numpy as np
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.svm import SVC, SVR

try:  # scikit-learn's own binding of libsvm, behind SVC.fit (see _precomputed_dual)
    from sklearn.svm import _libsvm as _sk_libsvm
except ImportError:  # pragma: no cover - a scikit-learn without it: _svc_precomputed_dual
    _sk_libsvm = None

from ._result import ConvergenceWarning
from .feature_kernel import FeatureKernel

__all__ = ["fit_limited", "max_abs", "svc_dual", "svr_dual", "svc_iteration_limit",
           "svr_iteration_limit"]


def _as_weights(C):
    """``(C0, sample_weight)`` of libsvm for a box ``C``: ``(C, None)`` for a scalar, ``(max C,
    C / max C)`` for per-sample bounds (libsvm's box of sample ``i`` is ``C0 sample_weight_i``)."""
    if np.ndim(C) == 0:
        return float(C), None
    C = np.asarray(C, dtype=np.float64)
    C0 = float(C.max())
    return C0, C / C0


def fit_limited(model, X, y, message: Callable[[], str], sample_weight=None):
    """``model.fit(X, y, sample_weight=...)`` for a scikit-learn libsvm model built with
    ``max_iter``.

    A scikit-learn ``ConvergenceWarning`` (libsvm stopped at its iteration limit) is re-issued
    as :class:`dank_fast.ConvergenceWarning` with ``message()`` (computed only then, e.g. a
    ``max|K|`` that costs a pass over ``K``); every other warning passes through unchanged.
    Used for the plain SVM/SVR warm starts (``svc_dual``, ``eta="svr"``).
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SklearnConvergenceWarning)
        model.fit(X, y, sample_weight=sample_weight)
    for w in caught:
        if issubclass(w.category, SklearnConvergenceWarning):
            warnings.warn(message(), ConvergenceWarning, stacklevel=3)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return model


def max_abs(K) -> float:
    """``max |K_ij|`` without an ``n x n`` temporary (``np.abs(K)`` doubles the memory)."""
    return max(float(K.max()), -float(K.min()))


def svc_iteration_limit(n: int) -> int:
    """Iteration limit of libsvm's SMO behind ``svc_dual``: ``max(10^6, 100 n)``.

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


def svc_dual(K: np.ndarray, y: np.ndarray, C, tol: float = 1e-4) -> np.ndarray:
    """Dual variables ``a`` of the plain SVM (:class:`sklearn.svm.SVC`, precomputed ``K`` or a
    :class:`FeatureKernel`, whose kernel libsvm then computes from the features).

    ``C`` is a scalar or a vector of per-sample bounds: then libsvm is fitted with ``C0 = max
    C`` and ``sample_weight = C / C0`` (its box of sample ``i`` is ``C0 sample_weight_i =
    C_i``), and the dual returned lies in ``0 <= a_i <= C_i``.

    The limit ``F = 11'`` of DANK (``eta -> inf``, ``tau = 0``): the paper's ``eta = ||a||^2``
    and the warm start of ``method="auto"``. ``O(SVC)`` time, no copy of ``K``.

    libsvm runs at most :func:`svc_iteration_limit` ``(n)`` iterations. When it stops there
    (ill-conditioned ``C max|K|``) the approximate dual is returned, clipped to ``[0, C]``,
    with a :class:`dank_fast.ConvergenceWarning`: it is still a usable warm start (the
    solvers repair it onto ``A`` and certify their own result), where without a limit the fit
    could run for minutes.

    ``tol`` is libsvm's stopping tolerance; its default 1e-4 is the one the warm start of
    ``method="auto"`` uses (eta is the caller's there, so the SVC only starts Newton): a looser
    fit saves part of the SVC fit and costs Newton steps from a start further from the solution.
    """
    limit = svc_iteration_limit(y.size)
    C0, sw = _as_weights(C)
    if isinstance(K, FeatureKernel):  # libsvm computes the kernel from the features
        svc = SVC(C=C0, tol=tol, max_iter=limit, cache_size=500, **K.svc_params())
        fit_limited(svc, K.X, y, lambda: _svc_limit_message(limit, "kernel from features"),
                    sample_weight=sw)
        return _dual_of(svc, y.size, C)
    a = _precomputed_dual(K, y, C, tol, limit)
    return _svc_precomputed_dual(K, y, C, tol, limit) if a is None else a


def _dual_of(svc: SVC, n: int, C) -> np.ndarray:
    """The dual ``a`` (in ``[0, C]``, ``C`` a scalar or per-sample) of a fitted binary
    :class:`~sklearn.svm.SVC`."""
    a = np.zeros(n)
    a[svc.support_] = np.abs(svc.dual_coef_.ravel())
    return np.minimum(a, C)


def _svc_precomputed_dual(K: np.ndarray, y: np.ndarray, C, tol: float,
                          limit: int) -> np.ndarray:
    """``svc_dual`` on a precomputed ``K`` by the public ``SVC.fit``: the fallback of
    :func:`_precomputed_dual` when scikit-learn's private binding is missing or different."""
    C0, sw = _as_weights(C)
    svc = SVC(kernel="precomputed", C=C0, tol=tol, max_iter=limit)
    fit_limited(svc, K, y,
                lambda: _svc_limit_message(limit, f"C * max|K| = {C0 * max_abs(K):.3g}"),
                sample_weight=sw)
    return _dual_of(svc, y.size, C)


def _svc_limit_message(limit: int, scale: str) -> str:
    return (f"the plain SVM (libsvm) of the warm start stopped at its iteration limit ({limit}; "
            f"ill-conditioned: {scale}); its approximate dual is used as the warm start (and for "
            "eta='svm'), and the DANK solution is still certified")


def _precomputed_dual(K: np.ndarray, y: np.ndarray, C, tol: float, limit: int,
                      binding=_sk_libsvm) -> np.ndarray | None:
    """``svc_dual`` on a precomputed ``K`` by the libsvm call behind ``SVC.fit``, with the
    arguments ``SVC(kernel="precomputed", C=C0, tol=tol, max_iter=limit).fit(K, y,
    sample_weight=sw)`` passes (labels encoded ``0, 1`` as ``np.unique`` orders them; ``(C0,
    sw)`` of :func:`_as_weights`, no weights for a scalar ``C``): the same dual, bit for
    bit (``tests/test_libsvm.py``), without the estimator's checks of data that the callers
    validated (0.84 -> 0.05 ms for 47 points: at the UCI sizes the checks cost more than the
    solve). None when this scikit-learn's binding does not take these arguments: the caller
    then fits ``SVC`` (:func:`_svc_precomputed_dual`). ``binding`` is scikit-learn's module
    ``sklearn.svm._libsvm`` (private), None when this scikit-learn has none.
    """
    labels = (y > 0).astype(np.float64)  # SVC.fit: np.unique(y, return_inverse=True)
    if binding is None or labels.min() == labels.max():
        return None  # (one class: libsvm returns zeros where SVC.fit raises; SVC says why)
    Kc = np.ascontiguousarray(K, dtype=np.float64)
    C0, sw = _as_weights(C)
    sw = np.empty(0) if sw is None else np.ascontiguousarray(sw)
    try:
        binding.set_verbosity_wrap(0)  # libsvm's global switch (SVC.fit sets it each time)
        out = binding.fit(
            Kc, labels, svm_type=0, sample_weight=sw, class_weight=np.empty(0),
            kernel="precomputed", C=C0, nu=0.5, probability=0, degree=3, shrinking=1,
            tol=float(tol), cache_size=200.0, coef0=0.0, gamma=1.0, epsilon=0.1,
            max_iter=int(limit), random_seed=0)
        support, dual_coef, status = out[0], out[3], out[7]
    except (TypeError, ValueError, AttributeError, IndexError):  # another binding's signature
        return None
    if status == 1:  # libsvm stopped at max_iter (where SVC.fit warns)
        warnings.warn(_svc_limit_message(limit, f"C * max|K| = {C0 * max_abs(K):.3g}"),
                      ConvergenceWarning, stacklevel=3)
    a = np.zeros(y.size)
    a[support] = np.abs(np.asarray(dual_coef).ravel())
    if not np.all(np.isfinite(a)):
        raise ValueError("The dual coefficients or intercepts are not finite. The input data "
                         "may contain large values and need to be preprocessed.")
    return np.minimum(a, C)


def svr_iteration_limit(n: int) -> int:
    """Iteration limit of the plain SVR behind ``eta="svr"``: ``max(10^6, 100 n^2)``.

    libsvm's SMO needs a number of iterations that grows with the conditioning
    ``C max|K|``, not only with ``n``: measured 2.2e7 iterations (4 s) for 7 points with a
    linear kernel of scale 4.7e6 at ``C = 1``, 7.4e7 (16 s) at ``C = 1e4``. Without a limit
    such a fit is a hang; the limit keeps it to a fraction of a second for small ``n`` and is
    far above what well-conditioned problems need.
    """
    return max(10**6, 100 * n * n)


def svr_dual(K: np.ndarray, y: np.ndarray, C, epsilon: float, *, for_eta: bool) -> np.ndarray:
    """``d = ah - ac`` of the plain epsilon-SVR (precomputed ``K``, libsvm, ``tol = 1e-4``),
    clipped to ``[-C, C]``: the warm start of :func:`dank_fast.solve_svr`'s ``method="auto"``
    and of :class:`dank_fast.DANKRegressor` and, ``for_eta``, the paper's ``eta = ||d||^2`` of
    ``eta="svr"``. ``O(SVR)`` time.

    ``C`` a scalar or per-sample bounds (fitted as ``C0 = max C``, ``sample_weight = C / C0``).

    When libsvm stops at :func:`svr_iteration_limit` the dual is approximate: it is still a
    valid warm start (the DANK solve is certified from any start) and still sets ``eta``, so a
    :class:`dank_fast.ConvergenceWarning` says so instead of the fit running for minutes.
    """
    limit = svr_iteration_limit(K.shape[0])
    C0, sw = _as_weights(C)
    if for_eta:
        use, then, remedy = ("behind eta='svr'", "eta is computed from its approximate dual and "
                             "the DANK solve starts from it", "a numeric eta")
    else:
        use, then, remedy = ("of the warm start", "the DANK solve starts from its approximate "
                             "dual", "another start (alpha0; DANKRegressor's warm_start_svr=False)")
    svr = SVR(kernel="precomputed", C=C0, epsilon=epsilon, tol=1e-4, max_iter=limit)
    fit_limited(svr, K, y, lambda: (
        f"the plain SVR {use} stopped at its iteration limit ({limit}; the problem is "
        f"ill-conditioned: C * max|K| = {C0 * max_abs(K):.3g}); {then} (still certified). "
        f"Pass {remedy}, or rescale the features, to avoid this."), sample_weight=sw)
    d = np.zeros(y.size)
    d[svr.support_] = svr.dual_coef_.ravel()
    return np.clip(d, -np.asarray(C), np.asarray(C))
