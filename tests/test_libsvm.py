"""The plain SVM behind ``eta="svm"`` and the warm start (:func:`dank_fast._libsvm.svc_dual`).

On a precomputed kernel it calls scikit-learn's libsvm binding directly (the checks of
``SVC.fit`` cost more than the solve at the UCI sizes). ``eta = ||a_SVM||^2`` defines the
problem that is solved, so that route must give ``SVC``'s dual bit for bit, warn where ``SVC``
would, and fall back to ``SVC`` when the binding does not take its arguments. The binding,
``sklearn.svm._libsvm``, is private: the fallback (:func:`_svc_precomputed_dual`, the public
``SVC.fit``) is checked against it on the same inputs.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.svm import SVC

from dank_fast import ConvergenceWarning, FeatureKernel, compute_kernel, solve_svm
from dank_fast._libsvm import (
    _precomputed_dual,
    _sk_libsvm,
    _svc_precomputed_dual,
    svc_dual,
    svc_iteration_limit,
)


def _svc_reference(K, y, C, tol=1e-4):
    svc = SVC(kernel="precomputed", C=C, tol=tol, max_iter=svc_iteration_limit(y.size)).fit(K, y)
    a = np.zeros(y.size)
    a[svc.support_] = np.abs(svc.dual_coef_.ravel())
    return np.minimum(a, C)


def _instance(seed: int):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 90))
    X = rng.normal(size=(n, 3)) * rng.uniform(0.1, 3.0)
    if seed % 3 == 0:  # duplicate points
        X[n // 2:] = X[: n - n // 2]
    y = np.where(rng.random(n) < rng.uniform(0.1, 0.9), 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    K = compute_kernel(X, sigma=float(2.0 ** rng.integers(-3, 4)))
    return K, y, float(2.0 ** rng.integers(-5, 11))


@pytest.mark.parametrize("seed", range(40))
def test_direct_binding_gives_svc_dual_bit_for_bit(seed):
    K, y, C = _instance(seed)
    a = svc_dual(K, y, C)
    np.testing.assert_array_equal(a, _svc_reference(K, y, C))
    assert abs(float(y @ a)) <= 1e-8 * max(1.0, C * y.size) and 0 <= a.min() and a.max() <= C


def test_labels_in_any_order_and_float32_kernel():
    K, y, C = _instance(5)
    np.testing.assert_array_equal(svc_dual(K.astype(np.float32), y, C),
                                  _svc_reference(K.astype(np.float32).astype(np.float64), y, C))
    # libsvm's iterates depend on which class is encoded 0 (flipping y changes the dual by up
    # to 4e-5 relative here): the encoding must be SVC's for either sign convention
    np.testing.assert_array_equal(svc_dual(K, -y, C), _svc_reference(K, -y, C))


@pytest.mark.parametrize("dual", [_precomputed_dual, _svc_precomputed_dual])
def test_both_routes_warn_at_the_iteration_limit(dual):
    K, y, C = _instance(7)
    with pytest.warns(ConvergenceWarning, match=r"iteration limit \(2;"):
        a = dual(K, y, 1e4, 1e-4, 2)
    assert np.all((a >= 0) & (a <= 1e4))


def test_the_warning_is_scikit_learns_convergence_warning():
    """A filter on scikit-learn's ConvergenceWarning catches dank_fast's (a subclass)."""
    K, y, C = _instance(7)
    assert issubclass(ConvergenceWarning, SklearnConvergenceWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SklearnConvergenceWarning)
        with pytest.raises(ConvergenceWarning, match="iteration limit"):
            _precomputed_dual(K, y, 1e4, 1e-4, 2)


def test_well_conditioned_fit_does_not_warn():
    K, y, C = _instance(8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        svc_dual(K, y, 1.0)


class _OtherBinding:
    """A libsvm binding whose ``fit`` takes other arguments (a future scikit-learn)."""

    calls = 0

    @staticmethod
    def set_verbosity_wrap(level):
        pass

    @classmethod
    def fit(cls, *args, **kwargs):
        cls.calls += 1
        raise TypeError("fit() got an unexpected keyword argument 'class_weight'")


@pytest.mark.parametrize("seed", range(0, 40, 4))
def test_the_public_fallback_gives_the_binding_s_dual(seed):
    """scikit-learn's private binding and the public SVC.fit that replaces it: the same dual."""
    K, y, C = _instance(seed)
    limit = svc_iteration_limit(y.size)
    a = _precomputed_dual(K, y, C, 1e-4, limit)
    assert _sk_libsvm is None or a is not None
    np.testing.assert_array_equal(_svc_precomputed_dual(K, y, C, 1e-4, limit),
                                  _svc_reference(K, y, C) if a is None else a)


