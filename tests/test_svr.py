"""Tests of P2, DANK in SVR (:func:`dank_fast.solve_svr`)."""

from __future__ import annotations

import math
import re
import warnings

import numpy as np
import pytest
from _fuzz_known import present
from _fuzz_strategies import (
    assert_bracket,
    assert_feasible,
    assert_overlap,
    bad_params,
    call,
    fuzz,
    iteration_limits,
    kernel_rule,
    kernels,
    nonneg_scalars,
    positive_scalars,
    real_targets,
    record,
    ref_bracket,
    scalar_rule,
    targets_rule,
    tolerances,
)
from _solver_fuzz import (
    alpha0_rule,
    draw_alpha0,
    huge_start_for_paper,
    iteration_limit,
    method_choices,
    method_rule,
    scalar_verdict,
    solver_range_rule,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.svm import SVR
from threadpoolctl import threadpool_limits

from dank_fast import (
    ConvergenceWarning,
    compute_kernel,
    solve_svr,
    svr_certificate,
)
from dank_fast.inner import KernelData
from dank_fast.svr import METHODS as SVR_METHODS
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
    p = SVRProblem(KernelData(K), y, C=1.0, eta=2.0, tau=tau, epsilon=0.1, route="dense")
    rng = np.random.default_rng(2)
    z = rng.uniform(0, 1, 30)
    g = p.evaluate(z).grad
    h = 1e-6
    fd = np.array([
        (p.evaluate(z + h * e).h - p.evaluate(z - h * e).h)
        / (2 * h)
        for e in np.eye(30)
    ])
    assert np.max(np.abs(fd - g)) < 1e-6 * max(1.0, np.max(np.abs(g)))
    # the paper's Proposition 9 (second line: -(F o K) d instead of +) is wrong
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


def test_svr_default_is_newton_and_certifies_a_scaled_linear_kernel():
    """solve_svr's default is "auto" (newton), as for solve_svm: on a 50-point linear kernel
    scaled by 1e6 newton certifies, where accelerated is still far from it after 5,000
    iterations."""
    from dank_fast import solve_svr

    rng = np.random.default_rng(0)
    X = np.sort(rng.uniform(-1.0, 1.0, (50, 1)), axis=0)
    y = np.sin(3.0 * X[:, 0]) + 0.1 * rng.standard_normal(50)
    K = 1e6 * (X @ X.T)
    res = solve_svr(K, y, C=1.0, epsilon=0.05, eta=10.0, tau=0.01)
    assert res.method == "auto" and res.success and res.rel_gap <= 1e-6, res.message


@pytest.mark.parametrize("C", [0.5, 32.0])
@pytest.mark.parametrize("tau", [0.0, 0.01])
def test_auto_starts_from_the_plain_svr_solution(C, tau):
    """method="auto": Newton from the plain SVR's dual it computes itself (the counterpart of
    solve_svm's SVC start); the same certified value as Newton from zero; a given alpha0 is
    used instead of the SVR fit."""
    K, y = _data(60, 4)
    kw = dict(C=C, epsilon=0.05, eta=3.0, tau=tau, tol=1e-9)
    res = solve_svr(K, y, **kw)
    assert res.method == "auto" and res.extra["warm_start"] == "svr"
    assert res.success and res.rel_gap <= 1e-9
    cold = solve_svr(K, y, method="newton", **kw)
    assert cold.success and "warm_start" not in cold.extra
    assert res.lower <= cold.upper + 1e-12 * abs(cold.upper)
    assert cold.lower <= res.upper + 1e-12 * abs(res.upper)
    again = solve_svr(K, y, alpha0=res.extra["z"], **kw)
    assert again.extra["warm_start"] == "given" and again.success


def test_auto_start_from_a_stopped_plain_svr_warns_and_certifies():
    """7 points, linear kernel of scale 4.7e6, C = 1e4: libsvm's SVR stops at its iteration
    limit; the warning says the warm start is approximate, and Newton from that approximate dual
    certifies."""
    x = np.array([310.71254466, 1860.75246417, -22.67144402, -309.10095833, -1413.24878229,
                  -513.01608223, 2178.7127426])
    y = np.sin(x / 500)
    with pytest.warns(ConvergenceWarning, match="plain SVR of the warm start stopped"):
        res = solve_svr(np.outer(x, x), y, C=1e4, epsilon=0.01, eta=1.0)
    assert res.success and res.extra["warm_start"] == "svr"


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


# --------------------------------------------------------------------------- solve_svr
@fuzz(50)
@given(data=st.data())
def test_fuzz_solve_svr(data):
    bad = data.draw(bad_params("K", "y", "C", "eta", "tau", "epsilon", "tol", "method",
                               "max_iter", "alpha0"), label="corrupted")
    K = data.draw(kernels(good="K" not in bad), label="K")
    vK, Ks = kernel_rule(K)
    n = Ks.shape[0] if Ks is not None else data.draw(st.integers(1, 6))
    y = data.draw(real_targets(n, good="y" not in bad), label="y")
    C = data.draw(positive_scalars(good="C" not in bad), label="C")
    eta = data.draw(positive_scalars(good="eta" not in bad), label="eta")
    tau = data.draw(nonneg_scalars(good="tau" not in bad), label="tau")
    epsilon = data.draw(nonneg_scalars(good="epsilon" not in bad), label="epsilon")
    tol = data.draw(tolerances(good="tol" not in bad), label="tol")
    method = data.draw(method_choices(SVR_METHODS, "method" not in bad), label="method")
    max_iter = iteration_limit(
        data.draw(iteration_limits(good="max_iter" not in bad), label="max_iter"), method, tol)
    alpha0 = draw_alpha0(data.draw, data.draw(st.sampled_from([n, 2 * n])), "alpha0" not in bad)

    v = method_rule(method, SVR_METHODS).merge(vK)
    v.merge(targets_rule(y, n if Ks is not None else None))
    v.merge(scalar_verdict(C, eta, tau, tol, max_iter))
    v.merge(scalar_rule(epsilon, "epsilon", "nonneg"))
    v.merge(alpha0_rule(alpha0, [(n,), (2 * n,)]))
    v.merge(solver_range_rule(Ks, C, eta, n))

    if v.valid and (huge_start_for_paper(method, alpha0) or (
            method in ("paper", "paper-monotone") and not np.any(Ks)
            and present("svr-paper-zero-kernel"))):
        record("solve_svr", "known-bug")
        return
    res, _ = call("solve_svr", v, lambda: solve_svr(
        K, y, C=C, epsilon=epsilon, eta=eta, tau=tau, method=method, tol=tol,
        max_iter=max_iter, alpha0=alpha0))
    if res is None:
        return
    C, eta, tau, epsilon = float(C), float(eta), float(tau), float(epsilon)
    z = res.extra["z"]
    assert z.shape == (2 * n,) and np.all(np.isfinite(z))
    assert np.array_equal(res.alpha, z[:n] - z[n:])
    assert_bracket(res.lower, res.upper, "solve_svr")
    assert_feasible(z, C, n, np.concatenate([np.ones(n), -np.ones(n)]), "[ah; ac]")
    if res.status == "converged":
        assert res.rel_gap <= float(tol) * (1 + 1e-9)
    assert math.isfinite(res.bias)
    ref, scale = ref_bracket("svr", Ks, y, z, C=C, eta=eta, tau=tau, epsilon=epsilon)
    assert_overlap((res.lower, res.upper), ref, scale, "solve_svr vs dank_ref")


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


# --------------------------------------------------------------------------- validation, scaling
def _feasible(res, C, tol_factor=1e-9):
    z = res.extra["z"]
    n = z.size // 2
    viol = max(abs(z[:n].sum() - z[n:].sum()), -z.min(), z.max() - C)
    return viol <= tol_factor * C * np.sqrt(n)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"eta": 1e-300}, r"eta / \(C\^2 \* max\|K\|\) = 1e-300"),
        ({"eta": 1e300}, r"eta / \(C\^2 \* max\|K\|\) = 1e\+300"),
        ({"C": 1e-300}, r"C \* max\|K\| \* n = 1\.6e-299"),
    ],
)
def test_outside_the_representable_range_is_refused(kw, match):
    """eta = 1e-300 / 1e300 and C = 1e-300 are refused by name (no ZeroDivision/Overflow/
    LinAlgError)."""
    K, y = _data(n=16)
    args = {"C": 1.0, "epsilon": 0.1, "eta": 1.0, **kw}
    with pytest.raises(ValueError, match="representable range") as info:
        solve_svr(K, y, **args)
    msg = str(info.value)
    assert re.search(match, msg), msg
    assert "C = " in msg and "eta = " in msg and "max|K| = 1" in msg


