r"""Cheap starting points for the staged solve, and their order by regime.

Besides the SDP (:mod:`dank_ref.conic`), two candidates are tried, each polished and certified
like the SDP's point (:mod:`dank_ref.staged`):

* the ``eta -> inf`` limit QP (:func:`limit_qp`): the plain SVM/SVR dual for the fixed kernel
  ``F0 o K``, ``F0 = J_{tau/2}(11')`` (:func:`F0_factor`); well conditioned where the SDP is
  stiff (``Gamma`` tiny);
* the ray ``t * a0`` (:func:`ray_candidate`): where ``Gamma`` dominates (tiny ``eta``), ``a*``
  is close to a multiple of the LP solution ``a0``.

:func:`order_candidates` orders them with the SDP by the size of ``Gamma`` at the natural size
of ``a`` (:func:`is_stiff`).
"""

from __future__ import annotations

import math
import time

import cvxpy as cp
import numpy as np

from ._result import SolverError
from .conic import FAIL_STATUSES

__all__ = ["order_candidates", "is_stiff", "limit_qp", "ray_candidate", "F0_factor"]


def order_candidates(candidates: list, Cf: float, etaf: float, s_f: float,
                     cheap_first: bool = False) -> list:
    """Order ``[sdp, limit_qp, ray]`` by the regime: the SDP is well scaled only when ``Gamma``
    at the natural size of ``a`` is moderate (``1e-6 .. 1e6``); otherwise the limit QP
    (``Gamma`` tiny, :func:`is_stiff`) or the ray (``Gamma`` huge) goes first.

    ``cheap_first`` (the staged strategy, :mod:`dank_ref.staged`): in the moderate regime the
    limit QP (a QP in ``n`` variables: milliseconds at n = 100) goes before the SDP; polished,
    it is certified on most instances, and the SDP runs only when it is not.
    """
    by = dict(candidates)
    if is_stiff(Cf, etaf, s_f):
        order = ["limit_qp", "ray", "sdp"]
    elif s_f > 0.0 and (2.0 * min(math.log2(Cf), 0.0) + math.log2(s_f) - math.log2(etaf) - 2.0
                        > math.log2(1e6)):
        order = ["ray", "limit_qp", "sdp"]
    elif cheap_first:
        order = ["limit_qp", "sdp", "ray"]
    else:
        order = ["sdp", "limit_qp", "ray"]
    return [(k, by[k]) for k in order if k in by]


def is_stiff(Cf: float, etaf: float, s_f: float) -> bool:
    """``max Gamma`` at the natural size of ``a`` is below 1e-6: ``F(a*) = F0 + O(1e-6)``.

    Then the ``eta -> inf`` limit QP (:func:`limit_qp`) is tried before the SDP (which is stiff
    there: ``eta ||F - 11'||^2`` dwarfs the SVM part).
    """
    if s_f <= 0.0:
        return True
    lg = 2.0 * min(math.log2(Cf), 0.0) + math.log2(s_f) - math.log2(etaf) - 2.0
    return lg < math.log2(1e-6)


