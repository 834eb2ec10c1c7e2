"""Per-sample boxes ``0 <= a_i <= C_i`` in dank_ref and the oracle.

The box is the only change (docs/MATH.md section 14): dank_ref solves weighted P1, P2 and P3
and its certificate brackets the saddle value of an independent conic solve; equal weights are
the scalar problem; the rescaling law holds with a vector ``C``; the oracle certifies weighted
instances from files and from arrays, dense and blockwise, and refuses a point that breaks one
box; files of format version 1 remain readable.
"""

from __future__ import annotations

import json
import os

import cvxpy as cp
import numpy as np
import pytest

from dank_ref import certificate as rc
from dank_ref import solve_decomposed, solve_svm, solve_svr
from dank_ref.features import FeatureKernel
from dank_ref.projection import project_A, project_sum_zero, project_svr
from dank_ref.scale_certificate import (
    decomposed_certificate_features,
    svm_certificate_features,
    svr_certificate_features,
)
from dank_ref.svm import build_svm_problem
from dank_ref.svr import build_svr_problem
from dank_ref.validation import check_box, feasibility_tolerance
from verification import certify_arrays
from verification.formats import (
    FormatError,
    load_instance,
    load_solution,
    save_instance,
    save_solution,
)
from verification.golden import GOLDEN_DIR, load_manifest
from verification.oracle import certify
from verification.schemas import SchemaError, validate

N = 16


def _data(n=N, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 2.0)
    y = np.where(X[:, 0] + 0.4 * rng.normal(size=n) > 0, 1.0, -1.0)
    t = np.sin(2.0 * X[:, 0]) + 0.1 * rng.normal(size=n)
    w = 2.0 ** rng.integers(-2, 3, n)  # powers of two: exact boxes
    return X, K, y, t, w


X, K, Y, T, W = _data()


def _feasible_point(rng, C, y):
    return project_A(rng.uniform(0.0, 1.0, y.size) * C, y, C)


# ---------------------------------------------------------------------------------------------
# validation, projection, exact weighted bias
# ---------------------------------------------------------------------------------------------
def test_check_box_takes_a_scalar_or_n_positive_bounds():
    assert check_box(2, 3) == 2.0 and isinstance(check_box(2, 3), float)
    assert check_box([1, 2, 3], 3).tolist() == [1.0, 2.0, 3.0]
    for bad, exc, msg in (([1.0, 2.0], ValueError, "C has length 2 but there are 3"),
                          ([1.0, 0.0, 1.0], ValueError, r"C\[1\] = 0.0"),
                          ([1.0, np.nan, 1.0], ValueError, "NaN or inf"),
                          (np.ones((3, 1)), ValueError, "1-D array"),
                          (np.array(1.0), TypeError, "real number"),
                          (True, TypeError, "real number"),
                          (["a", "b", "c"], TypeError, "real numeric array")):
        with pytest.raises(exc, match=msg):
            check_box(bad, 3)
    assert feasibility_tolerance(np.array([1.0, 4.0]), 4) == pytest.approx(8e-9)
    # the solvers refuse a vector of the wrong length naming C, before any solve
    with pytest.raises(ValueError, match="C has length"):
        solve_svm(K, Y, C=W[:-1], eta=1.0)
    with pytest.raises(ValueError, match="C has length"):
        solve_svr(K, T, C=W[:-1], epsilon=0.1, eta=1.0)


def _qp_distance(z, lo, hi, u):
    """Distance from ``z`` to ``{lo <= x <= hi, u'x = 0}`` by a generic QP (Clarabel)."""
    x = cp.Variable(z.size)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - z)), [x >= lo, x <= hi, u @ x == 0])
    prob.solve(solver="CLARABEL")
    return float(np.sqrt(max(prob.value, 0.0)))


def _nearest(p, z, lo, hi, u, qp_distance):
    assert np.all(p >= lo) and np.all(p <= hi) and abs(u @ p) < 1e-13 * (1 + np.abs(z).sum())
    assert np.linalg.norm(p - z) <= qp_distance * (1 + 1e-7) + 1e-9


