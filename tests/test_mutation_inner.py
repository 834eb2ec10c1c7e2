"""Inner minimiser (dank_fast/inner.py): contracts that mutation testing found unchecked.

``F(d) = J_{tau/2}(11' + D K D / (4 eta))`` when exactly one point is outside the support (the
reduced basis then has a single "ghost" direction), ``n_total`` points of the whole problem
for a working set's kernel, and the ``DANK_BLAS_THREADS`` override (benchmarks/MUTATION.md).
The reference is the definition, by a dense ``numpy.linalg.eigh``.
"""

from __future__ import annotations

import numpy as np
import pytest

from dank_fast import compute_kernel
from dank_fast.inner import PARALLEL_MIN, KernelData, blas_threads, inner_minimiser


def _ref_F(K, d, eta, tau):
    n = d.size
    lam, V = np.linalg.eigh(np.ones((n, n)) + np.outer(d, d) * K / (4 * eta))
    return (V * np.maximum(lam - tau / 2, 0.0)) @ V.T


@pytest.mark.parametrize("route", ["dense", "auto"])
@pytest.mark.parametrize("tau", [0.01, 1.0])
def test_F_with_exactly_one_point_outside_the_support(route, tau):
    """m = n - |S| = 1: the row of F of the only non-support point is still J_{tau/2}'s."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(9, 2))
    K = compute_kernel(X, sigma=1.0)
    d = rng.uniform(0.2, 1.0, 9) * np.where(np.arange(9) % 2 == 0, 1.0, -1.0)
    d[3] = 0.0
    sol = inner_minimiser(KernelData(K), d, 0.5, tau, route=route)
    Fref = _ref_F(K, d, 0.5, tau)
    np.testing.assert_allclose(sol.F.dense(), Fref, rtol=0, atol=1e-9 * np.abs(Fref).max())


def test_kernel_data_keeps_the_number_of_points_of_the_whole_problem():
    K = np.eye(3)
    assert KernelData(K).n_total == 3
    kd = KernelData(K, n_total=7)
    assert (kd.n, kd.n_total) == (3, 7)


def test_blas_threads_override_for_large_work(monkeypatch):
    """``DANK_BLAS_THREADS=1`` caps BLAS at one thread for work of dimension >= PARALLEL_MIN.

    Observable only when some BLAS runs more than one thread (not under
    ``OPENBLAS_NUM_THREADS=1``, as in the mutation runs: a library started single-threaded
    cannot be raised)."""
    from threadpoolctl import threadpool_info

    def counts():
        return [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]

    now = counts()
    if not now or max(now) == 1:
        pytest.skip("BLAS is single-threaded already: the override cannot be observed")
    monkeypatch.setenv("DANK_BLAS_THREADS", "1")
    with blas_threads(PARALLEL_MIN):
        assert set(counts()) == {1}
    assert counts() == now
