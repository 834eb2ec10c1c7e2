"""P1 on all points through working sets over a FeatureKernel (no n x n kernel).

Checked against the dense solver on the same kernel: the two certified brackets of the saddle
value overlap, the learned F agrees entry by entry, the decision values agree, and the route
never asks the FeatureKernel for the whole matrix.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dank_fast import FeatureKernel, compute_kernel, solve_svm
from dank_fast.svm import svc_dual
from dank_fast.working_set import solve_svm_working_set


def moons(n, seed, noise=0.3):
    from sklearn.datasets import make_moons

    X, y01 = make_moons(n, noise=noise, random_state=seed)
    X = (X - X.min(0)) / (X.max(0) - X.min(0))
    return X, 2.0 * y01 - 1.0


@pytest.fixture(autouse=True)
def _no_dense(monkeypatch):
    def refuse(self, *a, **k):
        raise AssertionError("the working-set route formed the n x n kernel")

    monkeypatch.setattr(FeatureKernel, "dense", refuse)


@pytest.mark.parametrize("tau", [0.0, 0.01, 0.5])
@pytest.mark.parametrize("C", [0.5, 30.0])
def test_working_set_matches_the_dense_solver(C, tau):
    X, y = moons(250, seed=3)
    sigma = 0.3
    K = compute_kernel(X, sigma=sigma)
    a = svc_dual(K, y, C)
    eta = float(a @ a)
    dense = solve_svm(K, y, C=C, eta=eta, tau=tau, tol=1e-10, check_psd=False)
    ws = solve_svm(FeatureKernel(X, sigma=sigma), y, C=C, eta=eta, tau=tau, tol=1e-10)
    assert ws.method == "working-set" and ws.success and ws.rel_gap <= 1e-10
    assert ws.lower <= ws.upper
    scale = 1e-9 * abs(dense.upper)
    assert ws.lower <= dense.upper + scale and dense.lower <= ws.upper + scale
    # the learned F (through the factors / rows) and the decision values agree
    Fd = dense.F
    Fw = ws.F_rows(np.arange(y.size))
    np.testing.assert_allclose(Fw, Fd, rtol=0, atol=1e-6 * np.abs(Fd).max())
    dec_d = dense.apply_FK(dense.alpha * y) + dense.bias
    dec_w = ws.apply_FK(ws.alpha * y) + ws.bias
    np.testing.assert_allclose(dec_w, dec_d, rtol=0, atol=1e-5 * np.abs(dec_d).max())
    assert np.mean(np.sign(dec_w) == np.sign(dec_d)) >= 0.99


# ---------------------------------------------------------------- bookkeeping of the rounds


@pytest.fixture(scope="module")
def problem():
    X, y = moons(120, seed=5)
    return FeatureKernel(X, sigma=0.3), y


def test_bookkeeping_of_rounds_and_warm_start(problem):
    """Without ``alpha0`` the start is scikit-learn's SVC ("svc"); rounds are numbered 1, 2, ...
    and ``n_iter`` is the sum of the Newton steps of every round, also in ``extra`` under the
    dense solve's key."""
    kernel, y = problem
    res = solve_svm_working_set(kernel, y, C=1.0, eta=5.0, tau=0.01, tol=1e-8)
    assert res.status == "converged" and res.rel_gap <= 1e-8
    assert res.extra["warm_start"] == "svc"
    assert [r["round"] for r in res.rounds] == list(range(1, len(res.rounds) + 1))
    assert res.n_iter == sum(r["newton"] for r in res.rounds)
    assert res.n_iter >= len(res.rounds)
    assert res.extra["newton_iter"] == res.n_iter
    last = res.rounds[-1]
    assert last["rel_gap"] == res.rel_gap and last["W"] >= last["support"] >= 2
    # the certificate's own fields: feasible point, the bias inside its optimal interval
    cert = res.certificate
    assert 0.0 <= cert.infeasibility <= 1e-9
    lo, hi = cert.bias_interval
    assert lo <= res.bias <= hi