def _limit_qp_once(G: np.ndarray, lin: np.ndarray, eq: np.ndarray | None, C: float, *,
                   time_limit: float, pair: bool = False) -> np.ndarray:
    """Candidate from the ``eta -> inf`` limit: the plain SVM/SVR dual for the fixed kernel ``G``.

    As ``eta`` grows (relative to ``a*^2 max|K|``), ``F(a) -> F0 = J_{tau/2}(11')`` and P1/P2/P3
    tend to the quadratic program for the kernel ``G = F0 o K`` (``= max(n - tau/2, 0)/n K``);
    in that regime the SDP is stiff (``eta ||F - 11'||^2`` dwarfs the SVM part) while this QP is
    well conditioned, and its solution is within ``O(max Gamma)`` of ``a*``.  It is only a
    starting point: it is polished and certified on the true problem like the SDP candidate.
    ``pair=True`` (P2): variables ``(ah, ac)``, objective ``lin'(ah; ac) - 1/2 b'Gb``,
    ``b = ah - ac``; returns ``b``.  Otherwise returns ``a`` (``d = a o eq`` for P1, P3 has
    ``eq = None`` and labels folded into ``G``).  Solved by Clarabel within ``time_limit``.
    """
    n = G.shape[0]
    # G = L L' with L from the eigendecomposition (negative round-off eigenvalues dropped): the
    # quadratic becomes a sum of squares, which Clarabel handles better for singular kernels
    w, V = np.linalg.eigh(0.5 * (G + G.T))
    keep = w > 0.0
    L = V[:, keep] * np.sqrt(w[keep])
    if pair:
        ah = cp.Variable(n, nonneg=True)
        ac = cp.Variable(n, nonneg=True)
        b = ah - ac
        obj = lin[:n] @ ah + lin[n:] @ ac - 0.5 * cp.sum_squares(L.T @ b)
        cons = [ah <= C, ac <= C, cp.sum(b) == 0]
    else:
        a = cp.Variable(n, nonneg=True)
        obj = cp.sum(a) - 0.5 * cp.sum_squares(L.T @ a)
        cons = [a <= C] + ([eq @ a == 0] if eq is not None else [])
    prob = cp.Problem(cp.Maximize(obj), cons)
    t_end = time.perf_counter() + max(time_limit, 1.0)
    tight = dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10, tol_ktratio=1e-8)
    err = None
    for settings in (tight, {}):  # tight tolerances first; Clarabel's defaults if that fails
        left = t_end - time.perf_counter()
        if left <= 0.0:
            break
        try:
            prob.solve(solver="CLARABEL", time_limit=float(left), max_iter=500, **settings)
        except cp.error.SolverError as exc:
            err = f"limit QP failed: {exc}"
            continue
        if prob.status in FAIL_STATUSES:
            err = f"limit QP returned cvxpy status {prob.status!r}"
            continue
        err = None
        break
    if err is not None:
        raise SolverError(err)
    if pair:
        if ah.value is None:
            raise SolverError("limit QP returned no solution")
        return np.asarray(ah.value - ac.value, float)
    if a.value is None:
        raise SolverError("limit QP returned no solution")
    return np.asarray(a.value, float)


def limit_qp(G: np.ndarray, lin: np.ndarray, eq: np.ndarray | None, C: float, *,
             time_limit: float, pair: bool = False) -> np.ndarray:
    """:func:`_limit_qp_once` with the box capped at ``2^10``, then ``2^20`` (frame units).

    In the solver frame ``a* = O(1)``; a huge box makes the interior-point QP fail on singular
    kernels (a null-space direction is then only bounded by the box).  The larger cap is tried
    when the smaller one fails or binds.  Only a starting point: polishing and the
    certificate use the true box ``C``.  ``C`` a float or a vector of per-sample bounds
    (capped entrywise).
    """
    t_end = time.perf_counter() + max(time_limit, 1.0)
    out, err = None, None
    for cap in (2.0**10, 2.0**20):
        box = np.minimum(C, cap) if isinstance(C, np.ndarray) else min(C, cap)
        uncapped = bool(np.all(box == C))
        try:
            out = _limit_qp_once(G, lin, eq, box, time_limit=t_end - time.perf_counter(),
                                 pair=pair)
        except SolverError as exc:
            err = exc
            if uncapped:
                break
            continue
        if uncapped or bool(np.all(np.abs(out) < 0.999 * box)):
            return out
    if out is not None:
        return out
    raise err if err is not None else SolverError("limit QP: no time left")


def ray_candidate(a0: np.ndarray, lower, t_max: float, n_iter: int = 80) -> np.ndarray:
    """``t* a0`` with ``t*`` maximising the concave ``t -> h(t a0)`` (golden section in log t).

    A third starting point for the regime where ``Gamma`` dominates (tiny ``eta``): there the
    SDP is badly scaled and the ``eta -> inf`` QP is far off, but ``a*`` is close to a multiple
    of the LP solution ``a0``.  ``lower(a)`` is the certified lower bound ``h(a)``.
    """
    lo, hi = math.log(2.0**-60), math.log(t_max)
    g = (math.sqrt(5.0) - 1.0) / 2.0

    def f(lt):
        v = lower(math.exp(lt) * a0)
        return v if math.isfinite(v) else -math.inf

    m1, m2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = f(m1), f(m2)
    for _ in range(n_iter):
        if f1 < f2:
            lo, m1, f1 = m1, m2, f2
            m2 = lo + g * (hi - lo)
            f2 = f(m2)
        else:
            hi, m2, f2 = m2, m1, f1
            m1 = hi - g * (hi - lo)
            f1 = f(m1)
    return math.exp(0.5 * (lo + hi)) * a0


def F0_factor(n: int, tau: float) -> float:
    """``J_{tau/2}(11') = max(n - tau/2, 0)/n 11'``: the inner minimiser at ``a = 0``."""
    return max(n - 0.5 * tau, 0.0) / n
