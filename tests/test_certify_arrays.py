"""verification.certify_arrays (issue 16 item 3): the oracle on arrays, every bad or missing
input a TypeError / ValueError naming the argument; certify() never raises a bare KeyError."""

from __future__ import annotations

import numpy as np
import pytest

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
