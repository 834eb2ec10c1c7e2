"""dank_ref.solve_svm: P1 (eq. (4)) as one SDP, polished and certified.

Independent checks: the closed form ``H(a, F(a))`` in plain numpy (tests/_ref_cases.py),
scikit-learn's SVC as ``eta -> inf``, the exact rescaling law of docs/validity.md and the
stationarity of the returned point.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from _ref_cases import (
    assert_exactly_feasible_svm,
    gaussian,
    h_svm,
    make_svm,
    svm_instance,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

import dank_ref
from dank_ref import certificate as rc
from dank_ref.conic import run_conic
from dank_ref.projection import project_box_hyperplane

SOLVERS = ["SCS", "CLARABEL"]


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("tau", [0.0, 0.1])
def test_sdp_value_equals_closed_form(solver, tau):
    K, y = make_svm(16, seed=3)
    r = dank_ref.solve_svm(K, y, C=1.0, eta=0.7, tau=tau, solver=solver, strategy="tight")
    h, F = h_svm(K, y, r.alpha, 0.7, tau)
    conic = r.solver_stats["conic_value"]
    assert r.status == "converged"
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
    assert r.status == "converged"
    np.testing.assert_allclose(r.alpha, a_sk, rtol=0, atol=1e-5 * C)
    coef = np.zeros(len(y))
    coef[m.support_] = m.dual_coef_[0]
    np.testing.assert_allclose(r.alpha * y, coef, rtol=0, atol=1e-5 * C)
    assert abs(r.bias - m.intercept_[0]) <= 1e-5 * max(1.0, abs(m.intercept_[0]))


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
        warnings.simplefilter("error", dank_ref.ConvergenceWarning)
        r = dank_ref.solve_svm(K, y, C=C, eta=eta, tau=tau, solver="SCS", strategy="tight")
    assert r.status == "converged" and r.rel_gap <= 1e-6
    assert r.gap >= -1e-10 * max(1.0, abs(r.value))
    h, _ = h_svm(K, y, r.alpha, eta, tau)
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


def test_size_refusal_names_the_estimate():
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


def test_an_uncertified_answer_warns_and_names_its_iteration_limit():
    """The conic solver stopped by the caller's ``max_iter``: status ``"max_iter"`` (not
    ``"inaccurate"``), with dank_ref's ConvergenceWarning, a subclass of
    scikit-learn's."""
    K, y = make_svm(16, seed=2)
    with pytest.warns(ConvergenceWarning, match="max_iter = 3") as rec:
        r = dank_ref.solve_svm(
            K, y, C=1.0, eta=0.5, tau=0.1, solver="SCS", polish=False, max_iter=3, eps=1e-12
        )
    assert r.status == "max_iter" and not r.success and r.n_iter == 3
    assert any(w.category is dank_ref.ConvergenceWarning for w in rec)


@pytest.mark.slow
@pytest.mark.parametrize("solver", SOLVERS)
def test_larger_instance_certified(solver):
    K, y = make_svm(40, seed=9)
    r = dank_ref.solve_svm(K, y, C=1.0, eta=1.0, tau=0.01, solver=solver)
    assert r.status == "converged" and r.rel_gap <= 1e-9


# ---------------------------------------------------------------- extreme but valid scalings
# ---------------------------------------------------------------- extreme but valid scalings
def test_kernel_times_1e12_is_solved():
    """v*(sK, C, eta) = v*(K, sC, s eta) / s, certified at s = 1e12."""
    K, y = svm_instance()
    r = dank_ref.solve_svm(K * 1e12, y, C=1.0, eta=1.0, tau=0.01)
    assert r.status == "converged" and r.rel_gap <= 1e-6 and r.lower <= r.upper
    assert_exactly_feasible_svm(r.alpha, y, 1.0)
    # the exact law with s = 1e12: the same point certified in (K, 1e12 C, 1e12 eta) has the
    # same bracket times 1e12 (independent of the solver), and h agrees with the closed form
    c2 = rc.svm_certificate(K, y, r.alpha * 1e12, C=1e12, eta=1e12, tau=0.01)
    assert c2.lower == pytest.approx(1e12 * r.lower, rel=1e-12)
    # 1e12 is not a power of two: r.alpha * 1e12 moves each margin by ~1 ulp, and C = 1e12 turns
    # that into a gap of ~ C n u / 1'a ~ 1e-5 (the hard-margin regime's conditioning)
    assert c2.rel_gap <= 1e-4
    h = h_svm(K, y, r.alpha * 1e12, 1e12, 0.01)[0] / 1e12
    assert abs(h - r.lower) <= 1e-6 * r.alpha.sum()