def test_projections_with_per_sample_boxes_are_the_nearest_points():
    rng = np.random.default_rng(0)
    u2 = np.concatenate([np.ones(N), -np.ones(N)])
    W2 = np.concatenate([W, W])
    for _ in range(5):
        z = rng.normal(size=N) * 2.0
        _nearest(project_A(z, Y, W), z, 0.0, W, Y, _qp_distance(z, 0.0, W, Y))
        zz = rng.normal(size=2 * N)
        _nearest(project_svr(zz, W), zz, 0.0, W2, u2, _qp_distance(zz, 0.0, W2, u2))
        one = np.ones(N)
        _nearest(project_sum_zero(z, W), z, -W, W, one, _qp_distance(z, -W, W, one))
    # a scalar box is the vector of equal boxes
    z = rng.normal(size=N)
    assert np.array_equal(project_A(z, Y, 2.0), project_A(z, Y, np.full(N, 2.0)))


def test_weighted_best_bias_is_exact():
    rng = np.random.default_rng(1)
    for _ in range(20):
        m = int(rng.integers(1, 12))
        c, s = rng.normal(size=m), rng.choice([-1.0, 1.0], m)
        w = rng.uniform(0.1, 5.0, m)
        b, fb = rc.best_bias(c, s, w)

        def f(t, w=w, s=s, c=c):
            return float(np.sum(w * np.maximum(0.0, s * (t - c))))

        grid = np.concatenate([c, [c.min() - 1, c.max() + 1]])
        assert fb == pytest.approx(f(b), rel=1e-13, abs=1e-13)
        assert fb <= min(f(t) for t in grid) * (1 + 1e-12) + 1e-13


# ---------------------------------------------------------------------------------------------
# certificates: equal weights are the scalar case, blockwise = dense
# ---------------------------------------------------------------------------------------------
def test_certificates_of_equal_weights_are_those_of_the_scalar_box():
    rng = np.random.default_rng(2)
    C = 1.5
    a = _feasible_point(rng, C, Y)
    bb = project_sum_zero(a * Y, C)  # a feasible P2 coefficient vector
    pairs = [
        (rc.svm_certificate(K, Y, a, C=C, eta=2.0, tau=0.01),
         rc.svm_certificate(K, Y, a, C=np.full(N, C), eta=2.0, tau=0.01)),
        (rc.svr_certificate(K, T, np.maximum(bb, 0), np.maximum(-bb, 0), C=C, epsilon=0.1,
                            eta=2.0, tau=0.01),
         rc.svr_certificate(K, T, np.maximum(bb, 0), np.maximum(-bb, 0), C=np.full(N, C),
                            epsilon=0.1, eta=2.0, tau=0.01)),
        (rc.decomposed_certificate(K, Y, a, C=C, eta=2.0, labels=np.arange(N) % 3),
         rc.decomposed_certificate(K, Y, a, C=np.full(N, C), eta=2.0, labels=np.arange(N) % 3)),
    ]
    for s, v in pairs:
        assert v.lower == s.lower
        assert v.upper == pytest.approx(s.upper, rel=1e-13)
        if s.bias is not None:
            assert v.bias == pytest.approx(s.bias, abs=1e-12)


def test_certificate_hinge_and_bias_are_weighted_by_each_box():
    """The upper bound is the box-weighted primal ``sum_i C_i hinge_i`` at the exact minimiser
    of that weighted sum (not of the unweighted hinge, not with ``max C``)."""
    rng = np.random.default_rng(4)
    a = project_A(rng.uniform(0.0, 0.1, N) * W, Y, W)  # small: most margins violated
    c = rc.svm_certificate(K, Y, a, C=W, eta=2.0, tau=0.0)
    g = (c.F * K) @ (a * Y)

    def weighted(b):
        return float(W @ np.maximum(0.0, 1.0 - Y * (g + b)))

    grid = Y - g  # the breakpoints: the minimum is at one of them
    assert weighted(c.bias) <= min(weighted(b) for b in grid) * (1 + 1e-13)
    b_unweighted = rc.best_bias(Y - g, -Y)[0]
    assert weighted(c.bias) < weighted(b_unweighted)  # this point's weights move the bias
    expected = float((a * Y) @ g + weighted(c.bias) - a.sum())
    assert c.gap_raw == pytest.approx(expected, rel=1e-12)
    assert c.gap_raw < float((a * Y) @ g + W.max() * np.sum(
        np.maximum(0.0, 1.0 - Y * (g + c.bias))) - a.sum())


