"""Hypothesis strategies of the fuzz tests: malformed and extreme inputs.

Arrays of every dtype and shape, NaN/inf placement, scaled indefinite / non-symmetric
kernels, rank-one and zero kernels, duplicate points, labels, scalars, cluster labels,
features and kernel parameters.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

# --------------------------------------------------------------------------- strategies
FLOAT_DTYPES = [np.float64, np.float32, np.float16, np.longdouble]
INT_DTYPES = [np.int64, np.int32, np.int8, np.uint8, np.uint64]


def log_uniform(lo: float, hi: float):
    """Floats ``10^x`` for ``x`` uniform in ``[lo, hi]``."""
    return st.floats(lo, hi, allow_nan=False).map(lambda e: float(10.0**e))


@st.composite
def psd_kernels(draw, n: int | None = None, max_n: int = 7, extreme: bool = False):
    """A valid PSD kernel of a chosen structure, possibly scaled (1e-12 .. 1e12) or cast."""
    if n is None:
        n = draw(st.integers(1, max_n))
    kind = draw(st.sampled_from(["gaussian", "gaussian", "linear", "rank-one", "zero",
                                 "duplicates", "identity", "integer"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    d = draw(st.integers(1, 3))
    if kind in ("gaussian", "duplicates"):
        X = rng.normal(size=(n, d))
        if kind == "duplicates" and n > 1:
            X[rng.integers(0, n, size=n // 2 + 1)] = X[0]
        sigma = float(10.0 ** draw(st.floats(-1, 1)))
        D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
        K = np.exp(-D / (2 * sigma**2))
    elif kind == "linear":
        X = rng.normal(size=(n, d))
        K = X @ X.T
    elif kind == "rank-one":
        u = rng.normal(size=n)
        u[rng.random(n) < 0.2] = 0.0
        K = np.outer(u, u)
    elif kind == "zero":
        K = np.zeros((n, n))
    elif kind == "identity":
        K = np.diag(rng.random(n) + draw(st.sampled_from([0.0, 1.0])))
    else:
        Xi = rng.integers(-3, 4, size=(n, d))
        K = (Xi @ Xi.T).astype(draw(st.sampled_from([np.int64, np.int32, np.int8])))
        return K
    K = 0.5 * (K + K.T)
    if extreme:
        scale = float(10.0 ** draw(st.integers(-150, 150)))
    else:
        scale = float(10.0 ** draw(st.integers(-12, 12)))
    K = K * scale
    dtype = draw(st.sampled_from([np.float64, np.float64, np.float64, np.float32,
                                  np.float16, np.longdouble]))
    with np.errstate(over="ignore", under="ignore"):
        K = K.astype(dtype)
    if draw(st.booleans()) and n > 1 and K.dtype == np.float64:
        K = np.asfortranarray(K)
    return K


@st.composite
def bad_kernels(draw, n: int | None = None, max_n: int = 7):
    """An invalid (or borderline) kernel: asymmetric, indefinite, non-finite, wrong kind/shape."""
    if n is None:
        n = draw(st.integers(1, max_n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scale = float(10.0 ** draw(st.integers(-12, 12)))
    kind = draw(st.sampled_from(["asym", "indefinite", "nan", "inf", "complex", "bool",
                                 "object", "str", "0d", "1d", "empty", "nonsquare", "3d",
                                 "none", "ragged", "neg-eig-small", "asym-small"]))
    base = rng.normal(size=(n, n))
    base = base @ base.T + np.eye(n)
    if kind == "asym":
        E = rng.normal(size=(n, n))
        E[np.diag_indices(n)] = 0.0
        if n == 1:
            return np.array([[np.nan]]) if draw(st.booleans()) else np.array([[-1.0]]) * scale
        return (base + 10.0 ** draw(st.floats(-6, 0)) * np.abs(base).max() * E) * scale
    if kind == "asym-small":  # near the symmetry tolerance: either outcome is allowed
        E = np.triu(rng.normal(size=(n, n)), 1)
        return (base + 10.0 ** draw(st.floats(-12, -8)) * np.abs(base).max() * E) * scale
    if kind == "indefinite":
        w, Q = np.linalg.eigh(base)
        w[0] = -10.0 ** draw(st.floats(-5, 0)) * w[-1]
        K = (Q * w) @ Q.T
        return 0.5 * (K + K.T) * scale
    if kind == "neg-eig-small":  # around the PSD tolerance
        w, Q = np.linalg.eigh(base)
        w[0] = -10.0 ** draw(st.floats(-10, -6)) * n * w[-1]
        K = (Q * w) @ Q.T
        return 0.5 * (K + K.T) * scale
    if kind in ("nan", "inf"):
        K = base * scale
        i, j = rng.integers(0, n, size=2)
        val = np.nan if kind == "nan" else draw(st.sampled_from([np.inf, -np.inf]))
        K[i, j] = val
        if draw(st.booleans()):
            K[j, i] = val
        return K
    if kind == "complex":
        return (base * scale).astype(complex) + 1j * draw(st.sampled_from([0.0, 1e-300, 1.0]))
    if kind == "bool":
        return np.eye(n, dtype=bool)
    if kind == "object":
        return (base * scale).astype(object)
    if kind == "str":
        return (base * scale).astype(str)
    if kind == "0d":
        return np.float64(scale)
    if kind == "1d":
        return np.ones(n) * scale
    if kind == "empty":
        return np.zeros(draw(st.sampled_from([(0, 0), (0,), (0, 3)])))
    if kind == "nonsquare":
        return np.ones((n, n + 1)) * scale
    if kind == "3d":
        return np.ones((n, n, 1)) * scale
    if kind == "none":
        return None
    return [[1.0] * n] * (n - 1) + [[1.0] * (n + 1)]  # ragged


def kernels(max_n: int = 7, n: int | None = None, extreme: bool = False, good=None):
    """Valid kernels (``good=True``), invalid or borderline ones (``False``), or either."""
    if good is True:
        return psd_kernels(n=n, max_n=max_n, extreme=extreme)
    if good is False:
        return bad_kernels(n=n, max_n=max_n)
    return st.one_of(psd_kernels(n=n, max_n=max_n, extreme=extreme),
                     bad_kernels(n=n, max_n=max_n))


def bad_params(*params: str, max_bad: int = 2):
    """Which parameters of an example to corrupt: none in about 60% of the examples."""
    some = st.frozensets(st.sampled_from(params), min_size=1, max_size=max_bad)
    return st.integers(0, 9).flatmap(lambda k: st.just(frozenset()) if k < 6 else some)


@st.composite
def pm1_labels(draw, n: int, *, good: bool = True):
    """Labels for P1/P3: +-1 in various containers (``good``), or malformed ones."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    if n >= 2 and draw(st.booleans()):
        y[0], y[1] = 1.0, -1.0
    if good:
        form = draw(st.sampled_from(["f64", "int", "list", "f32", "i8"]))
        if form == "int":
            return y.astype(np.int64)
        if form == "list":
            return [int(v) for v in y]
        if form == "f32":
            return y.astype(np.float32)
        if form == "i8":
            return y.astype(np.int8)
        return y
    kind = draw(st.sampled_from(["one-class", "strings", "bools", "01", "nan", "short",
                                 "long", "2d", "complex", "object", "twos", "none", "inf"]))
    if kind == "one-class":
        return np.full(n, draw(st.sampled_from([1.0, -1.0])))
    if kind == "strings":
        return np.where(y > 0, "a", "b")
    if kind == "bools":
        return y > 0
    if kind == "01":
        return (y > 0).astype(np.int64)
    if kind in ("nan", "inf"):
        y = y.copy()
        y[draw(st.integers(0, n - 1))] = np.nan if kind == "nan" else np.inf
        return y
    if kind == "short":
        return y[:-1]
    if kind == "long":
        return np.append(y, 1.0)
    if kind == "2d":
        return y[:, None]
    if kind == "complex":
        return y.astype(complex)
    if kind == "object":
        return y.astype(object)
    if kind == "twos":
        return 2.0 * y
    return None


