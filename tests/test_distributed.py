"""The decomposition (section 4) on a real dask.distributed cluster.

A LocalCluster with separate worker processes solves the clusters; the result must equal the
serial one to 1e-10, and each cluster's data must be sent to the workers once.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install 'dank[distributed]')"
)

from distributed import Client, LocalCluster  # noqa: E402

from dank_fast import FeatureKernel, solve_decomposed  # noqa: E402


def _data(n=240, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[-3.0, 0.0], [0.0, 3.0], [3.0, 0.0]])
    X = np.vstack([rng.normal(c, 1.0, (n // 3, 2)) for c in centres])
    y = np.where(X[:, 0] * X[:, 1] + rng.normal(0, 0.5, X.shape[0]) > 0, 1.0, -1.0)
    return X, y


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as c:
        yield c


def test_decomposition_on_a_local_cluster_equals_serial(client):
    X, y = _data()
    kern = FeatureKernel(X, sigma=0.8)
    kw = dict(C=2.0, eta="svm", n_clusters=3, random_state=0, tol=1e-10)
    serial = solve_decomposed(kern, y, **kw)
    scattered = []
    real_scatter = client.scatter

    def counting(data, *a, **k):
        scattered.append(len(data))
        return real_scatter(data, *a, **k)

    client.scatter = counting
    try:
        dist = solve_decomposed(kern, y, client=client, **kw)
    finally:
        client.scatter = real_scatter
    # the work ran in other processes
    pids = set(client.run(os.getpid).values())
    assert len(pids) == 2 and os.getpid() not in pids
    assert dist.extra["engine"] == "dask" and serial.extra["engine"] == "joblib"
    # cluster data sent once (one scatter of the 3 clusters) for both tasks of every cluster
    assert scattered == [3]
    assert np.array_equal(dist.labels, serial.labels)
    assert dist.eta == pytest.approx(serial.eta, rel=1e-12)
    assert np.max(np.abs(dist.alpha - serial.alpha)) <= 1e-10 * kw["C"]
    assert abs(dist.lower - serial.lower) <= 1e-10 * abs(serial.lower)
    assert dist.success and serial.success
    assert abs(dist.full_value - serial.full_value) <= 1e-10 * abs(serial.full_value)


def test_dense_kernel_route_on_the_cluster(client):
    from dank_fast import compute_kernel

    X, y = _data(n=120, seed=1)
    K = compute_kernel(X, sigma=0.8)
    kw = dict(C=1.0, eta=10.0, n_clusters=2, X=X, random_state=0, tol=1e-10)
    serial = solve_decomposed(K, y, **kw)
    dist = solve_decomposed(K, y, client=client, **kw)
    assert np.max(np.abs(dist.alpha - serial.alpha)) <= 1e-10
    assert abs(dist.gap - serial.gap) <= 1e-10 * max(1.0, abs(serial.lower))
