"""The out-of-sample extension (section 2.3): the paper's reciprocal nearest neighbours.

The blocked, memory-lean ranking of :func:`dank_fast.extension.match_from_distances` must give
exactly the matches of the direct formula ``j* = argmax_i 1 / (r_ij s_ij)`` with stable ranks
(ties by index), including ties in the distances and blocks of every size.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import dank_fast.extension as ext


def reference_match(D: np.ndarray) -> np.ndarray:
    """eq. (11) literally: ranks by stable argsort, M = 1/(r s), first maximiser."""
    n, m = D.shape
    r = np.empty((n, m))
    for i in range(n):
        order = np.argsort(D[i], kind="stable")
        r[i, order] = np.arange(1, m + 1)
    s = np.empty((n, m))
    for j in range(m):
        order = np.argsort(D[:, j], kind="stable")
        s[order, j] = np.arange(1, n + 1)
    return np.argmax(1.0 / (r * s), axis=0)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30), st.integers(1, 30), st.integers(0, 4), st.integers(1, 50),
       st.integers(0, 2**31 - 1))
def test_blocked_ranking_equals_the_formula(n, m, levels, block, seed):
    rng = np.random.default_rng(seed)
    # few distinct values: many ties, which the stable ranks must break by index
    D = rng.integers(0, levels + 1, size=(n, m)).astype(float) if levels else rng.random((n, m))
    got = ext.match_from_distances(D, "paper", block_bytes=8 * block)
    np.testing.assert_array_equal(got, reference_match(D))


def test_batch_of_one_is_the_nearest_training_point():
    rng = np.random.default_rng(1)
    Xtr, Xte = rng.normal(size=(40, 3)), rng.normal(size=(1, 3))
    assert ext.match_training_points(Xtr, Xte, "paper")[0] == ext.match_training_points(
        Xtr, Xte, "nearest")[0]


def test_bad_scheme_and_shape():
    with pytest.raises(ValueError, match="scheme"):
        ext.match_from_distances(np.zeros((2, 2)), "bogus")
    with pytest.raises(ValueError, match="non-empty 2-D"):
        ext.match_from_distances(np.zeros((0, 3)), "paper")


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 30), st.integers(1, 30), st.integers(0, 4), st.integers(0, 2**31 - 1))
def test_both_routes_equal_the_formula(n, m, levels, seed):
    """The pruned route (only the r_{i1 j} nearest training points can win) and the full
    ranking route each give the formula's match, ties included; the public function picks one."""
    rng = np.random.default_rng(seed)
    D = rng.integers(0, levels + 1, size=(n, m)).astype(float) if levels else rng.random((n, m))
    want = reference_match(D)
    np.testing.assert_array_equal(ext._match_full(D), want)
    pruned = ext._match_pruned(D)
    if pruned is not None:
        np.testing.assert_array_equal(pruned, want)


def test_pruned_route_is_taken_for_geometric_data():
    """Distances between points in space: nearest neighbours are mostly reciprocal, the bounds
    r_{i1 j} are small and the pruned route must run (and agree with the full ranking)."""
    from sklearn.metrics.pairwise import euclidean_distances

    rng = np.random.default_rng(3)
    D = euclidean_distances(rng.normal(size=(400, 3)), rng.normal(size=(150, 3)))
    pruned = ext._match_pruned(D)
    assert pruned is not None
    np.testing.assert_array_equal(pruned, ext._match_full(D))
    # a duplicated training point ties at distance 0 with the original: first index wins
    D2 = np.vstack([D, D[:1]])
    np.testing.assert_array_equal(ext.match_from_distances(D2, "paper"), reference_match(D2))
