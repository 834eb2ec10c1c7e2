"""The Newton direction on the free coordinates: one Cholesky factor, bordered by constraints.

A projected Newton step (:mod:`dank_fast._newton`) solves ``H p = g`` on the free coordinates
``F0`` subject to ``y_F'p = 0`` and to ``p_j = 0`` for the coordinates ``j`` the step would push
out of the box. One Cholesky factorisation of the curvature ``H`` (:func:`dank_fast._curvature.
curvature`) on ``F0`` serves them all: the constraints ``A'p = 0`` are handled by the Schur
complement of the same factor, ``p = H^-1 (g - A nu)``, ``(A'H^-1 A) nu = A'H^-1 g``
(:func:`_kkt_solve`), one triangular solve per new column of ``A``, while at most
``BORDER_MAX`` coordinates are dropped; beyond that the curvature is refactorised on the
smaller set.

Near the optimum the free set changes by a few coordinates per step and the curvature little:
the previous step's factor then serves again, bordered by the few coordinates it lacks
(:func:`_previous`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from ._curvature import curvature
from ._threads import blas_threads

__all__ = ["Factor", "newton_direction", "BORDER_MAX"]

#: coordinates dropped from a Newton step's free set through the bordered system before the
#: curvature is refactorised on the smaller set (each drop costs one triangular solve)
BORDER_MAX = 32


class Factor(NamedTuple):
    """A factor of the curvature on the sorted coordinates ``free``: ``solve(B)`` applies its
    inverse (float64); ``stale`` says it is a previous step's factor (reused, or bordered by new
    coordinates), whose step is only taken when accepted at once; ``bordered`` that it is
    bordered (it is not bordered again: no nesting)."""

    free: np.ndarray
    solve: Callable[[np.ndarray], np.ndarray]
    stale: bool = False
    bordered: bool = False


def factorise(problem, ev, free: np.ndarray) -> Factor | None:
    """Cholesky factor of the curvature on ``free``, or None when it is not positive definite.

    ``O(f^3 / 3)`` time and one ``f x f`` float64 matrix (factored in place), ``f = |free|``.
    """
    f = free.size
    H = curvature(problem, ev, free)
    H[np.diag_indices_from(H)] += 1e-12 * max(1.0, float(np.max(np.diag(H))))
    try:
        with blas_threads(f):
            fac = cho_factor(H.T, check_finite=False, overwrite_a=True)  # in place
    except LinAlgError:
        return None

    def solve(B):
        with blas_threads(f):
            return cho_solve(fac, B, check_finite=False)

    return Factor(free, solve)


def _kkt_solve(A, HA, Hr):
    """``(p, nu)`` with ``H p + A nu = r``, ``A'p = 0`` from ``HA = H^-1 A`` and ``Hr = H^-1 r``
    (Schur complement ``A'H^-1 A``)."""
    if A.shape[1] == 0:
        return Hr.copy(), np.zeros(0)
    Sm = A.T @ HA
    rhs = A.T @ Hr
    try:
        nu = np.linalg.solve(Sm, rhs)
    except np.linalg.LinAlgError:
        nu = np.linalg.lstsq(Sm, rhs, rcond=None)[0]
    return Hr - HA @ nu, nu


def _previous(problem, ev, factor: Factor | None, free0: np.ndarray):
    """``(factor, pos)``: a previous step's factor that serves ``free0`` (``pos``: where
    ``free0`` sits in its coordinates, the others start dropped), or ``(None, None)``.

    It serves as it is when ``free0`` is a subset of its coordinates with at most
    ``BORDER_MAX`` left out; else, when ``free0`` lacks at most ``BORDER_MAX`` of them and adds
    ``k <= BORDER_MAX`` new ones (and it is not bordered itself), bordered by those: ``H_g =
    [[H_o, h], [h', c]]`` with the old ``H_o`` and the new rows ``[h', c]`` of the current
    curvature (``k |free|`` entries), ``Z = H_o^-1 h`` and the Schur complement ``c - h'Z``
    (``k x k``).
    """
    if factor is None or free0.size == 0:
        return None, None
    f = factor.free
    new = np.setdiff1d(free0, f, assume_unique=True)
    union = f if new.size == 0 else np.union1d(f, new)
    if new.size > BORDER_MAX or union.size - free0.size > BORDER_MAX:
        return None, None
    if new.size:
        if factor.bordered:
            return None, None
        dix, _ = problem.d_coordinates(union)
        if np.unique(dix).size < dix.size:  # P2 pairs couple through the whole curvature
            return None, None
        factor = _bordered_factor(problem, ev, factor, union, new)
        if factor is None:
            return None, None
    return factor._replace(stale=True), np.searchsorted(factor.free, free0)


def _bordered_factor(problem, ev, factor: Factor, union: np.ndarray,
                     new: np.ndarray) -> Factor | None:
    """``factor`` bordered by the coordinates ``new`` (:func:`_previous`), or None when the
    Schur complement is not positive definite."""
    rn = np.searchsorted(union, new)
    ro = np.searchsorted(union, factor.free)
    Hr = curvature(problem, ev, union, rows=rn)  # k x |union|
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

    return Factor(union, solve, True, True)


def newton_direction(problem, ev, z, g, binding, margin, previous: Factor | None = None):
    """Newton direction on the free coordinates (``~binding``), dropping those it would push
    out of the box (module docstring); ``previous``: the previous step's factor, used where it
    serves (:func:`_previous`).

    Returns ``(free, p_free, factor)``, or None when the curvature is not positive definite,
    nothing is free, or the bordered system did not settle.
    """
    while True:
        free0 = np.flatnonzero(~binding)
        if free0.size == 0:
            return None
        factor, pos = _previous(problem, ev, previous, free0)
        if factor is None:
            factor = factorise(problem, ev, free0)
            if factor is None:
                return None
            pos = np.arange(free0.size)
        out = _bordered_direction(problem, z, g, margin, factor, pos)
        if out is None:
            return None
        free, p, drop = out
        if drop is None:
            return free, p, factor
        binding = binding.copy()  # many drops: a smaller problem, its curvature afresh
        binding[drop] = True
        previous = None


def _bordered_direction(problem, z, g, margin, factor: Factor, pos: np.ndarray):
    """The Newton direction with ``factor`` (coordinates ``factor.free``, of which ``pos`` are
    free now; the others start dropped), dropping the coordinates it pushes out of the box.

    Returns ``(free, p_free, None)``; ``(None, None, drop)`` with the coordinates to bind for a
    smaller problem when more than ``BORDER_MAX`` are dropped; None after 50 rounds.
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
            return free_f[~dropped], p[~dropped], None
        if np.count_nonzero(dropped | bad) > BORDER_MAX:
            return None, None, free_f[dropped | bad]
        new = np.flatnonzero(bad)
        dropped[new] = True
        E = np.zeros((f0, new.size))
        E[new, np.arange(new.size)] = 1.0
        cols.extend(E.T)
        HiA.extend(solve(E).T)
    return None
