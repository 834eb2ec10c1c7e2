"""Projections onto the feasible sets of DANK's dual variables.

``A = {a : y'a = 0, 0 <= a <= C}`` (P1, eq. (4)).  The exact Euclidean
projection is ``P_A(z) = clip(z - lam y, 0, C)`` where ``lam`` is the root of the
non-increasing piecewise-linear function ``phi(lam) = y' clip(z - lam y, 0, C)``;
we locate the linear piece that contains the root by binary search over the
sorted breakpoints and solve the piece exactly (docs/MATH.md §6), with the breakpoints kept
as (base, offset) pairs so that this stays exact when ``|z| >> C``.

``C`` may be a scalar or a vector of per-sample bounds ``C_i > 0`` (sample and class weights,
docs/MATH.md section 14): the projection is ``clip(z - lam y, 0, C)`` entrywise with kinks at
``y_i z_i`` and ``y_i (z_i - C_i)``, and the same root search finds ``lam`` exactly.

The paper's projection (Section 3.2: "clip to [0, C], then project on the
hyperplane") is one round of alternating projections; it is provided as
:func:`project_paper` for faithfulness studies and in general lands neither on
``A`` nor at the nearest point.
"""

from __future__ import annotations

import math

import numpy as np

from ._validation import _real_scalar, box_max, check_box, check_finite_array, check_labels_pm1

__all__ = ["project_A", "project_paper", "project_box", "project_sum_box", "repair_start"]


def project_A(z, y, C, target: float = 0.0) -> np.ndarray:
    """Exact Euclidean projection onto ``{a : y'a = target, 0 <= a <= C}``.

    Parameters
    ----------
    z : array_like of shape (n,)
        Finite real numbers, ``n >= 1``.
    y : array_like of shape (n,)
        Entries exactly -1 or +1 (one class is allowed).
    C : float > 0, or array_like of shape (n,)
        Finite; a vector gives per-sample boxes ``0 <= a_i <= C_i`` (docs/MATH.md section 14).
    target : float, default 0
        Project onto ``{y'a = target, 0 <= a <= C}`` instead (used on a subset of
        coordinates whose complement is held fixed); must be attainable,
        ``-sum_{y=-1} C_i <= target <= sum_{y=+1} C_i`` up to the feasibility tolerance
        ``1e-9 max(C) sqrt(n)`` (docs/validity.md).

    Returns
    -------
    ndarray of shape (n,)
        The unique nearest point of the set (Euclidean norm), exact to working precision
        also when ``|z| >> C`` (see :func:`_project_core`).

    Raises
    ------
    TypeError
        ``z``, ``y``, ``C`` or ``target`` of the wrong kind (bool, str, complex, ...).
    ValueError
        Naming the parameter: non-finite or empty ``z``, labels other than +-1, lengths that
        differ, ``C <= 0`` (or a vector ``C`` of another length, or with an entry ``<= 0``),
        an unattainable ``target``.

    Examples
    --------
    >>> import numpy as np
    >>> project_A(np.array([1.0, 0.0]), np.array([1.0, -1.0]), C=1.0).tolist()
    [0.5, 0.5]
    """

    z = check_finite_array(z, "z", ndim=1)
    if z.size == 0:
        raise ValueError("z must have at least one entry, got shape (0,)")
    y = check_labels_pm1(y, None, require_both=False)
    if y.shape != z.shape:
        raise ValueError(f"y has {y.size} entries but z has {z.size}")
    C = check_box(C, y.size)
    target = _real_scalar(target, "target")
    if not math.isfinite(target):
        raise ValueError(f"target must be a finite number, got {target!r}")
    Cv = np.broadcast_to(C, y.shape)
    lo, hi = -float(Cv[y < 0].sum()), float(Cv[y > 0].sum())
    slack = 1e-9 * box_max(C) * math.sqrt(y.size)
    if not lo - slack <= target <= hi + slack:
        raise ValueError(
            f"target = {target!r} is not attainable: y'a ranges over [{lo:.6g}, {hi:.6g}] "
            f"for 0 <= a <= C = {C!r}"
        )
    return _project_core(z, y, C, target)


