"""The inner minimiser F(a) = J_{tau/2}(11' + Gamma(a)) of Lemma 1, h(a) and grad h(a).

References used here are coded independently of dank_fast: a dense ``numpy.linalg.eigh``
soft-threshold, and a cvxpy SDP minimising H(a, F) over PSD F directly.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from _objective import grad_h, h_and_inner
from hypothesis import given, settings
from hypothesis import strategies as st

from dank_fast import KernelData, apply_FK, compute_kernel, inner_minimiser, solve_svm

# ---------------------------------------------------------------- helpers


def gaussian_kernel(X: np.ndarray, sigma: float) -> np.ndarray:
    sq = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    return np.exp(-sq / (2 * sigma**2))


def ref_F(K: np.ndarray, d: np.ndarray, eta: float, tau: float) -> np.ndarray:
    """Dense eigenvalue soft-threshold of 11' + D K D / (4 eta)."""
    n = d.size
    M = np.ones((n, n)) + np.outer(d, d) * K / (4 * eta)
    lam, V = np.linalg.eigh(M)
    mu = np.maximum(lam - tau / 2, 0.0)
    return (V * mu) @ V.T


def H_direct(K, y, a, F, eta, tau) -> float:
    """H(a, F) = 1'a - 1/2 a'Y(F o K)Ya + eta ||F - 11'||^2 + tau eta tr F (F PSD)."""
    d = a * y
    return float(
        a.sum() - 0.5 * d @ (F * K) @ d + eta * np.sum((F - 1.0) ** 2) + tau * eta * np.trace(F)
    )