# (C, kernel scale s, eta) inside the representable range, with an equivalent moderate
# instance (K, C s, eta s) by v*(sK, C, eta) = v*(K, sC, s eta) / s
IN_RANGE_EXTREMES = [
    (1.0, 1e-90, 1.0),  # C max|K| n ~ 1e-89
    (1e40, 1e-40, 1e40),  # kernel 1e-40, C 1e40
    (1e-95, 1.0, 1e-100),  # C max|K| n ~ 1e-94: the projection keeps 1'(ah - ac) = 0
    (1.0, 1.0, 1e90),  # eta / (C^2 max|K|) = 1e90
    (1e-300, 1e290, 1e-300),
    (1e5, 1e-100, 1e-105),
]


@pytest.mark.parametrize("C, s, eta", IN_RANGE_EXTREMES)
@pytest.mark.parametrize("method, tol", [("newton", 1e-7), ("accelerated", 1e-6)])
def test_in_range_extremes_are_solved_and_certified(C, s, eta, method, tol):
    K, y = _data(n=20, seed=5)
    res = solve_svr(s * K, y, C=C, epsilon=0.1, eta=eta, method=method, tol=tol, max_iter=3000)
    assert res.success and res.rel_gap <= tol
    assert _feasible(res, C)
    assert np.all(np.isfinite(res.alpha)) and np.isfinite(res.bias)
    scale = max(abs(res.lower), abs(res.upper))
    assert res.lower <= res.upper + 1e-12 * scale  # never lower > upper (seen at C = 1e-95)
    assert res.gap <= 10 * tol * scale  # the bracket is tight relative to the value itself
    # the certificate of the returned point, recomputed from scratch on the given data
    # (svr_certificate squares eta in Python floats: see the xfail test below)
    if 1e-150 < eta < 1e150:
        ah, ac = res.extra["alpha_hat"], res.extra["alpha_check"]
        cert = svr_certificate(s * K, y, ah, ac, C=C, epsilon=0.1, eta=eta, tau=0.01)
        assert cert.lower == pytest.approx(res.lower, rel=1e-9)
        assert cert.upper == pytest.approx(res.upper, rel=1e-9)
    # the equivalent moderate instance brackets the same v* (times s)
    mod = solve_svr(K, y, C=C * s, epsilon=0.1, eta=eta * s, method=method, tol=tol,
                    max_iter=3000)
    lo = max(res.lower, mod.lower / s)
    hi = min(res.upper, mod.upper / s)
    assert lo <= hi + 1e-9 * scale


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_certificate_from_scratch_at_tiny_eta_in_range():
    """svr_certificate on an in-range instance with eta = 1e-300 (eta**2 underflows): it
    certifies on the exactly rescaled canonical instance (no ZeroDivisionError)."""
    K, y = _data(n=20, seed=5)
    C, s, eta = 1e-300, 1e290, 1e-300  # C max|K| n = 2e-9, eta / (C^2 max|K|) = 1e-10
    res = solve_svr(s * K, y, C=C, epsilon=0.1, eta=eta, method="newton", tol=1e-7)
    assert res.success
    cert = svr_certificate(s * K, y, res.extra["alpha_hat"], res.extra["alpha_check"], C=C,
                           epsilon=0.1, eta=eta, tau=0.01)
    assert cert.lower == pytest.approx(res.lower, rel=1e-9)


