"""Kernels computed from features (compute_kernel, FeatureKernel): the Gaussian kernel is
scikit-learn's, the polynomial kernel is refused where it is not PSD, overflow is reported as
such, and bad parameters or features are named.
"""

from __future__ import annotations

import numpy as np
import pytest
from _fuzz_inputs import bad_params, features, kernel_specs
from _fuzz_rule import VALUE, features_rule, kernel_rule, kernel_spec_rule
from _fuzz_run import call, fuzz
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

from dank_fast import DANKRegressor, FeatureKernel, compute_kernel
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
    """Poly degree 400 on 100 X: the kernel overflows, not 'Input X contains infinity' (X is
    finite)."""
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
# a fresh draw: K_12 = exp(-597), where the two triangles of scikit-learn's matrix differ by the
# rounding of |x_i|^2 + |x_j|^2 against |x_j|^2 + |x_i|^2, times 597, about 1e-13 relative
@example(n=3, m=1, d=1, log_gamma=3.0, scale=1.0, dup=False, seed=0)
def test_gaussian_kernel_is_scikit_learns(n, m, d, log_gamma, scale, dup, seed):
    """The direct Gaussian kernel (no input checks) has scikit-learn's rbf_kernel values, with
    Z = X (an exact unit diagonal; exactly symmetric: scikit-learn's upper triangle, mirrored,
    where scikit-learn's own lower triangle differs by the rounding of the distance times the
    exponent) and Z != X, duplicates, tiny and huge widths."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale
    Z = rng.normal(size=(m, d)) * scale
    if dup:
        X[n // 2:] = X[: n - n // 2]
    gamma = float(10.0 ** log_gamma) / scale**2
    K = compute_kernel(X, gamma=gamma)
    upper = np.triu(rbf_kernel(X, gamma=gamma))
    np.testing.assert_allclose(K, upper + np.triu(upper, 1).T, rtol=1e-13, atol=1e-300)
    assert np.all(np.diag(K) == 1.0)
    np.testing.assert_allclose(compute_kernel(X, Z, gamma=gamma), rbf_kernel(X, Z, gamma=gamma),
                               rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize(
    "X, kw, match",
    [
        (np.array([[0.0, np.nan], [1.0, 1.0]]), dict(sigma=1.0), "NaN"),
        (np.array([[0.0, np.inf], [1.0, 1.0]]), dict(sigma=1.0), "infinity"),
        (np.zeros((3, 2)), dict(sigma=0.0), "sigma must be a finite number > 0"),
        (np.zeros((3, 2)), dict(sigma=-1.0), "sigma must be a finite number > 0"),
        (np.zeros((3, 2)), dict(sigma=np.nan), "sigma must be a finite number > 0"),
        (np.zeros((3, 2)), dict(gamma=0.0), "gamma must be a finite number > 0"),
        (np.zeros((3, 2)), dict(sigma=1.0, gamma=1.0), "either sigma or gamma"),
        (np.zeros((3, 2)), dict(kernel="laplacian"), "kernel must be one of"),
        (np.zeros((3, 2)), dict(kernel="poly", degree=0), "degree must be a positive integer"),
        (np.zeros((3, 2)), dict(kernel="poly", degree=2.5), "degree must be a positive integer"),
    ],
)
def test_compute_kernel_bad_input(X, kw, match):
    with pytest.raises(ValueError, match=match):
        compute_kernel(X, **kw)


def test_compute_kernel_feature_mismatch():
    with pytest.raises(ValueError, match="features"):
        compute_kernel(np.zeros((3, 2)), np.zeros((4, 3)), sigma=1.0)


def test_compute_kernel_one_dimensional_X():
    with pytest.raises(ValueError, match="2D|2-dimensional"):
        compute_kernel(np.array([1.0, 2.0, 3.0]), sigma=1.0)


def test_compute_kernel_matches_paper_gaussian():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5, 3))
    sigma = 0.7
    sq = np.sum((X[:, None] - X[None]) ** 2, axis=-1)
    np.testing.assert_allclose(
        compute_kernel(X, sigma=sigma), np.exp(-sq / (2 * sigma**2)), rtol=1e-12
    )


# FeatureKernel accepts the boolean features that compute_kernel accepts
def test_feature_kernel_accepts_boolean_features_like_compute_kernel():
    X = np.array([[True, False], [False, False], [True, True]])
    fk = FeatureKernel(X, sigma=1.0)  # no TypeError "got booleans"
    np.testing.assert_array_equal(fk.dense(), compute_kernel(X, sigma=1.0))


# features without columns are refused by name, before scikit-learn
def test_feature_kernel_refuses_features_without_columns():
    with pytest.raises(ValueError, match=r"X has no columns"):  # not accepted
        FeatureKernel(np.zeros((3, 0)))


# a bad coef0 of FeatureKernel is named
@pytest.mark.parametrize("coef0, exc, match", [
    ("1", TypeError, "coef0 must be a real number"),  # not ValueError "coef0 = '1' < 0"
    (True, TypeError, "coef0 must be a real number"),
    (float("nan"), ValueError, "coef0 must be a finite number"),
    (-1.0, ValueError, "coef0 = -1.0 < 0"),
])
def test_feature_kernel_coef0_errors_say_what_is_wrong(coef0, exc, match):
    with pytest.raises(exc, match=match):
        FeatureKernel(np.eye(2), kernel="poly", coef0=coef0)


# FeatureKernel blocks refuse a Z of the wrong width
@pytest.mark.parametrize("Z, match", [
    (np.array([[np.nan, 0.0]]), "Z contains NaN"),  # not "the rbf kernel overflowed"
    (np.ones((2, 3)), "Z has 3 features but X has 2"),
    (np.ones(2), "Z must be 2-dimensional"),
    (np.ones((1, 2)) + 0j, "Z must be a real numeric array"),
])
def test_feature_kernel_cross_validates_Z(Z, match):
    fk = FeatureKernel(np.eye(2), sigma=1.0)
    with pytest.raises((ValueError, TypeError), match=match):
        fk.cross(Z)


# a degree beyond int64 is a named ValueError, not numpy's OverflowError
@pytest.mark.parametrize("degree", [10**400, 2**63, 1e20])
def test_unrepresentable_degree_is_a_named_value_error(degree):
    with pytest.raises(ValueError, match="degree"):  # not OverflowError from numpy
        compute_kernel(np.eye(2) * 0.1, kernel="poly", degree=degree)


# the bound on the degree does not refuse the largest int64
def test_largest_int64_degree_is_still_computed():
    K = compute_kernel(np.zeros((2, 1)), kernel="poly", degree=2**63 - 1, coef0=1.0)
    np.testing.assert_array_equal(K, np.ones((2, 2)))


# empty features are refused by name, before scikit-learn
@pytest.mark.parametrize("X, Z, name", [
    (np.zeros((0, 2)), None, "X"), (np.zeros((2, 0)), None, "X"),
    (np.ones((2, 2)), np.zeros((0, 2)), "Z"),
])
def test_empty_features_are_named(X, Z, name):
    # not scikit-learn's "Found array with 0 sample(s) ... check_pairwise_arrays"
    with pytest.raises(ValueError, match=rf"^{name} must have at least one row and one column"):
        compute_kernel(X, Z)


# fuzz: compute_kernel on malformed and extreme features


@fuzz(80)
@given(data=st.data())
def test_fuzz_compute_kernel(data):
    """compute_kernel(X, Z, kernel, sigma, gamma, degree, coef0)."""
    bad = data.draw(bad_params("X", "Z", "kernel"))
    X = data.draw(features(good="X" not in bad), label="X")
    kw = data.draw(kernel_specs(good="kernel" not in bad, precomputed=True), label="kernel")
    use_Z = data.draw(st.booleans()) or "Z" in bad
    Z = None
    if use_Z:
        Z = data.draw(features(good="Z" not in bad), label="Z")
    v = features_rule(X)
    if Z is not None:
        vz = features_rule(Z, "Z")
        if vz.valid and v.valid and kw.get("kernel") != "precomputed" and (
                np.shape(np.asarray(Z))[1] != np.shape(np.asarray(X))[1]):
            vz.add("Z", VALUE)
        vz.violations += [("alpha_check", t) for _, t in vz.violations]
        vz.maybe += [("alpha_check", t) for _, t in vz.maybe]
        v.merge(vz)
    v.merge(kernel_spec_rule(kw, precomputed_ok=True))
    if v.valid and kw.get("kernel") == "poly":  # a high degree may overflow: named kernel error
        v.unsure("kernel")
    if v.valid and kw.get("kernel") == "precomputed":
        # the identity on X (resp. Z): nothing to compute, any real 2-D array passes through
        pass
    K, _ = call("compute_kernel", v, lambda: compute_kernel(X, Z, **kw))
    if K is None:
        return
    X = np.asarray(X)
    m = X.shape[0] if Z is None else np.asarray(Z).shape[0]
    if kw.get("kernel") == "precomputed":
        return
    assert K.shape == (X.shape[0], m) and K.dtype == np.float64
    assert np.all(np.isfinite(K))
    if Z is None:
        vK, _ = kernel_rule(K)
        assert vK.valid or vK.ambiguous, f"compute_kernel returned an invalid kernel: {vK}"
