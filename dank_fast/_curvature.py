"""The curvature ``-hess h`` of DANK's dual objective on a set of free coordinates.

The Hessian of ``h`` (eq. gradf differentiated once more) is, in the coordinates ``d = a * y``,

    -hess_d h = (F o K) + Corr,   Corr = (diag((K o K) d^2) + d d' o K o K) / (4 eta)

exactly when ``tau = 0`` (``F = 11' + Gamma``); for ``tau > 0`` the same matrix is used as a
curvature model (the soft-threshold is non-expansive, so the true correction is smaller: the
model errs on the side of short steps). Where ``tau`` kills most eigenvalues of ``M`` the model
overestimates the curvature and Newton crawls (issue 15: tiny, nearly rank-one kernels); there,
for small ``n``, the exact Hessian (Daleckii-Krein, :func:`exact_curvature_d`) is used.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg.blas import dgemm

from ._kernel_data import ROWS
from ._threads import blas_threads

__all__ = ["curvature", "correction_diagonal", "exact_curvature_d", "exact_curvature_basis",
           "uses_exact", "switch_budget"]

#: when the exact Hessian (Daleckii-Krein, :func:`exact_curvature_d`: ``O(n^3)`` time and
#: ``O(n^2)`` memory per step) replaces the ``tau = 0`` model for ``tau > 0`` and a dense ``K``:
#: pairs ``(largest n, model Newton steps first)`` by increasing ``n``; above the last ``n``,
#: never. Where ``tau`` kills most eigenvalues of ``M`` the model crawls (spect, n = 80, tau = 1:
#: h up by a constant 2.4e-7 per step for 100 steps, then 5,000 accelerated iterations without
#: certifying; exact: 3 steps, 0.02 s; tests/test_newton.py,
#: test_exact_curvature_takes_over_where_the_model_crawls; ``bench_grid.py --datasets spect
#: heart --grid -1 1 3 5 --tau 1 --no-warm``: spect's median ratio to SVC 3.4x, 47x without,
#: 5 of 16 fits then uncertified). Up to n = 64 the exact Hessian is used from the start; up
#: to n = 160 after 10 model steps, so that a solve the model certifies within them is
#: unchanged (from the start up to n = 160: 14-19% fewer Newton steps over the paper's grid,
#: the same time)
EXACT_CURVATURE = ((64, 0), (160, 10))


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
    (U_kp W_kq + W_kp U_kq)``. For ``tau = 0`` this is the model of :func:`curvature` (``Phi =
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


def _model_steps(problem) -> int | None:
    """Newton steps of the ``tau = 0`` model before the exact curvature takes over
    (:data:`EXACT_CURVATURE`), or None where it never does: ``tau = 0`` (the model is exact),
    a kernel that is not a dense array, or ``n`` above the rule's last size."""
    if not (getattr(problem, "tau", 0.0) > 0 and isinstance(problem.kd.K, np.ndarray)):
        return None
    return next((steps for n_max, steps in EXACT_CURVATURE if problem.kd.n <= n_max), None)


def uses_exact(problem) -> bool:
    """True where :func:`curvature` is the exact Hessian (:data:`EXACT_CURVATURE`): from the
    start, or switched on by :func:`dank_fast._newton.newton` after the model's steps
    (``problem.exact_curvature``)."""
    steps = _model_steps(problem)
    return steps is not None and (steps == 0 or getattr(problem, "exact_curvature", False))


def switch_budget(problem) -> int:
    """Newton steps of the model curvature before :func:`dank_fast._newton.newton` switches to
    the exact one (:data:`EXACT_CURVATURE`); where there is no switch (exact from the start, or
    never), a budget larger than any ``max_iter``. Resets ``problem.exact_curvature``.
    """
    problem.exact_curvature = False
    steps = _model_steps(problem)
    return steps if steps else np.iinfo(np.int64).max


