"""The low-rank surrogate ``K~ = L L'`` (:mod:`dank_fast._surrogate`): its kernel data against the
same quantities computed from the dense ``L L'``, its inner minimiser against the dense route,
and solves presolved on it, certified on ``K`` itself."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import make_moons

from dank_fast import ConvergenceWarning, compute_kernel, solve_svm, svm_certificate
from dank_fast._kernel_data import KernelData
from dank_fast._psd import LOWRANK_MIN_N, PivotedCholesky
from dank_fast._surrogate import FactorKernelData
from dank_fast.inner import inner_minimiser
from dank_fast.svm import svc_dual

N = LOWRANK_MIN_N


def _moons(n: int, seed: int, noise: float = 0.3):
    X, y = make_moons(n, noise=noise, random_state=seed)
    X = (X - X.min(axis=0)) / np.ptp(X, axis=0)
    return X, np.where(y == 1, 1.0, -1.0)


def _factor(K: np.ndarray) -> np.ndarray:
    L = PivotedCholesky(lambda p: K[p], np.diag(K).copy(), 1e-9).extend(K.shape[0] // 4)
    assert L is not None  # make_moons at sigma 0.5: rank ~45 of 1,000
    return L


@pytest.fixture(scope="module")
def moons():
    X, y = _moons(N, 0)
    K = compute_kernel(X, sigma=0.5)
    return K, y, _factor(K)


def test_factor_kernel_data_are_those_of_the_dense_product(moons):
    """Products, the exact ``Gamma`` sums and the bound on ``lambda_max`` from the factor alone
    equal those of :class:`KernelData` on the dense ``L L'``."""
    K, _, L = moons
    fkd, dense = FactorKernelData(KernelData(K), L), KernelData(L @ L.T)
    rng = np.random.default_rng(0)
    S = np.sort(rng.choice(N, 300, replace=False))
    dS = rng.normal(size=S.size)
    X = rng.normal(size=(S.size, 3))
    np.testing.assert_allclose(fkd.support_product(S, X), dense.support_product(S, X),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fkd.block_product(S, X), dense.block_product(S, X),
                               rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fkd.block(S), dense.block(S), atol=1e-12)
    for got, want in zip(fkd.gamma_sums(S, dS), dense.gamma_sums(S, dS), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    a = np.abs(dS)
    top = np.linalg.eigvalsh(a[:, None] * dense.block(S) * a[None, :])[-1]
    assert fkd.top_bound(S, a) == pytest.approx(top, rel=1e-9)
    assert dense.top_bound(S, a) >= top * (1 - 1e-12)  # Collatz-Wielandt: a bound, not exact


@pytest.mark.parametrize("tau", [0.01, 1.0])
def test_factor_inner_minimiser_is_the_dense_one(moons, tau):
    """On the surrogate the eigen-route works in the range of ``vv' + Gamma`` (``r + 1``
    columns): the same ``F``, value and bracket as the dense eigendecomposition of ``L L'``."""
    K, y, L = moons
    a = svc_dual(K, y, 1.0)
    eta = 1e-2 * float(a @ a)  # small eta: F far from 11', of rank well above 1
    d = a * y
    fast = inner_minimiser(FactorKernelData(KernelData(K), L), d, eta, tau, route="auto")
    exact = inner_minimiser(KernelData(L @ L.T), d, eta, tau, route="dense")
    assert fast.route == "lanczos" and fast.eigvals.size <= L.shape[1] + 1
    assert fast.F.rank == exact.F.rank > 1
    np.testing.assert_allclose(fast.F.dense(), exact.F.dense(), atol=1e-8 * N)
    scale = float(N) ** 2
    assert fast.deficit <= exact.deficit + 1e-12 * scale
    assert fast.deficit + fast.excess >= exact.deficit - 1e-12 * scale
    assert fast.excess <= 1e-12 * N


@pytest.mark.parametrize("C", [1.0, 32.0])
def test_presolved_solve_is_certified_on_the_kernel_itself(C):
    """The default solve presolves on the surrogate (``extra["presolve"]``) and certifies on
    ``K``: the independent certificate on ``K`` holds its gap, and its bracket meets the
    bracket of Newton's solve from zero on ``K`` alone."""
    X, y = _moons(2 * N, 0)
    K = compute_kernel(X, sigma=0.5)
    a = svc_dual(K, y, C)
    eta = float(a @ a)
    res = solve_svm(K, y, C=C, eta=eta, tau=0.01)
    assert res.status == "converged"
    assert "presolve" in res.extra and res.extra["presolve"]["rank"] < 100
    cert = svm_certificate(K, y, res.alpha, C=C, eta=eta, tau=0.01)
    assert cert.rel_gap <= 1e-6
    ref = solve_svm(K, y, C=C, eta=eta, tau=0.01, method="newton")
    assert "presolve" not in ref.extra
    assert cert.lower <= ref.certificate.upper and ref.certificate.lower <= cert.upper


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sigma=st.sampled_from([0.3, 0.5, 1.0, 2.0]), C=st.sampled_from([0.5, 4.0, 64.0]),
       tau=st.sampled_from([0.01, 0.5]), shrink=st.sampled_from([1.0, 30.0]))
def test_presolved_solves_certify_over_widths_boxes_and_eta(sigma, C, tau, shrink):
    """Over kernel widths, boxes, ``tau`` and ``eta`` down to a thirtieth of the paper's rule,
    every default solve ends converged with a certificate on ``K`` that an independent
    computation reproduces."""
    X, y = _moons(2 * N, 1, noise=0.2)
    K = compute_kernel(X, sigma=sigma)
    a = svc_dual(K, y, C)
    eta = float(a @ a) / shrink
    res = solve_svm(K, y, C=C, eta=eta, tau=tau)
    assert res.status == "converged"
    cert = svm_certificate(K, y, res.alpha, C=C, eta=eta, tau=tau)
    assert cert.rel_gap <= 1e-6
    assert cert.lower <= res.certificate.upper and res.certificate.lower <= cert.upper


def test_presolved_solve_reports_its_whole_time_and_keeps_max_iter():
    """With a start of its own (``method="newton"``, ``alpha0``) a presolved solve reports the
    time of both solves (most of the wall time; the solve on ``K`` alone is a fraction of it),
    and ``max_iter`` bounds the Newton steps of both together (at least one step on ``K``)."""
    X, y = _moons(2 * N, 0)
    K = compute_kernel(X, sigma=0.5)
    a = svc_dual(K, y, 32.0)
    eta = float(a @ a)
    t0 = time.perf_counter()
    res = solve_svm(K, y, C=32.0, eta=eta, tau=0.01, method="newton", alpha0=a,
                    check_psd=False)
    wall = time.perf_counter() - t0
    assert res.extra["presolve"]["n_iter"] >= 3 and res.success
    assert res.time >= 0.6 * wall
    with pytest.warns(ConvergenceWarning):
        short = solve_svm(K, y, C=32.0, eta=eta, tau=0.01, method="newton", alpha0=a,
                          max_iter=3, check_psd=False)
    assert short.extra["newton_iter"] <= 4
