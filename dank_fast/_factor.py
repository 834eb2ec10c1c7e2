"""The Newton direction on the free coordinates: one factor, bordered by constraints.

A projected Newton step (:mod:`dank_fast._newton`) solves ``H p = g`` on the free coordinates
``F0`` subject to ``y_F'p = 0`` and to ``p_j = 0`` for the coordinates ``j`` the step would push
out of the box. One factor of the curvature ``H`` (:func:`dank_fast._curvature.curvature`) on
``F0`` serves them all: the constraints ``A'p = 0`` are handled by the Schur
complement of the same factor, ``p = H^-1 (g - A nu)``, ``(A'H^-1 A) nu = A'H^-1 g``
(:func:`_kkt_solve`), one solve per new column of ``A``, while at most
``BORDER_MAX`` coordinates are dropped; beyond that the curvature is refactorised on the
smaller set: only the Schur complement of the kept at-bound coordinates when the factor is
blocked (:class:`_Blocks`), else the curvature cut from the first one (kept up to
``CUT_ENTRIES``). A kernel of low rank gives a factor of another kind, no ``f x f`` matrix
(:mod:`dank_fast._lowrank`).

Near the optimum the free set changes by a few coordinates per step and the curvature little:
the previous step's factor then serves again while the free set only loses coordinates
(:func:`_previous`).

A trial point of the step that leaves the box is made by the same bordered system
(:func:`held_point`): the coordinates pushed out are held at their bound and the others
re-solved, in the curvature's metric rather than by a Euclidean projection.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, cholesky, solve_triangular

from ._curvature import curvature
from ._lowrank import lowrank_solve
from ._threads import blas_threads

__all__ = ["Factor", "newton_direction", "held_point", "BORDER_MAX"]

#: coordinates dropped from a Newton step's free set through the bordered system before the
#: curvature is refactorised on the smaller set (each drop costs one triangular solve). Some
#: limit is needed: bordering every drop takes moons0.3 n = 5,000, C = 32 2.50x the time,
#: blobs n = 2,000, C = 32 1.72x; its value matters less (family rows, in process, paired,
#: every drop refactorised against 32: make_classification n = 5,000, C = 32 1.05-1.11x,
#: moons0.2 n = 5,000, C = 32 0.96-1.17x, 1.10x in the two longest runs; the others
#: 0.91-1.07x)
BORDER_MAX = 32
#: curvatures up to this many entries are kept to cut smaller problems from: as a copy, or as a
#: blocked factor (:class:`_Blocks`) that a step dropping many coordinates cuts instead of
#: refactorising (family rows, in process, paired: blobs n = 2,000, C = 32 1.17-1.31x the time
#: without, blobs n = 1,000 1.06x; moons0.3 and make_classification n = 2,000 0.96-0.97x).
#: Above it the Cholesky factor overwrites ``H`` and nothing else of its size is held
CUT_ENTRIES = 1 << 22


class Factor(NamedTuple):
    """A factor of the curvature on the sorted coordinates ``free``: ``solve(B)`` applies its
    inverse; ``stale`` says it is a previous step's factor, whose step is only taken when
    accepted at once; ``saved`` the unshifted curvature (up to ``CUT_ENTRIES``) and ``blocks``
    the blocked factor (:class:`_Blocks`), to cut smaller problems from."""

    free: np.ndarray
    solve: Callable[[np.ndarray], np.ndarray]
    stale: bool = False
    saved: np.ndarray | None = None
    blocks: _Blocks | None = None


def factorise(problem, ev, free: np.ndarray, H: np.ndarray | None = None,
              free_H: np.ndarray | None = None,
              bound: np.ndarray | None = None) -> Factor | None:
    """A factor of the curvature on ``free`` (cut from ``H`` on ``free_H`` where given): the
    low-rank one where the kernel allows it (:func:`dank_fast._lowrank.lowrank_solve`), else a
    Cholesky factor; None when the curvature is not positive definite.

    ``bound`` (boolean over ``free``): the coordinates at a bound, the only ones a step can
    drop; when more than ``BORDER_MAX`` of them are free (and ``H`` has at most ``CUT_ENTRIES``
    entries), the factor is blocked (:class:`_Blocks`), else the unshifted curvature is kept
    (up to ``CUT_ENTRIES``) to cut a smaller problem from. ``O(f^3 / 3)`` time; one ``f x f``
    matrix (factored in place) above ``CUT_ENTRIES``, about 2.7 below, ``f = |free|``.
    """
    f = free.size
    if H is None:
        solve = lowrank_solve(problem, ev, free)
        if solve is not None:  # a kernel of low rank: no f x f curvature (dank_fast._lowrank)
            return Factor(free, solve)
        H = curvature(problem, ev, free)
    elif free_H.size != f or not np.array_equal(free_H, free):
        pos = np.searchsorted(free_H, free)
        H = np.take(np.take(H, pos, axis=0), pos, axis=1)  # two takes: faster than np.ix_
    nb = 0 if bound is None else int(np.count_nonzero(bound))
    small = H.size <= CUT_ENTRIES
    blocked = BORDER_MAX < nb < f and small
    saved = H.copy() if small and not blocked else None
    H[np.diag_indices_from(H)] += 1e-12 * max(1.0, float(np.max(np.diag(H))))
    if blocked:
        try:
            blocks = _Blocks(H, np.flatnonzero(~bound), np.flatnonzero(bound), f)
        except LinAlgError:
            return None
        return Factor(free, blocks.solve, blocks=blocks)
    try:
        with blas_threads(f):
            fac = cho_factor(H.T, check_finite=False, overwrite_a=True)  # in place
    except LinAlgError:
        return None

    def solve(B):
        with blas_threads(f):
            return cho_solve(fac, B, check_finite=False)

    return Factor(free, solve, saved=saved)


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
                HII = np.take(HI, I, axis=1)
                L = cholesky(HII.T, lower=True, overwrite_a=True, check_finite=False)
                W = solve_triangular(L, np.take(HI, B, axis=1), lower=True, overwrite_b=True,
                                     check_finite=False)
                Sc = np.take(np.take(H, B, axis=0), B, axis=1)
                Sc -= W.T @ W
                parts = L, W, Sc
            self.L, self.W, self.Sc = parts
            self.Lb = cholesky(self.Sc.T, lower=True, check_finite=False)

    def solve(self, X: np.ndarray) -> np.ndarray:
        """``H^-1 X`` (block forward and back substitution)."""
        L, W, Lb = self.L, self.W, self.Lb
        out = np.empty(X.shape)
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


def _cut(parent: Factor | None, free0: np.ndarray) -> Factor | None:
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
    return Factor(free0, blocks.solve, blocks=blocks)


def held_point(problem, z: np.ndarray, factor: Factor, system, free: np.ndarray,
               pF: np.ndarray, t: float, rounds: int = 8) -> np.ndarray | None:
    """The trial point of the Newton arc at multiple ``t`` of ``pF`` (on ``free``) where
    ``z + t pF`` leaves the box: the coordinates ``J`` it pushes out are held at their bound
    and the others take the maximiser of the curvature model for the multiple ``t``, holding
    in turn those that correction pushes out; None when ``z + t pF`` stays in the box, every
    coordinate would be held, or the holds do not settle in ``rounds``.

    ``system = (A, H^-1 A, H^-1 g)``: the bordered system of the direction
    (:func:`_bordered_direction`, on ``factor.free``); the held point solves it
    (:func:`_kkt_solve`) with ``J``'s unit columns added and ``s_J = bound_J - z_J``: one solve
    with the factor per round for the new columns only, no evaluation. The Euclidean projection
    restores ``y'a`` by shifting every free coordinate along ``y``: in ``d = a * y`` a shift
    along ``1``, the direction of ``K``'s largest eigenvalue, which can cost far more than the
    step gains (blobs n = 2,000, C = 32: a step predicted to gain 0.2 lost 55 with 8 of 681
    coordinates clipped).
    """
    C = problem.C
    w = z[free] + t * pF
    out = (w < 0.0) | (w > C)
    if not np.any(out):
        return None
    A0, HA0, Hg = system
    ff = factor.free
    zF = z[ff]
    held = np.ones(ff.size, dtype=bool)  # the direction's dropped coordinates: s = 0 (in A0)
    pos = np.searchsorted(ff, free)
    held[pos] = False
    value = np.zeros(ff.size)  # s_j on the held coordinates
    new = pos[out]
    value[new] = np.where(w[out] > C, C, 0.0) - zF[new]
    A, HA, J = A0, HA0, np.zeros(0, dtype=np.intp)
    for _ in range(rounds):
        held[new] = True
        if held.all():  # y'p = 0 with every coordinate held: no such point (A is singular)
            return None
        E = np.zeros((ff.size, new.size))
        E[new, np.arange(new.size)] = 1.0
        A, HA, J = np.hstack([A, E]), np.hstack([HA, factor.solve(E)]), np.r_[J, new]
        b = np.zeros(A.shape[1])
        b[A0.shape[1]:] = value[J]
        s, _ = _kkt_solve(A, HA, t * Hg, b)
        s[held] = value[held]
        zn = zF + s
        bad = ~held & ((zn < 0.0) | (zn > C))
        if not np.any(bad):
            z_new = z.copy()
            z_new[ff] = np.clip(zn, 0.0, C)
            return z_new
        new = np.flatnonzero(bad)
        value[new] = np.where(zn[new] > C, C, 0.0) - zF[new]
    return None


def _kkt_solve(A, HA, Hr, b=None):
    """``(p, nu)`` with ``H p + A nu = r``, ``A'p = b`` (default 0) from ``HA = H^-1 A`` and
    ``Hr = H^-1 r`` (Schur complement ``A'H^-1 A``)."""
    if A.shape[1] == 0:
        return Hr.copy(), np.zeros(0)
    Sm = A.T @ HA
    rhs = A.T @ Hr if b is None else A.T @ Hr - b
    try:
        nu = np.linalg.solve(Sm, rhs)
    except np.linalg.LinAlgError:
        nu = np.linalg.lstsq(Sm, rhs, rcond=None)[0]
    return Hr - HA @ nu, nu


def _previous(factor: Factor | None, free0: np.ndarray):
    """``(factor, pos)``: a previous step's factor that serves ``free0`` (``pos``: where
    ``free0`` sits in its coordinates, the others start dropped), or ``(None, None)``.

    It serves when ``free0`` is a subset of its coordinates with at most ``BORDER_MAX`` left out
    (they start dropped in the bordered system). A free set that gains coordinates is
    refactorised: bordering the old factor by them saved at most 13% on any family row
    (make_moons n = 5,000, C = 32) and cost steps on others (the older curvature).
    """
    if factor is None or free0.size == 0:
        return None, None
    f = factor.free
    if free0.size < f.size - BORDER_MAX or not np.all(np.isin(free0, f, assume_unique=True)):
        return None, None
    return factor._replace(stale=True), np.searchsorted(f, free0)


def newton_direction(problem, ev, z, g, binding, margin, previous: Factor | None = None):
    """Newton direction on the free coordinates (``~binding``), dropping those it would push
    out of the box (module docstring); ``previous``: the previous step's factor, used where it
    serves (:func:`_previous`).

    Returns ``(free, p_free, factor, system)`` (``system``: the bordered system the direction
    solved, for :func:`held_point`), or None when the curvature is not positive definite,
    nothing is free, or the bordered system did not settle.
    """
    H = free_H = parent = None  # after many drops: the curvature or blocked factor to cut
    while True:
        free0 = np.flatnonzero(~binding)
        if free0.size == 0:
            return None
        factor, pos = _previous(previous, free0)
        if factor is None:
            factor = _cut(parent, free0) or _fresh(problem, ev, z, free0, H, free_H)
            if factor is None:
                return None
            pos = np.arange(free0.size)
        out = _bordered_direction(problem, z, g, margin, factor, pos)
        if out is None:
            return None
        free, p, drop = out
        if free is not None:
            return free, p, factor, drop
        binding = binding.copy()  # many drops: a smaller problem, cut from this factor's
        binding[drop] = True  # curvature where kept (a previous step's is stale: afresh)
        previous = None
        stale = factor.stale
        H, parent = (None, None) if stale else (factor.saved, factor)
        free_H = factor.free if H is not None else None


def _fresh(problem, ev, z, free0, H, free_H) -> Factor | None:
    """A new factor on ``free0`` (cut from ``H`` on ``free_H`` where given)."""
    zF = z[free0]
    bound = (zF <= 1e-12 * problem.C) | (zF >= problem.C - 1e-12 * problem.C)
    return factorise(problem, ev, free0, H, free_H, bound)


def _bordered_direction(problem, z, g, margin, factor: Factor, pos: np.ndarray):
    """The Newton direction with ``factor`` (coordinates ``factor.free``, of which ``pos`` are
    free now; the others start dropped), dropping the coordinates it pushes out of the box.

    Returns ``(free, p_free, (A, H^-1 A, H^-1 g))`` (the bordered system on ``factor.free``,
    for :func:`held_point`); ``(None, None, drop)`` with the coordinates to bind for a smaller
    problem when more than ``BORDER_MAX`` are dropped; None after 50 rounds.
    """
    C = problem.C
    y = problem.eq_vector
    free_f, solve = factor.free, factor.solve
    f0 = free_f.size
    dropped = np.ones(f0, dtype=bool)
    dropped[pos] = False
    start = np.flatnonzero(dropped)
    has_eq = y is not None
    # one solve for g, y and the coordinates dropped from the start (a triangular solve reads
    # the whole factor whatever the number of right-hand sides)
    R = np.zeros((f0, 1 + has_eq + start.size))
    R[:, 0] = g[free_f]
    if has_eq:
        R[:, 1] = y[free_f]
    R[start, 1 + has_eq + np.arange(start.size)] = 1.0
    X = solve(R)
    Hig = X[:, 0]
    cols, HiA = list(R[:, 1:].T), list(X[:, 1:].T)
    zF = z[free_f]
    for _ in range(50):
        A = np.column_stack(cols) if cols else np.zeros((f0, 0))
        HA = np.column_stack(HiA) if HiA else np.zeros((f0, 0))
        p, _nu = _kkt_solve(A, HA, Hig)
        p[dropped] = 0.0
        bad = ~dropped & (((zF <= margin) & (p < 0)) | ((zF >= C - margin) & (p > 0)))
        if not np.any(bad):
            return free_f[~dropped], p[~dropped], (A, HA, Hig)
        if np.count_nonzero(dropped | bad) > BORDER_MAX:
            return None, None, free_f[dropped | bad]
        new = np.flatnonzero(bad)
        dropped[new] = True
        E = np.zeros((f0, new.size))
        E[new, np.arange(new.size)] = 1.0
        cols.extend(E.T)
        HiA.extend(solve(E).T)
    return None