def instance(n: int, seed: int, C: float = 1.0, sigma: float = 1.0, frac_zero: float = 0.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    K = gaussian_kernel(X, sigma)
    a = rng.uniform(0.05 * C, 0.95 * C, size=n)
    if frac_zero:
        a[rng.random(n) < frac_zero] = 0.0
    return K, y, a


# ---------------------------------------------------------------- F(a) vs dense reference


@pytest.mark.parametrize("tau", [0.0, 0.01, 1.0, 5.0])
@pytest.mark.parametrize("eta", [0.05, 1.0, 100.0])
@pytest.mark.parametrize("frac_zero", [0.0, 0.5])
def test_F_matches_dense_eigh_soft_threshold(tau, eta, frac_zero):
    K, y, a = instance(15, seed=1, C=2.0, frac_zero=frac_zero)
    d = a * y
    kd = KernelData(K)
    sol = inner_minimiser(kd, d, eta, tau, route="dense")
    Fref = ref_F(K, d, eta, tau)
    F = sol.F.dense()
    np.testing.assert_allclose(F, Fref, rtol=0, atol=1e-10 * np.abs(Fref).max())
    # deficit = n^2 - ||F||_F^2 without loss
    n = d.size
    assert sol.deficit == pytest.approx(n * n - np.sum(Fref**2), rel=1e-9, abs=1e-9 * n * n)
    assert sol.excess == 0.0
    assert sol.route == ("closed" if tau == 0 else "dense")
    # F PSD and symmetric
    np.testing.assert_allclose(F, F.T, atol=1e-12 * n)
    assert np.linalg.eigvalsh(F).min() >= -1e-10 * n

@pytest.mark.parametrize("route", ["dense", "auto"])
@pytest.mark.parametrize("tau", [0.01, 1.0])
def test_F_with_exactly_one_point_outside_the_support(route, tau):
    """m = n - |S| = 1 (the reduced basis then has a single "ghost" direction): the row of F of
    the only non-support point is still J_{tau/2}'s."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(9, 2))
    K = compute_kernel(X, sigma=1.0)
    d = rng.uniform(0.2, 1.0, 9) * np.where(np.arange(9) % 2 == 0, 1.0, -1.0)
    d[3] = 0.0
    sol = inner_minimiser(KernelData(K), d, 0.5, tau, route=route)
    Fref = ref_F(K, d, 0.5, tau)
    np.testing.assert_allclose(sol.F.dense(), Fref, rtol=0, atol=1e-9 * np.abs(Fref).max())


def test_kernel_data_keeps_the_number_of_points_of_the_whole_problem():
    K = np.eye(3)
    assert KernelData(K).n_total == 3
    kd = KernelData(K, n_total=7)
    assert (kd.n, kd.n_total) == (3, 7)


def test_F_zero_support_and_threshold_above_n():
    K, y, _ = instance(7, seed=2)
    kd = KernelData(K)
    n = 7
    # d = 0: M = 11', F = (n - tau/2)/n 11'
    sol = inner_minimiser(kd, np.zeros(n), 1.0, 0.5, route="dense")
    np.testing.assert_allclose(sol.F.dense(), (n - 0.25) / n * np.ones((n, n)), atol=1e-13)
    # tau/2 > n: F = 0, h = 1'a + eta n^2
    sol = inner_minimiser(kd, np.zeros(n), 1.0, 2 * n + 2, route="dense")
    np.testing.assert_allclose(sol.F.dense(), 0.0, atol=0)
    assert sol.deficit == pytest.approx(n * n, rel=1e-14)
    # all eigenvalues thresholded away with non-zero d as well
    a = np.full(n, 0.1)
    sol = inner_minimiser(kd, a * y, 1.0, 4 * n, route="dense")
    np.testing.assert_allclose(sol.F.dense(), 0.0, atol=0)
    assert sol.deficit == pytest.approx(n * n, rel=1e-14)


# ---------------------------------------------------------------- F(a) vs SDP


@pytest.mark.parametrize("tau", [0.0, 0.3, 2.0])
@pytest.mark.parametrize("eta", [0.2, 2.0])
def test_F_matches_sdp_minimisation(tau, eta):
    """min_{F PSD} H(a, F) by an SDP solver agrees with h(a) and F(a)."""
    n = 4
    K, y, a = instance(n, seed=5, C=3.0, sigma=0.8)
    d = a * y
    W = np.outer(d, d) * K  # a'Y(F o K)Ya = <F, W>
    F = cp.Variable((n, n), PSD=True)
    obj = (
        -0.5 * cp.sum(cp.multiply(F, W))
        + eta * cp.sum_squares(F - np.ones((n, n)))
        + tau * eta * cp.trace(F)
    )
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert prob.status == cp.OPTIMAL
    h_sdp = a.sum() + prob.value

    h, inner = h_and_inner(KernelData(K), y, a, eta, tau)
    assert h == pytest.approx(h_sdp, rel=1e-6)
    np.testing.assert_allclose(inner.F.dense(), F.value, rtol=0, atol=1e-5 * n)


# ---------------------------------------------------------------- value h(a)


@pytest.mark.parametrize("tau", [0.0, 0.01, 1.0])
@pytest.mark.parametrize("route", ["dense", "lanczos"])
def test_h_closed_form_equals_direct_H(tau, route):
    K, y, a = instance(20, seed=7, C=1.5, frac_zero=0.3)
    eta = 0.5
    h, inner = h_and_inner(KernelData(K), y, a, eta, tau, route=route)
    Fref = ref_F(K, a * y, eta, tau)
    h_ref = H_direct(K, y, a, Fref, eta, tau)
    # h is a rigorous lower bound, h + eta * excess an upper bound of h(a)
    assert h <= h_ref + 1e-9 * abs(h_ref)
    assert h_ref <= h + eta * inner.excess + 1e-9 * abs(h_ref)
    assert h == pytest.approx(h_ref, rel=1e-9)
    # and F(a) is the minimiser: H(a, F) >= h(a) for perturbed PSD F
    rng = np.random.default_rng(0)
    for _ in range(5):
        G = rng.normal(size=(20, 20)) * 1e-3
        Fp = Fref + G @ G.T
        assert H_direct(K, y, a, Fp, eta, tau) >= h_ref


def test_h_tau0_formula_from_spec():
    """tau = 0: h(a) = 1'a - 1/2 (ay)'K(ay) - ||D K D||_F^2 / (16 eta)."""
    K, y, a = instance(12, seed=8)
    eta = 0.3
    d = a * y
    h = a.sum() - 0.5 * d @ K @ d - np.sum((np.outer(d, d) * K) ** 2) / (16 * eta)
    h_fast, inner = h_and_inner(KernelData(K), y, a, eta, 0.0)
    assert inner.route == "closed"
    assert h_fast == pytest.approx(h, rel=1e-12)


# ---------------------------------------------------------------- routes agree


@pytest.mark.parametrize("frac_zero", [0.0, 0.4])
@pytest.mark.parametrize("tau", [1e-3, 0.01, 1.0])
def test_dense_and_lanczos_routes_agree(tau, frac_zero):
    K, y, a = instance(60, seed=11, C=2.0, sigma=0.7, frac_zero=frac_zero)
    eta = 0.5
    kd = KernelData(K)
    d = a * y
    sd = inner_minimiser(kd, d, eta, tau, route="dense")
    sl = inner_minimiser(kd, d, eta, tau, route="lanczos")
    assert sd.route == "dense" and sl.route == "lanczos"
    h_d = a.sum() + eta * sd.deficit
    h_l = a.sum() + eta * sl.deficit
    np.testing.assert_allclose(sl.F.dense(), sd.F.dense(), rtol=0, atol=1e-7)
    assert h_l == pytest.approx(h_d, rel=1e-9)
    # the Lanczos value is a certified bracket of the exact one: h_l <= h_d <= h_l + eta excess
    assert sl.excess >= 0.0
    assert h_l <= h_d + 1e-9 * abs(h_d)
    assert h_d <= h_l + eta * sl.excess + 1e-9 * abs(h_d)
    # warm start gives the same answer
    sw = inner_minimiser(kd, d * 1.001, eta, tau, route="lanczos", warm=sl)
    sdw = inner_minimiser(kd, d * 1.001, eta, tau, route="dense")
    np.testing.assert_allclose(sw.F.dense(), sdw.F.dense(), rtol=0, atol=1e-7)


def test_lanczos_bound_is_valid_when_many_eigenvalues_exceed_the_threshold():
    """Many eigenvalues above tau/2: the certified bracket must still contain the exact value."""
    rng = np.random.default_rng(12)
    n = 40
    X = rng.normal(size=(n, 3))
    K = gaussian_kernel(X, 0.05)  # nearly identity: many comparable eigenvalues
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    a = rng.uniform(1.0, 3.0, size=n)
    eta, tau = 0.05, 0.5
    kd = KernelData(K)
    sd = inner_minimiser(kd, a * y, eta, tau, route="dense")
    sl = inner_minimiser(kd, a * y, eta, tau, route="lanczos")
    assert sl.deficit <= sd.deficit + 1e-9 * abs(sd.deficit)
    assert sd.deficit <= sl.deficit + sl.excess + 1e-9 * abs(sd.deficit)


def _exact_phi_star(K, d, eta, tau):
    """n^2 - ||F(a)||^2 by a dense numpy eigendecomposition of the full n x n matrix."""
    n = d.size
    F = ref_F(K, d, eta, tau)
    return n * n - float(np.sum(F * F))


@settings(max_examples=25, deadline=None)
@given(
    st.integers(12, 40),
    st.floats(-2, 2),
    st.floats(-2, 1),
    st.sampled_from([1e-3, 0.01, 0.3, 3.0]),
    st.floats(0.0, 0.7),
    st.integers(0, 2**31 - 1),
)


def test_lanczos_route_brackets_dense_property(n, log_eta, log_sigma, tau, frac_zero, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    K = compute_kernel(X, sigma=10.0**log_sigma)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    a = rng.uniform(0.0, 2.0, size=n)
    a[rng.random(n) < frac_zero] = 0.0
    eta = 10.0**log_eta
    kd = KernelData(K)
    sd = inner_minimiser(kd, a * y, eta, tau, route="dense")
    sl = inner_minimiser(kd, a * y, eta, tau, route="lanczos")
    scale = 1e-9 * max(1.0, abs(sd.deficit), n)
    assert sl.deficit <= sd.deficit + scale
    assert sd.deficit <= sl.deficit + sl.excess + scale
    # F^ is PSD and, when the tail is certified below the threshold, close to F(a)
    assert np.all(sl.F.mu > 0)
    if sl.tail_bound <= tau / 2:
        assert sl.excess <= 1e-12 * max(1.0, n)


@pytest.mark.parametrize("tau", [1e-12, 1e-9])
def test_tau_to_zero_matches_closed_form(tau):
    K, y, a = instance(25, seed=13, frac_zero=0.2)
    kd = KernelData(K)
    d = a * y
    s0 = inner_minimiser(kd, d, 0.7, 0.0)
    st_ = inner_minimiser(kd, d, 0.7, tau, route="dense")
    assert s0.route == "closed"
    np.testing.assert_allclose(st_.F.dense(), s0.F.dense(), rtol=0, atol=1e-8)
    assert s0.deficit == pytest.approx(st_.deficit, rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("sigma, tail", [(0.05, False), (1.0, True), (3.0, True)])
def test_relaxed_gradient_differs_by_the_separable_term_and_the_tail(sigma, tail):
    """docs/MATH.md section 5.5 (the predictor): ``((F0 - F) o K) d = t diag(K) d + ((M_I - t
    P_I) o K) d``; the second term vanishes where every eigenvalue of ``M`` exceeds ``t``, and
    is at most ``t kappa ||d||`` (its matrix lies between ``-t I`` and 0)."""
    K, y, a = instance(40, seed=23, sigma=sigma)
    kd = KernelData(K)
    d = a * y
    eta, tau = 0.05, 0.02
    t = tau / 2
    F0 = inner_minimiser(kd, d, eta, 0.0)
    F = inner_minimiser(kd, d, eta, tau, route="dense")
    rest = apply_FK(F0.F, kd, d) - apply_FK(F.F, kd, d) - t * np.diag(K) * d
    lam = np.linalg.eigvalsh(np.ones((40, 40)) + np.outer(d, d) * K / (4 * eta))
    scale = float(np.abs(apply_FK(F0.F, kd, d)).max())
    assert (lam.min() <= t) == tail
    if not tail:  # P_A = I: the separable term is the whole difference
        np.testing.assert_allclose(rest, 0.0, atol=1e-10 * scale)
    else:
        assert np.linalg.norm(rest) <= t * kd.kappa * np.linalg.norm(d) * (1 + 1e-9)
        assert np.linalg.norm(rest) > 1e-10 * scale


# ---------------------------------------------------------------- apply_FK


@pytest.mark.parametrize("tau", [0.0, 0.01, 1.0])
@pytest.mark.parametrize("pattern", ["dense", "sparse", "single", "zero"])
def test_apply_FK_matches_dense_product(tau, pattern):
    K, y, a = instance(30, seed=17, frac_zero=0.5)
    kd = KernelData(K)
    sol = inner_minimiser(kd, a * y, 0.4, tau, route="dense")
    rng = np.random.default_rng(1)
    x = rng.normal(size=30)
    if pattern == "sparse":
        x[rng.random(30) < 0.6] = 0.0
    elif pattern == "single":
        x[:] = 0.0
        x[4] = 2.5
    elif pattern == "zero":
        x[:] = 0.0
    ref = (sol.F.dense() * K) @ x
    out = apply_FK(sol.F, kd, x)
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-11 * max(1.0, np.abs(ref).max()))
    np.testing.assert_allclose(
        sol.F.hadamard_matvec(kd, x), ref, rtol=0, atol=1e-11 * max(1.0, np.abs(ref).max())
    )


def test_kernel_data_cache_does_not_leak_between_supports():
    K, y, a = instance(20, seed=19)
    kd = KernelData(K)
    for S in (np.array([1, 3, 5]), np.array([0, 2]), np.array([1, 3, 5])):
        np.testing.assert_array_equal(kd.support_product(S, np.eye(S.size)), K[:, S])
        np.testing.assert_array_equal(kd.block(S), K[np.ix_(S, S)])


# ---------------------------------------------------------------- gradient


def fd_grad(kd: KernelData, y, a: np.ndarray, eta, tau, step: float,
            route: str = "auto") -> np.ndarray:
    g = np.empty_like(a)
    for i in range(a.size):
        e = np.zeros_like(a)
        e[i] = step
        h_plus = h_and_inner(kd, y, a + e, eta, tau, route)[0]
        h_minus = h_and_inner(kd, y, a - e, eta, tau, route)[0]
        g[i] = (h_plus - h_minus) / (2 * step)
    return g


@pytest.mark.parametrize("tau", [0.0, 0.01, 1.0])
@pytest.mark.parametrize("eta", [0.3, 5.0])
@pytest.mark.parametrize("route", ["dense", "lanczos"])
def test_grad_matches_central_differences(tau, eta, route):
    n, C = 14, 2.0
    K, y, a = instance(n, seed=23, C=C)
    assert np.all((a > 0) & (a < C))
    kd = KernelData(K)
    g = grad_h(kd, y, a, eta, tau, route)
    # h = O(n^2 eta) is evaluated to ~1e-16 relative; step 1e-4 balances truncation
    # (O(step^2)) against round-off (O(eps n^2 eta / step)).
    g_fd = fd_grad(kd, y, a, eta, tau, 1e-4 * C, route)
    err = np.linalg.norm(g_fd - g) / np.linalg.norm(g)
    assert err < 1e-5, err
    # explicit formula of eq. (26)
    F = ref_F(K, a * y, eta, tau)
    np.testing.assert_allclose(g, 1.0 - y * ((F * K) @ (a * y)), rtol=0, atol=1e-10)


def test_grad_fd_across_support_changes():
    """h is smooth in a even where coordinates are 0 (the support reduction changes)."""
    n, C = 12, 1.0
    K, y, a = instance(n, seed=29, C=C, frac_zero=0.5)
    assert np.any(a == 0)
    kd = KernelData(K)
    g = grad_h(kd, y, a, 0.5, 0.05)
    err = np.linalg.norm(fd_grad(kd, y, a, 0.5, 0.05, 1e-4) - g) / np.linalg.norm(g)
    assert err < 1e-5, err

@settings(max_examples=20, deadline=None)
@given(
    st.integers(3, 12),
    st.sampled_from([0.0, 0.01, 1.0]),
    st.floats(-1, 2),
    st.floats(-1, 1),
    st.integers(0, 2**31 - 1),
)


def test_grad_property(n, tau, log_eta, log_sigma, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    K = compute_kernel(X, sigma=10.0**log_sigma)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    a = rng.uniform(0.05, 0.95, size=n)  # inside the box 0 < a < C = 1
    kd, eta = KernelData(K), 10.0**log_eta
    g = grad_h(kd, y, a, eta, tau)
    err = np.linalg.norm(fd_grad(kd, y, a, eta, tau, 1e-4) - g) / np.linalg.norm(g)
    assert err < 1e-5, err


def test_flat_tail_needs_no_dense_fallback():
    """A narrow kernel: thousands of tiny eigenvalues whose Frobenius norm exceeds tau/2 while
    each is far below it. The Collatz-Wielandt bound certifies the tail, so the iterative route
    certifies with a tiny excess instead of falling back to a dense decomposition."""
    rng = np.random.default_rng(4)
    n = 900
    X = rng.uniform(size=(n, 10))
    K = gaussian_kernel(X, 0.05)
    a = rng.uniform(0.5, 1.0, size=n)
    eta = float(a @ a)
    sol = inner_minimiser(KernelData(K), a, eta, 0.01, route="auto")
    assert sol.route == "lanczos"


def test_slowly_decaying_tail_is_certified_without_the_dense_decomposition():
    """Noisy labels (10% flipped, the plain SVM's dual as ``a``, most points support vectors
    at the bound): a spectrum that decays slowly past tau/2, where no norm of the tail
    separates it from tau/2 within a block of reasonable width. The factorisation test of
    docs/MATH.md section 5.1 proves the tail below tau/2, so the iterative route certifies
    within the excess target and brackets the dense value."""
    from sklearn.datasets import make_classification
    from sklearn.svm import SVC

    n, tau = 800, 0.01
    X, y01 = make_classification(n, 20, n_informative=5, flip_y=0.1, random_state=0)
    y = np.where(y01 == 1, 1.0, -1.0)
    K = compute_kernel(X, sigma=3.0)
    svc = SVC(kernel="precomputed", C=1.0).fit(K, y)
    a = np.zeros(n)
    a[svc.support_] = np.abs(svc.dual_coef_.ravel())
    kd = KernelData(K)
    sol = inner_minimiser(kd, a * y, float(a @ a), tau, route="auto")
    ref = inner_minimiser(kd, a * y, float(a @ a), tau, route="dense")
    assert sol.route == "lanczos" and sol.tail_bound <= tau / 2
    assert sol.excess <= 1e-12 * n
    assert sol.deficit <= ref.deficit + 1e-9 * abs(ref.deficit)
    assert ref.deficit <= sol.deficit + sol.excess + 1e-9 * abs(ref.deficit)
    assert sol.excess <= 1e-12 * n


def test_lanczos_route_is_repeatable():
    """No unseeded random start: the same call gives bit-identical results."""
    import dank_fast.inner as inner

    K, y, a = instance(300, seed=7, C=1.0, sigma=0.7)
    r1 = inner.inner_minimiser(KernelData(K), a * y, 2.0, 0.01, route="lanczos")
    r2 = inner.inner_minimiser(KernelData(K), a * y, 2.0, 0.01, route="lanczos")
    assert r1.deficit == r2.deficit and r1.excess == r2.excess


@pytest.mark.parametrize("frac", [0.1, 0.3, 0.5, 0.8, 1.0])
@pytest.mark.parametrize("cols", [0, 1, 4])
@pytest.mark.parametrize("square", [False, True])
def test_support_product_by_row_blocks_is_the_column_product(frac, cols, square):
    """K[:, S] @ X (and (K o K)[:, S] @ X) from blocks of rows of K[S, :] (symmetric K;
    several blocks and a ragged last one at n = 300)."""
    rng = np.random.default_rng(int(10 * frac) + cols)
    n = 300
    Z = rng.normal(size=(n, 3))
    K = Z @ Z.T
    S = np.sort(rng.choice(n, int(frac * n), replace=False))
    X = rng.normal(size=(S.size,) if cols == 0 else (S.size, cols))
    kd = KernelData(K)
    got = kd.support_product(S, X, square=square)
    assert got.shape == (n,) + X.shape[1:]
    A = K * K if square else K
    np.testing.assert_allclose(got, A[:, S] @ X, rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("copy", [None, False])
def test_block_is_the_gather_of_K_and_follows_S(copy):
    """``block(S) = K[S][:, S]`` exactly, for one S after another
    (the caches must follow S; blocks of rows with a ragged last one at n = 300), products
    with or without copies, and ``drop_caches`` empties them."""
    rng = np.random.default_rng(7)
    n = 300
    Z = rng.normal(size=(n, 4))
    K = Z @ Z.T
    kd = KernelData(K, copy_blocks=copy)
    for size in (130, 130, 200, 3):
        S = np.sort(rng.choice(n, size, replace=False))
        np.testing.assert_array_equal(kd.block(S), K[np.ix_(S, S)])
        np.testing.assert_allclose(kd.block_product(S, np.eye(size)), K[np.ix_(S, S)],
                                   rtol=1e-12, atol=1e-12)
    kd.drop_caches()
    assert kd._block is None


def test_a_solve_leaves_no_cached_gathers_in_its_result():
    """The result keeps its kernel data; the gathers cached for the solve are released."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    res = solve_svm(compute_kernel(X, sigma=1.0), y, C=1.0, eta=50.0, tau=0.01)
    assert res.success
    kd = res.kernel
    assert kd._block is None


def _flat_tail_instance():
    """Diabetic-like: every point a support vector, a kernel of moderate width and an eta that
    puts the bulk of the spectrum of Gamma just below tau/2 = 0.005, with two eigenvalues above:
    the tail bound stays just above t whatever the block (seen: 1.02 t for 6 to 48 vectors)."""
    rng = np.random.default_rng(7)
    n = 300
    X = rng.uniform(size=(n, 10))
    K = gaussian_kernel(X, 0.1)
    d = rng.uniform(0.6, 1.0, n) * np.where(rng.random(n) < 0.5, 1.0, -1.0)
    d[0] = 3.0
    lam = np.sort(np.linalg.eigvalsh(np.outer(d, d) * K))
    return KernelData(K), d, float(lam[-3] / (4 * 0.0049))


def test_flat_tail_just_below_the_threshold_is_certified_to_the_target():
    """A spectrum whose bulk lies just below tau/2 (no norm of the tail separates it from
    tau/2 without most of the spectrum): every route brackets the dense value, the iterative
    ones within the default excess target."""
    kd, d, eta = _flat_tail_instance()
    ref = inner_minimiser(kd, d, eta, 0.01, route="dense")
    sol = inner_minimiser(kd, d, eta, 0.01, route="auto")
    assert sol.excess <= 1e-12 * kd.n_total
    assert sol.deficit <= ref.deficit + 1e-9 * abs(ref.deficit) <= sol.deficit + sol.excess + 1e-8
    sl = inner_minimiser(kd, d, eta, 0.01, route="lanczos")
    assert sl.route == "lanczos" and sl.excess <= 1e-12 * kd.n_total
    assert sl.deficit <= ref.deficit + 1e-9 * abs(ref.deficit) <= sl.deficit + sl.excess + 1e-8


@pytest.mark.parametrize("rank", [20, 45, 110])
def test_cold_lanczos_route_for_a_high_rank_F_brackets_the_dense_value(rank):
    """A first evaluation (no previous eigenvectors) whose ``F`` has tens to a hundred
    eigenvalues above the threshold: the width found for the eigensolver (or the dense route
    it hands over to) leaves none out, on either route."""
    K, y, a = instance(600, seed=4, C=4.0, sigma=0.3)
    kd = KernelData(K)
    tau = 0.01
    eta = float(np.sort(np.linalg.eigvalsh(np.outer(a, a) * K))[-rank] / (2 * tau))
    ref = inner_minimiser(kd, a * y, eta, tau, route="dense")
    for route in ("lanczos", "auto"):
        sol = inner_minimiser(kd, a * y, eta, tau, route=route)
        assert sol.F.rank == ref.F.rank
        assert sol.excess <= 1e-12 * kd.n_total
        assert sol.deficit <= ref.deficit + 1e-9 * abs(ref.deficit)
        assert ref.deficit <= sol.deficit + sol.excess + 1e-9 * abs(ref.deficit)


def test_lanczos_route_from_a_warm_start_brackets_the_dense_value():
    """Along a Newton solve the iterative route starts from the block that certified the
    previous point (which had to grow: rank ~12); from there it brackets the dense value."""
    K, y, a = instance(360, seed=5, C=8.0, sigma=0.35)
    kd = KernelData(K)
    tau = 0.01
    eta = float(np.sort(np.linalg.eigvalsh(np.outer(a, a) * K))[-12] / (2 * tau))  # rank ~12
    first = inner_minimiser(kd, a * y, eta, tau, route="lanczos")
    assert first.route == "lanczos" and first.eigvals.size > 6  # it grew from 6 vectors
    a2 = a * (1.0 + 1e-3 * np.sin(np.arange(a.size)))
    warm = inner_minimiser(kd, a2 * y, eta, tau, route="lanczos", warm=first)
    cold = inner_minimiser(kd, a2 * y, eta, tau, route="dense")
    assert warm.route == "lanczos"
    assert warm.deficit <= cold.deficit + 1e-9 * abs(cold.deficit)
    assert cold.deficit <= warm.deficit + warm.excess + 1e-9 * abs(cold.deficit)


@pytest.mark.parametrize("shift", [0.0, 1e-6, 1e-2, 0.5, 3.0])
def test_lanczos_route_from_a_far_warm_start_still_brackets_the_dense_value(shift):
    """The warm block may come from this very point (an invariant block: the Krylov space has
    no new directions), a point near it or far from it (another support, other weights): the
    block Krylov step from it certifies, or the eigensolver runs from its Ritz vectors; either
    way the bracket holds the dense value within the excess target."""
    K, y, a = instance(300, seed=7, C=4.0, sigma=0.4)
    kd = KernelData(K)
    tau = 0.01
    eta = float(np.sort(np.linalg.eigvalsh(np.outer(a, a) * K))[-8] / (2 * tau))  # rank ~8
    first = inner_minimiser(kd, a * y, eta, tau, route="lanczos")
    rng = np.random.default_rng(3)
    a2 = np.clip(a * np.exp(shift * rng.standard_normal(a.size)), 0.0, 4.0)
    a2[rng.random(a.size) < min(shift, 0.5)] = 0.0  # another support too when far
    warm = inner_minimiser(kd, a2 * y, eta, tau, route="lanczos", warm=first)
    ref = inner_minimiser(kd, a2 * y, eta, tau, route="dense")
    assert warm.route == "lanczos" and warm.excess <= 1e-12 * kd.n_total
    assert warm.deficit <= ref.deficit + 1e-9 * abs(ref.deficit)
    assert ref.deficit <= warm.deficit + warm.excess + 1e-9 * abs(ref.deficit)


@pytest.mark.parametrize("copy", [True, False])
def test_gamma_sums_are_the_sums_of_gamma_and_the_curvature_diagonal(copy):
    """``gamma_sums`` returns d'Kd, ||D K D||_F^2, tr(D K D) and ``(K o K)[S][:, S] d_S^2``,
    from the cached block or (above the copy size) from K itself with d zero-padded."""
    rng = np.random.default_rng(11)
    n = 70
    K = gaussian_kernel(rng.normal(size=(n, 3)), 0.8)
    d = rng.normal(size=n) * (rng.random(n) < 0.6)
    S = np.flatnonzero(d)
    kd = KernelData(K, copy_blocks=None if copy else False)
    quad, sq, tr, kk = kd.gamma_sums(S, d[S])
    B = K[np.ix_(S, S)]
    dS = d[S]
    np.testing.assert_allclose([quad, sq, tr],
                               [dS @ B @ dS, np.sum((np.outer(dS, dS) * B) ** 2),
                                np.sum(dS**2 * np.diag(B))], rtol=1e-12)
    np.testing.assert_allclose(kk, (B * B) @ dS**2, rtol=1e-12)
    sol = inner_minimiser(kd, d, 2.0, 0.01, route="lanczos")
    np.testing.assert_array_equal(sol.kk_d2, kk)
    res = solve_svm(K, np.where(d >= 0, 1.0, -1.0), C=1.0, eta=2.0, tau=0.01)
    assert res.inner.kk_d2 is None  # a result keeps no scratch of the solver