@st.composite
def real_targets(draw, n: int, *, good: bool = True):
    """Targets for P2: finite reals, possibly huge or tiny (``good``), or malformed ones."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    y = rng.normal(size=n) * float(10.0 ** draw(st.integers(-6, 6)))
    if good:
        form = draw(st.sampled_from(["f64", "const", "int", "list", "f32"]))
        if form == "const":
            return np.full(n, y[0])
        if form == "int":
            return np.round(y).astype(np.int64)
        if form == "list":
            return y.tolist()
        if form == "f32":
            return y.astype(np.float32)
        return y
    kind = draw(st.sampled_from(["nan", "inf", "strings", "bools", "short", "2d", "complex",
                                 "object", "none"]))
    if kind in ("nan", "inf"):
        y[draw(st.integers(0, n - 1))] = np.nan if kind == "nan" else -np.inf
        return y
    if kind == "strings":
        return y.astype(str)
    if kind == "bools":
        return y > 0
    if kind == "short":
        return y[1:]
    if kind == "2d":
        return y[None, :]
    if kind == "complex":
        return y + 0j
    if kind == "object":
        return y.astype(object)
    return None


def good_positive(lo: float = -4, hi: float = 4):
    """Valid positive reals of several Python/NumPy types."""
    return st.one_of(
        log_uniform(lo, hi),
        log_uniform(lo, hi).map(np.float64),
        log_uniform(max(lo, -30), min(hi, 30)).map(np.float32),
        st.integers(1, 1000),
        st.integers(1, 1000).map(np.int64),
    )


BAD_SCALARS = [0, 0.0, -1.0, -1e-300, float("nan"), float("inf"), -float("inf"), True, False,
               np.bool_(True), "1.0", None, 1 + 0j, complex(1, 1), [1.0], np.float64("nan"),
               10**400, -(10**400), np.array([1.0]), np.array(1.0), b"1"]


def positive_scalars(lo: float = -4, hi: float = 4, good: bool = True):
    """``C``, ``eta``: valid reals of several types, sometimes extreme (1e-300 .. 1e300, which
    may leave the representable range); or anything from :data:`BAD_SCALARS`."""
    if not good:
        return st.sampled_from(BAD_SCALARS)
    return st.integers(0, 7).flatmap(
        lambda k: log_uniform(-300, 300) if k == 0 else good_positive(lo, hi))


def nonneg_scalars(hi: float = 1.0, good: bool = True):
    """``tau``, ``epsilon``: zero or positive reals (``good``), or bad scalars."""
    if not good:
        return st.sampled_from([v for v in BAD_SCALARS if v is not False and v != 0] + [-0.5])
    return st.one_of(st.just(0.0), st.just(0), log_uniform(-6, hi), log_uniform(-6, hi),
                     log_uniform(-6, hi).map(np.float64))


def iteration_limits(good: bool = True):
    """``max_iter``: None or small integers of several types (``good``), or bad values."""
    if not good:
        return st.sampled_from([0, -1, 1.0, 2.5, True, "10", float("nan"), np.int8(0)])
    return st.one_of(st.none(), st.integers(1, 30), st.integers(1, 30).map(np.int64))


def tolerances(good: bool = True):
    """``tol``: 1e-12 .. 1e-1, or 1e-300 / 1e300 (``good``); or bad values."""
    if not good:
        return st.sampled_from([0.0, -1e-6, float("nan"), float("inf"), "1e-6", True, None])
    return st.one_of(log_uniform(-12, -1), log_uniform(-12, -1), st.sampled_from([1e-300, 1e300]))


@st.composite
def cluster_labels(draw, n: int, *, good: bool = True):
    """P3 ``labels=``: ints, floats, strings, tuples, mixed objects, bools (``good``); or
    NaN, None, wrong length, 2-D, a set, a string, unhashable values."""
    k = draw(st.integers(1, max(1, n)))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    codes = rng.integers(0, k, size=n)
    kind = draw(st.sampled_from(["int", "int", "float", "str", "tuple", "mixed", "bool",
                                 "numpy-str"] if good else
                                ["nan", "none", "short", "2d", "set", "string",
                                 "list-values"]))
    if kind == "int":
        return codes if draw(st.booleans()) else codes.tolist()
    if kind == "float":
        return codes.astype(float)
    if kind == "str":
        return [f"c{c}" for c in codes]
    if kind == "numpy-str":
        return np.array([f"c{c}" for c in codes])
    if kind == "tuple":
        return [(int(c), "x") for c in codes]
    if kind == "mixed":
        return [int(c) if c % 2 else f"c{c}" for c in codes]
    if kind == "bool":
        return codes % 2 == 0
    if kind == "nan":
        out = codes.astype(float)
        out[draw(st.integers(0, n - 1))] = np.nan
        return out if draw(st.booleans()) else out.tolist()
    if kind == "none":
        out = codes.tolist()
        out[draw(st.integers(0, n - 1))] = None
        return out
    if kind == "short":
        return codes[:-1]
    if kind == "2d":
        return codes[:, None]
    if kind == "set":
        return set(range(n))
    if kind == "string":
        return ("ab" * n)[:n]
    return [[int(c)] for c in codes]  # list values: not hashable


# --------------------------------------------------------------------------- features, kernels
@st.composite
def features(draw, max_n: int = 7, *, good: bool = True, n: int | None = None):
    """Feature matrices: finite floats/ints/bools with duplicate rows and scales 1e-3 .. 1e3
    (``good``), or NaN/inf, 1-D, empty, no columns, complex, strings."""
    if n is None:
        n = draw(st.integers(1, max_n))
    d = draw(st.integers(1, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    X = rng.normal(size=(n, d)) * float(10.0 ** draw(st.integers(-3, 3)))
    if n > 2 and draw(st.booleans()):
        X[1] = X[0]
    kinds = (["f64"] * 4 + ["f32", "int", "bool", "fortran", "list"] if good else
             ["nan", "inf", "1d", "empty", "nocols", "complex", "str", "object", "3d"])
    kind = draw(st.sampled_from(kinds))
    if kind == "f32":
        return X.astype(np.float32)
    if kind == "int":
        return np.round(X).astype(np.int64)
    if kind == "bool":
        return X > 0
    if kind == "fortran":
        return np.asfortranarray(X)
    if kind == "list":
        return X.tolist()
    if kind in ("nan", "inf"):
        X[draw(st.integers(0, n - 1)), 0] = np.nan if kind == "nan" else np.inf
        return X
    if kind == "1d":
        return X[:, 0]
    if kind == "empty":
        return np.zeros((0, d))
    if kind == "nocols":
        return np.zeros((n, 0))
    if kind == "complex":
        return X + 0j
    if kind == "str":
        return X.astype(str)
    if kind == "object":
        return X.astype(object)
    if kind == "3d":
        return X[:, :, None]
    return X


def _widths():
    return st.floats(-2, 2).map(lambda e: float(10.0**e))


@st.composite
def kernel_specs(draw, *, good: bool = True, precomputed: bool = False):
    """Keyword arguments of FeatureKernel / compute_kernel / the estimators' kernel."""
    names = ["rbf", "gaussian", "linear", "poly"] + (["precomputed"] if precomputed else [])
    kernel = draw(st.sampled_from(names))
    kw: dict = {"kernel": kernel}
    if kernel in ("rbf", "gaussian") and draw(st.booleans()):
        kw[draw(st.sampled_from(["sigma", "gamma"]))] = draw(_widths())
    if kernel == "poly":
        if draw(st.booleans()):
            kw["gamma"] = draw(_widths())
        kw["degree"] = draw(st.sampled_from([1, 2, 3, 2.0, np.int64(2)]))
        kw["coef0"] = draw(st.sampled_from([0.0, 1.0, 0.5, np.float32(2.0), 1]))
    if good:
        return kw
    what = draw(st.sampled_from(["kernel", "sigma", "gamma", "both", "poly-sigma", "degree",
                                 "coef0"]))
    if what == "kernel":
        kw["kernel"] = draw(st.sampled_from(["sigmoid", "RBF", None, 3, ""] +
                                            ([] if precomputed else ["precomputed"])))
    elif what in ("sigma", "gamma"):
        kw["kernel"] = "rbf" if kernel not in ("rbf", "gaussian", "poly") else kernel
        if kw["kernel"] == "poly" and what == "sigma":
            what = "gamma"
        kw.pop("sigma", None), kw.pop("gamma", None)
        kw[what] = draw(st.sampled_from([0.0, -1.0, "1", float("nan"), float("inf"), True,
                                         1e-200 if what == "sigma" else -1e-300]))
    elif what == "both":
        kw.update(kernel="rbf", sigma=1.0, gamma=1.0)
    elif what == "poly-sigma":
        kw.update(kernel="poly", sigma=1.0)
    elif what == "degree":
        kw.update(kernel="poly", degree=draw(st.sampled_from(
            [0, -1, 2.5, True, "2", float("nan"), 10**400, None])))
    else:
        kw.update(kernel="poly", coef0=draw(st.sampled_from(
            [-1.0, -1e-300, float("nan"), float("inf"), "1", True, None])))
    return kw
