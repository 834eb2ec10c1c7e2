"""The out-of-sample decision values of a fitted :class:`dank_fast.DANKClassifier` (Section
2.3, eq. (11)): every test point is matched to a training point ``j*`` of each binary problem
(:func:`dank_fast.extension.match_from_distances`) and its decision value is summed over the
problem's support with the matched column of the learned ``F``, in bounded memory.

``f(x') = sum_{i in S} a_i y_i F[i, j*] k(x_i, x') + b``. For the decomposition, a test point
is first assigned to its nearest k-means centre and matched within that cluster, with the
cluster's support only (the block-diagonal ``Fbar`` of Lemma 5, no bias). The functions take
the fitted estimator and test data already validated by it.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics.pairwise import euclidean_distances

from ._cost import BLOCK_BYTES
from ._routes import BinaryModel
from .extension import match_from_distances

__all__ = ["decide", "problem_decisions"]


def problem_decisions(est, X: np.ndarray) -> np.ndarray:
    """Decision values of every binary problem of the fitted ``est``.

    Parameters
    ----------
    est : DANKClassifier
        The fitted estimator (its ``X_fit_``, ``problem_indices_``, ``models_``, kernel and
        ``extension``).
    X : ndarray of shape (n_test, n_features)
        Test data validated by ``est`` (precomputed: the kernel against the training points).

    Returns
    -------
    ndarray of shape (n_test, n_problems)
        Column ``p``: problem ``p``'s decision values (positive for its positive class).
    """
    out = np.empty((X.shape[0], len(est.models_)))
    for p, (idx, model) in enumerate(zip(est.problem_indices_, est.models_, strict=True)):
        if model.kind == "decomposed":
            assign = np.argmin(euclidean_distances(X, model.centers), axis=1)
            for c in np.unique(assign):
                te = np.flatnonzero(assign == c)
                tr = np.flatnonzero(model.labels == c)
                out[te, p] = decide(est, X[te], idx, model, tr)
        else:
            out[:, p] = decide(est, X, idx, model, np.arange(idx.size))
    return out


def decide(est, X: np.ndarray, idx: np.ndarray, model: BinaryModel, pool: np.ndarray,
           match_bytes: int = 1 << 29, block_bytes: int = BLOCK_BYTES) -> np.ndarray:
    """``f(x') = sum_{i in S} d_i F[i, j*] k(x_i, x') + b`` with ``j*`` matched in ``pool``.

    Matching: ``extension="nearest"`` in chunks; ``"paper"`` ranks the test points of a
    batch, the whole ``X`` whenever its ``|pool| x m`` distances (8 bytes per pair; the
    ranking adds 4 more) fit in ``match_bytes`` (512 MiB), else consecutive batches that do.
    The batch is part of the paper's match (a point's prediction depends on the batch it is
    ranked in), so it is an option of the scheme, not a memory knob. The decision values are
    then summed in chunks whose kernel and ``F`` blocks (``|S| x chunk`` each) fit in
    ``block_bytes`` (the shared budget :data:`dank_fast._cost.BLOCK_BYTES`).

    Parameters
    ----------
    est : DANKClassifier
        The fitted estimator (its ``X_fit_``, kernel and ``extension``).
    X : ndarray of shape (m, n_features)
        Test data validated by ``est`` (precomputed: the kernel against the training points).
    idx : ndarray of int
        Training-sample indices of the problem.
    model : BinaryModel
        The problem's prediction model.
    pool : ndarray of int
        Positions (within the problem) of the training points a test point may be matched to.
    match_bytes : int, default=1 << 29
        Bytes of distances matched at once (the batch of ``"paper"``'s ranks).
    block_bytes : int, default=BLOCK_BYTES
        Bytes of the kernel and ``F`` blocks of one chunk of the sum.

    Returns
    -------
    ndarray of shape (m,)
        The decision values (the bias alone when the support in ``pool`` is empty).
    """
    S = model.support[np.isin(model.support, pool)] if model.kind == "decomposed" else (
        model.support)
    dual = model.dual_of(S)
    m = X.shape[0]
    out = np.full(m, model.bias)
    if S.size == 0 or m == 0:
        return out
    match = np.empty(m, dtype=np.intp)
    batch = max(1, match_bytes // (8 * pool.size))
    for lo in range(0, m, batch):
        Xb = X[lo:lo + batch]
        if est._precomputed:
            # kernel-induced distance with k(x'_j, x'_j) replaced by a constant
            D = np.diag(est.X_fit_)[idx[pool]][:, None] - 2.0 * Xb[:, idx[pool]].T
        else:
            D = euclidean_distances(est.X_fit_[idx[pool]], Xb)
        match[lo:lo + batch] = pool[match_from_distances(D, est.extension, block_bytes)]
        del D
    chunk = max(1, block_bytes // (16 * S.size))
    for lo in range(0, m, chunk):
        Xb = X[lo:lo + chunk]
        K_S = Xb[:, idx[S]].T if est._precomputed else est._kernel(est.X_fit_[idx[S]], Xb)
        F_S = model.F_cols(est, idx, match[lo:lo + chunk], S)
        out[lo:lo + chunk] += np.einsum("i,ij,ij->j", dual, F_S, K_S)
    return out
