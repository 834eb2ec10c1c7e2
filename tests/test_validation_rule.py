"""``dank_fast._validation`` against the written rule of docs/validity.md.

Every rule is tested on both sides of its boundary (just inside / just outside each relative
tolerance), under scaling (``K`` valid iff ``cK`` valid), and per input dtype. The reference
decision :func:`rule_valid` is written here from the document (eigenvalues in float64), not
from the code under test (which decides PSD-ness by a Cholesky factorisation).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dank_fast import compute_kernel, solve_svm, solve_svr, svm_certificate
from dank_fast._kernel_validation import check_kernel_matrix
from dank_fast._validation import (
    check_cluster_labels,
    check_feasible,
    check_integer,
    check_labels_pm1,
    check_nonnegative,
    check_positive,
    check_representable,
    check_targets,
    dtype_epsilon,
)

U64 = 2.220446049250313e-16
U32 = 1.1920928955078125e-07
U16 = 0.0009765625


def rule_valid(K: np.ndarray) -> bool:
    """docs/validity.md, rule 4, written out: relative tolerances from the input dtype."""
    u = {np.dtype(np.float16): U16, np.dtype(np.float32): U32}.get(K.dtype, U64)
    A = K.astype(np.float64)
    n = A.shape[0]
    s = float(np.max(np.abs(A)))
    if s == 0.0:
        return True
    if np.max(np.abs(A - A.T)) > max(1e-10, 10 * u) * s:
        return False
    lmin = np.linalg.eigvalsh((A + A.T) / 2)[0]
    return bool(lmin >= -max(1e-8, u) * n * s)


def is_valid(K) -> bool:
    try:
        check_kernel_matrix(K)
    except ValueError:
        return False
    return True


def rotated(eigs, seed=0) -> np.ndarray:
    """``Q diag(eigs) Q'`` with a random orthogonal ``Q``, exactly symmetrised."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.normal(size=(len(eigs), len(eigs))))
    K = (Q * np.asarray(eigs)) @ Q.T
    return 0.5 * (K + K.T)


# --------------------------------------------------------------------------- dtypes
@pytest.mark.parametrize(
    "K, what",
    [
        (np.eye(3, dtype=complex), "complex"),
        (np.eye(3) + 0j, "complex"),  # zero imaginary part is still complex
        (np.eye(3, dtype=bool), "booleans"),
        (np.array([["1", "0"], ["0", "1"]]), "strings"),
        (np.array([[1.0, 0.0], [0.0, 1.0]], dtype=object), "objects"),
        ([[1.0, 0.0], [0.0]], "inhomogeneous"),  # ragged
        (None, "objects"),
    ],
)
def test_non_real_kernel_is_a_type_error(K, what):
    with pytest.raises(TypeError, match="K must be a real numeric array.*" + what):
        check_kernel_matrix(K)


def test_complex_kernel_is_not_silently_truncated():
    # the imaginary part makes this Hermitian matrix indefinite; float64 conversion would
    # drop it and accept the identity
    K = np.array([[1.0, 2j], [-2j, 1.0]])
    with pytest.raises(TypeError, match="complex"):
        check_kernel_matrix(K)
    with pytest.raises(TypeError, match="complex"):
        solve_svr(K, [0.0, 1.0], C=1.0, epsilon=0.1, eta=1.0)


@pytest.mark.parametrize("dtype", [np.int8, np.int64, np.uint16, np.float16, np.float32,
                                   np.float64, np.longdouble])
def test_real_dtypes_are_accepted_and_returned_as_float64(dtype):
    K = np.array([[2, 1], [1, 2]], dtype=dtype)
    out = check_kernel_matrix(K)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [[2.0, 1.0], [1.0, 2.0]])


def test_dtype_epsilon_follows_the_rule():
    assert dtype_epsilon(np.float16) == U16
    assert dtype_epsilon(np.float32) == U32
    for dt in (np.float64, np.longdouble, np.int32, np.uint8):
        assert dtype_epsilon(dt) == U64