def _project_core(z: np.ndarray, y: np.ndarray, C, target: float = 0.0) -> np.ndarray:
    """:func:`project_A` on validated float64 input (``C`` a scalar or per-sample bounds).

    With ``w = y o z`` (exact), ``P(z)_i = clip(y_i (w_i - lam), 0, C)`` and ``lam`` is the root
    of the non-increasing piecewise-linear ``phi(lam) = y' P(z) - target``, whose breakpoints
    are ``w_i - C``, ``w_i`` (``y_i = +1``) and ``w_i``, ``w_i + C`` (``y_i = -1``). When
    ``|w| >> C`` the sums ``w_i +- C`` round to ``w_i`` (and ``z - lam y`` loses every digit of
    ``C``), so each breakpoint is kept as the pair ``(w_i, offset)``, offset in
    ``{-C, 0, C}``, sorted by its value (ties of the rounded value broken by the offset, which is
    exact when the bases are equal), and ``phi`` at a breakpoint ``(b, o)`` is evaluated as
    ``y' clip(y o ((w - b) - o), 0, C)``: ``w_i - b`` is exact for every coordinate near the
    root (Sterbenz) and merely large for the others, which are at a bound. The root is
    interpolated on its linear piece relative to the left pair, so the result is the exact
    projection to working precision (``O(u C)`` per coordinate) at every scale of ``z``.
    """
    w = y * z
    pos = y > 0
    if np.ndim(C) != 0:
        C = np.asarray(C, dtype=np.float64)
    base = np.concatenate([w, w])
    off = np.concatenate([np.where(pos, -C, 0.0), np.where(pos, 0.0, C)])
    order = np.lexsort((off, base, base + off))  # last key primary: the rounded value
    base, off = base[order], off[order]

    def at(k: int, extra: float = 0.0) -> np.ndarray:
        return np.clip(y * ((w - base[k]) - (off[k] + extra)), 0.0, C)

    def phi(k: int) -> float:
        return float(y @ at(k)) - target

    m = base.size
    f_first = phi(0)
    if f_first <= 0.0:
        return at(0)  # phi is constant left of the first breakpoint
    f_last = phi(m - 1)
    if f_last >= 0.0:
        return at(m - 1)
    lo, hi = 0, m - 1  # phi(lo) > 0 > phi(hi)
    f_lo, f_hi = f_first, f_last
    while hi - lo > 1:
        mid = (lo + hi) // 2
        f_mid = phi(mid)
        if f_mid > 0.0:
            lo, f_lo = mid, f_mid
        else:
            hi, f_hi = mid, f_mid
    if f_hi == 0.0:
        p = at(hi)
    else:
        gap = float(base[hi] - base[lo]) + (off[hi] - off[lo])  # width of the linear piece
        p = at(lo, max(gap, 0.0) * (f_lo / (f_lo - f_hi)))
    # the interpolation rounds: remove the residual of y'p on the free coordinates
    r = float(y @ p) - target
    free = (p > 0.0) & (p < C)
    if r != 0.0 and np.any(free):
        p[free] = np.clip(p[free] - r * y[free] / np.count_nonzero(free), 0.0,
                          C if np.ndim(C) == 0 else C[free])
    return _restore_equality(p, z, y, C, target)


def _restore_equality(
    p: np.ndarray, z: np.ndarray, e: np.ndarray, C, target: float = 0.0
) -> np.ndarray:
    """Make ``e'p = target`` hold for a box-feasible ``p`` returned by the projection of ``z``.

    ``P(z) = clip(z - lam e, 0, C)`` with ``e`` in {-1, +1}. When the entries of ``z`` are far
    larger than ``C`` (a gradient step of length ``1/L >> C``: the SVM scale ``C max|K| n``
    is tiny, e.g. ``C = 1e-95``), ``z_i - C`` rounds to ``z_i`` and the breakpoints of
    ``lam`` collapse; :func:`dank_fast.project_A` can then return a point of the box with
    ``e'p`` as large as ``C`` (seen: ``|1'(ah - ac)| = C`` at ``C = 1e-95``, certified with
    ``lower > upper``). The residual ``r = e'p`` is removed the way the exact projection would
    remove it, by moving ``lam`` further: as ``lam`` increases (``r > 0``) the coordinates with
    ``e_i = +1`` leave ``C`` at ``lam = w_i - C`` and those with ``e_i = -1`` leave 0 at
    ``lam = w_i`` (``w = e z``); they absorb ``r`` in that order, each up to its room. When
    those thresholds are more than ``C`` apart (the only case where this runs), this is the
    exact projection to working precision; in every case the result is feasible up to
    ``O(u C n)``. Does nothing when ``|e'p| <= 1e-12 max(C) sqrt(n)`` (the normal case).
    ``C`` is a scalar or per-sample bounds.
    """
    r = float(e @ p) - target
    if abs(r) <= 1e-12 * box_max(C) * math.sqrt(p.size):
        return p
    p = p.copy()
    w = e * z
    Cv = np.broadcast_to(C, p.shape)
    if r > 0:  # lower e'p: plus-coordinates decrease, minus-coordinates increase
        cand = np.flatnonzero(((e > 0) & (p > 0)) | ((e < 0) & (p < Cv)))
        thr = np.where(e[cand] > 0, w[cand] - Cv[cand], w[cand])
        order = cand[np.argsort(thr, kind="stable")]
    else:  # raise e'p: plus-coordinates increase, minus-coordinates decrease
        cand = np.flatnonzero(((e > 0) & (p < Cv)) | ((e < 0) & (p > 0)))
        thr = np.where(e[cand] > 0, w[cand], w[cand] + Cv[cand])
        order = cand[np.argsort(-thr, kind="stable")]
    # the room of each coordinate in the direction that reduces |r|
    down = (e[order] > 0) == (r > 0)  # True: p_i decreases
    room = np.where(down, p[order], Cv[order] - p[order])
    need = abs(r)
    before = np.concatenate([[0.0], np.cumsum(room)[:-1]])
    take = np.clip(need - before, 0.0, room)
    p[order] = np.where(down, p[order] - take, p[order] + take)
    return np.clip(p, 0.0, C)




