"""Regression tests for the bugs the fuzz and mutation work found (tests/_fuzz_known.py and the
former xfail tests of tests/test_mutation_*.py), where the former xfail test does not already
check the fix strictly. Each test failed before its fix."""

from __future__ import annotations

import numpy as np
import pytest

from dank_ref import certificate as ref_cert
from dank_ref._validation import check_partition


# --------------------------------------------------------------------------- dank_ref labels
def test_ref_labels_that_differ_only_in_type_are_different_clusters():
    # np.asarray([1, "1"]) is the strings "1", "1": the two clusters were merged
    Kb = ref_cert.block_kernel(np.ones((3, 3)), [1, "1", 1.0])
    np.testing.assert_array_equal(Kb, [[1, 0, 1], [0, 1, 0], [1, 0, 1]])


@pytest.mark.parametrize("labels, codes", [
    ([(0, "x"), (1, "x"), (0, "x")], [0, 1, 0]),  # was: "got shape (3, 2)"
    ([np.inf, 1.0, np.inf], [0, 1, 0]),  # was: "labels contain NaN or inf"
    (np.array([-np.inf, np.inf, -np.inf]), [0, 1, 0]),
    (["b", "a", "b"], [0, 1, 0]),
    (iter([3, 3, 2]), [0, 0, 1]),
])
def test_ref_partition_accepts_any_self_equal_labels(labels, codes):
    out = check_partition(labels, 3)
    np.testing.assert_array_equal(out, codes)


def test_ref_partition_agrees_with_dank_fast_on_which_samples_share_a_cluster():
    from dank_fast._validation import check_cluster_labels

    labels = [1, "1", 1.0, (0, "x"), np.inf, (0, "x"), "1"]
    fast = check_cluster_labels(labels, len(labels))
    same_fast = np.array([[a == b for b in fast] for a in fast])
    ref = check_partition(labels, len(labels))
    np.testing.assert_array_equal(ref[:, None] == ref[None, :], same_fast)


@pytest.mark.parametrize("labels, exc, match", [
    ([np.nan, 1.0], ValueError, "not equal to itself"),
    ([None, 1], ValueError, "None"),
    ("ab", TypeError, "labels must be a 1-D array"),
    ({0, 1}, TypeError, "labels must be a 1-D array"),
    ([[0], [1]], TypeError, "not hashable"),
    (np.zeros((2, 1)), ValueError, "got shape"),
    ([0, 1, 2], ValueError, "length 2"),
])
def test_ref_partition_refuses_unusable_labels(labels, exc, match):
    with pytest.raises(exc, match=match):
        check_partition(labels, 2)


# --------------------------------------------------------------------------- dank_ref scalars
@pytest.mark.parametrize("kw, match", [
    (dict(C=10**400), "C must be a finite number > 0"),
    (dict(eta=10**400), "eta must be a finite number > 0"),
    (dict(tau=10**400), "tau must be a finite number >= 0"),
    (dict(C=-10**400), "C must be a finite number > 0"),
    (dict(C=10**5000), "C must be a finite number > 0"),  # its repr alone raises ValueError
])
def test_ref_integers_beyond_the_float_range_are_named_value_errors(kw, match):
    args = dict(C=1.0, eta=1.0, tau=0.0)
    args.update(kw)
    with pytest.raises(ValueError, match=match):  # was: OverflowError
        ref_cert.svm_certificate(np.eye(2), np.array([1.0, -1.0]), np.array([0.5, 0.5]), **args)


# --------------------------------------------------------------------------- dank_fast PSD test
def test_huge_non_psd_kernel_is_refused_with_a_finite_threshold():
    from dank_fast._validation import check_kernel_matrix

    with pytest.raises(ValueError, match="not positive semi-definite"):  # was: OverflowError
        check_kernel_matrix(np.array([[1.7e308, 0.0], [0.0, -1.7e308]]))


# --------------------------------------------------------------------------- DANKClassifier
@pytest.mark.parametrize("K", [np.eye(3, dtype=bool), np.eye(3).astype(str),
                               np.eye(3).astype(bytes)])
def test_classifier_refuses_boolean_and_string_precomputed_kernels(K):
    from dank_fast import DANKClassifier

    # was: validate_data cast them to float (True -> 1.0, "1.0" -> 1.0) and the fit went ahead
    with pytest.raises(TypeError, match=r"X \(the precomputed kernel\) must be a real numeric"):
        DANKClassifier(kernel="precomputed").fit(K, [0, 1, 1])
    clf = DANKClassifier(kernel="precomputed", eta=1.0).fit(np.eye(3), [0, 1, 1])
    assert clf.results_[0].lower <= clf.results_[0].upper
