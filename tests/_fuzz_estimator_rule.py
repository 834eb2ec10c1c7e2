"""The fuzz tests' rule for the estimators' inputs, and their strategies for labels, targets
and parameters.

Every fit ends in a ``ValueError``/``TypeError`` naming the offending parameter or input (the
estimators' own parameter validation names parameters as ``'C'``; scikit-learn's input
validation names ``X``, ``y``, labels or samples), or in a fitted model whose every binary
problem carries a certified bracket ``lower <= upper`` at a feasible point that overlaps
dank_ref's certificate, and whose predictions are finite (regression) or classes (classifier).
"""

from __future__ import annotations

import re

import numpy as np
from _fuzz_inputs import log_uniform
from _fuzz_rule import EITHER, TYPE, VALUE, Verdict, kernel_rule, scalar_rule
from _fuzz_run import assert_bracket, assert_feasible, assert_overlap, call, ref_bracket
from hypothesis import strategies as st

#: what scikit-learn's input validation calls X and y in its messages
SYNONYMS = {
    "X": r"X|samples|features|sample|feature|kernel|K|array|Precomputed|data",
    "y": r"y|label|labels|class|classes|target|targets|samples",
}


def named(msg: str, name: str) -> bool:
    pat = SYNONYMS.get(name, re.escape(name))
    return bool(re.search(rf"(?<![A-Za-z_])({pat})(?![A-Za-z_])", msg))


def est_call(entry, v: Verdict, fn, info=None):
    """:func:`call` with the estimators' names (``'C'`` quoted by scikit-learn, X/y synonyms)."""
    return call(entry, v, fn, namer=named, info=info)


