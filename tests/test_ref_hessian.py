"""dank_ref's exact Hessian of ``h`` (Daleckii-Krein, dank_ref/hessian.py) against finite
differences of dank_ref's own gradient ``-(F(d) o K) d`` (Danskin), for tau = 0, 0.5, 2, and
the polisher that uses it (with the approximate Hessian, tau > 0 converges only linearly).
"""

from __future__ import annotations

import numpy as np
import pytest

import dank_ref
from dank_ref.certificate import inner_F
from dank_ref.hessian import HessianOp, SpectralHessian, exact_hessian_d, hessian_d


def _instance(n: int, seed: int, scale: float):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    K = np.exp(-np.sum((X[:, None] - X[None]) ** 2, axis=-1) / 2.0)
    return K, scale * rng.normal(size=n)


def _fd_hessian(K, d, eta, tau, h=1e-6):
    """Central differences of the gradient of the smooth part, ``-(F(d) o K) d``."""
    def grad(z):
        return -(inner_F(K, z, eta=eta, tau=tau) * K) @ z
    cols = [(grad(d + h * e) - grad(d - h * e)) / (2 * h) for e in np.eye(d.size)]
    return np.array(cols).T


@pytest.mark.parametrize("tau", [0.0, 0.5, 2.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_exact_hessian_matches_finite_differences(tau, seed):
    K, d = _instance(12, seed, 3.0)
    eta = 0.7
    F = inner_F(K, d, eta=eta, tau=tau)
    H = exact_hessian_d(K, d, F, eta, tau)
    H_fd = _fd_hessian(K, d, eta, tau)
    assert np.max(np.abs(H - H_fd)) <= 1e-7 * np.max(np.abs(H_fd))
    assert np.array_equal(H, H.T)
    spec = SpectralHessian(K, d, F, eta, tau)
    assert 0 < spec.rank <= 12
    if tau > 0.0:  # some eigenvalue is killed, and the approximate Hessian is then wrong
        assert spec.rank < 12
        assert np.max(np.abs(hessian_d(K, d, F, eta) - H_fd)) > 1e-3 * np.max(np.abs(H_fd))


@pytest.mark.parametrize("tau", [0.0, 0.5, 2.0])
def test_blocks_and_products_agree_with_the_full_matrix(tau):
    K, d = _instance(10, 3, 2.0)
    y = np.where(np.arange(10) % 2 == 0, 1.0, -1.0)
    a = d * y  # d = a o y
    F = inner_F(K, d, eta=0.5, tau=tau)
    H = exact_hessian_d(K, d, F, 0.5, tau) * np.outer(y, y)
    op = HessianOp(K, d, F, 0.5, tau, y=y)
    idx = np.array([7, 2, 5, 0])
    assert np.allclose(op.block(idx), H[np.ix_(idx, idx)], rtol=1e-12, atol=1e-12)
    v = np.random.default_rng(4).normal(size=10)
    assert np.allclose(op.matvec(v), H @ v, rtol=1e-11, atol=1e-11)
    assert a.shape == (10,)


def test_blocks_beyond_the_budget_fall_back_to_the_approximate_hessian():
    K, d = _instance(10, 5, 3.0)
    F = inner_F(K, d, eta=0.7, tau=0.5)
    op = HessianOp(K, d, F, 0.7, 0.5, budget=0.0)
    idx = np.arange(10)
    assert np.array_equal(op.block(idx), hessian_d(K, d, F, 0.7))
    assert (op.n_exact, op.n_approx) == (0, 1)


def test_tau_one_far_start_is_polished_to_the_optimum():
    """A slow family for the SDP (blobs, 15% positive, C = 100, eta = 1000, tau = 1): the cheap
    start (the eta -> inf limit QP) is far from a*, and the exact Hessian with ascent on h
    polishes it to a certified optimum without the SDP."""
    rng = np.random.default_rng(2100)
    n = 100
    y = np.where(rng.uniform(size=n) < 0.15, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    X = rng.normal(size=(n, 2)) + 1.5 * y[:, None]
    K = np.exp(-np.sum((X[:, None] - X[None]) ** 2, axis=-1) / 2.0)
    r = dank_ref.solve_svm(K, y, C=100.0, eta=1000.0, tau=1.0, tol=1e-10, time_limit=20.0)
    assert r.status == "converged" and r.rel_gap <= 1e-10
    assert [s["stage"] for s in r.solver_stats["stages"]] == ["limit_qp"]