@pytest.mark.parametrize("n, C, eta", [(600, 4.0, 0.05), (600, 30.0, 0.5), (400, 30.0, 0.5)])
def test_rounds_after_a_dense_evaluation_take_one_newton_step(n, C, eta):
    """Documented (docs/conventions.md): while points outside the working set violate the
    margin, a round after one whose evaluation of F was a dense decomposition dearer than the
    round's passes over the kernel (at these sizes, any) is one Newton step; the solve still
    certifies, and agrees with the dense solver on the same kernel."""
    X, y = moons(n, seed=11, noise=0.2)
    res = solve_svm_working_set(FeatureKernel(X, sigma=0.2), y, C=C, eta=eta, tau=0.01,
                                tol=1e-8)
    assert res.status == "converged" and res.rel_gap <= 1e-8
    one_step = [r for before, r in zip(res.rounds, res.rounds[1:], strict=False)
                if before["violators"] > 0 and before["newton"] > 0
                and before["route"] == "dense"]
    assert one_step and all(r["newton"] <= 1 for r in one_step)
    dense = solve_svm(compute_kernel(X, sigma=0.2), y, C=C, eta=eta, tau=0.01, tol=1e-8,
                      check_psd=False)
    scale = 1e-7 * abs(dense.upper)
    assert res.lower <= dense.upper + scale and dense.lower <= res.upper + scale


def test_uncertified_result_warns(problem):
    """One round cannot reach a relative gap of 1e-15: the result says so and a
    ConvergenceWarning names the tolerance."""
    from dank_fast import ConvergenceWarning

    kernel, y = problem
    with pytest.warns(ConvergenceWarning, match="did not certify tol=1e-15"):
        res = solve_svm_working_set(kernel, y, C=1.0, eta=5.0, tau=0.01, tol=1e-15,
                                    max_rounds=1, max_iter=2)
    assert res.status != "converged" and len(res.rounds) == 1


def test_start_without_support_seeds_both_classes(problem):
    """``alpha0 = 0`` (no support vector): the first working set is seeded with points of both
    classes and the problem is still solved and certified; the warm start is "given"."""
    kernel, y = problem
    res = solve_svm_working_set(kernel, y, C=1.0, eta=5.0, tau=0.01, tol=1e-8,
                                alpha0=np.zeros(y.size))
    assert res.extra["warm_start"] == "given"
    assert res.status == "converged" and res.rel_gap <= 1e-8
    assert res.rounds[0]["W"] >= 2
    ref = solve_svm_working_set(kernel, y, C=1.0, eta=5.0, tau=0.01, tol=1e-8)
    assert res.lower <= ref.upper + 1e-9 * abs(ref.upper)
    assert ref.lower <= res.upper + 1e-9 * abs(ref.upper)


def test_points_outside_the_working_set_get_the_ghost_row_of_F():
    """Outside W every row of F is the same (M acts on span{e_W} + span{1_{W^c}})."""
    X, y = moons(200, seed=5)
    kern = FeatureKernel(X, sigma=0.25)
    res = solve_svm_working_set(kern, y, C=1.0, eta=50.0, tau=0.01, tol=1e-9)
    out = np.setdiff1d(np.arange(y.size), res.working_set)
    assert out.size > 10
    rows = res.F_rows(out[:5])
    np.testing.assert_allclose(rows, np.broadcast_to(rows[0], rows.shape), atol=1e-14)
    # and F is the minimiser computed densely at the returned alpha
    from dank_fast import svm_certificate

    dense_cert = svm_certificate(compute_kernel(X, sigma=0.25), y, res.alpha, C=1.0, eta=50.0,
                                 tau=0.01, route="dense")
    assert dense_cert.lower <= res.upper + 1e-12 * abs(res.upper)
    assert res.lower <= dense_cert.upper + 1e-12 * abs(res.upper)


