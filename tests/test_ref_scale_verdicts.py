"""The blockwise certificate (dank_ref.scale_certificate) where its two riskiest terms decide
the verdict, each against dank_ref's dense optimum ``v*`` of the same instance.

1. The Krylov route's bound: a high-rank ``F`` (small ``eta`` and ``tau``, rank 45 of 60) with
   a small Ritz block (``route="krylov"``, ``k0``, ``k_max``: the block budget; ``route``
   forced, so the ``"auto"`` route's fallback to the exact dense route cannot take over)
   stops with a real ``excess``. The bound that covers ``F(a)`` from those few eigenpairs must
   still bracket ``v*``, and the verdict ``rel_gap <= tol`` (the oracle's gap check) must
   flip where it should: refused at a tolerance below what the excess allows although the
   point is optimal, accepted above it, and a point whose suboptimality (proved by
   dank_ref's bracket) exceeds that tolerance still refused. With exactly ``rank(F)`` Ritz
   pairs the excess is small but is what keeps ``v*`` inside the bracket (P1's gap, P2's gap
   at a submitted bias): without it the upper bound falls below ``v*``.
2. The check of a submitted SVR bias: targets offset by 3 (the bias is about 3), dank_ref's
   optimal pair submitted with its own bias, with the wrong sign and shifted; the oracle's
   blockwise route (``max_dense_bytes=0``) rejects and accepts exactly as its dense route
   does, at tolerances on either side of the gap the bias causes, for ``tau = 0`` (route
   ``tau0``) and ``tau > 0`` (route ``dense``), and with the Krylov route forced.

The kernel is evaluated in row blocks of 7 rows (``block_rows``) everywhere, and once with
``support_bytes=1`` (``K[S, S]`` recomputed in blocks for every product).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import dank_ref
from dank_ref.certificate import svm_certificate, svr_certificate
from dank_ref.features import FeatureKernel
from dank_ref.scale_certificate import svm_certificate_features, svr_certificate_features
from verification import certify_arrays

N = 60


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _ref(solve, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve(*args, tol=1e-10, **kw)
    assert r.status == "converged" and r.rel_gap <= 1e-10
    return r


def _contains(c_lower, c_upper, ref):
    """``c_lower <= v* <= c_upper`` given dank_ref's bracket of ``v*`` (up to rounding)."""
    slack = 1e-12 * (abs(ref.lower) + abs(ref.upper))
    return c_lower <= ref.upper + slack and c_upper >= ref.lower - slack


# --------------------------------------------------------------------- 1. the Krylov route's bound
P1 = dict(C=1.0, eta=0.01, tau=0.01)


@pytest.fixture(scope="module")
def p1_high_rank():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, 2))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(N) > 0, 1.0, -1.0)
    fk = FeatureKernel(X, sigma=0.5, block_rows=7)
    K = fk.block(np.arange(N), np.arange(N))
    ref = _ref(dank_ref.solve_svm, K, y, **P1)
    rank = int(np.sum(np.linalg.eigvalsh(ref.F) > 1e-9))
    assert rank >= 40  # a high-rank F: a few eigenpairs cannot give it
    return fk, K, y, ref, rank


def _krylov(fk, y, a, k0, k_max, **kw):
    return svm_certificate_features(fk, y, a, route="krylov", k0=k0, k_max=k_max, **P1, **kw)


@pytest.mark.parametrize("support_bytes", [1 << 30, 1])
def test_the_krylov_excess_decides_the_verdict_at_the_optimum(p1_high_rank, support_bytes):
    fk, K, y, ref, rank = p1_high_rank
    dense = svm_certificate(K, y, ref.alpha, **P1)
    c = _krylov(fk, y, ref.alpha, 16, 32, support_bytes=support_bytes)
    assert c.route == "krylov" and c.rank == 32 < rank
    # a real excess, and the lower bound of h(a) from 32 eigenpairs is below h(a) itself
    assert c.excess >= 1e-6 * c.scale and c.rel_gap >= c.excess / c.scale
    assert c.lower < dense.lower - 1e-9 * dense.scale
    assert _contains(c.lower, c.upper, ref)
    assert dense.rel_gap <= 1e-12  # the dense certificate would certify it at any tol
    low, high = 0.5 * c.rel_gap, 2.0 * c.rel_gap
    assert not c.rel_gap <= low  # refused where the excess does not allow it
    assert c.rel_gap <= high  # accepted where it does ...
    assert (ref.upper - c.lower) / c.scale <= high  # ... and rightly: v* - lower <= tol scale
    # a larger block removes the excess: the verdict at the low tolerance flips to certified
    full = _krylov(fk, y, ref.alpha, 16, 64, support_bytes=support_bytes)
    assert full.excess <= 1e-12 * full.scale and full.rel_gap <= low
    assert _contains(full.lower, full.upper, ref)


