"""Fuzz tests of the fast solvers: ``solve_svm`` (dense K and FeatureKernel), ``solve_svr``,
``solve_decomposed``.

Every example ends either in a ``ValueError``/``TypeError`` that names a parameter violating
docs/validity.md (the rule is re-implemented in ``_fuzz_strategies``), or in a result whose
bracket satisfies ``lower <= upper``, whose point is feasible (``1e-9 C sqrt(n)``), which is
certified when it says "converged", and whose bracket overlaps the one ``dank_ref``'s
independent certificate computes at the same point. Profiles and counts: ``_fuzz_strategies``.
"""

from __future__ import annotations

import math

import numpy as np
from _fuzz_known import present
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
    kernel_spec_rule,
    kernel_specs,
    kernels,
    labels_rule,
    nonneg_scalars,
    pm1_labels,
    positive_scalars,
    range_rule,
    real_array_rule,
    real_targets,
    record,
    ref_bracket,
    scalar_rule,
    targets_rule,
    tolerances,
)
from hypothesis import given
from hypothesis import strategies as st

from dank_fast import FeatureKernel, solve_decomposed, solve_svm, solve_svr
from dank_fast.svm import METHODS as SVM_METHODS
from dank_fast.svr import METHODS as SVR_METHODS

PAPER = ("paper", "paper-monotone", "pgm")
BAD_METHODS = ["Newton", "", None, 3, "auto "]


# --------------------------------------------------------------------------- helpers
def _method_rule(method, allowed) -> Verdict:
    v = Verdict()
    if not (isinstance(method, str) and method in allowed):
        v.add("method", (ValueError, TypeError))
    return v


def _optional(rule, value, *args) -> Verdict:
    return Verdict() if value is None else rule(value, *args)


def _range(K, C, eta, n) -> Verdict:
    """The representable range, when ``K``, ``C`` and ``eta`` are each valid."""
    if K is None or not (scalar_rule(C, "C", "pos").valid and scalar_rule(eta, "eta", "pos")
                         .valid):
        return Verdict()
    return range_rule(float(C), float(eta), float(np.max(np.abs(K))), n)


def _huge_start_for_paper(method, alpha0) -> bool:
    """Inputs covered by the known bug 'paper-alpha0-unprojected' (``_fuzz_known``)."""
    if method not in PAPER or alpha0 is None or not present("paper-alpha0-unprojected"):
        return False
    a = np.asarray(alpha0)
    return a.dtype.kind == "f" and a.size > 0 and bool(np.nanmax(np.abs(a)) >= 1e100)


def _svc_hang(C, K, uses_svc: bool) -> bool:
    """Inputs covered by the known bug 'svc-warm-start-unbounded': libsvm's iterations grow
    with C max|K| (1 s for 7 points at 5e7, 300 s at 5e10) and with C alone when K = 0
    (C = 1e20 did not finish)."""
    if not uses_svc or K is None or not scalar_rule(C, "C", "pos").valid:
        return False
    big = float(C) > 1e6 or float(C) * float(np.max(np.abs(K)) if np.size(K) else 0.0) > 1e6
    return big and present("svc-warm-start-unbounded")


def _alpha0_rule(alpha0, shapes) -> Verdict:
    v = Verdict()
    if alpha0 is None:
        return v
    f = real_array_rule(alpha0, "alpha0", None, v)
    if f is not None and f.shape not in shapes:
        v.add("alpha0", VALUE)
    return v


def _methods(allowed, good: bool):
    return st.sampled_from(list(allowed)) if good else st.sampled_from(BAD_METHODS)


def _limit(max_iter, method, tol):
    """Keep an example short: the paper's t_max = 2000, or 5000 accelerated iterations towards
    a tolerance of 1e-300, take seconds; an explicit limit is fuzzed on its own."""
    if max_iter is None and (method in PAPER or (isinstance(tol, float) and tol < 1e-9)):
        return 100
    return max_iter


