"""The scikit-learn estimator :class:`dank_fast.DANKRegressor`: scikit-learn's checks, model
selection, the ``eta="svr"`` rule, the decomposition, precomputed kernels and what it refuses
(with a fuzz test over malformed and extreme input).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _fuzz_estimator_rule import (
    _either,
    _estimator_degree,
    _object_ok,
    _params,
    _precomputed_verdict,
    _strict_kernel_dtype,
    est_call,
    params_verdict,
    reg_targets,
    targets_verdict,
)
from _fuzz_inputs import bad_kernels, bad_params, features, kernel_specs, psd_kernels
from _fuzz_rule import EITHER, Verdict, features_rule, kernel_spec_rule
from _fuzz_run import assert_bracket, assert_feasible, assert_overlap, fuzz, ref_bracket
from hypothesis import given
from hypothesis import strategies as st
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler
from sklearn.svm import SVR
from sklearn.utils.estimator_checks import parametrize_with_checks
from threadpoolctl import threadpool_limits

from dank_fast import ConvergenceWarning, DANKRegressor, compute_kernel, solve_svr
from dank_fast.regressor import relative_error, svr_iteration_limit


@pytest.fixture(autouse=True, scope="module")
def _single_blas_thread():
    # tiny problems: multi-threaded BLAS only adds overhead on a loaded 2-core machine
    with threadpool_limits(limits=1):
        yield


def _expected_failed_checks(estimator):
    # as for sklearn.svm.SVR (scikit-learn's own expected failure of SVR): a weight is a box,
    # not a repetition; for DANK it cannot be, since F (n x n) has one row per point
    return {"check_sample_weight_equivalence_on_dense_data": (
        "sample_weight is a per-sample box, not equivalent to removing/repeating samples")}


@parametrize_with_checks(
    [
        DANKRegressor(tol=1e-4),
        DANKRegressor(tol=1e-4, extension="nearest", tau=0.0, eta=10.0),
        DANKRegressor(tol=1e-4, decomposition=2, random_state=0),
    ],
    expected_failed_checks=_expected_failed_checks,
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def _data(n=80, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, 2))
    y = np.sin(3 * X[:, 0]) + X[:, 1] ** 2 + 0.05 * rng.normal(size=n)
    return X, y


def test_pipeline_and_grid_search():
    X, y = _data()
    Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
    pipe = Pipeline([("scale", MinMaxScaler()), ("dank", DANKRegressor(sigma=0.3, C=4.0,
                                                                        epsilon=0.02, tol=1e-4))])
    assert pipe.fit(Xtr, ytr).score(Xte, yte) > 0.8
    grid = GridSearchCV(pipe, {"dank__C": [1.0, 4.0]}, cv=3, error_score="raise")
    grid.fit(Xtr, ytr)
    assert grid.score(Xte, yte) > 0.8


def test_eta_svr_rule_and_training_fit():
    X, y = _data(n=50)
    reg = DANKRegressor(sigma=0.5, C=2.0, epsilon=0.05, extension="nearest").fit(X, y)
    K = compute_kernel(X, sigma=0.5)
    svr = SVR(kernel="precomputed", C=2.0, epsilon=0.05, tol=1e-4).fit(K, y)
    assert reg.eta_[0] == pytest.approx(np.sum(svr.dual_coef_**2))
    # on the training points the extension matches each point to itself
    res = reg.results_[0]
    assert np.allclose(reg.predict(X), res.apply_FK(res.alpha) + res.bias)
    assert relative_error(y, reg.predict(X)) < 0.05


def test_decomposition_and_precomputed():
    X, y = _data(n=60)
    reg = DANKRegressor(sigma=0.5, decomposition=3, random_state=0, tol=1e-4).fit(X, y)
    assert len(reg.results_) == 3 and reg.cluster_centers_.shape == (3, 2)
    assert sorted(np.concatenate(reg.model_indices_).tolist()) == list(range(60))
    assert reg.score(X, y) > 0.8
    K = compute_kernel(X, sigma=0.5)
    a = DANKRegressor(kernel="precomputed", extension="nearest", tol=1e-6).fit(K, y)
    b = DANKRegressor(sigma=0.5, extension="nearest", tol=1e-6).fit(X, y)
    assert np.allclose(a.predict(K), b.predict(X), atol=1e-8)
    with pytest.raises(ValueError, match="decomposition"):
        DANKRegressor(kernel="precomputed", decomposition=2).fit(K, y)


def test_bad_input():
    X, y = _data(n=20)
    y_nan = y.copy()
    y_nan[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DANKRegressor().fit(X, y_nan)
    with pytest.raises(ValueError, match="constant"):
        DANKRegressor().fit(X, np.full(20, 3.0))
    with pytest.raises(ValueError, match="epsilon"):
        DANKRegressor(epsilon=-0.1).fit(X, y)
    with pytest.raises(ValueError, match="C"):
        DANKRegressor(C=0.0).fit(X, y)
    with pytest.raises(ValueError):
        relative_error(np.ones(3), np.zeros(3))


def _eps_loss(y, b, eps):
    return float(np.maximum(0.0, np.abs(y - b) - eps).sum())


@pytest.mark.parametrize("extension", ["paper", "nearest"])
@pytest.mark.parametrize("decomposition", [None, 2])
def test_zero_F_fits_and_predicts_the_bias(extension, decomposition):
    """tau >= ~2n makes F = 0: fit does not crash ("cannot reshape array of size 0")."""
    X, y = _data(n=40, seed=3)
    reg = DANKRegressor(sigma=0.5, epsilon=0.05, tau=100.0, extension=extension,
                        decomposition=decomposition, random_state=0).fit(X, y)
    X_new = np.random.default_rng(4).uniform(-1, 1, (15, 2))
    for p, (res, idx) in enumerate(zip(reg.results_, reg.model_indices_, strict=True)):
        assert res.inner.F.rank == 0 and not np.any(res.F)  # F = J_{50}(11' + Gamma) = 0
        assert res.success
        # with F = 0 the model is the constant b, the best constant for the eps-loss
        b = reg.intercept_[p]
        grid = np.linspace(y[idx].min(), y[idx].max(), 2001)
        assert _eps_loss(y[idx], b, 0.05) <= min(_eps_loss(y[idx], g, 0.05) for g in grid) + 1e-9
    pred_train, pred_new = reg.predict(X), reg.predict(X_new)
    if decomposition is None:
        np.testing.assert_array_equal(pred_train, reg.intercept_[0])
        np.testing.assert_array_equal(pred_new, reg.intercept_[0])
    else:
        assert set(np.unique(pred_new)) <= set(reg.intercept_)


def test_precomputed_kernel_is_validated_by_the_rule():
    X, y = _data(n=20)
    K = compute_kernel(X, sigma=0.5)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        DANKRegressor(kernel="precomputed").fit(1e-12 * (K - 2.0 * np.eye(20)), y)
    reg = DANKRegressor(kernel="precomputed", extension="nearest", tol=1e-6)
    a = reg.fit(K.astype(np.float32), y).predict(K)  # float32 rounding is within tolerance
    b = DANKRegressor(kernel="precomputed", extension="nearest", tol=1e-6).fit(K, y).predict(K)
    np.testing.assert_allclose(a, b, atol=1e-4)


def test_out_of_range_eta_is_refused_by_the_estimator():
    X, y = _data(n=20)
    with pytest.raises(ValueError, match="representable range"):
        DANKRegressor(sigma=0.5, eta=1e-300).fit(X, y)


def test_precomputed_kernel_tolerance_follows_its_dtype():
    # lambda_min = -0.5 u32 n: inside float32's tolerance (u32 n s), outside float64's (1e-8 n s)
    n = 4
    u32 = float(np.finfo(np.float32).eps)
    K32 = np.diag(np.array([1.0, 1.0, 1.0, -0.5 * u32 * n], dtype=np.float32))
    y = np.array([0.0, 1.0, 0.5, -1.0])
    reg = DANKRegressor(kernel="precomputed", C=1.0, epsilon=0.01, eta=1.0).fit(K32, y)
    assert reg.results_[0].lower <= reg.results_[0].upper
    with pytest.raises(ValueError, match="not positive semi-definite"):
        DANKRegressor(kernel="precomputed", eta=1.0).fit(K32.astype(np.float64), y)


# the plain SVR behind eta="svr" is iteration-bounded on ill-conditioned data
def test_regressor_plain_svr_is_iteration_bounded():
    """7 points, linear kernel of scale 4.7e6, C = 1e4: unbounded, libsvm needs about 7.4e7
    iterations; it stops at svr_iteration_limit(7) = 1e6, says so, and the DANK solve from its
    approximate dual is certified."""
    x = np.array([310.71254466, 1860.75246417, -22.67144402, -309.10095833, -1413.24878229,
                  -513.01608223, 2178.7127426])
    y = np.sin(x / 500)
    assert svr_iteration_limit(7) == 10**6
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        reg = DANKRegressor(kernel="linear", C=1e4).fit(x[:, None], y)
    msgs = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert any("iteration limit (1000000" in m and "eta='svr'" in m for m in msgs), msgs
    res = reg.results_[0]
    assert res.lower <= res.upper and np.isfinite(reg.eta_[0]) and reg.eta_[0] > 0
    assert np.all(np.isfinite(reg.predict(x[:, None])))


def test_solver_options_bound_newton_s_fallback():
    """``solver_options`` reach :func:`dank_fast.solve_svr`: with one Newton step and
    ``fallback_iter=3`` the fit stops uncertified after at most 3 accelerated iterations, and
    says so; an option the solver does not know is refused with its name."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (80, 2))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=80)
    with pytest.warns(ConvergenceWarning, match="did not certify"):
        reg = DANKRegressor(gamma=5.0, tol=1e-14, max_iter=1, warm_start_svr=False,
                            solver_options={"fallback_iter": 3}).fit(X, y)
    res = reg.results_[0]
    assert res.status != "converged" and res.extra["accelerated_iter"] <= 3
    assert res.lower <= res.upper
    with pytest.raises(TypeError, match="fallback_iters"):
        DANKRegressor(gamma=5.0, solver_options={"fallback_iters": 3}).fit(X, y)


