"""dank_ref's certificates from features (dank_ref.features, dank_ref.scale_certificate).

The blockwise routes are checked against dank_ref's dense certificates on the same instance
(a small ``block_rows`` passed to the kernel, so every route crosses many blocks).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from threadpoolctl import threadpool_limits

from dank_ref.certificate import decomposed_certificate, svm_certificate, svr_certificate
from dank_ref.features import FeatureKernel
from dank_ref.scale_certificate import (
    decomposed_certificate_features,
    svm_certificate_features,
    svr_certificate_features,
)

REL = 1e-10


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    """The dense references' ``eigh`` of 2,000 points on one BLAS thread (shared cores)."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _data(n, d=3, seed=0, pos=0.1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(rng.random(n) < pos, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    return X, y


def _feasible_alpha(y, C, frac, seed=0):
    """A point of ``{y'a = 0, 0 <= a <= C}`` with about ``frac`` of its entries non-zero."""
    rng = np.random.default_rng(seed + 7)
    on = rng.random(y.size) < frac
    on[0] = on[1] = True
    a = np.where(on, C * rng.uniform(0.05, 1.0, y.size), 0.0)
    a[rng.random(y.size) < 0.3 * frac] = C
    p, m = float(a[y > 0].sum()), float(a[y < 0].sum())
    a[y > 0 if p > m else y < 0] *= min(p, m) / max(p, m)
    return a


def _close(x, ref, scale):
    return abs(x - ref) <= REL * (abs(ref) + abs(scale))


def _dense_K(fk):
    idx = np.arange(fk.n)
    return fk.block(idx, idx)


# ---------------------------------------------------------------------------------------------
# the kernel
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("spec", [dict(kernel="rbf", sigma=0.7), dict(kernel="gaussian",
                                  gamma=0.3), dict(kernel="linear"),
                                  dict(kernel="poly", gamma=0.5, degree=2, coef0=1.5)])
def test_blocks_are_the_kernel_function(spec):
    X, _ = _data(53, d=4)
    fk = FeatureKernel(X, block_rows=5, **spec)
    G = X @ X.T
    sq = np.sum(X * X, axis=1)
    D2 = sq[:, None] + sq[None, :] - 2 * G
    kind = spec["kernel"]
    gamma = spec.get("gamma", 1 / (2 * spec.get("sigma", 1.0) ** 2))
    ref = {"rbf": lambda: np.exp(-gamma * np.maximum(D2, 0)),
           "gaussian": lambda: np.exp(-gamma * np.maximum(D2, 0)),
           "linear": lambda: G,
           "poly": lambda: (gamma * G + spec.get("coef0", 1.0)) ** spec.get("degree", 3)}[kind]()
    K = _dense_K(fk)
    np.testing.assert_allclose(K, ref, rtol=1e-12, atol=1e-12)
    assert fk.scale() == pytest.approx(np.max(np.abs(ref)), rel=1e-14)
    cols = np.array([3, 0, 17, 52])
    V = np.random.default_rng(1).standard_normal((4, 2))
    np.testing.assert_allclose(fk.product(cols, V), ref[:, cols] @ V, rtol=1e-12, atol=1e-12)
    seen = np.concatenate([r for r, blk in fk.row_blocks(cols) if blk.shape == (r.size, 4)])
    np.testing.assert_array_equal(seen, np.arange(53))


def test_kernel_refuses_bad_input():
    X, _ = _data(10)
    X[6, 1] = np.nan
    with pytest.raises(ValueError, match=r"X\[6\] \(row 6 of 10\) contains NaN"):
        FeatureKernel(X)
    X[6, 1] = 0.0
    with pytest.raises(ValueError, match="kernel must be one of"):
        FeatureKernel(X, kernel="laplace")
    with pytest.raises(ValueError, match="not both"):
        FeatureKernel(X, sigma=1.0, gamma=1.0)
    with pytest.raises(ValueError, match="coef0"):
        FeatureKernel(X, kernel="poly", coef0=-1.0)
    with pytest.raises(ValueError, match="block_rows"):
        FeatureKernel(X, block_rows=0)
    with pytest.raises(ValueError, match="sigma"):
        FeatureKernel(X, sigma=-2.0)
    with pytest.raises(TypeError, match="real numeric"):
        FeatureKernel(X.astype(complex))
    with pytest.raises(ValueError, match="2-D"):
        FeatureKernel(X[:, 0])


