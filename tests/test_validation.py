"""Bad input at the public entry points fails early with a ValueError/TypeError naming it.

The solvers, certificates and estimators all apply
one rule (docs/validity.md), whatever the scale of the kernel.
"""

from __future__ import annotations

import numpy as np
import pytest

from dank_fast import (
    compute_kernel,
    solve_decomposed,
    solve_svm,
    svm_certificate,
)

# the valid calls here stop after a few iterations on purpose
pytestmark = pytest.mark.filterwarnings("ignore::dank_fast.ConvergenceWarning")

def good():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(6, 2))
    K = compute_kernel(X, sigma=1.0)
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    return K, y


def solve(K, y, **kw):
    args = dict(C=1.0, eta=1.0, tau=0.01, max_iter=5)
    args.update(kw)
    return solve_svm(K, y, **args)


def certify(K, y, alpha=None, **kw):
    args = dict(C=1.0, eta=1.0, tau=0.01)
    args.update(kw)
    if alpha is None:
        alpha = np.zeros(np.asarray(y).shape)
    return svm_certificate(K, y, alpha, **args)


ENTRY_POINTS = [solve, certify]


def with_nan(K):
    K = K.copy()
    K[1, 2] = K[2, 1] = np.nan
    return K


def with_inf(K):
    K = K.copy()
    K[0, 0] = np.inf
    return K


def not_symmetric(K):
    K = K.copy()
    K[0, 1] += 1e-3
    return K


def not_psd(K):
    return K - 2.0 * np.eye(K.shape[0])


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize(
    "bad_K, exc, match",
    [
        (with_nan, ValueError, "K contains NaN or infinity"),
        (with_inf, ValueError, "K contains NaN or infinity"),
        (not_symmetric, ValueError, "K must be symmetric"),
        (not_psd, ValueError, "K is not positive semi-definite"),
        (lambda K: K[:, :5], ValueError, "K must be a square matrix"),
        (lambda K: K[0], ValueError, "K must be 2-dimensional"),
        (lambda K: np.zeros((0, 0)), ValueError, "K is empty"),
        (lambda K: [["a"] * 6] * 6, TypeError, "K must be a real numeric array"),
    ],
)
def test_bad_kernel_matrix(entry, bad_K, exc, match):
    K, y = good()
    with pytest.raises(exc, match=match):
        entry(bad_K(K), y)


def test_psd_check_can_be_skipped_but_symmetry_cannot():
    K, y = good()
    solve(not_psd(K) + 2.0 * np.eye(6), y, check_psd=False)  # fine
    with pytest.raises(ValueError, match="symmetric"):
        solve(not_symmetric(K), y, check_psd=False)


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize(
    "bad_y, exc, match",
    [
        (np.array([1.0, np.nan, 1.0, -1.0, 1.0, -1.0]), ValueError, "y contains NaN or infinity"),
        (np.array([1.0, np.inf, 1.0, -1.0, 1.0, -1.0]), ValueError, "y contains NaN or infinity"),
        (np.ones(6), ValueError, "only one class"),
        (-np.ones(6), ValueError, "only one class"),
        (np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0]), ValueError, "only -1 and \\+1"),
        (np.array([1.0, 2.0, 1.0, -1.0, 1.0, -1.0]), ValueError, "only -1 and \\+1"),
        (np.array([1.0, -1.0, 1.0, -1.0, 1.0]), ValueError, "y has 5 entries but K has 6 rows"),
        (np.ones((6, 1)), ValueError, "y must be 1-dimensional"),
        (np.array(["a", "b", "a", "b", "a", "b"]), TypeError, "y must be a real numeric array"),
    ],
)
def test_bad_labels(entry, bad_y, exc, match):
    K, _ = good()
    with pytest.raises(exc, match=match):
        if entry is certify:
            entry(K, bad_y, alpha=np.zeros(6))
        else:
            entry(K, bad_y)


@pytest.mark.parametrize("entry", ENTRY_POINTS)
@pytest.mark.parametrize(
    "kw, exc, match",
    [
        (dict(C=0.0), ValueError, "C must be a finite number > 0"),
        (dict(C=-1.0), ValueError, "C must be a finite number > 0"),
        (dict(C=np.inf), ValueError, "C must be a finite number > 0"),
        (dict(C=np.nan), ValueError, "C must be a finite number > 0"),
        (dict(C="1"), TypeError, "C must be a real number"),
        (dict(C=True), TypeError, "C must be a real number"),
        (dict(eta=0.0), ValueError, "eta must be a finite number > 0"),
        (dict(eta=-2.0), ValueError, "eta must be a finite number > 0"),
        (dict(eta=None), TypeError, "eta must be a real number"),
        (dict(tau=-0.01), ValueError, "tau must be a finite number >= 0"),
        (dict(tau=np.nan), ValueError, "tau must be a finite number >= 0"),
        (dict(tau=[0.1]), TypeError, "tau must be a real number"),
    ],
)
def test_bad_hyperparameters(entry, kw, exc, match):
    K, y = good()
    with pytest.raises(exc, match=match):
        entry(K, y, **kw)


