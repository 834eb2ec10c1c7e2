"""The Newton curvature ``-hess h`` of DANK's dual objective on a set of free coordinates.

In the coordinates ``d = a * y``, ``-hess_d h = (F o K) + Corr`` with ``Corr = (diag((K o K)
d^2) + d d' o K o K) / (4 eta)`` exactly for ``tau = 0``; for ``tau > 0`` that matrix (with the
soft-thresholded ``F``) is the curvature *model*, which exceeds the Hessian by a PSD term, so
its steps fall short by a steady factor (:mod:`dank_fast._newton` lengthens them). The exact
Hessian (Daleckii-Krein, docs/MATH.md section 5.2) needs every eigenpair of ``M``: it is used
where the evaluation made the dense decomposition and forming it costs no more than that
(:func:`dank_fast._cost.exact_curvature_pays`), the model otherwise.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg.blas import dgemm

from ._cost import BLOCK, exact_curvature_pays

__all__ = ["curvature", "correction_diagonal", "exact_applies", "rank"]


def curvature(problem, ev, free: np.ndarray) -> np.ndarray:
    """``-hess h`` (exact or the model, module docstring) restricted to ``free``, in the
    coordinates ``z`` of the problem.

    The model is built in blocks of ``BLOCK`` rows straight into one ``f x f`` array (the only
    matrix of that size; block temporaries are ``BLOCK x n``): ``O(f^2 (r + 1))`` time for a
    rank-``r`` ``F``, ``8 f^2`` bytes, ``f = |free|``.
    """
    K = problem.kd.K
    d = problem.d_of(ev.z)
    dix, sv = problem.d_coordinates(free)
    f = dix.size
    F = ev.inner.F
    c = 1.0 / (4.0 * problem.eta)
    if exact_applies(problem, ev, f):
        H = _exact(K, d, dix, ev.inner.eigvals, ev.inner.basis, 0.5 * problem.tau, c)
        return H * sv[:, None] * sv[None, :]
    zs = sv * d[dix]  # the signs sv (+-1) folded in: H_ij = sv_i sv_j (-hess_d h)_ij
    H = np.empty((f, f))
    UF = F.U[dix] * sv[:, None] if hasattr(F, "mu") else None
    UFmuT = None if UF is None else np.asfortranarray((UF * F.mu).T)
    kkd = correction_diagonal(problem, ev, d, dix)
    for lo in range(0, f, BLOCK):
        sel = np.arange(lo, min(lo + BLOCK, f))
        KB = np.take(np.take(K, dix[sel], axis=0), dix, axis=1)  # b x f
        out = H[lo:lo + BLOCK]
        # sv_i sv_j (F + (d d') o K / (4 eta)) o K on [rows, free], as KB o (c zs zs' o KB
        # + G): three passes over the block, no outer-product temporary
        np.multiply(KB, zs, out=out)
        out *= (c * zs[sel])[:, None]
        if UF is not None:  # G = sv_i sv_j F[rows, free], added in place (out' is F-order)
            res = dgemm(1.0, UF, np.asfortranarray(UFmuT[:, sel]), beta=1.0, c=out.T,
                        overwrite_c=True)
            if not np.shares_memory(res, out):
                out[...] = res.T
        else:  # F = 11' + Gamma: G = sv sv' + c zs zs' o KB, the term above once more
            out *= 2.0
            out += np.multiply.outer(sv[sel], sv)
        out *= KB
        out[np.arange(sel.size), sel] += c * kkd[sel]  # sv_i^2 = 1
    _couple_pairs(H, dix, sv, c * kkd)
    return H


def exact_applies(problem, ev, f: int) -> bool:
    """Whether the exact Hessian is the curvature on ``f`` free coordinates (module docstring):
    the evaluation made the dense decomposition, and forming the Hessian costs no more."""
    B = ev.inner.basis
    if B is None:
        return False
    return exact_curvature_pays(f, rank(problem, ev), B.shape[0])


def rank(problem, ev) -> int:
    """The rank of the evaluation's ``F``: its eigenvalues of ``M`` above ``t = tau / 2``."""
    return int(np.count_nonzero(ev.inner.eigvals > 0.5 * problem.tau))


