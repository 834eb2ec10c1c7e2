"""Certified brackets lower <= v* <= upper (docs/MATH.md §5) and the exact best bias, for P1
and P2: hand-checked and brute-force values, the routes that are exact where promised, the
relative gap and its scale, and K = 0 at any scale. What a certificate accepts as a candidate:
tests/test_certificate_candidates.py.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from _objective import h_value
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from dank_fast import (
    best_bias,
    compute_kernel,
    project_A,
    solve_svm,
    solve_svr,
    svm_certificate,
    svr_certificate,
)
from dank_fast.certificate import certify_svm, certify_svr, kkt_bias
from dank_fast.inner import KernelData, inner_minimiser
from dank_ref import certificate as ref_cert
from verification.oracle import certify


def loss_sum(f0, y, b, eps=None):
    """Sum of losses at bias b (b a scalar or a 1-D array of biases)."""
    f = f0[None, :] + np.atleast_1d(np.asarray(b, dtype=float))[:, None]
    if eps is None:
        v = np.sum(np.maximum(0.0, 1.0 - y * f), axis=1)
    else:
        v = np.sum(np.maximum(0.0, np.abs(y - f) - eps), axis=1)
    return float(v[0]) if np.ndim(b) == 0 else v


def brute_force_bias(f0, y, eps=None):
    """Minimum over every breakpoint plus a fine grid spanning them (and beyond)."""
    if eps is None:
        bps = y - f0
    else:
        bps = np.concatenate([y - f0 - eps, y - f0 + eps])
    lo, hi = bps.min() - 1.0, bps.max() + 1.0
    grid = np.concatenate([bps, np.linspace(lo, hi, 20001)])
    vals = loss_sum(f0, y, grid, eps)
    return grid, vals


def ref_F(K, d, eta, tau):
    n = d.size
    lam, V = np.linalg.eigh(np.ones((n, n)) + np.outer(d, d) * K / (4 * eta))
    return (V * np.maximum(lam - tau / 2, 0.0)) @ V.T


def make_data(n, seed, sigma=1.0, shift=1.0, d=2):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, d)) + shift * y[:, None]
    return compute_kernel(X, sigma=sigma), y


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 25), st.integers(0, 2**31 - 1), st.booleans())
def test_best_bias_classification_brute_force(n, seed, ties):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[0], y[-1] = 1.0, -1.0
    f0 = rng.normal(size=n) * 2
    if ties:
        f0 = np.round(f0)  # repeated breakpoints and flat minima
    b, (lo, hi), vmin = best_bias(f0, y)
    grid, vals = brute_force_bias(f0, y)
    vbest = vals.min()
    assert vmin == pytest.approx(vbest, rel=1e-12, abs=1e-12)
    assert lo <= b <= hi
    for t in (b, lo, hi):
        assert loss_sum(f0, y, t) == pytest.approx(vbest, rel=1e-12, abs=1e-12)
    # the interval contains every minimiser found by brute force
    argmins = grid[vals <= vbest + 1e-12 * max(1.0, vbest)]
    assert argmins.min() >= lo - 1e-9 and argmins.max() <= hi + 1e-9
    # strictly worse just outside the interval
    assert loss_sum(f0, y, lo - 1e-3) > vbest
    assert loss_sum(f0, y, hi + 1e-3) > vbest


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 25), st.integers(0, 2**31 - 1), st.floats(0.0, 2.0), st.booleans())
def test_best_bias_regression_brute_force(n, seed, eps, ties):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=n) * 3
    f0 = rng.normal(size=n)
    if ties:
        y, f0 = np.round(y), np.round(f0)
    b, (lo, hi), vmin = best_bias(f0, y, eps=eps)
    grid, vals = brute_force_bias(f0, y, eps)
    vbest = vals.min()
    assert vmin == pytest.approx(vbest, rel=1e-12, abs=1e-12)
    assert lo <= b <= hi
    for t in (b, lo, hi):
        assert loss_sum(f0, y, t, eps) == pytest.approx(vbest, rel=1e-12, abs=1e-12)
    argmins = grid[vals <= vbest + 1e-12 * max(1.0, vbest)]
    assert argmins.min() >= lo - 1e-9 and argmins.max() <= hi + 1e-9


def test_best_bias_hand_example():
    # positives want b >= 1 - f0 = {1, 0}; negatives want b <= -1 - f0 = {-1}
    f0 = np.array([0.0, 1.0, 0.0])
    y = np.array([1.0, 1.0, -1.0])
    b, (lo, hi), v = best_bias(f0, y)
    # L(b) = (1-b)_+ + (-b)_+ + (b+1)_+ ; on [-1, 0]: 1 - b - b + b + 1 = 2 - b ; on [0,1]: 2
    assert (lo, hi) == (0.0, 1.0)
    assert b == 0.5 and v == 2.0


def direct_bounds(K, y, alpha, C, eta, tau):
    """lower = H(a, F(a)), upper = min_b Primal(a, b) + R(F), from the definitions."""
    d = alpha * y
    F = ref_F(K, d, eta, tau)
    FK = F * K
    q = d @ FK @ d
    R = eta * np.sum((F - 1.0) ** 2) + tau * eta * np.trace(F)
    lower = alpha.sum() - 0.5 * q + R
    f0 = FK @ d
    grid, vals = brute_force_bias(f0, y)
    upper = 0.5 * q + C * vals.min() + R
    # the hard-margin candidate (t w, t b), t = 1/m: m = max_b min_i y_i (f0_i + b) by an LP
    lp = linprog([0.0, -1.0], A_ub=np.column_stack([-y, np.ones_like(y)]), b_ub=y * f0,
                 bounds=[(None, None), (None, None)], method="highs")
    m = -lp.fun if lp.status == 0 else np.inf  # unbounded: one class only (never here)
    if 0 < m < np.inf and q > 0:
        upper = min(upper, 0.5 * q / m**2 + R)
    return lower, upper


@settings(max_examples=30, deadline=None)
@given(
    st.integers(4, 20),
    st.integers(0, 2**31 - 1),
    st.sampled_from([0.1, 1.0, 10.0]),
    st.sampled_from([0.1, 1.0, 30.0]),
    st.sampled_from([0.0, 0.01, 1.0]),
)
def test_lower_le_upper_random_feasible_alpha(n, seed, C, eta, tau):
    K, y = make_data(n, seed % 1000)
    rng = np.random.default_rng(seed)
    alpha = project_A(rng.uniform(-0.5 * C, 1.5 * C, size=n), y, C)
    cert = svm_certificate(K, y, alpha, C=C, eta=eta, tau=tau)
    assert cert.lower <= cert.upper
    assert cert.gap >= 0
    assert cert.upper - cert.lower == pytest.approx(cert.gap, rel=1e-9, abs=1e-9 * (1 + C * n))
    lo_ref, up_ref = direct_bounds(K, y, alpha, C, eta, tau)
    scale = abs(lo_ref) + alpha.sum() + 1.0
    assert cert.lower == pytest.approx(lo_ref, abs=1e-9 * scale)
    assert cert.upper == pytest.approx(up_ref, abs=1e-9 * scale)
    # lower is h(alpha)
    assert cert.lower == pytest.approx(h_value(K, y, alpha, eta, tau), abs=1e-10 * scale)
    if alpha.sum() > 0:
        assert cert.rel_gap == pytest.approx(cert.gap / alpha.sum(), rel=1e-12)


def test_random_brackets_contain_the_saddle_value():
    """Every feasible point's bracket overlaps the converged bracket around v*."""
    K, y = make_data(20, 1)
    C, eta, tau = 1.0, 2.0, 0.01
    res = solve_svm(K, y, C=C, eta=eta, tau=tau, tol=1e-9)
    assert res.status == "converged"
    rng = np.random.default_rng(2)
    for _ in range(20):
        alpha = project_A(rng.uniform(0, C, size=20), y, C)
        cert = svm_certificate(K, y, alpha, C=C, eta=eta, tau=tau)
        assert cert.lower <= res.upper + 1e-12 * abs(res.upper)
        assert res.lower <= cert.upper + 1e-12 * abs(res.upper)


