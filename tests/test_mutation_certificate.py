"""Certificates (dank_fast.certificate): contracts that mutation testing found unchecked.

The fields of :class:`~dank_fast.certificate.Certificate` (``infeasibility``, ``bias``,
``bias_interval``, ``inner_excess``), the feasibility tolerance ``1e-9 C sqrt(n)`` of the
from-scratch certificates and its every clause, the errors naming the parameter, the exact best
bias whatever the input dtype, and the SVR relative-gap scale (benchmarks/MUTATION.md).
References are computed here from the definitions (dense ``numpy.linalg.eigh``).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dank_fast import best_bias, compute_kernel, solve_svr, svm_certificate, svr_certificate
from dank_fast.certificate import certify_box, certify_svm, certify_svr, kkt_bias
from dank_fast.inner import KernelData, inner_minimiser


def make_data(n, seed, shift=1.0):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, 2)) + shift * y[:, None]
    return compute_kernel(X, sigma=1.0), y


def ref_F(K, d, eta, tau):
    n = d.size
    lam, V = np.linalg.eigh(np.ones((n, n)) + np.outer(d, d) * K / (4 * eta))
    return (V * np.maximum(lam - tau / 2, 0.0)) @ V.T


def h_direct(K, d, lin, eta, tau):
    """h = lin - 1/2 d'(F o K)d + eta ||F - 11'||^2 + tau eta tr F at F = F(d) (Lemma fbound)."""
    F = ref_F(K, d, eta, tau)
    return lin - 0.5 * d @ (F * K) @ d + eta * np.sum((F - 1.0) ** 2) + tau * eta * np.trace(F)


# ------------------------------------------------------------------ infeasibility field


def _pairs(n, C):
    """``a = 0.4 C``, labels alternating (n even): y'a = 0 exactly."""
    return np.full(n, 0.4 * C), np.where(np.arange(n) % 2 == 0, 1.0, -1.0)


def _violations(a, C, e):
    """One candidate per constraint of A, each violated by exactly ``e`` (pairs keep y'a)."""
    out = {}
    b = a.copy()
    b[0] += e
    out["equality"] = b
    b = a.copy()
    b[0] = b[1] = -e
    out["negative"] = b
    b = a.copy()
    b[0] = b[1] = C + e
    out["above C"] = b
    return out


@pytest.mark.parametrize("C", [1e-3, 1.0, 7.0])
def test_certificate_reports_each_kind_of_infeasibility(C):
    """``Certificate.infeasibility = max(|y'a|, -min a, max a - C)`` of the certified point."""
    n = 8
    K, _ = make_data(n, 0)
    a, y = _pairs(n, C)
    delta = 0.25 * 1e-9 * C * math.sqrt(n)
    kd = KernelData(K)
    for what, b in _violations(a, C, delta).items():
        cert = svm_certificate(K, y, b, C=C, eta=1.0, tau=0.01)
        assert cert.infeasibility == pytest.approx(delta, rel=1e-6), what
        inner = inner_minimiser(kd, b * y, 1.0, 0.01)
        direct = certify_svm(kd, y, b, C, 1.0, 0.01, inner)
        assert direct.infeasibility == pytest.approx(delta, rel=1e-6), what
    assert svm_certificate(K, y, a, C=C, eta=1.0, tau=0.01).infeasibility == 0.0


@pytest.mark.parametrize("C", [1e-3, 1.0, 7.0])
def test_svr_and_box_certificates_report_infeasibility(C):
    n = 6
    K, _ = make_data(n, 2)
    y = np.linspace(-1.0, 1.0, n)
    kd = KernelData(K)
    ah = np.full(n, 0.2 * C)
    e = 1e-11 * C
    cases = {
        "sum": (ah + np.r_[e, np.zeros(n - 1)], ah.copy()),
        "negative": (np.r_[-e, ah[1:]], np.r_[-e, ah[1:]]),
        "above C": (np.r_[C + e, ah[1:]], np.r_[C + e, ah[1:]]),
    }
    for what, (h, c) in cases.items():
        z = np.concatenate([h, c])
        inner = inner_minimiser(kd, h - c, 2.0, 0.01)
        cert = certify_svr(kd, y, z, C, 2.0, 0.01, 0.1, inner)
        assert cert.infeasibility == pytest.approx(e, rel=1e-6), what
    # P3: box only (y'a is not a constraint)
    ys = np.where(np.arange(n) % 3 == 0, 1.0, -1.0)
    for b, expected in [(ah, 0.0), (np.r_[-e, ah[1:]], e), (np.r_[C + e, ah[1:]], e)]:
        inner = inner_minimiser(kd, b * ys, 2.0, 0.0)
        cert = certify_box(kd, ys, b, C, 2.0, inner)
        assert cert.infeasibility == pytest.approx(expected, rel=1e-6)
        assert math.isnan(cert.bias) and cert.bias_interval == (0.0, 0.0)