def correction_diagonal(problem, ev, d: np.ndarray, dix: np.ndarray) -> np.ndarray:
    """``(K o K)[dix][:, S] d_S^2``: from the evaluation's ``kk_d2`` on the support ``S``, from
    rows of ``K`` off it (``O(|dix| |S|)``)."""
    S = np.flatnonzero(d)
    out = np.zeros(dix.size)
    if S.size == 0:
        return out
    pos = np.minimum(np.searchsorted(S, dix), S.size - 1)
    inS = S[pos] == dix
    kk = ev.inner.kk_d2
    if kk is not None and kk.size == S.size:
        out[inS] = kk[pos[inS]]
    else:
        inS[:] = False
    late = np.flatnonzero(~inS)
    d2S = d[S] * d[S]
    K = problem.kd.K
    for lo in range(0, late.size, BLOCK):
        rows = late[lo:lo + BLOCK]
        KS = np.take(np.take(K, dix[rows], axis=0), S, axis=1)
        out[rows] = (KS * KS) @ d2S
    return out


def _couple_pairs(H: np.ndarray, dix: np.ndarray, sv: np.ndarray, diag: np.ndarray) -> None:
    """P2: a free ``ah_i`` and a free ``ac_i`` (two positions ``r``, ``q`` of ``dix`` with
    the same ``i``) move the same ``d_i``; the diagonal term ``diag = c (K o K)_i d^2`` of the
    curvature couples them too: ``sv_r sv_q diag_r`` added to ``H[r, q]`` and ``H[q, r]`` in
    place. ``O(f log f)``; nothing where no index repeats (P1, P3)."""
    order = np.argsort(dix, kind="stable")
    same = np.flatnonzero(dix[order[1:]] == dix[order[:-1]])
    r, q = order[same], order[same + 1]  # an index of d repeats at most twice (ah_i, ac_i)
    pair = sv[r] * sv[q] * diag[r]
    H[r, q] += pair
    H[q, r] += pair


def _exact(K: np.ndarray, d: np.ndarray, idx: np.ndarray, lam: np.ndarray, B: np.ndarray,
           t: float, c: float) -> np.ndarray:
    """``-hess_d h`` exactly on the rows and columns ``idx`` (repeated for P2's pairs), from the
    eigenpairs ``(lam, B)`` of the reduced ``M`` by Daleckii-Krein (docs/MATH.md section 5.2:
    ``F o K``, the active-active terms, and the Gram matrix ``Z Z'`` of the active-inactive
    pairs, formed one active eigenvalue at a time; the ``m - 1`` zero eigenvalues off the
    support through the projector ``P``). ``O(|idx| |S| N + |idx|^2 r (N - r))`` time,
    ``O(|idx| N)`` memory beyond the result."""
    n = d.size
    S = np.flatnonzero(d)
    s, m = S.size, n - S.size
    pos = np.full(n, s)
    pos[S] = np.arange(s)
    rows = pos[idx]
    out_S = rows == s  # rows of idx outside the support: the ghost row of B, scaled
    Ui = B[rows]
    if m > 0:
        Ui[out_S] /= np.sqrt(m)
    W = (K[np.ix_(idx, S)] * d[S][None, :]) @ B[:s]
    act = lam > t
    ia, ii = np.flatnonzero(act), np.flatnonzero(~act)
    UA, WA = Ui[:, ia], W[:, ia]
    H = ((UA * (lam[ia] - t)) @ UA.T) * K[np.ix_(idx, idx)]  # F o K
    H += c * ((UA @ UA.T) * (WA @ WA.T) + (UA @ WA.T) * (WA @ UA.T))
    UI, WI = Ui[:, ii], W[:, ii]
    for k, p in enumerate(ia):
        Z = (UA[:, [k]] * WI + WA[:, [k]] * UI) * np.sqrt((lam[p] - t) / (lam[p] - lam[ii]))
        H += c * (Z @ Z.T)
    if m > 1 and ia.size and np.any(out_S):
        G0 = (lam[ia] - t) / lam[ia]
        same = np.equal.outer(idx, idx)  # (P2 repeats a point: its ah and ac move one d)
        P = np.where(np.multiply.outer(out_S, out_S), same - 1.0 / m, 0.0)
        H += c * (((WA * G0) @ WA.T) * P)
    return 0.5 * (H + H.T)
