"""Tests of P2, DANK in SVR (:func:`dank_fast.solve_svr`)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.svm import SVR
from threadpoolctl import threadpool_limits

from dank_fast import ConvergenceWarning, compute_kernel, solve_svr, svr_certificate
from dank_fast.inner import KernelData
from dank_fast.svr import SVRProblem


@pytest.fixture(autouse=True, scope="module")
def _single_blas_thread():
    with threadpool_limits(limits=1):
        yield


def _data(n=40, seed=0, sigma=0.5):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2))
    y = np.sin(3 * X[:, 0]) + 0.5 * X[:, 1] + 0.1 * rng.normal(size=n)
    return compute_kernel(X, sigma=sigma), y


def test_eta_infinity_is_plain_svr():
    K, y = _data()
    res = solve_svr(K, y, C=1.0, epsilon=0.1, eta=1e9, tau=0.0, tol=1e-10, max_iter=20000)
    svr = SVR(kernel="precomputed", C=1.0, epsilon=0.1, tol=1e-10).fit(K, y)
    d = np.zeros(y.size)
    d[svr.support_] = svr.dual_coef_.ravel()
    assert np.max(np.abs(res.alpha - d)) < 1e-5
    assert abs(res.bias - svr.intercept_[0]) < 1e-5


@pytest.mark.parametrize("tau", [0.0, 0.01, 0.5])
def test_gradient_finite_differences(tau):
    K, y = _data(n=15, seed=1)
    p = SVRProblem(KernelData(K), y, C=1.0, eta=2.0, tau=tau, epsilon=0.1)
    rng = np.random.default_rng(2)
    z = rng.uniform(0, 1, 30)
    g = p.evaluate(z, route="dense").grad
    h = 1e-6
    fd = np.array([
        (p.evaluate(z + h * e, route="dense").h - p.evaluate(z - h * e, route="dense").h)
        / (2 * h)
        for e in np.eye(30)
    ])
    assert np.max(np.abs(fd - g)) < 1e-6 * max(1.0, np.max(np.abs(g)))
    # the paper's Proposition theorgradsvr (second line: -(F o K) d instead of +) is wrong
    n = y.size
    f0 = y - 0.1 - g[:n]  # from grad_ah = y - eps - f0
    paper_ac = -0.1 - f0 - y
    assert np.max(np.abs(paper_ac - g[n:])) > 1e-3


def _direct_gap(K, y, z, C, eps, eta, tau, bias):
    """upper - lower from the definitions (dense F, primal at w = sum d_i phi_i, given b)."""
    n = y.size
    ah, ac = z[:n], z[n:]
    d = ah - ac
    Gam = np.outer(d, d) * K / (4 * eta)
    lam, U = np.linalg.eigh(1.0 + Gam)
    F = (U * np.maximum(lam - tau / 2, 0)) @ U.T
    G = F * K
    R = eta * np.sum((F - 1.0) ** 2) + tau * eta * np.trace(F)
    H = -0.5 * d @ G @ d + y @ d - eps * z.sum() + R
    f = G @ d + bias
    primal = 0.5 * d @ G @ d + C * np.maximum(0, np.abs(y - f) - eps).sum()
    return primal + R - H


@pytest.mark.parametrize("tau", [0.0, 0.1])
def test_certificate_identity_and_behaviour(tau):
    K, y = _data(n=25, seed=3)
    C, eps, eta = 1.0, 0.1, 3.0
    res = solve_svr(K, y, C=C, epsilon=eps, eta=eta, tau=tau, tol=1e-8)
    assert res.success and res.lower <= res.upper and res.rel_gap <= 1e-8
    z = res.extra["z"]
    # the gap formula q + C loss(b) - lin equals upper - lower from the definitions
    cert = res.certificate
    assert abs(_direct_gap(K, y, z, C, eps, eta, tau, cert.bias) - cert.gap) < 1e-8
    # a feasible perturbation increases the gap
    rng = np.random.default_rng(0)
    p = SVRProblem(KernelData(K), y, C, eta, tau, eps)
    zp = p.project(z + 0.05 * rng.normal(size=z.size))
    cp = svr_certificate(K, y, zp[:25], zp[25:], C=C, epsilon=eps, eta=eta, tau=tau)
    assert cp.lower <= cp.upper
    assert cp.gap > 10 * cert.gap
    assert abs(_direct_gap(K, y, zp, C, eps, eta, tau, cp.bias) - cp.gap) < 1e-8
    # the certified upper bounds hold each other: both bracket the same v*
    assert cp.lower <= cert.upper + 1e-9 and cert.lower <= cp.upper + 1e-9


def test_feasible_and_split():
    K, y = _data()
    res = solve_svr(K, y, C=0.5, epsilon=0.05, eta=5.0)
    ah, ac = res.extra["alpha_hat"], res.extra["alpha_check"]
    assert np.allclose(res.alpha, ah - ac)
    assert abs(res.alpha.sum()) < 1e-9
    assert ah.min() >= 0 and ac.min() >= 0 and max(ah.max(), ac.max()) <= 0.5
    f = res.apply_FK(res.alpha) + res.bias  # decision on the training points
    assert np.corrcoef(f, y)[0, 1] > 0.9


def test_paper_method_runs_and_is_certified():
    K, y = _data(n=20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = solve_svr(K, y, C=1.0, epsilon=0.1, eta=2.0, method="paper", max_iter=200)
    p = SVRProblem(KernelData(K), y, 1.0, 2.0, 0.01, 0.1)
    assert res.extra["L"] == pytest.approx(2 * p.lipschitz_theorem())
    assert res.lower <= res.upper and res.status in ("stopped", "max_iter")


def test_constant_targets_are_trivial():
    K, _ = _data(n=10)
    res = solve_svr(K, np.full(10, 2.5), C=1.0, epsilon=0.1, eta=1.0)
    assert np.all(res.alpha == 0) and res.bias == pytest.approx(2.5)
    assert res.gap <= 1e-12


@pytest.mark.parametrize(
    "kw, err",
    [
        ({"epsilon": -0.1}, ValueError),
        ({"C": 0.0}, ValueError),
        ({"eta": 0.0}, ValueError),
        ({"tau": -1.0}, ValueError),
        ({"method": "bogus"}, ValueError),
        ({"max_iter": 0}, ValueError),
    ],
)
def test_bad_parameters(kw, err):
    K, y = _data(n=8)
    args = {"C": 1.0, "epsilon": 0.1, "eta": 1.0}
    args.update(kw)
    with pytest.raises(err):
        solve_svr(K, y, **args)


def test_bad_targets():
    K, y = _data(n=8)
    y2 = y.copy()
    y2[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        solve_svr(K, y2, C=1.0, epsilon=0.1, eta=1.0)
    with pytest.raises(ValueError, match="entries"):
        solve_svr(K, y[:5], C=1.0, epsilon=0.1, eta=1.0)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(2, 12),
    seed=st.integers(0, 10_000),
    C=st.floats(0.05, 10.0),
    eps=st.floats(0.0, 0.5),
    eta=st.floats(0.1, 100.0),
    tau=st.sampled_from([0.0, 0.01, 0.3]),
)
def test_hypothesis_instances(n, seed, C, eps, eta, tau):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = rng.normal(size=n)
    K = compute_kernel(X, sigma=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = solve_svr(K, y, C=C, epsilon=eps, eta=eta, tau=tau, tol=1e-7)
    assert res.lower <= res.upper + 1e-12
    assert res.gap >= -1e-9 * max(1.0, abs(res.lower))
    z = res.extra["z"]
    assert z.min() >= 0 and z.max() <= C and abs(res.alpha.sum()) <= 1e-9 * max(1, C * n)
    if res.success:
        assert res.rel_gap <= 1e-7


def test_agrees_with_reference():  # ~1 s
    import dank_ref

    K, y = _data(n=10, seed=4)
    kw = {"C": 1.0, "epsilon": 0.1, "eta": 2.0, "tau": 0.01}
    ref = dank_ref.solve_svr(K, y, **kw)
    res = solve_svr(K, y, tol=1e-9, **kw)
    # both certified brackets contain v*
    assert abs(ref.lower - res.lower) <= ref.gap + res.gap + 1e-6
    assert max(ref.lower, res.lower) <= min(ref.upper, res.upper) + 1e-9
