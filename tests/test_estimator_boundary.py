"""Validation at the public boundary only (issue 18): one ``fit`` of an estimator passes its
data through :mod:`dank_fast._validation` once; the routes and solvers below it receive the
validated kernel and do not check it again (an ``O(n^2)`` pass, and for a precomputed kernel an
``O(n^3)`` PSD test, each time)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.preprocessing import MinMaxScaler

from dank_fast import DANKClassifier, DANKRegressor, _validation, compute_kernel


@pytest.fixture
def matrix_checks(monkeypatch):
    """Every call of a function of ``_validation`` with a 2-D array (the data: X or K) from
    another module, recorded as ``(function name, shape)``, under whatever name it was imported
    (calls inside ``_validation`` itself are parts of one check, not new passes)."""
    calls = []
    functions = {id(f): f for f in vars(_validation).values()
                 if callable(f) and getattr(f, "__module__", "") == _validation.__name__}

    def recording(f):
        def wrapper(*args, **kwargs):
            if args and np.ndim(args[0]) == 2:
                calls.append((f.__name__, np.shape(args[0])))
            return f(*args, **kwargs)
        return wrapper

    for mod_name, mod in list(sys.modules.items()):
        if mod_name.split(".")[0] != "dank_fast" or mod is _validation:
            continue
        for attr, value in list(vars(mod).items()):
            if id(value) in functions:
                monkeypatch.setattr(mod, attr, recording(value))
    return calls


def _data(n=60, classes=2):
    X, y = make_moons(n_samples=n, noise=0.3, random_state=0)
    X = MinMaxScaler().fit_transform(X)
    if classes == 3:
        y = np.where(X[:, 0] > 0.7, 2, y)
    return X, y


@pytest.mark.parametrize("classes", [2, 3])
def test_a_precomputed_kernel_is_checked_once_per_fit(matrix_checks, classes):
    X, y = _data(classes=classes)
    K = compute_kernel(X, sigma=0.5)
    matrix_checks.clear()
    DANKClassifier(kernel="precomputed", tau=0.01).fit(K, y)
    # the dtype check before scikit-learn's validate_data, then the rule of docs/validity.md
    assert matrix_checks == [("refuse_non_numeric_kernel", K.shape),
                             ("check_kernel_matrix", K.shape)]


def test_features_are_checked_once_per_fit(matrix_checks):
    X, y = _data(classes=3)
    DANKClassifier(kernel="rbf", sigma=0.5).fit(X, y)
    assert matrix_checks == [("check_finite_array", X.shape)]  # compute_kernel, once


def test_the_regressor_checks_a_precomputed_kernel_once(matrix_checks):
    X, _ = _data()
    y = np.sin(3 * X[:, 0]) + X[:, 1]
    K = compute_kernel(X, sigma=0.5)
    matrix_checks.clear()
    DANKRegressor(kernel="precomputed").fit(K, y)
    assert matrix_checks == [("refuse_non_numeric_kernel", K.shape),
                             ("check_kernel_matrix", K.shape)]
