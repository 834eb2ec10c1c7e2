"""dank_ref.solve_svr: P2 (eq. (22), bias constraint ``1'(ah - ac) = 0``) as one SDP.

Independent checks: the closed form ``H`` in plain numpy (tests/_ref_cases.py), scikit-learn's
SVR as ``eta -> inf``, and the certificate recomputed at the returned pair.  P2's certificate
itself: tests/test_ref_certificate.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _ref_cases import h_svr, make_svr, svr_instance
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dank_ref
from dank_ref import certificate as rc


@pytest.mark.parametrize("solver", ["SCS", "CLARABEL"])
@pytest.mark.parametrize("tau", [0.0, 0.1])
def test_sdp_value_equals_closed_form(solver, tau):
    K, y = make_svr(16, seed=2)
    r = dank_ref.solve_svr(K, y, C=1.0, epsilon=0.1, eta=0.5, tau=tau, solver=solver,
                           strategy="tight")
    h, F = h_svr(K, y, r.alpha_hat, r.alpha_check, 0.1, 0.5, tau)
    assert r.status == "converged" and r.rel_gap <= 1e-9
    assert abs(r.solver_stats["conic_value"] - h) <= 1e-6 * abs(h)
    assert abs(r.value - h) <= 1e-10 * abs(h)
    np.testing.assert_allclose(r.F, F, atol=1e-10)
    np.testing.assert_allclose(r.alpha, r.alpha_hat - r.alpha_check)
    assert abs(np.sum(r.alpha)) < 1e-12
    assert np.all(r.alpha_hat * r.alpha_check == 0)


@pytest.mark.parametrize("seed", [0, 1])
def test_eta_infinity_reproduces_sklearn_svr(seed):
    from sklearn.svm import SVR

    K, y = make_svr(24, seed=seed)
    C, eps = 1.0, 0.1
    m = SVR(kernel="precomputed", C=C, epsilon=eps, tol=1e-10).fit(K, y)
    b_sk = np.zeros(len(y))
    b_sk[m.support_] = m.dual_coef_[0]
    assert np.sum((np.abs(b_sk) > 1e-6) & (np.abs(b_sk) < C - 1e-6)) >= 1
    r = dank_ref.solve_svr(K, y, C=C, epsilon=eps, eta=1e6, tau=0.0, solver="CLARABEL")
    assert r.status == "converged"
    np.testing.assert_allclose(r.alpha, b_sk, rtol=0, atol=1e-5 * C)
    assert abs(r.bias - m.intercept_[0]) <= 1e-5 * max(1.0, abs(m.intercept_[0]))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(6, 14),
    d=st.integers(1, 3),
    C=st.floats(0.1, 10.0),
    eta=st.floats(0.05, 100.0),
    tau=st.sampled_from([0.0, 0.01, 0.3]),
    width=st.floats(0.2, 2.0),
    eps=st.floats(0.0, 0.3),
    dup=st.integers(0, 2),
    seed=st.integers(0, 10_000),
)
def test_property_tiny_instances(n, d, C, eta, tau, width, eps, dup, seed):
    K, y = make_svr(n, d=d, seed=seed, width=width, dup=dup)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dank_ref.ConvergenceWarning)
        r = dank_ref.solve_svr(K, y, C=C, epsilon=eps, eta=eta, tau=tau, solver="SCS",
                               strategy="tight")
    assert r.status == "converged"
    h, _ = h_svr(K, y, r.alpha_hat, r.alpha_check, eps, eta, tau)
    assert abs(h - r.lower) <= 1e-8 * max(1.0, abs(h))
    if "conic_value" in r.solver_stats:
        assert abs(r.solver_stats["conic_value"] - h) <= 1e-4 * max(1.0, abs(h))
    else:  # every target fits the tube: a* = 0 certified with gap 0, no conic solve
        assert "not run" in r.solver_stats["cvxpy_status"]
        assert r.gap == 0.0 and not np.any(r.alpha_hat) and not np.any(r.alpha_check)


def test_bad_inputs():
    K, y = make_svr(8)
    with pytest.raises(ValueError, match="epsilon"):
        dank_ref.solve_svr(K, y, C=1.0, epsilon=-0.1, eta=1.0)
    with pytest.raises(ValueError, match="NaN"):
        yb = y.copy()
        yb[0] = np.inf
        dank_ref.solve_svr(K, yb, C=1.0, epsilon=0.1, eta=1.0)
    with pytest.raises(ValueError, match="length"):
        dank_ref.solve_svr(K, y[:3], C=1.0, epsilon=0.1, eta=1.0)
    with pytest.raises(ValueError, match="C must"):
        dank_ref.solve_svr(K, y, C=-1.0, epsilon=0.1, eta=1.0)


def test_every_target_in_the_tube_is_zero_without_a_conic_solve():
    """epsilon = 1e6: detected by the certificate of b = 0 (gap 0); no stage but "zero" runs."""
    K, y = svr_instance()
    r = dank_ref.solve_svr(K, y, C=1.0, epsilon=1e6, eta=1.0)
    assert [s["stage"] for s in r.solver_stats["stages"]] == ["zero"]
    assert "not run" in r.solver_stats["cvxpy_status"]
    assert r.status == "converged" and r.gap == 0.0 and r.lower == r.upper
    assert np.all(r.alpha == 0.0) and np.all(r.alpha_hat == 0.0)
    n, tau, eta = len(y), 0.01, 1.0
    assert r.lower == pytest.approx(eta * (n * tau - tau**2 / 4), rel=1e-12)  # h(0)
    assert min(y) - 1e6 <= r.bias <= max(y) + 1e6


def test_svr_tube_detection_is_exact_at_the_boundary():
    """b = 0 is certified only when max y - min y <= 2 eps; just inside the tube it is not."""
    K, y = svr_instance()
    half = 0.5 * (y.max() - y.min())
    r = dank_ref.solve_svr(K, y, C=1.0, epsilon=half, eta=1.0)
    assert r.status == "converged" and np.all(r.alpha == 0.0)
    r2 = dank_ref.solve_svr(K, y, C=1.0, epsilon=0.9 * half, eta=1.0)
    assert r2.status == "converged" and np.any(r2.alpha != 0.0)


def test_returned_point_is_what_is_certified():
    K, y = svr_instance()
    with warnings.catch_warnings():
        warnings.simplefilter("error", dank_ref.ConvergenceWarning)
        r = dank_ref.solve_svr(K, y, C=1.0, epsilon=0.05, eta=1.0)
    c = rc.svr_certificate(K, y, r.alpha_hat, r.alpha_check, C=1.0, epsilon=0.05, eta=1.0,
                           tau=0.01)
    assert (c.lower, c.upper, c.gap) == (r.lower, r.upper, r.gap)
    assert np.all(np.minimum(r.alpha_hat, r.alpha_check) == 0.0)

def test_kernel_zero_is_a_linear_program():
    """K = 0: F(b) = J(11') is constant; P2 is an LP (HiGHS), no conic solve."""
    rs = dank_ref.solve_svr(np.zeros((5, 5)), np.arange(5.0), C=1.0, epsilon=0.1, eta=1.0)
    assert rs.status == "converged" and [s["stage"] for s in rs.solver_stats["stages"]] == ["lp"]
    # LP optimum: b = (-1, -1, 0, 1, 1) (or any split of the middle point), lin = 6 - 0.4
    assert rs.alpha @ np.arange(5.0) - 0.1 * np.abs(rs.alpha).sum() == pytest.approx(5.6)
