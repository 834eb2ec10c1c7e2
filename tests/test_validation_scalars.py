"""Scalars, arrays, labels, the representable range and feasibility (docs/validity.md).

Each clause of the written rule on both sides of its boundary: inclusive boundaries, errors
that name the parameter and what was wrong, dtypes of returned arrays; the representable range
is compared in exact rational arithmetic; cluster labels are cross-checked with dank_ref's.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dank_fast import solve_decomposed
from dank_fast._validation import (
    check_cluster_labels,
    check_feasible,
    check_finite_array,
    check_integer,
    check_labels_pm1,
    check_nonnegative,
    check_positive,
    check_representable,
    check_solver_options,
    check_targets,
    feasibility_violation,
)
from dank_ref.validation import check_partition


@pytest.mark.parametrize("v", [True, False, np.True_, "1", None, [1.0], np.array([1.0]), 1 + 0j])
def test_scalar_type_errors(v):
    with pytest.raises(TypeError, match="C must be a real number"):
        check_positive(v, "C")
    with pytest.raises(TypeError, match="tau must be a real number"):
        check_nonnegative(v, "tau")


@pytest.mark.parametrize("v", [np.float64(2.0), np.float32(2.0), np.int64(2), 2, 2.0,
                               Fraction(2, 1), np.longdouble(2.0)])
def test_numpy_and_python_scalars_accepted(v):
    assert check_positive(v, "C") == 2.0
    assert check_nonnegative(v, "tau") == 2.0


@pytest.mark.parametrize("v", [0.0, -1.0, np.nan, np.inf, -np.inf, 10**400])
def test_scalar_value_errors(v):
    with pytest.raises(ValueError, match="C must be a finite number > 0"):
        check_positive(v, "C")


def test_nonnegative_accepts_zero():
    assert check_nonnegative(0, "epsilon") == 0.0
    with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
        check_nonnegative(-1e-300, "epsilon")


@pytest.mark.parametrize("v, exc", [(True, TypeError), (2.0, TypeError), ("3", TypeError),
                                    (0, ValueError), (-1, ValueError)])
def test_integer_checks(v, exc):
    with pytest.raises(exc, match="max_iter"):
        check_integer(v, "max_iter")
    assert check_integer(np.int32(5), "max_iter") == 5


def test_representable_boundaries_are_exact():
    below = np.nextafter(1e-100, 0.0)
    above = np.nextafter(1e100, np.inf)
    # C s n at both ends (eta / (C^2 s) kept at 1)
    check_representable(1e-100, 1e-200, 1.0, 1)
    with pytest.raises(ValueError, match=r"C \* max\|K\| \* n"):
        check_representable(below, below * below, 1.0, 1)
    check_representable(1e100, 1e200, 1.0, 1)
    with pytest.raises(ValueError, match=r"C \* max\|K\| \* n"):
        check_representable(above, 1e200, 1.0, 1)
    # eta / (C^2 s) at both ends (C s n kept at 1)
    check_representable(1.0, 1e-100, 1.0, 1)
    check_representable(1.0, 1e100, 1.0, 1)
    with pytest.raises(ValueError, match=r"eta / \(C\^2 \* max\|K\|\)"):
        check_representable(1.0, below, 1.0, 1)
    with pytest.raises(ValueError, match=r"eta / \(C\^2 \* max\|K\|\)"):
        check_representable(1.0, above, 1.0, 1)


def test_representable_counts_n_and_kernel_scale():
    C = 5e-101  # C s n = 5e-101 n: outside for n = 1, inside for n = 4
    with pytest.raises(ValueError, match="n = 1"):
        check_representable(C, C * C, 1.0, 1)
    check_representable(C, C * C, 1.0, 4)
    check_representable(1.0, 1.0, 0.0, 5)  # K = 0: nothing to represent
    with pytest.raises(ValueError, match=r"max\|K\| = 1e\+300"):
        check_representable(1.0, 1.0, 1e300, 5)


def test_representable_message_names_everything():
    with pytest.raises(ValueError) as info:
        check_representable(1.0, 1e-300, 1.0, 40)
    msg = str(info.value)
    for part in ("C = 1", "eta = 1e-300", "max|K| = 1", "n = 40", "eta / (C^2 * max|K|) = 1e-300",
                 "representable range"):
        assert part in msg


@pytest.mark.parametrize(
    "y, exc, match",
    [
        (np.array([True, False]), TypeError, "y must be a real numeric array.*booleans"),
        (np.array(["a", "b"]), TypeError, "strings"),
        (np.array([1 + 0j, -1]), TypeError, "complex"),
        (np.array([0.0, 1.0]), ValueError, "only -1 and \\+1"),
        (np.array([1.0, np.nan]), ValueError, "NaN"),
        (np.ones((2, 1)), ValueError, "1-dimensional"),
    ],
)
def test_pm1_labels_bad(y, exc, match):
    with pytest.raises(exc, match=match):
        check_labels_pm1(y, 2)


def test_pm1_labels_classes():
    with pytest.raises(ValueError, match="only one class"):
        check_labels_pm1(np.ones(3), 3)
    np.testing.assert_array_equal(check_labels_pm1(np.ones(3), 3, require_both=False), 1.0)
    np.testing.assert_array_equal(check_labels_pm1(np.array([1, -1], dtype=np.int8)), [1, -1])
    with pytest.raises(ValueError, match="y has 2 entries but K has 3 rows"):
        check_labels_pm1([1, -1], 3)


@pytest.mark.parametrize("y, exc", [(np.array([1.0, np.inf]), ValueError),
                                    (np.array([True, False]), TypeError),
                                    (np.array([1j, 0]), TypeError)])
def test_targets(y, exc):
    with pytest.raises(exc, match="y "):
        check_targets(y, 2)


@pytest.mark.parametrize(
    "labels",
    [
        [0, 1, 1, 0],
        ["a", "b", "a", "c"],
        [(0, 1), (0, 1), (2, 3), "x"],  # tuples are one label each
        [1.5, np.inf, np.inf, -2.0],  # inf equals itself
        np.array([3, 3, 3, 3], dtype=np.uint8),
        [True, False, True, True],
    ],
)
def test_cluster_labels_accepted(labels):
    out = check_cluster_labels(labels, 4)
    assert out.shape == (4,)
    # the partition is the one the values define
    for i in range(4):
        for j in range(4):
            assert (out[i] == out[j]) == (labels[i] == labels[j])


@pytest.mark.parametrize(
    "labels, exc, match",
    [
        ([0.0, np.nan, 1.0, 1.0], ValueError, "NaN"),
        (np.array([0, None, 1, 1], dtype=object), ValueError, r"labels\[1\] is None"),
        ([0, float("nan"), "a", "b"], ValueError, "not equal to itself"),
        ([0, 1, 1], ValueError, "length 4"),
        (np.zeros((4, 2)), ValueError, "length 4"),
        ([0, [1], 1, 1], TypeError, "not hashable"),
    ],
)
def test_cluster_labels_rejected(labels, exc, match):
    with pytest.raises(exc, match=match):
        check_cluster_labels(labels, 4)


def test_feasibility_tolerance_scales_with_C():
    y = np.array([1.0, -1.0, 1.0, -1.0])
    for C in (1e-20, 1.0, 1e20):
        tol = 1e-9 * C * 2.0
        a = np.array([0.5, 0.5, 0.0, 0.0]) * C
        a_in = a + np.array([0.9 * tol, 0.0, 0.0, 0.0])
        a_out = a + np.array([1.1 * tol, 0.0, 0.0, 0.0])
        assert check_feasible(a_in, C, 4, eq=y) == pytest.approx(0.9 * tol, rel=1e-6)
        with pytest.raises(ValueError, match="not feasible"):
            check_feasible(a_out, C, 4, eq=y)
        with pytest.raises(ValueError, match="not feasible"):  # box, scaled by C
            check_feasible(np.array([0.0, 0.0, -1.1 * tol, -1.1 * tol]), C, 4, eq=y)
        # P3: box only
        check_feasible(np.array([C, 0.0, 0.0, 0.0]), C, 4)


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float16])
def test_check_finite_array_returns_float64(dtype):
    out = check_finite_array(np.array([1, 2, 3], dtype=dtype), "y", ndim=1)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [1.0, 2.0, 3.0])


@pytest.mark.filterwarnings("error")
def test_check_finite_array_beyond_float64_range():
    v = np.array([np.longdouble("1e400")], dtype=np.longdouble)
    if not np.isfinite(v[0]):  # pragma: no cover - longdouble is float64 here
        pytest.skip("longdouble has no wider range on this platform")
    with pytest.raises(ValueError, match="float64 range"):
        check_finite_array(v, "alpha", ndim=1)


def test_check_targets_shape_rules():
    np.testing.assert_array_equal(check_targets([0.5, -2, 3], 3), [0.5, -2.0, 3.0])
    assert check_targets(np.arange(4), None).dtype == np.float64
    with pytest.raises(ValueError, match="1-dimensional"):
        check_targets(np.ones((3, 1)), 3)
    with pytest.raises(ValueError, match="3 entries"):
        check_targets(np.ones(3), 4)


def test_label_error_lists_the_offending_values():
    with pytest.raises(ValueError, match=r"\[0\.5 2\. *\]"):
        check_labels_pm1(np.array([1.0, -1.0, 2.0, 0.5]))


def test_cluster_labels_keep_their_type():
    out = check_cluster_labels([0, 2, 2, 1], 4)
    assert out.dtype.kind == "i"
    np.testing.assert_array_equal(out, [0, 2, 2, 1])
    assert check_cluster_labels([0.5, 1.5], 2).dtype == np.float64
    tup = check_cluster_labels([(1, 2), (3, 4), (1, 2)], 3)  # tuples: one object per label
    assert tup.shape == (3,) and tup[0] == (1, 2) and tup[0] == tup[2]


@pytest.mark.parametrize("labels", [
    np.array(["2020-01-01", "NaT"], dtype="datetime64[D]"),
    np.array([1, "NaT"], dtype="timedelta64[s]"),
    np.zeros(2, dtype=[("a", "i4")]),
])
def test_cluster_labels_of_time_and_record_dtypes_are_refused(labels):
    """NaT is not equal to itself (like NaN): such labels cannot name clusters."""
    with pytest.raises(TypeError, match="not supported"):
        check_cluster_labels(labels, 2)


def test_feasibility_boundary_is_inclusive_and_names_the_parameter():
    """docs/validity.md: feasible iff violation <= 1e-9 C sqrt(n)."""
    C, n = 1.0, 4
    tol = 1e-9 * C * math.sqrt(n)
    a = np.array([-tol, 0.0, 0.0, 0.0])
    assert check_feasible(a, C, n) == tol
    a[0] = -np.nextafter(tol, 1.0)
    with pytest.raises(ValueError, match=r"^alpha is not feasible"):
        check_feasible(a, C, n)


def test_feasibility_violation_is_never_negative_and_uses_the_target():
    assert feasibility_violation(np.array([0.2, 0.5]), 1.0) == 0.0  # P3: inside the box
    assert feasibility_violation(np.array([]), 1.0) == 0.0
    y = np.array([1.0, -1.0])
    assert feasibility_violation(np.array([0.75, 0.25]), 1.0, y, target=0.5) == 0.0
    assert feasibility_violation(np.array([0.75, 0.25]), 1.0, y) == 0.5
    assert feasibility_violation(np.array([0.75, 0.25]), 1.0, y, target=-0.5) == 1.0


@pytest.mark.parametrize("kwargs, name", [
    (dict(C=-1.0, eta=1.0, kernel_scale=1.0, n=2), "C"),
    (dict(C=1.0, eta=0.0, kernel_scale=1.0, n=2), "eta"),
    (dict(C=1.0, eta=1.0, kernel_scale=-1.0, n=2), r"kernel_scale \(max\|K\|\)"),
    (dict(C=1.0, eta=1.0, kernel_scale=1.0, n=0), "n"),
])
def test_check_representable_names_the_bad_argument(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        check_representable(**kwargs)


@pytest.mark.parametrize("C, eta, s, n, ok", [
    (1e-60, 1e-150, 1e-60, 1, False),  # C s n = 1e-120 (eta / (C^2 s) = 1e30)
    (1e-45, 1e-150, 1e-50, 1, True),  # C s n = 1e-95, eta / (C^2 s) = 1e-10
    (1e30, 1.0, 1e-65, 1, True),  # C s n = 1e-35, eta / (C^2 s) = 1e5
    (1e30, 1.0, 1e45, 1, False),  # C s n = 1e75, eta / (C^2 s) = 1e-105
    (1e-3, 1.0, 1e-60, 10**45, True),  # C s n = 1e-18 with n = 1e45 points
])
def test_representable_range_with_a_kernel_scale_other_than_one(C, eta, s, n, ok):
    """Both products involve ``s = max|K|``; instances with ``s != 1`` on each side."""
    if ok:
        check_representable(C, eta, s, n)
    else:
        with pytest.raises(ValueError, match="representable range"):
            check_representable(C, eta, s, n)


def test_representable_range_message_reports_both_quantities():
    with pytest.raises(ValueError) as exc:
        check_representable(2e60, 1.0, 1e50, 10)
    msg = str(exc.value)
    assert "C * max|K| * n = 2e+111 is outside" in msg
    assert "eta / (C^2 * max|K|) = 2.5e-171 is outside" in msg
    with pytest.raises(ValueError, match=r"eta / \(C\^2 \* max\|K\|\) = 4e\+119 is outside"):
        check_representable(1e-50, 4e-11, 1e-30, 1)


def test_solver_options_accept_every_documented_route():
    for route in ("auto", "dense", "lanczos"):
        assert check_solver_options(1e-6, 5, route) == (1e-6, 5)
    assert check_solver_options(2, None, "dense") == (2.0, None)
    with pytest.raises(ValueError, match=r"^tol must be"):
        check_solver_options(0.0, None, "auto")
    with pytest.raises(ValueError, match="eig_route"):
        check_solver_options(1e-6, None, "Dense")


def test_feasibility_is_judged_on_the_exact_values_of_a_float32_candidate():
    """``float32(0.1) = 0.10000000149...`` exceeds ``C = 0.1`` by 1.5e-9, beyond the tolerance
    1e-10: the violation must be computed in double precision, not in the input's dtype."""
    a = np.array([0.1], dtype=np.float32)
    v = feasibility_violation(a, 0.1)
    assert v == pytest.approx(float(np.float32(0.1)) - 0.1, rel=1e-12)
    with pytest.raises(ValueError, match="not feasible"):
        check_feasible(a, 0.1, 1)


