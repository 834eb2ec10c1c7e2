"""The re-run baselines of dank-reproduce: LogDet kernel learning, MLKR
Nadaraya-Watson, their cells and the tables (synthetic data, no data files).

What would fail here: a LogDet update that leaves the constraints violated, loses PSD-ness or
leaves the span of the representer form, that is not ITML for the linear kernel, an
out-of-sample kernel that disagrees with the training kernel on training points, a wrong MLKR
gradient, a cell that is not reproducible or escapes the protocol, the table pairing the
wrong splits, a results file without the baselines rendered differently.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.metrics.pairwise import rbf_kernel

from verification.study.experiments import paper
from verification.study.experiments.baselines import cells as BC
from verification.study.experiments.baselines.logdet import (
    LogDetKernelSVC,
    logdet_learn,
    sample_constraints,
)
from verification.study.experiments.baselines.nadaraya import (
    MLKRRegressor,
    NadarayaWatson,
    mlkr_loss_grad,
)
from verification.study.experiments.data import Dataset
from verification.study.experiments.protocol import Cell, Protocol, run_cell
from verification.study.experiments.tables import aggregate, render_report, verdicts

RNG = np.random.default_rng(7)
X = RNG.normal(size=(40, 3))
Y = np.where(X[:, 0] + 0.3 * RNG.normal(size=40) > 0, 1, 0)


def _problem(K0, m=30, lo=20, hi=80, seed=0):
    pairs, delta = sample_constraints(Y, m, np.random.default_rng(seed))
    d0 = K0[pairs[:, 0], pairs[:, 0]] + K0[pairs[:, 1], pairs[:, 1]] - 2 * K0[pairs[:, 0],
                                                                               pairs[:, 1]]
    return pairs, delta, np.where(delta > 0, np.percentile(d0, lo), np.percentile(d0, hi))


def _dist(K, pairs):
    i, j = pairs[:, 0], pairs[:, 1]
    return K[i, i] + K[j, j] - 2 * K[i, j]


def test_hard_logdet_satisfies_constraints_stays_psd_and_in_the_representer_span():
    K0 = rbf_kernel(X, X, gamma=0.3)
    pairs, delta, b = _problem(K0)
    assert np.any(delta * (_dist(K0, pairs) - b) > 1e-3)  # K0 violates some constraints
    S, K, info = logdet_learn(K0, pairs, delta, b, np.inf, tol=1e-10, max_sweeps=5000)
    assert info["converged"]
    assert np.max(delta * (_dist(K, pairs) - b)) < 1e-6
    assert np.linalg.eigvalsh(K).min() > 0  # LogDet keeps K positive definite
    np.testing.assert_allclose(K, K0 + K0 @ S @ K0, atol=1e-9)
    # S = K0^-1 (K - K0) K0^-1, by solves (K0 is well conditioned here)
    S2 = np.linalg.solve(K0, np.linalg.solve(K0, K - K0).T).T
    np.testing.assert_allclose(S, S2, atol=1e-5 * np.abs(S2).max())
    # soft constraints move less than hard ones
    _, Ks, _ = logdet_learn(K0, pairs, delta, b, 0.1)
    assert np.max(delta * (_dist(Ks, pairs) - b)) > 1e-3


def _itml_linear(X, pairs, delta, bounds, gamma, sweeps):
    """ITML (Davis et al. 2007) on the Mahalanobis matrix A, ITML's reference update order."""
    A = np.eye(X.shape[1])
    lam, xi = np.zeros(len(pairs)), bounds.astype(float).copy()
    gp = gamma / (gamma + 1)
    for _ in range(sweeps):
        for c, (i, j) in enumerate(pairs):
            v = X[i] - X[j]
            p = v @ A @ v
            a = min(lam[c], delta[c] * gp * (1 / p - 1 / xi[c]))
            if a == 0.0:
                continue
            beta = delta[c] * a / (1 - delta[c] * a * p)
            xi[c] = 1 / (1 / xi[c] + delta[c] * a / gamma)
            lam[c] -= a
            Av = A @ v
            A = A + beta * np.outer(Av, Av)
    return A


