"""Cross-check of dank_ref (exact conic reference) against dank_fast (first-order solver)."""

from __future__ import annotations

import numpy as np
import pytest

dank_fast = pytest.importorskip("dank_fast")
if not hasattr(dank_fast, "solve_svm"):
    pytest.skip("dank_fast.solve_svm is not available yet", allow_module_level=True)
try:
    from dank_fast.certificate import svm_certificate as fast_certificate
except ImportError:  # pragma: no cover - depends on the fast package's progress
    pytest.skip(
        "dank_fast.certificate.svm_certificate is not available yet", allow_module_level=True
    )

import dank_ref  # noqa: E402
from dank_ref.certificate import svm_certificate as ref_certificate  # noqa: E402


def make_svm(n, seed, width=0.6):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0.5, 1.0, -1.0)
    if np.all(y == y[0]):
        y[0] = -y[0]
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / (2 * width**2))
    return K, y


CASES = [(16, 0, 1.0, 0.5, 0.0), (20, 1, 2.0, 1.0, 0.01), (18, 2, 0.5, 5.0, 0.3)]


@pytest.fixture(scope="module", params=CASES, ids=lambda c: f"n{c[0]}-s{c[1]}-tau{c[4]}")
def pair(request):
    n, seed, C, eta, tau = request.param
    K, y = make_svm(n, seed)
    ref = dank_ref.solve_svm(K, y, C=C, eta=eta, tau=tau, solver="SCS")
    fast = dank_fast.solve_svm(
        K, y, C=C, eta=eta, tau=tau, method="accelerated", tol=1e-9, max_iter=20000
    )
    return K, y, C, eta, tau, ref, fast


def test_saddle_values_agree(pair):
    K, y, C, eta, tau, ref, fast = pair
    assert ref.status == "optimal"
    v_ref = 0.5 * (ref.lower + ref.upper)
    v_fast = 0.5 * (fast.lower + fast.upper)
    tol = ref.gap + fast.gap + 1e-8 * max(1.0, abs(v_ref))
    assert abs(v_ref - v_fast) <= tol
    # each interval contains the other's lower bound (both are valid bounds on v*)
    assert fast.lower <= ref.upper + 1e-9 * abs(v_ref)
    assert ref.lower <= fast.upper + 1e-9 * abs(v_ref)


def test_fast_solution_recertified_by_ref(pair):
    K, y, C, eta, tau, ref, fast = pair
    c = ref_certificate(K, y, fast.alpha, C=C, eta=eta, tau=tau)
    assert c.projection_distance <= 1e-8
    assert c.gap <= max(10 * fast.gap, 1e-7 * max(1.0, float(np.sum(c.alpha))))
    assert abs(c.lower - fast.lower) <= 1e-7 * max(1.0, abs(c.lower))


def test_ref_solution_recertified_by_fast(pair):
    K, y, C, eta, tau, ref, fast = pair
    c = fast_certificate(K, y, ref.alpha, C=C, eta=eta, tau=tau)
    assert c.gap <= 1e-8 * max(1.0, float(np.sum(ref.alpha)))
    assert abs(c.lower - ref.lower) <= 1e-8 * max(1.0, abs(ref.lower))
    assert abs(c.upper - ref.upper) <= 1e-7 * max(1.0, abs(ref.upper))


def test_alpha_and_F_agree(pair):
    """a* is unique here (h strictly concave on the free coordinates for these instances)."""
    K, y, C, eta, tau, ref, fast = pair
    # a-accuracy from a certified gap: h is strongly concave with modulus >= lambda_min of the
    # reduced Hessian; use a tolerance that the first-order solver meets at tol=1e-9
    np.testing.assert_allclose(fast.alpha, ref.alpha, atol=1e-4 * C)
    np.testing.assert_allclose(np.asarray(fast.F), ref.F, atol=1e-4)
    if fast.bias is not None and ref.bias is not None:
        assert abs(fast.bias - ref.bias) <= 1e-3