@pytest.mark.parametrize("binding", [None, _OtherBinding])
def test_a_missing_or_different_binding_defers_to_the_fallback(binding):
    K, y, C = _instance(11)
    assert _precomputed_dual(K, y, C, 1e-4, svc_iteration_limit(y.size), binding) is None
    if binding is not None:
        assert binding.calls >= 1


def test_direct_binding_is_silent_in_a_fresh_process():
    """libsvm prints its progress unless its global verbosity is switched off, which SVC.fit
    does at every call: a process that never fitted an SVC must stay silent too."""
    code = ("import numpy as np\n"
            "from dank_fast._libsvm import svc_dual\n"
            "rng = np.random.default_rng(0)\n"
            "X = rng.normal(size=(30, 2)); y = np.where(X[:, 0] > 0, 1.0, -1.0)\n"
            "K = np.exp(-np.sum((X[:, None] - X[None]) ** 2, axis=-1))\n"
            "a = svc_dual(K, y, 1.0)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout == "" and "optimization finished" not in out.stderr


def test_one_class_is_refused_as_svc_refuses_it():
    """libsvm itself returns a zero dual for one class; svc_dual must not: SVC.fit's error."""
    K, y, C = _instance(3)
    with pytest.raises(ValueError, match="number of classes"):
        svc_dual(K, np.ones_like(y), C)


def test_svc_iteration_limit_scales_with_n():
    assert svc_iteration_limit(7) == 10**6
    assert svc_iteration_limit(10**5) == 10**7


_X7 = np.array([310.71254466, 1860.75246417, -22.67144402, -309.10095833, -1413.24878229,
                -513.01608223, 2178.7127426])
_Y7 = np.array([1.0, -1.0, -1.0, 1.0, 1.0, 1.0, -1.0])


# libsvm runs under an iteration limit
@pytest.mark.parametrize("C", [1e4, 1e6])
def test_auto_is_certified_when_the_plain_svm_hits_its_iteration_limit(C):
    """7 points, linear kernel of scale 4.7e6: without a limit libsvm runs for minutes at C = 1e4;
    it stops at svc_iteration_limit(7) = 1e6 iterations (well under a second) with a
    ConvergenceWarning, and Newton from its repaired approximate dual is certified."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = solve_svm(np.outer(_X7, _X7), _Y7, C=C, eta=1.0, tau=0.01, tol=1e-6)
    msgs = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert any("iteration limit (1000000" in m for m in msgs), msgs
    assert res.status == "converged" and res.extra["warm_start"] == "svc"
    assert res.lower <= res.upper and res.rel_gap <= 1e-6


def test_well_conditioned_plain_svm_gives_no_warning():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    K = np.exp(-0.5 * np.sum((X[:, None] - X[None]) ** 2, axis=-1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = svc_dual(K, y, 1.0)
    assert abs(float(y @ a)) <= 1e-6 and a.min() >= 0 and a.max() <= 1.0


# the warm start on features has an iteration limit
def test_feature_svc_warm_start_is_iteration_limited():
    """The SVC warm start on features (working-set route, DANKClassifier above 1 GiB of kernel)
    goes through svc_dual's iteration limit: libsvm stops and warns instead of running on (the
    7 points of scale 4.7e6 with a linear kernel computed by libsvm from the features)."""
    kern = FeatureKernel(_X7[:, None], kernel="linear")
    with pytest.warns(ConvergenceWarning, match=r"iteration limit \(1000000"):
        a = svc_dual(kern, _Y7, 1e4)
    assert a.shape == (7,) and np.all((a >= 0) & (a <= 1e4))
    with pytest.warns(ConvergenceWarning, match="iteration limit"):
        r = solve_svm(kern, _Y7, C=1e4, eta=1.0, tol=1e-6)
    assert r.status == "converged" and r.lower <= r.upper
