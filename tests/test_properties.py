"""Property tests of the accelerated solver over random DANK-SVM instances.

Monotonicity directions, derived from the definitions (docs/MATH.md §2):

* ``H(a, F) = 1'a - 1/2 a'Y(F o K)Ya + eta ||F - 11'||_F^2 + tau eta tr F`` and, for PSD F,
  both regulariser terms are >= 0. So for every fixed ``(a, F)``, ``H`` is non-decreasing in
  ``tau`` and in ``eta``; a pointwise-larger function has a larger minimum over F, hence
  ``h(a)`` is non-decreasing in ``tau`` and ``eta`` for every ``a``, and so is
  ``v* = max_{a in A} h(a)``. (Checked numerically before asserting: v* rose with tau
  (9.04, 9.37, 12.3, 40.2 for tau = 0, .01, .1, 1) and with eta (3.28 ... 11.4988 for
  eta = .01 ... 1e9 at tau = 0).)
* ``A`` grows with ``C``, so ``v*`` is non-decreasing in ``C``.
* ``F = 11'`` is PSD, so ``h(a) <= H(a, 11') = SVMdual(a) + tau eta n`` and
  ``v* <= D*_SVM + tau eta n <= Primal_SVM(w, b) + tau eta n`` for every ``(w, b)``; with
  ``tau = 0`` and ``eta -> infinity``, ``v*`` increases to the plain SVM dual optimum.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.svm import SVC

from dank_fast import ConvergenceWarning, compute_kernel, project_A, solve_svm, svm_certificate
from dank_fast._problem import SVMProblem

# Deterministic by default (the suite must be reproducible); DANK_EXPLORE=1 draws fresh examples.
SETTINGS = settings(
    max_examples=25,
    deadline=None,
    derandomize=os.environ.get("DANK_EXPLORE") != "1",
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TOL = 1e-6


def roundoff(eta, n, tau=1.0):
    """Resolution of the certified gap in floating point: regulariser terms are O(eta n^2)."""
    return 1e-13 * (1.0 + eta * n * n)


@st.composite
def instances(draw, max_n=40):
    n = draw(st.integers(4, max_n))
    d = draw(st.integers(1, 4))
    n_pos = draw(st.one_of(st.just(1), st.just(n - 1), st.integers(1, n - 1)))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    y = np.array([1.0] * n_pos + [-1.0] * (n - n_pos))
    rng.shuffle(y)
    X = rng.uniform(size=(n, d)) + draw(st.floats(0.0, 1.0)) * y[:, None] / 2
    if draw(st.booleans()):  # duplicate points (possibly with conflicting labels)
        k = draw(st.integers(1, n // 2))
        src = rng.choice(n, size=k)
        dst = rng.choice(n, size=k)
        X[dst] = X[src]
    sigma = 10.0 ** draw(st.floats(-3, 3))
    K = compute_kernel(X, sigma=sigma)
    C = 10.0 ** draw(st.floats(-2, 1.5))
    eta = 10.0 ** draw(st.floats(-1, 3))
    tau = draw(st.sampled_from([0.0, 0.01, 0.1, 1.0]))
    return K, y, C, eta, tau


def solve(K, y, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return solve_svm(K, y, tol=TOL, max_iter=3000, **kw)


def svm_primal_upper(K, y, C):
    """Primal objective of a plain SVM at sklearn's (w, b): an upper bound on D*_SVM."""
    svc = SVC(kernel="precomputed", C=C, tol=1e-6).fit(K, y)
    c = np.zeros(y.size)
    c[svc.support_] = svc.dual_coef_[0]
    f = K @ c + svc.intercept_[0]
    return 0.5 * c @ K @ c + C * np.sum(np.maximum(0.0, 1.0 - y * f))


# ---------------------------------------------------------------- certified solution


