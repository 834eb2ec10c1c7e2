"""Cross-checks of dank_ref (exact conic reference) against dank_fast (fast solvers).

Both packages bracket the same saddle value ``v*`` with certified bounds: the brackets must
overlap (up to round-off), and each package's solution, re-certified by the *other* package's
independent certificate, must have a small gap.  The fuzz test also checks that dank_ref
refuses, by name, every input docs/validity.md refuses.  dank_ref itself never imports
dank_fast (tests/test_independence.py); only this module puts the two side by side.
"""

from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest
from _fuzz_known import present
from _fuzz_strategies import (
    Verdict,
    assert_bracket,
    assert_feasible,
    assert_overlap,
    bad_params,
    box_rule,
    call,
    cluster_labels,
    cluster_labels_rule,
    fuzz,
    huge_int,
    kernel_rule,
    kernels,
    labels_rule,
    nonneg_scalars,
    pm1_labels,
    positive_scalars,
    range_rule,
    real_targets,
    record,
    ref_bracket,
    scalar_rule,
    targets_rule,
)
from _ref_cases import svr_instance
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dank_fast
import dank_ref
from dank_ref import certificate as rc
from dank_ref.certificate import svm_certificate as ref_svm_certificate


# ---------------------------------------------------------------- fixed instances
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
    assert ref.status == "converged"
    v_ref = 0.5 * (ref.lower + ref.upper)
    v_fast = 0.5 * (fast.lower + fast.upper)
    tol = ref.gap + fast.gap + 1e-8 * max(1.0, abs(v_ref))
    assert abs(v_ref - v_fast) <= tol
    # each interval contains the other's lower bound (both are valid bounds on v*)
    assert fast.lower <= ref.upper + 1e-9 * abs(v_ref)
    assert ref.lower <= fast.upper + 1e-9 * abs(v_ref)


def test_fast_solution_recertified_by_ref(pair):
    K, y, C, eta, tau, ref, fast = pair
    c = ref_svm_certificate(K, y, fast.alpha, C=C, eta=eta, tau=tau)
    assert c.projection_distance <= 1e-8
    assert c.gap <= max(10 * fast.gap, 1e-7 * max(1.0, float(np.sum(c.alpha))))
    assert abs(c.lower - fast.lower) <= 1e-7 * max(1.0, abs(c.lower))


def test_ref_solution_recertified_by_fast(pair):
    K, y, C, eta, tau, ref, fast = pair
    c = dank_fast.svm_certificate(K, y, ref.alpha, C=C, eta=eta, tau=tau)
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


def test_svr_certificate_evaluates_the_given_pair_like_dank_fast():
    """Both certify the pair as given (common parts min(ah_i, ac_i) > 0 are not removed)."""
    K, y = svr_instance()
    rng = np.random.default_rng(1)
    ah = rng.uniform(0.05, 0.6, 20)
    ac = ah[::-1].copy()  # same sum: 1'(ah - ac) = 0 up to rounding; common parts > 0
    assert np.min(np.minimum(ah, ac)) > 0
    kw = dict(C=1.0, epsilon=0.1, eta=1.0, tau=0.01)
    cr = rc.svr_certificate(K, y, ah, ac, **kw)
    cf = dank_fast.svr_certificate(K, y, ah, ac, **kw)
    np.testing.assert_array_equal(cr.alpha_hat, ah)
    assert cr.lower == pytest.approx(cf.lower, rel=1e-10)
    assert cr.upper == pytest.approx(cf.upper, rel=1e-10)
    # and the lower bound is h at that pair (h depends on ah + ac)
    b = ah - ac
    M = 1.0 + np.outer(b, b) * K / 4.0
    lam, U = np.linalg.eigh(M)
    F = (U * np.maximum(lam - 0.005, 0)) @ U.T
    h = (b @ y - 0.1 * np.sum(ah + ac) - 0.5 * b @ (F * K) @ b + np.sum((F - 1) ** 2)
         + 0.01 * np.trace(F))
    assert cr.lower == pytest.approx(h, rel=1e-9)