def test_hand_checked_certificate():
    """K = I, y = (+1, -1), alpha = (1, 1), eta = 1e6, tau = 0, by hand.

    d = (1, -1), Gamma = g I with g = 1/(4 eta) = 2.5e-7, F o K = (1 + g) I,
    q = 2 (1 + g), R = eta * 2 g^2 = g / 2, hinge = 0 at b = 0 (margins 1 + g).
    lower = 2 - q/2 + R = 1 - g/2. Primal points: (w, 0) gives q/2 + R = 1 + 3g/2; the
    hard-margin rescaling (w / (1 + g), 0) has margins exactly 1 and gives
    q / (2 (1 + g)^2) + R = 1/(1 + g) + g/2, the smaller: upper = 1/(1 + g) + g/2,
    gap = g^2 / (1 + g) (alpha = 1 is optimal up to O(g) for the fixed F).
    """
    K = np.eye(2)
    y = np.array([1.0, -1.0])
    g = 1.0 / (4 * 1e6)
    cert = svm_certificate(K, y, np.array([1.0, 1.0]), C=1.0, eta=1e6, tau=0.0)
    assert cert.lower == pytest.approx(1 - g / 2, abs=1e-15)
    assert cert.upper == pytest.approx(1 / (1 + g) + g / 2, abs=1e-15)
    assert cert.gap == pytest.approx(g * g / (1 + g), rel=1e-6, abs=1e-15)
    assert cert.bias_interval[0] <= 0.0 <= cert.bias_interval[1]
    # a non-optimal point has a real gap: alpha = (0.5, 0.5): dual 1 - 0.25 = 0.75
    cert = svm_certificate(K, y, np.array([0.5, 0.5]), C=1.0, eta=1e6, tau=0.0)
    assert cert.lower == pytest.approx(0.75, abs=1e-6)
    assert cert.gap > 0.1