def test_numpy_scalars_are_accepted():
    K, y = good()
    res = solve(K, y, C=np.float64(1.0), eta=np.int64(2), tau=np.float32(0.0))
    assert res.lower <= res.upper


@pytest.mark.parametrize("method", ["Accelerated", "nesterov", "", "sgd"])
def test_unknown_method(method):
    K, y = good()
    with pytest.raises(ValueError, match="method must be one of"):
        solve(K, y, method=method)


@pytest.mark.parametrize("max_iter", [0, -1, 2.5, "10"])
def test_bad_max_iter(max_iter):
    K, y = good()
    with pytest.raises((ValueError, TypeError), match="max_iter must be"):
        solve(K, y, max_iter=max_iter)


def test_float_integral_max_iter_works_or_is_rejected_by_name():
    K, y = good()
    try:
        solve(K, y, max_iter=2.0)
    except (TypeError, ValueError) as exc:
        assert "max_iter" in str(exc)


@pytest.mark.parametrize("max_iter", [float("inf"), float("nan")])
def test_non_finite_max_iter(max_iter):
    K, y = good()
    with pytest.raises((ValueError, TypeError), match="max_iter"):
        solve(K, y, max_iter=max_iter)


@pytest.mark.parametrize("method", ["paper", "paper-monotone", "pgm"])
@pytest.mark.parametrize(
    "kw, match",
    [
        (dict(projection="nearest"), "projection must be"),
        (dict(beta_sign="plus"), "beta_sign must be"),
    ],
)
def test_bad_paper_options(method, kw, match):
    K, y = good()
    with pytest.raises(ValueError, match=match):
        solve(K, y, method=method, **kw)


def test_unknown_option_is_rejected():
    K, y = good()
    with pytest.raises(TypeError, match="bogus"):
        solve(K, y, bogus=1)


@pytest.mark.parametrize("alpha0", [np.zeros(5), np.full(6, np.nan), np.zeros((6, 1))])
def test_bad_alpha0(alpha0):
    K, y = good()
    with pytest.raises(ValueError, match="alpha0 (must have shape|contains NaN|must be 1-dim)"):
        solve(K, y, alpha0=alpha0)


def test_unknown_eig_route():
    K, y = good()
    with pytest.raises(ValueError, match="eig_route"):
        solve(K, y, eig_route="bogus")


@pytest.mark.parametrize("tol", [-1.0, float("nan")])
def test_bad_tol(tol):
    K, y = good()
    with pytest.raises(ValueError, match="tol"):
        solve(K, y, tol=tol)


@pytest.mark.parametrize(
    "alpha, match",
    [
        (np.zeros(5), "alpha has shape"),
        (np.array([np.inf, 0, 0, 0, 0, 0]), "alpha contains NaN or infinity"),
        (np.array([1.0, 0, 0, 0, 0, 0]), "alpha is not feasible"),
        (np.array([2.0, 2.0, 0, 0, 0, 0]), "alpha is not feasible"),
    ],
)
def test_certificate_bad_alpha(alpha, match):
    K, y = good()
    with pytest.raises(ValueError, match=match):
        certify(K, y, alpha=alpha)


def _entry_points():
    from dank_fast import (
        DANKClassifier,
        DANKRegressor,
        solve_svr,
        svr_certificate,
    )

    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    t = np.linspace(0.0, 1.0, 6)
    z = np.zeros(6)
    return {
        "solve_svm": lambda K: solve(K, y),
        "svm_certificate": lambda K: certify(K, y),
        "solve_svr": lambda K: solve_svr(K, t, C=1.0, epsilon=0.1, eta=1.0, max_iter=5),
        "svr_certificate": lambda K: svr_certificate(K, t, z, z, C=1.0, epsilon=0.1, eta=1.0,
                                                     tau=0.01),
        "solve_decomposed": lambda K: solve_decomposed(K, y, C=1.0, eta=1.0, max_iter=5),
        "DANKClassifier": lambda K: DANKClassifier(kernel="precomputed", max_iter=5).fit(K, y),
        "DANKRegressor": lambda K: DANKRegressor(kernel="precomputed", max_iter=5).fit(K, t),
    }


@pytest.mark.parametrize("entry", sorted(_entry_points()))
@pytest.mark.parametrize("scale", [1e-12, 1.0, 1e12])
@pytest.mark.parametrize("bad, match", [(not_psd, "positive semi-definite"),
                                        (not_symmetric, "symmetric")])
def test_every_entry_point_applies_the_relative_rule(entry, scale, bad, match):
    """K x 1e-12 indefinite or non-symmetric is refused (absolute floors would pass it)."""
    K, _ = good()
    with pytest.raises(ValueError, match=match):
        _entry_points()[entry](scale * bad(K))


@pytest.mark.parametrize("entry", ["solve_svm", "svm_certificate", "solve_svr",
                                   "svr_certificate", "solve_decomposed"])
def test_complex_kernel_is_refused_everywhere(entry):
    K, _ = good()
    with pytest.raises(TypeError, match="complex"):
        _entry_points()[entry](K + 0j)