# ---------------------------------------------------------------------------------------------
# P1, P2, P3 against the dense certificates (blockwise routes, small blocks)
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def p1_2000():
    X, y = _data(2000, d=4, seed=3)
    fk = FeatureKernel(X, sigma=1.5, block_rows=97)
    a = _feasible_alpha(y, 2.0, 0.12, seed=3)
    ref = svm_certificate(_dense_K(fk), y, a, C=2.0, eta=3.0, tau=0.2)
    return fk, y, a, ref, int(np.sum(np.linalg.eigvalsh(ref.F) > 1e-9))


@pytest.mark.parametrize("route, support_bytes", [("dense", 1 << 30), ("krylov", 1 << 30),
                                                   ("krylov", 1)])
def test_svm_matches_dense_certificate(p1_2000, route, support_bytes):
    """``support_bytes=1``: ``K[S, S]`` is recomputed in row blocks for every product."""
    fk, y, a, ref, rank = p1_2000
    c = svm_certificate_features(fk, y, a, C=2.0, eta=3.0, tau=0.2, route=route, k0=8,
                                 support_bytes=support_bytes, bias=ref.bias)
    assert c.route == route and 0 < c.support < 2000
    for name in ("lower", "upper", "gap"):
        assert _close(getattr(c, name), getattr(ref, name), ref.scale), name
    assert _close(c.rel_gap * ref.scale, ref.rel_gap * ref.scale, ref.scale)
    assert c.bias == pytest.approx(ref.bias, rel=1e-9, abs=1e-9)
    assert c.infeasibility == pytest.approx(ref.infeasibility, abs=1e-15)
    assert c.rank == rank
    assert _close(c.gap_at_bias, ref.gap, ref.scale)
    assert c.excess <= 1e-10 * ref.scale


def test_svm_tau0_and_svr_match_dense_certificates():
    X, y = _data(1200, d=3, seed=5, pos=0.4)
    fk = FeatureKernel(X, kernel="poly", gamma=0.3, degree=2, coef0=1.0, block_rows=64)
    K = _dense_K(fk)
    a = _feasible_alpha(y, 0.5, 0.2, seed=5)
    ref = svm_certificate(K, y, a, C=0.5, eta=0.02, tau=0.0)
    c = svm_certificate_features(fk, y, a, C=0.5, eta=0.02, tau=0.0)
    assert c.route == "tau0"
    for name in ("lower", "upper", "gap_raw"):
        assert _close(getattr(c, name), getattr(ref, name), ref.scale), name
    rng = np.random.default_rng(9)
    t = X[:, 0] - X[:, 1] ** 2 + 0.1 * rng.standard_normal(1200)
    ah = np.where(rng.random(1200) < 0.2, rng.uniform(0, 0.5, 1200), 0.0)
    ac = np.where(rng.random(1200) < 0.2, rng.uniform(0, 0.5, 1200), 0.0)
    ac *= ah.sum() / ac.sum()
    for tau in (0.0, 0.05):
        ref = svr_certificate(K, t, ah, ac, C=0.5, epsilon=0.1, eta=0.4, tau=tau)
        for route in ("dense", "krylov"):
            c = svr_certificate_features(fk, t, ah, ac, C=0.5, epsilon=0.1, eta=0.4, tau=tau,
                                         route=route, k0=4, bias=ref.bias + 0.5)
            for name in ("lower", "upper", "gap_raw", "bias"):
                assert _close(getattr(c, name), getattr(ref, name), ref.scale), (tau, name)
            assert c.rel_gap_at_bias > c.rel_gap