def _alpha0(draw, n: int, good: bool = True):
    """Warm starts: none, arbitrary (infeasible, huge) vectors; or malformed ones."""
    kind = draw(st.sampled_from(["none", "none", "random", "huge"] if good else ["bad"]))
    if kind == "none":
        return None
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if kind == "random":
        return rng.normal(size=n)
    if kind == "huge":
        return rng.normal(size=n) * 1e200
    return draw(st.sampled_from([np.full(n, np.nan), np.ones(n + 1), np.ones((n, 1)),
                                 np.ones(n) + 0j, np.ones(n, dtype=bool), "x"]))


def _scalar_verdict(C, eta, tau, tol, max_iter) -> Verdict:
    v = scalar_rule(C, "C", "pos").merge(scalar_rule(eta, "eta", "pos"))
    v.merge(scalar_rule(tau, "tau", "nonneg")).merge(scalar_rule(tol, "tol", "pos"))
    return v.merge(_optional(scalar_rule, max_iter, "max_iter", "int"))


def check_p1_result(res, K, y, C, eta, tau, tol, *, cross=True):
    """Properties of a P1 result (see the module docstring)."""
    y = np.asarray(y, dtype=np.float64)
    n = y.size
    C, eta, tau, tol = float(C), float(eta), float(tau), float(tol)
    assert res.alpha.shape == (n,) and np.all(np.isfinite(res.alpha))
    assert_bracket(res.lower, res.upper, "solve_svm")
    assert res.gap >= 0 and math.isclose(res.upper - res.lower, res.gap, rel_tol=1e-6,
                                         abs_tol=1e-12 * max(abs(res.lower), abs(res.upper)))
    assert_feasible(res.alpha, C, n, y)
    if res.status == "converged":
        assert res.rel_gap <= tol * (1 + 1e-9), (res.status, res.rel_gap, tol)
    assert res.bias is None or math.isfinite(res.bias)
    if cross:
        ref, scale = ref_bracket("svm", K, y, res.alpha, C=C, eta=eta, tau=tau)
        assert_overlap((res.lower, res.upper), ref, scale, "solve_svm vs dank_ref")


# --------------------------------------------------------------------------- solve_svm
@fuzz(60)
@given(data=st.data())
def test_fuzz_solve_svm_dense(data):
    bad = data.draw(bad_params("K", "y", "C", "eta", "tau", "tol", "method", "max_iter",
                               "eig_route", "alpha0"), label="corrupted")
    K = data.draw(kernels(good="K" not in bad), label="K")
    vK, Ks = kernel_rule(K)
    n = Ks.shape[0] if Ks is not None else data.draw(st.integers(1, 6))
    y = data.draw(pm1_labels(n, good="y" not in bad), label="y")
    C = data.draw(positive_scalars(good="C" not in bad), label="C")
    eta = data.draw(positive_scalars(good="eta" not in bad), label="eta")
    tau = data.draw(nonneg_scalars(good="tau" not in bad), label="tau")
    tol = data.draw(tolerances(good="tol" not in bad), label="tol")
    method = data.draw(_methods(SVM_METHODS, "method" not in bad), label="method")
    max_iter = _limit(data.draw(iteration_limits(good="max_iter" not in bad), label="max_iter"),
                      method, tol)
    eig_route = data.draw(st.sampled_from(["Dense", "exact", None]) if "eig_route" in bad
                          else st.sampled_from(["auto", "auto", "dense", "lanczos"]),
                          label="eig_route")
    alpha0 = _alpha0(data.draw, n, "alpha0" not in bad)

    v = _method_rule(method, SVM_METHODS).merge(vK)
    v.merge(labels_rule(y, n if Ks is not None else None, require_both=True))
    v.merge(_scalar_verdict(C, eta, tau, tol, max_iter))
    if eig_route not in ("auto", "dense", "lanczos"):
        v.add("eig_route", VALUE)
    v.merge(_alpha0_rule(alpha0, [(n,)]))
    v.merge(_range(Ks, C, eta, n))

    if v.valid and (_huge_start_for_paper(method, alpha0)
                    or _svc_hang(C, Ks, method == "auto" and alpha0 is None)):
        record("solve_svm", "known-bug")
        return
    res, _ = call("solve_svm", v, lambda: solve_svm(
        K, y, C=C, eta=eta, tau=tau, method=method, tol=tol, max_iter=max_iter,
        alpha0=alpha0, eig_route=eig_route))
    if res is not None:
        check_p1_result(res, Ks, y, C, eta, tau, tol)


