"""Memory of the decomposition: a solved cluster keeps ``O(n_c)``, not ``K_c``.

A per-cluster result must not keep its ``KernelData`` (``K_c`` and cached blocks of it): the
fit's memory would then grow with ``sum_c n_c^2`` and stay alive in ``results_``. These tests
measure the arrays a result holds and look for kernels that survive a fit.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
from _scripts import load_script
from sklearn.datasets import make_classification
from threadpoolctl import threadpool_limits

from dank_fast import DANKClassifier, FeatureKernel, compute_kernel, solve_decomposed
from dank_fast.cluster_result import ClusterF, SubKernel
from dank_fast.inner import KernelData

# the measure the memory probe (benchmarks/memory_probe.py) reports, loaded from its file
held_bytes = load_script("benchmarks/_held.py").held_bytes


@pytest.fixture(autouse=True)
def _one_thread():
    with threadpool_limits(1):
        yield


def _data(n: int, seed: int = 0):
    X, y = make_classification(n_samples=n, n_features=5, n_informative=3, random_state=seed)
    return X, np.where(y == 1, 1.0, -1.0)


def test_held_bytes_sees_a_kernel():
    """The measure itself: a KernelData holding a 300 x 300 kernel weighs its 720,000 bytes."""
    kd = KernelData(np.ones((300, 300)))
    assert held_bytes(kd) >= 8 * 300 * 300


@pytest.mark.parametrize("route", ["features", "dense"])
def test_a_cluster_result_holds_O_nc_not_nc_squared(route):
    X, y = _data(600)
    labels = (X[:, 0] > np.median(X[:, 0])).astype(int)
    K = FeatureKernel(X, sigma=1.5) if route == "features" else compute_kernel(X, sigma=1.5)
    res = solve_decomposed(K, y, C=2.0, eta="svm", labels=labels)
    assert res.success
    for r, idx in zip(res.results, res.blocks, strict=True):
        n_c = idx.size
        assert isinstance(r.kernel, SubKernel) and r.kernel.parent is res.kernel
        assert isinstance(r.inner.F, ClusterF) and r.inner.F.kernel is r.kernel
        held = held_bytes(r, skip=(res.kernel,))  # the parent kernel is the caller's data
        # alpha, d, the indices, a few vectors of history: far below one K_c (8 n_c^2 bytes)
        assert held <= 16 * 8 * n_c < 8 * n_c * n_c / 10


def test_a_compact_result_computes_F_and_F_o_K_like_the_dense_formula():
    X, y = _data(200, seed=1)
    labels = np.arange(200) % 2
    res = solve_decomposed(FeatureKernel(X, sigma=1.5), y, C=1.0, eta=3.0, labels=labels,
                           tol=1e-9)
    K = compute_kernel(X, sigma=1.5)
    x = np.random.default_rng(0).normal(size=100)
    x[::3] = 0.0
    for r, idx in zip(res.results, res.blocks, strict=True):
        d = r.alpha * y[idx]
        Kc = K[np.ix_(idx, idx)]
        F = 1.0 + np.outer(d, d) * Kc / (4 * res.eta)
        np.testing.assert_allclose(r.F, F, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(r.inner.F.column([3, 7]), F[:, [3, 7]], rtol=1e-13)
        np.testing.assert_allclose(r.apply_FK(x), (F * Kc) @ x, rtol=1e-12, atol=1e-12)


def test_a_decomposed_fit_keeps_no_kernel_alive(monkeypatch):
    """Every KernelData built during a fit (one per cluster solve) is freed when it returns,
    and so is every cluster kernel the tasks computed."""
    made: list[weakref.ref] = []
    real_init = KernelData.__init__

    def spy(self, K, **kw):
        real_init(self, K, **kw)
        made.append(weakref.ref(self))
        made.append(weakref.ref(K))

    monkeypatch.setattr(KernelData, "__init__", spy)
    X, y = _data(900, seed=2)
    clf = DANKClassifier(C=4.0, gamma=0.5, decomposition=3, extension="nearest",
                         random_state=0).fit(X, y)
    gc.collect()
    assert clf.results_[0].success
    assert len(made) >= 2 * 3  # at least one kernel per cluster was built ...
    assert [w for w in made if w() is not None] == []  # ... and none outlived the fit


def test_the_fitted_estimator_holds_the_data_not_the_clusters_squares():
    X, y = _data(900, seed=3)
    clf = DANKClassifier(C=4.0, gamma=0.5, decomposition=3, extension="nearest",
                         random_state=0).fit(X, y)
    n_c = max(idx.size for idx in clf.results_[0].blocks)
    # X (fit and the problem's copy), O(n) vectors per model: well below one cluster kernel
    held = held_bytes(clf)
    assert held <= 4 * X.nbytes + 40 * 8 * X.shape[0] < 8 * n_c * n_c