# dank_ref keeps the clusters 1 and "1" apart, as dank_fast does
def test_ref_partition_agrees_with_dank_fast_on_which_samples_share_a_cluster():
    labels = [1, "1", 1.0, (0, "x"), np.inf, (0, "x"), "1"]
    fast = check_cluster_labels(labels, len(labels))
    same_fast = np.array([[a == b for b in fast] for a in fast])
    ref = check_partition(labels, len(labels))
    np.testing.assert_array_equal(ref[:, None] == ref[None, :], same_fast)


# a string, set or mapping is not taken as labels (split into characters, unordered)
@pytest.mark.parametrize("labels", ["abc", b"abc", {0, 1, 2}, {0: 1, 1: 1, 2: 1},
                                    frozenset({0, 1, 2})])
def test_cluster_labels_refuse_strings_sets_and_mappings(labels):
    # not "abc" silently as three clusters 'a', 'b', 'c', nor a set in its arbitrary order
    with pytest.raises(TypeError, match="labels must be a 1-D array of length 3"):
        check_cluster_labels(labels, 3)
    with pytest.raises(TypeError, match="labels"):
        solve_decomposed(np.eye(3), np.array([1.0, -1.0, 1.0]), C=1.0, eta=1.0, labels=labels)


# the check above does not refuse lists of strings
def test_cluster_labels_still_accept_sequences_of_strings():
    out = check_cluster_labels(["a", "b", "a"], 3)
    assert out.tolist() == ["a", "b", "a"]
    out = check_cluster_labels(iter([1, 2, 1]), 3)
    assert out.tolist() == [1, 2, 1]