@pytest.mark.parametrize("tau", [0.0, 0.01])
def test_gap_shrinks_with_tolerance(tau):
    K, y = make_data(30, 4, sigma=1.5, shift=0.7)
    kw = dict(C=1.0, eta=1.0, tau=tau)
    loose = solve_svm(K, y, tol=1e-3, **kw)
    tight = solve_svm(K, y, tol=1e-8, **kw)
    assert loose.status == tight.status == "converged"
    assert loose.rel_gap <= 1e-3 and tight.rel_gap <= 1e-8
    assert loose.gap > tight.gap
    assert tight.gap <= 1e-8 * tight.alpha.sum()
    # recertifying from scratch reproduces the reported bracket
    cert = svm_certificate(K, y, tight.alpha, **kw)
    assert cert.lower == pytest.approx(tight.lower, rel=1e-10)
    assert cert.upper == pytest.approx(tight.upper, rel=1e-10)
    assert cert.gap == pytest.approx(tight.gap, rel=1e-3, abs=1e-12)


def test_perturbing_the_optimum_increases_the_gap():
    K, y = make_data(24, 6, sigma=1.0, shift=0.6)
    C, eta, tau = 1.0, 1.0, 0.01
    res = solve_svm(K, y, C=C, eta=eta, tau=tau, tol=1e-10)
    assert res.status == "converged"
    a = res.alpha
    base = svm_certificate(K, y, a, C=C, eta=eta, tau=tau)
    moved = 0
    for cls in (1.0, -1.0):
        idx = np.flatnonzero(y == cls)
        i = idx[np.argmax(a[idx])]  # donor: largest alpha in the class
        j = idx[np.argmin(a[idx])]  # receiver: smallest
        delta = 0.5 * min(a[i], C - a[j])
        assert delta > 1e-3
        b = a.copy()
        b[i] -= delta
        b[j] += delta
        assert abs(y @ b) <= 1e-12 and b.min() >= 0 and b.max() <= C
        cert = svm_certificate(K, y, b, C=C, eta=eta, tau=tau)
        assert cert.gap > base.gap + 1e-4
        assert cert.lower < base.lower  # alpha* maximises h
        assert cert.lower <= res.upper
        moved += 1
    assert moved == 2