@pytest.mark.parametrize("eta", ["svr", 0.5])
def test_regressor_starts_from_the_plain_svr_unless_told_not_to(eta):
    """With ``warm_start_svr`` (the default) the solve is ``solve_svr``'s from the dual of
    scikit-learn's SVR (same ``C``, ``epsilon``, ``tol = 1e-4``), whether ``eta="svr"`` needs
    that fit or ``eta`` is given; without it Newton starts from zero. Both certify the same
    saddle value."""
    rng = np.random.default_rng(5)
    X = rng.uniform(-1, 1, (80, 2))
    y = np.sin(3 * X[:, 0]) + 0.1 * rng.normal(size=80)
    K = compute_kernel(X, gamma=5.0)
    kw = dict(kernel="precomputed", C=2.0, epsilon=0.05, eta=eta)
    warm = DANKRegressor(**kw).fit(K, y)
    cold = DANKRegressor(warm_start_svr=False, **kw).fit(K, y)
    svr = SVR(kernel="precomputed", C=2.0, epsilon=0.05, tol=1e-4).fit(K, y)
    d = np.zeros(y.size)
    d[svr.support_] = svr.dual_coef_.ravel()
    by_hand = solve_svr(K, y, C=2.0, epsilon=0.05, eta=warm.eta_[0], tau=0.01,
                        method="newton", alpha0=d)
    np.testing.assert_array_equal(warm.results_[0].alpha, by_hand.alpha)
    from_zero = solve_svr(K, y, C=2.0, epsilon=0.05, eta=warm.eta_[0], tau=0.01,
                          method="newton")
    np.testing.assert_array_equal(cold.results_[0].alpha, from_zero.alpha)
    w, c = warm.results_[0], cold.results_[0]
    assert w.success and c.success
    assert w.lower <= c.upper and c.lower <= w.upper


