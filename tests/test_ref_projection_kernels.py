"""dank_ref's projections (dank_ref.projection) and kernel constructor (dank_ref.kernels)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dank_ref.kernels import KERNELS, gaussian_kernel, kernel_from_X
from dank_ref.projection import (
    project_A,
    project_box_hyperplane,
    project_sum_zero,
    project_svr,
)


# ------------------------------------------------------------------------------ exact QPs
def exact_box_hyperplane(z, u, lo, hi):
    """min ||x - z||^2 over {lo <= x <= hi, u'x = 0} by enumerating every active set.

    Each index is at ``lo``, at ``hi`` or free; on the free set ``x = z - lam u`` with ``lam``
    fixed by ``u'x = 0``.  The projection is the feasible candidate nearest to ``z``."""
    m = z.size
    best, best_d = None, math.inf
    for pattern in itertools.product((0, 1, 2), repeat=m):
        p = np.array(pattern)
        x = np.where(p == 0, lo, hi).astype(float)
        free = p == 2
        if free.any():
            rest = float(u[~free] @ x[~free])
            lam = (float(u[free] @ z[free]) + rest) / float(u[free] @ u[free])
            x[free] = z[free] - lam * u[free]
        if np.any(x < lo - 1e-12 * (1 + abs(lo))) or np.any(x > hi + 1e-12 * (1 + abs(hi))):
            continue
        if abs(float(u @ x)) > 1e-9 * (1 + abs(hi)):
            continue
        d = float(np.sum((x - z) ** 2))
        if d < best_d:
            best, best_d = x, d
    return best


def random_signs(rng, m):
    u = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    u[0], u[-1] = 1.0, -1.0
    return u


@pytest.mark.parametrize("seed", range(12))
def test_project_A_is_the_exact_qp_solution(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 7))
    C = float(10.0 ** rng.uniform(-2, 2))
    y = random_signs(rng, n)
    z = C * rng.normal(0.5, 1.0, n)
    x = project_A(z, y, C)
    np.testing.assert_allclose(x, exact_box_hyperplane(z, y, 0.0, C), atol=1e-10 * C)


@pytest.mark.parametrize("seed", range(8))
def test_project_svr_and_sum_zero_are_the_exact_qp_solutions(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 4))
    C = float(10.0 ** rng.uniform(-1, 1))
    z = C * rng.normal(0.3, 1.0, 2 * n)
    u = np.concatenate([np.ones(n), -np.ones(n)])
    np.testing.assert_allclose(project_svr(z, C), exact_box_hyperplane(z, u, 0.0, C),
                               atol=1e-10 * C)
    b = C * rng.normal(0.0, 1.5, n + 2)
    np.testing.assert_allclose(project_sum_zero(b, C),
                               exact_box_hyperplane(b, np.ones(n + 2), -C, C), atol=1e-10 * C)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 300), logC=st.floats(-8, 8), logz=st.floats(-4, 2),
       seed=st.integers(0, 2**31 - 1))
def test_project_A_satisfies_kkt_and_the_feasibility_rule(n, logC, logz, seed):
    """KKT: x = clip(z - lam y, 0, C) for one lam; |y'x| within rounding of C sqrt(n) (far below
    the 1e-9 C sqrt(n) of docs/validity.md); a feasible point does not move."""
    rng = np.random.default_rng(seed)
    C = 10.0**logC
    y = random_signs(rng, n)
    z = C * 10.0**logz * rng.normal(size=n)
    x, lam = project_box_hyperplane(z, y, C)
    np.testing.assert_array_equal(x, project_A(z, y, C))
    np.testing.assert_array_equal(x, np.clip(z - lam * y, 0.0, C))
    assert np.all(x >= 0.0) and np.all(x <= C)
    assert abs(float(y @ x)) <= 1e-14 * C * math.sqrt(n)
    again, lam2 = project_box_hyperplane(x, y, C)
    if float(y @ x) == 0.0:
        np.testing.assert_array_equal(again, x)
        assert lam2 == 0.0
    else:  # one more projection only removes rounding
        np.testing.assert_allclose(again, x, atol=1e-14 * C * math.sqrt(n))


