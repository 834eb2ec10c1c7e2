"""verification.certify_arrays: the oracle on arrays, every bad or missing
input a TypeError / ValueError naming the argument; certify() never raises a bare KeyError."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import verification
from verification.formats import load_instance, load_solution
from verification.golden import GOLDEN_DIR
from verification.oracle import certify


def _golden(name):
    inst = load_instance(f"{GOLDEN_DIR}/{name}_instance.npz")
    return inst, load_solution(f"{GOLDEN_DIR}/{name}_solution.npz", inst["n"])


@pytest.fixture(scope="module")
def p1():
    return _golden("p1_basic")


def _kw(inst, sol, **over):
    kw = dict(C=inst["C"], eta=inst["eta"], tau=inst["tau"], alpha=sol["alpha"],
              bias=sol["bias"], F=sol["F"])
    kw.update(over)
    return kw


@pytest.mark.parametrize("name", ["p1_basic", "p2_basic", "p3_two_clusters"])
def test_same_report_as_certify_on_the_loaded_files(name):
    inst, sol = _golden(name)
    task = inst["task"]
    pts = dict(alpha_hat=sol["alpha_hat"], alpha_check=sol["alpha_check"]) if task == "svr" \
        else dict(alpha=sol["alpha"])
    rep = verification.certify_arrays(
        inst["K"], inst["y"], C=inst["C"], eta=inst["eta"], tau=inst["tau"], task=task,
        epsilon=inst["epsilon"], labels=inst["labels"], bias=sol["bias"], F=sol["F"],
        tol=1e-9, **pts)
    ref = certify(inst, sol, tol=1e-9, reference=False)
    assert rep["certified"] and set(rep) == set(ref)
    assert rep["rel_gap"] == ref["rel_gap"] and rep["checks"] == ref["checks"]


def test_meta_is_echoed_and_a_failure_has_reasons(p1):
    inst, sol = p1
    rep = verification.certify_arrays(inst["K"], inst["y"], **_kw(inst, sol, bias=3.0),
                                      meta={"solver": "mine", "iters": np.int64(7)})
    assert rep["meta"] == {"solver": "mine", "iters": 7}
    assert not rep["certified"] and rep["failed"] == ["bias"] and len(rep["reasons"]) == 1


def test_alpha_zero_says_why_the_relative_gap_is_undefined(p1):
    inst, _ = p1
    rep = verification.certify_arrays(inst["K"], inst["y"], C=1.0, eta=10.0, tau=0.01,
                                      alpha=np.zeros(12))
    assert rep["failed"] == ["gap"]
    assert "1'alpha = 0, so gap / scale has no finite value" in rep["reasons"][0]
    assert "alpha = 0 is never optimal for P1 and P3" in rep["reasons"][0]


@pytest.mark.parametrize("over, exc, words", [
    (dict(K="abc"), TypeError, "K must be a real numeric array"),
    (dict(K=np.ones((3, 4))), ValueError, "K must be a square"),
    (dict(K=-np.eye(12)), ValueError, "K is not positive semidefinite"),
    (dict(y=np.zeros(12)), ValueError, "labels y must take values in {-1, +1}"),
    (dict(y=np.ones(11)), ValueError, "y must be shape (12,)"),
    (dict(C=True), TypeError, "C must be a real number"),
    (dict(eta=-1.0), ValueError, "eta must be a finite number > 0"),
    (dict(tau=float("nan")), ValueError, "tau must be a finite number >= 0"),
    (dict(alpha=None), TypeError, "alpha is required"),
    (dict(alpha=np.ones(3)), ValueError, "alpha must be shape (12,)"),
    (dict(alpha=np.full(12, np.nan)), ValueError, "alpha contains NaN"),
    (dict(F=np.ones((2, 2))), ValueError, "F must be shape (12, 12)"),
    (dict(bias="0"), TypeError, "bias must be a real number"),
    (dict(meta=[1]), TypeError, "meta must be a string or a JSON object"),
    (dict(task="svr"), TypeError, "epsilon is required for task 'svr'"),
    (dict(epsilon=0.1), ValueError, "epsilon is only used by task 'svr'"),
    (dict(task="decomposed", tau=0.0), TypeError, "labels is required for task 'decomposed'"),
    (dict(labels=np.zeros(12)), ValueError, "labels is only used by task 'decomposed'"),
    (dict(task="p4"), ValueError, "task must be one of"),
    (dict(alpha_hat=np.zeros(12)), ValueError, "alpha_hat not used by task 'svm'"),
    (dict(tol=0.0), ValueError, "tol must be a finite number > 0"),
])
def test_bad_input_names_the_argument(p1, over, exc, words):
    inst, sol = p1
    kw = _kw(inst, sol, **over)
    K, y = kw.pop("K", inst["K"]), kw.pop("y", inst["y"])
    with pytest.raises(exc) as e:
        verification.certify_arrays(K, y, **kw)
    assert words in str(e.value)


def test_decomposed_needs_no_bias_and_labels_may_be_any_values(p1):
    inst, sol = _golden("p3_two_clusters")
    names = np.where(inst["labels"] == 0, "left", "right")
    rep = verification.certify_arrays(inst["K"], inst["y"], C=1.0, eta=10.0, task="decomposed",
                                      labels=names, alpha=sol["alpha"])
    assert rep["certified"]
    with pytest.raises(ValueError, match="bias is not used by task 'decomposed'"):
        verification.certify_arrays(inst["K"], inst["y"], C=1.0, eta=10.0, task="decomposed",
                                    labels=names, alpha=sol["alpha"], bias=0.0)


@pytest.mark.parametrize("drop, words", [
    ("epsilon", "inst lacks 'epsilon' (required for task 'svr'"),
    ("alpha_hat", "sol lacks 'alpha_hat'"),
])
def test_certify_names_a_missing_key(drop, words):
    inst, sol = _golden("p2_basic")
    inst = {k: v for k, v in inst.items() if k != drop}
    sol = {k: v for k, v in sol.items() if k != drop}
    with pytest.raises(ValueError) as e:
        certify(inst, sol)
    assert words in str(e.value)


def test_certify_accepts_a_minimal_svm_dict(p1):
    inst, sol = p1
    minimal = {k: inst[k] for k in ("task", "K", "y", "C", "eta", "tau")}
    assert certify(minimal, dict(alpha=sol["alpha"]), reference=False)["certified"]


# ---------------------------------------------------------------------------------------------
# instances given by features: X, the kernel and its parameters
# ---------------------------------------------------------------------------------------------
KERNELS = {"gaussian": dict(sigma=0.7), "linear": {},
           "polynomial": dict(degree=2, gamma=0.5, coef0=1.0)}


def _features_case(task, n, seed=0, d=3):
    """X, y, the task's parameters and a feasible point (not optimal)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    C = 0.8
    a = np.where(rng.random(n) < 0.3, C * rng.uniform(0.1, 1.0, n), 0.0)
    if task == "svr":
        t = X[:, 0] + 0.1 * rng.standard_normal(n)
        ah, ac = a.copy(), a[::-1].copy()
        ac *= ah.sum() / ac.sum()
        return X, t, dict(C=C, eta=0.5, tau=0.01, epsilon=0.1), dict(alpha_hat=ah,
                                                                   alpha_check=ac)
    if task == "decomposed":
        return X, y, dict(C=C, eta=0.5, labels=np.arange(n) % 4), dict(alpha=a)
    p, m = float(a[y > 0].sum()), float(a[y < 0].sum())
    a[y > 0 if p > m else y < 0] *= min(p, m) / max(p, m)
    return X, y, dict(C=C, eta=0.5, tau=0.01), dict(alpha=a)