def test_a_point_suboptimal_beyond_the_tolerance_stays_refused(p1_high_rank):
    """The tolerance that certifies the optimum above (twice the Krylov gap) refuses a point
    whose suboptimality dank_ref proves larger; at every block size the bracket holds v*."""
    fk, K, y, ref, _ = p1_high_rank
    high = 2.0 * _krylov(fk, y, ref.alpha, 16, 32).rel_gap
    start = np.where(y > 0, 0.5 / np.sum(y > 0), 0.5 / np.sum(y < 0))
    for t in (1e-4, 1e-3, 1e-2, 0.1):
        p = ref.alpha + t * (start - ref.alpha)
        dense = svm_certificate(K, y, p, **P1)
        proved = (ref.lower - dense.lower) / dense.scale  # v* - h(p) >= this
        for k_max in (1, 4, 16, 32):
            c = _krylov(fk, y, p, min(16, k_max), k_max)
            assert c.route == "krylov" and c.excess >= 0.0
            assert c.lower <= dense.lower + 1e-12 * dense.scale, (t, k_max)
            assert _contains(c.lower, c.upper, ref), (t, k_max)
            assert c.rel_gap >= proved - 1e-12, (t, k_max)
            if proved > high:
                assert not c.rel_gap <= high, (t, k_max)
    assert proved > high  # t = 0.1 is such a point


# ------------------------------------------------------------------------ 2. the SVR bias check
def _svr_case(seed, sigma, offset):
    rng = np.random.default_rng(seed)
    X = np.sort(rng.uniform(-1, 1, N))[:, None]
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=N) + offset
    return X, y


@pytest.fixture(scope="module", params=[0.0, 0.01])
def svr_offset(request):
    """Targets offset by 3, so the optimal bias is about 3 and its sign matters."""
    tau = request.param
    X, y = _svr_case(3, 0.5, 3.0)
    fk = FeatureKernel(X, sigma=0.5, block_rows=7)
    K = fk.block(np.arange(N), np.arange(N))
    kw = dict(C=1.0, epsilon=0.05, eta=1.0, tau=tau)
    ref = _ref(dank_ref.solve_svr, K, y, **kw)
    assert ref.bias > 2.5
    return X, K, y, kw, ref


def _both_routes(X, y, kw, ref, bias, tol):
    args = dict(y=y, task="svr", alpha_hat=ref.alpha_hat, alpha_check=ref.alpha_check,
                bias=bias, tol=tol, X=X, kernel="gaussian", sigma=0.5, **kw)
    dense = certify_arrays(**args)
    block = certify_arrays(**args, max_dense_bytes=0, block_rows=7)
    assert "route" in block and "route" not in dense
    return dense, block


@pytest.mark.parametrize("shift", ["right", "wrong sign", 1e-3, -1e-2])
def test_the_blockwise_bias_check_judges_as_the_dense_one(svr_offset, shift):
    X, K, y, kw, ref = svr_offset
    bias = {"right": ref.bias, "wrong sign": -ref.bias}.get(shift)
    bias = ref.bias + shift if bias is None else bias
    dense, block = _both_routes(X, y, kw, ref, bias, 1e-6)
    assert block["route"] == ("tau0" if kw["tau"] == 0.0 else "dense")
    value = dense["checks"]["bias"]["value"]
    assert block["checks"]["bias"]["value"] == pytest.approx(value, rel=1e-9, abs=1e-12)
    assert dense["rel_gap"] <= 1e-9 and block["rel_gap"] <= 1e-9  # alpha itself is optimal
    # the primal point at the submitted bias is an upper bound of v* on both routes
    for rep in (dense, block):
        assert rep["lower"] + rep["gap_at_submitted_bias"] >= ref.lower - 1e-12 * abs(ref.lower)
    if shift == "right":
        assert dense["certified"] and block["certified"]
        return
    assert value > 1e-4  # the gap is set by the bias alone
    assert dense["failed"] == block["failed"] == ["bias"]
    for tol, ok in ((0.5 * value, False), (2.0 * value, True)):
        dense, block = _both_routes(X, y, kw, ref, bias, tol)
        assert dense["certified"] is block["certified"] is ok, tol