@SETTINGS
@given(instances(), st.integers(0, 2**31 - 1))
def test_accelerated_solution_is_certified(inst, seed):
    K, y, C, eta, tau = inst
    n = y.size
    res = solve(K, y, C=C, eta=eta, tau=tau)
    r = roundoff(eta, n)
    # certified bracket
    assert res.lower <= res.upper + r
    assert res.gap >= -r
    if res.status == "converged":
        assert res.rel_gap <= TOL
    else:
        assert res.status in ("max_iter", "stalled")
    # feasible
    a = res.alpha
    assert a.min() >= 0.0 and a.max() <= C
    # at least as feasible as svm_certificate demands of its input
    assert abs(y @ a) <= 1e-9 * C * np.sqrt(n)
    # lower is h(alpha) computed exactly; upper bounds h at every feasible point
    prob = SVMProblem(K, y, C, eta, tau)
    h = prob.evaluate(a, route="dense").h
    assert abs(h - res.lower) <= 1e-12 * (abs(h) + eta * n * n)
    assert h <= res.upper + r
    rng = np.random.default_rng(seed)
    for _ in range(3):
        z = project_A(rng.uniform(0, C, size=n), y, C)
        assert prob.evaluate(z, route="dense").h <= res.upper + r
    # an independent certificate agrees
    cert = svm_certificate(K, y, a, C=C, eta=eta, tau=tau)
    assert abs(cert.lower - res.lower) <= 1e-12 * (abs(h) + eta * n * n)
    assert abs(cert.upper - res.upper) <= 1e-9 * (abs(h) + 1.0) + r
    # v* <= D*_SVM + tau eta n <= Primal_SVM + tau eta n
    assert res.lower <= svm_primal_upper(K, y, C) + tau * eta * n + r


# ---------------------------------------------------------------- monotonicity


@SETTINGS
@given(instances(max_n=25), st.integers(0, 2**31 - 1))
def test_h_pointwise_nondecreasing_in_tau_and_eta(inst, seed):
    K, y, C, eta, tau = inst
    n = y.size
    rng = np.random.default_rng(seed)
    a = project_A(rng.uniform(0, C, size=n), y, C)
    r = roundoff(10 * eta, n)
    h = {
        (e, t): SVMProblem(K, y, C, e, t).evaluate(a, route="dense").h
        for e in (eta, 10 * eta)
        for t in (0.0, tau, tau + 0.5)
    }
    for e in (eta, 10 * eta):
        assert h[(e, 0.0)] <= h[(e, tau)] + r <= h[(e, tau + 0.5)] + 2 * r
    for t in (0.0, tau, tau + 0.5):
        assert h[(eta, t)] <= h[(10 * eta, t)] + r
    # envelope theorem: dh/dtau = eta tr F_tau(a), and n - tau/2 <= tr F_tau(a) <= tr M(a)
    # (lambda_max(M) >= 1'M1/n >= n), so integrating over [tau, tau + 1/2]:
    d = a * y
    trM = n + np.sum(d * d * np.diag(K)) / (4 * eta)
    rise = h[(eta, tau + 0.5)] - h[(eta, tau)]
    assert rise >= eta * (0.5 * n - 0.25 * (tau + 0.25)) - r
    assert rise <= eta * 0.5 * trM + r


@SETTINGS
@given(instances(max_n=30))
def test_value_nondecreasing_in_tau(inst):
    K, y, C, eta, tau = inst
    n = y.size
    lo = solve(K, y, C=C, eta=eta, tau=tau)
    hi = solve(K, y, C=C, eta=eta, tau=tau + 1.0)
    r = roundoff(eta, n)
    # lower(tau) <= v*(tau) <= v*(tau + 1) <= upper(tau + 1), and more: v*(tau + 1) exceeds
    # v*(tau) by at least h_{tau+1}(a*) - h_tau(a*) >= eta (n - tau/2 - 1/4) (see above)
    assert lo.lower <= hi.upper + r
    assert hi.upper >= lo.lower + eta * (n - tau / 2 - 0.25) - r


@SETTINGS
@given(instances(max_n=30))
def test_value_nondecreasing_in_eta(inst):
    K, y, C, eta, tau = inst
    n = y.size
    lo = solve(K, y, C=C, eta=eta, tau=tau)
    hi = solve(K, y, C=C, eta=10 * eta, tau=tau)
    assert lo.lower <= hi.upper + roundoff(10 * eta, n)


@SETTINGS
@given(instances(max_n=30))
def test_value_nondecreasing_in_C(inst):
    K, y, C, eta, tau = inst
    n = y.size
    lo = solve(K, y, C=C, eta=eta, tau=tau)
    hi = solve(K, y, C=3 * C, eta=eta, tau=tau)
    # alpha(C) is feasible for 3C and h does not depend on C: h(alpha_C) <= v*(3C)
    assert lo.lower <= hi.upper + roundoff(eta, n)