def test_blockwise_certificates_equal_the_dense_ones_with_per_sample_boxes():
    rng = np.random.default_rng(5)
    fk = FeatureKernel(X, "rbf", sigma=1.0, block_rows=5)
    a = _feasible_point(rng, W, Y)
    for tau in (0.0, 0.01):
        d = rc.svm_certificate(K, Y, a, C=W, eta=1.0, tau=tau)
        s = svm_certificate_features(fk, Y, a, C=W, eta=1.0, tau=tau)
        assert s.lower == pytest.approx(d.lower, rel=1e-12)
        assert s.upper == pytest.approx(d.upper, rel=1e-12)
    b = project_sum_zero(rng.normal(size=N), W)
    d = rc.svr_certificate(K, T, np.maximum(b, 0), np.maximum(-b, 0), C=W, epsilon=0.1,
                           eta=1.0, tau=0.01)
    s = svr_certificate_features(fk, T, np.maximum(b, 0), np.maximum(-b, 0), C=W, epsilon=0.1,
                                 eta=1.0, tau=0.01)
    assert (s.lower, s.upper) == pytest.approx((d.lower, d.upper), rel=1e-12)
    lab = np.arange(N) % 3
    ab = np.clip(rng.uniform(0, 2, N), 0, W)
    d = rc.decomposed_certificate(K, Y, ab, C=W, eta=1.0, labels=lab)
    s = decomposed_certificate_features(fk, Y, ab, lab, C=W, eta=1.0)
    assert (s.lower, s.upper) == pytest.approx((d.lower, d.upper), rel=1e-12)
    # a point above one of its boxes is refused before any kernel evaluation
    bad = a.copy()
    i = int(np.argmin(W))
    bad[i] = W[i] * 1.5
    with pytest.raises(ValueError, match="alpha <= C"):
        svm_certificate_features(fk, Y, bad, C=W, eta=1.0, tau=0.0)


# ---------------------------------------------------------------------------------------------
# dank_ref solves weighted P1, P2, P3
# ---------------------------------------------------------------------------------------------
def _sdp_value(prob):
    prob.solve(solver="CLARABEL")
    return float(prob.value)


def _free_bias(alpha, C, g, y):
    free = (alpha > 1e-6 * C) & (alpha < C * (1 - 1e-6))
    assert free.any()
    return y[free] - g[free]


def test_weighted_p1_certified_and_bracketing_an_independent_saddle_value():
    eta, tau = 1.0, 0.01
    res = solve_svm(K, Y, C=W, eta=eta, tau=tau)
    assert res.status == "converged" and res.rel_gap <= 1e-6
    assert np.all(res.alpha >= 0) and np.all(res.alpha <= W) and abs(Y @ res.alpha) < 1e-12
    # several distinct boxes are active: the answer is not a scalar box's
    at_top = res.alpha >= W * (1 - 1e-9)
    assert np.unique(W[at_top]).size >= 2 and np.any(res.alpha > W.min())
    vstar = _sdp_value(build_svm_problem(K, Y, C=W, eta=eta, tau=tau)[0])
    slack = 1e-6 * max(1.0, abs(vstar))
    assert res.lower - slack <= vstar <= res.upper + slack
    # the bias is y_i - g_i on every free coordinate 0 < a_i < C_i
    g = (res.F * K) @ (res.alpha * Y)
    assert np.allclose(_free_bias(res.alpha, W, g, Y), res.bias, atol=1e-6)
    # any feasible point's certified lower bound stays below the certified upper bound
    rng = np.random.default_rng(6)
    for _ in range(3):
        a = _feasible_point(rng, W, Y)
        assert rc.svm_certificate(K, Y, a, C=W, eta=eta, tau=tau).lower <= res.upper


