"""Issue 15: the same certified answer on every machine, and a default never less robust.

* ``C = 1e20`` (hard-margin regime): the certificate's hard-margin primal candidate makes the
  upper bound immune to the rounding of the support vectors' margins, which differs between
  BLAS kernels (``OPENBLAS_CORETYPE=SkylakeX`` used to give a certified relative gap 6e4).
* Tiny, nearly rank-one kernels with ``tau`` large against the spectrum at ``tol = 1e-10``:
  Newton's curvature is the exact Hessian there (Daleckii-Krein), and when the model is poor
  Newton hands over to accelerated bursts instead of spending its budget.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import dank_fast._newton as newton_module
from dank_fast import compute_kernel, solve_svm, svm_certificate
from dank_fast._newton import exact_curvature_d
from dank_fast._problem import SVMProblem
from dank_fast.certificate import hard_margin_loss
from dank_fast.projection import project_A


def _tiny(seed: int, n: int, sigma: float):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    return compute_kernel(X, kernel="rbf", sigma=sigma), y


def _solve(K, y, method, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return solve_svm(K, y, C=0.1, eta=0.1, tau=0.5, tol=1e-10, method=method, **kw)


@pytest.mark.parametrize("tau", [0.0, 0.5, 2.0])
def test_exact_curvature_is_minus_the_hessian(tau):
    """Central differences of grad_d h against exact_curvature_d, also where tau kills
    eigenvalues (the tau = 0 model is wrong there)."""
    K, y = _tiny(1, 9, 3.0)
    eta = 0.3
    pr = SVMProblem(K, y, 1.0, eta, tau)
    d = np.random.default_rng(5).uniform(0.1, 0.9, 9) * y

    def grad_d(dd):
        return pr.evaluate(dd * y).grad * y

    H = exact_curvature_d(K, d, eta, tau)
    e = 1e-6
    fd = np.column_stack([(grad_d(d + e * v) - grad_d(d - e * v)) / (2 * e) for v in np.eye(9)])
    np.testing.assert_allclose(H, -fd, atol=1e-7 * np.abs(H).max())
    if tau >= 0.5:  # the tau = 0 model differs: the exact curvature matters here
        model = exact_curvature_d(K, d, eta, 0.0)
        assert np.abs(model - H).max() > 1e-3 * np.abs(H).max()


FAMILY = [(seed, n, sigma) for seed in range(4) for n in (8, 12) for sigma in (5.0, 20.0, 50.0)]


def test_default_certifies_tiny_ill_conditioned_family_wherever_accelerated_does():
    """24 instances (nearly rank-one kernels, C = eta = 0.1, tau = 0.5, tol = 1e-10): the
    default certifies every instance that the accelerated method certifies (before the fix it
    stopped at max_iter on instances accelerated certified), in a few Newton steps."""
    n_acc = 0
    for seed, n, sigma in FAMILY:
        K, y = _tiny(seed, n, sigma)
        auto = _solve(K, y, "auto")
        acc = _solve(K, y, "accelerated")
        n_acc += acc.success
        assert auto.success or not acc.success, (seed, n, sigma, auto.rel_gap, acc.rel_gap)
        assert auto.success, (seed, n, sigma, auto.message)
        assert auto.rel_gap <= 1e-10 and auto.lower <= auto.upper
        # the same saddle value: the certified brackets overlap
        if acc.success:
            assert auto.lower <= acc.upper + 1e-12 * abs(acc.upper)
            assert acc.lower <= auto.upper + 1e-12 * abs(auto.upper)
    assert n_acc >= len(FAMILY) // 2  # the family is one on which accelerated mostly works


def _multiplier_zero_without_free(z, g, y, C, margin):
    """The multiplier estimate before 2026-11-26: 0 when no coordinate is inside the box."""
    inside = (z > margin) & (z < C - margin)
    return float(np.mean(y[inside] * g[inside])) if np.any(inside) else 0.0


def test_newton_with_the_model_curvature_hands_over_instead_of_stalling(monkeypatch):
    """With the exact curvature switched off and the old multiplier estimate (0 without a free
    coordinate), Newton cannot step on these instances after two steps: it must hand over to
    accelerated bursts (and certify wherever accelerated alone does), not stop."""
    monkeypatch.setattr(newton_module, "EXACT_CURVATURE_N", 0)
    monkeypatch.setattr(newton_module, "_multiplier", _multiplier_zero_without_free)
    handed = 0
    for seed, n, sigma in FAMILY[:8]:
        K, y = _tiny(seed, n, sigma)
        nw = _solve(K, y, "newton")
        handed += nw.extra["handovers"] > 0
        assert nw.extra["newton_iter"] + nw.extra["accelerated_iter"] == nw.n_iter
        acc = _solve(K, y, "accelerated")
        if acc.success:
            assert nw.success, (seed, n, sigma, nw.rel_gap)
    assert handed >= 1


def test_huge_C_certificate_is_immune_to_rounding_of_the_margins():
    """At C = 1e20 the solution's margins are 1 only up to rounding; perturbing the certified
    alpha by a relative 1e-14 (what another BLAS kernel's rounding does) must leave it certified
    (the expansion at the best bias alone gave a relative gap ~1e4: C times 1e-16)."""
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(-1.0, 1.0, (20, 2)), rng.normal(1.0, 1.0, (20, 2))])
    y = np.repeat([-1.0, 1.0], 20)
    K = compute_kernel(X, sigma=1.0)
    C = 1e20
    res = solve_svm(K, y, C=C, eta=5.0)
    assert res.success and res.alpha.max() < 1e3  # hard-margin regime: the box is far away
    worst = 0.0
    for k in range(5):
        noise = 1.0 + 1e-14 * np.random.default_rng(k).standard_normal(y.size)
        a = project_A(res.alpha * noise, y, C)
        cert = svm_certificate(K, y, a, C=C, eta=5.0, tau=0.01)
        worst = max(worst, cert.rel_gap)
    assert worst <= 1e-6


def test_hard_margin_candidate_makes_every_computed_margin_at_least_one():
    rng = np.random.default_rng(0)
    y = np.repeat([-1.0, 1.0], 50)
    f0 = y * rng.uniform(0.5, 3.0, 100) + 0.3
    loss, b = hard_margin_loss(f0, y, q_half=2.0)
    m = 0.5 * (f0[y > 0].min() - f0[y < 0].max())
    t = np.sqrt(loss / 2.0 + 1.0)  # loss = (t^2 - 1) q/2
    assert t * m == pytest.approx(1.0, rel=1e-12) and t * m >= 1.0 - 1e-15
    assert float((y * t * (f0 + b)).min()) >= 1.0
    # not separated: no candidate
    assert hard_margin_loss(np.r_[f0, -5.0], np.r_[y, 1.0], q_half=2.0) is None


def test_default_certifies_where_newton_identifies_the_active_set_slowly():
    """make_moons n = 2,000, C = 32 (the README's benchmark): Newton needs ~80 steps whose gap
    stays flat while the active set is identified, and the accelerated method does not reach
    1e-6 in 5,000 iterations. A stall rule that handed over to accelerated bursts on a flat gap
    made the default fail here (found by the benchmark, not by the small tests)."""
    from sklearn.datasets import make_moons
    from sklearn.svm import SVC

    X, y01 = make_moons(2000, noise=0.2, random_state=0)
    y = np.where(y01 == 1, 1.0, -1.0)
    K = compute_kernel(X, sigma=0.5)
    eta = float(np.sum(SVC(kernel="precomputed", C=32.0).fit(K, y).dual_coef_ ** 2))
    res = solve_svm(K, y, C=32.0, eta=eta, tau=0.01)
    assert res.success and res.rel_gap <= 1e-6, res.message


def test_svr_default_is_newton_and_certifies_a_scaled_linear_kernel():
    """The conformance comparison found solve_svr's old default (accelerated) at a certified
    relative gap 8.6 after 5,000 iterations on a 50-point linear kernel scaled by 1e6, where
    newton certifies: the default is now "auto" (newton), as for solve_svm."""
    from dank_fast import solve_svr

    rng = np.random.default_rng(0)
    X = np.sort(rng.uniform(-1.0, 1.0, (50, 1)), axis=0)
    y = np.sin(3.0 * X[:, 0]) + 0.1 * rng.standard_normal(50)
    K = 1e6 * (X @ X.T)
    res = solve_svr(K, y, C=1.0, epsilon=0.05, eta=10.0, tau=0.01)
    assert res.method == "auto" and res.success and res.rel_gap <= 1e-6, res.message


def test_multiplier_without_free_coordinates_lets_newton_step(monkeypatch):
    """The same instances with the multiplier of :func:`dank_fast._newton._multiplier` (the
    middle of the interval the bounds leave): Newton certifies each one by its own steps, where
    the old estimate (0) handed over to accelerated bursts on 6 of these 8."""
    monkeypatch.setattr(newton_module, "EXACT_CURVATURE_N", 0)
    for seed, n, sigma in FAMILY[:8]:
        K, y = _tiny(seed, n, sigma)
        nw = _solve(K, y, "newton")
        assert nw.success and nw.extra["handovers"] == 0, (seed, n, sigma, nw.extra)


def test_multiplier_is_the_middle_of_the_bounds_interval():
    """No coordinate inside: lam splits the violators of both kinds (lam = 0 would leave one)."""
    from dank_fast._newton import _multiplier

    C = 1.0
    z = np.array([0.0, 0.0, C, C, 0.0, C])
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0, 1.0])
    g = np.array([-0.5, 0.7, -0.713, 0.3, -0.494, 2.0])
    b = y * g  # kept above lam: b[0], b[3], b[4] (at 0 with y = 1, at C with y = -1)
    lo, hi = max(b[0], b[3], b[4]), min(b[1], b[2], b[5])
    lam = _multiplier(z, g, y, C, 1e-12)
    assert lam == pytest.approx(0.5 * (lo + hi))
    r = g - lam * y
    binding = ((z <= 1e-12) & (r < 0)) | ((z >= C - 1e-12) & (r > 0))
    assert np.count_nonzero(~binding) >= 2
    z[2] = 0.5  # one coordinate inside: its y_i g_i
    assert _multiplier(z, g, y, C, 1e-12) == pytest.approx(b[2])


@pytest.mark.parametrize("seed", range(12))
def test_exact_curvature_from_the_dense_inner_basis_is_the_exact_curvature(seed):
    """exact_curvature_basis (the inner's reduced eigenpairs, the zero eigenvalues of the points
    off the support in closed form) equals exact_curvature_d (its own n x n eigh), on any rows:
    supports with 0, 1 and many points off them, duplicate points, rows repeated as P2's ah_i
    and ac_i are, tau killing eigenvalues."""
    from dank_fast._newton import exact_curvature_basis
    from dank_fast.inner import KernelData, inner_minimiser

    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 40))
    X = rng.normal(size=(n, 2))
    if seed % 3 == 0:
        X[n // 2:] = X[: n - n // 2]
    K = compute_kernel(X, sigma=float(2.0 ** rng.integers(-2, 5)))
    d = rng.uniform(0.05, 1.0, n) * np.where(rng.random(n) < 0.5, 1.0, -1.0)
    off = [0, 1, int(rng.integers(2, n))][seed % 3]  # points off the support
    d[rng.permutation(n)[:off]] = 0.0
    eta = float(10.0 ** rng.uniform(-1, 2))
    tau = float(rng.choice([0.01, 0.5, 2.0]))
    inner = inner_minimiser(KernelData(K), d, eta, tau, route="dense")
    idx = np.sort(rng.permutation(n)[: int(rng.integers(1, n + 1))])
    if seed % 2:  # P2: ah_i and ac_i of one point are two coordinates moving the same d_i
        idx = np.sort(np.concatenate([idx, idx[: max(1, idx.size // 2)]]))
    H = exact_curvature_basis(K, d, eta, tau, idx, inner.eigvals, inner.basis)
    ref = exact_curvature_d(K, d, eta, tau, idx)
    np.testing.assert_allclose(H, ref, atol=1e-12 * np.abs(ref).max())