@pytest.mark.parametrize(
    "alpha, match",
    [
        (np.array([0.5, 0.0, 0.0, 0.0]), "not feasible"),  # y'a != 0
        (np.array([-0.1, 0.0, -0.1, 0.0]), "not feasible"),  # negative
        (np.array([2.0, 0.0, 2.0, 0.0]), "not feasible"),  # above C
        (np.array([0.5, 0.5, 0.5]), "shape"),
        (np.array([np.nan, 0.0, 0.0, 0.0]), "NaN"),
    ],
)
def test_infeasible_alpha_raises(alpha, match):
    K, y = make_data(4, 0)
    with pytest.raises(ValueError, match=match):
        svm_certificate(K, y, alpha, C=1.0, eta=1.0, tau=0.01)


def test_roundoff_feasible_alpha_is_accepted():
    K, y = make_data(4, 0)
    a = np.array([0.5, 0.5, 0.0, 0.0]) + np.array([1e-13, 0.0, 0.0, 0.0])
    cert = svm_certificate(K, y, a, C=1.0, eta=1.0, tau=0.01)
    assert cert.infeasibility == pytest.approx(1e-13, rel=1e-3)


# routes: exact where promised


def blob_kernel(n, seed, shift=1.0):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, 2)) + shift * y[:, None]
    return compute_kernel(X, sigma=1.0), y


def h_direct(K, d, lin, eta, tau):
    """h = lin - 1/2 d'(F o K)d + eta ||F - 11'||^2 + tau eta tr F at F = F(d) (Lemma 1)."""
    F = ref_F(K, d, eta, tau)
    return lin - 0.5 * d @ (F * K) @ d + eta * np.sum((F - 1.0) ** 2) + tau * eta * np.trace(F)


def test_svm_certificate_routes():
    """``"auto"`` on a small support and ``"dense"`` on any are exact (``inner_excess = 0``);
    every route brackets the same value."""
    K, y = blob_kernel(30, 11, shift=0.3)
    rng = np.random.default_rng(12)
    a = project_A(rng.uniform(0, 1, size=30), y, 1.0)
    cert = svm_certificate(K, y, a, C=1.0, eta=0.5, tau=0.01)
    assert cert.inner_excess == 0.0
    assert cert.lower == pytest.approx(h_direct(K, a * y, a.sum(), 0.5, 0.01), rel=1e-12)
    K2, y2 = blob_kernel(130, 13, shift=0.3)
    a2 = project_A(np.random.default_rng(14).uniform(0, 1, size=130), y2, 1.0)
    # tau = 1: F has low rank and the automatic route is Lanczos at this size
    dense = svm_certificate(K2, y2, a2, C=1.0, eta=0.5, tau=1.0, route="dense")
    assert dense.inner_excess == 0.0
    assert dense.lower == pytest.approx(h_direct(K2, a2 * y2, a2.sum(), 0.5, 1.0), rel=1e-12)
    lanczos = svm_certificate(K2, y2, a2, C=1.0, eta=0.5, tau=1.0, route="lanczos")
    slack = 1e-12 * abs(dense.upper)
    assert lanczos.lower <= dense.lower + slack and lanczos.upper >= dense.upper - slack


def test_svr_certificate_is_exact():
    """svr_certificate decomposes ``M`` densely: no inner excess, lower = h from the definition,
    also on a support larger than the dense limit of the automatic route."""
    n = 130
    K, _ = blob_kernel(n, 15, shift=0.3)
    y = np.sin(np.arange(n) / 7.0)
    rng = np.random.default_rng(16)
    ah = rng.uniform(0, 1, size=n)
    ac = np.roll(ah, 3)
    d = ah - ac
    lin = y @ d - 0.05 * (ah.sum() + ac.sum())
    for tau in (0.01, 1.0):  # tau = 1: the automatic route would be Lanczos at this size
        cert = svr_certificate(K, y, ah, ac, C=1.0, epsilon=0.05, eta=0.5, tau=tau)
        assert cert.inner_excess == 0.0
        assert cert.lower == pytest.approx(h_direct(K, d, lin, 0.5, tau), rel=1e-11)