def test_decomposed_matches_dense_certificate_cluster_by_cluster():
    X, y = _data(3000, d=3, seed=11, pos=0.3)
    labels = np.minimum((X[:, 0] > 0) * 4 + (X[:, 1] > 0) * 2 + (X[:, 2] > 0), 6)
    labels[17] = 99  # a cluster of one point is valid
    fk = FeatureKernel(X, sigma=0.8, block_rows=50)
    a = np.where(np.random.default_rng(2).random(3000) < 0.3, 0.7, 0.0)
    a[17] = 0.3
    c = decomposed_certificate_features(fk, y, a, labels, C=1.0, eta=0.25)
    K = _dense_K(fk)
    ref = decomposed_certificate(K, y, a, C=1.0, eta=0.25, labels=labels)
    del K
    for name in ("lower", "upper", "gap_raw", "rel_gap"):
        assert _close(getattr(c, name), getattr(ref, name), ref.scale), name
    assert c.bias is None and c.route == "clusters"


def test_clusters_of_one_point_match_the_dense_certificate():
    """Many clusters of one point (handled from ``K_ii`` at once) among larger ones: the
    dense certificate's bracket; ``progress`` counts the clusters."""
    X, y = _data(400, d=2, seed=5, pos=0.5)
    labels = np.arange(400)
    labels[:300] = np.arange(300) % 5  # five clusters of 60, then 100 of one point
    a = np.random.default_rng(3).uniform(0.0, 0.9, 400)
    a[::7] = 0.0
    fk = FeatureKernel(X, sigma=0.9, block_rows=13)
    ref = decomposed_certificate(_dense_K(fk), y, a, C=1.0, eta=0.3, labels=labels)
    calls = []
    one = decomposed_certificate_features(fk, y, a, labels, C=1.0, eta=0.3,
                                          progress=lambda *c: calls.append(c))
    for name in ("lower", "upper", "gap_raw", "rel_gap"):
        assert _close(getattr(one, name), getattr(ref, name), ref.scale), name
    assert calls == [("clusters", k, 6) for k in range(7)]
    with pytest.raises(TypeError, match="progress must be a callable"):
        decomposed_certificate_features(fk, y, a, labels, C=1.0, eta=0.3, progress=1)