@pytest.fixture(scope="module")
def svr_high_rank():
    X, y = _svr_case(0, 0.1, 1.0)
    fk = FeatureKernel(X, sigma=0.1, block_rows=7)
    K = fk.block(np.arange(N), np.arange(N))
    kw = dict(C=1.0, epsilon=0.02, eta=0.01, tau=0.01)
    ref = _ref(dank_ref.solve_svr, K, y, **kw)
    rank = int(np.sum(np.linalg.eigvalsh(ref.F) > 1e-9))
    assert rank >= 15
    return fk, K, y, kw, ref, rank


def test_the_bias_check_with_the_krylov_excess(svr_high_rank):
    """A high-rank SVR with a small Ritz block: the gap at the right bias carries the excess
    (refused below it, accepted above and rightly, v* bracketed); a wrong-sign bias is
    refused at any tolerance the optimum passes."""
    fk, K, y, kw, ref, rank = svr_high_rank
    dense = svr_certificate(K, y, ref.alpha_hat, ref.alpha_check, **kw)
    args = (fk, y, ref.alpha_hat, ref.alpha_check)
    c = svr_certificate_features(*args, route="krylov", k0=4, k_max=8, bias=ref.bias, **kw)
    assert c.route == "krylov" and c.rank == 8 < rank and c.excess >= 1e-7 * c.scale
    assert dense.rel_gap <= 1e-12 and c.rel_gap_at_bias >= c.excess / c.scale
    assert _contains(c.lower, c.lower + c.gap_at_bias, ref)
    assert not c.rel_gap_at_bias <= 0.5 * c.rel_gap_at_bias  # refused below the excess
    high = 2.0 * c.rel_gap_at_bias
    assert (ref.upper - c.lower) / c.scale <= high
    wrong = svr_certificate_features(*args, route="krylov", k0=4, k_max=8, bias=-ref.bias, **kw)
    assert wrong.rel_gap_at_bias > 10 * high
    assert _contains(wrong.lower, wrong.lower + wrong.gap_at_bias, ref)


# ------------------------------------------- a block of exactly rank(F): the excess is the margin
def test_with_rank_F_ritz_pairs_the_p1_bracket_needs_the_excess(p1_high_rank):
    """``k = rank(F)`` Ritz pairs find every eigenvalue above ``tau / 2``, but nothing in the
    block proves there is no further one: the bound's remainder is a small real excess, and
    it is exactly what keeps ``v*`` inside the bracket (without it the upper bound falls
    below dank_ref's lower bound of ``v*``). The verdict flips at that excess."""
    fk, K, y, ref, rank = p1_high_rank
    c = _krylov(fk, y, ref.alpha, rank, rank)
    assert c.route == "krylov" and c.rank == rank and c.excess >= 1e-10 * c.scale
    assert c.upper - c.excess < ref.lower - 1e-12 * c.scale  # the excess decides
    assert _contains(c.lower, c.upper, ref)
    low, high = 0.5 * c.excess / c.scale, 2.0 * c.rel_gap
    assert not c.rel_gap <= low and c.rel_gap <= high
    assert svm_certificate(K, y, ref.alpha, **P1).rel_gap <= low  # dense: certified at low
    assert (ref.upper - c.lower) / c.scale <= high


def test_with_rank_F_ritz_pairs_the_svr_bias_gap_needs_the_excess(svr_high_rank):
    """The same for P2 at the right bias: the gap at the submitted bias includes the excess,
    without which the primal value at that bias would fall below v*."""
    fk, K, y, kw, ref, rank = svr_high_rank
    c = svr_certificate_features(fk, y, ref.alpha_hat, ref.alpha_check, route="krylov",
                                 k0=rank, k_max=rank, bias=ref.bias, **kw)
    assert c.route == "krylov" and c.rank == rank and c.excess >= 1e-10 * c.scale
    at_bias = c.lower + c.gap_at_bias
    assert at_bias - c.excess < ref.lower - 1e-12 * c.scale  # the excess decides
    assert _contains(c.lower, at_bias, ref) and _contains(c.lower, c.upper, ref)
    low, high = 0.5 * c.excess / c.scale, 2.0 * c.rel_gap_at_bias
    assert not c.rel_gap_at_bias <= low and c.rel_gap_at_bias <= high
    dense = certify_arrays(K, y, task="svr", alpha_hat=ref.alpha_hat,
                           alpha_check=ref.alpha_check, bias=ref.bias, tol=low, **kw)
    assert dense["certified"]  # the dense oracle certifies it where the excess does not