def test_tiny_C_feasibility_and_gap_scale_with_C():
    """C = 1e-20, eta = 5: exactly feasible (not y'a = -14 C), gap >= 0 relative to C."""
    K, y = svm_instance()
    C = 1e-20
    r = dank_ref.solve_svm(K, y, C=C, eta=5.0, tau=0.01)
    assert_exactly_feasible_svm(r.alpha, y, C)
    assert r.status == "converged" and 0.0 <= r.gap <= 1e-6 * r.alpha.sum()
    assert r.lower <= r.upper
    # K is negligible at this C (C max|K| n = 2e-19): a* solves max 1'a over A, 1'a = 2 C m
    m = min(np.sum(y > 0), np.sum(y < 0))
    assert r.alpha.sum() == pytest.approx(2 * C * m, rel=1e-9)


def test_large_eta_regime_certified():
    """eta = 1e8 (the SDP is stiff there): certified, h equals the closed form."""
    K, y = svm_instance()
    r = dank_ref.solve_svm(K, y, C=1.0, eta=1e8, tau=0.01)
    assert r.status == "converged" and r.rel_gap <= 1e-6
    assert abs(h_svm(K, y, r.alpha, 1e8, 0.01)[0] - r.lower) <= 1e-6 * abs(r.lower)


def test_kernel_zero_is_a_linear_program():
    """K = 0 is valid: F(a) = J(11') is constant and P1 is an LP (closed form)."""
    y = np.array([1.0, 1.0, 1.0, -1.0, -1.0])
    r = dank_ref.solve_svm(np.zeros((5, 5)), y, C=2.0, eta=1.0, tau=0.01)
    assert r.status == "converged" and r.gap == 0.0
    assert r.alpha.sum() == pytest.approx(2 * 2.0 * 2, rel=1e-15)  # each class sums to C m


@pytest.mark.parametrize("scale", [1e-9, 1.0])
def test_identical_points_lower_le_upper(scale):
    """Identical points (or X x 1e-9): lower <= upper exactly, no rounding inversion."""
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(30, 2)) * scale if scale != 1.0 else np.zeros((30, 2))
    K = gaussian(X, 0.5)
    y = np.where(np.arange(30) < 13, 1.0, -1.0)
    r = dank_ref.solve_svm(K, y, C=1.0, eta=50.0, tau=0.01)
    assert r.lower <= r.upper and r.gap >= 0.0
    c = rc.svm_certificate(K, y, r.alpha, C=1.0, eta=50.0, tau=0.01)
    assert c.lower <= c.upper and c.gap == max(c.gap_raw, 0.0)


def test_tiny_eta_regime_is_solved_and_stationary():
    """eta = 1e-100 (Gamma ~ 1e33 dominates): the ray candidate + polish; KKT checked here."""
    K, y = svm_instance()
    eta = 1e-100
    r = dank_ref.solve_svm(K, y, C=1.0, eta=eta, tau=0.0)
    assert r.status == "converged" and r.lower <= r.upper
    # tau = 0: h(a) = 1'a - d'Kd/2 - ||D K D||^2 / (16 eta); exact law a = c a' with c = 2^-109
    c = 2.0**-109
    af = r.alpha / c
    d = af * y
    Kf, etaf = K * c, eta / c
    h = c * (af.sum() - 0.5 * d @ Kf @ d - np.sum((np.outer(d, d) * Kf) ** 2) / (16 * etaf))
    assert h == pytest.approx(r.lower, rel=1e-10)
    grad = 1 - y * (((1 + np.outer(d, d) * Kf / (4 * etaf)) * Kf) @ d)
    step = project_box_hyperplane(af + 1e-2 * grad, y, 1.0 / c)[0] - af
    assert np.linalg.norm(step) <= 1e-8 * np.linalg.norm(af)
