"""What the fuzz tests found, as deterministic tests.

* ``test_known_bug_is_fixed[...]``: one per entry of ``_fuzz_known.KNOWN_BUGS`` (bugs in files
  the fuzz work does not own), ``xfail(strict=True)``: each flips to XPASS, failing the run,
  when its bug is fixed; then delete the entry (the fuzz tests re-check those inputs anyway).
* The other tests pin the validation fixes made with the fuzz tests (each failed before).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _fuzz_known import KNOWN_BUGS

from dank_fast import (
    ConvergenceWarning,
    DANKRegressor,
    FeatureKernel,
    compute_kernel,
    solve_decomposed,
)
from dank_fast._validation import check_cluster_labels
from dank_fast.regressor import svr_iteration_limit


@pytest.mark.parametrize(
    "key",
    [pytest.param(k, marks=pytest.mark.xfail(strict=True, reason=f"{b.where}: {b.summary}"))
     for k, b in KNOWN_BUGS.items()],
)
def test_known_bug_is_fixed(key):
    assert not KNOWN_BUGS[key].reproduce(), KNOWN_BUGS[key].summary


# --------------------------------------------------------------------------- FeatureKernel
def test_feature_kernel_accepts_boolean_features_like_compute_kernel():
    X = np.array([[True, False], [False, False], [True, True]])
    fk = FeatureKernel(X, sigma=1.0)  # was: TypeError "got booleans"
    np.testing.assert_array_equal(fk.dense(), compute_kernel(X, sigma=1.0))


def test_feature_kernel_refuses_features_without_columns():
    with pytest.raises(ValueError, match=r"X has no columns"):  # was: accepted
        FeatureKernel(np.zeros((3, 0)))


@pytest.mark.parametrize("coef0, exc, match", [
    ("1", TypeError, "coef0 must be a real number"),  # was: ValueError "coef0 = '1' < 0"
    (True, TypeError, "coef0 must be a real number"),
    (float("nan"), ValueError, "coef0 must be a finite number"),
    (-1.0, ValueError, "coef0 = -1.0 < 0"),
])
def test_feature_kernel_coef0_errors_say_what_is_wrong(coef0, exc, match):
    with pytest.raises(exc, match=match):
        FeatureKernel(np.eye(2), kernel="poly", coef0=coef0)


@pytest.mark.parametrize("Z, match", [
    (np.array([[np.nan, 0.0]]), "Z contains NaN"),  # was: "the rbf kernel overflowed"
    (np.ones((2, 3)), "Z has 3 features but X has 2"),
    (np.ones(2), "Z must be 2-dimensional"),
    (np.ones((1, 2)) + 0j, "Z must be a real numeric array"),
])
def test_feature_kernel_cross_validates_Z(Z, match):
    fk = FeatureKernel(np.eye(2), sigma=1.0)
    with pytest.raises((ValueError, TypeError), match=match):
        fk.cross(Z)


# --------------------------------------------------------------------------- compute_kernel
@pytest.mark.parametrize("degree", [10**400, 2**63, 1e20])
def test_unrepresentable_degree_is_a_named_value_error(degree):
    with pytest.raises(ValueError, match="degree"):  # was: OverflowError from numpy
        compute_kernel(np.eye(2) * 0.1, kernel="poly", degree=degree)


def test_largest_int64_degree_is_still_computed():
    K = compute_kernel(np.zeros((2, 1)), kernel="poly", degree=2**63 - 1, coef0=1.0)
    np.testing.assert_array_equal(K, np.ones((2, 2)))


@pytest.mark.parametrize("X, Z, name", [
    (np.zeros((0, 2)), None, "X"), (np.zeros((2, 0)), None, "X"),
    (np.ones((2, 2)), np.zeros((0, 2)), "Z"),
])
def test_empty_features_are_named(X, Z, name):
    # was: scikit-learn's "Found array with 0 sample(s) ... check_pairwise_arrays"
    with pytest.raises(ValueError, match=rf"^{name} must have at least one row and one column"):
        compute_kernel(X, Z)


# --------------------------------------------------------------------------- cluster labels
@pytest.mark.parametrize("labels", ["abc", b"abc", {0, 1, 2}, {0: 1, 1: 1, 2: 1},
                                    frozenset({0, 1, 2})])
def test_cluster_labels_refuse_strings_sets_and_mappings(labels):
    # was: "abc" silently became three clusters 'a', 'b', 'c'; a set its arbitrary order
    with pytest.raises(TypeError, match="labels must be a 1-D array of length 3"):
        check_cluster_labels(labels, 3)
    with pytest.raises(TypeError, match="labels"):
        solve_decomposed(np.eye(3), np.array([1.0, -1.0, 1.0]), C=1.0, eta=1.0, labels=labels)


def test_cluster_labels_still_accept_sequences_of_strings():
    out = check_cluster_labels(["a", "b", "a"], 3)
    assert out.tolist() == ["a", "b", "a"]
    out = check_cluster_labels(iter([1, 2, 1]), 3)
    assert out.tolist() == [1, 2, 1]


# --------------------------------------------------------------------------- DANKRegressor
def test_regressor_plain_svr_is_iteration_bounded():
    """7 points, linear kernel of scale 4.7e6, C = 1e4: libsvm needed 7.4e7 iterations (16 s,
    the fit 22 s); now it stops at svr_iteration_limit(7) = 1e6, says so, and the DANK solve
    from its approximate dual is still certified."""
    x = np.array([310.71254466, 1860.75246417, -22.67144402, -309.10095833, -1413.24878229,
                  -513.01608223, 2178.7127426])
    y = np.sin(x / 500)
    assert svr_iteration_limit(7) == 10**6
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reg = DANKRegressor(kernel="linear", C=1e4).fit(x[:, None], y)
    msgs = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert any("iteration limit (1000000" in m and "eta='svr'" in m for m in msgs), msgs
    res = reg.results_[0]
    assert res.lower <= res.upper and np.isfinite(reg.eta_[0]) and reg.eta_[0] > 0
    assert np.all(np.isfinite(reg.predict(x[:, None])))


@pytest.mark.parametrize("K", [np.eye(3, dtype=bool), np.eye(3).astype(str)])
def test_regressor_refuses_boolean_and_string_precomputed_kernels(K):
    # was: validate_data cast them to float (True -> 1.0, "1.0" -> 1.0) and the fit went ahead
    with pytest.raises(TypeError, match=r"X \(the precomputed kernel\) must be a real numeric"):
        DANKRegressor(kernel="precomputed").fit(K, [0.0, 1.0, 2.0])
    reg = DANKRegressor(kernel="precomputed", eta=1.0).fit(np.eye(3), [0.0, 1.0, 2.0])
    assert reg.results_[0].lower <= reg.results_[0].upper