def test_regressor_default_method_is_auto_and_solves_as_newton():
    """The default ``method="auto"`` is the classifier's: the result records it, and it
    solves exactly what ``"newton"`` from the same start does."""
    rng = np.random.default_rng(7)
    X = rng.uniform(-1, 1, (60, 2))
    y = np.cos(2 * X[:, 1]) + 0.05 * rng.normal(size=60)
    kw = dict(C=1.0, epsilon=0.05, gamma=1.0)
    auto = DANKRegressor(**kw).fit(X, y)
    newton = DANKRegressor(method="newton", **kw).fit(X, y)
    assert DANKRegressor().get_params()["method"] == "auto"
    assert auto.results_[0].method == "auto" and newton.results_[0].method == "newton"
    assert auto.results_[0].success
    np.testing.assert_array_equal(auto.results_[0].alpha, newton.results_[0].alpha)
    np.testing.assert_array_equal(auto.predict(X), newton.predict(X))


# boolean and string kernels are refused, not cast to float
@pytest.mark.parametrize("K", [np.eye(3, dtype=bool), np.eye(3).astype(str)])
def test_regressor_refuses_boolean_and_string_precomputed_kernels(K):
    # not cast to float by validate_data (True -> 1.0, "1.0" -> 1.0) with the fit going ahead
    with pytest.raises(TypeError, match=r"X \(the precomputed kernel\) must be a real numeric"):
        DANKRegressor(kernel="precomputed").fit(K, [0.0, 1.0, 2.0])
    reg = DANKRegressor(kernel="precomputed", eta=1.0).fit(np.eye(3), [0.0, 1.0, 2.0])
    assert reg.results_[0].lower <= reg.results_[0].upper


