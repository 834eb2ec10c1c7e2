"""Certified brackets lower <= v* <= upper (docs/MATH.md §5) and the exact best bias."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from dank_fast import best_bias, compute_kernel, project_A, solve_svm, svm_certificate
from dank_fast._problem import SVMProblem

# ---------------------------------------------------------------- helpers


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


# ---------------------------------------------------------------- best_bias


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


# ---------------------------------------------------------------- bracket


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
    assert cert.lower == pytest.approx(
        SVMProblem(K, y, C, eta, tau).evaluate(alpha).h, abs=1e-10 * scale
    )
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


# ---------------------------------------------------------------- convergence of the gap


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


# ---------------------------------------------------------------- infeasible input


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