@pytest.mark.parametrize("k", [-30, -3, 5, 12])
@pytest.mark.parametrize("tau", [0.0, 0.01])
def test_power_of_two_rescaling_is_exact(k, tau):
    """v*(sK, C, eta) = v*(K, sC, s eta)/s, a* likewise: bit for bit when s = 2^k."""
    K, y = _data(n=25, seed=6)
    s = 2.0**k
    kw = {"epsilon": 0.05, "tau": tau, "tol": 1e-8, "method": "newton"}
    a = solve_svr(s * K, y, C=0.7, eta=3.0, **kw)
    b = solve_svr(K, y, C=0.7 * s, eta=3.0 * s, **kw)
    np.testing.assert_array_equal(a.alpha * s, b.alpha)
    np.testing.assert_array_equal(a.extra["z"] * s, b.extra["z"])
    assert (a.lower * s, a.upper * s, a.gap * s) == (b.lower, b.upper, b.gap)
    assert a.bias == b.bias and a.rel_gap == b.rel_gap
    assert a.certificate.infeasibility * s == b.certificate.infeasibility
    np.testing.assert_array_equal(a.F, b.F)
    # decision values (F o K) d are invariant: (F o sK)(d / s) = (F o K) d
    np.testing.assert_array_equal(a.apply_FK(a.alpha), b.apply_FK(b.alpha))


