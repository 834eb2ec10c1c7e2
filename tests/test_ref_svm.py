"""Tests of dank_ref.solve_svm (P1, eq. mainrank) and its certificate."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import dank_ref
from dank_ref import certificate as cert
from dank_ref.svm import run_conic

SOLVERS = ["SCS", "CLARABEL"]


def make_svm(n, d=2, seed=0, width=0.7, balance=0.5, dup=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    if dup:
        X[-dup:] = X[:dup]
    score = X[:, 0] + 0.3 * rng.normal(size=n)
    y = np.where(score > np.quantile(score, 1 - balance), 1.0, -1.0)
    if np.all(y == y[0]):
        y[0] = -y[0]
    if dup:  # duplicates keep their label (consistent duplicates)
        y[-dup:] = y[:dup]
        if np.all(y == y[0]):
            y[dup] = -y[dup]
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    K = np.exp(-sq / (2 * width**2))
    return K, y


def closed_form_h(K, y, a, eta, tau):
    """Straightforward numpy: F(a) = soft-threshold eig of 11' + Gamma; h = H(a, F(a))."""
    d = a * y
    M = np.ones_like(K) + np.outer(d, d) * K / (4 * eta)
    lam, U = np.linalg.eigh(M)
    F = (U * np.maximum(lam - tau / 2, 0)) @ U.T
    H = a.sum() - 0.5 * d @ (F * K) @ d + eta * np.sum((F - 1) ** 2) + tau * eta * np.trace(F)
    return H, F


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("tau", [0.0, 0.1])
def test_sdp_value_equals_closed_form(solver, tau):
    K, y = make_svm(16, seed=3)
    r = dank_ref.solve_svm(K, y, C=1.0, eta=0.7, tau=tau, solver=solver, strategy="tight")
    h, F = closed_form_h(K, y, r.alpha, 0.7, tau)
    conic = r.solver_stats["conic_value"]
    assert r.status == "optimal"
    assert abs(conic - h) <= 1e-6 * abs(h)  # strong duality (SD) to solver tolerance
    assert abs(r.value - h) <= 1e-10 * abs(h)
    assert r.lower <= h + 1e-10 * abs(h) <= r.upper + 2e-10 * abs(h)
    np.testing.assert_allclose(r.F, F, atol=1e-10)
    assert r.rel_gap <= 1e-9
    assert abs(y @ r.alpha) <= 1e-12 and r.alpha.min() >= 0 and r.alpha.max() <= 1.0


def test_raw_dual_recovery_matches_polished():
    """a* = -z/zeta from the LMI multiplier is already close to the certified optimum."""
    K, y = make_svm(14, seed=5)
    raw = dank_ref.solve_svm(K, y, C=2.0, eta=0.5, tau=0.05, solver="SCS", polish=False)
    pol = dank_ref.solve_svm(K, y, C=2.0, eta=0.5, tau=0.05, solver="SCS", polish=True)
    assert abs(raw.solver_stats["zeta"] - 0.5) < 1e-6
    np.testing.assert_allclose(raw.alpha, pol.alpha, atol=1e-5)
    assert pol.gap <= raw.gap


@pytest.mark.parametrize("seed", [0, 1])
def test_eta_infinity_reproduces_sklearn_svc(seed):
    from sklearn.svm import SVC

    K, y = make_svm(24, seed=seed, width=0.5)
    C = 1.0
    m = SVC(kernel="precomputed", C=C, tol=1e-10).fit(K, y)
    a_sk = np.zeros(len(y))
    a_sk[m.support_] = m.dual_coef_[0] * y[m.support_]
    free = (a_sk > 1e-6) & (a_sk < C - 1e-6)
    assert free.sum() >= 1  # bias determined by a free SV => unique intercept
    r = dank_ref.solve_svm(K, y, C=C, eta=1e6, tau=0.0, solver="CLARABEL")
    assert r.status == "optimal"
    np.testing.assert_allclose(r.alpha, a_sk, rtol=0, atol=1e-5 * C)
    coef = np.zeros(len(y))
    coef[m.support_] = m.dual_coef_[0]
    np.testing.assert_allclose(r.alpha * y, coef, rtol=0, atol=1e-5 * C)
    assert abs(r.bias - m.intercept_[0]) <= 1e-5 * max(1.0, abs(m.intercept_[0]))


