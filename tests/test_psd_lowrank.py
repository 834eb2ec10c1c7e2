"""The cheap sufficient PSD test (dank_fast/_psd.py): it accepts smooth PSD kernels, never
accepts a matrix below the rule's threshold, and leaves check_kernel_matrix's decisions as the
exact rule of docs/validity.md makes them; its blocked pivoted Cholesky stops at the rank of a
matrix of known rank, rank-deficient blocks included."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from dank_fast import compute_kernel
from dank_fast._cost import BLOCK, growth_flops, psd_test_pays
from dank_fast._kernel_validation import check_kernel_matrix
from dank_fast._psd import PivotedCholesky, lowrank_gershgorin_psd, take

EPS = 1e-8  # eps_psd of a float64 kernel
N = min(n for n in range(16, 4000) if psd_test_pays(n))  # the smallest size it is tried at


def smooth_kernel(n: int, seed: int, sigma: float = 0.5) -> np.ndarray:
    X = np.random.default_rng(seed).uniform(size=(n, 2))
    # a copy: compute_kernel's own array carries a proof and skips the tests under test here
    return compute_kernel(X, sigma=sigma).copy()


def null_direction(K: np.ndarray, seed: int) -> np.ndarray:
    """A unit ``w`` with ``w'Kw`` tiny: a random vector off the range of ``K G`` (``G`` random,
    80 columns), which holds the dominant eigenvectors of the smooth ``K``."""
    rng = np.random.default_rng(seed)
    with threadpool_limits(1):  # busy-waiting BLAS threads on a loaded machine: far slower
        Q, _ = np.linalg.qr(K @ rng.normal(size=(K.shape[0], 80)))
    g = rng.normal(size=K.shape[0])
    w = g - Q @ (Q.T @ g)
    return w / np.linalg.norm(w)


def dent(K: np.ndarray, depth: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(K - depth * w w', w)``: the entries move by about ``depth / n`` while
    ``lambda_min <= w'Kw - depth`` (about ``-depth``)."""
    w = null_direction(K, seed)
    return K - depth * np.outer(w, w), w


@pytest.mark.parametrize("seed", [0, 1])
def test_smooth_psd_kernel_is_accepted(seed):
    K = smooth_kernel(N, seed)
    assert lowrank_gershgorin_psd(K, float(np.max(np.abs(K))), EPS)


@pytest.mark.parametrize("seed, factor", [(0, 1.5), (1, 4.0), (2, 30.0)])
def test_never_accepts_below_the_threshold(seed, factor):
    """lambda_min < -eps n s: the test must not accept (the Gershgorin row sums see it)."""
    K, w = dent(smooth_kernel(N, seed), factor * EPS * N, seed)
    s = float(np.max(np.abs(K)))
    assert float(w @ K @ w) < -EPS * N * s  # Rayleigh quotient >= lambda_min: below the rule
    assert not lowrank_gershgorin_psd(K, s, EPS)


def test_rejection_below_the_threshold_stands():
    K, _ = dent(smooth_kernel(N, 5), 2.0 * EPS * N, 5)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        check_kernel_matrix(K)


def test_accepts_a_small_dent_within_the_rule():
    """lambda_min = -eps n s / 100: within the rule, and proved so without the Cholesky."""
    K, w = dent(smooth_kernel(N, 3), 0.01 * EPS * N, 3)
    s = float(np.max(np.abs(K)))
    assert float(w @ K @ w) < 0.0  # indefinite, but within the rule
    assert lowrank_gershgorin_psd(K, s, EPS)


def test_not_decided_for_small_or_full_rank_matrices():
    K = smooth_kernel(N - 1, 0)
    assert not lowrank_gershgorin_psd(K, 1.0, EPS)  # too small to try: the Cholesky's job
    narrow = smooth_kernel(N, 0, sigma=1e-3)  # nearly the identity: rank n, not low
    assert not lowrank_gershgorin_psd(narrow, 1.0, EPS)


def test_check_kernel_matrix_accepts_smooth_and_full_rank_kernels_alike():
    """The cheap test answers for a smooth kernel, the Cholesky for a full-rank one: both PSD
    kernels are accepted, and a kernel with a negative eigenvalue beyond the tolerance is not."""
    check_kernel_matrix(smooth_kernel(N, 0))
    check_kernel_matrix(smooth_kernel(N, 0, sigma=1e-3))
    bad = smooth_kernel(N, 0)
    bad[0, 0] -= 1.0
    with pytest.raises(ValueError):
        check_kernel_matrix(bad)



@pytest.mark.parametrize("copies", [1, 3])
def test_blocked_factor_stops_at_the_rank(copies):
    """``A = G G'`` of rank ``r`` (more than a block, the last block rank-deficient; with
    ``copies`` > 1 every point repeated, so that each block holds redundant pivots): the factor
    has ``r`` finite columns, its residual diagonal is ``diag(A - LL')`` to rounding, and a
    budget below ``r`` returns None, keeps its columns and resumes from them."""
    r = BLOCK + BLOCK // 2 + 3
    G = np.repeat(np.random.default_rng(7).normal(size=(200, r)), copies, axis=0)
    A = G @ G.T
    s = float(np.max(np.abs(A)))
    pc = PivotedCholesky(lambda P, cols=None: take(A, P, cols), np.diagonal(A), 1e-10 * s)
    assert pc.extend(r - 5) is None
    assert pc.L.shape[1] == r - 5
    L = pc.extend(A.shape[0])
    assert L is not None and L.shape[1] == r and np.all(np.isfinite(L))
    assert np.all(pc.residual <= 1e-10 * s)
    assert np.allclose(pc.residual, np.diagonal(A) - np.einsum("ij,ij->i", L, L),
                       rtol=0.0, atol=1e-12 * s)
    assert np.allclose(L @ L.T, A, rtol=0.0, atol=1e-8 * s)
    # a budget below the columns an earlier call grew: None (the Newton model's Woodbury form
    # keeps to its flop budget by it), and the columns are kept
    assert pc.extend(r - 1) is None and pc.L.shape[1] == r
    assert pc.extend(r) is pc.L


def test_reach_is_the_most_columns_a_budget_of_flops_grows():
    """The Woodbury route grows a factor only as far as the flops it may spend: ``reach``
    gives the most columns whose growth from the current ones stays within them."""
    K = smooth_kernel(300, 0, sigma=0.05)
    pc = PivotedCholesky(lambda P, cols=None: take(K, P, cols), np.diagonal(K), 1e-9)
    assert pc.extend(10) is None
    for flops in (0.0, 1e5, 1e7, 3e8, 1e12):
        k = pc.reach(flops)
        assert k >= 10 and growth_flops(300, 10, k) <= flops < growth_flops(300, 10, k + 1)