def test_svm_certificate_rejects_an_unknown_route():
    K, y = blob_kernel(4, 0)
    with pytest.raises(ValueError, match="route"):
        svm_certificate(K, y, np.zeros(4), C=1.0, eta=1.0, tau=0.01, route="bogus")


# the certified bias


def test_certified_bias_is_the_exact_best_bias():
    K, y = blob_kernel(12, 17, shift=0.2)
    a = project_A(np.random.default_rng(18).uniform(0, 1, size=12), y, 1.0)
    kd = KernelData(K)
    inner = inner_minimiser(kd, a * y, 1.0, 0.01)
    cert = certify_svm(kd, y, a, 1.0, 1.0, 0.01, inner)
    f0 = (ref_F(K, a * y, 1.0, 0.01) * K) @ (a * y)
    b, interval, _ = best_bias(f0, y)
    assert cert.bias == pytest.approx(b, abs=1e-9)
    assert cert.bias_interval == pytest.approx(interval, abs=1e-9)
    yr = np.linspace(-1, 1, 12)
    z = np.concatenate([a, np.roll(a, 1)])
    inner = inner_minimiser(kd, z[:12] - z[12:], 1.0, 0.01)
    cr = certify_svr(kd, yr, z, 1.0, 1.0, 0.01, 0.05, inner)
    f0 = (ref_F(K, z[:12] - z[12:], 1.0, 0.01) * K) @ (z[:12] - z[12:])
    b, interval, _ = best_bias(f0, yr, eps=0.05)
    assert cr.bias == pytest.approx(b, abs=1e-9)
    assert cr.bias_interval == pytest.approx(interval, abs=1e-9)


@pytest.mark.parametrize("eps", [None, 0.05])
def test_best_bias_is_exact_for_float32_input(eps):
    """The breakpoints ``y - f0`` are formed in double precision whatever the input dtype."""
    rng = np.random.default_rng(19)
    f0 = (rng.normal(size=9) * 0.7).astype(np.float32)
    y = np.where(rng.random(9) < 0.5, -1.0, 1.0).astype(np.float32) if eps is None \
        else rng.normal(size=9).astype(np.float32)
    y[0], y[1] = (1.0, -1.0) if eps is None else (y[0], y[1])
    got = best_bias(f0, y, eps=eps)
    ref = best_bias(f0.astype(np.float64), y.astype(np.float64), eps=eps)
    assert got[0] == ref[0] and got[1] == ref[1] and got[2] == ref[2]


def test_best_bias_is_scale_invariant():
    rng = np.random.default_rng(0)
    y, f0 = rng.normal(size=7), np.zeros(7)
    b1, _, v1 = best_bias(f0, y, eps=0.0)
    c = 1e-14
    bc, _, vc = best_bias(f0, c * y, eps=0.0)
    assert vc == pytest.approx(c * v1, rel=1e-12, abs=0)
    assert bc == pytest.approx(c * b1, rel=1e-12, abs=0)


def test_kkt_bias_hand_example():
    """Mean of ``y_i - f0_i`` over coefficients strictly inside ``(0, C)``; None without any;
    coefficients within ``1e-8 C`` of a bound count as at the bound."""
    f0 = np.array([0.5, -0.2, 0.3, 0.0, 1.0])
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    C = 100.0
    a = np.array([0.0, 50.0, C, 20.0, 5e-7])  # free: 1 and 3 (5e-7 < 1e-8 C)
    assert kkt_bias(f0, y, a, C) == pytest.approx(((-1.0 + 0.2) + (-1.0 - 0.0)) / 2)
    assert kkt_bias(f0, y, np.array([0.0, C, C, 0.0, C - 5e-7]), C) is None
    assert kkt_bias(f0, y, np.array([0.0, 0.0, 0.0, 0.0, 2e-6]), C) == pytest.approx(0.0)


# the relative gap