def test_linear_kernel_logdet_is_itml():
    K0 = X @ X.T  # singular (rank 3): no inverse is needed anywhere
    pairs, delta, b = _problem(K0)
    S, K, info = logdet_learn(K0, pairs, delta, b, 1.0, tol=0.0, max_sweeps=7)
    A = _itml_linear(X, pairs, delta, b, 1.0, 7)
    np.testing.assert_allclose(K, X @ A @ X.T, atol=1e-8 * np.abs(K).max())
    assert info["sweeps"] == 7


def test_logdet_svc_extension_matches_training_kernel_and_validates():
    m = LogDetKernelSVC(sigma=1.0, C=2.0, gamma=1.0, random_state=3).fit(X, Y)
    K0 = rbf_kernel(X, X, gamma=0.5)
    Kd = m._kernel(K0)
    np.testing.assert_allclose(Kd, Kd.T, atol=1e-12)
    np.testing.assert_allclose(m.decision_function(X), m.svc_.decision_function(Kd))
    assert m.P_.size <= 2 * 80 and not np.allclose(Kd, K0)  # 20 c^2 = 80 constraints
    again = LogDetKernelSVC(sigma=1.0, C=2.0, gamma=1.0, random_state=3).fit(X, Y)
    np.testing.assert_array_equal(again.S_, m.S_)  # seeded
    with pytest.raises(ValueError, match="sigma"):
        LogDetKernelSVC(sigma=0.0).fit(X, Y)
    with pytest.raises(ValueError, match="gamma"):
        logdet_learn(K0[:4, :4], np.array([[0, 1]]), np.array([1.0]), np.array([1.0]), 0.0)
    with pytest.raises(ValueError, match="features"):
        m.predict(X[:, :2])
    with pytest.raises(NotFittedError):
        LogDetKernelSVC().predict(X)
    with pytest.raises(ValueError, match="class"):
        LogDetKernelSVC().fit(X, np.zeros(40))


def test_mlkr_gradient_matches_finite_differences_and_lowers_the_loo_loss():
    y = np.sin(2 * X[:, 0]) + 0.05 * RNG.normal(size=40)
    L = np.eye(3) + 0.3 * RNG.normal(size=(3, 3))
    f, g = mlkr_loss_grad(L, X, y)
    fd = np.zeros_like(L)
    for k in range(9):
        E = np.zeros(9)
        E[k] = 1e-6
        E = E.reshape(3, 3)
        fd.flat[k] = (mlkr_loss_grad(L + E, X, y)[0] - mlkr_loss_grad(L - E, X, y)[0]) / 2e-6
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7 * np.abs(g).max())
    m = MLKRRegressor(sigma=1.0, max_fit=30, random_state=1).fit(X, y)
    assert m.n_fit_ == 30
    assert m.loss_ < mlkr_loss_grad(np.eye(3) / np.sqrt(2), X[np.sort(
        np.random.default_rng(1).choice(40, 30, replace=False))], y[np.sort(
            np.random.default_rng(1).choice(40, 30, replace=False))])[0]
    with pytest.raises(ValueError, match="max_fit"):
        MLKRRegressor(max_fit=1).fit(X, y)


def test_plain_nw_limits():
    y = RNG.normal(size=40)
    wide = NadarayaWatson(sigma=1e4).fit(X, y).predict(X[:5])
    np.testing.assert_allclose(wide, y.mean(), atol=1e-6)
    narrow = NadarayaWatson(sigma=1e-3).fit(X, y).predict(X[:5] + 1e-6)
    np.testing.assert_allclose(narrow, y[:5], atol=1e-9)  # nearest neighbour, no 0 / 0
    with pytest.raises(ValueError, match="sigma"):
        NadarayaWatson(sigma=-1.0).fit(X, y)


TINY = Protocol(sigma_grid=(0.5, 2.0), C_grid=(0.5, 2.0), n_splits=1)


@pytest.fixture(scope="module")
def cls_ds():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(40, 3))
    return Dataset("toy", "classification", Z, np.where(Z[:, 0] > 0, "a", "b"))


