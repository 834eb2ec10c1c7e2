"""The Newton curvature of a numerically low-rank kernel, solved through its low-rank form
(:mod:`dank_fast._lowrank`): the bracket ``H <= Ht <= H + rho I`` against the dense curvature,
where the route applies and where it does not, and certified solves on such kernels."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_moons

from dank_fast import compute_kernel, solve_svm
from dank_fast._curvature import curvature
from dank_fast._lowrank import lowrank_solve
from dank_fast._problem import SVMProblem
from dank_fast._psd import LOWRANK_MIN_N, PivotedCholesky
from dank_fast.svm import svc_dual

N = LOWRANK_MIN_N


def _moons(n: int, seed: int, noise: float = 0.3):
    X, y = make_moons(n, noise=noise, random_state=seed)
    X = (X - X.min(axis=0)) / np.ptp(X, axis=0)
    return X, np.where(y == 1, 1.0, -1.0)


def _evaluation(K, y, C, tau, seed=0):
    """An SVM problem at a point with many free coordinates (a random fraction of the SVC
    solution, every coordinate of the support inside or at a bound)."""
    a = svc_dual(K, y, C)
    pr = SVMProblem(K, y, C, max(float(a @ a), 1e-3), tau)
    rng = np.random.default_rng(seed)
    z = pr.start(a * rng.uniform(0.3, 1.0, a.size))
    return pr, pr.evaluate(z)


@pytest.mark.parametrize("tau", [0.0, 0.01])
def test_lowrank_solve_is_the_dense_curvature_within_its_bracket(tau):
    """``Ht = H + Delta`` with ``0 <= Delta <= rho I`` (``rho`` about ``n`` times the pivoted
    Cholesky's target): the solution ``x`` of ``Ht x = b`` leaves a residual ``H x - b =
    -Delta x`` with ``x' (H x - b) <= 0`` and of norm at most ``rho ||x||``; both ``F = 11' +
    Gamma`` (``tau = 0``) and a low-rank ``F``."""
    X, y = _moons(N, 0)
    K = compute_kernel(X, sigma=1.0)
    pr, ev = _evaluation(K, y, 1.0, tau)
    free = np.flatnonzero(ev.z > 0)
    solve = lowrank_solve(pr, ev, free)
    assert solve is not None  # make_moons at sigma 1: rank ~30 of 1,000
    H = curvature(pr, ev, free)
    rng = np.random.default_rng(1)
    B = rng.normal(size=(free.size, 3))
    Xs = solve(B)
    R = H @ Xs - B
    rho = 1e-8 * K.shape[0] * (1.0 + float(np.max(np.diag(H))))  # n e (F_ii + c d^2), generous
    assert np.all(np.einsum("ij,ij->j", Xs, R) <= 1e-9 * np.einsum("ij,ij->j", B, B))
    assert np.all(np.linalg.norm(R, axis=0) <= rho * np.linalg.norm(Xs, axis=0)
                  + 1e-9 * np.linalg.norm(B, axis=0))
    x1 = solve(B[:, 0])  # a vector in, a vector out
    assert x1.shape == (free.size,)
    np.testing.assert_allclose(x1, Xs[:, 0], rtol=1e-12, atol=0)


def test_lowrank_route_declines_kernels_of_high_rank_and_small_problems():
    """A kernel whose rank exceeds what pays (a narrow Gaussian on 20 features) and a problem
    below ``LOWRANK_MIN_N`` points keep the Cholesky factor of the curvature."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(N, 20))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=N) > 0, 1.0, -1.0)
    pr, ev = _evaluation(compute_kernel(X, sigma=2.0), y, 1.0, 0.01)
    assert lowrank_solve(pr, ev, np.flatnonzero(ev.z > 0)) is None
    X, y = _moons(N - 1, 0)
    pr, ev = _evaluation(compute_kernel(X, sigma=0.5), y, 1.0, 0.01)
    assert lowrank_solve(pr, ev, np.flatnonzero(ev.z > 0)) is None


def test_pivoted_cholesky_grows_on_demand_to_the_target():
    """:class:`PivotedCholesky` resumes where it stopped: a cap below the rank gives None and
    keeps its columns, a larger one finishes; ``A - L L'`` is PSD with diagonal at most the
    target."""
    X, _ = _moons(400, 1)
    K = compute_kernel(X, sigma=0.5)
    pc = PivotedCholesky(lambda p: K[p], np.diag(K), 1e-10)
    assert pc.extend(5) is None and pc.L.shape[1] == 5
    L = pc.extend(400)
    assert 5 < L.shape[1] < 200
    E = K - L @ L.T
    assert np.max(np.diag(E)) <= 1e-10 * (1 + 1e-6)
    assert np.linalg.eigvalsh(E)[0] >= -1e-12
    assert pc.extend(1) is L  # done: no more work


@settings(max_examples=6, deadline=None, derandomize=os.environ.get("DANK_EXPLORE") != "1",
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31 - 1), sigma=st.sampled_from([0.3, 0.5, 2.0]),
       C=st.sampled_from([1.0, 32.0]), tau=st.sampled_from([0.0, 0.01]))
def test_newton_certifies_on_low_rank_kernels(seed, sigma, C, tau):
    """On make_moons at ``n = LOWRANK_MIN_N`` (kernels of rank 20-100, the low-rank curvature's
    domain) the default solver certifies from the SVC start and from a random fraction of it,
    and both bracket the same value."""
    X, y = _moons(N, seed % 1000)
    K = compute_kernel(X, sigma=sigma)
    a = svc_dual(K, y, C)
    eta = max(float(a @ a), 1e-3)
    rng = np.random.default_rng(seed)
    ref = solve_svm(K, y, C=C, eta=eta, tau=tau, alpha0=a, tol=1e-7, check_psd=False)
    res = solve_svm(K, y, C=C, eta=eta, tau=tau, alpha0=rng.random(N) * a, tol=1e-7,
                    check_psd=False)
    for r in (ref, res):
        assert r.status == "converged", r.message
    assert res.lower <= ref.upper + 1e-9 * abs(ref.upper)
    assert ref.lower <= res.upper + 1e-9 * abs(res.upper)
