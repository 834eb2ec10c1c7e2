"""Out-of-sample extension of the learned matrix F (section ose).

For test points ``x'_j`` the learned kernel needs a column ``F'_j``; the paper
copies the column of a matched training point ``j*``:
``F'_j = F*_{:, j*}`` and ``f(x'_j) = sum_i a_i y_i F'_{ij} k(x_i, x'_j) + b``.

Schemes (``scheme=``):

* ``"paper"`` -- reciprocal nearest neighbours (eq. mBBPdef):
  ``M_ij = 1 / (r s)`` where ``x'_j`` is the ``r``-th nearest *test* point to
  ``x_i`` and ``x_i`` the ``s``-th nearest training point to ``x'_j``;
  ``j* = argmax_i M_ij``. Because ``r`` ranks ``x'_j`` among the other test
  points, **a point's prediction depends on the batch it is predicted in**;
  with a batch of one it reduces to the nearest training point. Ties are broken
  by index (stable sorts). Memory: one n x m distance matrix.
* ``"nearest"`` -- the nearest training point (Euclidean); batch-independent.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics.pairwise import euclidean_distances

__all__ = ["SCHEMES", "match_training_points", "match_from_distances", "extended_decision"]

SCHEMES = ("paper", "nearest")


def _ranks(D: np.ndarray, axis: int) -> np.ndarray:
    """1-based rank of every entry along ``axis`` (ties by index, stable)."""
    order = np.argsort(D, axis=axis, kind="stable")
    ranks = np.empty_like(order)
    idx = np.arange(D.shape[axis]) + 1
    if axis == 0:
        np.put_along_axis(ranks, order, idx[:, None], axis=0)
    else:
        np.put_along_axis(ranks, order, idx[None, :], axis=1)
    return ranks


def match_training_points(X_train, X_test, scheme: str = "paper") -> np.ndarray:
    """Index ``j*`` of the training point whose F-column each test point borrows.

    Parameters
    ----------
    X_train : ndarray of shape (n, d)
    X_test : ndarray of shape (m, d)
    scheme : {"paper", "nearest"}

    Returns
    -------
    ndarray of int, shape (m,)

    Examples
    --------
    >>> import numpy as np
    >>> Xtr = np.array([[0.0], [1.0], [2.0]])
    >>> match_training_points(Xtr, np.array([[0.9], [1.8]]), scheme="nearest").tolist()
    [1, 2]
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    return match_from_distances(euclidean_distances(X_train, X_test), scheme)


def match_from_distances(D, scheme: str = "paper") -> np.ndarray:
    """:func:`match_training_points` from a dissimilarity matrix ``D`` (n_train x m).

    Only the orderings of ``D`` along each axis are used, so any dissimilarity
    that ranks like a distance works (e.g. a kernel-induced distance for a
    precomputed kernel). ``D[i, j]`` compares training point ``i`` with test
    point ``j``.

    Examples
    --------
    >>> import numpy as np
    >>> match_from_distances(np.array([[0.1, 3.0], [2.0, 0.5]]), scheme="nearest").tolist()
    [0, 1]
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme must be one of {SCHEMES}, got {scheme!r}")
    D = np.asarray(D, dtype=np.float64)
    if D.ndim != 2 or D.shape[0] == 0:
        raise ValueError(f"D must be a non-empty 2-D array, got shape {D.shape}")
    if scheme == "nearest":
        return np.argmin(D, axis=0)
    r = _ranks(D, axis=1)  # rank of x'_j among test points, seen from x_i
    s = _ranks(D, axis=0)  # rank of x_i among training points, seen from x'_j
    M = 1.0 / (r.astype(np.float64) * s)
    return np.argmax(M, axis=0)  # first maximiser: ties by index


def extended_decision(
    dual_coef: np.ndarray,
    F_rows: np.ndarray,
    K_test: np.ndarray,
    match: np.ndarray,
    intercept: float,
) -> np.ndarray:
    """``f(x'_j) = sum_{i in S} d_i F_{i, j*(j)} k(x_i, x'_j) + b``.

    Parameters
    ----------
    dual_coef : ndarray of shape (s,)
        ``d_i = a_i y_i`` on the support ``S``.
    F_rows : ndarray of shape (s, n)
        Rows ``F[S, :]`` of the learned matrix.
    K_test : ndarray of shape (s, m)
        ``k(x_i, x'_j)`` for ``i in S``.
    match : ndarray of int, shape (m,)
        ``j*`` for every test point (:func:`match_training_points`).
    intercept : float
    """
    return (dual_coef[:, None] * F_rows[:, match] * K_test).sum(axis=0) + intercept