def test_svr_relative_gap_scale_includes_the_target_term():
    """Docstring of certify_svr: ``rel_gap = gap / max(|d'y| + eps 1'(ah + ac) + d'(F o K)d,
    C (max y - min y) / 2)`` (every term in the objective's units)."""
    n = 10
    K, _ = blob_kernel(n, 20)
    y = 50.0 * np.linspace(-1, 1, n)  # |d'y| dominates 1'(ah + ac) and C
    rng = np.random.default_rng(21)
    ah = rng.uniform(0, 1, size=n)
    ac = np.roll(ah, 1)
    ah[y < 0], ac[y > 0] = 0.0, 0.0
    ac *= ah.sum() / ac.sum()
    z = np.concatenate([ah, ac])
    kd = KernelData(K)
    d = ah - ac
    inner = inner_minimiser(kd, d, 1.0, 0.01)
    cert = certify_svr(kd, y, z, 1.0, 1.0, 0.01, 0.1, inner)
    scale = max(abs(d @ y) + 0.1 * z.sum() + d @ (ref_F(K, d, 1.0, 0.01) * K) @ d,
                1.0 * (y.max() - y.min()) / 2)
    assert abs(d @ y) > z.sum()
    assert cert.rel_gap == pytest.approx(cert.gap / scale, rel=1e-12)


def test_svr_convergence_is_unit_independent():
    X = np.linspace(-3, 3, 40)[:, None]
    y = np.sinc(X[:, 0]) + 0.3
    K = compute_kernel(X, sigma=0.5)
    c = 1e-4
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve_svr(K, c * y, C=c, epsilon=0.05 * c, eta=20.0 * c * c, method="newton",
                      tol=1e-6)
    assert r.status == "converged"
    # the bracket of the same problem in the original units: relative width <= 1e-5
    assert (r.upper - r.lower) / abs(r.lower) <= 1e-5


def test_relative_gaps_without_a_scale():
    """``rel_gap`` is ``inf`` when ``1'a = 0`` and the gap is positive (P1 at a = 0), and 0 when
    the gap is 0 on a zero scale (P2 at a = 0 with every target inside the tube: optimal, the
    value 0 is certified exactly)."""
    K, y = blob_kernel(6, 22)
    cert = svm_certificate(K, y, np.zeros(6), C=1.0, eta=1.0, tau=0.0)  # F = 11': h = 0
    assert cert.gap > 0 and cert.rel_gap == np.inf
    assert cert.lower == 0.0 and cert.rel_gap_value == np.inf
    yt = np.array([0.01, -0.02, 0.0, 0.03, -0.01, 0.02])
    z = np.zeros(6)
    cr = svr_certificate(K, yt, z, z, C=1.0, epsilon=0.05, eta=1.0, tau=0.0)
    assert cr.lower == 0.0 and cr.gap == 0.0
    assert cr.rel_gap == 0.0 and cr.rel_gap_value == 0.0


def test_relative_gaps_without_a_scale_are_zero_or_infinite():
    """``rel_gap_value = gap / |lower|`` when ``lower = 0`` (the point ``a = 0``): a zero gap is
    relatively zero, a positive gap infinitely large -- never a finite made-up number.

    P2 at ``ah = ac = 0``: ``lower = h(0) = 0`` and the primal value is
    ``C sum max(0, |y_i - b| - eps)`` at the best bias ``b``: exactly 0 when every target lies in
    a tube of width ``2 eps`` (then the point is optimal), ``C (spread - 2 eps)`` otherwise.
    """
    K = np.eye(4)
    z = np.zeros(4)
    y = np.array([0.25, 0.5, 0.75, 0.5])
    kw = dict(C=1.0, eta=1.0, tau=0.0)
    inside = svr_certificate(K, y, z, z, epsilon=0.25, **kw)  # tube [0.25, 0.75]
    assert inside.lower == 0.0 and inside.gap == 0.0
    assert inside.rel_gap_value == 0.0 and inside.rel_gap == 0.0
    outside = svr_certificate(K, y, z, z, epsilon=0.125, **kw)  # spread 0.5 > 2 eps
    assert outside.lower == 0.0
    assert outside.gap == pytest.approx(0.25, rel=1e-12)
    assert outside.rel_gap_value == math.inf
    # P2's scale at d = 0: every term of the objective vanishes, the floor C (max y - min y)/2
    # = 0.25 remains (docs/MATH.md), so the relative gap is 0.25 / 0.25
    assert outside.rel_gap == pytest.approx(1.0, rel=1e-12)