def repair_start(z0, e, C) -> np.ndarray:
    """A point of ``{e'a = 0, 0 <= a <= C}`` near ``z0`` with the zeros of ``z0`` kept at zero
    (``C`` a scalar or per-sample bounds).

    A warm start such as the plain SVM's dual is feasible only up to its solver's tolerance;
    projecting it onto the whole set would spread a small shift ``lam e_i`` over every zero
    coordinate of one class (thousands of new, tiny support vectors). Projecting within the
    support ``S`` of ``z0`` (``project_A`` on ``S``, zeros held) repairs it instead, whenever
    ``S`` holds both signs of ``e``; otherwise the full projection :func:`project_A`.
    """
    z0 = np.clip(np.asarray(z0, dtype=np.float64), 0.0, C)
    e = np.asarray(e, dtype=np.float64)
    S = np.flatnonzero(z0 > 0)
    if S.size == 0 or np.unique(e[S]).size < 2:
        return _project_core(z0, e, C)
    z = np.zeros_like(z0)
    z[S] = _project_core(z0[S], e[S], C if np.ndim(C) == 0 else np.asarray(C)[S])
    return z


def project_sum_box(z, C) -> tuple[np.ndarray, np.ndarray]:
    """Exact projection of ``(ah, ac)`` onto ``{0 <= ah, ac <= C, 1'(ah - ac) = 0}``.

    This is :func:`project_A` with the label vector ``[1, ..., 1, -1, ..., -1]``: the SVR
    feasible set of P2 (``eq. (22)``, bias constraint ``1'(ah - ac) = 0``,
    docs/MATH.md §2).  O(n log n) time, O(n) memory.

    Parameters
    ----------
    z : array_like of shape (2n,)
        The stacked pair ``[ah; ac]``; finite real numbers.
    C : float > 0, or array_like of shape (n,)
        The box bound, finite; a vector gives per-sample boxes ``0 <= ah_i, ac_i <= C_i``.

    Returns
    -------
    ah : ndarray of shape (n,)
        The first half of the unique nearest point of the set.
    ac : ndarray of shape (n,)
        The second half.

    Raises
    ------
    TypeError
        ``z`` or ``C`` of the wrong kind (bool, str, complex, ...).
    ValueError
        Non-finite or empty ``z``, ``z`` of odd length, ``C <= 0`` (a vector ``C`` of a length
        other than ``n``).

    Examples
    --------
    >>> import numpy as np
    >>> ah, ac = project_sum_box(np.array([1.0, 0.0]), C=1.0)
    >>> ah.tolist(), ac.tolist()
    ([0.5], [0.5])
    """
    z = np.asarray(z, dtype=np.float64)
    n = z.size // 2
    s = np.concatenate([np.ones(n), -np.ones(n)])
    if np.ndim(C) != 0 or isinstance(C, np.ndarray):
        C = check_box(C, n)
        C = np.concatenate([C, C]) if np.ndim(C) else C
    p = project_A(z, s, C)
    return p[:n], p[n:]


def project_box(z, C) -> np.ndarray:
    """Clip onto the box ``0 <= a <= C``, the feasible set of P3 (no bias).

    The Euclidean projection for the decomposed problem (``eq. (18)``), which has no bias
    term and hence no equality constraint.  O(n) time and memory; the input is not
    validated (a negative ``C`` clips everything to ``C``).

    Parameters
    ----------
    z : array_like of shape (n,)
        The point to project, real numbers.
    C : float or array_like of shape (n,)
        The box bound (scalar or per-sample).

    Returns
    -------
    ndarray of shape (n,)
        ``clip(z, 0, C)`` as float64.

    Examples
    --------
    >>> project_box([-1.0, 0.5, 3.0], C=1.0).tolist()
    [0.0, 0.5, 1.0]
    """
    return np.clip(np.asarray(z, dtype=np.float64), 0.0, C)


def project_paper(z, y, C) -> np.ndarray:
    """Apply the paper's approximate projection: clip to the box, then shift along ``y``.

    ``a = clip(z, 0, C); a <- a - (y'a / n) y`` (Section 3.2).  One round of alternating
    projections: the result satisfies ``y'a = 0`` but may leave the box, and is in general
    not the nearest point of ``A`` (:func:`project_A` is).  Provided for faithfulness
    studies; O(n) time and memory; the input is not validated.

    Parameters
    ----------
    z : array_like of shape (n,)
        The point to project, real numbers.
    y : array_like of shape (n,)
        Labels, -1 or +1.
    C : float
        The box bound.

    Returns
    -------
    ndarray of shape (n,)
        The shifted point, with ``y'a = 0`` up to rounding.

    Examples
    --------
    >>> project_paper([2.0, 0.0], [1.0, -1.0], C=1.0).tolist()
    [0.5, 0.5]
    """
    z = np.asarray(z, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    a = np.clip(z, 0.0, C)
    return a - (y @ a) / y.size * y
