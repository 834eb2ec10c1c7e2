"""dank_ref's independent certificates (dank_ref.certificate) of P1 and P2.

Independent checks: the closed forms ``H(a, F(a))`` computed with plain numpy
(tests/_ref_cases.py), the fixed-kernel SVM/SVR primal value at the certificate's bias (the
upper bound is a primal value), an LP for the hard-margin point, and the exact rescaling law
``v*(K, C, eta) = c v*(cK, C/c, eta/c)`` (docs/validity.md).  P3's certificate is tested with
its solver (tests/test_ref_decomposed.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from _ref_cases import (
    assert_exactly_feasible_svm,
    h_svm,
    h_svr,
    make_svm,
    make_svr,
    svm_instance,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import dank_ref
from dank_ref import certificate as rc
from dank_ref.projection import project_box_hyperplane


@st.composite
def feasible_alpha(draw, n, y, C):
    z = np.array(draw(st.lists(st.floats(-0.5, 1.5), min_size=n, max_size=n))) * C
    return project_box_hyperplane(z, y, C)[0]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    tau=st.sampled_from([0.0, 0.05, 0.5]),
    eta=st.floats(0.05, 50.0),
    C=st.floats(0.1, 10.0),
)
def test_svm_certificate_is_the_closed_form_and_a_primal_value(data, tau, eta, C):
    K, y = make_svm(10, seed=11)
    a = data.draw(feasible_alpha(10, y, C))
    c = rc.svm_certificate(K, y, a, C=C, eta=eta, tau=tau)
    scale = max(1.0, abs(c.lower), float(np.sum(a)))
    assert c.gap >= -1e-12 * scale
    assert c.lower <= c.upper + 1e-12 * scale
    h, _ = h_svm(K, y, c.alpha, eta, tau)
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
        a = project_box_hyperplane(rng.uniform(0, C, 16), y, C)[0]
        c = rc.svm_certificate(K, y, a, C=C, eta=eta, tau=tau)
        assert c.lower <= r.upper + 1e-10 and r.lower <= c.upper + 1e-10
        assert c.gap > r.gap
    # sign flip of one label: the solution of the perturbed problem is worse here
    y2 = y.copy()
    j = int(np.argmax(r.alpha))
    y2[j] = -y2[j]
    r2 = dank_ref.solve_svm(K, y2, C=C, eta=eta, tau=tau, solver="SCS")
    c2 = rc.svm_certificate(K, y, r2.alpha, C=C, eta=eta, tau=tau, project=True)
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
        rc.svm_certificate(K, y, bad, C=C, eta=eta, tau=tau, project=False)
    cb = rc.svm_certificate(K, y, bad, C=C, eta=eta, tau=tau, project=True)
    assert cb.projected and cb.projection_distance > 0.05 and cb.gap > r.gap
    assert cb.infeasibility <= 1e-9 * C * np.sqrt(16)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=st.data(),
    tau=st.sampled_from([0.0, 0.05]),
    eta=st.floats(0.05, 50.0),
    C=st.floats(0.1, 10.0),
    eps=st.floats(0.0, 0.5),
)
def test_svr_certificate_is_the_closed_form_and_a_primal_value(data, tau, eta, C, eps):
    n = 9
    K, y = make_svr(n, seed=4)
    z = np.array(data.draw(st.lists(st.floats(-0.5, 1.5), min_size=2 * n, max_size=2 * n))) * C
    c = rc.svr_certificate(K, y, z[:n], z[n:], C=C, epsilon=eps, eta=eta, tau=tau,
                             project=True)
    scale = max(1.0, abs(c.lower), c.scale)
    assert c.gap >= -1e-12 * scale
    assert abs(np.sum(c.alpha_hat - c.alpha_check)) < 1e-12
    h, _ = h_svr(K, y, c.alpha_hat, c.alpha_check, eps, eta, tau)
    assert abs(c.lower - h) <= 1e-9 * max(1.0, abs(h))
    b = c.alpha
    G = c.F * K
    f = G @ b + c.bias
    primal = 0.5 * b @ G @ b + C * np.maximum(0, np.abs(y - f) - eps).sum()
    R = eta * np.sum((c.F - 1) ** 2) + tau * eta * np.trace(c.F)
    assert abs(c.upper - (primal + R)) <= 1e-8 * max(1.0, abs(primal + R))


def test_svr_perturbations_have_larger_gap_and_the_pair_is_kept():
    K, y = make_svr(14, seed=6)
    kw = dict(C=1.0, epsilon=0.1, eta=0.5, tau=0.0)
    r = dank_ref.solve_svr(K, y, solver="SCS", **kw)
    b = r.alpha.copy()
    i, j = np.argsort(np.abs(b))[-2:]
    b[i] -= 0.05 * np.sign(b[i])
    b[j] -= 0.05 * np.sign(b[j])
    b -= b.mean()
    c = rc.svr_certificate(K, y, np.maximum(b, 0), np.maximum(-b, 0), **kw)
    assert c.gap > 1e3 * max(r.gap, 1e-14)
    # both ah_i and ac_i positive at one index: the certificate evaluates exactly that pair
    # (h depends on ah + ac through -eps 1'(ah + ac)); it does not normalise it away
    ah, ac = r.alpha_hat.copy(), r.alpha_check.copy()
    k = int(np.argmin(np.abs(r.alpha)))
    ah[k] += 0.01
    ac[k] += 0.01
    c2 = rc.svr_certificate(K, y, ah, ac, **kw)
    np.testing.assert_array_equal(c2.alpha_hat, ah)
    np.testing.assert_array_equal(c2.alpha_check, ac)
    assert not c2.projected and c2.projection_distance == 0.0
    shift = kw["epsilon"] * 0.02  # lin = b'y - eps 1'(ah + ac) drops by eps * 0.02
    assert c2.lower == pytest.approx(r.lower - shift, rel=0, abs=1e-12)
    assert c2.gap == pytest.approx(r.gap + shift, rel=0, abs=1e-12)


# ---------------------------------------------------------------- certificates
def test_certificate_at_zero_with_tiny_eta_evaluates_the_given_point():
    """alpha = 0, eta = 1e-100: h(0) of exactly the given point (not -6.1e38 of a moved one)."""
    K, y = svm_instance()
    n, tau, eta = 20, 0.01, 1e-100
    for project in (False, True):
        c = rc.svm_certificate(K, y, np.zeros(n), C=1.0, eta=eta, tau=tau, project=project)
        assert np.all(c.alpha == 0.0) and not c.projected
        assert c.lower == pytest.approx(eta * (n * tau - tau**2 / 4), rel=1e-10)  # h(0)
        assert c.lower <= c.upper


def test_infeasible_candidate_rejected_unless_projection_requested():
    K, y = svm_instance()
    a = np.zeros(20)
    a[0] = 0.5  # y'a != 0
    with pytest.raises(ValueError, match="infeasible"):
        rc.svm_certificate(K, y, a, C=1.0, eta=1.0, tau=0.01)
    c = rc.svm_certificate(K, y, a, C=1.0, eta=1.0, tau=0.01, project=True)
    assert c.projected and c.projection_distance > 0.1
    assert_exactly_feasible_svm(c.alpha, y, 1.0)


def test_feasibility_tolerance_is_relative_to_C():
    K, y = svm_instance()
    C = 1e-20
    a = np.where(y > 0, C / np.sum(y > 0), C / np.sum(y < 0)) * min(np.sum(y > 0), np.sum(y < 0))
    a[0] += 14 * C  # the reported y'a = -14 C (here +14 C)
    with pytest.raises(ValueError, match="infeasible"):
        rc.svm_certificate(K, y, a, C=C, eta=5.0, tau=0.01)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), logc=st.floats(-30, 30), tau=st.sampled_from([0.0, 0.01, 0.5]),
       eta=st.floats(0.01, 100.0), dup=st.booleans())
def test_lower_le_upper_exactly_and_scale_law(data, logc, tau, eta, dup):
    """lower <= upper with no tolerance; certificates obey v* = c v*(cK, C/c, eta/c)."""
    K, y = svm_instance(10, seed=5)
    if dup:
        K = np.ones_like(K) * 0.3
    C = 1.0
    z = np.array(data.draw(st.lists(st.floats(0, 1), min_size=10, max_size=10)))
    a = project_box_hyperplane(z, y, C)[0]
    c1 = rc.svm_certificate(K, y, a, C=C, eta=eta, tau=tau)
    assert c1.lower <= c1.upper and c1.gap >= 0.0
    s = 2.0 ** round(logc)  # exact scaling: identical bits expected
    c2 = rc.svm_certificate(K / s, y, a * s, C=C * s, eta=eta * s, tau=tau)
    assert c2.lower == pytest.approx(c1.lower * s, rel=1e-12, abs=1e-300)
    assert c2.rel_gap == pytest.approx(c1.rel_gap, rel=1e-9, abs=1e-15)
    # independent closed form at moderate scale
    h = h_svm(K, y, a, eta, tau)[0]
    assert abs(c1.lower - h) <= 1e-9 * max(1.0, abs(h))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), logC=st.integers(-3, 30), tau=st.sampled_from([0.0, 0.01]))
def test_upper_bound_is_a_primal_value(data, logC, tau):
    """upper = R(F) + min over the primal points (w, b) and (s w, s b) of the SVM primal.

    Computed here directly (0.5 s^2 q + C hinge + R), so an upper bound assembled with a
    cancellation (C hinge - C hinge at C = 1e30) cannot pass.
    """
    K, y = svm_instance(10, seed=2)
    C, eta = 10.0**logC, 1.0
    z = np.array(data.draw(st.lists(st.floats(0, 1), min_size=10, max_size=10)))
    a = project_box_hyperplane(z * min(C, 1.0), y, C)[0]
    c = rc.svm_certificate(K, y, a, C=C, eta=eta, tau=tau)
    d = a * y
    G = c.F * K
    g = G @ d
    q = d @ g
    m = y * (g + c.bias)
    R = eta * np.sum((c.F - 1) ** 2) + tau * eta * np.trace(c.F)
    primal1 = 0.5 * q + C * np.maximum(0, 1 - m).sum()
    cands = [primal1]
    # the hard-margin point (w / m*, beta / m*), m* = max_beta min_i y_i (g_i + beta) > 0 (an
    # LP here), in both directions (m* < 1: violations removed; m* > 1: w shrunk), as
    # dank_ref._scaled_primal_gap documents; hinge 0 there
    lp = linprog([0.0, -1.0], A_ub=np.column_stack([-y, np.ones_like(y)]), b_ub=y * g,
                 bounds=[(None, None), (None, None)], method="highs")
    if lp.status == 0 and -lp.fun > 0 and q > 0:
        cands.append(0.5 * q / lp.fun**2)
    upper = min(cands) + R
    assert c.upper >= c.lower
    assert abs(c.upper - max(upper, c.lower)) <= 1e-9 * max(abs(upper), abs(c.lower), 1.0)
