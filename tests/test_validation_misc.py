"""The tiled symmetry scan of dank_fast's kernel validation."""

from __future__ import annotations

import numpy as np
import pytest


@pytest.mark.parametrize("n", [1, 5, 128, 129, 300])
def test_symmetry_scan_is_the_asymmetry_and_the_extremes(n):
    """One pass by tiles gives max|A - A'|, max A and min A, tile edges included (n not a
    multiple of the block), with the extremes anywhere in the matrix."""
    from dank_fast._validation import symmetry_scan

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
    from dank_fast._validation import symmetry_scan, validate_kernel_matrix

    A = np.eye(200)
    A[150, 3] = A[3, 150] = np.nan
    _, kmax, kmin = symmetry_scan(A)
    assert np.isnan(kmax) and np.isnan(kmin)
    with pytest.raises(ValueError, match="NaN or infinity"):
        validate_kernel_matrix(A)
    B = np.full((3, 3), 0.5) + np.eye(3)
    A2, kmin2, kmax2 = validate_kernel_matrix(B.astype(np.float32))
    assert (kmin2, kmax2) == (0.5, 1.5) and A2.dtype == np.float64
