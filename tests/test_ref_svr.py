"""Tests of dank_ref.solve_svr (P2, eq. mainsvr with 1'(ah - ac) = 0) and its certificate."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dank_ref
from dank_ref import certificate as cert


def make_svr(n, d=1, seed=0, width=0.3, noise=0.1, dup=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    if dup:
        X[-dup:] = X[:dup]
    y = np.sin(4 * X[:, 0]) + noise * rng.normal(size=n)
    if dup:
        y[-dup:] = y[:dup]
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-sq / (2 * width**2)), y


def closed_form_h(K, y, ah, ac, eps, eta, tau):
    b = ah - ac
    M = np.ones_like(K) + np.outer(b, b) * K / (4 * eta)
    lam, U = np.linalg.eigh(M)
    F = (U * np.maximum(lam - tau / 2, 0)) @ U.T
    H = (
        -0.5 * b @ (F * K) @ b
        + b @ y
        - eps * np.sum(ah + ac)
        + eta * np.sum((F - 1) ** 2)
        + tau * eta * np.trace(F)
    )
    return H, F


@pytest.mark.parametrize("solver", ["SCS", "CLARABEL"])
@pytest.mark.parametrize("tau", [0.0, 0.1])
def test_sdp_value_equals_closed_form(solver, tau):
    K, y = make_svr(16, seed=2)
    r = dank_ref.solve_svr(K, y, C=1.0, epsilon=0.1, eta=0.5, tau=tau, solver=solver,
                           strategy="tight")
    h, F = closed_form_h(K, y, r.alpha_hat, r.alpha_check, 0.1, 0.5, tau)
    assert r.status == "optimal" and r.rel_gap <= 1e-9
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
    assert r.status == "optimal"
    np.testing.assert_allclose(r.alpha, b_sk, rtol=0, atol=1e-5 * C)
    assert abs(r.bias - m.intercept_[0]) <= 1e-5 * max(1.0, abs(m.intercept_[0]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    tau=st.sampled_from([0.0, 0.05]),
    eta=st.floats(0.05, 50.0),
    C=st.floats(0.1, 10.0),
    eps=st.floats(0.0, 0.5),
)
def test_certificate_lower_le_upper(data, tau, eta, C, eps):
    n = 9
    K, y = make_svr(n, seed=4)
    z = np.array(data.draw(st.lists(st.floats(-0.5, 1.5), min_size=2 * n, max_size=2 * n))) * C
    c = cert.svr_certificate(K, y, z[:n], z[n:], C=C, epsilon=eps, eta=eta, tau=tau,
                             project=True)
    scale = max(1.0, abs(c.lower), c.scale)
    assert c.gap >= -1e-12 * scale
    assert abs(np.sum(c.alpha_hat - c.alpha_check)) < 1e-12
    h, _ = closed_form_h(K, y, c.alpha_hat, c.alpha_check, eps, eta, tau)
    assert abs(c.lower - h) <= 1e-9 * max(1.0, abs(h))
    b = c.alpha
    G = c.F * K
    f = G @ b + c.bias
    primal = 0.5 * b @ G @ b + C * np.maximum(0, np.abs(y - f) - eps).sum()
    R = eta * np.sum((c.F - 1) ** 2) + tau * eta * np.trace(c.F)
    assert abs(c.upper - (primal + R)) <= 1e-8 * max(1.0, abs(primal + R))


def test_perturbations_have_larger_gap():
    K, y = make_svr(14, seed=6)
    kw = dict(C=1.0, epsilon=0.1, eta=0.5, tau=0.0)
    r = dank_ref.solve_svr(K, y, solver="SCS", **kw)
    b = r.alpha.copy()
    i, j = np.argsort(np.abs(b))[-2:]
    b[i] -= 0.05 * np.sign(b[i])
    b[j] -= 0.05 * np.sign(b[j])
    b -= b.mean()
    c = cert.svr_certificate(K, y, np.maximum(b, 0), np.maximum(-b, 0), **kw)
    assert c.gap > 1e3 * max(r.gap, 1e-14)
    # both ah_i and ac_i positive at one index: the certificate evaluates exactly that pair
    # (h depends on ah + ac through -eps 1'(ah + ac)); it does not normalise it away
    ah, ac = r.alpha_hat.copy(), r.alpha_check.copy()
    k = int(np.argmin(np.abs(r.alpha)))
    ah[k] += 0.01
    ac[k] += 0.01
    c2 = cert.svr_certificate(K, y, ah, ac, **kw)
    np.testing.assert_array_equal(c2.alpha_hat, ah)
    np.testing.assert_array_equal(c2.alpha_check, ac)
    assert not c2.projected and c2.projection_distance == 0.0
    shift = kw["epsilon"] * 0.02  # lin = b'y - eps 1'(ah + ac) drops by eps * 0.02
    assert c2.lower == pytest.approx(r.lower - shift, rel=0, abs=1e-12)
    assert c2.gap == pytest.approx(r.gap + shift, rel=0, abs=1e-12)


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
        warnings.simplefilter("error", dank_ref.InaccurateSolutionWarning)
        r = dank_ref.solve_svr(K, y, C=C, epsilon=eps, eta=eta, tau=tau, solver="SCS",
                               strategy="tight")
    assert r.status == "optimal"
    h, _ = closed_form_h(K, y, r.alpha_hat, r.alpha_check, eps, eta, tau)
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