def test_weighted_p2_certified_and_bracketing_an_independent_saddle_value():
    eta, tau, eps = 1.0, 0.01, 0.05
    C = W / 2.0
    res = solve_svr(K, T, C=C, epsilon=eps, eta=eta, tau=tau)
    assert res.status == "converged" and res.rel_gap <= 1e-6
    assert np.all(res.alpha_hat <= C) and np.all(res.alpha_check <= C)
    assert np.all(np.minimum(res.alpha_hat, res.alpha_check) >= 0)
    vstar = _sdp_value(build_svr_problem(K, T, C=C, epsilon=eps, eta=eta, tau=tau)[0])
    slack = 1e-6 * max(1.0, abs(vstar))
    assert res.lower - slack <= vstar <= res.upper + slack
    b = res.alpha_hat - res.alpha_check
    g = (res.F * K) @ b
    for part, shift in ((res.alpha_hat, -eps), (res.alpha_check, eps)):
        free = (part > 1e-6 * C) & (part < C * (1 - 1e-6))
        assert np.allclose(T[free] + shift - g[free], res.bias, atol=1e-6)


def test_weighted_p3_certified_by_cluster_and_jointly():
    labels = (X[:, 1] > 0).astype(int)
    r1 = solve_decomposed(K, Y, labels, C=W, eta=1.0, method="joint")
    r2 = solve_decomposed(K, Y, labels, C=W, eta=1.0, method="blocks")
    assert r1.status == r2.status == "converged"
    assert np.all(r1.alpha <= W) and np.all(r2.alpha <= W)
    assert abs(r1.lower - r2.lower) <= 1e-6 * abs(r1.lower)


@pytest.mark.parametrize("task", ["svm", "svr", "decomposed"])
def test_all_weights_one_is_the_unweighted_problem(task):
    ones = np.ones(N)
    if task == "svm":
        s, v = (solve_svm(K, Y, C=C, eta=1.0, tau=0.01) for C in (1.0, ones))
    elif task == "svr":
        s, v = (solve_svr(K, T, C=C, epsilon=0.05, eta=1.0, tau=0.01) for C in (1.0, ones))
    else:
        s, v = (solve_decomposed(K, Y, np.arange(N) % 2, C=C, eta=1.0) for C in (1.0, ones))
    assert s.status == v.status == "converged"
    assert v.lower == pytest.approx(s.lower, rel=1e-6)
    assert np.max(np.abs(v.alpha - s.alpha)) <= 1e-5


def test_a_vector_of_equal_boxes_and_the_rescaling_law():
    """``C = s 1`` is the scalar ``s``; and ``v*(K, s w, eta) = s v*(s K, w, eta / s)`` with a
    weight vector ``w`` (the law of docs/validity.md with per-sample boxes)."""
    s = 4.0
    vec = solve_svm(K, Y, C=np.full(N, s), eta=2.0, tau=0.01)
    sca = solve_svm(K, Y, C=s, eta=2.0, tau=0.01)
    assert vec.lower == pytest.approx(sca.lower, rel=1e-6)
    assert np.max(np.abs(vec.alpha - sca.alpha)) <= 1e-5 * s
    big = solve_svm(K, Y, C=s * W, eta=2.0, tau=0.01)
    small = solve_svm(s * K, Y, C=W, eta=2.0 / s, tau=0.01)
    assert big.lower == pytest.approx(s * small.lower, rel=1e-6)
    assert np.max(np.abs(big.alpha - s * small.alpha)) <= 1e-5 * s


# ---------------------------------------------------------------------------------------------
# the oracle: files and arrays, dense and blockwise, one broken box
# ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def weighted_svm():
    res = solve_svm(K, Y, C=W, eta=1.0, tau=0.01)
    return res.alpha, res.bias


def _break_one_box(alpha):
    """Move one point of the smallest box just above it and keep y'a = 0."""
    a = alpha.copy()
    i = int(np.flatnonzero(W == W.min())[0])
    j = next(k for k in range(N) if Y[k] == Y[i] and k != i and a[k] > 0.2 * W.min())
    delta = W[i] - a[i] + 0.1 * W.min()
    a[i] += delta
    a[j] -= delta
    assert a[i] > W[i] and np.all(a >= 0) and abs(Y @ a) < 1e-12
    assert np.all(a <= W.max())  # feasible for the scalar box max C: only C_i is broken
    return a