# fuzz: fit and predict on malformed and extreme input


@fuzz(50)
@given(data=st.data())
def test_fuzz_regressor(data):
    precomputed = data.draw(st.booleans(), label="precomputed")
    bad = data.draw(bad_params("X", "y", "C", "eta", "tau", "epsilon", "tol", "max_iter",
                               "method", "extension", "kernel", "decomposition"))
    n = data.draw(st.integers(2, 9), label="n")
    if precomputed:
        X = data.draw(psd_kernels(n=n) if "X" not in bad else bad_kernels(n=n), label="K")
        kw = {"kernel": "precomputed"}
        vX, Kx = _precomputed_verdict(X)
        vX = _strict_kernel_dtype(X, vX)
    else:
        X = data.draw(features(n=n, good="X" not in bad), label="X")
        kw = data.draw(kernel_specs(good="kernel" not in bad), label="kernel")
        vX = _object_ok(X, _either(features_rule(X))).merge(
            kernel_spec_rule(kw, precomputed_ok=False))
        vX.merge(_estimator_degree(kw))
        Kx = None
    y = data.draw(reg_targets(n, good="y" not in bad), label="y")
    p = _params(data.draw, bad, classifier=False, precomputed=precomputed)
    v = params_verdict(p, classifier=False, precomputed=precomputed)
    v.merge(vX).merge(targets_verdict(y, n))
    if v.valid and not precomputed:
        try:
            with np.errstate(all="ignore"):
                Kx = compute_kernel(np.asarray(X, dtype=float), **kw)
        except ValueError:
            v.unsure("kernel")
    if v.valid and Kx is not None:  # the representable range of every solve: named by solve_svr
        s = float(np.max(np.abs(Kx)))
        if s > 0 and not 1e-100 <= float(p["C"]) * s * n <= 1e100:
            v.unsure("C")
    reg = DANKRegressor(**kw, **p)
    fitted, _ = est_call("DANKRegressor.fit", v, lambda: reg.fit(X, y))
    if fitted is None:
        return
    yv = np.asarray(y, dtype=float)
    C = float(p["C"])
    for r, idx, eta in zip(reg.results_, reg.model_indices_, reg.eta_, strict=True):
        nn = idx.size
        z = r.extra["z"]
        assert_bracket(r.lower, r.upper, "DANKRegressor problem")
        assert_feasible(z, C, nn, np.concatenate([np.ones(nn), -np.ones(nn)]), "[ah; ac]")
        K = np.asarray(Kx, dtype=float)[np.ix_(idx, idx)]
        ref, scale = ref_bracket("svr", 0.5 * (K + K.T), yv[idx], z, C=C, eta=float(eta),
                                 tau=float(p["tau"]), epsilon=float(p["epsilon"]))
        assert_overlap((r.lower, r.upper), ref, scale, "DANKRegressor vs dank_ref")
    Xt = np.asarray(X, dtype=float)
    if precomputed:
        Xt = Xt[: max(1, n // 2)]
    pred, _ = est_call("DANKRegressor.predict", Verdict(), lambda: reg.predict(Xt))
    assert pred.shape == (Xt.shape[0],) and np.all(np.isfinite(pred))
    Xb = np.where(np.eye(*Xt.shape) > 0, np.nan, Xt)
    vb = Verdict()
    vb.add("X", EITHER)
    est_call("DANKRegressor.predict", vb, lambda: reg.predict(Xb))
