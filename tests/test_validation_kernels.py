"""Kernels computed from features: PSD-ness of the polynomial kernel and overflow messages."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics.pairwise import polynomial_kernel

from dank_fast import DANKRegressor, compute_kernel
from dank_fast._kernel_validation import check_kernel_matrix
from dank_fast.kernels import kernel_params, sigma_to_gamma


@pytest.mark.parametrize("coef0", [-5.0, -1e-12, -np.finfo(float).tiny])
def test_poly_with_negative_coef0_is_refused(coef0):
    with pytest.raises(ValueError, match="coef0 .* < 0.*not positive semi-definite"):
        kernel_params("poly", coef0=coef0, n_features=2)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        compute_kernel(np.eye(3), kernel="poly", coef0=coef0)


@pytest.mark.parametrize("degree", [1, 2, 3, 4])
def test_the_counterexample_in_the_message_is_one(degree):
    """Points 0 and x with gamma |x|^2 = -coef0 give an indefinite Gram matrix."""
    coef0, gamma = -5.0, 1.0
    X = np.array([[0.0, 0.0], [np.sqrt(5.0), 0.0]])
    K = polynomial_kernel(X, gamma=gamma, coef0=coef0, degree=degree)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        check_kernel_matrix(K)


def test_estimator_with_negative_coef0_says_why():
    X = np.random.default_rng(0).normal(size=(20, 2))
    with pytest.raises(ValueError, match="not positive semi-definite"):
        DANKRegressor(kernel="poly", coef0=-5).fit(X, X[:, 0])


@pytest.mark.parametrize(
    "kw, exc, match",
    [
        (dict(degree=2.5), ValueError, "degree must be a positive integer"),
        (dict(degree=0), ValueError, "degree must be a positive integer"),
        (dict(degree=float("nan")), ValueError, "degree must be a positive integer"),
        (dict(degree=True), TypeError, "degree must be a positive integer"),
        (dict(degree="3"), TypeError, "degree must be a positive integer"),
        (dict(gamma=0.0), ValueError, "gamma must be a finite number > 0"),
        (dict(gamma=-1.0), ValueError, "gamma must be a finite number > 0"),
        (dict(coef0=np.inf), ValueError, "coef0 must be a finite number"),
        (dict(coef0=None), TypeError, "coef0 must be a real number"),
        (dict(sigma=1.0), ValueError, "polynomial kernel takes gamma"),
    ],
)
def test_poly_parameters(kw, exc, match):
    with pytest.raises(exc, match=match):
        kernel_params("poly", n_features=2, **kw)


def test_integral_float_degree_is_accepted():
    assert kernel_params("poly", degree=2.0, n_features=2)["degree"] == 2


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    degree=st.integers(1, 5),
    coef0=st.floats(0.0, 5.0),
    gamma=st.floats(0.01, 2.0),
)
def test_accepted_poly_kernels_are_psd(seed, degree, coef0, gamma):
    X = np.random.default_rng(seed).normal(size=(15, 3))
    K = compute_kernel(X, kernel="poly", degree=degree, coef0=coef0, gamma=gamma)
    check_kernel_matrix(K)  # the full written rule, PSD test included


@pytest.mark.parametrize(
    "X, kw, name",
    [
        (100.0 * np.random.default_rng(0).normal(size=(10, 2)), dict(kernel="poly", degree=400),
         "'poly' kernel overflowed.*degree=400"),
        (np.full((3, 2), 1e200), dict(kernel="linear"), "'linear' kernel overflowed"),
    ],
)
def test_kernel_overflow_is_reported_as_such(X, kw, name):
    assert np.all(np.isfinite(X))
    with pytest.raises(ValueError, match=name):
        compute_kernel(X, **kw)


def test_estimator_kernel_overflow_is_not_blamed_on_X():
    """Issue: poly degree 400 on 100 X said 'Input X contains infinity' (X is finite)."""
    X = 100.0 * np.random.default_rng(1).normal(size=(20, 2))
    with pytest.raises(ValueError, match="kernel overflowed") as info:
        DANKRegressor(kernel="poly", degree=400).fit(X, X[:, 0])
    assert "Input X" not in str(info.value)


@pytest.mark.parametrize("sigma", [1e-200, 1e200])
def test_extreme_sigma_is_a_value_error(sigma):
    with pytest.raises(ValueError, match="sigma"):
        sigma_to_gamma(sigma)


@pytest.mark.parametrize("sigma, exc", [(True, TypeError), ("1", TypeError), (0.0, ValueError)])
def test_bad_sigma(sigma, exc):
    with pytest.raises(exc, match="sigma"):
        compute_kernel(np.zeros((2, 1)), sigma=sigma)


def test_boolean_features_are_accepted_complex_are_not():
    Xb = np.array([[True, False], [False, True]])
    np.testing.assert_array_equal(compute_kernel(Xb, kernel="linear"), np.eye(2))
    with pytest.raises(TypeError, match="X must be a real numeric array.*complex"):
        compute_kernel(Xb + 1j, kernel="linear")


def test_feature_kernel_blocks_refuse_overflow_like_compute_kernel():
    """FeatureKernel blocks and compute_kernel share one evaluation (kernels.evaluate_kernel):
    the same overflow is refused with the same message naming the kernel and its degree."""
    from dank_fast import FeatureKernel, compute_kernel

    X = np.full((3, 2), 100.0)
    with pytest.raises(ValueError, match="'poly' kernel overflowed.*degree=400") as a:
        compute_kernel(X, kernel="poly", degree=400)
    with pytest.raises(ValueError, match="'poly' kernel overflowed.*degree=400") as b:
        FeatureKernel(X, kernel="poly", degree=400).block(np.arange(3), np.arange(3))
    assert str(a.value) == str(b.value)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 40), m=st.integers(1, 30), d=st.integers(1, 6),
       log_gamma=st.floats(-6, 6), scale=st.sampled_from([1e-6, 1.0, 1e3]),
       dup=st.booleans(), seed=st.integers(0, 2**16))
def test_gaussian_kernel_is_scikit_learns(n, m, d, log_gamma, scale, dup, seed):
    """The direct Gaussian kernel (no input checks) has scikit-learn's rbf_kernel values, with
    Z = X (an exact unit diagonal; symmetric only to rounding, as scikit-learn's) and Z != X,
    duplicates, tiny and huge widths."""
    from sklearn.metrics.pairwise import rbf_kernel

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale
    Z = rng.normal(size=(m, d)) * scale
    if dup:
        X[n // 2:] = X[: n - n // 2]
    gamma = float(10.0 ** log_gamma) / scale**2
    K = compute_kernel(X, gamma=gamma)
    np.testing.assert_allclose(K, rbf_kernel(X, gamma=gamma), rtol=1e-13, atol=1e-300)
    assert np.all(np.diag(K) == 1.0)
    np.testing.assert_allclose(compute_kernel(X, Z, gamma=gamma), rbf_kernel(X, Z, gamma=gamma),
                               rtol=1e-13, atol=1e-300)