@pytest.mark.parametrize("tau", [0.0, 0.05])
@pytest.mark.parametrize("method", ["newton", "paper"])
def test_rescaled_result_describes_the_given_problem(tau, method):
    """A linear kernel (max|K| != 1) is solved in canonical form; everything is mapped back."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(20, 3)) * 3.0
    y = X @ np.array([1.0, -2.0, 0.5]) + rng.normal(size=20)
    K = compute_kernel(X, kernel="linear")
    C, eps, eta = 2.0, 0.2, 40.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = solve_svr(K, y, C=C, epsilon=eps, eta=eta, tau=tau, method=method, max_iter=300)
    assert res.extra["rescale"] != 1.0  # the canonical instance was used
    assert _feasible(res, C)
    ah, ac = res.extra["alpha_hat"], res.extra["alpha_check"]
    np.testing.assert_array_equal(res.alpha, ah - ac)
    cert = svr_certificate(K, y, ah, ac, C=C, epsilon=eps, eta=eta, tau=tau)
    assert cert.lower == pytest.approx(res.lower, rel=1e-10, abs=1e-12)
    assert cert.upper == pytest.approx(res.upper, rel=1e-10, abs=1e-12)
    # F and F o K are those of the given K and eta (the tau = 0 form keeps d, eta and K)
    d = res.alpha
    Gam = np.outer(d, d) * K / (4 * eta)
    lam, U = np.linalg.eigh(1.0 + Gam)
    F = (U * np.maximum(lam - tau / 2, 0)) @ U.T
    np.testing.assert_allclose(res.F, F, atol=1e-9 * np.abs(F).max())
    np.testing.assert_allclose(res.apply_FK(d), (F * K) @ d, atol=1e-8 * np.abs(K).max())
    if method == "paper":  # the printed stopping rule ||a_t - a_{t-1}|| <= 1e-4 on a itself
        assert res.extra["L"] == pytest.approx(
            2 * SVRProblem(KernelData(K), y, C, eta, tau, eps).lipschitz_theorem(), rel=1e-12)


@pytest.mark.parametrize("method", ["accelerated", "newton", "paper", "paper-monotone", "pgm"])
def test_certifies_exactly_the_returned_point(method):
    """solve_svr's bounds are the certificate of the point it returns, not of its normalised point.

    dank_fast certifies the point it returns; the certificate of the normalised point
    (min(ah_i, ac_i) removed from both) is higher by exactly 2 eps sum_i min(ah_i, ac_i), with
    the same upper bound.
    """
    K, y = _data(n=20, seed=8)
    eps, C, eta, tau = 0.1, 1.0, 5.0, 0.01
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = solve_svr(K, y, C=C, epsilon=eps, eta=eta, tau=tau, method=method, max_iter=300)
    ah, ac = res.extra["alpha_hat"], res.extra["alpha_check"]
    cert = svr_certificate(K, y, ah, ac, C=C, epsilon=eps, eta=eta, tau=tau)
    assert cert.lower == pytest.approx(res.lower, rel=1e-12, abs=1e-14)
    assert cert.upper == pytest.approx(res.upper, rel=1e-12, abs=1e-14)
    overlap = np.minimum(ah, ac)
    assert res.extra["overlap"] == pytest.approx(overlap.sum(), rel=1e-12, abs=1e-300)
    norm = svr_certificate(K, y, ah - overlap, ac - overlap, C=C, epsilon=eps, eta=eta, tau=tau)
    assert norm.lower - cert.lower == pytest.approx(2 * eps * overlap.sum(), rel=1e-9, abs=1e-12)
    assert norm.upper == pytest.approx(cert.upper, rel=1e-12)
    if method == "paper":  # the printed method does leave ah_i, ac_i > 0 together
        assert overlap.sum() > 0.1


def test_projection_keeps_the_equality_when_steps_dwarf_C():
    """SVRProblem.project is feasible even when z >> C (breakpoints z_i - C round to z_i)."""
    rng = np.random.default_rng(9)
    n, C = 6, 1e-95
    p = SVRProblem(KernelData(np.eye(n)), np.zeros(n), C, 1.0, 0.0, 0.1)
    for _ in range(20):
        z = rng.normal(size=2 * n) * 0.05
        x = p.project(z)
        assert x.min() >= 0.0 and x.max() <= C
        assert abs(x[:n].sum() - x[n:].sum()) <= 1e-12 * C
        np.testing.assert_allclose(x, _exact_projection(z, p.s, C), rtol=0, atol=1e-12 * C)


def test_projection_is_project_A_in_the_normal_case():
    from dank_fast import project_A

    rng = np.random.default_rng(10)
    n = 15
    p = SVRProblem(KernelData(np.eye(n)), np.zeros(n), 1.0, 1.0, 0.0, 0.1)
    for _ in range(20):
        z = rng.normal(size=2 * n)
        np.testing.assert_array_equal(p.project(z), project_A(z, p.s, 1.0))


def _exact_projection(z, e, C):
    """Euclidean projection onto {0 <= x <= C, e'x = 0} in exact rational arithmetic."""
    from fractions import Fraction

    zq = [Fraction(float(v)) for v in z]
    Cq = Fraction(float(C))
    eq = [int(v) for v in e]

    def x_of(lam):
        return [min(max(zi - lam * ei, Fraction(0)), Cq) for zi, ei in zip(zq, eq, strict=True)]

    def phi(lam):
        return sum(ei * xi for ei, xi in zip(eq, x_of(lam), strict=True))

    breaks = sorted({zi * ei for zi, ei in zip(zq, eq, strict=True)}
                    | {(zi - Cq) * ei for zi, ei in zip(zq, eq, strict=True)})
    # phi is non-increasing and piecewise linear: find the piece holding its root
    vals = [phi(t) for t in breaks]
    for t0, t1, f0, f1 in zip(breaks[:-1], breaks[1:], vals[:-1], vals[1:], strict=True):
        if f0 >= 0 >= f1:
            lam = t0 if f0 == f1 else t0 + (t1 - t0) * f0 / (f0 - f1)
            return np.array([float(v) for v in x_of(lam)])
    lam = breaks[0] if vals[0] <= 0 else breaks[-1]
    return np.array([float(v) for v in x_of(lam)])


@pytest.mark.parametrize(
    "kw, exc, match",
    [
        ({"y": np.array([1.0 + 1j] * 8)}, TypeError, "y must be a real numeric array"),
        ({"y": np.ones(8, dtype=bool)}, TypeError, "booleans"),
        ({"alpha0": np.zeros(8) + 0j}, TypeError, "alpha0 must be a real numeric array"),
        ({"alpha0": np.zeros(5)}, ValueError, r"alpha0 must be a finite array of shape"),
        ({"alpha0": np.full(8, np.nan)}, ValueError, "alpha0 contains NaN"),
        ({"C": True}, TypeError, "C must be a real number"),
        ({"epsilon": "0.1"}, TypeError, "epsilon must be a real number"),
        ({"max_iter": 2.0}, TypeError, "max_iter must be an integer"),
        ({"tol": 0.0}, ValueError, "tol must be a finite number > 0"),
        ({"eps": -1.0, "method": "paper"}, ValueError, "eps must be a finite number >= 0"),
    ],
)
def test_bad_inputs_name_the_problem(kw, exc, match):
    K, y = _data(n=8)
    args = {"C": 1.0, "epsilon": 0.1, "eta": 1.0, "y": y, **kw}
    y = args.pop("y")
    with pytest.raises(exc, match=match):
        solve_svr(K, y, **args)


def test_zero_kernel_is_valid_and_solved():
    y = np.linspace(-1, 1, 10)
    res = solve_svr(np.zeros((10, 10)), y, C=1.0, epsilon=0.1, eta=1.0, tol=1e-9)
    assert res.success and res.lower <= res.upper + 1e-12


# solve_svr: the paper's methods take a 1e200 warm start and K = 0 (where the step 1/(2L) is
# inf); K = 0 with extreme C / eta


@pytest.mark.parametrize("method", ["paper", "paper-monotone", "pgm"])
def test_paper_methods_accept_a_huge_svr_warm_start(method):
    res = solve_svr(np.eye(3), np.array([1.0, -1.0, 1.0]), C=1.0, eta=1.0, tau=0.5,
                    epsilon=0.1, method=method, alpha0=np.array([1e200, -1e200, 1e200]),
                    max_iter=5)
    assert np.isfinite(res.lower) and np.isfinite(res.upper) and res.lower <= res.upper


# --------------------------------------------------------------------------- SVR, K = 0
@pytest.mark.parametrize("method", ["paper", "paper-monotone"])
@pytest.mark.parametrize("C", [1.0, 1e-3, 1e4])
def test_svr_paper_methods_solve_a_zero_kernel(method, C):
    """K = 0: Theorem 10's L is 0 and the printed step 1/(2L) is inf (which must not end
    in LinAlgError, IndexError, NaN). h is then affine (F does not depend on d), so any L > 0 is
    valid; with the exact projection and the ascent sign the optimum (here y'd = C, ah_3 = C) is
    certified within a few iterations, and the printed variant still returns a finite bracket."""
    K, y = np.zeros((3, 3)), np.array([0.0, 0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve_svr(K, y, C=C, eta=1.0, tau=1.0, epsilon=0.0, method=method, max_iter=20,
                      projection="exact", beta_sign="ascent")
        printed = solve_svr(K, y, C=C, eta=1.0, tau=1.0, epsilon=0.0, method=method,
                            max_iter=20)
    assert r.extra["L"] > 0 and np.isfinite(r.extra["L"])
    # v* = max y'd + eta (n^2 - ||J_{1/2}(11')||^2) = C + (9 - (3 - 1/2)^2)
    v_star = C + 9.0 - 2.5**2
    assert r.lower <= v_star * (1 + 1e-12) and r.upper >= v_star * (1 - 1e-12)
    assert r.gap <= 1e-9 * v_star
    assert np.isfinite(printed.lower) and printed.lower <= printed.upper


# --------------------------------------------------------------- K = 0 with extreme C / eta
# With K = 0, F(a) = J_{tau/2}(11') for every a: a* does not depend on eta, and the solvers work
# at eta' = C, then certify at the true eta (dank_fast._scaling.recertify_zero_kernel), so
# C = 1e155 with eta = 1e-169 is certified (not max_iter with a rel. gap of 1e137, nor a
# LinAlgError).
_ZERO_K_SCALES = [(1e155, 1e-169), (1e-300, 1e300), (1e300, 1e-300), (1e140, 1e-140), (1.0, 1e-300)]


@pytest.mark.parametrize("C, eta", _ZERO_K_SCALES)
@pytest.mark.parametrize("method", ["newton", "accelerated"])
def test_zero_kernel_svr_extreme_scales_are_certified(C, eta, method):
    y = np.array([0.0, 1.0, 2.0, 3.0, 5.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve_svr(np.zeros((5, 5)), y, C=C, epsilon=0.1, eta=eta, method=method)
    assert r.status == "converged" and r.rel_gap <= 1e-6
    assert np.isfinite(r.lower) and r.lower <= r.upper
    # K = 0: the LP max d'y - eps 1'|d|, 1'd = 0, |d| <= C pairs the largest and smallest
    # targets: d = C (-1, -1, 0, 1, 1) gives (3 + 5 - 0 - 1) C - 4 eps C
    d = r.extra["alpha_hat"] - r.extra["alpha_check"]
    assert d @ y - 0.1 * np.abs(d).sum() == pytest.approx(6.6 * C, rel=1e-9)