@pytest.mark.parametrize("tau", [0.0, 0.2])
def test_progress_reports_each_phase_to_its_end(p1_2000, tau):
    """``progress(phase, done, total)``: every phase starts at 0 and ends at its total (row
    blocks of 97 rows here); the result is the same with or without it."""
    fk, y, a, _, _ = p1_2000
    calls = []
    c = svm_certificate_features(fk, y, a, C=2.0, eta=3.0, tau=tau,
                                 progress=lambda *x: calls.append(x))
    assert c.lower == svm_certificate_features(fk, y, a, C=2.0, eta=3.0, tau=tau).lower
    phases = list(dict.fromkeys(p for p, _, _ in calls))
    for p in phases:
        seq = [(k, t) for q, k, t in calls if q == p]
        assert seq[0][0] == 0 and seq[-1][0] == seq[-1][1]
        assert [k for k, _ in seq] == sorted(k for k, _ in seq)
    blocks = [t for p, _, t in calls if "row blocks" in p]
    assert max(blocks) == (-(-2000 // 97) if tau == 0.0 else -(-(2000 - c.support) // 97))


@settings(max_examples=40, deadline=None)
@given(n=st.integers(3, 40), d=st.integers(1, 4), seed=st.integers(0, 10_000),
       tau=st.sampled_from([0.0, 1e-3, 0.01, 0.3, 3.0]), logC=st.floats(-2, 2),
       logeta=st.floats(-3, 3), frac=st.floats(0.05, 1.0), block_rows=st.integers(1, 7),
       kernel=st.sampled_from(["rbf", "linear", "poly"]))
def test_every_route_matches_dense_on_small_instances(n, d, seed, tau, logC, logeta, frac,
                                                      block_rows, kernel):
    X, y = _data(n, d=d, seed=seed, pos=0.4)
    fk = FeatureKernel(X, kernel=kernel, gamma=0.5, degree=2, block_rows=block_rows)
    K = _dense_K(fk)
    C, eta = 10.0**logC, 10.0**logeta
    a = _feasible_alpha(y, C, frac, seed=seed)
    ref = svm_certificate(K, y, a, C=C, eta=eta, tau=tau)
    for route in ("dense", "krylov"):
        c = svm_certificate_features(fk, y, a, C=C, eta=eta, tau=tau, route=route, k0=1)
        assert _close(c.lower, ref.lower, 1e3 * ref.scale), route
        assert _close(c.upper, ref.upper, 1e3 * ref.scale), route
    # one Ritz pair only: a lower bound of h(a), and an upper bound of v* >= h(a) (from another
    # fixed kernel F^, so it may lie on either side of the dense one; MATH.md section 12)
    c = svm_certificate_features(fk, y, a, C=C, eta=eta, tau=tau, route="krylov", k0=1, k_max=1)
    slack = 1e-9 * (abs(ref.lower) + abs(ref.upper) + ref.scale)
    assert c.lower <= ref.lower + slack and c.upper >= ref.lower - slack and c.excess >= 0
    labels = np.arange(n) % 3
    refd = decomposed_certificate(K, y, a, C=C, eta=eta, labels=labels)
    cd = decomposed_certificate_features(fk, y, a, labels, C=C, eta=eta)
    assert _close(cd.lower, refd.lower, 1e3 * refd.scale)
    assert _close(cd.upper, refd.upper, 1e3 * refd.scale)


@pytest.mark.parametrize("tau", [0.0, 0.01, 100.0])
def test_the_zero_point_matches_dense(tau):
    """``a = 0``: ``M = 11'`` still has the eigenvalue ``n`` (``h(0) = eta psi(n)``)."""
    X, y = _data(30, d=2, seed=4, pos=0.5)
    fk = FeatureKernel(X, sigma=1.0, block_rows=4)
    K, a = _dense_K(fk), np.zeros(30)
    ref = svm_certificate(K, y, a, C=1.0, eta=0.5, tau=tau)
    c = svm_certificate_features(fk, y, a, C=1.0, eta=0.5, tau=tau)
    assert (c.lower, c.upper, c.bias) == pytest.approx((ref.lower, ref.upper, ref.bias),
                                                       rel=1e-12, abs=1e-12)
    ref = svr_certificate(K, X[:, 0], a, a, C=1.0, epsilon=0.1, eta=0.5, tau=tau)
    c = svr_certificate_features(fk, X[:, 0], a, a, C=1.0, epsilon=0.1, eta=0.5, tau=tau)
    assert (c.lower, c.upper) == pytest.approx((ref.lower, ref.upper), rel=1e-12, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# what is refused, and what is rejected
# ---------------------------------------------------------------------------------------------
def test_bad_candidates_are_refused_before_any_kernel_work():
    X, y = _data(500, seed=1)
    fk = FeatureKernel(X, sigma=1.0)
    a = _feasible_alpha(y, 1.0, 0.2)
    with pytest.raises(ValueError, match="alpha has length 499 but X has n = 500 rows"):
        svm_certificate_features(fk, y, a[:-1], C=1.0, eta=1.0, tau=0.01)
    with pytest.raises(ValueError, match="1-D array of n = 500 numbers"):
        svm_certificate_features(fk, y, a[None, :], C=1.0, eta=1.0, tau=0.01)
    bad = a.copy()
    bad[3] = np.nan
    with pytest.raises(ValueError, match=r"alpha\[3\] is NaN"):
        svm_certificate_features(fk, y, bad, C=1.0, eta=1.0, tau=0.01)
    out = a.copy()
    out[np.argmax(a)] = 1.0 + 1e-6
    with pytest.raises(ValueError, match="alpha <= C violated by 1.000e-06"):
        svm_certificate_features(fk, y, out, C=1.0, eta=1.0, tau=0.01)
    off = a.copy()
    i = int(np.flatnonzero((a > 0) & (a < 0.5))[0])
    off[i] += 1e-6
    with pytest.raises(ValueError, match="y'alpha = 0 violated by 1.000e-06"):
        svm_certificate_features(fk, y, off, C=1.0, eta=1.0, tau=0.01)
    with pytest.raises(ValueError, match="alpha >= 0 violated"):
        decomposed_certificate_features(fk, y, -a, np.zeros(500), C=1.0, eta=1.0)
    with pytest.raises(ValueError, match=r"1'\(alpha_hat - alpha_check\) = 0 violated"):
        svr_certificate_features(fk, y, a, 0 * a, C=1.0, epsilon=0.1, eta=1.0, tau=0.01)
    with pytest.raises(ValueError, match="not equal to itself"):
        decomposed_certificate_features(fk, y, a, np.r_[np.zeros(499), np.nan], C=1.0, eta=1.0)
    with pytest.raises(TypeError, match="FeatureKernel"):
        svm_certificate_features(X, y, a, C=1.0, eta=1.0, tau=0.01)
    with pytest.raises(ValueError, match="route"):
        svm_certificate_features(fk, y, a, C=1.0, eta=1.0, tau=0.01, route="lanczos")
    with pytest.raises(ValueError, match="representable range"):
        svm_certificate_features(fk, y, a * 1e-60, C=1e-60, eta=1e60, tau=0.01)


def test_a_wrong_bias_and_a_poor_point_are_not_certified(p1_2000):
    fk, y, a, ref, _ = p1_2000
    c = svm_certificate_features(fk, y, a, C=2.0, eta=3.0, tau=0.2, bias=ref.bias + 0.3)
    assert c.rel_gap_at_bias > c.rel_gap + 1e-3
    assert c.rel_gap > 1e-3  # an arbitrary feasible point is far from the saddle point
    assert c.lower <= c.upper


# ---------------------------------------------------------------------------------------------
# full sizes (slow): dank_fast's solutions, certified independently
# ---------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_dank_fast_solution_at_20000_points_certified_and_broken_ones_rejected():
    from sklearn.datasets import make_classification

    import dank_fast

    X, y = make_classification(n_samples=20_000, n_features=22, n_informative=10,
                               n_redundant=4, weights=[0.9], class_sep=2.0, flip_y=0.0,
                               random_state=0)
    X = (X - X.mean(0)) / X.std(0)
    y = np.where(y == 1, 1.0, -1.0)
    kw = dict(C=1.0, eta=589.0, tau=0.01)
    r = dank_fast.solve_svm(dank_fast.FeatureKernel(X, sigma=4.0), y, **kw)
    c = svm_certificate_features(FeatureKernel(X, sigma=4.0), y, r.alpha, bias=r.bias, **kw)
    assert c.rel_gap <= 1e-6 and c.rel_gap_at_bias <= 1e-6
    # the lower bound is h(alpha) in both packages: the same number; the upper bounds are primal
    # values at F's computed by different routes (dank_fast's from a few eigenpairs), each
    # valid: they agree within the larger certified gap
    assert abs(c.lower - r.lower) <= 1e-9 * c.scale
    assert abs(c.upper - r.upper) <= max(c.gap, r.gap)
    fk = FeatureKernel(X, sigma=4.0)
    for k in (int(np.argmax(r.alpha)), int(np.flatnonzero((r.alpha > 0) & (y > 0))[0])):
        bad = r.alpha.copy()
        bad[k] += 1e-6
        with pytest.raises(ValueError, match="infeasible"):
            svm_certificate_features(fk, y, bad, **kw)
    assert svm_certificate_features(fk, y, r.alpha, bias=c.bias + 0.1, **kw).rel_gap_at_bias > 1e-6
    early = dank_fast.solve_svm(dank_fast.FeatureKernel(X, sigma=4.0), y, tol=1e-3, **kw)
    assert svm_certificate_features(fk, y, early.alpha, **kw).rel_gap > 1e-6
