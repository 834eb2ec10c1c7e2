"""The DANK estimators' use of scikit-learn's private helpers, and the fallback of each.

``_fit_context`` with the ``Interval``/``StrOptions`` constraints, and
``_ovr_decision_function``, are private in scikit-learn; :mod:`dank_fast._sklearn_compat`
imports them where they live and falls back to its own when a release moves them. Each
fallback is checked here against the primary on the same inputs, and
``dank_fast.ConvergenceWarning`` against scikit-learn's filter.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

from dank_fast import ConvergenceWarning, DANKClassifier, DANKRegressor
from dank_fast._sklearn_compat import (
    FallbackInterval,
    FallbackStrOptions,
    InvalidParameterError,
    _sk_ovr_decision_function,
    _validating_fit,
    check_params,
    ovo_decision_function,
    ovo_votes,
)

try:  # scikit-learn's private validation, the primary that the fallback is compared with
    from sklearn.utils import _param_validation as _pv
except ImportError:  # pragma: no cover - a scikit-learn that moved it
    _pv = None
needs_pv = pytest.mark.skipif(_pv is None, reason="no sklearn.utils._param_validation")
needs_ovr = pytest.mark.skipif(_sk_ovr_decision_function is None,
                               reason="no sklearn.utils.multiclass._ovr_decision_function")

CANDIDATES = [
    0, 1, 2, -1, 0.0, 0.5, 1.0, -0.5, 2.0, 1e300, np.inf, -np.inf, np.nan, True, False,
    np.float32(0.25), np.int64(3), np.int64(-2), np.bool_(True), 2**32, 2**40, None, "svm",
    "svr", "rbf", "gaussian", "linear", "poly", "precomputed", "sigmoid", "auto", "dense",
    "working-set", "newton", "accelerated", "paper", "nearest", "ovo", "ovr", "bogus", {},
    {"a": 1}, [1], (1,), np.random.RandomState(0), object(),
]


def _fallback_constraints(constraints: dict) -> dict:
    """The same constraints written with the fallback classes."""
    if _pv is None:  # pragma: no cover - the estimators use the fallbacks already
        return constraints
    out = {}
    for name, allowed in constraints.items():
        conv = []
        for c in allowed:
            if isinstance(c, _pv.StrOptions):
                c = FallbackStrOptions(c.options)
            elif isinstance(c, _pv.Interval):
                c = FallbackInterval(c.type, c.left, c.right, closed=c.closed)
            conv.append(c)
        out[name] = conv
    return out


def _verdict(check, constraints, name, value) -> bool:
    try:
        check(constraints, {name: value}, "Est")
    except (TypeError, ValueError):
        return False
    return True


@needs_pv
@pytest.mark.parametrize("estimator", [DANKClassifier, DANKRegressor])
def test_fallback_parameter_check_agrees_with_scikit_learn(estimator):
    constraints = estimator._parameter_constraints
    fallback = _fallback_constraints(constraints)
    for name in constraints:
        for value in CANDIDATES:
            expected = _verdict(_pv.validate_parameter_constraints, constraints, name, value)
            assert _verdict(check_params, constraints, name, value) == expected, (name, value)
            assert _verdict(check_params, fallback, name, value) == expected, (name, value)


def test_fallback_fit_refuses_a_bad_parameter_by_name():
    fit = _validating_fit(lambda est, X, y: "fitted")
    X, y = make_moons(20, random_state=0)
    assert fit(DANKClassifier(C=2.0), X, y) == "fitted"
    with pytest.raises(InvalidParameterError, match="'C' parameter of DANKClassifier"):
        fit(DANKClassifier(C=-1.0), X, y)
    with pytest.raises(ValueError, match="'kernel' parameter of DANKRegressor"):
        fit(DANKRegressor(kernel="sigmoid"), X, y)
    assert issubclass(InvalidParameterError, TypeError)


def test_fallback_messages_say_what_is_allowed():
    constraints = _fallback_constraints(DANKClassifier._parameter_constraints)
    with pytest.raises(InvalidParameterError,
                       match=r"'degree' parameter of Est must be an int in the range \[1, inf\)"):
        check_params(constraints, {"degree": 0}, "Est")
    with pytest.raises(InvalidParameterError, match=r"'kernel' .* a str among \['gaussian'"):
        check_params(constraints, {"kernel": "sigmoid"}, "Est")
    with pytest.raises(InvalidParameterError, match=r"a float in the range \(0.0, inf\) or None"):
        check_params(constraints, {"sigma": -1.0}, "Est")
    assert str(FallbackInterval(Integral, 1, None, closed="left")) == "an int in the range [1, inf)"


@needs_ovr
@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_fallback_ovo_votes_equal_scikit_learns(n_classes):
    rng = np.random.default_rng(n_classes)
    m = n_classes * (n_classes - 1) // 2
    conf = rng.normal(size=(40, m)) * 10.0 ** rng.integers(-3, 3, size=m)
    conf[:5] = 0.0  # ties in the votes and in the confidences
    pred = (conf > 0).astype(np.intp)
    expected = _sk_ovr_decision_function(pred, conf, n_classes)
    np.testing.assert_array_equal(ovo_votes(pred, conf, n_classes), expected)
    np.testing.assert_array_equal(ovo_decision_function(pred, conf, n_classes), expected)


def test_a_scikit_learn_filter_catches_a_dank_non_convergence():
    X, y = make_moons(40, noise=0.2, random_state=0)
    assert issubclass(ConvergenceWarning, SklearnConvergenceWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SklearnConvergenceWarning)
        with pytest.raises(ConvergenceWarning):
            DANKClassifier(sigma=0.5, method="accelerated", max_iter=1, tol=1e-12,
                           warm_start_svm=False).fit(X, y)