# ------------------------------------------------------------------ from-scratch certificates


@pytest.mark.parametrize("C, n", [(4.0, 16), (0.01, 10)])
def test_feasibility_tolerance_is_1e9_C_sqrt_n_inclusive(C, n):
    """docs/validity.md: accepted iff max violation <= 1e-9 C sqrt(n) (each constraint)."""
    K, _ = make_data(n, 4)
    a, y = _pairs(n, C)
    tol = 1e-9 * C * math.sqrt(n)
    for scale, ok in [(0.9, True), (1.1, False)]:
        for b in _violations(a, C, scale * tol).values():
            if ok:
                svm_certificate(K, y, b, C=C, eta=1.0, tau=0.0)
            else:
                with pytest.raises(ValueError, match="not feasible"):
                    svm_certificate(K, y, b, C=C, eta=1.0, tau=0.0)


def test_feasibility_boundary_exactly_at_the_tolerance_is_accepted():
    K, y = make_data(4, 6)
    tol = 1e-9 * 1.0 * math.sqrt(4)  # 2e-9, exactly representable as twice 1e-9
    a = np.array([0.5, 0.5, 0.0, -tol])  # y = (+, -, +, -): y'a = tol, min a = -tol
    cert = svm_certificate(K, y, a, C=1.0, eta=1.0, tau=0.0)
    assert cert.infeasibility == tol


def test_float32_candidate_is_checked_in_double_precision():
    """float32(0.1) exceeds C = 0.1 by 1.5e-9 > 1e-9 C sqrt(2)."""
    K = np.eye(2)
    y = np.array([1.0, -1.0])
    a = np.array([0.1, 0.1], dtype=np.float32)
    with pytest.raises(ValueError, match="not feasible"):
        svm_certificate(K, y, a, C=0.1, eta=1.0, tau=0.0)


@pytest.mark.parametrize("C, n", [(4.0, 16), (0.01, 9)])
def test_svr_feasibility_tolerance_each_constraint(C, n):
    K, _ = make_data(n, 7)
    y = np.linspace(-1.0, 2.0, n)
    ah = np.full(n, 0.3 * C)
    tol = 1e-9 * C * math.sqrt(n)
    kw = dict(C=C, epsilon=0.1, eta=1.0, tau=0.0)
    for scale, ok in [(0.9, True), (1.1, False)]:
        e = scale * tol
        variants = [
            (ah + np.r_[e, np.zeros(n - 1)], ah),  # 1'(ah - ac) = e
            (np.r_[-e, ah[1:]], np.r_[-e, ah[1:]]),  # negative entries, sum kept
            (np.r_[C + e, ah[1:]], np.r_[C + e, ah[1:]]),  # above C, sum kept
        ]
        for h, c in variants:
            if ok:
                svr_certificate(K, y, h, c, **kw)
            else:
                with pytest.raises(ValueError, match="not feasible"):
                    svr_certificate(K, y, h, c, **kw)
    # exactly at the tolerance: accepted
    e = 1e-9 * 1.0 * math.sqrt(4)
    K4, _ = make_data(4, 9)
    svr_certificate(K4, np.ones(4), np.array([e, 0, 0, 0]), np.zeros(4), C=1.0, epsilon=0.0,
                    eta=1.0, tau=0.0)


@pytest.mark.parametrize("kwargs, name", [
    (dict(C=0.0), "C"), (dict(eta=-1.0), "eta"), (dict(tau=-0.1), "tau"),
])
def test_svm_certificate_errors_name_the_parameter(kwargs, name):
    K, y = make_data(4, 0)
    kw = dict(C=1.0, eta=1.0, tau=0.0) | kwargs
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        svm_certificate(K, y, np.zeros(4), **kw)


def test_svm_certificate_label_length_must_match_the_kernel():
    K, y = make_data(4, 0)
    with pytest.raises(ValueError, match="3 entries but K has 4 rows"):
        svm_certificate(K, y[:3], np.zeros(3), C=1.0, eta=1.0, tau=0.0)