# --------------------------------------------------------------------------- shapes, values
@pytest.mark.parametrize(
    "K, match",
    [
        (np.zeros((0, 0)), "K is empty"),
        (np.zeros((2, 3)), "square"),
        (np.zeros(3), "2-dimensional"),
        (np.array([[1.0, np.nan], [np.nan, 1.0]]), "NaN or infinity"),
        (np.array([[np.inf, 0.0], [0.0, 1.0]]), "NaN or infinity"),
    ],
)
def test_bad_shapes_and_values(K, match):
    with pytest.raises(ValueError, match=match):
        check_kernel_matrix(K)


@pytest.mark.skipif(np.finfo(np.longdouble).max <= np.finfo(np.float64).max,
                    reason="longdouble is float64 here")
def test_longdouble_beyond_float64_range():
    K = np.array([[np.longdouble("1e4000"), 0], [0, 1]], dtype=np.longdouble)
    with pytest.raises(ValueError, match="beyond the float64 range"):
        check_kernel_matrix(K)


def test_zero_kernel_is_valid():
    for n in (1, 2, 5):
        np.testing.assert_array_equal(check_kernel_matrix(np.zeros((n, n))), 0.0)


def test_one_by_one():
    assert is_valid(np.array([[3.0]]))
    assert not is_valid(np.array([[-3.0]]))  # lambda_min = -s < -eps n s


# --------------------------------------------------------------------------- symmetry boundary
@pytest.mark.parametrize(
    "dtype, eps_sym, scale",
    [(np.float64, 1e-10, c) for c in (1e-12, 1.0, 1e12)]
    + [(np.float32, 10 * U32, c) for c in (1e-12, 1.0, 1e12)]
    + [(np.float16, 10 * U16, 1.0)],
)
def test_symmetry_boundary(dtype, eps_sym, scale):
    # s = max|K| = 4 * scale on the diagonal; K[0, 1] - K[1, 0] = delta exactly
    for factor, valid in ((0.9, True), (1.1, False)):
        K = (np.eye(3) * (4.0 * scale)).astype(dtype)
        s = float(np.max(np.abs(K.astype(np.float64))))
        K[0, 1] = dtype(factor * eps_sym * s)
        delta = float(K[0, 1])
        assert (delta <= eps_sym * s) == valid  # the rounded value still sits on its side
        assert rule_valid(K) == valid
        if valid:
            out = check_kernel_matrix(K)
            np.testing.assert_array_equal(out, out.T)  # exactly symmetrised
            assert out[0, 1] == delta / 2
        else:
            with pytest.raises(ValueError, match="K must be symmetric"):
                check_kernel_matrix(K)


def test_symmetry_tolerance_depends_on_dtype():
    # asymmetry 5e-3 * s: within float16's 10 u = 9.8e-3, far outside float64's 1e-10
    K = np.eye(2)
    K[0, 1] = 5e-3
    assert is_valid(K.astype(np.float16))
    assert not is_valid(K)
    assert not is_valid(K.astype(np.float32))


# --------------------------------------------------------------------------- PSD boundary
@pytest.mark.parametrize("n", [2, 7, 30])
@pytest.mark.parametrize("scale", [1e-12, 1.0, 1e12])
def test_psd_boundary(n, scale):
    eps = 1e-8
    s0 = np.max(np.abs(rotated([1.0] * (n - 1) + [0.0], seed=n)))
    for factor, valid in ((0.99, True), (1.01, False)):
        K = rotated([1.0] * (n - 1) + [-factor * eps * n * s0], seed=n) * scale
        s = np.max(np.abs(K))
        lmin = np.linalg.eigvalsh(K)[0]
        # the construction puts lambda_min on the intended side of -eps n s by a margin
        assert (lmin >= -eps * n * s) == valid
        assert abs(lmin + eps * n * s) > 1e-3 * eps * n * s
        assert rule_valid(K) == valid
        assert is_valid(K) == valid