@fuzz(40)
@given(data=st.data())
def test_fuzz_solve_svm_feature_kernel(data):
    bad = data.draw(bad_params("X", "kernel", "y", "C", "eta", "tau", "tol", "method",
                               "max_iter"), label="corrupted")
    X = data.draw(features(good="X" not in bad), label="X")
    kw = data.draw(kernel_specs(good="kernel" not in bad), label="kernel")
    v = features_rule(X).merge(kernel_spec_rule(kw, precomputed_ok=False))
    fk, _ = call("FeatureKernel", v, lambda: FeatureKernel(X, **kw))
    if fk is None:
        return
    n = fk.n
    y = data.draw(pm1_labels(n, good="y" not in bad), label="y")
    C = data.draw(positive_scalars(good="C" not in bad), label="C")
    eta = data.draw(positive_scalars(good="eta" not in bad), label="eta")
    tau = data.draw(nonneg_scalars(good="tau" not in bad), label="tau")
    tol = data.draw(tolerances(good="tol" not in bad), label="tol")
    method = data.draw(st.sampled_from(["accelerated", "paper"] + BAD_METHODS) if "method" in
                       bad else st.sampled_from(["auto", "newton"]), label="method")
    max_iter = _limit(data.draw(iteration_limits(good="max_iter" not in bad)), method, tol)
    K = None
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            K = fk.dense()
    except ValueError as exc:  # the kernel overflows: must say so, naming the kernel
        assert "kernel" in str(exc) and "overflow" in str(exc)
    v = Verdict()
    if method not in ("auto", "newton"):
        v.add("method", (ValueError, TypeError))
    v.merge(labels_rule(y, n, require_both=True))
    v.merge(_scalar_verdict(C, eta, tau, tol, max_iter))
    if v.valid and K is None:
        v.add("kernel", VALUE)
    v.merge(_range(K, C, eta, n))
    if v.valid and _svc_hang(C, K, method == "auto"):
        record("solve_svm(FeatureKernel)", "known-bug")
        return
    res, _ = call("solve_svm(FeatureKernel)", v, lambda: solve_svm(
        fk, y, C=C, eta=eta, tau=tau, method=method, tol=tol, max_iter=max_iter),
        info=dict(X=X, kw=kw, y=y, C=C, eta=eta, tau=tau, method=method, tol=tol,
                  max_iter=max_iter))
    if res is not None:
        check_p1_result(res, 0.5 * (K + K.T), y, C, eta, tau, tol)


