"""Per-sample boxes in dank_fast: solvers, certificates, estimators.

dank_fast's solvers take a vector ``C`` (docs/MATH.md section 14): a weighted instance solved by
dank_fast is certified by the oracle and by dank_ref's certificate; all weights one is the
scalar problem; every weight times ``s`` is ``C s``. The estimators take ``sample_weight`` and
``class_weight`` as SVC does, give probabilities, SVC's attribute layout, and pickle.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_wine, make_classification, make_moons
from sklearn.metrics import recall_score
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC, SVR

import dank_fast
from dank_fast import (
    DANKClassifier,
    DANKRegressor,
    FeatureKernel,
    solve_decomposed,
    solve_svm,
    solve_svr,
)
from dank_fast.certificate import best_bias, svm_certificate, svr_certificate
from dank_fast.projection import project_A, project_sum_box
from dank_ref import certificate as rc
from verification import certify_arrays

N = 40


def _data(n=N, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    K = rbf_kernel(X, gamma=0.5)
    y = np.where(X[:, 0] + 0.4 * rng.normal(size=n) > 0, 1.0, -1.0)
    t = np.sin(2.0 * X[:, 0]) + 0.1 * rng.normal(size=n)
    w = 2.0 ** rng.integers(-2, 3, n)
    return X, K, y, t, w


X, K, Y, T, W = _data()


# ------------------------------------------------------------------------------- building blocks
def test_projection_with_per_sample_boxes_is_the_nearest_point():
    rng = np.random.default_rng(0)
    for _ in range(20):
        z = rng.normal(scale=3.0, size=N)
        p = project_A(z, Y, W)
        assert abs(Y @ p) <= 1e-12 * W.max() * N and np.all(p >= 0) and np.all(p <= W)
        # the KKT conditions of the projection: p = clip(z - lam y, 0, C) for one lam
        free = (p > 0) & (p < W)
        lam = np.mean((z - p)[free] * Y[free])
        np.testing.assert_allclose(p, np.clip(z - lam * Y, 0.0, W), atol=1e-12)
    ah, ac = project_sum_box(rng.normal(size=2 * N), W)
    assert np.all(ah <= W) and np.all(ac <= W) and abs(ah.sum() - ac.sum()) <= 1e-12


def test_a_vector_C_is_validated_naming_it():
    for bad, exc, msg in ((W[:3], ValueError, "C has length 3 but there are 40"),
                          (np.where(np.arange(N) == 5, 0.0, W), ValueError, r"C\[5\] = 0.0"),
                          (np.where(np.arange(N) == 2, np.nan, W), ValueError, "NaN or inf"),
                          (np.ones((N, 1)), ValueError, "1-D array"),
                          (["a"] * N, TypeError, "real numeric array")):
        for call in (lambda b=bad: solve_svm(K, Y, C=b, eta=1.0),
                     lambda b=bad: solve_svr(K, T, C=b, epsilon=0.1, eta=1.0),
                     lambda b=bad: solve_decomposed(K, Y, C=b, eta=1.0),
                     lambda b=bad: svm_certificate(K, Y, np.zeros(N), C=b, eta=1.0, tau=0.0)):
            with pytest.raises(exc, match=msg):
                call()


def test_weighted_best_bias_is_the_exact_minimiser():
    rng = np.random.default_rng(1)
    f0, w = rng.normal(size=30), rng.uniform(0.1, 3.0, 30)
    y = np.where(rng.random(30) < 0.5, -1.0, 1.0)
    b, (lo, hi), value = best_bias(f0, y, weights=w)
    grid = np.linspace(-4, 4, 20001)
    vals = [float(w @ np.maximum(0.0, 1.0 - y * (f0 + t))) for t in grid]
    assert value == pytest.approx(w @ np.maximum(0.0, 1.0 - y * (f0 + b)), rel=1e-12)
    assert value <= min(vals) + 1e-12 and lo <= b <= hi
    # unit weights: the unweighted numbers exactly
    assert best_bias(f0, y, weights=np.ones(30)) == best_bias(f0, y)


# ------------------------------------------------------------------------------- the solvers
@pytest.mark.parametrize("method", ["auto", "accelerated"])
def test_weighted_p1_is_certified_by_the_oracle_and_dank_ref(method):
    res = solve_svm(K, Y, C=W, eta=2.0, tau=0.01, method=method)
    assert res.status == "converged" and np.all(res.alpha <= W) and np.all(res.alpha >= 0)
    assert np.any(res.alpha == W) and np.unique(W[res.alpha == W]).size >= 2  # boxes bind
    ref = rc.svm_certificate(K, Y, res.alpha, C=W, eta=2.0, tau=0.01)
    assert ref.rel_gap <= 1e-6 and ref.lower <= res.upper and res.lower <= ref.upper
    rep = certify_arrays(K, Y, C=W, eta=2.0, tau=0.01, alpha=res.alpha, bias=res.bias)
    assert rep["certified"], rep["reasons"]
    # a point above one of its boxes (feasible for the scalar box max C) is not
    bad = res.alpha.copy()
    i = int(np.argmin(W))
    j = int(np.flatnonzero((Y != Y[i]) & (W >= W[i]))[0])
    bad[i] = bad[j] = W[i] * 1.5 if W[j] >= 1.5 * W[i] else W[i] * 1.01
    with pytest.raises(ValueError, match="not feasible"):
        svm_certificate(K, Y, bad, C=W, eta=2.0, tau=0.01)


def test_weighted_p2_and_p3_are_certified_by_the_oracle_and_dank_ref():
    r = solve_svr(K, T, C=W / 2, epsilon=0.05, eta=5.0, tau=0.01)
    assert r.status == "converged"
    assert np.all(r.alpha_hat <= W / 2) and np.all(r.alpha_check <= W / 2)
    ref = rc.svr_certificate(K, T, r.alpha_hat, r.alpha_check, C=W / 2, epsilon=0.05, eta=5.0,
                             tau=0.01)
    assert ref.rel_gap <= 1e-6
    rep = certify_arrays(K, T, C=W / 2, eta=5.0, tau=0.01, epsilon=0.05, task="svr",
                         alpha_hat=r.alpha_hat, alpha_check=r.alpha_check, bias=r.bias)
    assert rep["certified"], rep["reasons"]
    labels = (X[:, 1] > 0).astype(int)
    d = solve_decomposed(K, Y, C=W, eta=5.0, labels=labels)
    assert d.status == "converged" and np.all(d.alpha <= W)
    rep = certify_arrays(K, Y, C=W, eta=5.0, alpha=d.alpha, task="decomposed", labels=labels)
    assert rep["certified"], rep["reasons"]
    ref = rc.decomposed_certificate(K, Y, d.alpha, C=W, eta=5.0, labels=labels)
    assert ref.rel_gap <= 1e-6


def test_working_sets_take_per_sample_boxes():
    res = solve_svm(FeatureKernel(X, gamma=0.5), Y, C=W, eta=2.0, tau=0.01)
    dense = solve_svm(K, Y, C=W, eta=2.0, tau=0.01)
    assert res.status == "converged" and np.all(res.alpha <= W)
    assert abs(res.lower - dense.lower) <= 1e-5 * abs(dense.lower)
    assert rc.svm_certificate(K, Y, res.alpha, C=W, eta=2.0, tau=0.01).rel_gap <= 1e-5


def test_unit_weights_are_the_scalar_problem():
    for one in (np.ones(N), 1.0):
        r = solve_svm(K, Y, C=one, eta=2.0, tau=0.01)
        s = solve_svr(K, T, C=one, epsilon=0.05, eta=5.0)
        if np.ndim(one) == 0:
            base_r, base_s = r, s
    r1 = solve_svm(K, Y, C=np.ones(N), eta=2.0, tau=0.01)
    np.testing.assert_allclose(r1.alpha, base_r.alpha, atol=1e-6)
    assert r1.lower == pytest.approx(base_r.lower, rel=1e-6)
    s1 = solve_svr(K, T, C=np.ones(N), epsilon=0.05, eta=5.0)
    np.testing.assert_allclose(s1.alpha, base_s.alpha, atol=1e-6)
    c1 = svm_certificate(K, Y, base_r.alpha, C=np.ones(N), eta=2.0, tau=0.01)
    c0 = svm_certificate(K, Y, base_r.alpha, C=1.0, eta=2.0, tau=0.01)
    assert (c1.lower, c1.upper) == pytest.approx((c0.lower, c0.upper), rel=1e-13)
    d1 = svr_certificate(K, T, s1.alpha_hat, s1.alpha_check, C=np.ones(N), epsilon=0.05,
                         eta=5.0, tau=0.01)
    assert d1.rel_gap <= 1e-6


def test_scaling_every_weight_by_s_is_C_times_s():
    s = 4.0
    a = solve_svm(K, Y, C=s * W, eta=2.0, tau=0.01)
    b = solve_svm(K, Y, C=W * s, eta=2.0, tau=0.01)  # the same vector, as C s with C = W
    np.testing.assert_array_equal(a.alpha, b.alpha)
    # with all weights equal, s w is the scalar C = s
    c = solve_svm(K, Y, C=np.full(N, s), eta=2.0, tau=0.01)
    d = solve_svm(K, Y, C=s, eta=2.0, tau=0.01)
    np.testing.assert_allclose(c.alpha, d.alpha, atol=1e-6 * s)
    assert c.lower == pytest.approx(d.lower, rel=1e-6)


def test_plain_svm_start_uses_libsvms_sample_weights():
    from dank_fast._libsvm import svc_dual

    a = svc_dual(K, Y, W)
    svc = SVC(kernel="precomputed", C=W.max(), tol=1e-4).fit(K, Y, sample_weight=W / W.max())
    b = np.zeros(N)
    b[svc.support_] = np.abs(svc.dual_coef_.ravel())
    np.testing.assert_allclose(a, b, atol=1e-12)
    assert np.all(a <= W) and np.any(a == W)


# ------------------------------------------------------------------------------- the estimators
def _imbalanced():
    X, y = make_classification(n_samples=200, n_features=4, n_informative=3, n_redundant=0,
                               weights=[0.9, 0.1], flip_y=0.0, class_sep=0.6, random_state=2)
    return X, y


def test_balanced_class_weight_raises_minority_recall_as_for_svc():
    X, y = _imbalanced()
    assert np.bincount(y)[1] * 9 == pytest.approx(np.bincount(y)[0], rel=0.05)
    gamma = 0.25
    rec = {}
    for cw in (None, "balanced"):
        dank = DANKClassifier(gamma=gamma, C=1.0, tol=1e-4, class_weight=cw).fit(X, y)
        svc = SVC(gamma=gamma, C=1.0, class_weight=cw).fit(X, y)
        rec[cw] = (recall_score(y, dank.predict(X)), recall_score(y, svc.predict(X)))
        expected = np.ones(2) if cw is None else 200 / (2 * np.bincount(y))
        np.testing.assert_allclose(dank.class_weight_, expected)
        np.testing.assert_allclose(dank.class_weight_, svc.class_weight_)
    assert rec["balanced"][1] > rec[None][1]  # SVC: the minority's recall rises
    assert rec["balanced"][0] > rec[None][0]  # and DANK's, on the same kernel


def test_sample_weights_are_per_sample_boxes():
    Xm, ym = make_moons(60, noise=0.25, random_state=0)
    w = np.random.default_rng(0).uniform(0.2, 3.0, 60)
    clf = DANKClassifier(gamma=2.0, C=2.0, tol=1e-6).fit(Xm, ym, sample_weight=w)
    np.testing.assert_allclose(clf.sample_box_, 2.0 * w)
    res = clf.results_[0]
    assert np.all(res.alpha <= 2.0 * w * (1 + 1e-12))
    Kt = rbf_kernel(Xm, gamma=2.0)
    yb = np.where(ym == 1, 1.0, -1.0)
    rep = certify_arrays(Kt, yb, C=2.0 * w, eta=float(clf.eta_[0]), tau=0.01, alpha=res.alpha)
    assert rep["certified"], rep["reasons"]
    # weight 0 leaves a sample out (libsvm); all zero is refused
    w0 = w.copy()
    w0[:5] = 0.0
    clf0 = DANKClassifier(gamma=2.0, tol=1e-4).fit(Xm, ym, sample_weight=w0)
    assert not np.isin(np.arange(5), clf0.problem_indices_[0]).any()
    with pytest.raises(ValueError, match="weight.*zero"):
        DANKClassifier(gamma=2.0).fit(Xm, ym, sample_weight=np.zeros(60))
    # unit weights: the unweighted fit
    a = DANKClassifier(gamma=2.0, tol=1e-6).fit(Xm, ym)
    b = DANKClassifier(gamma=2.0, tol=1e-6).fit(Xm, ym, sample_weight=np.ones(60))
    np.testing.assert_array_equal(a.decision_function(Xm), b.decision_function(Xm))


def test_predict_proba_sums_to_one_and_ranks_as_the_decision_function():
    Xs, ys = make_classification(n_samples=80, n_features=2, n_informative=2, n_redundant=0,
                                 class_sep=3.0, random_state=0)
    clf = DANKClassifier(gamma=0.5, tol=1e-4, probability=True, random_state=0).fit(Xs, ys)
    p = clf.predict_proba(Xs)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)
    dec = clf.decision_function(Xs)
    order = np.argsort(dec, kind="stable")
    assert np.all(np.diff(p[order, 1]) >= -1e-12)  # monotone in the decision value
    np.testing.assert_allclose(np.exp(clf.predict_log_proba(Xs)), p)
    assert clf.probA_.shape == clf.probB_.shape == (1,) and clf.probA_[0] < 0
    assert not hasattr(DANKClassifier(), "predict_proba")  # as SVC(probability=False)
    Xw, yw = load_wine(return_X_y=True)
    Xw = (Xw - Xw.mean(0)) / Xw.std(0)
    for mc in ("ovo", "ovr"):
        m = DANKClassifier(gamma=0.05, tol=1e-4, probability=True, multi_class=mc,
                           random_state=0).fit(Xw, yw)
        pw = m.predict_proba(Xw)
        assert pw.shape == (178, 3)
        np.testing.assert_allclose(pw.sum(axis=1), 1.0, atol=1e-9)
        assert np.mean(pw.argmax(axis=1) == yw) > 0.9


def test_pairwise_coupling_recovers_consistent_pairwise_probabilities():
    from dank_fast._probability import pairwise_coupling

    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(4), size=50)
    r = np.column_stack([p[:, j] / (p[:, i] + p[:, j]) for i in range(4)
                         for j in range(i + 1, 4)])  # P(j | i or j), pairs in SVC's order
    q = pairwise_coupling(r, 4)
    np.testing.assert_allclose(q, p, atol=2e-3)
    # each row on its own: a row's result does not depend on the batch
    np.testing.assert_array_equal(pairwise_coupling(r[:1], 4), q[:1])


def test_a_pickled_fitted_estimator_predicts_the_same():
    Xw, yw = load_wine(return_X_y=True)
    Xw = (Xw - Xw.mean(0)) / Xw.std(0)
    clf = DANKClassifier(gamma=0.05, tol=1e-4, probability=True, class_weight="balanced",
                         random_state=0).fit(Xw, yw)
    back = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(back.predict(Xw), clf.predict(Xw))
    np.testing.assert_array_equal(back.predict_proba(Xw), clf.predict_proba(Xw))
    reg = DANKRegressor(gamma=2.0, epsilon=0.05).fit(X, T, sample_weight=W)
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(reg)).predict(X), reg.predict(X))


@pytest.mark.parametrize("shape", ["ovr", "ovo"])
def test_an_svc_users_script_runs_unchanged(shape):
    Xw, yw = load_wine(return_X_y=True)
    Xw = (Xw - Xw.mean(0)) / Xw.std(0)
    sw = np.where(yw == 2, 2.0, 1.0)
    out = {}
    for Est in (SVC, DANKClassifier):
        clf = Est(C=1.0, kernel="rbf", gamma=0.05, class_weight={0: 1.0, 1: 1.5},
                  probability=True, decision_function_shape=shape, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)  # SVC's probability (sklearn 1.9)
            clf.fit(Xw, yw, sample_weight=sw)
        out[Est] = (clf.predict(Xw), clf.predict_proba(Xw).shape, clf.decision_function(Xw).shape,
                    clf.n_support_.shape, clf.n_support_.dtype, clf.dual_coef_.shape[0],
                    clf.support_.ndim, clf.intercept_.shape, clf.classes_, clf.fit_status_,
                    clf.support_vectors_.shape[1])
        assert clf.dual_coef_.shape[1] == clf.support_.size == clf.n_support_.sum()
        assert np.all(np.diff(yw[clf.support_]) >= 0)  # grouped by class, as libsvm
    s, d = out[SVC], out[DANKClassifier]
    assert d[1:] [:-3] == s[1:][:-3] and d[-1] == s[-1] and d[-2] == s[-2]
    np.testing.assert_array_equal(d[-3], s[-3])
    assert np.mean(d[0] == s[0]) > 0.95
    if shape == "ovo":  # SVC's sign: positive for the first class of each pair
        svc = SVC(gamma=0.05, decision_function_shape="ovo").fit(Xw, yw)
        dank = DANKClassifier(gamma=0.05, tol=1e-4, decision_function_shape="ovo").fit(Xw, yw)
        agree = np.sign(svc.decision_function(Xw)) == np.sign(dank.decision_function(Xw))
        assert agree.mean() > 0.95
        with pytest.raises(ValueError, match="break_ties"):
            dank.set_params(break_ties=True).predict(Xw)


def test_an_svr_users_script_runs_unchanged():
    out = {}
    for Est in (SVR, DANKRegressor):
        reg = Est(C=2.0, epsilon=0.05, kernel="rbf", gamma=0.5).fit(X, T, sample_weight=W)
        out[Est] = (reg.predict(X).shape, reg.dual_coef_.shape[0], reg.support_.ndim,
                    reg.intercept_.shape, reg.n_support_.dtype, reg.fit_status_)
        assert reg.dual_coef_.shape[1] == reg.support_.size
        assert reg.score(X, T) > 0.8
    assert out[SVR] == out[DANKRegressor]
    dank = DANKRegressor(C=2.0, epsilon=0.05, gamma=0.5, tol=1e-6).fit(X, T, sample_weight=W)
    r = dank.results_[0]
    assert np.all(r.alpha_hat <= 2.0 * W) and np.all(r.alpha_check <= 2.0 * W)
    rep = certify_arrays(K, T, C=2.0 * W, eta=float(dank.eta_[0]), tau=0.01, epsilon=0.05,
                         task="svr", alpha_hat=r.alpha_hat, alpha_check=r.alpha_check)
    assert rep["certified"], rep["reasons"]


def test_one_way_to_give_the_width_and_no_silent_method_change():
    Xm, ym = make_moons(40, noise=0.2, random_state=0)
    with pytest.warns(DeprecationWarning, match="sigma is deprecated"):
        a = DANKClassifier(sigma=0.5, tol=1e-6).fit(Xm, ym)
    b = DANKClassifier(gamma=2.0, tol=1e-6).fit(Xm, ym)
    np.testing.assert_allclose(a.decision_function(Xm), b.decision_function(Xm), atol=1e-9)
    for Est in (DANKClassifier, DANKRegressor):
        with pytest.raises(ValueError, match="sigma=0.5 and gamma=2.0"):
            Est(sigma=0.5, gamma=2.0).fit(Xm, ym)
    with pytest.raises(ValueError, match="method='paper'.*decomposition"):
        DANKClassifier(gamma=2.0, method="paper", decomposition=2).fit(Xm, ym)
    with pytest.raises(ValueError, match="one class only"):
        DANKClassifier(gamma=2.0).fit(Xm, ym, sample_weight=(ym == 1).astype(float))


def test_decomposition_and_working_sets_take_weights():
    Xm, ym = make_moons(80, noise=0.2, random_state=1)
    w = np.random.default_rng(2).uniform(0.5, 2.0, 80)
    for kw in (dict(decomposition=2, random_state=0), dict(route="working-set")):
        clf = DANKClassifier(gamma=2.0, tol=1e-5, **kw).fit(Xm, ym, sample_weight=w)
        assert clf.fit_status_ == 0 and clf.score(Xm, ym) > 0.9
        assert np.all(clf.results_[0].alpha <= w * (1 + 1e-12))
    assert dank_fast.DANKClassifier().get_params()["decision_function_shape"] == "ovr"


def test_working_sets_refuse_a_method_they_would_replace():
    Xm, ym = make_moons(40, noise=0.2, random_state=0)
    with pytest.raises(ValueError, match="working sets with Newton.*'accelerated'"):
        DANKClassifier(gamma=2.0, route="working-set", method="accelerated").fit(Xm, ym)
    clf = DANKClassifier(gamma=2.0, route="working-set", method="newton", tol=1e-5).fit(Xm, ym)
    assert clf.results_[0].status == "converged"
