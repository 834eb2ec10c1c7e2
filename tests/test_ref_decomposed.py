"""Tests of dank_ref.solve_decomposed (P3, eqs. (18) / (19); Lemma 5)."""

from __future__ import annotations

import numpy as np
import pytest
from _ref_cases import gaussian, h_decomposed, make_decomposed
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dank_ref
from dank_ref import certificate as cert


@pytest.mark.parametrize("solver", ["SCS", "CLARABEL"])
def test_lemmalink_joint_equals_blocks(solver):
    K, y, labels = make_decomposed(18, seed=1)
    kw = dict(C=1.0, eta=0.5, solver=solver, strategy="tight")  # checks the SDP's own value
    rj = dank_ref.solve_decomposed(K, y, labels, method="joint", **kw)
    rb = dank_ref.solve_decomposed(K, y, labels, method="blocks", **kw)
    assert rj.status == rb.status == "converged" and rj.bias is None
    np.testing.assert_allclose(rj.alpha, rb.alpha, atol=1e-7)
    assert abs(rj.value - rb.value) <= 1e-9 * abs(rj.value)
    # concatenation of independent per-cluster solves (values add up)
    tot, a_cat = 0.0, np.zeros(len(y))
    for c in np.unique(labels):
        idx = np.flatnonzero(labels == c)
        r = dank_ref.solve_decomposed(K[np.ix_(idx, idx)], y[idx], np.zeros(len(idx)), **kw)
        tot += r.value
        a_cat[idx] = r.alpha
    np.testing.assert_allclose(a_cat, rj.alpha, atol=1e-7)
    assert abs(tot - rj.value) <= 1e-9 * abs(tot)
    Kb = cert.block_kernel(K, labels)
    assert abs(h_decomposed(Kb, y, rj.alpha, 0.5) - rj.lower) <= 1e-10 * abs(rj.lower)
    assert abs(rj.solver_stats["conic_value"] - rj.value) <= 1e-6 * abs(rj.value)


def test_lemmalink_F_offblock_is_one_not_zero():
    """The minimiser of Hbar(abar, .) has off-block entries 1 (the lemma prints 0)."""
    K, y, labels = make_decomposed(12, seed=2)
    r = dank_ref.solve_decomposed(K, y, labels, C=1.0, eta=0.5, method="blocks")
    off = labels[:, None] != labels[None, :]
    np.testing.assert_allclose(r.F[off], 1.0, atol=1e-12)
    Kb = cert.block_kernel(K, labels)
    d = r.alpha * y

    def Hbar(F):
        return r.alpha.sum() - 0.5 * d @ (F * Kb) @ d + 0.5 * np.sum((F - 1) ** 2)

    Fblock = np.where(off, 0.0, r.F)
    assert Hbar(Fblock) - Hbar(r.F) == pytest.approx(0.5 * off.sum(), rel=1e-9)


def test_no_bias_box_only():
    K, y, labels = make_decomposed(14, seed=3)
    r = dank_ref.solve_decomposed(K, y, labels, C=0.5, eta=1.0)
    assert r.alpha.min() >= 0 and r.alpha.max() <= 0.5
    assert r.bias is None and r.rel_gap <= 1e-9


def test_single_point_blocks():
    K, y, _ = make_decomposed(8, seed=4)
    labels = np.arange(8)
    r = dank_ref.solve_decomposed(K, y, labels, C=1.0, eta=0.5, method="blocks")
    rj = dank_ref.solve_decomposed(K, y, labels, C=1.0, eta=0.5, method="joint")
    np.testing.assert_allclose(r.alpha, rj.alpha, atol=1e-7)
    assert r.status == "converged"


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(6, 14),
    d=st.integers(1, 3),
    C=st.floats(0.1, 10.0),
    eta=st.floats(0.05, 100.0),
    width=st.floats(0.2, 2.0),
    v=st.integers(1, 4),
    seed=st.integers(0, 10_000),
)
def test_property_tiny(n, d, C, eta, width, v, seed):
    K, y, labels = make_decomposed(n, d=d, seed=seed, width=width, v=v)
    rj = dank_ref.solve_decomposed(K, y, labels, C=C, eta=eta, solver="SCS")
    rb = dank_ref.solve_decomposed(K, y, labels, C=C, eta=eta, solver="SCS", method="blocks")
    assert rj.status == "converged" and rb.status == "converged"
    assert abs(rj.value - rb.value) <= rj.gap + rb.gap + 1e-9 * max(1.0, abs(rj.value))
    Kb = cert.block_kernel(K, labels)
    assert abs(h_decomposed(Kb, y, rj.alpha, eta) - rj.lower) <= 1e-9 * max(1, abs(rj.lower))


def test_bad_inputs():
    K, y, labels = make_decomposed(8)
    with pytest.raises(ValueError, match="labels"):
        dank_ref.solve_decomposed(K, y, labels[:-1], C=1.0, eta=1.0)
    with pytest.raises(ValueError, match="method"):
        dank_ref.solve_decomposed(K, y, labels, C=1.0, eta=1.0, method="nope")
    with pytest.raises(ValueError, match="eta"):
        dank_ref.solve_decomposed(K, y, labels, C=1.0, eta=0.0)


@pytest.mark.parametrize("method", ["joint", "blocks"])
@pytest.mark.parametrize("Kscale,C,eta", [(1e12, 1.0, 1.0), (1.0, 1.0, 1e-100),
                                          (1.0, 1e-20, 5.0), (0.0, 1.0, 1.0)])
def test_decomposed_extreme_scalings(method, Kscale, C, eta):
    """P3 gets the same rescaling/candidates; Kbar = 0 (a = C) included."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(12, 2))
    y = np.where(X[:, 0] > 0.5, 1.0, -1.0)
    K = gaussian(X, 0.5) * Kscale
    labels = rng.integers(0, 3, 12)
    r = dank_ref.solve_decomposed(K, y, labels, C=C, eta=eta, method=method)
    assert r.status == "converged" and r.lower <= r.upper and r.bias is None
    assert np.all(r.alpha >= 0) and np.all(r.alpha <= C)
    Kb = K * (labels[:, None] == labels[None, :])
    c = cert.decomposed_certificate(Kb, y, r.alpha, C=C, eta=eta)
    assert (c.lower, c.upper) == (r.lower, r.upper)