# --------------------------------------------------------------------------- solve_svr
@fuzz(50)
@given(data=st.data())
def test_fuzz_solve_svr(data):
    bad = data.draw(bad_params("K", "y", "C", "eta", "tau", "epsilon", "tol", "method",
                               "max_iter", "alpha0"), label="corrupted")
    K = data.draw(kernels(good="K" not in bad), label="K")
    vK, Ks = kernel_rule(K)
    n = Ks.shape[0] if Ks is not None else data.draw(st.integers(1, 6))
    y = data.draw(real_targets(n, good="y" not in bad), label="y")
    C = data.draw(positive_scalars(good="C" not in bad), label="C")
    eta = data.draw(positive_scalars(good="eta" not in bad), label="eta")
    tau = data.draw(nonneg_scalars(good="tau" not in bad), label="tau")
    epsilon = data.draw(nonneg_scalars(good="epsilon" not in bad), label="epsilon")
    tol = data.draw(tolerances(good="tol" not in bad), label="tol")
    method = data.draw(_methods(SVR_METHODS, "method" not in bad), label="method")
    max_iter = _limit(data.draw(iteration_limits(good="max_iter" not in bad), label="max_iter"),
                      method, tol)
    alpha0 = _alpha0(data.draw, data.draw(st.sampled_from([n, 2 * n])), "alpha0" not in bad)

    v = _method_rule(method, SVR_METHODS).merge(vK)
    v.merge(targets_rule(y, n if Ks is not None else None))
    v.merge(_scalar_verdict(C, eta, tau, tol, max_iter))
    v.merge(scalar_rule(epsilon, "epsilon", "nonneg"))
    v.merge(_alpha0_rule(alpha0, [(n,), (2 * n,)]))
    v.merge(_range(Ks, C, eta, n))

    if v.valid and (_huge_start_for_paper(method, alpha0) or (
            method in ("paper", "paper-monotone") and not np.any(Ks)
            and present("svr-paper-zero-kernel"))):
        record("solve_svr", "known-bug")
        return
    res, _ = call("solve_svr", v, lambda: solve_svr(
        K, y, C=C, epsilon=epsilon, eta=eta, tau=tau, method=method, tol=tol,
        max_iter=max_iter, alpha0=alpha0))
    if res is None:
        return
    C, eta, tau, epsilon = float(C), float(eta), float(tau), float(epsilon)
    z = res.extra["z"]
    assert z.shape == (2 * n,) and np.all(np.isfinite(z))
    assert np.array_equal(res.alpha, z[:n] - z[n:])
    assert_bracket(res.lower, res.upper, "solve_svr")
    assert_feasible(z, C, n, np.concatenate([np.ones(n), -np.ones(n)]), "[ah; ac]")
    if res.status == "converged":
        assert res.rel_gap <= float(tol) * (1 + 1e-9)
    assert math.isfinite(res.bias)
    ref, scale = ref_bracket("svr", Ks, y, z, C=C, eta=eta, tau=tau, epsilon=epsilon)
    assert_overlap((res.lower, res.upper), ref, scale, "solve_svr vs dank_ref")


# --------------------------------------------------------------------------- solve_decomposed
def _codes(blocks, n):
    codes = np.empty(n, dtype=np.int64)
    for c, idx in enumerate(blocks):
        codes[idx] = c
    return codes


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
    max_iter = _limit(data.draw(iteration_limits(good="max_iter" not in bad)), method, tol)
    part = data.draw(st.sampled_from(["labels", "labels", "n_clusters", "none"]))
    labels = n_clusters = None
    if part == "labels" or "labels" in bad:
        labels = data.draw(cluster_labels(n, good="labels" not in bad), label="labels")
    elif part == "n_clusters" or "n_clusters" in bad:
        n_clusters = data.draw(st.sampled_from([0, -1, n + 1, 2.0, True, "2"]) if "n_clusters"
                               in bad else st.integers(1, n), label="n_clusters")

    v = _method_rule(method, ("auto", "accelerated", "newton", "paper", "paper-monotone",
                              "pgm")).merge(vK)
    v.merge(labels_rule(y, n if Ks is not None else None, require_both=False))
    v.merge(scalar_rule(C, "C", "pos")).merge(scalar_rule(tol, "tol", "pos"))
    if isinstance(eta, str):
        if eta != "svm":
            v.add("eta", VALUE)
    else:
        v.merge(scalar_rule(eta, "eta", "pos"))
    v.merge(_optional(scalar_rule, max_iter, "max_iter", "int"))
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
        v.merge(_range(Ks, C, eta, n))
    kw = dict(C=C, eta=eta, labels=labels, n_clusters=n_clusters, method=method, tol=tol,
              max_iter=max_iter, kmeans_n_init=1, random_state=0)
    if not use_features:
        kw["X"] = Xk
    if eta == "svm":  # eta from the clusters' SVMs: the range is decided later
        v.unsure("C")
    if v.valid and _svc_hang(C, Ks, method == "auto" or eta == "svm"):
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
    codes = _codes(res.blocks, n)
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
