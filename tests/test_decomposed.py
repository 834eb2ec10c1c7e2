"""Tests of P3 and the decomposition (:func:`dank_fast.solve_decomposed`)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from _fuzz_strategies import (
    VALUE,
    Verdict,
    assert_bracket,
    assert_feasible,
    assert_overlap,
    bad_params,
    call,
    cluster_labels,
    cluster_labels_rule,
    features,
    features_rule,
    fuzz,
    iteration_limits,
    kernel_rule,
    kernels,
    labels_rule,
    pm1_labels,
    positive_scalars,
    record,
    ref_bracket,
    scalar_rule,
    tolerances,
)
from _solver_fuzz import (
    cluster_codes,
    iteration_limit,
    method_rule,
    optional_rule,
    solver_range_rule,
    svc_hang,
)
from hypothesis import given
from hypothesis import strategies as st
from threadpoolctl import threadpool_limits

from dank_fast import (
    FeatureKernel,
    compute_kernel,
    solve_decomposed,
)
from dank_fast._accelerated import accelerated
from dank_fast.decomposed import DecomposedProblem, block_kernel
from dank_fast.inner import KernelData


@pytest.fixture(autouse=True, scope="module")
def _single_blas_thread():
    with threadpool_limits(limits=1):
        yield


def _blobs(n=60, seed=0):
    rng = np.random.default_rng(seed)
    h = n // 2
    X = np.vstack([rng.normal(-2, 1, (h, 2)), rng.normal(2, 1, (n - h, 2))])
    y = np.where(X[:, 0] + X[:, 1] + rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y, compute_kernel(X, sigma=1.0)


def test_one_cluster_is_undecomposed_problem():
    X, y, K = _blobs()
    res = solve_decomposed(K, y, C=1.0, eta=5.0, tol=1e-9)
    direct = accelerated(DecomposedProblem(KernelData(K), y, 1.0, 5.0), tol=1e-9)
    assert len(res.blocks) == 1
    # the same problem solved twice (K is symmetrised by the validation: round-off differs)
    assert np.max(np.abs(res.alpha - direct.alpha)) < 1e-6
    assert res.lower == pytest.approx(res.full_value, abs=1e-12)  # Kbar = K
    assert abs(res.lower - direct.lower) <= res.gap + direct.gap
    # P3 has no bias: one class only is allowed
    r1 = solve_decomposed(K[:10, :10], np.ones(10), C=1.0, eta=5.0)
    assert r1.success and r1.bias is None


@fuzz(50)
@given(data=st.data())
def test_fuzz_solve_decomposed(data):
    bad = data.draw(bad_params("K", "y", "C", "eta", "tol", "method", "max_iter", "labels",
                               "n_clusters"), label="corrupted")
    use_features = data.draw(st.booleans(), label="FeatureKernel")
    if use_features:
        X = data.draw(features(good="K" not in bad), label="X")
        vX = features_rule(X)
        fk, _ = call("FeatureKernel", vX, lambda: FeatureKernel(X, sigma=1.0))
        if fk is None:
            return
        K, n, Xk = fk, fk.n, None
        with np.errstate(over="ignore"):
            Ks = fk.dense()
        vK = Verdict()
    else:
        K = data.draw(kernels(good="K" not in bad), label="K")
        vK, Ks = kernel_rule(K)
        n = Ks.shape[0] if Ks is not None else data.draw(st.integers(1, 6))
        Xk = data.draw(features(good="n_clusters" not in bad), label="X")
        if Ks is not None and np.ndim(Xk) == 2 and len(Xk) not in (0, n) and "n_clusters" not \
                in bad:
            Xk = np.resize(np.asarray(Xk, dtype=float), (n, max(1, np.shape(Xk)[1])))
    y = data.draw(pm1_labels(n, good="y" not in bad), label="y")
    C = data.draw(positive_scalars(good="C" not in bad), label="C")
    eta = data.draw(st.sampled_from(["SVM", b"svm", "auto"]) | positive_scalars(good=False)
                    if "eta" in bad else positive_scalars() | st.just("svm"), label="eta")
    tol = data.draw(tolerances(good="tol" not in bad), label="tol")
    method = data.draw(st.sampled_from(["Newton", "", None]) if "method" in bad else
                       st.sampled_from(["auto", "auto", "newton", "accelerated", "pgm"]))
    max_iter = iteration_limit(data.draw(iteration_limits(good="max_iter" not in bad)), method, tol)
    part = data.draw(st.sampled_from(["labels", "labels", "n_clusters", "none"]))
    labels = n_clusters = None
    if part == "labels" or "labels" in bad:
        labels = data.draw(cluster_labels(n, good="labels" not in bad), label="labels")
    elif part == "n_clusters" or "n_clusters" in bad:
        n_clusters = data.draw(st.sampled_from([0, -1, n + 1, 2.0, True, "2"]) if "n_clusters"
                               in bad else st.integers(1, n), label="n_clusters")

    v = method_rule(method, ("auto", "accelerated", "newton", "paper", "paper-monotone",
                              "pgm")).merge(vK)
    v.merge(labels_rule(y, n if Ks is not None else None, require_both=False))
    v.merge(scalar_rule(C, "C", "pos")).merge(scalar_rule(tol, "tol", "pos"))
    if isinstance(eta, str):
        if eta != "svm":
            v.add("eta", VALUE)
    else:
        v.merge(scalar_rule(eta, "eta", "pos"))
    v.merge(optional_rule(scalar_rule, max_iter, "max_iter", "int"))
    if labels is not None:
        v.merge(cluster_labels_rule(labels, n))
    elif n_clusters is not None:
        vn = scalar_rule(n_clusters, "n_clusters", "int")
        if vn.valid and not 1 <= n_clusters <= n:
            vn.add("n_clusters", VALUE)
        v.merge(vn)
        if not use_features:
            if Xk is None:
                v.add("n_clusters", VALUE)  # "n_clusters needs the features X"
            else:
                vx = features_rule(Xk)
                if vx.valid and np.asarray(Xk).shape[0] != n:
                    vx.add("X", VALUE)
                v.merge(vx)
    if eta != "svm":
        v.merge(solver_range_rule(Ks, C, eta, n))
    kw = dict(C=C, eta=eta, labels=labels, n_clusters=n_clusters, method=method, tol=tol,
              max_iter=max_iter, kmeans_n_init=1, random_state=0)
    if not use_features:
        kw["X"] = Xk
    if eta == "svm":  # eta from the clusters' SVMs: the range is decided later
        v.unsure("C")
    if v.valid and svc_hang(C, Ks, method == "auto" or eta == "svm"):
        record("solve_decomposed", "known-bug")
        return
    res, _ = call("solve_decomposed", v, lambda: solve_decomposed(K, y, **kw))
    if res is None:
        return
    C = float(C)
    eta_used = float(res.eta)
    assert eta_used > 0 and math.isfinite(eta_used)
    if eta != "svm":
        assert eta_used == float(eta)
    assert res.alpha.shape == (n,) and np.all(np.isfinite(res.alpha))
    assert_feasible(res.alpha, C, n)
    assert_bracket(res.lower, res.upper, "solve_decomposed (Kbar)")
    if res.status == "converged":
        assert res.rel_gap <= float(tol) * (1 + 1e-9)
    codes = cluster_codes(res.blocks, n)
    assert sorted(np.concatenate(res.blocks).tolist()) == list(range(n))
    yf = np.asarray(y, dtype=np.float64)
    Kd = 0.5 * (Ks + Ks.T)
    ref, scale = ref_bracket("decomposed", Kd, yf, res.alpha, C=C, eta=eta_used, labels=codes)
    assert_overlap((res.lower, res.upper), ref, scale, "solve_decomposed vs dank_ref (Kbar)")
    if res.full_certificate is not None:
        fc = res.full_certificate
        assert_bracket(fc.lower, fc.upper, "solve_decomposed (full K)")
        assert res.full_value <= fc.upper + 1e-12 * abs(fc.upper)
        ref, scale = ref_bracket("decomposed", Kd, yf, res.alpha, C=C, eta=eta_used)
        assert_overlap((fc.lower, fc.upper), ref, scale, "full certificate vs dank_ref")


@pytest.mark.parametrize("backend", ["threading", "loky"])
def test_parallel_equals_serial(backend):
    X, y, K = _blobs(n=60, seed=1)
    kw = {"C": 1.0, "eta": 5.0, "n_clusters": 3, "X": X, "random_state": 0}
    serial = solve_decomposed(K, y, n_jobs=1, **kw)
    par = solve_decomposed(K, y, n_jobs=2, backend=backend, **kw)
    assert np.array_equal(serial.labels, par.labels)
    assert np.max(np.abs(serial.alpha - par.alpha)) <= 1e-12
    assert serial.gap == pytest.approx(par.gap, abs=1e-12)


def test_lemma_lemmalink_and_corrected_Fbar():
    X, y, K = _blobs(n=50, seed=2)
    res = solve_decomposed(K, y, C=1.0, eta=5.0, n_clusters=3, X=X, random_state=0, tol=1e-8)
    # the concatenation is optimal for P3 on Kbar: its certificate there is small
    assert res.success and res.rel_gap <= 1e-8
    assert res.gap <= sum(r.gap for r in res.results) + 1e-10  # separable: gaps add up
    assert res.lower == pytest.approx(sum(r.lower for r in res.results), rel=1e-12)
    # solving P3 on Kbar in one piece gives the same value
    Kb = block_kernel(K, res.labels)
    joint = accelerated(DecomposedProblem(KernelData(Kb), y, 1.0, 5.0), tol=1e-9)
    assert abs(joint.lower - res.lower) <= joint.gap + res.gap + 1e-9
    # Fbar: the true minimiser has 1 off the blocks; the lemma's block-diagonal one costs
    # eta * (#off-block entries) more in Hbar(abar, .)
    F, F_lemma = res.F, res.F_lemma
    off = res.labels[:, None] != res.labels[None, :]
    assert np.all(F[off] == 1.0) and np.all(F_lemma[off] == 0.0)
    d = res.alpha * y

    def Hbar(F):
        return res.alpha.sum() - 0.5 * d @ ((F * Kb) @ d) + 5.0 * np.sum((F - 1) ** 2)

    assert Hbar(F) == pytest.approx(res.lower, rel=1e-10)
    assert Hbar(F_lemma) - Hbar(F) == pytest.approx(5.0 * off.sum(), rel=1e-10)
    # full problem: h(abar) on K is a lower bound, bracketed by the full certificate
    fc = res.full_certificate
    assert fc.lower == pytest.approx(res.full_value) and fc.lower <= fc.upper


def test_agrees_with_reference():
    import dank_ref

    X, y, K = _blobs(n=16, seed=3)
    labels = np.arange(16) % 2
    ref = dank_ref.solve_decomposed(K, y, labels, C=1.0, eta=5.0, method="blocks")
    res = solve_decomposed(K, y, C=1.0, eta=5.0, labels=labels, tol=1e-9)
    assert abs(ref.lower - res.lower) <= ref.gap + res.gap + 1e-6
    assert np.max(np.abs(ref.F - res.F)) < 1e-4


def test_bad_input():
    X, y, K = _blobs(n=10)
    with pytest.raises(ValueError, match="-1 and \\+1"):
        solve_decomposed(K, y * 2, C=1.0, eta=1.0)
    with pytest.raises(ValueError, match="features X"):
        solve_decomposed(K, y, C=1.0, eta=1.0, n_clusters=2)
    with pytest.raises(ValueError):
        solve_decomposed(K, y, C=1.0, eta=1.0, labels=np.zeros(3))
    with pytest.raises(ValueError):
        solve_decomposed(K, y, C=-1.0, eta=1.0)


# ----------------------------------------------------------------- scale: the features route
def test_feature_route_equals_the_dense_route_and_never_forms_K(monkeypatch):
    from dank_fast import FeatureKernel

    X, y, K = _blobs(n=90, seed=6)
    labels = np.arange(90) % 3
    dense = solve_decomposed(K, y, C=1.0, eta=5.0, labels=labels, tol=1e-10)
    monkeypatch.setattr(FeatureKernel, "dense", lambda *a, **k: pytest.fail("formed K"))
    feat = solve_decomposed(FeatureKernel(X, sigma=1.0), y, C=1.0, eta=5.0, labels=labels,
                            tol=1e-10)
    assert np.max(np.abs(feat.alpha - dense.alpha)) <= 1e-9
    assert feat.lower == pytest.approx(dense.lower, rel=1e-12)
    # the full problem's value and certificate, blockwise from the features
    assert feat.full_value == pytest.approx(dense.full_value, rel=1e-12)
    assert feat.full_certificate.upper == pytest.approx(dense.full_certificate.upper, rel=1e-10)


def test_eta_svm_rule_is_the_norm_of_the_clusters_svms():
    from sklearn.svm import SVC

    from dank_fast import FeatureKernel

    X, y, K = _blobs(n=80, seed=7)
    labels = (X[:, 0] > 0).astype(int)
    res = solve_decomposed(FeatureKernel(X, sigma=1.0), y, C=2.0, eta="svm", labels=labels)
    expected = 0.0
    for c in (0, 1):
        idx = np.flatnonzero(labels == c)
        if np.unique(y[idx]).size == 2:
            svc = SVC(kernel="precomputed", C=2.0, tol=1e-4).fit(K[np.ix_(idx, idx)], y[idx])
            expected += float(np.sum(svc.dual_coef_**2))
    assert res.eta == pytest.approx(expected, rel=1e-9)
    assert res.success


@pytest.mark.parametrize("bad", [np.nan, None])
def test_cluster_labels_nan_or_none_are_refused(bad):
    X, y, K = _blobs(n=10)
    labels = np.array([0, 1] * 5, dtype=object)
    labels[3] = bad
    with pytest.raises(ValueError, match="NaN|None"):
        solve_decomposed(K, y, C=1.0, eta=1.0, labels=labels)


def test_any_hashable_cluster_labels():
    X, y, K = _blobs(n=12, seed=8)
    labels = np.array(["a", "b", "c"] * 4)
    res = solve_decomposed(K, y, C=1.0, eta=5.0, labels=labels)
    assert len(res.blocks) == 3 and res.success


def test_cluster_solves_use_the_callers_units_for_callback_and_eps():
    """P3's clusters run through the same dispatch as solve_svm (dank_fast._methods): on a
    rescaled instance (c = 2^-30 here) a callback sees z in the caller's units (inside the box
    [0, C]), as solve_svm's does (not a / c, 2^30 times too large)."""
    import warnings

    from dank_fast import compute_kernel, solve_decomposed

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    K = compute_kernel(X, sigma=1.0) * 2.0**30
    C = 2.0**-25
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        solve_decomposed(K, y, C=C, eta=2.0**-20, labels=np.arange(30) % 2,
                         method="accelerated", max_iter=20,
                         callback=lambda z, ev: seen.append(float(np.max(z))))
    assert seen and max(seen) <= C * (1 + 1e-12)