def test_oracle_certifies_weighted_arrays_dense_and_blockwise(weighted_svm):
    alpha, bias = weighted_svm
    dense = certify_arrays(K, Y, C=W, eta=1.0, tau=0.01, alpha=alpha, bias=bias)
    block = certify_arrays(X=X, kernel="gaussian", sigma=1.0, y=Y, C=W, eta=1.0, tau=0.01,
                           alpha=alpha, bias=bias, max_dense_bytes=0)
    for rep in (dense, block):
        assert rep["certified"], rep["reasons"]
        assert rep["checks"]["alpha_high"]["status"] == "pass"
    assert block["route"] in ("dense", "krylov")
    res = solve_svr(K, T, C=W, epsilon=0.05, eta=1.0, tau=0.01)
    for kw in (dict(K=K), dict(X=X, kernel="gaussian", sigma=1.0, max_dense_bytes=0)):
        rep = certify_arrays(y=T, C=W, eta=1.0, tau=0.01, epsilon=0.05, task="svr",
                             alpha_hat=res.alpha_hat, alpha_check=res.alpha_check,
                             bias=res.bias, **kw)
        assert rep["certified"], rep["reasons"]


def test_oracle_rejects_a_weighted_solution_that_breaks_one_box(weighted_svm):
    a = _break_one_box(weighted_svm[0])
    for kw in (dict(K=K), dict(X=X, kernel="gaussian", sigma=1.0, max_dense_bytes=0)):
        rep = certify_arrays(y=Y, C=W, eta=1.0, tau=0.01, alpha=a, **kw)
        assert not rep["certified"] and rep["failed"][0] == "alpha_high"
        assert rep["checks"]["alpha_high"]["value"] == pytest.approx(0.1 * W.min())
        assert rep["checks"]["alpha_high"]["limit"] == pytest.approx(1e-9 * W.max() * N**0.5)
    # the same point under the scalar box max(C) breaks no box
    rep = certify_arrays(K, Y, C=float(W.max()), eta=1.0, tau=0.01, alpha=a)
    assert rep["checks"]["alpha_high"]["status"] == "pass"
    # P2: one alpha_check above its box
    res = solve_svr(K, T, C=W, epsilon=0.05, eta=1.0, tau=0.01)
    ah, ac = res.alpha_hat.copy(), res.alpha_check.copy()
    i = int(np.argmax(ac / W))
    ac[i] = W[i] * 1.01
    ah[int(np.argmax(ah))] += W[i] * 1.01 - res.alpha_check[i]
    rep = certify_arrays(K, T, C=W, eta=1.0, tau=0.01, epsilon=0.05, task="svr", alpha_hat=ah,
                         alpha_check=ac)
    assert not rep["certified"] and "alpha_check_high" in rep["failed"]


@pytest.mark.parametrize("ext", ["npz", "json"])
def test_oracle_certifies_weighted_files_and_rejects_a_broken_box(tmp_path, ext,
                                                                  weighted_svm):
    from verification.cli import main

    alpha, bias = weighted_svm
    ip, sp, bp = (str(tmp_path / f"{k}.{ext}") for k in ("inst", "sol", "bad"))
    save_instance(ip, task="svm", K=K, y=Y, C=W, eta=1.0, tau=0.01)
    save_solution(sp, task="svm", alpha=alpha, bias=bias)
    save_solution(bp, task="svm", alpha=_break_one_box(alpha))
    inst = load_instance(ip)
    assert isinstance(inst["C"], np.ndarray) and np.array_equal(inst["C"], W)
    rep = certify(inst, load_solution(sp, inst["n"]))
    assert rep["certified"], rep["reasons"]
    assert main(["certify", ip, sp, "--quiet"]) == 0
    assert main(["certify", ip, bp, "--quiet"]) == 1
    if ext == "json":
        doc = json.loads(open(ip).read())
        assert doc["version"] == 2 and doc["C"] == W.tolist()
        validate(doc, "instance")