def _svr_point(n=9, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 1))
    K = np.exp(-0.5 * (X - X.T) ** 2)
    y = np.sin(2 * X[:, 0]) + 0.3
    ah = rng.uniform(0, 1, size=n) * (y > 0.3)
    ac = rng.uniform(0, 1, size=n) * (y <= 0.3)
    ac *= ah.sum() / ac.sum()
    return K, y, ah, ac


# the P2 scale is in the units of the objective, so the relative gap does not change with
# the units of y
@pytest.mark.parametrize("c", [1e-4, 3.0, 1e5])
def test_svr_relative_gap_is_unit_independent_in_both_packages(c):
    """y, C, eps -> c y, c C, c eps and eta -> c^2 eta is the same problem (d -> c d, values
    times c^2): the relative gap must not change (a scale such as max(|d'y|, 1'(ah + ac), C),
    whose terms are not all in the units of the objective, would change it by up to 1/c)."""
    K, y, ah, ac = _svr_point()
    kw = dict(C=1.0, epsilon=0.05, eta=2.0, tau=0.01)
    kc = dict(C=c, epsilon=0.05 * c, eta=2.0 * c * c, tau=0.01)
    for fn in (svr_certificate, ref_cert.svr_certificate):
        r1 = fn(K, y, ah, ac, **kw)
        rc = fn(K, c * y, c * ah, c * ac, **kc)
        assert r1.gap > 0
        assert rc.gap == pytest.approx(c * c * r1.gap, rel=1e-6)
        assert rc.rel_gap == pytest.approx(r1.rel_gap, rel=1e-6)


# the P2 scale is the same in dank_fast, dank_ref and the oracle
def test_svr_relative_gap_scale_is_the_documented_rule():
    """rel_gap = gap / max(|d'y| + eps 1'(ah + ac) + d'(F o K)d, C (max y - min y) / 2) in
    dank_fast, dank_ref and the oracle (docs/MATH.md section 5)."""
    K, y, ah, ac = _svr_point()
    kw = dict(C=1.0, epsilon=0.05, eta=2.0, tau=0.01)
    ref = ref_cert.svr_certificate(K, y, ah, ac, **kw)
    d = ah - ac
    q = float(d @ ((np.asarray(ref.F) * K) @ d))
    scale = max(abs(d @ y) + 0.05 * (ah.sum() + ac.sum()) + q, 0.5 * (y.max() - y.min()))
    assert scale > 0.5 * (y.max() - y.min())  # the sum, not the floor, is tested here
    assert ref.rel_gap == pytest.approx(ref.gap / scale, rel=1e-10)
    assert svr_certificate(K, y, ah, ac, **kw).rel_gap == pytest.approx(ref.gap / scale,
                                                                        rel=1e-8)
    inst = dict(task="svr", K=K, y=y, n=y.size, C=1.0, eta=2.0, tau=0.01, epsilon=0.05)
    rep = certify(inst, dict(task="svr", alpha_hat=ah, alpha_check=ac), tol=1e-6,
                  reference=False)
    assert rep["scale"] == pytest.approx(scale, rel=1e-10)
    # a* = 0 (every target inside the tube): the floor C (max y - min y) / 2
    yt = np.linspace(-0.02, 0.03, y.size)
    z = np.zeros(y.size)
    for cert in (svr_certificate(K, yt, z, z, **kw), ref_cert.svr_certificate(K, yt, z, z, **kw)):
        assert cert.gap == 0.0 and cert.rel_gap == 0.0
    rep = certify(dict(inst, y=yt), dict(task="svr", alpha_hat=z, alpha_check=z), tol=1e-6,
                  reference=False)
    assert rep["scale"] == pytest.approx(0.025, rel=1e-12)


