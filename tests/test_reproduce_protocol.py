"""The experimental protocol of dank-reproduce on tiny synthetic sets (no data files needed).

What would fail here: a test (or validation) row reaching a fit, CV folds that differ between
methods of a split, unstratified or overlapping splits, a rank(F) that is not MATLAB's numerical
rank, an MKL kernel that is not the uniform mean, warnings swallowed, a cell that raises.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel

from dank_fast import compute_kernel, solve_svm
from verification.study.experiments import protocol as P
from verification.study.experiments.data import (
    DataDirError,
    Dataset,
    _read_csv,
    load_dataset,
    make_split,
    resolve_data_dir,
)

TINY = (0.5, 2.0)


def _cls_dataset(n=40, seed=0, name="toy"):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.arange(n), rng.normal(size=(n, 2))])  # column 0 = row id
    y = np.where(X[:, 1] + 0.3 * rng.normal(size=n) > 0, "a", "b")
    return Dataset(name, "classification", X, y)


def _reg_dataset(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.arange(n), rng.uniform(-1, 1, size=(n, 2))])
    y = np.sin(3 * X[:, 1]) + 0.1 * rng.normal(size=n)
    return Dataset("toyreg", "regression", X, y)


def _ids(X) -> frozenset:
    return frozenset(np.rint(np.asarray(X)[:, 0]).astype(int).tolist())


class Spy:
    """Wraps an estimator; logs the row ids it is fitted on and asked to predict."""

    def __init__(self, inner, log):
        self.inner, self.log, self.fitted = inner, log, None

    def fit(self, X, y):
        self.fitted = _ids(X)
        self.log.append(("fit", self.fitted))
        self.inner.fit(X, y)
        return self

    def predict(self, X):
        self.log.append(("predict", _ids(X), self.fitted))
        return self.inner.predict(X)

    def __getitem__(self, i):
        return self.inner[i]

    def __getattr__(self, name):
        return getattr(self.inner, name)


BUILDERS = {"svm-cv": "_svm", "mkl-uniform": "_mkl", "dank-cv": "_dank", "svr-cv": "_svr",
            "dank-svr-cv": "_dank_svr"}


@pytest.mark.parametrize("method", sorted(BUILDERS))
def test_no_test_row_reaches_any_fit_and_cv_folds_are_disjoint(method, monkeypatch):
    proto = P.Protocol(sigma_grid=TINY, C_grid=TINY, n_splits=1, taus=(0.0, 0.01))
    ds = _reg_dataset() if method.endswith("svr-cv") or method == "svr-cv" else _cls_dataset()
    log = []
    orig = getattr(P, BUILDERS[method])
    monkeypatch.setattr(P, BUILDERS[method], lambda *a, **k: Spy(orig(*a, **k), log))
    rec = P.run_cell(P.Cell(ds.name, 0, method), ds, proto)
    assert rec["status"] == "ok", rec.get("traceback")
    Xtr, _, Xte, _, folds = P.split_context(ds, 0, proto)
    train, test = _ids(Xtr), _ids(Xte)
    assert train.isdisjoint(test) and len(train | test) == ds.y.size
    fits = [e[1] for e in log if e[0] == "fit"]
    assert fits and all(f.isdisjoint(test) for f in fits)  # the test half never trains
    cv_fits = [f for f in fits if f != train]
    n_cand = len(TINY) if method == "mkl-uniform" else len(TINY) ** 2
    assert len(cv_fits) == n_cand * proto.n_folds
    fold_train = [_ids(Xtr[tr]) for tr, _ in folds]
    assert all(f in fold_train for f in cv_fits)
    for e in log:
        if e[0] == "predict" and e[2] != train:  # a CV fit predicts its validation fold only
            assert e[1].isdisjoint(e[2]) and (e[1] | e[2]) == train
    n_final = {"dank-cv": len(proto.taus)}.get(method, 1)
    assert sum(f == train for f in fits) == n_final


def test_folds_shared_by_methods_and_stratified():
    proto = P.Protocol(sigma_grid=TINY, C_grid=TINY, n_splits=2)
    ds = _cls_dataset(n=60)
    a = P.split_context(ds, 1, proto)[4]
    b = P.split_context(ds, 1, proto)[4]
    assert all(np.array_equal(x[1], y[1]) for x, y in zip(a, b, strict=True))
    c = P.split_context(ds, 0, proto)[4]
    assert not all(np.array_equal(x[1], y[1]) for x, y in zip(a, c, strict=True))
    ytr = P.split_context(ds, 1, proto)[1]
    share = np.mean(ytr == "a")
    for _, va in a:
        assert abs(np.mean(ytr[va] == "a") - share) <= 1.0 / va.size + 1e-12


def test_split_is_stratified_disjoint_and_seeded():
    ds = _cls_dataset(n=61)
    Xtr, ytr, Xte, yte = make_split(ds, 0, seed=3)
    assert ytr.size == 30 and yte.size == 31
    assert _ids(Xtr).isdisjoint(_ids(Xte))
    for c in ("a", "b"):
        assert abs(np.sum(ytr == c) - np.sum(ds.y == c) / 2) <= 1
    again = make_split(ds, 0, seed=3)[0]
    assert np.array_equal(Xtr, again)
    assert not np.array_equal(Xtr, make_split(ds, 1, seed=3)[0])
    assert not np.array_equal(Xtr, make_split(ds, 0, seed=4)[0])


def test_official_split_is_fixed():
    d = _cls_dataset(n=20)
    ds = Dataset("off", "classification", d.X[:12], d.y[:12], d.X[12:], d.y[12:])
    for s in (0, 5):
        Xtr, ytr, Xte, yte = make_split(ds, s, seed=0)
        assert np.array_equal(Xtr, d.X[:12]) and np.array_equal(Xte, d.X[12:])


def test_rank_is_matlab_numerical_rank():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    K = compute_kernel(X, sigma=1.0)
    res0 = solve_svm(K, y, C=1.0, eta=3.0, tau=0.0, tol=1e-8)
    F = res0.F
    tol = F.shape[0] * np.spacing(np.linalg.norm(F, 2))  # MATLAB: max(size) * eps(norm)
    assert P.rank_of(res0)["rank"] == np.linalg.matrix_rank(F, tol=tol)
    assert P.rank_of(res0)["kept"] is None
    tau = 0.05
    res = solve_svm(K, y, C=1.0, eta=3.0, tau=tau, tol=1e-8)
    d = res.alpha * y
    ev = np.linalg.eigvalsh(np.ones((30, 30)) + np.outer(d, d) * K / (4 * 3.0))
    expected = int(np.sum(ev > tau / 2))  # eigenvalues that survive the soft-threshold
    r = P.rank_of(res)
    assert r["rank"] == r["kept"] == expected
    assert 1 <= expected < r["by_rtol"]["1e-12"] + 1


def test_mkl_kernel_is_the_uniform_mean():
    rng = np.random.default_rng(0)
    A, B = rng.uniform(size=(5, 3)), rng.uniform(size=(4, 3))
    sig = (0.25, 1.0, 4.0)
    want = np.mean([rbf_kernel(A, B, gamma=1 / (2 * s * s)) for s in sig], axis=0)
    np.testing.assert_allclose(P.MKLUniformSVC(sigmas=sig)._kernel(A, B), want, rtol=1e-12)


def test_candidates_tie_break_order():
    proto = P.Protocol(sigma_grid=(1.0, 4.0), C_grid=(8.0, 0.5))
    assert proto.candidates() == [(0.5, 4.0), (0.5, 1.0), (8.0, 4.0), (8.0, 1.0)]


@pytest.mark.parametrize("kw", [dict(sigma_grid=()), dict(C_grid=(1.0, -1.0)),
                                dict(tau=0.5), dict(readings=("x",)), dict(n_folds=1),
                                dict(spect_split="all"), dict(epsilon=float("nan"))])
def test_protocol_rejects_bad_settings(kw):
    with pytest.raises(ValueError):
        P.Protocol(**kw)


def test_fingerprint_changes_with_settings():
    a = P.Protocol()
    assert a.fingerprint() == P.Protocol().fingerprint()
    for kw in (dict(seed=1), dict(epsilon=0.2), dict(C_grid=(1.0,)), dict(stratify=False)):
        assert P.Protocol(**kw).fingerprint() != a.fingerprint(), kw


def test_warnings_are_counted_not_suppressed():
    # 3 members of class "b" with 5 folds: scikit-learn warns (UserWarning) in StratifiedKFold
    X = np.column_stack([np.arange(30), np.linspace(-1, 1, 30)])
    y = np.array(["a"] * 24 + ["b"] * 6)
    ds = Dataset("warn", "classification", X, y)
    proto = P.Protocol(sigma_grid=TINY, C_grid=TINY, n_splits=1)
    rec = P.run_cell(P.Cell("warn", 0, "svm-cv"), ds, proto)
    assert rec["status"] == "ok"
    assert rec["warnings"].get("UserWarning", 0) >= 1
    assert "least populated class" in rec["warning_examples"]["UserWarning"]


def test_cell_errors_are_recorded_not_raised():
    ds = _cls_dataset()
    proto = P.Protocol(sigma_grid=TINY, C_grid=TINY, n_splits=1)
    rec = P.run_cell(P.Cell(ds.name, 0, "dank-svm"), ds, proto, dep=None)
    assert rec["status"] == "error" and "needs a finished svm-cv" in rec["error"]
    with pytest.raises(ValueError, match="unknown method"):
        P.run_cell(P.Cell(ds.name, 0, "nope"), ds, proto)


def test_dank_cell_records_certificates_and_both_readings_agree_on_splits():
    ds = _cls_dataset(n=40)
    proto = P.Protocol(sigma_grid=TINY, C_grid=TINY, n_splits=1, taus=(0.0, 0.01))
    svm = P.run_cell(P.Cell(ds.name, 0, "svm-cv"), ds, proto)
    dk = P.run_cell(P.Cell(ds.name, 0, "dank-svm"), ds, proto, dep=svm)
    assert dk["status"] == "ok" and (dk["C"], dk["sigma"]) == (svm["C"], svm["sigma"])
    for t in ("0", "0.01"):
        fit = dk["taus"][t]
        for s in fit["solves"]:
            assert s["lower"] <= s["upper"] and s["rel_gap"] >= 0
            assert fit["certified"] == all(x["status"] == "converged" for x in fit["solves"])
        assert 0.0 <= fit["test_acc"] <= 1.0 and fit["rank"] >= 1


# ------------------------------------------------------------------------------- data files
def test_missing_data_dir_is_a_clear_error(tmp_path, monkeypatch):
    missing = tmp_path / "nope"
    with pytest.raises(DataDirError, match="does not exist"):
        resolve_data_dir(missing)
    monkeypatch.setenv("DANK_DATASETS", str(tmp_path))
    assert resolve_data_dir() == tmp_path
    with pytest.raises(DataDirError, match="heart.csv"):
        load_dataset("heart", tmp_path)
    with pytest.raises(ValueError, match="unknown data set"):
        load_dataset("iris", tmp_path)


@pytest.mark.parametrize("text, msg", [
    ("a,b,label\n1,2,x\n", "named 'target'"),
    ("a,b,target\n1,2,x\n1,2\n", "line 3"),
    ("a,b,target\n1,zz,x\n", "non-numeric feature"),
    ("a,b,target\n1,2,x\n", "non-numeric regression target"),
])
def test_csv_errors_name_the_problem(tmp_path, text, msg):
    p = tmp_path / "f.csv"
    p.write_text(text)
    with pytest.raises(ValueError, match=msg):
        _read_csv(p, numeric_target="regression" in msg)


def _data_dir():
    try:
        return resolve_data_dir()
    except DataDirError:
        return None


needs_data = pytest.mark.skipif(_data_dir() is None, reason="data sets not present")


@needs_data
def test_files_match_the_manifest():
    d = _data_dir()
    want = {"diabetic": (1151, 19), "heart": (270, 13), "monks1": (556, 6), "monks2": (601, 6),
            "monks3": (554, 6), "sonar": (208, 60), "spect": (267, 22), "glass": (214, 9),
            "fertility": (100, 9), "wine": (178, 13), "bodyfat": (252, 14), "pyrim": (74, 27),
            "space": (3107, 6), "triazines": (186, 60), "cpusmall": (8192, 12),
            "housing": (506, 13), "mg": (1385, 6), "mpg": (392, 7)}
    for name, (n, dim) in want.items():
        ds = load_dataset(name, d)
        assert (ds.n, ds.d) == (n, dim), name
    sp = load_dataset("spect", d)
    assert sp.official and sp.y.size == 80 and sp.y_test.size == 187
    pooled = load_dataset("spect", d, spect_split="random")
    assert not pooled.official and pooled.y.size == 267
    assert np.unique(load_dataset("glass", d).y).size == 6


class _Boom:
    def fit(self, X, y):
        raise ArithmeticError("solver exploded")


class _Const:
    def __init__(self, label):
        self.label = label

    def fit(self, X, y):
        return self

    def predict(self, X):
        return np.full(len(X), self.label)


def test_grid_search_excludes_candidates_whose_fit_raises():
    X = np.arange(20.0)[:, None]
    y = np.array(["a"] * 15 + ["b"] * 5)
    folds = P.make_folds(y, P.Protocol(n_folds=5), "t", 0, True)
    cands = [(1.0, 1.0), (2.0, 1.0), (3.0, 1.0)]

    def build(C, s):  # the best candidate (always "a": 75 %) fails
        return _Boom() if C == 1.0 else _Const("b" if C == 2.0 else "a")

    with pytest.raises(ArithmeticError):
        P.grid_search(build, cands, X, y, folds, classification=True)
    fails = []
    best, scores = P.grid_search(build, cands, X, y, folds, classification=True,
                                 failures=fails)
    assert best == 2 and np.isnan(scores[0]) and scores[2] == pytest.approx(0.75)
    assert len(fails) == 1 and fails[0]["C"] == 1.0 and "solver exploded" in fails[0]["error"]
    with pytest.raises(RuntimeError, match="every CV candidate failed"):
        P.grid_search(lambda C, s: _Boom(), cands, X, y, folds, classification=True,
                      failures=[])


def test_large_svr_solves_get_a_bounded_budget():
    """DANK-SVR on a training part above dank_cv_max_n: LARGE_SVR_MAX_ITER Newton steps and as
    many accelerated iterations of its fallback (an uncertified cpusmall solve ran for hours on
    the solver's default budget); below it, and whenever the protocol sets dank_max_iter, the
    protocol's value and the solver's own fallback budget."""
    proto = P.Protocol(dank_cv_max_n=50)

    def budget(model):
        reg = model.regressor[-1]
        return reg.max_iter, reg.solver_options

    large = P.LARGE_SVR_MAX_ITER
    assert budget(P._dank_svr(1.0, 1.0, proto, n=51)) == (large, {"fallback_iter": large})
    assert budget(P._dank_svr(1.0, 1.0, proto, n=50)) == (None, None)
    assert budget(P._dank_svr(1.0, 1.0, proto)) == (None, None)
    fixed = P.Protocol(dank_cv_max_n=50, dank_max_iter=7)
    assert budget(P._dank_svr(1.0, 1.0, fixed, n=500)) == (7, None)