@st.composite
def class_labels(draw, n: int, *, good: bool = True):
    """Classification targets: 2-3 classes as ints, strings, bools, floats; or one class,
    NaN, None, continuous values, wrong length, 2-D."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    k = draw(st.sampled_from([2, 2, 3]))
    codes = np.arange(n) % k
    rng.shuffle(codes)
    if good:
        form = draw(st.sampled_from(["int", "str", "bool", "float", "pm1", "list"]))
        if form == "str":
            return np.array(["neg", "pos", "mid"])[codes]
        if form == "bool":
            return codes % 2 == 0
        if form == "float":
            return codes.astype(float) * 2.0  # integral floats: scikit-learn classes
        if form == "pm1":
            return np.where(codes % 2 == 0, -1, 1)
        if form == "list":
            return [int(c) for c in codes]
        return codes
    kind = draw(st.sampled_from(["one", "nan", "none", "continuous", "short", "2d", "inf"]))
    if kind == "one":
        return np.zeros(n, dtype=int)
    if kind in ("nan", "inf"):
        y = codes.astype(float)
        y[0] = np.nan if kind == "nan" else np.inf
        return y
    if kind == "none":
        y = codes.astype(object)
        y[0] = None
        return y
    if kind == "continuous":
        return rng.normal(size=n)
    if kind == "short":
        return codes[:-1]
    return codes[:, None] if n > 0 else codes


def labels_verdict(y, n) -> Verdict:
    v = Verdict()
    if np.ndim(y) == 2 and np.shape(y) == (n, 1):  # a column: scikit-learn ravels it (warning)
        v.unsure("y", EITHER)
        y = np.ravel(y)
    arr = np.asarray(y, dtype=object) if y is not None else None
    if arr is None or arr.ndim != 1 or arr.shape[0] != n:
        v.add("y", EITHER)
        return v
    vals = arr.tolist()
    if any(x is None for x in vals):
        v.add("y", EITHER)
        return v
    try:
        f = np.asarray(y, dtype=float)
        if not np.all(np.isfinite(f)):
            v.add("y", EITHER)
            return v
        if np.asarray(y).dtype.kind == "f" and np.any(f != np.round(f)):
            v.add("y", EITHER)  # continuous
            return v
    except (TypeError, ValueError):
        pass
    if len(set(vals)) < 2:
        v.add("y", EITHER)
    return v


def _params(draw, bad, *, classifier: bool, precomputed: bool):
    """Estimator parameters; corrupted ones named in ``bad``."""
    p: dict = {}
    p["C"] = draw(st.sampled_from([0.0, -1.0, float("nan"), "1", None, True]) if "C" in bad
                  else log_uniform(-2, 3))
    p["tau"] = draw(st.sampled_from([-0.1, float("nan"), "0", None]) if "tau" in bad
                    else st.sampled_from([0.0, 0.01, 0.5]))
    p["tol"] = draw(st.sampled_from([0.0, -1e-6, "1e-6", None]) if "tol" in bad
                    else st.sampled_from([1e-6, 1e-8, 1e-3]))
    p["max_iter"] = draw(st.sampled_from([0, 2.5, "10", True]) if "max_iter" in bad
                         else st.sampled_from([None, None, 5, 50]))
    if classifier:
        p["eta"] = draw(st.sampled_from(["SVM", 0.0, -1.0, None]) if "eta" in bad
                        else st.one_of(st.just("svm"), log_uniform(-2, 3)))
        p["method"] = draw(st.sampled_from(["Auto", None, "svr"]) if "method" in bad
                           else st.sampled_from(["auto", "newton", "accelerated"]))
        p["multi_class"] = draw(st.sampled_from(["ovo", "ovr"]))
        p["route"] = draw(st.sampled_from(["auto", "dense"] + ([] if precomputed else
                                                                ["working-set"])))
    else:
        p["eta"] = draw(st.sampled_from(["SVR", 0.0, -1.0, None]) if "eta" in bad
                        else st.one_of(st.just("svr"), log_uniform(-2, 3)))
        p["epsilon"] = draw(st.sampled_from([-0.1, float("nan"), None]) if "epsilon" in bad
                            else st.sampled_from([0.0, 0.01, 0.1]))
        p["method"] = draw(st.sampled_from(["auto", None]) if "method" in bad
                           else st.sampled_from(["newton", "accelerated"]))
    p["extension"] = draw(st.sampled_from(["Paper", None]) if "extension" in bad
                          else st.sampled_from(["paper", "nearest"]))
    if not precomputed and draw(st.integers(0, 7)) == 0:
        p["decomposition"] = draw(st.sampled_from([1, 2]))
    if "decomposition" in bad:
        p["decomposition"] = draw(st.sampled_from([0, 2.0, "2"] + ([2] if precomputed else [])))
    return p


def params_verdict(p, *, classifier: bool, precomputed: bool) -> Verdict:
    v = Verdict()
    for name, kind in (("C", "pos"), ("tau", "nonneg"), ("tol", "pos")):
        v.merge(scalar_rule(p[name], name, kind))
    if "epsilon" in p:
        v.merge(scalar_rule(p["epsilon"], "epsilon", "nonneg"))
    if p["max_iter"] is not None:
        v.merge(scalar_rule(p["max_iter"], "max_iter", "int"))
    eta = p["eta"]
    if isinstance(eta, str):
        if eta != ("svm" if classifier else "svr"):
            v.add("eta", EITHER)
    else:
        v.merge(scalar_rule(eta, "eta", "pos"))
    methods = (("auto", "newton", "accelerated", "paper", "paper-monotone", "pgm") if classifier
               else ("newton", "accelerated", "paper", "paper-monotone", "pgm"))
    if p["method"] not in methods:
        v.add("method", EITHER)
    if p["extension"] not in ("paper", "nearest"):
        v.add("extension", EITHER)
    dec = p.get("decomposition")
    if dec is not None:
        if isinstance(dec, bool) or not isinstance(dec, int) or dec < 1:
            v.add("decomposition", EITHER)
        elif precomputed:
            v.add("decomposition", VALUE)
    v.violations = [(nm, EITHER) for nm, _ in v.violations]  # InvalidParameterError is both
    return v


def _estimator_degree(kw) -> Verdict:
    """The estimators document ``degree : int`` (scikit-learn's constraint refuses 2.0, which
    compute_kernel accepts as an integral float)."""
    v = Verdict()
    deg = kw.get("degree")
    if isinstance(deg, float):
        v.add("degree", EITHER)
    return v


def _either(v: Verdict) -> Verdict:
    """scikit-learn's validate_data raises ValueError for what the rule calls a TypeError
    (complex data, strings): either type, as long as the message names the input."""
    v.violations = [(nm, EITHER) for nm, _ in v.violations]
    return v


def _dtype_kind(X) -> str:
    try:
        return np.asarray(X).dtype.kind
    except (TypeError, ValueError):
        return "?"


def _object_ok(X, v: Verdict) -> Verdict:
    """scikit-learn converts an object array of numbers (e.g. from pandas) or of numeric
    strings: for the estimators such an X may be accepted or refused (but see
    :func:`_strict_kernel_dtype`)."""
    arr = np.asarray(X) if X is not None and not isinstance(X, list) else None
    if arr is not None and arr.dtype.kind in "OUS" and [nm for nm, _ in v.violations] == ["X"]:
        try:
            f = arr.astype(float)
        except (TypeError, ValueError):
            return v
        if f.ndim == 2 and f.size and np.all(np.isfinite(f)):
            v.maybe += v.violations
            v.violations = []
    return v


def _precomputed_verdict(X):
    """The kernel rule for a precomputed X (named X, as scikit-learn does); an object array of
    numbers is judged by its values (and may also be refused)."""
    vX, Kx = kernel_rule(X)
    vX.violations = [("X", EITHER) for _ in vX.violations]
    vX.maybe = [("X", EITHER) for _ in vX.maybe]
    vX = _object_ok(X, vX)
    if vX.valid and Kx is None:
        vX, Kx = _precomputed_verdict(np.asarray(X).astype(float))
        vX.unsure("X", EITHER)
    return vX, Kx


def _strict_kernel_dtype(X, v: Verdict) -> Verdict:
    """DANKRegressor refuses a precomputed kernel of booleans or strings (validity.md rule 1)
    before scikit-learn would cast it."""
    if _dtype_kind(X) in "bUS":
        v.violations = [("X", TYPE)] + [x for x in v.violations if x[0] != "X"]
        v.maybe = [x for x in v.maybe if x[0] != "X"]
    return v


def _check_problem(res, K, y_pm, C, eta, tau, what):
    """Certified bracket, feasibility and the dank_ref cross-check of one binary problem."""
    n = y_pm.size
    assert_bracket(res.lower, res.upper, what)
    if hasattr(res, "blocks"):  # decomposition: P3, box only, certified on Kbar
        assert_feasible(res.alpha, C, n)
        return
    assert_feasible(res.alpha, C, n, y_pm)
    ref, scale = ref_bracket("svm", K, y_pm, res.alpha, C=C, eta=eta, tau=tau)
    assert_overlap((res.lower, res.upper), ref, scale, f"{what} vs dank_ref")


@st.composite
def reg_targets(draw, n: int, *, good: bool = True):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    y = rng.normal(size=n) * float(10.0 ** draw(st.integers(-3, 3)))
    if good:
        return draw(st.sampled_from([y, y.astype(np.float32), np.round(y * 10).astype(int)
                                     if np.ptp(np.round(y * 10)) > 0 else y, y.tolist()]))
    kind = draw(st.sampled_from(["const", "nan", "inf", "str", "short", "2d", "none"]))
    if kind == "const":
        return np.full(n, 1.5)
    if kind in ("nan", "inf"):
        y[0] = np.nan if kind == "nan" else np.inf
        return y
    if kind == "str":
        return np.array(["a"] * n)
    if kind == "short":
        return y[:-1]
    if kind == "2d":
        return np.stack([y, y], axis=1)
    return None


def targets_verdict(y, n) -> Verdict:
    v = Verdict()
    if y is None:
        v.add("y", EITHER)
        return v
    arr = np.asarray(y)
    if arr.dtype.kind not in "fiu" or arr.ndim != 1 or arr.shape[0] != n:
        v.add("y", EITHER)
        return v
    f = arr.astype(float)
    if not np.all(np.isfinite(f)) or np.ptp(f) == 0:
        v.add("y", EITHER)
    return v
