"""Input validation (docs/validity.md): contracts that mutation testing found unchecked.

Each test states a clause of the written rule or of a docstring of ``dank_fast._validation``:
boundaries that are inclusive, scale invariance up to the top of the double range, errors that
name the parameter and what was wrong, dtypes of returned arrays, and block-wise algorithms
checked beyond one block (benchmarks/MUTATION.md).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dank_fast._kernel_validation import check_kernel_matrix
from dank_fast._validation import (
    check_cluster_labels,
    check_feasible,
    check_finite_array,
    check_labels_pm1,
    check_representable,
    check_solver_options,
    check_targets,
    feasibility_violation,
    kernel_scale,
)

# ------------------------------------------------------------------ kernel matrix


def _psd(n, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, 3))
    return X @ X.T


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("top", [5e307, 8.9e307])
def test_kernel_rule_is_scale_invariant_up_to_the_top_of_the_double_range(top):
    """K valid iff cK valid (rule 4), including ``max|K|`` in ``[2^1022, 2^1023)``."""
    K = _psd(5)
    c = top / np.max(np.abs(K))
    out = check_kernel_matrix(c * K)
    assert np.all(np.isfinite(out)) and np.max(np.abs(out)) == pytest.approx(top)
    bad = K.copy()
    bad[0, 0] = -bad[0, 0] - 1.0  # not PSD at any scale
    with pytest.raises(ValueError, match="positive semi-definite"):
        check_kernel_matrix(c * bad / np.max(np.abs(bad)) * np.max(np.abs(K)))


def test_kernel_with_entries_near_the_largest_double_is_validated():
    K = np.diag([1e308, 1e308])
    np.testing.assert_array_equal(check_kernel_matrix(K), K)


def test_one_by_one_negative_kernel_is_not_psd():
    with pytest.raises(ValueError, match="positive semi-definite"):
        check_kernel_matrix(np.array([[-1.0]]))
    np.testing.assert_array_equal(check_kernel_matrix(np.array([[2.0]])), [[2.0]])


def test_symmetry_tolerance_boundary_is_inclusive():
    """``max|K - K'| <= max(1e-10, 10 u) s`` is symmetric (rule 4), the next double is not."""
    tol = 1e-10  # eps_sym for float64, s = 1
    K = np.array([[1.0, 0.0], [tol, 1.0]])
    out = check_kernel_matrix(K)
    np.testing.assert_array_equal(out, out.T)  # symmetrised
    assert out[0, 1] == pytest.approx(tol / 2, rel=1e-15)
    K[1, 0] = np.nextafter(tol, 1.0)
    with pytest.raises(ValueError, match="symmetric"):
        check_kernel_matrix(K)


def test_rounding_asymmetry_float64_is_kept_other_dtypes_symmetrised():
    """Docstring: a float64 K with rounding-level asymmetry is returned as it is (no copy);
    any other input is converted and returned exactly symmetric."""
    K = _psd(4)
    K[0, 1] += 4e-16 * np.max(np.abs(K))
    out = check_kernel_matrix(K)
    assert out is K
    K32 = _psd(4).astype(np.float32)
    K32[0, 1] = np.nextafter(K32[0, 1], np.float32(np.inf))
    out32 = check_kernel_matrix(K32)
    assert out32.dtype == np.float64
    np.testing.assert_array_equal(out32, out32.T)


@pytest.mark.filterwarnings("error")
def test_kernel_beyond_float64_range_is_a_clean_value_error():
    big = np.array([[np.longdouble("1e400"), 0], [0, 1]], dtype=np.longdouble)
    if not np.isfinite(big[0, 0]):  # pragma: no cover - longdouble is float64 here
        pytest.skip("longdouble has no wider range on this platform")
    with pytest.raises(ValueError, match="float64 range"):
        check_kernel_matrix(big)


@pytest.mark.filterwarnings("error")
def test_huge_asymmetric_kernel_is_rejected_without_overflow_warnings():
    K = np.array([[1e308, -1e308], [1e308, 1e308]])  # K_01 - K_10 overflows
    with pytest.raises(ValueError, match="symmetric"):
        check_kernel_matrix(K)


def test_asymmetry_beyond_the_first_row_blocks_is_found():
    """The symmetry test runs over row blocks; an asymmetric entry in the last rows of a large
    matrix (past two blocks) must still be found."""
    n = 600
    K = np.eye(n)
    K[n - 1, n - 2] = 0.5
    with pytest.raises(ValueError, match="symmetric"):
        check_kernel_matrix(K, check_psd=False)


def test_kernel_scale_of_empty_and_negative_matrices():
    assert kernel_scale(np.empty((0, 0))) == 0.0
    assert kernel_scale(np.array([[-3.0, 1.0]])) == 3.0


@pytest.mark.parametrize("value, word", [
    (np.array([[True]]), "booleans"),
    (np.array([[1 + 0j]]), "complex numbers"),
    (np.array([["a"]]), "strings"),
    (np.array([[b"a"]]), "bytes"),
    (np.array([[1.0]], dtype=object), "Python objects"),
    (np.array([["2020-01-01"]], dtype="datetime64[D]"), "datetimes"),
    (np.array([[1]], dtype="timedelta64[s]"), "timedeltas"),
    (np.zeros((1, 1), dtype=[("a", "f8")]), "structured records"),
])
def test_rejected_dtype_is_named_in_the_message(value, word):
    with pytest.raises(TypeError, match=word):
        check_kernel_matrix(value)


def test_numpy_string_dtype_is_named_in_the_message():
    sdt = getattr(np.dtypes, "StringDType", None)
    if sdt is None:  # pragma: no cover - numpy < 2
        pytest.skip("no StringDType")
    with pytest.raises(TypeError, match="StringDType"):
        check_kernel_matrix(np.array([["a"]], dtype=sdt()))


# ------------------------------------------------------------------ arrays and labels


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


# ------------------------------------------------------------------ feasibility


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


# ------------------------------------------------------------------ scalars and range


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
