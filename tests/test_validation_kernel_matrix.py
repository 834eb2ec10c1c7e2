"""A precomputed kernel matrix against the written rule of docs/validity.md (rules 1-4).

Every rule is tested on both sides of its boundary (just inside / just outside each relative
tolerance), under scaling (``K`` valid iff ``cK`` valid, up to the top of the double range),
and per input dtype. The reference decision :func:`rule_valid` is written here from the
document (eigenvalues in float64), not from the code under test (which decides PSD-ness by a
Cholesky factorisation); block-wise scans are checked beyond one block.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dank_fast import compute_kernel, solve_svm, solve_svr, svm_certificate
from dank_fast._kernel_validation import check_kernel_matrix, symmetry_scan, validate_kernel_matrix
from dank_fast._validation import dtype_epsilon, kernel_scale

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
    """Indefinite / non-symmetric K scaled by 1e-12 is refused (an absolute floor would pass it)."""
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


# the one-pass scan of the asymmetry and the extremes


@pytest.mark.parametrize("n", [1, 5, 128, 129, 300])
def test_symmetry_scan_is_the_asymmetry_and_the_extremes(n):
    """One pass by tiles gives max|A - A'|, max A and min A, tile edges included (n not a
    multiple of the block), with the extremes anywhere in the matrix."""
    rng = np.random.default_rng(n)
    A = rng.normal(size=(n, n))
    A[-1, 0] = 7.5  # below the diagonal, in the last tile row
    A[0, -1] = -9.25
    asym, kmax, kmin = symmetry_scan(A, block=128)
    assert asym == np.max(np.abs(A - A.T))
    assert (kmax, kmin) == (A.max(), A.min())


def test_symmetry_scan_propagates_nan_and_validation_refuses_it():
    """A NaN anywhere makes the extremes NaN (Python's max would drop it), so a float64 kernel
    with one NaN is refused by name; the extremes returned for a valid kernel are its own."""
    A = np.eye(200)
    A[150, 3] = A[3, 150] = np.nan
    _, kmax, kmin = symmetry_scan(A)
    assert np.isnan(kmax) and np.isnan(kmin)
    with pytest.raises(ValueError, match="NaN or infinity"):
        validate_kernel_matrix(A)
    B = np.full((3, 3), 0.5) + np.eye(3)
    A2, kmin2, kmax2 = validate_kernel_matrix(B.astype(np.float32))
    assert (kmin2, kmax2) == (0.5, 1.5) and A2.dtype == np.float64


# the PSD threshold of a kernel near the largest double is finite (no OverflowError)
def test_huge_non_psd_kernel_is_refused_with_a_finite_threshold():
    with pytest.raises(ValueError, match="not positive semi-definite"):  # not OverflowError
        check_kernel_matrix(np.array([[1.7e308, 0.0], [0.0, -1.7e308]]))