def _file_report(tmp_path, task, X, y, kernel, params, inst_kw, sol_kw, **load):
    from verification.formats import save_instance, save_solution

    save_instance(tmp_path / "i.npz", task=task, X=X, kernel=kernel, y=y, **params, **inst_kw)
    save_solution(tmp_path / "s.npz", task=task, **sol_kw)
    inst = load_instance(tmp_path / "i.npz", **load)
    return certify(inst, load_solution(tmp_path / "s.npz", inst["n"]), tol=1e-9)


@pytest.mark.parametrize("task", ["svm", "svr", "decomposed"])
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_features_give_the_file_routes_report(tmp_path, task, kernel):
    """``X`` with its kernel below the dense limit: the very report of the file route."""
    X, y, inst_kw, sol_kw = _features_case(task, 30, seed=len(kernel))
    ref = _file_report(tmp_path, task, X, y, kernel, KERNELS[kernel], inst_kw, sol_kw)
    rep = verification.certify_arrays(X=X, y=y, kernel=kernel, task=task, tol=1e-9,
                                      **KERNELS[kernel], **inst_kw, **sol_kw)
    assert rep == ref and "route" not in rep


@pytest.fixture(autouse=True)
def _one_blas_thread():
    """The dense route's ``eigh`` on one BLAS thread (the faster one on shared cores)."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _dense_and_blockwise(task, n, block_rows, sol_kw=None, seed=1, **extra):
    X, y, inst_kw, kw = _features_case(task, n, seed=seed)
    kw = kw if sol_kw is None else sol_kw
    args = dict(X=X, y=y, kernel="gaussian", sigma=1.3, task=task, **inst_kw, **kw, **extra)
    dense = verification.certify_arrays(**args)
    calls = []
    block = verification.certify_arrays(**args, max_dense_bytes=0, block_rows=block_rows,
                                        progress=lambda *c: calls.append(c))
    return dense, block, calls


def _same_verdict(dense, block):
    """The two routes' brackets at the point agree; the dense route's upper bound may be
    tighter (a Newton step of the fixed-F problem), so it certifies whatever the blockwise
    route certifies and fails no check the blockwise route passes."""
    assert block["lower"] == pytest.approx(dense["lower"], rel=1e-9, abs=1e-12)
    assert block["upper"] == pytest.approx(dense["upper_at_point"], rel=1e-9, abs=1e-12)
    assert block["upper_at_point"] == block["upper"]
    assert dense["upper"] <= block["upper"] + 1e-12 * abs(block["upper"])
    assert set(dense["failed"]) <= set(block["failed"])
    assert dense["certified"] or not block["certified"]
    for name, ch in dense["checks"].items():
        if name not in ("F", "gap"):
            assert block["checks"][name]["status"] == ch["status"], name


@pytest.mark.parametrize("task, n", [("svm", 700), ("svr", 500), ("decomposed", 3000)])
def test_beyond_the_dense_limit_the_blockwise_route_matches_the_dense_one(task, n):
    """``max_dense_bytes=0`` forces the blockwise route (small ``block_rows``, many blocks):
    the same verdict and bracket as the dense route on the same instance; its progress
    reports every row block (or cluster) done."""
    dense, block, calls = _dense_and_blockwise(task, n, block_rows=97)
    assert "route" in block and "route" not in dense
    _same_verdict(dense, block)
    assert not dense["certified"] and "gap" in dense["failed"]  # an arbitrary point
    done = {}
    for phase, k, total in calls:
        assert 0 <= k <= total
        done[phase] = (k, total)
    assert done and all(k == total for k, total in done.values())
    if task == "decomposed":
        assert done == {"clusters": (4, 4)}
    else:
        assert max(total for _, total in done.values()) >= n // 97 // 3


def test_a_solution_is_certified_by_both_routes_and_a_wrong_bias_rejected():
    from dank_fast import solve_svm

    X, y, inst_kw, _ = _features_case("svm", 600, seed=5)
    K = verification.formats.kernel_from_X(X, "gaussian", sigma=1.3)
    r = solve_svm(K, y, method="newton", tol=1e-12, **inst_kw)
    for bias, ok in ((r.bias, True), (r.bias + 0.3, False)):
        dense, block, _ = _dense_and_blockwise("svm", 600, 50, seed=5,
                                               sol_kw=dict(alpha=r.alpha, bias=bias))
        _same_verdict(dense, block)
        assert dense["certified"] is ok and (ok or dense["failed"] == ["bias"])


X12 = np.random.default_rng(3).standard_normal((12, 2))


@pytest.mark.parametrize("over, exc, words", [
    (dict(K=np.eye(12)), ValueError, "give exactly one of K or X, not both"),
    (dict(X=None), TypeError, "K or X is required"),
    (dict(X="abc"), TypeError, "X must be a real numeric array"),
    (dict(X=X12[:, 0]), ValueError, "X must be a 2-D array (n points x d features)"),
    (dict(X=np.where(np.arange(24).reshape(12, 2) == 15, np.nan, X12)), ValueError,
     "X contains NaN or infinity (at index (7, 1): row 7 of 12)"),
    (dict(kernel=None), TypeError, "kernel must be a string"),
    (dict(kernel="rbf"), ValueError, "kernel must be one of ('gaussian', 'linear', "
     "'polynomial')"),
    (dict(gamma=1.0), ValueError, "the gaussian kernel needs exactly one of sigma or gamma"),
    (dict(sigma=-1.0), ValueError, "sigma must be a finite number > 0"),
    (dict(kernel="linear"), ValueError, "sigma not used by the linear kernel"),
    (dict(kernel="polynomial", sigma=None, degree=2, gamma=1.0), TypeError,
     "coef0 required by the polynomial kernel"),
    (dict(kernel="polynomial", sigma=None, degree=0, gamma=1.0, coef0=0.0), ValueError,
     "degree must be >= 1"),
    (dict(kernel="polynomial", sigma=None, degree=2.0, gamma=1.0, coef0=0.0), TypeError,
     "degree must be an integer"),
    (dict(kernel="polynomial", sigma=None, degree=2, gamma=1.0, coef0=-1.0), ValueError,
     "coef0 must be a finite number >= 0"),
    (dict(alpha=np.ones(11)), ValueError, "alpha must be shape (12,)"),
    (dict(max_dense_bytes=-1), ValueError, "max_dense_bytes must be an integer >= 0"),
    (dict(block_rows=0), ValueError, "block_rows must be an integer >= 1"),
    (dict(progress="yes"), TypeError, "progress must be a callable"),
])
def test_bad_feature_input_names_the_argument(p1, over, exc, words):
    inst, sol = p1
    kw = dict(X=X12, kernel="gaussian", sigma=1.0, y=inst["y"], C=1.0, eta=1.0, tau=0.01,
              alpha=sol["alpha"])
    kw.update(over)
    with pytest.raises(exc) as e:
        verification.certify_arrays(**kw)
    assert words in str(e.value)


def test_a_short_alpha_is_refused_before_the_kernel_is_tested_or_formed(p1):
    """The cheap checks come first: with an indefinite ``K`` (or a kernel of ``X`` that
    overflows) and an ``alpha`` one entry short, the error names ``alpha``."""
    inst, sol = p1
    short = dict(C=1.0, eta=1.0, tau=0.01, alpha=sol["alpha"][:-1])
    with pytest.raises(ValueError, match=r"alpha must be shape \(12,\)"):
        verification.certify_arrays(-np.eye(12), inst["y"], **short)
    huge = dict(X=np.full((12, 1), 1e200), kernel="linear")
    with pytest.raises(ValueError, match=r"alpha must be shape \(12,\)"):
        verification.certify_arrays(y=inst["y"], **huge, **short)
    with pytest.raises(ValueError, match="overflows double precision"):
        verification.certify_arrays(y=inst["y"], **huge, **dict(short, alpha=sol["alpha"]))