@pytest.mark.parametrize("task", ["svm", "svr", "decomposed"])
def test_results_share_names_and_meanings(task):
    """docs/conventions.md: ``value`` is the certified lower bound, ``success`` means
    ``status == "converged"`` (certified rel_gap <= tol), SVR's duals are attributes."""
    K, y = make_svm(12, 3)
    kw = dict(C=1.0, eta=1.0)
    if task == "svm":
        ref = dank_ref.solve_svm(K, y, tol=1e-6, **kw)
        fast = dank_fast.solve_svm(K, y, tol=1e-6, **kw)
    elif task == "svr":
        t = np.linspace(-1.0, 1.0, 12) ** 2
        ref = dank_ref.solve_svr(K, t, epsilon=0.05, tol=1e-6, **kw)
        fast = dank_fast.solve_svr(K, t, epsilon=0.05, tol=1e-6, **kw)
    else:
        labels = np.arange(12) % 3
        ref = dank_ref.solve_decomposed(K, y, labels, tol=1e-6, **kw)
        fast = dank_fast.solve_decomposed(K, y, labels=labels, tol=1e-6, **kw)
    for r in (ref, fast):
        assert r.status == "converged" and r.success and r.rel_gap <= 1e-6
        assert r.value == r.lower <= r.upper
        if task == "svr":
            np.testing.assert_array_equal(r.alpha, r.alpha_hat - r.alpha_check)
        else:
            assert r.alpha_hat is None and r.alpha_check is None
    if task == "svr":
        assert fast.extra["alpha_hat"] is fast.alpha_hat  # also readable in extra
    assert abs(ref.value - fast.value) <= ref.gap + fast.gap + 1e-9 * abs(ref.value)


def test_default_tau_is_001_in_both_packages():
    for name in ("solve_svm", "solve_svr"):
        for pkg in (dank_ref, dank_fast):
            assert inspect.signature(getattr(pkg, name)).parameters["tau"].default == 0.01


# ---------------------------------------------------------------- properties
def _settings(examples: int):
    return settings(max_examples=examples, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def _instance(n, d, width, balance, dup, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    if dup:
        X[1:1 + dup] = X[0]
    y = np.where(rng.uniform(size=n) < balance, 1.0, -1.0)
    y[0], y[-1] = 1.0, -1.0
    K = dank_fast.compute_kernel(X, sigma=width)
    return X, K, y


def _overlap(a_lo, a_hi, b_lo, b_hi, scale):
    slack = 1e-7 * max(1.0, abs(scale))
    return a_lo <= b_hi + slack and b_lo <= a_hi + slack


@_settings(24)
@given(
    n=st.integers(6, 40), d=st.integers(1, 3), C=st.sampled_from([0.1, 1.0, 10.0]),
    eta=st.sampled_from([0.1, 1.0, 100.0]), tau=st.sampled_from([0.0, 0.01, 0.5]),
    width=st.sampled_from([0.05, 0.5, 5.0]), balance=st.floats(0.1, 0.9),
    dup=st.integers(0, 2), seed=st.integers(0, 10_000),
)
def test_p1_fast_and_ref_agree(n, d, C, eta, tau, width, balance, dup, seed):
    _, K, y = _instance(n, d, width, balance, dup, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dank_ref.ConvergenceWarning)
        ref = dank_ref.solve_svm(K, y, C=C, eta=eta, tau=tau)
    fast = dank_fast.solve_svm(K, y, C=C, eta=eta, tau=tau, method="newton", tol=1e-10)
    assert fast.success
    assert _overlap(fast.lower, fast.upper, ref.lower, ref.upper, fast.lower)
    # the fast solution, certified by the reference's own code
    c = ref_svm_certificate(K, y, fast.alpha, C=C, eta=eta, tau=tau)
    assert c.gap <= 1e-8 * max(1.0, float(fast.alpha.sum()))
    # the reference solution, certified by the fast package's code
    cf = dank_fast.svm_certificate(K, y, ref.alpha, C=C, eta=eta, tau=tau)
    assert abs(cf.gap - ref.gap) <= 1e-7 * max(1.0, float(ref.alpha.sum()))


@_settings(20)
@given(
    n=st.integers(6, 30), C=st.sampled_from([0.3, 3.0]), eps=st.sampled_from([0.0, 0.1]),
    eta=st.sampled_from([0.5, 20.0]), tau=st.sampled_from([0.0, 0.01]),
    seed=st.integers(0, 10_000),
)
def test_p2_fast_and_ref_agree(n, C, eps, eta, tau, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 1))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=n)
    K = dank_fast.compute_kernel(X, sigma=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dank_ref.ConvergenceWarning)
        ref = dank_ref.solve_svr(K, y, C=C, epsilon=eps, eta=eta, tau=tau)
    fast = dank_fast.solve_svr(
        K, y, C=C, epsilon=eps, eta=eta, tau=tau, method="newton", tol=1e-10
    )
    assert fast.success
    assert _overlap(fast.lower, fast.upper, ref.lower, ref.upper, fast.lower)


@_settings(30)
@given(
    n=st.integers(8, 40), v=st.integers(1, 3), C=st.sampled_from([0.5, 5.0]),
    eta=st.sampled_from([0.5, 50.0]), seed=st.integers(0, 10_000),
)
def test_p3_fast_and_ref_agree(n, v, C, eta, seed):
    X, K, y = _instance(n, 2, 0.5, 0.5, 0, seed)
    labels = np.arange(n) % v
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dank_ref.ConvergenceWarning)
        ref = dank_ref.solve_decomposed(K, y, labels, C=C, eta=eta)
    fast = dank_fast.solve_decomposed(K, y, C=C, eta=eta, labels=labels, tol=1e-10)
    cert = fast.certificate
    assert _overlap(cert.lower, cert.upper, ref.lower, ref.upper, cert.lower)
    np.testing.assert_allclose(fast.alpha, ref.alpha, atol=1e-4 * C)


