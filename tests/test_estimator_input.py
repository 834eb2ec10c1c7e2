"""What :class:`dank_fast.DANKClassifier` refuses, and how: bad parameters, data and
precomputed kernels are named in a ValueError/TypeError; the fuzz test draws malformed and
extreme input (features or ``kernel="precomputed"``) and checks every fit either refuses by
name or certifies each binary problem (tests/_fuzz_estimator_rule.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from _fuzz_estimator_rule import (
    _check_problem,
    _either,
    _estimator_degree,
    _object_ok,
    _params,
    _precomputed_verdict,
    class_labels,
    est_call,
    labels_verdict,
    params_verdict,
)
from _fuzz_inputs import bad_kernels, bad_params, features, kernel_specs, psd_kernels
from _fuzz_rule import EITHER, Verdict, features_rule, kernel_spec_rule
from _fuzz_run import fuzz
from hypothesis import given
from hypothesis import strategies as st
from sklearn.datasets import make_moons
from sklearn.exceptions import NotFittedError
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import MinMaxScaler
from threadpoolctl import threadpool_limits

from dank_fast import DANKClassifier, compute_kernel


@pytest.fixture(autouse=True, scope="module")
def _single_blas_thread():
    # The problems here are tiny (n <= 300): multi-threaded BLAS only adds
    # synchronisation overhead, which on a loaded 2-core machine makes the check
    # suite an order of magnitude slower.
    with threadpool_limits(limits=1):
        yield


def _moons(n=120, noise=0.3, seed=0):
    X, y = make_moons(n_samples=n, noise=noise, random_state=seed)
    return MinMaxScaler().fit_transform(X), y


@pytest.mark.parametrize(
    "params, match",
    [
        ({"C": 0.0}, "'C' parameter"),
        ({"C": -1.0}, "'C' parameter"),
        ({"eta": 0.0}, "'eta' parameter"),
        ({"eta": -2.0}, "'eta' parameter"),
        ({"eta": "auto"}, "'eta' parameter"),
        ({"tau": -0.1}, "'tau' parameter"),
        ({"sigma": 0.0}, "'sigma' parameter"),
        ({"extension": "knn"}, "'extension' parameter"),
        ({"multi_class": "crammer"}, "'multi_class' parameter"),
        ({"sigma": 1.0, "gamma": 1.0}, "sigma=1.0 and gamma=1.0"),
        ({"n_jobs": 1.5}, "'n_jobs' parameter"),
    ],
)
def test_bad_parameters(params, match):
    X, y = _moons(20, 0.2)
    with pytest.raises(ValueError, match=match):
        DANKClassifier(**params).fit(X, y)


def test_bad_data():
    X, y = _moons(20, 0.2)
    clf = DANKClassifier(tol=1e-4)
    Xnan = X.copy()
    Xnan[3, 1] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        clf.fit(Xnan, y)
    Xinf = X.copy()
    Xinf[0, 0] = np.inf
    with pytest.raises(ValueError, match="Input X contains infinity"):
        clf.fit(Xinf, y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        clf.fit(X, y[:-1])
    with pytest.raises(ValueError, match="only one class"):
        clf.fit(X, np.zeros(20))
    with pytest.raises(NotFittedError):  # a failed fit leaves the estimator unfitted
        clf.predict(X)
    with pytest.raises(ValueError, match="Unknown label type"):
        clf.fit(X, np.linspace(0, 1, 20))
    with pytest.raises(NotFittedError, match="not fitted yet"):
        clf.predict(X)
    with pytest.raises(NotFittedError, match="not fitted yet"):
        clf.decision_function(X)
    clf.fit(X, y)
    with pytest.raises(ValueError, match="Input X contains NaN"):
        clf.predict(Xnan)
    with pytest.raises(ValueError, match="X has 3 features"):
        clf.predict(np.ones((4, 3)))


def test_bad_precomputed_kernel():
    X, y = _moons(20, 0.2)
    K = rbf_kernel(X, gamma=2.0)
    clf = DANKClassifier(kernel="precomputed")
    with pytest.raises(ValueError, match="not positive semi-definite"):
        clf.fit(K - 2.0 * np.eye(20), y)
    with pytest.raises(ValueError, match="must be symmetric"):
        clf.fit(K + np.triu(np.ones((20, 20)), 1), y)
    with pytest.raises(ValueError, match="square matrix"):
        clf.fit(K[:, :10], y)


def test_polynomial_kernel_that_is_not_psd_is_refused():
    X, y = _moons(30, 0.2)
    with pytest.raises(ValueError, match="PSD"):
        DANKClassifier(kernel="poly", coef0=-5.0).fit(X, y)


# boolean and string kernels are refused, not cast to float by validate_data
@pytest.mark.parametrize("K", [np.eye(3, dtype=bool), np.eye(3).astype(str),
                               np.eye(3).astype(bytes)])
def test_classifier_refuses_boolean_and_string_precomputed_kernels(K):
    # not cast to float by validate_data (True -> 1.0, "1.0" -> 1.0) with the fit going ahead
    with pytest.raises(TypeError, match=r"X \(the precomputed kernel\) must be a real numeric"):
        DANKClassifier(kernel="precomputed").fit(K, [0, 1, 1])
    clf = DANKClassifier(kernel="precomputed", eta=1.0).fit(np.eye(3), [0, 1, 1])
    assert clf.results_[0].lower <= clf.results_[0].upper


# fuzz: fit, predict and decision_function on malformed and extreme input


@fuzz(50)
@given(data=st.data())
def test_fuzz_classifier(data):
    precomputed = data.draw(st.booleans(), label="precomputed")
    bad = data.draw(bad_params("X", "y", "C", "eta", "tau", "tol", "max_iter", "method",
                               "extension", "kernel", "decomposition"), label="corrupted")
    n = data.draw(st.integers(2, 9), label="n")
    if precomputed:
        X = data.draw(psd_kernels(n=n) if "X" not in bad else bad_kernels(n=n), label="K")
        kw = {"kernel": "precomputed"}
        vX, Kx = _precomputed_verdict(X)
    else:
        X = data.draw(features(n=n, good="X" not in bad), label="X")
        kw = data.draw(kernel_specs(good="kernel" not in bad), label="kernel")
        vX = _object_ok(X, _either(features_rule(X))).merge(
            kernel_spec_rule(kw, precomputed_ok=False))
        vX.merge(_estimator_degree(kw))
        Kx = None
    y = data.draw(class_labels(n, good="y" not in bad), label="y")
    p = _params(data.draw, bad, classifier=True, precomputed=precomputed)
    v = params_verdict(p, classifier=True, precomputed=precomputed)
    v.merge(vX).merge(labels_verdict(y, n))
    if v.valid and not precomputed:
        try:
            with np.errstate(all="ignore"):
                Kx = compute_kernel(np.asarray(X, dtype=float), **kw)
        except ValueError:
            v.unsure("kernel")  # the kernel overflows: the message says so
    clf = DANKClassifier(**kw, **p)
    fitted, _ = est_call("DANKClassifier.fit", v, lambda: clf.fit(X, y),
                         info=dict(X=X, y=y, kw=kw, p=p))
    if fitted is None:
        return
    classes = clf.classes_
    y = np.ravel(np.asarray(y))  # a column y (n, 1) is accepted by scikit-learn
    for r, idx, (neg, pos), eta in zip(clf.results_, clf.problem_indices_,
                                       clf.problem_classes_, clf.eta_, strict=True):
        y_enc = np.searchsorted(classes, np.asarray(y)[idx]) if neg >= 0 else None
        if neg >= 0:
            y_pm = np.where(y_enc == pos, 1.0, -1.0)
        else:
            y_pm = np.where(np.asarray(y)[idx] == classes[pos], 1.0, -1.0)
        K = np.asarray(Kx)[np.ix_(idx, idx)]
        _check_problem(r, 0.5 * (K + K.T), y_pm, float(p["C"]), float(eta), float(p["tau"]),
                       "DANKClassifier problem")
    # predictions on the training points and on new points
    if precomputed:
        Xt = np.asarray(X, dtype=float)[: max(1, n // 2)]
    else:
        Xt = np.asarray(X, dtype=float)[::-1]
    pred, _ = est_call("DANKClassifier.predict", Verdict(), lambda: clf.predict(Xt))
    assert pred.shape == (Xt.shape[0],) and set(pred.tolist()) <= set(classes.tolist())
    dec, _ = est_call("DANKClassifier.decision_function", Verdict(),
                      lambda: clf.decision_function(Xt))
    assert np.all(np.isfinite(dec)) and dec.shape[0] == Xt.shape[0]
    # malformed test inputs are refused by name
    bad_t = data.draw(st.sampled_from(["nan", "cols", "1d", "str"]), label="bad test X")
    Xb = {"nan": np.where(np.eye(*Xt.shape) > 0, np.nan, Xt), "cols": Xt[:, :-1],
          "1d": Xt[0], "str": Xt.astype(str)}[bad_t]
    if bad_t == "str":  # numeric strings convert; scikit-learn accepts them
        return
    vb = Verdict()
    vb.add("X", EITHER)
    if bad_t == "cols" and Xt.shape[1] == 1:
        vb.add("X", EITHER)
    est_call("DANKClassifier.predict", vb, lambda: clf.predict(Xb))