@st.composite
def feasible_alpha(draw, n, y, C):
    z = np.array(draw(st.lists(st.floats(-0.5, 1.5), min_size=n, max_size=n))) * C
    return cert.project_box_hyperplane(z, y, C)[0]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    tau=st.sampled_from([0.0, 0.05, 0.5]),
    eta=st.floats(0.05, 50.0),
    C=st.floats(0.1, 10.0),
)
def test_certificate_lower_le_upper(data, tau, eta, C):
    K, y = make_svm(10, seed=11)
    a = data.draw(feasible_alpha(10, y, C))
    c = cert.svm_certificate(K, y, a, C=C, eta=eta, tau=tau)
    scale = max(1.0, abs(c.lower), float(np.sum(a)))
    assert c.gap >= -1e-12 * scale
    assert c.lower <= c.upper + 1e-12 * scale
    h, _ = closed_form_h(K, y, c.alpha, eta, tau)
    assert abs(c.lower - h) <= 1e-9 * max(1.0, abs(h))
    # upper bound: the smaller of two primal points, plus R(F): the expansion at the best bias,
    # and the hard-margin point (w / m*, beta / m*), m* = max_beta min_i y_i (g_i + beta) > 0
    # (an LP here, independent of dank_ref's closed form), hinge 0 there
    d = c.alpha * y
    G = c.F * K
    g = G @ d
    q = float(d @ g)
    primal = 0.5 * q + C * np.maximum(0, 1 - y * (g + c.bias)).sum()
    lp = linprog([0.0, -1.0], A_ub=np.column_stack([-y, np.ones_like(y)]), b_ub=y * g,
                 bounds=[(None, None), (None, None)], method="highs")
    if lp.status == 0 and -lp.fun > 0 and q > 0:
        primal = min(primal, 0.5 * q / lp.fun**2)
    R = eta * np.sum((c.F - 1) ** 2) + tau * eta * np.trace(c.F)
    assert abs(c.upper - (primal + R)) <= 1e-8 * max(1.0, abs(primal + R))


def test_certificate_brackets_solution_and_perturbations_worse():
    K, y = make_svm(16, seed=7)
    C, eta, tau = 1.0, 0.8, 0.05
    r = dank_ref.solve_svm(K, y, C=C, eta=eta, tau=tau, solver="SCS")
    rng = np.random.default_rng(0)
    for _ in range(5):
        a = cert.project_box_hyperplane(rng.uniform(0, C, 16), y, C)[0]
        c = cert.svm_certificate(K, y, a, C=C, eta=eta, tau=tau)
        assert c.lower <= r.upper + 1e-10 and r.lower <= c.upper + 1e-10
        assert c.gap > r.gap
    # sign flip of one label: the solution of the perturbed problem is worse here
    y2 = y.copy()
    j = int(np.argmax(r.alpha))
    y2[j] = -y2[j]
    r2 = dank_ref.solve_svm(K, y2, C=C, eta=eta, tau=tau, solver="SCS")
    c2 = cert.svm_certificate(K, y, r2.alpha, C=C, eta=eta, tau=tau, project=True)
    assert c2.gap > 1e3 * max(r.gap, 1e-14)
    # shifted bias: the primal hinge sum is larger away from the exact best bias
    d = r.alpha * y
    g = (r.F * K) @ d

    def hinge(b):
        return np.maximum(0, 1 - y * (g + b)).sum()

    for delta in (1e-3, -1e-3, 0.1, -0.1):
        assert hinge(r.bias + delta) >= hinge(r.bias) - 1e-12
    # infeasible alpha: rejected without projection, projected (and worse) with it
    bad = r.alpha.copy()
    bad[0] += 0.3
    with pytest.raises(ValueError, match="infeasible"):
        cert.svm_certificate(K, y, bad, C=C, eta=eta, tau=tau, project=False)
    cb = cert.svm_certificate(K, y, bad, C=C, eta=eta, tau=tau, project=True)
    assert cb.projected and cb.projection_distance > 0.05 and cb.gap > r.gap
    assert cb.infeasibility <= 1e-9 * C * np.sqrt(16)


