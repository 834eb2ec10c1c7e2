"""Instances and independent closed forms shared by dank_ref's test modules.

The closed forms are plain numpy, written from docs/MATH.md (``H(a, F(a))`` with ``F(a)`` the
soft-thresholded eigendecomposition of ``11' + Gamma``), independent of dank_ref's
cancellation-free evaluation.
"""

from __future__ import annotations

import numpy as np


def gaussian(X, width):
    return np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / (2 * width**2))


def make_svm(n, d=2, seed=0, width=0.7, balance=0.5, dup=0):
    """P1 instance: Gaussian kernel, labels from a noisy threshold (both classes)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    if dup:
        X[-dup:] = X[:dup]
    score = X[:, 0] + 0.3 * rng.normal(size=n)
    y = np.where(score > np.quantile(score, 1 - balance), 1.0, -1.0)
    if np.all(y == y[0]):
        y[0] = -y[0]
    if dup:  # duplicates keep their label (consistent duplicates)
        y[-dup:] = y[:dup]
        if np.all(y == y[0]):
            y[dup] = -y[dup]
    return gaussian(X, width), y


def svm_instance(n=20, seed=0):
    """P1 instance: labels by the first coordinate, width 0.5."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    y = np.where(X[:, 0] > 0.5, 1.0, -1.0)
    return gaussian(X, 0.5), y


def make_svr(n, d=1, seed=0, width=0.3, noise=0.1, dup=0):
    """P2 instance: ``y = sin(4 x) + noise``."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    if dup:
        X[-dup:] = X[:dup]
    y = np.sin(4 * X[:, 0]) + noise * rng.normal(size=n)
    if dup:
        y[-dup:] = y[:dup]
    return gaussian(X, width), y


def svr_instance(n=20, seed=0):
    """P2 instance without noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 1))
    return gaussian(X, 0.3), np.sin(4 * X[:, 0])


def make_decomposed(n, d=2, seed=0, width=0.6, v=3):
    """P3 instance: kernel, labels and ``v`` random clusters."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0.5, 1.0, -1.0)
    return gaussian(X, width), y, rng.integers(0, v, size=n)


def _F(M, tau):
    lam, U = np.linalg.eigh(M)
    return (U * np.maximum(lam - tau / 2, 0)) @ U.T


def h_svm(K, y, a, eta, tau):
    """Direct ``(H(a, F(a)), F(a))`` of P1 (cancellation-prone, but independent)."""
    d = a * y
    F = _F(np.ones_like(K) + np.outer(d, d) * K / (4 * eta), tau)
    H = a.sum() - 0.5 * d @ (F * K) @ d + eta * np.sum((F - 1) ** 2) + tau * eta * np.trace(F)
    return H, F


def h_svr(K, y, ah, ac, eps, eta, tau):
    """Direct ``(H, F)`` of P2 at the pair ``(ah, ac)``."""
    b = ah - ac
    F = _F(np.ones_like(K) + np.outer(b, b) * K / (4 * eta), tau)
    H = (-0.5 * b @ (F * K) @ b + b @ y - eps * np.sum(ah + ac)
         + eta * np.sum((F - 1) ** 2) + tau * eta * np.trace(F))
    return H, F


def h_decomposed(Kb, y, a, eta):
    """Direct ``h`` of P3 on the block kernel (``tau = 0``)."""
    d = a * y
    return a.sum() - 0.5 * d @ Kb @ d - np.sum((np.outer(d, d) * Kb) ** 2) / (16 * eta)


def assert_exactly_feasible_svm(a, y, C):
    assert np.all(a >= 0.0) and np.all(a <= C)
    assert abs(float(y @ a)) <= 1e-12 * C * np.sqrt(len(y))