def curvature(problem, ev, free: np.ndarray) -> np.ndarray:
    """``-hess h`` restricted to ``free`` (in the coordinates ``z`` of the problem).

    Exact (:func:`exact_curvature_d`) where :func:`uses_exact` says so; otherwise the ``tau =
    0`` Hessian as a model, as follows.

    Built in blocks of ``ROWS`` rows straight into one ``|free| x |free|`` array (the only
    matrix of that size; block temporaries are ``ROWS x n``): ``O(|free|^2 (r + 1))`` time for a
    rank-``r`` ``F``, ``O(|free|^2)`` memory.
    """
    K = problem.kd.K
    d = problem.d_of(ev.z)
    dix, sv = problem.d_coordinates(free)
    if uses_exact(problem):
        return _exact_curvature_z(problem, ev, d, dix, sv)
    f = dix.size
    rsel = np.arange(f)
    F = ev.inner.F
    c = 1.0 / (4.0 * problem.eta)
    zs = sv * d[dix]  # the signs sv (+-1) folded in: H_ij = sv_i sv_j (-hess_d h)_ij
    S = np.flatnonzero(d)
    d2S = d[S] * d[S]
    H = np.empty((rsel.size, f))
    UF = F.U[dix] * sv[:, None] if hasattr(F, "mu") else None
    UFmuT = None if UF is None else np.asfortranarray((UF * F.mu).T)
    # diag((K o K) d^2) / (4 eta): on the support, the evaluation's pass over K[S][:, S] left it
    # in kk_d2; only free points off the support need their rows K[i, S]
    kkd, need = _support_diagonal(ev.inner.kk_d2, S, dix)
    with blas_threads(f):
        for lo in range(0, rsel.size, ROWS):
            sel = rsel[lo:lo + ROWS]
            Krows = np.take(K, dix[sel], axis=0)  # b x n
            KB = np.take(Krows, dix, axis=1)  # b x f (take: faster than Krows[:, dix])
            out = H[lo:lo + ROWS]
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
                kkd[sel[late]] = _support_squares(Krows, late, S, d2S)
            out[np.arange(sel.size), sel] += c * kkd[sel]  # sv_i^2 = 1
    _couple_pairs(H, K, d, dix, sv, c)
    return H


def correction_diagonal(problem, ev, dix: np.ndarray) -> np.ndarray:
    """``(K o K)[dix][:, S] d_S^2``, the diagonal of the curvature's correction over ``c``: from
    the evaluation's ``kk_d2`` on the support, from rows of ``K`` off it. ``O(|dix| n)``."""
    K = problem.kd.K
    d = problem.d_of(ev.z)
    S = np.flatnonzero(d)
    kkd, need = _support_diagonal(ev.inner.kk_d2, S, dix)
    late = np.flatnonzero(need)
    d2S = d[S] * d[S]
    for lo in range(0, late.size, ROWS):
        sel = late[lo:lo + ROWS]
        Krows = np.take(K, dix[sel], axis=0)
        kkd[sel] = _support_squares(Krows, np.arange(sel.size), S, d2S)
    return kkd


def _support_squares(Krows: np.ndarray, late: np.ndarray, S: np.ndarray,
                     d2S: np.ndarray) -> np.ndarray:
    """``(K o K)[i, S] d_S^2`` for the rows ``late`` of ``Krows`` (rows of ``K``): a few rows
    are copied first, many are not (copying many whole rows costs more than the columns)."""
    b = Krows.shape[0]
    if late.size * (Krows.shape[1] + S.size) < b * S.size:
        KS = np.take(Krows[late], S, axis=1)
    else:
        KS = np.take(Krows, S, axis=1)
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


def _exact_curvature_z(problem, ev, d, dix, sv) -> np.ndarray:
    """The exact ``-hess h`` on the coordinates ``z`` of ``dix`` (signs ``sv``), from the dense
    inner route's eigenpairs where ``ev`` has them (:func:`exact_curvature_basis`)."""
    K, eta, tau = problem.kd.K, problem.eta, problem.tau
    basis = ev.inner.basis
    if basis is not None:  # the inner's eigenpairs: no eigendecomposition here
        Hd = exact_curvature_basis(K, d, eta, tau, dix, ev.inner.eigvals, basis)
    else:
        Hd = exact_curvature_d(K, d, eta, tau, dix)
    return Hd * sv[:, None] * sv[None, :]
