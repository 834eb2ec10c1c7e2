"""Out-of-sample extension of the learned matrix F (Section 2.3).

For test points ``x'_j`` the learned kernel needs a column ``F'_j``; the paper
copies the column of a matched training point ``j*``:
``F'_j = F*_{:, j*}`` and ``f(x'_j) = sum_i a_i y_i F'_{ij} k(x_i, x'_j) + b``.

Schemes (``scheme=``):

* ``"paper"`` -- reciprocal nearest neighbours (eq. (11)):
  ``M_ij = 1 / (r s)`` where ``x'_j`` is the ``r``-th nearest *test* point to
  ``x_i`` and ``x_i`` the ``s``-th nearest training point to ``x'_j``;
  ``j* = argmax_i M_ij``. Because ``r`` ranks ``x'_j`` among the other test
  points, **a point's prediction depends on the batch it is predicted in**;
  with a batch of one it reduces to the nearest training point. Ties are broken
  by index (stable sorts). Computed exactly by pruning: with ``i1`` the nearest training
  point of ``x'_j`` (``s = 1``), only the ``r_{i1 j}`` nearest training points can win, so
  only their ``r`` are counted (``O(n m + m sum_j r_{i1 j})``, against ranking everything).
  When those bounds are large (``sum_j r_{i1 j} > 32 n``) both axes of ``D`` are ranked
  (``O(n m log)``; memory: the n x m distances plus their int32 ranks, 12 bytes per pair, the
  other temporaries in blocks).
* ``"nearest"`` -- the nearest training point (Euclidean); batch-independent.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics.pairwise import euclidean_distances

from ._cost import BLOCK_BYTES

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


def match_from_distances(D, scheme: str = "paper", block_bytes: int = BLOCK_BYTES) -> np.ndarray:
    """:func:`match_training_points` from a dissimilarity matrix ``D`` (n_train x m).

    Only the orderings of ``D`` along each axis are used, so any dissimilarity
    that ranks like a distance works (e.g. a kernel-induced distance for a
    precomputed kernel). ``D[i, j]`` compares training point ``i`` with test
    point ``j``. The ranking's temporaries are built in blocks of at most
    ``block_bytes`` (8 bytes per entry; the whole computation holds ``D`` plus, when both
    axes are ranked, the int32 ranks ``r``: 12 bytes per entry of ``D``); the match does not
    depend on ``block_bytes``.

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
    n, m = D.shape
    pruned = _match_pruned(D, block_bytes)
    if pruned is not None:
        return pruned
    return _match_full(D, block_bytes)


def _row_ranks_at(D: np.ndarray, rows: np.ndarray, cols: np.ndarray,
                  block_bytes: int = BLOCK_BYTES) -> np.ndarray:
    """Stable rank ``r`` of ``D[rows[k], cols[k]]`` within its row (ties by index), 1-based.

    ``r = #{j' : D[i, j'] < D[i, j]} + #{j' < j : D[i, j'] = D[i, j]} + 1``; ``O(len(rows) m)``
    time, computed in blocks of at most ``block_bytes / 8`` entries.
    """
    m = D.shape[1]
    entries = max(1, block_bytes // 8)
    out = np.empty(rows.size, dtype=np.int64)
    step = max(1, entries // max(m, 1))
    idx = np.arange(m)
    for lo in range(0, rows.size, step):
        R = D[rows[lo:lo + step]]
        v = D[rows[lo:lo + step], cols[lo:lo + step]][:, None]
        before = idx[None, :] < cols[lo:lo + step, None]
        out[lo:lo + step] = (np.count_nonzero(R < v, axis=1)
                             + np.count_nonzero((R == v) & before, axis=1) + 1)
    return out


def _match_pruned(D: np.ndarray, block_bytes: int = BLOCK_BYTES):
    """The paper's match without ranking all of ``D`` (``None`` when that would not pay off).

    For test point ``j`` let ``i1`` be its nearest training point (``s = 1``, first by index)
    and ``B = r_{i1 j}``. Since ``r >= 1``, every ``i`` with ``s_ij > B`` has ``r s > B >= r s``
    of ``i1``: only the ``B`` nearest training points of ``j`` can win. Their ``s`` are their
    positions in the stable order of column ``j`` (values below the ``B``-th smallest, then the
    tied ones by index) and their ``r`` are counted in their rows. Cost ``O(n m)`` for the
    nearest points plus ``O(sum_j B_j m)`` instead of sorting ``D`` along both axes; used when
    ``sum_j B_j <= 32 n`` (else ``None``).
    """
    n, m = D.shape
    cols = np.arange(m)
    i1 = np.argmin(D, axis=0)  # first minimiser: the stable s = 1
    B = _row_ranks_at(D, i1, cols, block_bytes)
    if B.sum() > 32 * n:
        return None
    out = i1.copy()
    for j in np.flatnonzero(B > 1):
        b = int(min(B[j], n))
        col = D[:, j]
        if b < n:
            v = col[np.argpartition(col, b - 1)[b - 1]]  # the b-th smallest value
            less = np.flatnonzero(col < v)
            tied = np.flatnonzero(col == v)[: b - less.size]
            cand = np.concatenate([less, tied])
        else:
            cand = np.arange(n)
        cand = cand[np.lexsort((cand, col[cand]))]  # stable order: s = 1, 2, ..., b
        r = _row_ranks_at(D, cand, np.full(cand.size, j), block_bytes)
        prod = r * np.arange(1, cand.size + 1)
        out[j] = cand[prod == prod.min()].min()  # first maximiser of 1/(r s): ties by index
    return out


def _match_full(D: np.ndarray, block_bytes: int = BLOCK_BYTES) -> np.ndarray:
    """The paper's match by ranking ``D`` along both axes (in blocks)."""
    n, m = D.shape
    itype = np.int32 if max(n, m) < 2**31 - 1 else np.int64
    entries = max(1, block_bytes // 8)
    # r: rank of x'_j among test points, seen from x_i (rows of D, in row blocks)
    r = np.empty((n, m), dtype=itype)
    step = max(1, entries // max(m, 1))
    for lo in range(0, n, step):
        r[lo:lo + step] = _ranks(D[lo:lo + step], axis=1)
    # s: rank of x_i among training points, seen from x'_j (columns, in column blocks);
    # argmax_i 1/(r s) = argmin_i r s (integers; the first minimiser: ties by index)
    out = np.empty(m, dtype=np.intp)
    step = max(1, entries // max(n, 1))
    for lo in range(0, m, step):
        s_blk = _ranks(D[:, lo:lo + step], axis=0)
        prod = r[:, lo:lo + step].astype(np.int64) * s_blk
        out[lo:lo + step] = np.argmin(prod, axis=0)
    return out


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
