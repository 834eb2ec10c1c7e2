"""dank_ref implements docs/validity.md, and agrees with dank_fast on what a valid instance is.

Each row of ``CASES`` is one input and the verdict validity.md prescribes for it.  The ``ref``
half must hold; the ``fast`` half runs the same input through ``dank_fast`` (only this test
imports it: ``dank_ref`` itself never does) and is marked ``xfail(strict=False)`` where
dank_fast's validation still disagrees (being fixed separately).
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import dank_fast
import dank_ref
from dank_ref import certificate as rc
from dank_ref import certificate as ref_cert
from dank_ref._validation import check_partition


def gaussian(n, seed=0, width=0.5, dtype=np.float64):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / (2 * width**2))
    return K.astype(dtype)


def labels(n):
    return np.where(np.arange(n) % 2 == 0, 1.0, -1.0)


def feasible_alpha(n, C=1.0):
    return np.full(n, 0.5 * C)  # balanced labels: y'a = 0 exactly


K6 = gaussian(6, seed=1)
y6 = labels(6)
BASE = dict(C=1.0, eta=1.0, tau=0.01)


def _indefinite():
    K = K6 - 0.5 * np.eye(6) * 3
    return K * 1e-12


def _asym():
    K = K6.copy()
    K[0, 1] += 1e-3
    return K * 1e-12


# (id, K, y, params, accept?)
CASES = [
    ("indefinite_x1e-12", _indefinite(), y6, BASE, False),
    ("nonsymmetric_x1e-12", _asym(), y6, BASE, False),
    ("complex_zero_imag", K6.astype(complex), y6, BASE, False),
    ("bool_K", K6 > 0.5, y6, BASE, False),
    ("float32_gaussian_n40", gaussian(40, dtype=np.float32), labels(40), BASE, True),
    ("K_zero", np.zeros((6, 6)), y6, BASE, True),
    ("int_K_identity", np.eye(6, dtype=int), y6, BASE, True),
    ("psd_x1e-30_in_range", K6 * 1e-30, y6, dict(C=1.0, eta=1e-30, tau=0.01), True),
    ("bool_C", K6, y6, dict(C=True, eta=1.0, tau=0.01), False),
    ("str_eta", K6, y6, dict(C=1.0, eta="1", tau=0.01), False),
    ("nan_tau", K6, y6, dict(C=1.0, eta=1.0, tau=float("nan")), False),
    ("bool_labels", K6, y6 > 0, BASE, False),
    ("one_class", K6, np.ones(6), BASE, False),
    ("C_1e300_out_of_range", K6, y6, dict(C=1e300, eta=1.0, tau=0.01), False),
    ("eta_1e-300_out_of_range", K6, y6, dict(C=1.0, eta=1e-300, tau=0.01), False),
]

# dank_fast cases that disagree with validity.md (none since the validation and range checks of
# dank_fast were merged; kept as the place to record one, with an xfail)
FAST_DISAGREES: set[str] = set()


def _ref_verdict(K, y, p):
    try:
        rc.svm_certificate(K, y, feasible_alpha(len(y), 1.0), **p)
    except (TypeError, ValueError):
        return False
    return True


def _fast_verdict(K, y, p):
    try:
        dank_fast.svm_certificate(K, y, feasible_alpha(len(y), 1.0), **p)
    except (TypeError, ValueError):
        return False
    return True


def _params():
    out = []
    for cid, K, y, p, ok in CASES:
        out.append(pytest.param(K, y, p, ok, "ref", id=f"ref-{cid}"))
        marks = ([pytest.mark.xfail(strict=False, reason="dank_fast validation disagrees")]
                 if cid in FAST_DISAGREES else [])
        out.append(pytest.param(K, y, p, ok, "fast", id=f"fast-{cid}", marks=marks))
    return out


@pytest.mark.parametrize("K,y,p,accept,pkg", _params())
def test_validity_table(K, y, p, accept, pkg):
    verdict = (_ref_verdict if pkg == "ref" else _fast_verdict)(K, y, p)
    assert verdict is accept


@pytest.mark.parametrize("kw,exc,match", [
    (dict(max_iters=0), ValueError, "max_iters"),
    (dict(max_iters=True), TypeError, "max_iters"),
    (dict(max_iters=2.5), TypeError, "max_iters"),
    (dict(certify_tol=-1.0), ValueError, "certify_tol"),
    (dict(certify_tol=0.0), ValueError, "certify_tol"),
    (dict(eps=float("inf")), ValueError, "eps"),
    (dict(time_limit=0.0), ValueError, "time_limit"),
    (dict(time_limit=float("inf")), ValueError, "time_limit"),
    (dict(polish="yes"), TypeError, "polish"),
    (dict(solver="MOSEK"), ValueError, "solver"),
    (dict(C=True), TypeError, "C"),
    (dict(C=np.bool_(True)), TypeError, "C"),
])
def test_solver_options_rejected_before_any_work(kw, exc, match, monkeypatch):
    def boom(*a, **k):
        raise AssertionError("problem must not be built")

    monkeypatch.setattr(dank_ref.svm, "build_svm_problem", boom)
    monkeypatch.setattr(dank_ref.svm, "limit_qp", boom)
    args = dict(C=1.0, eta=1.0, tau=0.01)
    args.update(kw)
    with pytest.raises(exc, match=match):
        dank_ref.solve_svm(K6, y6, **args)


def test_range_error_names_C_eta_and_maxK():
    with pytest.raises(ValueError) as info:
        dank_ref.solve_svm(K6, y6, C=1e300, eta=1.0)
    msg = str(info.value)
    assert "C = 1.000e+300" in msg and "eta = " in msg and "max|K|" in msg


def test_every_public_function_validates():
    Kc = K6.astype(complex)
    a = feasible_alpha(6)
    calls = [
        lambda: dank_ref.solve_svm(Kc, y6, C=1.0, eta=1.0),
        lambda: dank_ref.solve_svr(Kc, y6, C=1.0, epsilon=0.1, eta=1.0),
        lambda: dank_ref.solve_decomposed(Kc, y6, np.zeros(6), C=1.0, eta=1.0),
        lambda: rc.svm_certificate(Kc, y6, a, C=1.0, eta=1.0, tau=0.0),
        lambda: rc.svr_certificate(Kc, y6, a, a, C=1.0, epsilon=0.1, eta=1.0, tau=0.0),
        lambda: rc.decomposed_certificate(Kc, y6, a, C=1.0, eta=1.0),
        lambda: rc.h_svm(Kc, y6, a, eta=1.0, tau=0.0),
        lambda: rc.grad_h_svm(Kc, y6, a, eta=1.0, tau=0.0),
        lambda: rc.inner_F(Kc, a, eta=1.0, tau=0.0),
        lambda: dank_ref.polish.polish_svm(Kc, y6, a, C=1.0, eta=1.0, tau=0.0,
                                           score=lambda z: 0.0),
        lambda: dank_ref.polish.polish_svr(Kc, y6, a, C=1.0, epsilon=0.1, eta=1.0, tau=0.0,
                                           score=lambda z: 0.0),
    ]
    for call in calls:
        with pytest.raises(TypeError, match="complex"):
            call()


def test_partition_labels_reject_nan_and_none():
    with pytest.raises(ValueError, match="NaN"):
        dank_ref.solve_decomposed(K6, y6, np.array([0, 0, 1, 1, np.nan, 0]), C=1.0, eta=1.0)
    with pytest.raises(ValueError, match="None"):
        dank_ref.solve_decomposed(K6, y6, np.array([0, 0, 1, None, 1, 0], dtype=object),
                                  C=1.0, eta=1.0)


def test_relative_tolerances_are_scale_free():
    """K valid iff c K valid: the verdicts do not change over 200 orders of magnitude."""
    bad = _indefinite() / 1e-12
    for c in (1e-100, 1e-12, 1.0, 1e12, 1e100):
        with pytest.raises(ValueError, match="semidefinite"):
            rc.svm_certificate(bad * c, y6, feasible_alpha(6, 1.0), C=1.0 / c, eta=1.0 / c,
                               tau=0.0)
        cert = rc.svm_certificate(K6 * c, y6, feasible_alpha(6, 1.0 / c), C=1.0 / c,
                                  eta=1.0 / c, tau=0.0)
        assert cert.lower <= cert.upper


def test_default_tau_matches_dank_fast():
    fast_tau = inspect.signature(dank_fast.solve_svm).parameters["tau"].default
    assert inspect.signature(dank_ref.solve_svm).parameters["tau"].default == fast_tau == 0.01
    fast_tau_r = inspect.signature(dank_fast.solve_svr).parameters["tau"].default
    assert inspect.signature(dank_ref.solve_svr).parameters["tau"].default == fast_tau_r
    assert "SCS" in (dank_ref.solve_svm.__doc__ or "") and dank_ref.DEFAULT_SOLVER == "SCS"
    assert "CLARABEL\" default" not in (dank_ref.solve_svm.__doc__ or "")


# regressions of dank_ref's validation: labels 1 and "1" were merged, tuple and inf labels
# refused, C = 10**400 raised OverflowError


# --------------------------------------------------------------------------- dank_ref labels
def test_ref_labels_that_differ_only_in_type_are_different_clusters():
    # np.asarray([1, "1"]) is the strings "1", "1": the two clusters were merged
    Kb = ref_cert.block_kernel(np.ones((3, 3)), [1, "1", 1.0])
    np.testing.assert_array_equal(Kb, [[1, 0, 1], [0, 1, 0], [1, 0, 1]])


@pytest.mark.parametrize("labels, codes", [
    ([(0, "x"), (1, "x"), (0, "x")], [0, 1, 0]),  # was: "got shape (3, 2)"
    ([np.inf, 1.0, np.inf], [0, 1, 0]),  # was: "labels contain NaN or inf"
    (np.array([-np.inf, np.inf, -np.inf]), [0, 1, 0]),
    (["b", "a", "b"], [0, 1, 0]),
    (iter([3, 3, 2]), [0, 0, 1]),
])
def test_ref_partition_accepts_any_self_equal_labels(labels, codes):
    out = check_partition(labels, 3)
    np.testing.assert_array_equal(out, codes)


@pytest.mark.parametrize("labels, exc, match", [
    ([np.nan, 1.0], ValueError, "not equal to itself"),
    ([None, 1], ValueError, "None"),
    ("ab", TypeError, "labels must be a 1-D array"),
    ({0, 1}, TypeError, "labels must be a 1-D array"),
    ([[0], [1]], TypeError, "not hashable"),
    (np.zeros((2, 1)), ValueError, "got shape"),
    ([0, 1, 2], ValueError, "length 2"),
])
def test_ref_partition_refuses_unusable_labels(labels, exc, match):
    with pytest.raises(exc, match=match):
        check_partition(labels, 2)


# --------------------------------------------------------------------------- dank_ref scalars
@pytest.mark.parametrize("kw, match", [
    (dict(C=10**400), "C must be a finite number > 0"),
    (dict(eta=10**400), "eta must be a finite number > 0"),
    (dict(tau=10**400), "tau must be a finite number >= 0"),
    (dict(C=-10**400), "C must be a finite number > 0"),
    (dict(C=10**5000), "C must be a finite number > 0"),  # its repr alone raises ValueError
])
def test_ref_integers_beyond_the_float_range_are_named_value_errors(kw, match):
    args = dict(C=1.0, eta=1.0, tau=0.0)
    args.update(kw)
    with pytest.raises(ValueError, match=match):  # was: OverflowError
        ref_cert.svm_certificate(np.eye(2), np.array([1.0, -1.0]), np.array([0.5, 0.5]), **args)
