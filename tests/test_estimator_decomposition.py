"""DANKClassifier(decomposition=v): P3 per k-means cluster, prediction within clusters."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.metrics.pairwise import euclidean_distances, rbf_kernel
from sklearn.preprocessing import MinMaxScaler
from sklearn.utils.estimator_checks import parametrize_with_checks
from threadpoolctl import threadpool_limits

from dank_fast import DANKClassifier


@pytest.fixture(autouse=True)
def _one_thread():
    with threadpool_limits(1):
        yield


def _moons(n, seed=0):
    X, y = make_moons(n, noise=0.2, random_state=seed)
    return MinMaxScaler().fit_transform(X), y


@pytest.mark.parametrize("v", [1, 3])
def test_training_decisions_are_the_block_model(v):
    """On training points (matched to themselves) f = (Fbar o Kbar)(a y), no bias."""
    X, y = _moons(90)
    clf = DANKClassifier(C=2.0, sigma=0.3, decomposition=v, extension="nearest", random_state=0)
    clf.fit(X, y)
    res = clf.results_[0]
    assert res.status == "converged" and res.certificate.rel_gap <= 1e-6
    yb = np.where(y == clf.classes_[1], 1.0, -1.0)
    d = res.alpha * yb
    K = rbf_kernel(X, gamma=1.0 / (2 * 0.3**2))
    same = res.labels[:, None] == res.labels[None, :]
    Fbar = np.where(same, 1.0 + np.outer(d, d) * K / (4 * clf.eta_[0]), 0.0)
    np.testing.assert_allclose(clf.decision_function(X), (Fbar * K) @ d, atol=1e-10)


@pytest.mark.parametrize("extension", ["nearest", "paper"])
def test_test_points_borrow_columns_of_their_own_cluster(extension):
    """A test point goes to its nearest k-means centre and uses that cluster's model only:
    f(x') = sum_{i in S_c} d_i Fbar[i, j*] k(x_i, x') with j* matched among the cluster's
    training points (the paper's ranks taken among the test points of that cluster)."""
    from dank_fast.extension import match_from_distances

    X, y = _moons(120)
    Xtr, ytr, Xte = X[:80], y[:80], X[80:]
    clf = DANKClassifier(C=1.0, sigma=0.3, decomposition=4, random_state=0,
                         extension=extension).fit(Xtr, ytr)
    labels = clf.cluster_labels_[0]
    assign = np.argmin(euclidean_distances(Xte, clf.cluster_centers_[0]), axis=1)
    res = clf.results_[0]
    yb = np.where(ytr == clf.classes_[1], 1.0, -1.0)
    d = res.alpha * yb
    K = rbf_kernel(Xtr, gamma=1.0 / (2 * 0.3**2))
    expected = np.empty(len(Xte))
    for c in np.unique(assign):
        te, tr = np.flatnonzero(assign == c), np.flatnonzero(labels == c)
        match = tr[match_from_distances(euclidean_distances(Xtr[tr], Xte[te]), extension)]
        assert np.all(labels[match] == c)
        Kt = rbf_kernel(Xtr[tr], Xte[te], gamma=1.0 / (2 * 0.3**2))
        Fbar = 1.0 + np.outer(d[tr], d[match]) * K[np.ix_(tr, match)] / (4 * clf.eta_[0])
        expected[te] = (d[tr][:, None] * Fbar * Kt).sum(axis=0)
    np.testing.assert_allclose(clf.decision_function(Xte), expected, atol=1e-10)
    assert clf.score(Xte, y[80:]) > 0.8


def test_decomposition_rejects_precomputed():
    X, y = _moons(30)
    K = rbf_kernel(X)
    with pytest.raises(ValueError, match="decomposition needs features"):
        DANKClassifier(kernel="precomputed", decomposition=2).fit(K, y)


@parametrize_with_checks(
    [DANKClassifier(decomposition=2, random_state=0, tol=1e-4, extension="nearest")]
)
def test_sklearn_checks_with_decomposition(estimator, check):
    check(estimator)