def test_blockwise_instance_file_with_per_sample_boxes(tmp_path, weighted_svm):
    alpha, bias = weighted_svm
    ip, sp = str(tmp_path / "i.npz"), str(tmp_path / "s.npz")
    save_instance(ip, task="svm", X=X, kernel="gaussian", sigma=1.0, y=Y, C=W, eta=1.0,
                  tau=0.01)
    save_solution(sp, task="svm", alpha=alpha, bias=bias)
    inst = load_instance(ip, max_array_bytes=8 * N * N - 1)  # K too large: blockwise
    assert inst["K"] is None
    rep = certify(inst, load_solution(sp, N))
    assert rep["certified"] and rep["route"] in ("dense", "krylov")
    rep = certify(inst, dict(task="svm", alpha=_break_one_box(alpha)))
    assert not rep["certified"] and rep["failed"] == ["alpha_high"]


# ---------------------------------------------------------------------------------------------
# format version 2 beside version 1
# ---------------------------------------------------------------------------------------------
def test_version_one_files_read_as_before(tmp_path):
    base = {"format": "dank-instance", "task": "svm", "K": [[1.0, 0.2], [0.2, 1.0]],
            "y": [1.0, -1.0], "eta": 1.0, "tau": 0.0}
    p1, p2 = tmp_path / "v1.json", tmp_path / "v2.json"
    p1.write_text(json.dumps(dict(base, version=1, C=1.5)))
    p2.write_text(json.dumps(dict(base, version=2, C=1.5)))
    a, b = load_instance(p1), load_instance(p2)
    assert a["C"] == b["C"] == 1.5 and isinstance(a["C"], float)
    p1.write_text(json.dumps(dict(base, version=1, C=[1.0, 2.0])))
    with pytest.raises(FormatError, match="field 'C' must be a number, got a list .*version 2"):
        load_instance(p1)
    with pytest.raises(SchemaError, match=r"\$\.C"):
        validate(dict(base, version=1, C=[1.0, 2.0]), "instance")
    p2.write_text(json.dumps(dict(base, version=2, C=[1.0, 2.0, 3.0])))
    with pytest.raises(FormatError, match="field 'C' has 3 entries"):
        load_instance(p2)
    p2.write_text(json.dumps(dict(base, version=2, C=[1.0, -2.0])))
    with pytest.raises(FormatError, match=r"field 'C'\[1\] must be > 0"):
        load_instance(p2)
    # the writer keeps version 1 for a scalar box (the bytes of a version 1 file)
    save_instance(tmp_path / "w.json", task="svm", K=base["K"], y=base["y"], C=1.5, eta=1.0,
                  tau=0.0)
    assert json.loads((tmp_path / "w.json").read_text())["version"] == 1


def test_stored_golden_files_keep_version_one_unless_weighted():
    man = load_manifest()
    assert man["format_version"] == 2
    weighted = 0
    for e in man["vectors"].values():
        path = os.path.join(GOLDEN_DIR, e["instance"])
        if path.endswith(".json"):
            version = json.loads(open(path).read())["version"]
        else:
            with np.load(path) as z:
                version = int(z["version"])
        inst = load_instance(path)
        vector = isinstance(inst["C"], np.ndarray)
        assert version == (2 if vector else 1)
        assert isinstance(e["params"]["C"], list) == vector
        weighted += vector
    assert weighted >= 3


def test_boxes_six_decades_apart_converge():
    """The polish snaps each coordinate to its own box (a threshold relative to the smallest
    box left the large ones unsnapped: status "inaccurate" after 19 s on this instance)."""
    rng = np.random.default_rng(7)
    for _ in range(6):  # the sixth draw of this stream: n = 29, eta = 4.7e3, C in [1e-4, 1e2]
        n = int(rng.integers(2, 30))
        Xh = rng.normal(size=(n, 2))
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        y[0], y[1] = 1.0, -1.0
        C = 10.0 ** rng.uniform(-4, 2, n)
        eta = 10.0 ** rng.uniform(-3, 4)
        rng.normal(size=n)
    assert n == 29 and C.max() / C.min() > 1e5
    Kh = np.exp(-((Xh[:, None] - Xh[None]) ** 2).sum(-1) / 2.0)
    res = solve_svm(Kh, y, C=C, eta=eta, tau=1.0, time_limit=60.0)
    assert res.status == "converged" and np.all(res.alpha <= C)
