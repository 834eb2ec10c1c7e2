"""scikit-learn's ``warm_start`` for DANKClassifier and DANKRegressor (dank_fast._warm)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.utils._param_validation import InvalidParameterError

from dank_fast import DANKClassifier, DANKRegressor

TOL = 1e-6


def _moons():
    return make_moons(150, noise=0.25, random_state=0)


def _sinc():
    rng = np.random.default_rng(0)
    X = rng.uniform(-3.0, 3.0, (120, 1))
    return X, np.sinc(X[:, 0]) + 0.1 * rng.normal(size=120)


def _same_certified_answer(warm, cold):
    for rw, rc in zip(warm.results_, cold.results_, strict=True):
        assert rw.status == rc.status == "converged"
        assert rw.rel_gap <= TOL and rc.rel_gap <= TOL
        # both certified brackets contain the same saddle value v*
        assert rw.lower <= rc.upper and rc.lower <= rw.upper


def test_classifier_warm_start_along_C_is_the_certified_cold_answer():
    X, y = _moons()
    warm = DANKClassifier(C=16.0, sigma=0.5, warm_start=True).fit(X, y)
    K_first = warm._warm_state.K
    warm.set_params(C=32.0).fit(X, y)
    cold = DANKClassifier(C=32.0, sigma=0.5).fit(X, y)
    _same_certified_answer(warm, cold)
    assert warm._warm_state.K is K_first  # same sigma: the kernel was reused
    np.testing.assert_array_equal(warm.predict(X), cold.predict(X))


def test_regressor_warm_start_along_C_is_the_certified_cold_answer():
    X, y = _sinc()
    warm = DANKRegressor(C=4.0, sigma=0.5, warm_start=True).fit(X, y)
    warm.set_params(C=8.0).fit(X, y)
    cold = DANKRegressor(C=8.0, sigma=0.5).fit(X, y)
    _same_certified_answer(warm, cold)


def test_refit_at_the_same_C_starts_at_the_certified_optimum():
    X, y = _moons()
    est = DANKClassifier(C=4.0, sigma=0.5, warm_start=True).fit(X, y)
    alpha = est.results_[0].alpha.copy()
    est.fit(X, y)
    assert est.results_[0].success
    # the start is the solution up to the rounding of its projection onto A
    np.testing.assert_allclose(est.results_[0].alpha, alpha, rtol=1e-13, atol=1e-15)


def test_other_data_or_no_warm_start_gives_the_cold_fit():
    X, y = _moons()
    X2 = X.copy()
    X2[0, 0] += 1e-3  # one entry changed: not the same data
    est = DANKClassifier(C=4.0, sigma=0.5, warm_start=True).fit(X, y)
    est.fit(X2, y)
    cold = DANKClassifier(C=4.0, sigma=0.5).fit(X2, y)
    np.testing.assert_array_equal(est.results_[0].alpha, cold.results_[0].alpha)
    assert est.n_iter_.tolist() == cold.n_iter_.tolist()
    off = DANKClassifier(C=4.0, sigma=0.5).fit(X, y)
    first = off.n_iter_.tolist()
    off.fit(X, y)  # warm_start=False: the second fit is cold too
    assert first[0] > 0 and off.n_iter_.tolist() == first
    assert off._warm_state is None


def test_multiclass_problems_each_warm_started():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(c, 0.7, (30, 2)) for c in ((0, 0), (2, 0), (0, 2))])
    y = np.repeat([0, 1, 2], 30)
    est = DANKClassifier(C=2.0, sigma=1.0, warm_start=True).fit(X, y)
    alphas = [r.alpha.copy() for r in est.results_]
    est.fit(X, y)  # each pair's problem starts at its own certified optimum
    assert all(r.success for r in est.results_)
    for r, a in zip(est.results_, alphas, strict=True):
        np.testing.assert_allclose(r.alpha, a, rtol=1e-12, atol=1e-13)


def test_warm_start_along_C_with_sample_weights_is_the_certified_cold_answer():
    """Per-sample boxes ``C w_i``: the previous solution is rescaled coordinate by coordinate
    into the new boxes (also where only the weights changed), and each fit certifies the
    cold fit's saddle value."""
    X, y = _moons()
    w = np.random.default_rng(1).uniform(0.5, 2.0, y.size)
    warm = DANKClassifier(C=16.0, sigma=0.5, warm_start=True).fit(X, y, sample_weight=w)
    warm.set_params(C=32.0).fit(X, y, sample_weight=w)
    cold = DANKClassifier(C=32.0, sigma=0.5).fit(X, y, sample_weight=w)
    _same_certified_answer(warm, cold)
    w2 = w.copy()
    w2[0] *= 1.5
    warm.fit(X, y, sample_weight=w2)
    _same_certified_answer(warm, DANKClassifier(C=32.0, sigma=0.5).fit(X, y, sample_weight=w2))


@pytest.mark.parametrize("cls", [DANKClassifier, DANKRegressor])
def test_warm_start_is_validated(cls):
    X, y = _moons()
    with pytest.raises(InvalidParameterError, match="warm_start"):
        cls(warm_start="yes").fit(X, y)
