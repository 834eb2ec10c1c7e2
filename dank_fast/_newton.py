"""Projected Newton ascent on the free set (active-set Newton), for fast high accuracy.

Not in the paper. The Hessian of ``h`` (eq. gradf differentiated once more) is, in
the coordinates ``d = a * y``,

    -hess_d h = (F o K) + Corr,   Corr = (diag((K o K) d^2) + d d' o K o K) / (4 eta)

exactly when ``tau = 0`` (``F = 11' + Gamma``); for ``tau > 0`` the same matrix is
used as a curvature model (the soft-threshold is non-expansive, so the true
correction is smaller: the model errs on the side of short steps).

Each iteration (Bertsekas' projected Newton with an equality constraint):

1. the multiplier ``lam`` of ``y'a = 0`` from the free coordinates;
2. the binding set: bounds the reduced gradient ``g - lam y`` pushes against;
3. the Newton step on the remaining coordinates, subject to ``y_F' p = 0``
   (one small KKT solve of the free-set size);
4. ``a+ = P(a + t p)`` projected on the free coordinates' part of ``A``, ``t = 1, 1/2, ...,
   1/256`` along the projection arc (many bounds can become active in one step), then the
   ratio test's step (one bound), halved until ``h`` increases (:func:`_step_along`);
5. the certificate decides when to stop.

When no step is possible (empty free set, curvature not positive definite, no accepted step) it
hands over to a burst of accelerated iterations from the current point and then resumes Newton:
the bursts move the active set where the Newton model could not. The bursts double in length
within the ``fallback_iter`` budget (the accelerated method alone has the same budget). Issue
15: the default used to spend its whole budget on tiny, nearly rank-one kernels with a large
``tau`` that the accelerated method certified; the cause was the curvature (the ``tau = 0``
model where ``tau`` kills eigenvalues), now exact for ``n <= EXACT_CURVATURE_N``.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, cholesky, solve_triangular
from scipy.linalg.blas import dgemm

from ._accelerated import ConvergenceWarning, accelerated, finish
from .inner import ROW_BLOCK, apply_FK, blas_threads
from .projection import _project_core

__all__ = ["newton"]

#: coordinates dropped from a Newton step's free set through the bordered system before the
#: step is refactorised on the smaller set (each drop costs one triangular solve)
BORDER_MAX = 32
#: float64 curvature size above which the Newton system is factorised in float32 and refined
#: (if float32 is too coarse for the system, the step is redone in float64)
SINGLE_BYTES = 256 << 20
#: float64 refinement steps of a float32 Newton solve
REFINE_STEPS = 4
#: free coordinates from which a previous step's factor is bordered by new ones (:func:`_grown`)
#: rather than refactorised: below, a factorisation costs little beside an evaluation, and the
#: older curvature cost steps (2-D Gaussian blobs, n = 300, C = 32: 10 steps instead of 7)
GROW_MIN = 400
#: curvatures up to this many entries are kept to cut smaller problems from: as a copy, or as
#: a blocked factor (:class:`_Blocks`, whose blocks are copies of ``H``). Above it the plain
#: Cholesky factor overwrites ``H`` and nothing else of its size is held (peak one ``f x f``)
CUT_ENTRIES = 1 << 22
#: quick relative gap below which a Newton step first tries the previous step's factor (near
#: the optimum the free set changes by a few coordinates per step and the curvature little;
#: make_moons n = 2,000, C = 32: 3 of 9 factorisations and curvatures saved, same step count)
REUSE_GAP = 1e-2



#: quick relative gap above which a Newton direction comes from an unrefined float32 factor
#: (far from the optimum the curvature is a model anyway; half the factorisation's time) when
#: at least ``ROUGH_MIN`` coordinates are free; a step it does not give is redone in float64
ROUGH_GAP = 1e-1
ROUGH_MIN = 256

#: rows of the curvature built at a time: their gathers and the five passes over them stay in
#: cache (128 x 2,000 rows of K: 2 MB; make_moons n = 2,000, 650 free coordinates: 3.3-4.4 ->
#: 2.6-3.0 ms per curvature against 1,024-row blocks; 915 free: 17.8 -> 6.5-7.7 ms)
CURVATURE_ROWS = 128
#: largest n whose Newton curvature for ``tau > 0`` is the exact Hessian (Daleckii-Krein,
#: ``O(n^4)`` time, ``O(n^2)`` memory) rather than the ``tau = 0`` model
EXACT_CURVATURE_N = 64
#: largest n for which Newton switches to the exact curvature when the model's does not certify
#: (``tau`` kills most eigenvalues of ``M``: spect, n = 80, tau = 1 handed over to 5,000
#: accelerated iterations without certifying; exact: 3 steps, 0.02 s). 23 ms per curvature at
#: n = 160, against about a millisecond per accelerated iteration
EXACT_FALLBACK_N = 160
#: Newton steps with the model curvature before the exact one takes over (``n <=
#: EXACT_FALLBACK_N``); a solve that certifies within them is unchanged
EXACT_SWITCH_STEPS = 10


def exact_curvature_d(K: np.ndarray, d: np.ndarray, eta: float, tau: float,
                      idx: np.ndarray | None = None) -> np.ndarray:
    """``-hess_d h`` exactly, for any ``tau`` (``F = J_{tau/2}(M)``, Lemma fbound); rows and
    columns ``idx`` only (default: all).

    ``grad_d h = ... - (F o K) d`` and ``F`` is a spectral function of ``M = 11' + D K D /
    (4 eta) = U diag(l) U'``: by the Daleckii-Krein formula ``dF[delta] = U (Phi o (U' dM[delta]
    U)) U'`` with ``Phi_pq = (f(l_p) - f(l_q)) / (l_p - l_q)`` (``f'(l_p)`` on the diagonal),
    ``f(l) = max(l - t, 0)``, ``t = tau / 2``. Column ``i``: ``dM[e_i] = (e_i w' + w e_i') /
    (4 eta)``, ``w = D K e_i``, and ``-hess e_i = (F o K) e_i + (dF[e_i] o K) d``. With ``W = K D
    U`` (so ``U' w = W[i]``) this is, entry ``(k, i)``,

        sum_pq Phi_pq (U_kp W_kq + W_kp U_kq) (U_ip W_iq + W_ip U_iq) / (8 eta).

    ``f`` is piecewise linear, so ``Phi`` is 1 on the active eigenvalues ``A = {l > t}`` (rank
    ``r`` of ``F``), 0 on the others ``I``, and ``G_pq = (l_p - t) / (l_p - l_q)`` in ``(0, 1]``
    between ``p in A`` and ``q in I``: the ``A x A`` part is ``(U_A U_A') o (W_A W_A') + (U_A
    W_A') o (W_A U_A')`` and the mixed part one Gram matrix ``Z Z'``, ``Z[k, (p, q)] = sqrt(G_pq)
    (U_kp W_kq + W_kp U_kq)``. For ``tau = 0`` this is the model of :func:`_curvature` (``Phi =
    1``); where ``tau`` kills eigenvalues the model overestimates the curvature (``Phi < 1``) and
    Newton crawls (issue 15: tiny, nearly rank-one kernels).

    ``O(n^3 + m^2 r (n - r))`` time for ``m = |idx|`` (one ``n x n`` eigendecomposition, one
    product), ``O(n^2 + m r (n - r))`` memory: small ``n`` only (the loop over the ``n`` columns
    it replaces was ``O(n^4)``: 87 -> 7 ms at n = 160, r = 2).
    """
    n = d.size
    lam, U = np.linalg.eigh(1.0 + (d[:, None] * K * d[None, :]) / (4.0 * eta))
    idx = np.arange(n) if idx is None else idx
    W = (K[idx] * d[None, :]) @ U  # rows idx of K D U
    return _daleckii_krein(K[np.ix_(idx, idx)], U[idx], W, lam, 0.5 * tau, 1.0 / (4.0 * eta))


def exact_curvature_basis(K: np.ndarray, d: np.ndarray, eta: float, tau: float,
                          idx: np.ndarray, lam: np.ndarray, B: np.ndarray) -> np.ndarray:
    """:func:`exact_curvature_d` from the eigenpairs ``(lam, B)`` of the reduced ``M`` that the
    dense inner route computed (:class:`dank_fast.inner.InnerSolution` ``.basis``): no
    eigendecomposition of its own.

    The reduced basis is ``[e_S, 1_{S^c} / sqrt(m)]`` (``S`` the support of ``d``, ``m = n -
    |S|``): its eigenvectors lift to eigenvectors of ``M`` constant on ``S^c``, and the other
    ``m - 1`` eigenvalues of ``M`` are 0, with eigenvectors spanning ``{x on S^c, 1'x = 0}``
    (``D`` vanishes there). Those are inactive (``0 <= t``), have ``W = K D U = 0`` and ``G_p0
    = (l_p - t) / l_p``, so their part of ``Z Z'`` is ``(W_A diag(G_A0) W_A') o P`` with ``P``
    the projector onto that space (``delta_ki - 1/m`` on ``S^c x S^c``, 0 elsewhere).
    ``O(|idx| |S| N + |idx|^2 r (N - r))`` time for ``N = |S| + 1``.
    """
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
    c, t = 1.0 / (4.0 * eta), 0.5 * tau
    H = _daleckii_krein(K[np.ix_(idx, idx)], Ui, W, lam, t, c)
    act = lam > t
    if m > 1 and np.any(act) and np.any(out_S):
        WA = W[:, act]
        G0 = (lam[act] - t) / lam[act]
        same = np.equal.outer(idx, idx)  # (P2 repeats a point: its ah and ac move one d)
        P = np.where(np.multiply.outer(out_S, out_S), same - 1.0 / m, 0.0)
        H += c * (((WA * G0) @ WA.T) * P)
    return H


def _daleckii_krein(Kii: np.ndarray, Ui: np.ndarray, W: np.ndarray, lam: np.ndarray, t: float,
                    c: float) -> np.ndarray:
    """``(F o K) + (dF o K) d`` on rows ``i`` from eigenpairs (``Ui`` rows of ``U``, ``W`` rows
    of ``K D U``): the formula of :func:`exact_curvature_d`, symmetrised."""
    act = lam > t
    ia, ii = np.flatnonzero(act), np.flatnonzero(~act)
    UA, WA = Ui[:, ia], W[:, ia]
    H = ((UA * (lam[ia] - t)) @ UA.T) * Kii  # F o K
    H += c * ((UA @ UA.T) * (WA @ WA.T) + (UA @ WA.T) * (WA @ UA.T))
    if ii.size and ia.size:
        UI, WI = Ui[:, ii], W[:, ii]
        g = np.sqrt((lam[ia, None] - t) / (lam[ia, None] - lam[None, ii]))
        Z = (UA[:, :, None] * WI[:, None, :] + WA[:, :, None] * UI[:, None, :]) * g
        Z = Z.reshape(Ui.shape[0], -1)
        H += c * (Z @ Z.T)
    return 0.5 * (H + H.T)


def _exact_affordable(problem) -> bool:
    """True where the exact curvature may be used: ``tau > 0``, dense ``K``, ``n <=
    EXACT_FALLBACK_N`` (for ``tau = 0`` the model is exact)."""
    return (getattr(problem, "tau", 0.0) > 0 and isinstance(problem.kd.K, np.ndarray)
            and problem.kd.n <= EXACT_FALLBACK_N)


def _exact_curvature(problem) -> bool:
    """True where :func:`_curvature` is the exact Hessian: affordable (:func:`_exact_affordable`)
    and ``n <= EXACT_CURVATURE_N``, or switched on by :func:`newton` after the model's steps
    (``problem.exact_curvature``)."""
    return _exact_affordable(problem) and (problem.kd.n <= EXACT_CURVATURE_N
                                           or getattr(problem, "exact_curvature", False))


def _switch_budget(problem) -> int:
    """Newton steps of the model curvature before :func:`newton` switches to the exact one.

    ``EXACT_SWITCH_STEPS`` where the exact curvature is affordable but not yet used
    (``EXACT_CURVATURE_N < n <= EXACT_FALLBACK_N``, ``tau > 0``): where ``tau`` kills most
    eigenvalues the model crawls (h up by a constant 2.4e-7 per step for 100 steps at spect,
    n = 80, tau = 1). Otherwise no switch (a budget larger than any ``max_iter``). Resets
    ``problem.exact_curvature``.
    """
    problem.exact_curvature = False
    if _exact_affordable(problem) and not _exact_curvature(problem):
        return EXACT_SWITCH_STEPS
    return np.iinfo(np.int64).max


def _curvature(problem, ev, free: np.ndarray, dtype=np.float64,
               rows: np.ndarray | None = None) -> np.ndarray:
    """``-hess h`` restricted to ``free`` (in the coordinates ``z`` of the problem); with
    ``rows`` (positions in ``free``), only those rows (``|rows| x |free|``).

    Exact (:func:`exact_curvature_d`) where :func:`_exact_curvature` says so;
    otherwise the ``tau = 0`` Hessian as a model, as follows.

    Built in row blocks straight into one ``|rows| x |free|`` array of ``dtype`` (the only
    matrix of that size; block temporaries are ``CURVATURE_ROWS x n`` in float64):
    ``O(|rows| |free| (r + 1))`` time for a rank-``r`` ``F``, ``O(|rows| |free|)`` memory.
    """
    kd = problem.kd
    K = kd.K
    d = problem.d_of(ev.z)
    dix, sv = problem.d_coordinates(free)
    if _exact_curvature(problem):
        H = _exact_curvature_z(problem, ev, d, dix, sv, dtype)
        return H if rows is None else H[rows]
    f = dix.size
    rsel = np.arange(f) if rows is None else rows
    m = rsel.size
    F = ev.inner.F
    c = 1.0 / (4.0 * problem.eta)
    zs = sv * d[dix]  # the signs sv (+-1) folded in: H_ij = sv_i sv_j (-hess_d h)_ij
    S = np.flatnonzero(d)
    d2S = d[S] * d[S]
    H = np.empty((m, f), dtype=dtype)
    single = H.dtype != np.float64
    UF = F.U[dix] * sv[:, None] if hasattr(F, "mu") else None
    UFmuT = None if UF is None else np.asfortranarray((UF * F.mu).T)
    # diag((K o K) d^2) / (4 eta): on the support, the evaluation's pass over K[S][:, S] left it
    # in kk_d2; only free points off the support need their rows K[i, S] (make_moons n = 2,000,
    # C = 32: 3 to 444 of 650 to 915 free coordinates)
    kkd, need = _support_diagonal(ev.inner.kk_d2, S, dix)
    # rows K[i, :] restricted to the support: only K[i][:, S] enters (d vanishes off S). Where
    # every free coordinate is in the support (near the optimum), they are rows of the block
    # K[S][:, S] the evaluation cached: no pass over K (2.0 -> 1.2 ms at |free| = 650, n = 2,000)
    src, cols, cS = _curvature_source(kd, S, dix)
    step = CURVATURE_ROWS
    with blas_threads(f):
        for lo in range(0, m, step):
            hi = min(lo + step, m)
            sel = rsel[lo:hi]
            Krows = np.take(src, cols[sel], axis=0)  # b x n, or b x |S| from the block
            KB = np.take(Krows, cols, axis=1)  # b x f (take: faster than Krows[:, cols])
            out = np.empty((hi - lo, f)) if single else H[lo:hi]
            # sv_i sv_j (F + (d d') o K / (4 eta)) o K on [rows, free], as KB o (c zs zs' o KB
            # + G): three passes over the block, no outer-product temporary
            np.multiply(KB, zs, out=out)
            out *= (c * zs[sel])[:, None]
            if UF is not None:  # G = sv_i sv_j F[rows, free], added in place (out' is F-order)
                _add_product(out, UF, np.asfortranarray(UFmuT[:, sel]))
            else:  # F = 11' + Gamma: G = sv sv' + c zs zs' o KB, the term above once more
                out *= 2.0
                out += np.multiply.outer(sv[sel], sv)
            out *= KB
            late = np.flatnonzero(need[sel])
            if late.size:  # rows off the support: (K o K)[i, S] d_S^2 from the rows just taken
                kkd[sel[late]] = _support_squares(Krows, late, cS, d2S)
            out[np.arange(hi - lo), sel] += c * kkd[sel]  # sv_i^2 = 1
            if single:
                H[lo:hi] = out
    if rows is None:
        _couple_pairs(H, K, d, dix, sv, c)
    return H


def _support_squares(Krows: np.ndarray, late: np.ndarray, cS: np.ndarray | None,
                     d2S: np.ndarray) -> np.ndarray:
    """``(K o K)[i, S] d_S^2`` for the rows ``late`` of ``Krows`` (rows of ``K``, or of
    ``K[:, S]`` when ``cS`` is None): a few rows are copied first, many are not (step 2 at
    make_moons n = 2,000, C = 32: 444 of 915; copying their whole rows cost 3.6 against 2.3 ms)."""
    b = Krows.shape[0]
    if cS is None:
        KS = Krows[late]
    elif late.size * (Krows.shape[1] + cS.size) < b * cS.size:
        KS = np.take(Krows[late], cS, axis=1)
    else:
        KS = np.take(Krows, cS, axis=1)
        KS = KS[late] if late.size < b else KS
    KS *= KS
    return KS @ d2S


def _couple_pairs(H: np.ndarray, K: np.ndarray, d: np.ndarray, dix: np.ndarray, sv: np.ndarray,
                  c: float) -> None:
    """P2: a free ``ah_i`` and a free ``ac_i`` move the same ``d_i``; the diagonal term
    ``c (K o K)_i d^2`` of the curvature couples them too (added to ``H`` in place)."""
    uniq, inv, counts = np.unique(dix, return_inverse=True, return_counts=True)
    if np.any(counts > 1):
        d2v = d * d
        for u in np.flatnonzero(counts > 1):
            pos = np.flatnonzero(inv == u)
            extra = c * float((K[uniq[u]] ** 2) @ d2v)
            for r in pos:
                for q in pos:
                    if r != q:
                        H[r, q] += extra * sv[r] * sv[q]


def _support_diagonal(kk: np.ndarray | None, S: np.ndarray, dix: np.ndarray):
    """``((K o K)[dix][:, S] d_S^2, need)``: the entries of ``dix`` in the support ``S`` copied
    from ``kk = (K o K)[S][:, S] d_S^2`` (the evaluation's, :attr:`InnerSolution.kk_d2`); the
    others (``need``, all of them without ``kk``) are left for the caller to compute."""
    out = np.empty(dix.size)
    need = np.ones(dix.size, dtype=bool)
    if kk is not None and kk.size == S.size and S.size:
        pos = np.minimum(np.searchsorted(S, dix), S.size - 1)
        inS = S[pos] == dix
        out[inS] = kk[pos[inS]]
        need = ~inS
    return out, need


def _add_product(out: np.ndarray, A: np.ndarray, BT: np.ndarray) -> None:
    """``out += (A @ BT)'`` in place for C-ordered float64 ``out`` (``b x f``), ``A`` (``f x
    r``), ``BT`` (``r x b``): one BLAS call with ``beta = 1`` on ``out'`` (Fortran-ordered), no
    ``b x f`` temporary (a rank-``r`` product is a pass over memory, not arithmetic)."""
    res = dgemm(1.0, A, BT, beta=1.0, c=out.T, overwrite_c=True)
    if not np.shares_memory(res, out):  # f2py copied (not expected for these layouts)
        out[...] = res.T


def _exact_curvature_z(problem, ev, d, dix, sv, dtype) -> np.ndarray:
    """The exact ``-hess h`` on the coordinates ``z`` of ``dix`` (signs ``sv``), from the dense
    inner route's eigenpairs where ``ev`` has them (:func:`exact_curvature_basis`)."""
    K, eta, tau = problem.kd.K, problem.eta, problem.tau
    basis = ev.inner.basis
    if basis is not None:  # the inner's eigenpairs: no eigendecomposition here
        Hd = exact_curvature_basis(K, d, eta, tau, dix, ev.inner.eigvals, basis)
    else:
        Hd = exact_curvature_d(K, d, eta, tau, dix)
    return (Hd * sv[:, None] * sv[None, :]).astype(dtype, copy=False)


def _curvature_source(kd, S: np.ndarray, dix: np.ndarray):
    """``(src, cols, cS)`` with ``K[dix][:, dix] = src[cols][:, cols]`` and ``K[dix][:, S] =
    src[cols][:, cS]`` (``cS`` None: all columns of ``src``).

    The cached block ``K[S][:, S]`` when ``dix`` lies in ``S`` and the kernel data copy that
    block; when ``dix`` also has ``k`` points ``E`` off the support, that block bordered by
    their rows and columns, ``K[V][:, V]`` for ``V = [S, E]`` (a copy of the block, ``k`` rows
    of ``K`` and ``k`` columns of the cached ``K[S, :]``, where reading the ``|dix|`` rows of
    ``K`` itself costs ``|dix| n``: make_moons n = 2,000, C = 32, most steps free 3 to 16 points
    at 0 besides ~650 in the support); else ``K``.
    """
    if S.size and kd._copy(S) and S.size < kd.n:
        pos = np.minimum(np.searchsorted(S, dix), S.size - 1)
        inS = S[pos] == dix
        if np.all(inS):
            return kd.block(S), pos, None
        E = np.unique(dix[~inS])
        s, u = S.size, S.size + E.size
        # entries copied: the bordered block and the rows of the curvature from it, against
        # the rows of K (a small free set beside a large support reads K: make_moons, C = 1)
        cheaper = s * s + E.size * kd.n + dix.size * u < dix.size * kd.n
        R = kd.rows(S) if cheaper and kd._copy(u) else None  # K[S, :], cached
        if R is not None:
            V = np.concatenate([S, E])
            src = np.empty((u, u))
            src[:s, :s] = kd.block(S)
            np.take(R, E, axis=1, out=src[:s, s:])
            np.take(np.take(kd.K, E, axis=0), V, axis=1, out=src[s:])
            cols = np.where(inS, pos, s + np.searchsorted(E, dix))
            return src, cols, np.arange(s)
    return kd.K, dix, S


def _hessian_matvec(problem, ev, free: np.ndarray, V: np.ndarray) -> np.ndarray:
    """``(-hess h)[free][:, free] @ V`` in float64 without forming the matrix.

    ``(F o K) x + (diag((K o K) d^2) x + d o ((K o K)(d o x))) / (4 eta)`` in the coordinates
    ``d``, through products with ``K`` (``F o K`` by :func:`apply_FK`, ``K o K`` in row blocks):
    ``O(n^2 (r + m))`` time for ``m`` columns, ``ROW_BLOCK x n`` temporaries.
    """
    kd = problem.kd
    K = kd.K
    n = kd.n
    d = problem.d_of(ev.z)
    dix, sv = problem.d_coordinates(free)
    V2 = V.reshape(V.shape[0], -1)
    m = V2.shape[1]
    X = np.zeros((n, m))
    np.add.at(X, dix, sv[:, None] * V2)  # SVR: ah_i and ac_i move the same d_i
    c = 1.0 / (4.0 * problem.eta)
    out = np.empty((n, m))
    for j in range(m):
        out[:, j] = apply_FK(ev.inner.F, kd, X[:, j])
    d2 = d * d
    dX = d[:, None] * X
    with blas_threads(n):
        for lo in range(0, n, ROW_BLOCK):
            B = K[lo:lo + ROW_BLOCK]
            B2 = B * B
            out[lo:lo + ROW_BLOCK] += c * ((B2 @ d2)[:, None] * X[lo:lo + ROW_BLOCK]
                                           + d[lo:lo + ROW_BLOCK, None] * (B2 @ dX))
    res = sv[:, None] * out[dix]
    return res.reshape(V.shape)


def _better(problem, en, ev, quick: float) -> bool:
    """Accept a trial point: ``h`` increased, or ``h`` decreased by no more than its round-off
    (:func:`_h_roundoff`; near the optimum the change drowns in it) and the cheap duality gap
    decreased.

    The gap alone is not a merit function away from the optimum: accepting every step whose
    cheap gap decreased let Newton take steps that lowered ``h`` by far more than round-off
    (cpusmall, n = 4,096, C = 16: ``h`` fell by 3.2e3 at ``|h|`` = 1.7e7 in the first step) and
    then wander for its 100 steps without certifying.
    """
    if en.h > ev.h:
        return True
    return bool(ev.h - en.h <= _h_roundoff(problem, ev) and problem.quick_rel_gap(en) < quick)


def _h_roundoff(problem, ev) -> float:
    """A bound on the round-off of a computed ``h``: ``64 eps max(|h|, eta n^2)`` (the
    ``eta ||F - 11'||^2`` and ``(F o K)`` terms are sums of ``n^2`` products)."""
    n = problem.kd.n
    return 64.0 * float(np.finfo(float).eps) * max(abs(float(ev.h)), problem.eta * n * n)


def _kkt_solve(A, HA, Hr, r2=None):
    """``(p, nu)`` with ``H p + A nu = r``, ``A'p = r2`` from ``HA = H^-1 A`` and ``Hr = H^-1 r``
    (Schur complement ``A'H^-1 A``; ``r2 = 0`` by default)."""
    if A.shape[1] == 0:
        return Hr.copy(), np.zeros(0)
    Sm = A.T @ HA
    rhs = A.T @ Hr if r2 is None else A.T @ Hr - r2
    try:
        nu = np.linalg.solve(Sm, rhs)
    except np.linalg.LinAlgError:
        nu = np.linalg.lstsq(Sm, rhs, rcond=None)[0]
    return Hr - HA @ nu, nu


def _factorise(problem, ev, free0, H, free_H, single: bool, bound=None):
    """Cholesky factor of the curvature on ``free0`` (computed, or cut from ``H`` on
    ``free_H``); returns ``(solve, saved, free_H, blocks)``, or None when not positive definite.

    ``solve(B)`` applies ``H^-1`` (in float64 whatever the factor's type); ``saved`` is a copy
    of the unshifted curvature (up to ``CUT_ENTRIES``) to cut smaller problems from. ``bound``
    (boolean over ``free0``): the coordinates at a bound, the only ones a step can drop; when
    more than ``BORDER_MAX`` of them are free (and ``H`` has at most ``CUT_ENTRIES`` entries:
    the blocks are copies), the factor is blocked (``blocks``,
    :class:`_Blocks`), which drops some of them without a new factorisation of the rest (else
    ``blocks`` is None).
    """
    f0 = free0.size
    if H is None:
        H = _curvature(problem, ev, free0, np.float32 if single else np.float64)
        free_H = free0
    elif free_H.size != f0 or not np.array_equal(free_H, free0):
        pos = np.searchsorted(free_H, free0)
        # two takes: 0.24 ms against 1.12 ms for H[np.ix_(pos, pos)] (float32, 915 -> 741)
        H = np.take(np.take(H, pos, axis=0), pos, axis=1)
        free_H = free0
    nb = 0 if bound is None else int(np.count_nonzero(bound))
    small = H.size <= CUT_ENTRIES
    blocked = BORDER_MAX < nb < f0 and small
    saved = H.copy() if small and not blocked else None
    H[np.diag_indices_from(H)] += 1e-12 * max(1.0, float(np.max(np.diag(H))))
    if blocked:
        try:
            blocks = _Blocks(H, np.flatnonzero(~bound), np.flatnonzero(bound), f0)
        except LinAlgError:
            return None
        return blocks.solve, None, free_H, blocks
    dtype = H.dtype
    try:
        with blas_threads(f0):
            fac = cho_factor(H.T, check_finite=False, overwrite_a=True)  # in place
    except LinAlgError:
        return None

    def solve(B):
        with blas_threads(f0):
            X = cho_solve(fac, B.astype(dtype, copy=False), check_finite=False)
        return X.astype(np.float64, copy=False)

    return solve, saved, free_H, None


class _Blocks:
    """The curvature ``H`` (shifted, ``f x f``) factored in two blocks: ``I``, the coordinates
    inside the box (a Newton step never drops them), and ``B``, those at a bound (each may be
    dropped), by positions in the free set.

    ``H_II = L L'``, ``W = L^-1 H_IB``, ``Sc = H_BB - W'W = Lb Lb'`` (the Schur complement).
    Dropping coordinates of ``B`` leaves ``L`` and the kept columns of ``W`` as they are, and
    the Schur complement of the smaller problem is ``Sc`` restricted to the kept ones: a step
    that drops ``k`` of its ``|B|`` candidates refactorises ``(|B| - k)^3 / 3`` instead of
    ``(f - k)^3 / 3`` (make_moons n = 2,000, C = 32: 444 of 915 free coordinates at 0, 174 then
    55 and 38 dropped). ``O(f^3 / 3)`` time for the first factorisation, as one Cholesky;
    memory: ``L``, ``W``, ``Sc`` and ``Lb`` hold about ``f^2`` entries, and building them
    beside ``H`` peaks at 2.7 ``f x f`` (f = 1,500: 47 MB, against 24 MB for the in-place
    Cholesky), which is why only curvatures up to ``CUT_ENTRIES`` are blocked.
    """

    def __init__(self, H: np.ndarray | None, I: np.ndarray, B: np.ndarray, f: int,  # noqa: E741
                 parts=None):
        self.I, self.B, self.f = I, B, f
        with blas_threads(f):
            if parts is None:
                HI = np.take(H, I, axis=0)
                L = cholesky(np.take(HI, I, axis=1).T, lower=True, overwrite_a=True,
                             check_finite=False)
                W = solve_triangular(L, np.take(HI, B, axis=1), lower=True, overwrite_b=True,
                                     check_finite=False)
                Sc = np.take(np.take(H, B, axis=0), B, axis=1)
                Sc -= W.T @ W
                parts = L, W, Sc
            self.L, self.W, self.Sc = parts
            self.Lb = cholesky(self.Sc.T, lower=True, check_finite=False)

    def solve(self, X: np.ndarray) -> np.ndarray:
        """``H^-1 X`` in float64 (block forward and back substitution)."""
        L, W, Lb = self.L, self.W, self.Lb
        X = X.astype(L.dtype, copy=False)
        out = np.empty(X.shape, dtype=np.float64)
        opts = {"lower": True, "check_finite": False}
        with blas_threads(self.f):
            y1 = solve_triangular(L, X[self.I], **opts)
            y2 = solve_triangular(Lb, X[self.B] - W.T @ y1, **opts)
            x2 = solve_triangular(Lb, y2, trans="T", **opts)
            out[self.I] = solve_triangular(L, y1 - W @ x2, trans="T", **opts)
        out[self.B] = x2
        return out

    def cut(self, keep: np.ndarray) -> _Blocks:
        """The factor on the free coordinates ``keep`` (boolean over the ``f`` of this one),
        which keeps every coordinate of ``I``: only the kept part of ``Sc`` is factorised.
        Raises LinAlgError when that part is not positive definite."""
        kb = np.flatnonzero(keep[self.B])
        newpos = np.cumsum(keep) - 1
        Sc = np.take(np.take(self.Sc, kb, axis=0), kb, axis=1)
        return _Blocks(None, newpos[self.I], newpos[self.B[kb]], int(np.count_nonzero(keep)),
                       (self.L, np.take(self.W, kb, axis=1), Sc))


def _refine(problem, ev, free0, gF, A, HA, p, nu, solve):
    """Iterative refinement of ``H p + A nu = g``, ``A'p = 0`` against exact Hessian products
    (after a float32 solve); returns ``(p, nu, ok)``, ``ok`` False when float32 is too coarse
    for the system (relative residual above ``1e-6``)."""
    res = np.inf
    for _ in range(REFINE_STEPS):
        r1 = gF - _hessian_matvec(problem, ev, free0, p) - A @ nu
        res = np.linalg.norm(r1) / max(np.linalg.norm(gF), 1e-300)
        if res <= 1e-10:
            break
        dp, dnu = _kkt_solve(A, HA, solve(r1), -(A.T @ p))
        p, nu = p + dp, nu + dnu
    return p, nu, res <= 1e-6


class _Factor(NamedTuple):
    """A Cholesky factor of the curvature on the coordinates ``free`` (sorted): ``solve(B)``
    applies its inverse; ``saved`` is the unshifted curvature (None above ``CUT_ENTRIES``);
    ``single`` says the factor is float32; ``refine`` that each solve with it is refined in
    float64 (not for a ``rough`` direction far from the optimum, :data:`ROUGH_GAP`);
    ``blocks`` the blocked factor where it is one (:class:`_Blocks`: cut, not refactorised,
    when a step drops many coordinates); ``grown`` that it is a previous step's factor bordered
    by new coordinates (:func:`_grown`)."""

    free: np.ndarray
    solve: Callable[[np.ndarray], np.ndarray]
    saved: np.ndarray | None
    single: bool
    refine: bool
    blocks: _Blocks | None = None
    grown: bool = False


def _reusable(factor: _Factor | None, free0: np.ndarray) -> np.ndarray | None:
    """Where ``free0`` sits in a previous step's factor, or None when that factor cannot serve:
    ``free0`` must be a subset of its coordinates with at most ``BORDER_MAX`` of them left out
    (they become bordered constraints ``p_j = 0``)."""
    if factor is None or factor.single or free0.size == 0:
        return None
    f = factor.free
    pos = np.searchsorted(f, free0)
    if np.any(pos >= f.size) or not np.array_equal(f[np.minimum(pos, f.size - 1)], free0):
        return None
    return pos if f.size - free0.size <= BORDER_MAX else None


def _grown(problem, ev, factor: _Factor | None, free0: np.ndarray) -> _Factor | None:
    """A previous step's float64 factor bordered by the coordinates of ``free0`` it lacks, or
    None: at most ``BORDER_MAX`` of them, at most ``BORDER_MAX`` of its own left out, not a
    bordered factor itself (no nesting), and ``|free0| >= GROW_MIN``.

    ``H_g = [[H_o, h], [h', c]]`` with the old (stale) ``H_o`` and the new rows ``[h', c]`` of
    the current curvature (:func:`_curvature` ``rows``: ``k |free|`` entries): ``Z = H_o^-1 h``
    (one solve with ``k`` columns) and the Schur complement ``c - h'Z`` (``k x k``). Near the
    optimum the free set gains a few points per step (make_moons n = 2,000, C = 32: 653 -> 662
    at a quick gap of 2e-3), which made :func:`_reusable` refuse the factor.
    """
    if factor is None or factor.single or factor.grown or free0.size < GROW_MIN:
        return None
    new = np.setdiff1d(free0, factor.free, assume_unique=True)
    if not 0 < new.size <= BORDER_MAX:
        return None
    union = np.union1d(factor.free, new)
    if union.size - free0.size > BORDER_MAX:
        return None
    dix, _ = problem.d_coordinates(union)
    if np.unique(dix).size < dix.size:  # P2 pairs couple through the whole curvature
        return None
    rn = np.searchsorted(union, new)
    ro = np.searchsorted(union, factor.free)
    Hr = _curvature(problem, ev, union, np.float64, rows=rn)  # k x |union|
    h, cnn = Hr[:, ro].T, Hr[:, rn]
    Z = factor.solve(h)
    Sc = cnn - h.T @ Z
    Sc[np.diag_indices_from(Sc)] += 1e-12 * max(1.0, float(np.max(np.diag(cnn))))
    try:
        Lg = cho_factor(Sc, check_finite=False)
    except LinAlgError:
        return None
    old_solve = factor.solve

    def solve(B):
        xo = old_solve(B[ro])
        xn = cho_solve(Lg, B[rn] - h.T @ xo, check_finite=False)
        out = np.empty(B.shape)
        out[ro] = xo - Z @ xn
        out[rn] = xn
        return out

    return _Factor(union, solve, None, False, False, None, True)


def _constrained_direction(problem, ev, z, g, binding, has_eq, margin, H=None, free_H=None,
                           double=False, reuse: _Factor | None = None, rough: bool = False,
                           parent: _Factor | None = None):
    """Newton direction on the free coordinates, dropping those it would push out of the box.

    One Cholesky factorisation of the curvature ``H`` on the first free set ``F0``; the
    coordinates dropped later (``p_B = 0``) and the equality constraint (``y_F'p = 0``) are
    constraints ``A'p = 0`` handled by the Schur complement of the same factor:
    ``p = H^-1 (g - A nu)``, ``(A'H^-1 A) nu = A'H^-1 g`` (triangular solves for the new columns
    of ``A`` only), while at most ``BORDER_MAX`` coordinates are dropped; beyond that it
    refactorises on the reduced set: only the Schur complement of the kept at-bound coordinates
    when the factor is blocked (``parent``, :class:`_Blocks`), else the curvature cut from the
    first one when that was kept (up to ``CUT_ENTRIES``). Above ``SINGLE_BYTES`` of float64
    curvature the factorisation is in float32 (half the memory and time), each solve refined
    in float64; with ``rough`` (far from the optimum, :data:`ROUGH_GAP`) always in float32 and
    not refined. ``reuse``: a previous step's factor on a superset of ``F0``
    (:func:`_reusable`), or bordered by the few coordinates of ``F0`` it lacks (:func:`_grown`),
    used instead of a new one (the coordinates it has beyond ``F0`` start as dropped). Returns
    ``(free, p_free, factor)``, or ``(None, None, None)`` when ``H`` is not positive definite.
    ``H``/``free_H``: a curvature already computed on a superset.
    """
    free0 = np.flatnonzero(~binding)
    if free0.size == 0:
        return None, None, None
    pos = _reusable(reuse, free0)
    grown = _grown(problem, ev, reuse, free0) if pos is None else None
    if pos is not None:
        factor = reuse
    elif grown is not None:
        factor, pos = grown, np.searchsorted(grown.free, free0)
    else:
        f0 = free0.size
        factor = _cut(parent, free0)
        if factor is None:
            if H is None:
                single = not double and ((rough and f0 >= ROUGH_MIN)
                                         or 8 * f0 * f0 > SINGLE_BYTES)
            else:  # a curvature cut from a previous factor's keeps its type
                single = H.dtype != np.float64
            zF = z[free0]
            bound = (zF <= margin) | (zF >= problem.C - margin)
            factored = _factorise(problem, ev, free0, H, free_H, single, bound)
            if factored is None:  # not positive definite (in float32: the float64 system
                if single:  # decides)
                    return _constrained_direction(problem, ev, z, g, binding, has_eq, margin,
                                                  double=True)
                return None, None, None
            factor = _Factor(factored[2], factored[0], factored[1], single,
                             single and not rough, factored[3])
        pos = np.arange(f0)
    out = _bordered_direction(problem, ev, z, g, has_eq, margin, factor, pos)
    if out is None:
        return None, None, None
    if isinstance(out, np.ndarray):  # many drops: a smaller problem (curvature cut if kept;
        binding = binding.copy()  # a reused factor's curvature is stale: computed afresh)
        binding[out] = True
        if factor is reuse or factor.grown:
            return _constrained_direction(problem, ev, z, g, binding, has_eq, margin,
                                          rough=rough)
        return _constrained_direction(problem, ev, z, g, binding, has_eq, margin, factor.saved,
                                      factor.free if factor.saved is not None else None,
                                      rough=rough, parent=factor)
    if out == "double":  # float32 too coarse for this system (ill-conditioned)
        return _constrained_direction(problem, ev, z, g, binding, has_eq, margin, double=True)
    return out[0], out[1], factor


def _cut(parent: _Factor | None, free0: np.ndarray) -> _Factor | None:
    """``parent``'s blocked factor cut to ``free0`` (:meth:`_Blocks.cut`), or None where it has
    none, ``free0`` is not its free set less some of its at-bound coordinates, or the cut is not
    positive definite (then the caller factorises afresh)."""
    if parent is None or parent.blocks is None:
        return None
    keep = np.isin(parent.free, free0, assume_unique=True)
    if np.count_nonzero(keep) != free0.size or not np.all(keep[parent.blocks.I]):
        return None
    try:
        blocks = parent.blocks.cut(keep)
    except LinAlgError:
        return None
    return _Factor(free0, blocks.solve, None, parent.single, parent.refine, blocks)


def _bordered_direction(problem, ev, z, g, has_eq, margin, factor: _Factor, pos: np.ndarray):
    """The Newton direction with ``factor`` (coordinates ``factor.free``, of which ``pos`` are
    free now; the others start dropped), dropping the coordinates it pushes out of the box.

    Returns ``(free, p_free)``; the coordinates to bind for a smaller problem when more than
    ``BORDER_MAX`` are dropped; ``"double"`` when a float32 factor is too coarse; None after 50
    rounds.
    """
    C = problem.C
    free_f, solve = factor.free, factor.solve
    f0 = free_f.size
    gF = g[free_f]
    dropped = np.ones(f0, dtype=bool)
    dropped[pos] = False
    start = np.flatnonzero(dropped)
    # one solve for g, y and the coordinates dropped from the start (a triangular solve reads
    # the whole factor whatever the number of right-hand sides)
    R = np.zeros((f0, 1 + has_eq + start.size))
    R[:, 0] = gF
    if has_eq:
        R[:, 1] = problem.eq_vector[free_f]
    R[start, 1 + has_eq + np.arange(start.size)] = 1.0
    X = solve(R)
    Hig = X[:, 0]
    cols, HiA = list(R[:, 1:].T), list(X[:, 1:].T)
    zF = z[free_f]
    for _ in range(50):
        A = np.column_stack(cols) if cols else np.zeros((f0, 0))
        HA = np.column_stack(HiA) if HiA else np.zeros((f0, 0))
        p, nu = _kkt_solve(A, HA, Hig)
        if factor.refine:
            p, nu, ok = _refine(problem, ev, free_f, gF, A, HA, p, nu, solve)
            if not ok:
                return "double"
        p[dropped] = 0.0
        bad = ~dropped & (((zF <= margin) & (p < 0)) | ((zF >= C - margin) & (p > 0)))
        if not np.any(bad):
            return free_f[~dropped], p[~dropped]
        if np.count_nonzero(dropped | bad) > BORDER_MAX:
            return free_f[dropped | bad]
        new = np.flatnonzero(bad)
        dropped[new] = True
        E = np.zeros((f0, new.size))
        E[new, np.arange(new.size)] = 1.0
        cols.extend(E.T)
        HiA.extend(solve(E).T)
    return None


def _multiplier(z: np.ndarray, g: np.ndarray, y: np.ndarray, C: float, margin: float) -> float:
    """Estimate of the multiplier ``lam`` of ``y'z = const`` (``y`` in {-1, +1}): the mean of
    ``y_i g_i`` over the coordinates inside the box; with none inside, the middle of the
    interval that the bounds leave (as libsvm's bias without free support vectors).

    A coordinate at a bound is binding for ``r = g - lam y`` when ``lam`` lies on one side of
    ``b_i = y_i g_i``: above it at 0 with ``y_i = 1`` and at ``C`` with ``y_i = -1`` (``lam >=
    b_i`` keeps it), below it otherwise. With ``lo = max`` of the first kind and ``hi = min`` of
    the second, the midpoint frees the violators on both sides; ``lam = 0`` freed a single
    coordinate (wine, sigma = 32: with ``y'p = 0`` Newton could not move and handed over).
    """
    inside = (z > margin) & (z < C - margin)
    b = y * g
    if np.any(inside):
        return float(np.mean(b[inside]))
    at0 = z <= margin
    keeps_above = (at0 & (y > 0)) | (~at0 & (y < 0))
    ends = [float(b[keeps_above].max())] if np.any(keeps_above) else []
    if not np.all(keeps_above):
        ends.append(float(b[~keeps_above].min()))
    return float(np.mean(ends)) if ends else 0.0  # one kind only: its end binds every bound


#: halvings of the projected step tried along the projection arc before the ratio test
ARC_STEPS = 8
#: largest first trial multiple of a Newton step (:func:`_next_scale`)
SCALE_MAX = 2.0

#: accelerated iterations of the first hand-over when Newton cannot step (doubled at each next
#: hand-over, within the ``fallback_iter`` budget); Newton resumes from where they end
BURST_ITER = 50


def _newton_step(problem, z, ev, quick: float, reuse: _Factor | None = None,
                 rough: bool | None = None, scale: float = 1.0):
    """One projected Newton step from ``z``: ``((z+, ev+, t), factor)``, ``t`` the multiple of
    the Newton direction taken (:func:`_step_along`), or None.

    None when no coordinate is free, the curvature is not positive definite, or neither the
    full projected step nor any halving of the ratio-test step (down to ``1e-12``) is accepted
    by :func:`_better`. ``reuse``: the previous step's factor, tried first where it serves
    (:func:`_reusable`); when its step is not accepted the step is redone with a new one.
    ``rough`` (default: the quick relative gap above :data:`ROUGH_GAP`): the direction from an
    unrefined float32 factor; when its step is not accepted the step is redone in float64.
    ``scale``: the first trial step's multiple of the Newton step (:func:`_next_scale`).
    """
    C = problem.C
    y = problem.eq_vector  # normal of the equality constraint (None for P3)
    has_eq = y is not None
    g = ev.grad
    margin = 1e-12 * C
    lam = _multiplier(z, g, y, C, margin) if has_eq else 0.0
    r = g - lam * y if has_eq else g
    binding = ((z <= margin) & (r < 0)) | ((z >= C - margin) & (r > 0))
    if rough is None:
        rough = quick > ROUGH_GAP and not _exact_curvature(problem)
    free, pF, factor = _constrained_direction(problem, ev, z, g, binding, has_eq, margin,
                                              reuse=reuse, rough=rough)
    if pF is None or free is None or np.count_nonzero(pF) < (2 if has_eq else 1):
        # (with y'p = 0 one free coordinate cannot move: its p is round-off, and every trial
        # point along it was z itself, 49 evaluations before the hand-over; wine, sigma = 32)
        return _newton_step(problem, z, ev, quick, rough=False, scale=scale) if rough else None
    stale = reuse is not None and factor is not None and (factor is reuse or factor.grown)
    out = _step_along(problem, z, ev, quick, free, pF, full_only=stale, t0=scale)
    if out is None and (stale or (factor is not None and factor.single and rough)):
        # the old factor's (or the rough float32) step failed: a new float64 factor decides
        return _newton_step(problem, z, ev, quick, rough=False, scale=scale)
    return None if out is None else (out, factor)


def _step_along(problem, z, ev, quick: float, free: np.ndarray, pF: np.ndarray,
                full_only: bool = False, t0: float = 1.0):
    """The accepted ``(z+, ev+, t)`` along the Newton direction ``pF`` on ``free``, or None
    (``full_only``: the full projected step only, no shorter step); ``t`` is the multiple of
    ``pF`` taken (0 for the ratio test's steps).

    Tried in order, each one evaluation, until :func:`_better` accepts: the projected step
    ``t0 pF`` when ``t0 > 1`` (:func:`_next_scale`); the full projected step;
    ``ARC_STEPS`` halvings of it along the projection arc while they are longer than the ratio
    test's step; the ratio test's step (the longest that keeps every free coordinate in the box:
    one bound becomes active), halved. Without the arc, a start off the solution's active set
    (half the SVC solution, make_moons n = 300-2,000) made Newton crawl one bound per step for
    46-100 steps; with it 5-12.
    """
    C = problem.C
    y = problem.eq_vector
    # 1. the step projected on the free coordinates only (binding ones stay put): a+_F =
    #    P(a_F + t p_F) onto {y_F'a_F = -y_B'a_B, box}, so several bounds can become active at
    #    once; t = 1, then (2.) halvings along this arc while longer than the ratio test's step
    fixed = np.ones(problem.dim, dtype=bool)  # the dropped coordinates stay put too
    fixed[free] = False
    target = None if y is None else -float(y[fixed] @ z[fixed])
    with np.errstate(divide="ignore", invalid="ignore"):
        to_bound = np.where(pF > 0, (C - z[free]) / pF, np.where(pF < 0, -z[free] / pF, np.inf))
    t_max = float(min(1.0, np.min(to_bound)))
    trials = [0.5 ** k for k in range(1 + (0 if full_only else ARC_STEPS))]
    for t in ([t0] if t0 > 1.0 else []) + trials:
        if t < 1.0 and t <= t_max:
            break
        z_new = z.copy()
        z_new[free] = (np.clip(z[free] + t * pF, 0.0, C) if y is None
                       else _project_core(z[free] + t * pF, y[free], C, target))
        if not np.array_equal(z_new, z):  # z itself is never better than z: no evaluation
            en = problem.evaluate(z_new, warm=ev)
            if _better(problem, en, ev, quick):
                return z_new, en, t
    if full_only:
        return None
    p = np.zeros(problem.dim)
    p[free] = pF
    # 3. otherwise the ratio test (longest step that keeps the free coordinates in the box;
    #    one bound becomes active), halved until accepted
    hit = free[np.argmin(to_bound)] if t_max < 1.0 else -1
    t = t_max
    while t > 1e-12 * max(t_max, 1e-300):
        z_new = z + t * p
        if t == t_max and hit >= 0:  # land exactly on the bound that was hit
            z_new[hit] = C if p[hit] > 0 else 0.0
        z_new = problem.project(z_new)
        if not np.array_equal(z_new, z):
            en = problem.evaluate(z_new, warm=ev)
            if _better(problem, en, ev, quick):
                return z_new, en, 0.0
        t *= 0.5
    return None


def _next_scale(ev, en, z, z_new, t: float) -> float:
    """The first trial multiple of the next Newton step: ``t rho`` clipped to ``[1,
    SCALE_MAX]``, ``rho = g'dz / (g - g+)'dz`` the maximiser of the quadratic along the step
    ``dz = z+ - z`` just taken (``t``: its multiple of the Newton step; 1 after a shorter one).

    For ``tau > 0`` the model curvature overestimates the Hessian (the soft-threshold is
    non-expansive), so full Newton steps fall short by a steady factor and converge linearly
    (make_moons, n = 2,000, C = 32: ``rho`` = 1.09-1.36 at every step, ``h`` gained a factor
    of ~10 less per step); the next step first tries that much more.
    """
    if t < 1.0:
        return 1.0
    dz = z_new - z
    g0, g1 = float(ev.grad @ dz), float(en.grad @ dz)
    if not (g0 > 0.0 and g1 < g0):
        return 1.0
    return min(max(t * g0 / (g0 - g1), 1.0), SCALE_MAX)


def _newton_phase(problem, z, ev, tol: float, steps: int, hist: dict, record: bool):
    """Newton steps until certified or stuck (no step accepted), at most ``steps`` of them.

    A slowly decreasing gap is not a reason to stop: while the active set is identified the
    gap can stay flat for dozens of accepted steps before Newton converges (make_moons,
    n = 2,000, C = 32: 81 steps, where the accelerated method does not reach 1e-6 in 5,000
    iterations); stopping there on a "stall" rule made the default fail. Returns
    ``(z, ev, cert, n_steps, converged)``.
    """
    cert = None
    factor = None  # the previous step's factor, reused near the optimum (not where the
    # curvature is exact: there Newton converges fast because the curvature is fresh)
    exact = _exact_curvature(problem)
    reuse_gap = -1.0 if exact else REUSE_GAP
    scale = 1.0
    for k in range(steps + 1):
        z_norm = problem.normalize(z)  # SVR: ah_i, ac_i > 0 together is never optimal
        if z_norm is not z:
            z, ev = z_norm, problem.evaluate(z_norm, warm=ev)
        quick = problem.quick_rel_gap(ev)
        if quick <= tol:
            cert = problem.certify(ev)
            if record:
                hist["gap"].append((hist["offset"] + k, cert.gap))
            if cert.rel_gap <= tol:
                return z, ev, cert, k, True
        if k == steps:
            return z, ev, cert, k, False
        out = _newton_step(problem, z, ev, quick, factor if quick <= reuse_gap else None,
                           scale=scale)
        if out is None:
            return z, ev, cert, k, False
        (z_new, en, t), factor = out
        step = float(np.linalg.norm(z_new - z))
        scale = 1.0 if exact else _next_scale(ev, en, z, z_new, t)
        z, ev = z_new, en
        if record:
            hist["h"].append(ev.h)
            hist["step"].append(step)
    return z, ev, cert, steps, False


def _burst(problem, z, tol: float, n: int, hist: dict, record: bool):
    """``n`` accelerated iterations from ``z`` (no warning: Newton may resume after them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = accelerated(problem, tol=tol, max_iter=n, alpha0=z, record_history=record)
    if record:
        hist["h"].extend(res.history["h"][1:])
        hist["step"].extend(res.history["step"])
        hist["gap"].extend((hist["offset"] + it, g) for it, g in res.history["gap"])
    return res


def newton(
    problem,
    *,
    tol: float = 1e-6,
    max_iter: int = 100,
    alpha0: np.ndarray | None = None,
    record_history: bool = True,
    fallback_iter: int = 5000,
) -> object:
    """Projected Newton with accelerated hand-overs (module docstring), stopping on the gap.

    At most ``max_iter`` Newton steps and ``fallback_iter`` accelerated iterations in all.
    Whenever Newton cannot step it hands over to a burst of accelerated iterations
    (``BURST_ITER``, doubled each time) and resumes from where the burst ends, so that it is
    never less robust than the accelerated method with the same budget, and stops as soon as
    either certifies ``tol``.
    """
    t_start = time.perf_counter()
    z = problem.start(alpha0)
    ev = problem.evaluate(z)
    hist = {"h": [ev.h], "step": [], "gap": [], "L": [], "offset": 0}
    n_newton = n_acc = n_burst = useless = 0
    burst = BURST_ITER
    status, cert = "max_iter", None
    switch = _switch_budget(problem)
    while True:
        z, ev, cert, k, done = _newton_phase(problem, z, ev, tol,
                                             min(max_iter - n_newton, switch), hist,
                                             record_history)
        n_newton += k
        hist["offset"] += k
        if done:
            status = "converged"
            break
        if switch < max_iter:  # the exact Hessian takes over from the model
            switch, problem.exact_curvature = max_iter, True
            if n_newton < max_iter:
                continue
        # a Newton phase after a burst that could not take a single step: the model does not
        # fit here, and restarting the bursts' momentum only costs; after two, one long run
        useless += n_burst > 0 and k == 0
        left = fallback_iter - n_acc
        if left <= 0:
            break
        n = left if n_newton >= max_iter or useless >= 2 else min(burst, left)
        res = _burst(problem, z, tol, n, hist, record_history)
        n_acc += res.n_iter
        n_burst += 1
        hist["offset"] += res.n_iter
        burst *= 2
        z, cert = res.alpha, res.certificate
        ev = problem.evaluate(z, warm=ev)
        if res.status == "converged":
            status = "converged"
            break
        if res.status == "stalled":
            break
    del hist["offset"]
    res = finish(problem, z, ev, cert, status, n_newton + n_acc, t_start, "newton", hist, tol)
    res.extra.update(newton_iter=n_newton, accelerated_iter=n_acc, fallback=n_burst > 0,
                     handovers=n_burst)
    if status != "converged":
        warnings.warn(f"DANK solver did not certify tol={tol:g}: {res.message}",
                      ConvergenceWarning, stacklevel=3)
    return res