def test_classification_cells_run_and_are_reproducible(cls_ds, monkeypatch):
    monkeypatch.setattr(BC, "RF_TREES", 5)
    monkeypatch.setattr(BC, "LOGDET_GAMMAS", (0.1, 1.0))
    svm = run_cell(Cell("toy", 0, "svm-cv"), cls_ds, TINY)
    rf = run_cell(Cell("toy", 0, "rf-cv"), cls_ds, TINY)
    again = run_cell(Cell("toy", 0, "rf-cv"), cls_ds, TINY)
    assert (again["test_acc"], again["cv_scores"]) == (rf["test_acc"], rf["cv_scores"])
    r = run_cell(Cell("toy", 0, "logdet"), cls_ds, TINY, svm)
    for rec, k in ((rf, len(BC.RF_GRID)), (r, 2)):
        assert rec["status"] == "ok", rec.get("traceback")
        assert 0.5 <= rec["test_acc"] <= 1.0 and len(rec["cv_scores"]) == k
    assert r["C"] == svm["C"] and r["sigma"] == svm["sigma"]  # LogDet takes SVM-CV's
    assert run_cell(Cell("toy", 0, "logdet"), cls_ds, TINY)["status"] == "error"  # no dep


def test_regression_cells_run(monkeypatch):
    rng = np.random.default_rng(1)
    Z = rng.uniform(size=(40, 2))
    ds = Dataset("toyreg", "regression", Z, 50 + 10 * np.sin(3 * Z[:, 0]))
    nw = run_cell(Cell("toyreg", 0, "nw-cv"), ds, TINY)
    ml = run_cell(Cell("toyreg", 0, "nw-ml"), ds, TINY, nw)
    assert nw["status"] == ml["status"] == "ok", ml.get("traceback")
    assert nw["sigma"] in TINY.sigma_grid and ml["sigma"] == nw["sigma"]
    assert ml["test"]["sse"] < ml["test"]["sst"]  # better than the test mean


def _recs(name, dank, rf, ld):
    out = {}
    for s in range(len(dank)):
        b = dict(dataset=name, split=s, status="ok", warnings={}, C=1.0, sigma=1.0)
        fit = dict(train_acc=1.0, test_acc=dank[s], certified=True, solves=[])
        out[f"{name}/{s:02d}_dank-cv"] = dict(b, method="dank-cv", taus={"0.01": fit})
        out[f"{name}/{s:02d}_rf-cv"] = dict(b, method="rf-cv", train_acc=1.0, test_acc=rf[s],
                                            min_samples_leaf=1, max_features="sqrt")
        out[f"{name}/{s:02d}_logdet"] = dict(b, method="logdet", train_acc=1.0, test_acc=ld[s],
                                             gamma=0.1, converged=s != 0)
    return out


def test_ucires_table_pairs_splits_and_renders_paper_beside_ours():
    proto = Protocol(sigma_grid=(1.0,), C_grid=(1.0,), n_splits=5, readings=("cv",))
    base = np.array([0.80, 0.86, 0.78, 0.84, 0.82])
    recs = _recs("heart", base + 0.05, base - np.array([0.01, 0.02, 0.0, 0.01, 0.03]), base)
    del recs["heart/04_logdet"]
    tb = aggregate(recs, proto, ["heart"], [], {"heart": dict(n=270, d=13, note="")})
    row = tb["ucires"]["heart"]
    assert row["tests"]["DANK vs LogDet"]["n"] == 4  # only the splits both have
    assert row["tests"]["DANK vs LogDet"]["p"] == 0.0  # a constant +5 points
    assert row["LogDet"]["unconverged"] == 1
    V = verdicts(tb, proto)
    v = next(x for x in V if x["id"] == "UCIres-LogDet")
    assert v["verdict"] == "REPRODUCED" and v["ours"].startswith("1/1")
    res = dict(command="t", protocol=proto.to_dict(), tables=tb, verdicts=V,
               datasets={"heart": dict(n=270, d=13, note="")}, versions={}, seconds=1.0,
               n_cells=1, n_cached=0, jobs=1, protocol_notes=[], normalisation={}, conv=None,
               figures={}, large=None, large_path="")
    md = render_report(res)
    pr = paper.UCIRES["heart"]
    ours = row["RF"]["test"]
    assert f"{pr['RF'][0]:.1f}±{pr['RF'][1]:.1f} / {ours['mean']:.1f}±{ours['std']:.1f}" in md
    assert "85.6±0.8 / not re-run" in md and "(not re-run)" not in md
    tb.pop("ucires")  # a results file without the baselines: each paper value marked "(not re-run)"
    assert "80.6±3.5 (not re-run)" in render_report(dict(res, tables=tb))