def test_projection_is_relative_to_the_data_not_absolute():
    """z and C around 1e-200: an absolute bisection tolerance would return garbage."""
    y = np.array([1.0, 1.0, -1.0, -1.0])
    z = 1e-200 * np.array([0.3, 0.9, 0.1, 0.2])
    x = project_A(z, y, 1e-200)
    np.testing.assert_allclose(x, exact_box_hyperplane(z * 1e200, y, 0.0, 1.0) * 1e-200,
                               rtol=1e-12, atol=0)


def test_project_sum_zero_split_gives_a_feasible_svr_pair():
    rng = np.random.default_rng(7)
    b = project_sum_zero(rng.normal(size=20), 0.5)
    ah, ac = np.maximum(b, 0.0), np.maximum(-b, 0.0)
    assert np.all(np.minimum(ah, ac) == 0.0)
    assert np.all(ah <= 0.5) and np.all(ac <= 0.5)
    assert abs(float(np.sum(ah - ac))) <= 1e-14 * 0.5 * math.sqrt(20)


@pytest.mark.parametrize("call, exc, match", [
    (lambda: project_A([1.0, 2.0], [1.0, 0.5], 1.0), ValueError, "y must have entries"),
    (lambda: project_A([1.0, 2.0], [1.0, -1.0, 1.0], 1.0), ValueError, "length"),
    (lambda: project_A([1.0, np.nan], [1.0, -1.0], 1.0), ValueError, "NaN or inf"),
    (lambda: project_A([[1.0, 2.0]], [1.0, -1.0], 1.0), ValueError, "1-D"),
    (lambda: project_A([1.0, 2.0], [1.0, -1.0], 0.0), ValueError, "C must be"),
    (lambda: project_A([1.0, 2.0], [1.0, -1.0], True), TypeError, "C must be a real"),
    (lambda: project_A(["a", "b"], [1.0, -1.0], 1.0), TypeError, "z must be a real"),
    (lambda: project_svr([1.0, 2.0, 3.0], 1.0), ValueError, "even length"),
    (lambda: project_sum_zero([], 1.0), ValueError, "empty"),
    (lambda: project_box_hyperplane([1.0], [2.0], 1.0), ValueError, "u must have entries"),
])
def test_bad_input_is_refused_with_a_named_error(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


# ------------------------------------------------------------------------------ kernels
def test_kernel_names():
    assert KERNELS == ("gaussian", "linear", "polynomial")


@pytest.mark.parametrize("seed", range(4))
def test_gaussian_kernel_values(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(9, 3))
    sigma = 0.8
    K = gaussian_kernel(X, sigma)
    direct = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / (2 * sigma**2))
    np.testing.assert_allclose(K, direct, rtol=1e-13, atol=0)
    np.testing.assert_array_equal(np.diag(K), 1.0)
    np.testing.assert_array_equal(K, K.T)
    np.testing.assert_array_equal(K, kernel_from_X(X, "gaussian", sigma=sigma))
    np.testing.assert_array_equal(
        kernel_from_X(X, "gaussian", gamma=1 / (2 * sigma**2), sigma=123.0),
        kernel_from_X(X, "gaussian", gamma=1 / (2 * sigma**2)))


def test_linear_and_polynomial_kernels():
    X = np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.0]])
    np.testing.assert_array_equal(kernel_from_X(X, "linear"), X @ X.T)
    np.testing.assert_allclose(kernel_from_X(X, "polynomial", gamma=0.5, degree=3, coef0=1.0),
                               (0.5 * X @ X.T + 1.0) ** 3, rtol=1e-15)
    np.testing.assert_array_equal(kernel_from_X(X[:1], "gaussian", sigma=1.0), [[1.0]])


@pytest.mark.parametrize("call, match", [
    (lambda: kernel_from_X(np.eye(2), "rbf", sigma=1.0), "kernel must be one of"),
    (lambda: kernel_from_X(np.eye(2), "gaussian", sigma=1e-170), "too small"),
    (lambda: kernel_from_X(np.array([[1e200], [-1e200]]), "gaussian", sigma=1.0),
     "squared distances"),
    (lambda: kernel_from_X(np.array([[1e200], [1.0]]), "linear"), "overflows"),
    (lambda: gaussian_kernel(np.eye(2), 0.0), "sigma must be"),
    (lambda: gaussian_kernel(np.eye(2), math.inf), "sigma must be"),
])
def test_unrepresentable_kernels_are_refused(call, match):
    with pytest.raises(ValueError, match=match):
        call()
