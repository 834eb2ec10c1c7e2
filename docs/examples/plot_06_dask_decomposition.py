"""
The decomposition on a dask cluster
===================================

:func:`dank_fast.solve_decomposed` solves the paper's scalable problem P3: k-means clusters of
the data, one DANK problem per cluster, one ``eta`` for all so the certificate stays valid.
With ``client=`` the clusters run on a ``dask.distributed`` cluster: each worker receives its
clusters' rows once and only ``O(n_c)`` per cluster comes back.

This example uses a thread-based :class:`~distributed.LocalCluster` so that it runs anywhere
(here, inside the documentation build).  A cluster of worker *processes* must be started
under an ``if __name__ == "__main__":`` guard, because the workers import the script::

    if __name__ == "__main__":
        with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="2GiB",
                          dashboard_address=None) as cluster, Client(cluster) as client:
            main(client)

On several machines: ``dask scheduler`` on one host, ``dask worker tcp://HOST:8786`` on each
machine, then ``Client("tcp://HOST:8786")``.  The workers need the same versions of this
package and its dependencies as the client.
"""

# %%
import numpy as np

from dank_fast import FeatureKernel, solve_decomposed

try:
    from distributed import Client, LocalCluster
except ImportError:  # dask is optional: pip install "dank-kernels[distributed]"
    Client = LocalCluster = None
    print("dask.distributed is not installed: this example is skipped")

rng = np.random.default_rng(0)
X = rng.normal(size=(600, 2))
y = np.where(X[:, 0] * X[:, 1] > 0, 1.0, -1.0)

if LocalCluster is not None:
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        res = solve_decomposed(FeatureKernel(X, sigma=0.5), y, C=1.0, eta="svm",
                               n_clusters=4, random_state=0, client=client)
    print(res.status, f"rel_gap={res.rel_gap:.1e}", "engine:", res.extra["engine"])
    assert res.status == "converged"

# %%
# Without dask, ``solve_decomposed(..., n_jobs=2)`` spreads the clusters over joblib workers,
# and ``DANKClassifier(decomposition=v)`` does the same inside ``fit``.
res = solve_decomposed(FeatureKernel(X, sigma=0.5), y, C=1.0, eta="svm", n_clusters=4,
                       random_state=0, n_jobs=1)
print(res.status, f"rel_gap={res.rel_gap:.1e}", "engine:", res.extra["engine"])