# solve_decomposed certifies K = 0 with extreme C / eta


# --------------------------------------------------------------- K = 0 with extreme C / eta
# With K = 0, F(a) = J_{tau/2}(11') for every a: a* does not depend on eta, and the solvers work
# at eta' = C, then certify at the true eta (dank_fast._scaling.recertify_zero_kernel), so
# C = 1e155 with eta = 1e-169 is certified (not max_iter with a rel. gap of 1e137, nor a
# LinAlgError).
_ZERO_K_SCALES = [(1e155, 1e-169), (1e-300, 1e300), (1e300, 1e-300), (1e140, 1e-140), (1.0, 1e-300)]


@pytest.mark.parametrize("C, eta", _ZERO_K_SCALES)
def test_zero_kernel_decomposed_extreme_scales_are_certified(C, eta):
    """P3 with K = 0 (tau = 0): h(a) = 1'a, whatever eta; the box optimum is a = C."""
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve_decomposed(np.zeros((5, 5)), y, C=C, eta=eta, labels=[0, 0, 1, 1, 1])
    assert r.status == "converged" and r.eta == eta
    np.testing.assert_allclose(r.alpha, C, rtol=1e-9)
    assert r.certificate.lower == pytest.approx(5 * C, rel=1e-9)
    assert r.certificate.lower <= r.certificate.upper
