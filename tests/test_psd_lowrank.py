"""The PSD test of a precomputed kernel at the sizes where its cheap sufficient test is tried
(docs/validity.md): ``solve_svm`` accepts smooth PSD kernels and kernels dented within the
rule, refuses those dented below it, and decides full-rank kernels alike; on kernels of exact
low rank, repeated points included, the Newton route certifies the same saddle value as the
accelerated method."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from dank_fast import compute_kernel, solve_svm

EPS = 1e-8  # eps_psd of a float64 kernel
# a size at which the cheap test is tried (from about 550: a pivoted Cholesky to rank n / 16
# within a tenth of the Cholesky's n^3 / 3) and decides these kernels: their rank at the
# test's tolerance, about 60, is within n / 16
N = 1000


def smooth_kernel(n: int, seed: int, sigma: float = 0.5) -> np.ndarray:
    X = np.random.default_rng(seed).uniform(size=(n, 2))
    # a copy: compute_kernel's own array carries a proof and skips the tests under test here
    return compute_kernel(X, sigma=sigma).copy()


def labels(n: int, seed: int) -> np.ndarray:
    return np.where(np.random.default_rng(seed + 100).random(n) < 0.5, -1.0, 1.0)


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


def accepted(K: np.ndarray, seed: int) -> bool:
    """Whether ``solve_svm`` takes ``K`` (one iteration: only the check is under test)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # one iteration does not certify
            solve_svm(K, labels(K.shape[0], seed), C=1.0, eta=1.0, tau=0.01,
                      method="accelerated", max_iter=1)
    except ValueError as err:
        assert "not positive semi-definite" in str(err)
        return False
    return True


@pytest.mark.parametrize("seed", [0, 1])
def test_smooth_psd_kernel_is_accepted(seed):
    assert accepted(smooth_kernel(N, seed), seed)


@pytest.mark.parametrize("seed, factor", [(0, 1.5), (1, 4.0), (2, 30.0)])
def test_never_accepts_below_the_threshold(seed, factor):
    """lambda_min < -eps n s: refused, whichever test decides."""
    K, w = dent(smooth_kernel(N, seed), factor * EPS * N, seed)
    s = float(np.max(np.abs(K)))
    assert float(w @ K @ w) < -EPS * N * s  # Rayleigh quotient >= lambda_min: below the rule
    assert not accepted(K, seed)


def test_accepts_a_small_dent_within_the_rule():
    """lambda_min = -eps n s / 100: indefinite, but within the rule."""
    K, w = dent(smooth_kernel(N, 3), 0.01 * EPS * N, 3)
    assert float(w @ K @ w) < 0.0
    assert accepted(K, 3)


def test_smooth_and_full_rank_kernels_are_decided_alike():
    """A smooth and a full-rank (nearly the identity) PSD kernel are both accepted; one with a
    negative eigenvalue beyond the tolerance is not."""
    assert accepted(smooth_kernel(N, 0), 0)
    assert accepted(smooth_kernel(N, 0, sigma=1e-3), 0)
    bad = smooth_kernel(N, 0)
    bad[0, 0] -= 1.0
    assert not accepted(bad, 0)


@pytest.mark.parametrize("copies", [1, 3])
def test_newton_on_a_kernel_of_exact_low_rank_certifies_the_accelerated_value(copies):
    """``K = G G'`` of rank 195 (with ``copies`` > 1 every point repeated, so that blocks of
    pivots are rank-deficient): the Newton route and the accelerated method each certify
    ``tol``, and their brackets hold the same saddle value."""
    G = np.repeat(np.random.default_rng(7).normal(size=(200, 195)), copies, axis=0)
    K = G @ G.T / 195.0
    y = labels(K.shape[0], copies)
    kw = dict(C=4.0, eta=2.0, tau=0.01, tol=1e-6)
    newton = solve_svm(K, y, method="newton", **kw)
    acc = solve_svm(K, y, method="accelerated", **kw)
    for res in (newton, acc):
        assert res.status == "converged" and res.rel_gap <= 1e-6
    assert newton.lower <= acc.upper and acc.lower <= newton.upper