def test_working_set_grows_from_a_poor_start_and_reports_its_rounds():
    X, y = moons(300, seed=7)
    kern = FeatureKernel(X, sigma=0.3)
    start = np.zeros(y.size)
    i, j = np.flatnonzero(y > 0)[0], np.flatnonzero(y < 0)[0]
    start[[i, j]] = 0.5  # two support vectors: almost every other point violates the margin
    res = solve_svm_working_set(kern, y, C=2.0, eta=20.0, tau=0.01, tol=1e-8, alpha0=start)
    assert res.success and len(res.rounds) >= 2
    assert res.rounds[0]["violators"] > 0 and res.rounds[-1]["violators"] == 0
    assert np.count_nonzero(res.alpha) > 2


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("C", [1e3, 1e6])
def test_separable_data_with_a_large_C_is_certified_as_the_dense_certificate_does(seed, C):
    """Where the hard-margin rescaling prices the primal far below the hinge (separable data,
    a large ``C``), the route's certificate of the full problem takes it as
    ``svm_certificate`` does: both certify the same point, and the route does not run its
    rounds out."""
    from dank_fast import svm_certificate

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    X[:, 0] += 0.5 * y  # a margin of 1 between the classes
    res = solve_svm(FeatureKernel(X, sigma=1.0), y, C=C, eta=1.0, tau=0.01, tol=1e-6)
    assert res.status == "converged" and res.rel_gap <= 1e-6
    cert = svm_certificate(compute_kernel(X, sigma=1.0), y, res.alpha, C=C, eta=1.0, tau=0.01,
                           route="dense")
    np.testing.assert_allclose([res.lower, res.upper], [cert.lower, cert.upper], rtol=1e-9)


def test_feature_kernel_rejects_what_is_not_psd_and_the_wrong_methods():
    X, y = moons(40, seed=1)
    with pytest.raises(ValueError, match="coef0"):
        FeatureKernel(X, "poly", coef0=-5.0)
    with pytest.raises(ValueError, match="working sets"):
        solve_svm(FeatureKernel(X, sigma=0.5), y, C=1.0, eta=1.0, method="accelerated")
    with pytest.raises(TypeError, match="Unknown solver options"):
        solve_svm(FeatureKernel(X, sigma=0.5), y, C=1.0, eta=1.0, bogus=3)


def test_feature_kernel_blocks_equal_the_dense_kernel():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(70, 3))
    for kw in ({"sigma": 0.7}, {"kernel": "linear"}, {"kernel": "poly", "degree": 2}):
        kern = FeatureKernel(X, block_bytes=1 << 16, **kw)
        K = compute_kernel(X, **kw)
        I, J = np.array([3, 1, 60]), np.arange(5, 40)
        np.testing.assert_allclose(kern.block(I, J), K[np.ix_(I, J)], rtol=1e-13, atol=1e-13)
        V = rng.normal(size=(J.size, 4))
        np.testing.assert_allclose(kern.product(np.arange(70), J, V), K[:, J] @ V,
                                   rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(kern.diag(), np.diag(K), rtol=1e-13)
        assert kern.kappa == pytest.approx(np.abs(K).max(), rel=1e-13)


@settings(max_examples=12, deadline=None)
@given(st.integers(60, 160), st.floats(-1.5, 1.5), st.sampled_from([0.0, 0.01, 0.3]),
       st.floats(-1.0, 0.3), st.integers(0, 10**6))
def test_working_set_property(n, log_C, tau, log_sigma, seed):
    X, y = moons(n, seed=seed % 1000)
    sigma = 10.0**log_sigma
    C = 10.0**log_C
    K = compute_kernel(X, sigma=sigma)
    a = svc_dual(K, y, C)
    eta = max(float(a @ a), 1e-3)
    dense = solve_svm(K, y, C=C, eta=eta, tau=tau, tol=1e-9, check_psd=False)
    ws = solve_svm(FeatureKernel(X, sigma=sigma), y, C=C, eta=eta, tau=tau, tol=1e-9)
    assert ws.success and ws.lower <= ws.upper
    scale = 1e-8 * max(1.0, abs(dense.upper))
    assert ws.lower <= dense.upper + scale and dense.lower <= ws.upper + scale
