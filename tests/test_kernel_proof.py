"""The kernel matrix of ``compute_kernel(X)``: read-only, exactly symmetric, and accepted by the
solvers without the O(n^3) PSD test because its arithmetic proves it PSD within the tolerance
of docs/validity.md (dank_fast/_kernel_proof.py). Tested through what a user sees: the
matrix, the solvers' results and errors, and the validity contract on adversarial data."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dank_fast import compute_kernel, solve_svm


def _data(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return X, np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)


@pytest.mark.parametrize("kw", [dict(sigma=0.7), dict(kernel="linear"),
                                dict(kernel="poly", degree=3, gamma=0.5)])
def test_kernel_of_X_is_read_only_and_exactly_symmetric(kw):
    X, _ = _data()
    K = compute_kernel(X, **kw)
    assert not K.flags.writeable
    assert np.array_equal(K, K.T)
    with pytest.raises(ValueError, match="read-only"):
        K[0, 1] = 2.0
    with pytest.raises(ValueError, match="read-only"):
        K -= 1.0
    Kc = K.copy()  # a copy is an ordinary array
    Kc[0, 0] += 1.0


def test_kernel_between_two_sets_is_an_ordinary_array():
    X, _ = _data()
    K = compute_kernel(X, X[:10], sigma=0.7)
    assert K.flags.writeable and K.shape == (60, 10)


def test_solve_on_the_proved_kernel_equals_the_solve_on_a_checked_copy():
    X, y = _data(n=80)
    K = compute_kernel(X, sigma=0.8)
    a = solve_svm(K, y, C=2.0, eta=5.0, tau=0.01)
    b = solve_svm(K.copy(), y, C=2.0, eta=5.0, tau=0.01)
    assert a.status == b.status == "converged"
    np.testing.assert_array_equal(a.alpha, b.alpha)
    assert (a.lower, a.upper) == (b.lower, b.upper)


def test_a_changed_kernel_is_checked_again():
    """Making the array writable voids the proof: an indefinite change is refused as for any
    array, and so is the same change on a copy."""
    X, y = _data()
    K = compute_kernel(X, sigma=0.7)
    bad = K.copy()
    bad[0, 1] = bad[1, 0] = -5.0
    with pytest.raises(ValueError, match="PSD"):
        solve_svm(bad, y, C=1.0, eta=1.0, tau=0.01)
    K.setflags(write=True)
    K[0, 1] = K[1, 0] = -5.0
    with pytest.raises(ValueError, match="PSD"):
        solve_svm(K, y, C=1.0, eta=1.0, tau=0.01)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 50), d=st.integers(1, 40),
       scale=st.sampled_from([1e-8, 1e-3, 1.0, 1e3, 1e6]),
       offset=st.sampled_from([0.0, 1.0, 1e4]),
       log_gamma=st.floats(-8, 8), kernel=st.sampled_from(["rbf", "linear", "poly"]),
       degree=st.integers(1, 6), dup=st.booleans(), seed=st.integers(0, 2**16))
@example(n=40, d=3, scale=1e-6, offset=1e4, log_gamma=0.0, kernel="rbf", degree=1, dup=False,
         seed=1)  # a width far below the rounding of uncentred features: not PSD at all
def test_the_solvers_never_accept_a_kernel_of_X_that_is_not_psd(n, d, scale, offset, log_gamma,
                                                                 kernel, degree, dup, seed):
    """On uncentred, duplicated, tiny and huge features and widths, ``compute_kernel(X)`` is
    either PSD within the tolerance of docs/validity.md (lambda_min >= -1e-8 n max|K|), or the
    solver refuses that very array (rounding made it indefinite, and no proof was attached)."""
    rng = np.random.default_rng(seed)
    X = offset + scale * rng.standard_normal((n, d))
    if dup:
        X[n // 2:] = X[: n - n // 2]
    gamma = float(10.0 ** log_gamma) / (scale * scale * d)
    kw = dict(kernel=kernel)
    if kernel == "rbf":
        kw["gamma"] = gamma
    if kernel == "poly":
        kw.update(degree=degree, gamma=min(gamma, 1e3 / (offset + scale) ** 2 / d))
    try:
        K = compute_kernel(X, **kw)
    except ValueError as e:  # a polynomial kernel beyond the float64 range
        assert "overflowed" in str(e)
        return
    s = float(np.max(np.abs(K)))
    if float(np.linalg.eigvalsh(K)[0]) < -1e-8 * n * s:
        y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        with pytest.raises(ValueError, match="PSD"):
            solve_svm(K, y, C=1.0, eta=1.0, tau=0.01)