@pytest.mark.parametrize("kwargs, name", [
    (dict(C=0.0), "C"), (dict(eta=-1.0), "eta"), (dict(tau=-0.1), "tau"),
    (dict(epsilon=-1.0), "epsilon"),
])
def test_svr_certificate_errors_name_the_parameter(kwargs, name):
    K, _ = make_data(4, 0)
    kw = dict(C=1.0, eta=1.0, tau=0.0, epsilon=0.1) | kwargs
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        svr_certificate(K, np.ones(4), np.zeros(4), np.zeros(4), **kw)


def test_svr_certificate_array_errors_name_the_array():
    K, _ = make_data(4, 0)
    kw = dict(C=1.0, eta=1.0, tau=0.0, epsilon=0.1)
    z = np.zeros(4)
    with pytest.raises(ValueError, match=r"^y must be 1-dimensional"):
        svr_certificate(K, np.ones((4, 1)), z, z, **kw)
    with pytest.raises(ValueError, match=r"^y contains NaN"):
        svr_certificate(K, np.r_[np.nan, 0, 0, 0], z, z, **kw)
    with pytest.raises(ValueError, match=r"^alpha_hat contains NaN"):
        svr_certificate(K, np.ones(4), np.r_[np.nan, 0, 0, 0], z, **kw)
    with pytest.raises(ValueError, match=r"^alpha_check contains NaN"):
        svr_certificate(K, np.ones(4), z, np.r_[np.nan, 0, 0, 0], **kw)
    with pytest.raises(ValueError, match=r"^alpha_hat must be 1-dimensional"):
        svr_certificate(K, np.ones(4), np.zeros((4, 1)), z, **kw)
    with pytest.raises(ValueError, match=r"^alpha_check must be 1-dimensional"):
        svr_certificate(K, np.ones(4), z, np.zeros((4, 1)), **kw)
    with pytest.raises(ValueError, match="shape of y"):
        svr_certificate(K, np.ones(4), np.zeros(3), z, **kw)
    with pytest.raises(ValueError, match="shape of y"):
        svr_certificate(K, np.ones(4), z, np.zeros(3), **kw)


# ------------------------------------------------------------------ routes: exact where promised


def test_svm_certificate_routes():
    """``"auto"`` on a small support and ``"dense"`` on any are exact (``inner_excess = 0``);
    every route brackets the same value."""
    K, y = make_data(30, 11, shift=0.3)
    rng = np.random.default_rng(12)
    from dank_fast import project_A

    a = project_A(rng.uniform(0, 1, size=30), y, 1.0)
    cert = svm_certificate(K, y, a, C=1.0, eta=0.5, tau=0.01)
    assert cert.inner_excess == 0.0
    assert cert.lower == pytest.approx(h_direct(K, a * y, a.sum(), 0.5, 0.01), rel=1e-12)
    K2, y2 = make_data(130, 13, shift=0.3)
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
    K, _ = make_data(n, 15, shift=0.3)
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
    K, y = make_data(4, 0)
    with pytest.raises(ValueError, match="route"):
        svm_certificate(K, y, np.zeros(4), C=1.0, eta=1.0, tau=0.01, route="bogus")


# ------------------------------------------------------------------ bias


def test_certified_bias_is_the_exact_best_bias():
    K, y = make_data(12, 17, shift=0.2)
    from dank_fast import project_A

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


# ------------------------------------------------------------------ relative gap of P2


def test_svr_relative_gap_scale_includes_the_target_term():
    """Docstring of certify_svr: ``rel_gap = gap / max(|d'y| + eps 1'(ah + ac) + d'(F o K)d,
    C (max y - min y) / 2)`` (every term in the objective's units)."""
    n = 10
    K, _ = make_data(n, 20)
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
    K, y = make_data(6, 22)
    cert = svm_certificate(K, y, np.zeros(6), C=1.0, eta=1.0, tau=0.0)  # F = 11': h = 0
    assert cert.gap > 0 and cert.rel_gap == np.inf
    assert cert.lower == 0.0 and cert.rel_gap_value == np.inf
    yt = np.array([0.01, -0.02, 0.0, 0.03, -0.01, 0.02])
    z = np.zeros(6)
    cr = svr_certificate(K, yt, z, z, C=1.0, epsilon=0.05, eta=1.0, tau=0.0)
    assert cr.lower == 0.0 and cr.gap == 0.0
    assert cr.rel_gap == 0.0 and cr.rel_gap_value == 0.0