# a zero P2 scale: no division by zero in the oracle
def test_svr_relative_gap_with_a_zero_scale():
    """Constant targets, d = 0 and eps = 0: the P2 scale is 0 (its floor is not C), and so is
    the gap; every package reports rel_gap 0 (no ZeroDivisionError in the oracle)."""
    K, y = np.array([[0.0158]]), np.array([-0.13])
    ah = ac = np.array([0.0288])
    kw = dict(C=1.0, epsilon=0.0, eta=1.0, tau=0.0)
    for cert in (svr_certificate(K, y, ah, ac, **kw), ref_cert.svr_certificate(K, y, ah, ac, **kw)):
        assert cert.gap == 0.0 and cert.rel_gap == 0.0
    inst = dict(task="svr", K=K, y=y, n=1, C=1.0, eta=1.0, tau=0.0, epsilon=0.0)
    rep = certify(inst, dict(task="svr", alpha_hat=ah, alpha_check=ac), tol=1e-9,
                  reference=False)
    assert rep["certified"] and rep["rel_gap"] == 0.0


_ZERO_K_SCALARS = [(1e155, 1.0), (1e155, 1e-169), (1e300, 1e-300), (1e-300, 1e300),
                   (1e-200, 1e200), (1.0, 1.0)]


def _zero_k_value(C, eta, tau, a, y):
    """h(a) for K = 0 by hand (tau/2 < n): F = J_{tau/2}(11') = (1 - tau/(2n)) 11', so
    ||F - 11'||^2 = tau^2/4, tr F = n - tau/2 and h = 1'a + eta (tau n - tau^2/4)."""
    n = y.size
    return float(np.sum(a)) + eta * (tau * n - tau * tau / 4.0)


# K = 0 with C = 1e155: finite brackets (no inf * 0 = NaN) in both packages
@pytest.mark.parametrize("C, eta", _ZERO_K_SCALARS)
@pytest.mark.parametrize("tau", [0.0, 1.0])
def test_zero_kernel_certificates_are_finite_brackets_at_any_scale(C, eta, tau):
    """K = 0 with C = 1e155 (valid: K = 0 is always in range): d_i d_j overflows, and inf * 0 =
    NaN must not follow (IndexError / LinAlgError / (nan, nan)). Both packages bracket h(a),
    which for K = 0 is known in closed form, and the points given are certified, not moved."""
    y = np.array([-1.0, 1.0, 1.0])
    a = np.array([0.383076436, 0.0, 0.383076436]) * C
    h = _zero_k_value(C, eta, tau, a, y)
    for lo, up in [
        (lambda c: (c.lower, c.upper))(svm_certificate(np.zeros((3, 3)), y, a, C=C, eta=eta,
                                                       tau=tau)),
        (lambda c: (c.lower, c.upper))(ref_cert.svm_certificate(np.zeros((3, 3)), y, a, C=C,
                                                                eta=eta, tau=tau)),
    ]:
        assert np.isfinite(lo) and np.isfinite(up) and lo <= up
        assert lo == pytest.approx(h, rel=1e-12)  # tau = 0 or 1: the lower bound is h(a)
    p3 = ref_cert.decomposed_certificate(np.zeros((3, 3)), y, a, C=C, eta=eta)
    assert np.isfinite(p3.upper) and p3.lower == pytest.approx(float(np.sum(a)), rel=1e-12)
    ah, ac = np.array([C / 2, 0.0, 0.0]), np.array([0.0, C / 2, 0.0])
    yt = np.array([1.0, -1.0, 0.0])
    h2 = C + eta * (tau * 3 - tau * tau / 4.0) - 0.1 * C  # y'd - eps 1'(ah + ac) + inner
    for c in (svr_certificate(np.zeros((3, 3)), yt, ah, ac, C=C, epsilon=0.1, eta=eta, tau=tau),
              ref_cert.svr_certificate(np.zeros((3, 3)), yt, ah, ac, C=C, epsilon=0.1, eta=eta,
                                       tau=tau)):
        assert np.isfinite(c.lower) and np.isfinite(c.upper) and c.lower <= c.upper
        assert c.lower == pytest.approx(h2, rel=1e-12)
