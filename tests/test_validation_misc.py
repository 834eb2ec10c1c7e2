"""Validation of the screening quantities and of the synthetic regression cases."""

from __future__ import annotations

import numpy as np
import pytest

from dank_fast import compute_kernel, decomposition_bounds, solve_decomposed
from dank_fast.synthetic import make_cherkassky, make_step, step_function


def _instance(n=16):
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-2, 1, (n // 2, 2)), rng.normal(2, 1, (n // 2, 2))])
    y = np.where(X[:, 1] > 0, 1.0, -1.0)
    labels = np.repeat([0, 1], n // 2)
    K = compute_kernel(X, sigma=1.0)
    abar = solve_decomposed(K, y, C=1.0, eta=5.0, labels=labels, tol=1e-8).alpha
    return K, y, labels, abar


@pytest.mark.parametrize(
    "change, exc, match",
    [
        (lambda K, y, lab, a: (K - 3 * np.eye(16), y, lab, a), ValueError, "semi-definite"),
        (lambda K, y, lab, a: (K, y, np.where(lab == 0, np.nan, 1.0), a), ValueError, "NaN"),
        (lambda K, y, lab, a: (K, y, np.array([0] * 8 + [None] * 8, dtype=object), a),
         ValueError, "None"),
        (lambda K, y, lab, a: (K, y, lab, a + 1.01), ValueError, "abar is not feasible"),
        (lambda K, y, lab, a: (K, y, lab, -a), ValueError, "abar is not feasible"),
        (lambda K, y, lab, a: (K, y, lab, a[:5]), ValueError, "abar has 5 entries"),
        (lambda K, y, lab, a: (K, y.astype(bool), lab, a), TypeError, "booleans"),
        (lambda K, y, lab, a: (K, 2 * y, lab, a), ValueError, "only -1 and \\+1"),
    ],
)
def test_decomposition_bounds_bad_input(change, exc, match):
    K, y, labels, abar = _instance()
    K, y, labels, abar = change(K, y, labels, abar)
    with pytest.raises(exc, match=match):
        decomposition_bounds(K, y, labels, abar, C=1.0, eta=5.0)


def test_decomposition_bounds_accepts_string_labels():
    K, y, labels, abar = _instance()
    a = decomposition_bounds(K, y, labels, abar, C=1.0, eta=5.0)
    b = decomposition_bounds(K, y, np.array(["left", "right"])[labels], abar, C=1.0, eta=5.0)
    assert a.Q == b.Q and a.B == b.B and a.Q > 0


def test_decomposition_bounds_out_of_range():
    K, y, labels, abar = _instance()
    with pytest.raises(ValueError, match="representable range"):
        decomposition_bounds(K, y, labels, abar, C=1.0, eta=1e-300)


def test_step_function_parameters():
    with pytest.raises(ValueError, match="a must be a finite number > 0"):
        step_function(np.zeros(3), a=0.0)  # tanh(a/2) = 0 in a denominator
    with pytest.raises(ValueError, match="w must be"):
        step_function(np.zeros(3), w=-1.0)
    with pytest.raises(ValueError, match="x contains NaN"):
        step_function(np.array([np.nan]))
    # g is continuous at the step edges x = k w and rises by s per period
    x = np.array([2.0 - 1e-12, 2.0, 4.0])
    g = step_function(x, s=3.0, w=2.0, a=1.0)
    assert abs(g[0] - g[1]) < 1e-9 and g[2] - g[1] == pytest.approx(3.0)


@pytest.mark.parametrize("maker", [make_step, make_cherkassky])
@pytest.mark.parametrize("kw, exc", [({"n_train": 1}, ValueError), ({"n_train": 2.5}, TypeError),
                                     ({"n_test": 0}, ValueError)])
def test_case_sizes(maker, kw, exc):
    with pytest.raises(exc, match="n_t"):
        maker(**kw)


@pytest.mark.parametrize("n", [1, 5, 128, 129, 300])
def test_symmetry_scan_is_the_asymmetry_and_the_extremes(n):
    """One pass by tiles gives max|A - A'|, max A and min A, tile edges included (n not a
    multiple of the block), with the extremes anywhere in the matrix."""
    from dank_fast._kernel_validation import symmetry_scan

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
    from dank_fast._kernel_validation import symmetry_scan, validate_kernel_matrix

    A = np.eye(200)
    A[150, 3] = A[3, 150] = np.nan
    _, kmax, kmin = symmetry_scan(A)
    assert np.isnan(kmax) and np.isnan(kmin)
    with pytest.raises(ValueError, match="NaN or infinity"):
        validate_kernel_matrix(A)
    B = np.full((3, 3), 0.5) + np.eye(3)
    A2, kmin2, kmax2 = validate_kernel_matrix(B.astype(np.float32))
    assert (kmin2, kmax2) == (0.5, 1.5) and A2.dtype == np.float64