# ---------------------------------------------------------------- fuzz: validity and brackets
def _mixed_labels(labels) -> bool:
    """Valid cluster labels dank_ref mishandles (known bug 'ref-cluster-labels'): tuples,
    values of mixed types, infinities."""
    if isinstance(labels, np.ndarray):
        items = labels.tolist()
    else:
        try:
            items = list(labels)
        except TypeError:
            return False
    kinds = {type(x) for x in items}
    return (any(isinstance(x, tuple) for x in items) or len(kinds) > 1
            or any(isinstance(x, float) and np.isinf(x) for x in items))


@fuzz(12)
@given(data=st.data())
def test_fuzz_ref_solvers(data):
    task = data.draw(st.sampled_from(["svm", "svr", "decomposed"]), label="task")
    bad = data.draw(bad_params("K", "y", "C", "eta", "tau", "labels", max_bad=1))
    K = data.draw(kernels(max_n=4, good="K" not in bad), label="K")
    vK, Ks = kernel_rule(K)
    n = Ks.shape[0] if Ks is not None else data.draw(st.integers(2, 4))
    if task == "svr":
        y = data.draw(real_targets(n, good="y" not in bad), label="y")
        vy = targets_rule(y, n if Ks is not None else None)
    else:
        y = data.draw(pm1_labels(n, good="y" not in bad), label="y")
        vy = labels_rule(y, n if Ks is not None else None, require_both=task == "svm")
    C = data.draw(positive_scalars(lo=-2, hi=2, good="C" not in bad), label="C")
    eta = data.draw(positive_scalars(lo=-2, hi=2, good="eta" not in bad), label="eta")
    tau = data.draw(nonneg_scalars(good="tau" not in bad), label="tau")
    eps = data.draw(st.sampled_from([0.0, 0.1]), label="epsilon")
    labels = data.draw(cluster_labels(n, good="labels" not in bad), label="labels")
    v = Verdict().merge(vK).merge(vy)
    v.merge(box_rule(C, n)).merge(scalar_rule(eta, "eta", "pos"))
    if task != "decomposed":
        v.merge(scalar_rule(tau, "tau", "nonneg"))
    else:
        v.merge(cluster_labels_rule(labels, n) if Ks is not None else Verdict())
    if (Ks is not None and scalar_rule(C, "C", "pos").valid
            and scalar_rule(eta, "eta", "pos").valid):
        v.merge(range_rule(float(C), float(eta), float(np.max(np.abs(Ks))), n))

    if huge_int(C, eta, tau) and present("ref-huge-int"):
        record(f"dank_ref.solve_{task}", "known-bug")
        return
    if task == "decomposed" and _mixed_labels(labels) and present("ref-cluster-labels"):
        record("dank_ref.solve_decomposed", "known-bug")
        return

    def run():
        if task == "svm":
            return dank_ref.solve_svm(K, y, C=C, eta=eta, tau=tau)
        if task == "svr":
            return dank_ref.solve_svr(K, y, C=C, epsilon=eps, eta=eta, tau=tau)
        return dank_ref.solve_decomposed(K, y, labels, C=C, eta=eta)

    res, _ = call(f"dank_ref.solve_{task}", v, run)
    if res is None:
        return
    if np.ndim(C) > 0:  # per-sample boxes: dank_fast has no certificate of them to compare
        return
    C, eta, tau = float(C), float(eta), float(tau)
    yv = np.asarray(y, dtype=float)
    assert_bracket(res.lower, res.upper, f"dank_ref.solve_{task}")
    assert res.status in dank_ref.STATUSES
    if task == "svm":
        assert_feasible(res.alpha, C, n, yv)
        fc = dank_fast.svm_certificate(K, yv, res.alpha, C=C, eta=eta, tau=tau)
        point = res.alpha
    elif task == "svr":
        z = np.concatenate([res.alpha_hat, res.alpha_check])
        assert_feasible(z, C, n, np.concatenate([np.ones(n), -np.ones(n)]), "[ah; ac]")
        fc = dank_fast.svr_certificate(K, yv, res.alpha_hat, res.alpha_check, C=C, epsilon=eps,
                             eta=eta, tau=tau)
        point = z
    else:
        assert_feasible(res.alpha, C, n)
        return  # P3's certificate on Kbar: cross-checked in test_fuzz_certificates
    _, scale = ref_bracket(task, Ks, yv, point, C=C, eta=eta, tau=tau, epsilon=eps)
    assert_overlap((fc.lower, fc.upper), (res.lower, res.upper), scale,
                   f"dank_ref.solve_{task} vs dank_fast")