def test_psd_rejection_reports_lambda_min():
    K = np.diag([1.0, 1.0, -0.5])
    with pytest.raises(ValueError, match=r"not positive semi-definite: smallest eigenvalue -0\.5"):
        check_kernel_matrix(K)


def test_psd_tolerance_depends_on_dtype():
    # lambda_min = -0.5 u32 n s: inside float32's tolerance u32 n s, outside float64's 1e-8 n s
    n = 4
    lam = np.float32(0.5 * U32 * n)
    K = np.diag(np.array([1.0, 1.0, 1.0, -lam], dtype=np.float32))
    assert rule_valid(K) and is_valid(K)
    assert not is_valid(K.astype(np.float64)) and not rule_valid(K.astype(np.float64))


def test_float32_gaussian_kernel_is_valid():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    K32 = compute_kernel(X, sigma=3.0).astype(np.float32)  # nearly low rank: rounding < 0
    assert is_valid(K32) and rule_valid(K32)


def test_psd_check_can_be_skipped():
    K = np.diag([1.0, -1.0])
    assert check_kernel_matrix(K, check_psd=False)[1, 1] == -1.0


@pytest.mark.parametrize("c", [1e-12, 1.0, 1e12])
@pytest.mark.parametrize(
    "make",
    [
        lambda: rotated([3.0, 1.0, 0.5, 0.0]),  # PSD, singular
        lambda: rotated([3.0, 1.0, 0.5, -0.3]),  # clearly indefinite
        lambda: np.array([[1.0, 0.5 + 1e-6], [0.5, 1.0]]),  # clearly non-symmetric
        lambda: np.zeros((3, 3)),
        lambda: rotated([1.0, 1.0, -0.99e-8 * 3]),  # just inside
        lambda: rotated([1.0, 1.0, -1.01e-8 * 3]),  # just outside
    ],
)
def test_scaling_invariance(make, c):
    K = make()
    assert is_valid(c * K) == is_valid(K) == rule_valid(K)


def test_issue_scaled_invalid_kernels_are_rejected():
    """Issue: indefinite / non-symmetric K scaled by 1e-12 passed the absolute floor."""
    X = np.random.default_rng(0).normal(size=(6, 2))
    K = compute_kernel(X, sigma=1.0)
    y = np.array([1.0, -1.0] * 3)
    bad_psd = 1e-12 * (K - 2.0 * np.eye(6))
    bad_sym = 1e-12 * K
    bad_sym[0, 1] += 1e-15
    for bad, match in ((bad_psd, "positive semi-definite"), (bad_sym, "symmetric")):
        with pytest.raises(ValueError, match=match):
            solve_svm(bad, y, C=1.0, eta=1.0, tau=0.01, max_iter=3)
        with pytest.raises(ValueError, match=match):
            svm_certificate(bad, y, np.zeros(6), C=1.0, eta=1.0, tau=0.01)
        with pytest.raises(ValueError, match=match):
            solve_svr(bad, np.arange(6.0), C=1.0, epsilon=0.1, eta=1.0)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 12),
    seed=st.integers(0, 10**6),
    log_scale=st.floats(-150, 150),
    factor=st.sampled_from([0.0, 0.5, 0.98, 1.02, 2.0, 100.0]),
)
def test_agrees_with_eigenvalue_rule(n, seed, log_scale, factor):
    """Cholesky decision == eigenvalue decision away from rounding of the threshold."""
    rng = np.random.default_rng(seed)
    eigs = rng.uniform(0.1, 1.0, n)
    eigs[0] = 1.0
    if n > 1:
        eigs[-1] = -factor * 1e-8 * n * 1.0
    K = rotated(eigs, seed) * 10.0**log_scale
    assert is_valid(K) == rule_valid(K)


# --------------------------------------------------------------------------- scalars
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


# --------------------------------------------------------------------------- representable range
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


# --------------------------------------------------------------------------- labels
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


# --------------------------------------------------------------------------- feasibility
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