def test_projection_exact():
    rng = np.random.default_rng(1)
    y = np.where(rng.uniform(size=12) > 0.4, 1.0, -1.0)
    z = rng.normal(size=12)
    x, _ = cert.project_box_hyperplane(z, y, 0.7)
    v = cp.Variable(12)
    cp.Problem(cp.Minimize(cp.sum_squares(v - z)), [v >= 0, v <= 0.7, y @ v == 0]).solve(
        solver="CLARABEL"
    )
    np.testing.assert_allclose(x, v.value, atol=1e-6)
    assert np.sum((x - z) ** 2) <= np.sum((np.clip(v.value, 0, 0.7) - z) ** 2) + 1e-12
    assert abs(y @ x) < 1e-14


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(6, 14),
    d=st.integers(1, 3),
    C=st.floats(0.1, 10.0),
    eta=st.floats(0.05, 100.0),
    tau=st.sampled_from([0.0, 0.01, 0.3]),
    width=st.floats(0.2, 2.0),
    balance=st.floats(0.25, 0.75),
    dup=st.integers(0, 2),
    seed=st.integers(0, 10_000),
)
def test_property_tiny_instances(n, d, C, eta, tau, width, balance, dup, seed):
    K, y = make_svm(n, d=d, seed=seed, width=width, balance=balance, dup=dup)
    with warnings.catch_warnings():
        warnings.simplefilter("error", dank_ref.InaccurateSolutionWarning)
        r = dank_ref.solve_svm(K, y, C=C, eta=eta, tau=tau, solver="SCS", strategy="tight")
    assert r.status == "optimal" and r.rel_gap <= 1e-6
    assert r.gap >= -1e-10 * max(1.0, abs(r.value))
    h, _ = closed_form_h(K, y, r.alpha, eta, tau)
    assert abs(h - r.lower) <= 1e-8 * max(1.0, abs(h))
    assert abs(r.solver_stats["conic_value"] - h) <= 1e-4 * max(1.0, abs(h))


def test_bad_inputs():
    K, y = make_svm(8)
    kw = dict(C=1.0, eta=1.0, tau=0.0)
    with pytest.raises(ValueError, match="NaN"):
        Kn = K.copy()
        Kn[0, 1] = Kn[1, 0] = np.nan
        dank_ref.solve_svm(Kn, y, **kw)
    with pytest.raises(ValueError, match="length"):
        dank_ref.solve_svm(K, y[:-1], **kw)
    with pytest.raises(ValueError, match="square"):
        dank_ref.solve_svm(K[:, :-1], y, **kw)
    with pytest.raises(ValueError, match=r"\{-1, \+1\}"):
        dank_ref.solve_svm(K, np.where(y > 0, 1.0, 0.0), **kw)
    with pytest.raises(ValueError, match="both classes"):
        dank_ref.solve_svm(K, np.ones(8), **kw)
    with pytest.raises(ValueError, match="C must"):
        dank_ref.solve_svm(K, y, C=0.0, eta=1.0, tau=0.0)
    with pytest.raises(ValueError, match="eta must"):
        dank_ref.solve_svm(K, y, C=1.0, eta=-1.0, tau=0.0)
    with pytest.raises(ValueError, match="tau must"):
        dank_ref.solve_svm(K, y, C=1.0, eta=1.0, tau=-0.1)
    with pytest.raises(ValueError, match="symmetric"):
        Ka = K.copy()
        Ka[0, 1] += 0.1
        dank_ref.solve_svm(Ka, y, **kw)
    with pytest.raises(ValueError, match="semidefinite"):
        dank_ref.solve_svm(K - 0.5 * np.eye(8) * 3, y, **kw)
    with pytest.raises(ValueError, match="too large"):
        dank_ref.solve_svm(K, y, memory_limit=1000, **kw)


def test_size_refusal_before_building(monkeypatch):
    def boom(*a, **k):
        raise AssertionError("problem must not be built")

    monkeypatch.setattr(dank_ref.svm, "build_svm_problem", boom)
    K, y = make_svm(8)
    with pytest.raises(ValueError, match="GiB"):
        dank_ref.solve_svm(K, y, C=1.0, eta=1.0, memory_limit=1.0)
    assert dank_ref.estimate_memory_bytes(400, "CLARABEL") > 8 * 2**30


def test_solver_failure_raises():
    x = cp.Variable()
    prob = cp.Problem(cp.Minimize(x), [x >= 1, x <= 0])
    with pytest.raises(dank_ref.SolverError, match="infeasible"):
        run_conic(prob, "CLARABEL", 1e-8, False)
    assert issubclass(dank_ref.SolverError, RuntimeError)


def test_inaccurate_warns():
    K, y = make_svm(16, seed=2)
    with pytest.warns(dank_ref.InaccurateSolutionWarning):
        r = dank_ref.solve_svm(
            K, y, C=1.0, eta=0.5, tau=0.1, solver="SCS", polish=False, max_iters=3, eps=1e-12
        )
    assert r.status == "inaccurate"


@pytest.mark.slow
@pytest.mark.parametrize("solver", SOLVERS)
def test_larger_instance_certified(solver):
    K, y = make_svm(40, seed=9)
    r = dank_ref.solve_svm(K, y, C=1.0, eta=1.0, tau=0.01, solver=solver)
    assert r.status == "optimal" and r.rel_gap <= 1e-9
