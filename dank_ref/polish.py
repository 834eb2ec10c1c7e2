"""Active-set Newton polishing of a conic (SDP) solution of P1 / P2 / P3.

The conic solvers give ``a*`` to roughly their tolerance (1e-7 .. 1e-9).  The saddle problem is
``max_{a feasible} h(a)`` with ``h`` concave and, for ``tau = 0``, explicitly twice
differentiable: with ``d = a o y`` (SVR: ``d = b``) and ``K2 = K o K``,

    h = lin(a) - 1/2 d'Kd - sum_ij d_i^2 d_j^2 K_ij^2 / (16 eta)
    grad_d (smooth part) = -(F(a) o K) d
    Hess_d = -K - (1/(4 eta)) [diag(K2 d^2) + 2 diag(d) K2 diag(d)].

For ``tau > 0`` the Hessian is exact too (Daleckii-Krein, :mod:`dank_ref.hessian`) on the free
set of each step when that block is affordable (``m^2 r (n - r)`` multiply-adds within
``dank_ref.hessian.EXACT_BUDGET``; ``m`` free variables, ``r`` kept eigenvalues), so the
polisher converges quadratically there; beyond, the matrix above with ``K + diag(d) K2
diag(d)/(4 eta)`` replaced by ``F(a) o K`` is used as an approximate Hessian (the gradient stays
exact: Danskin), and the convergence is linear.  Each iteration fixes the
variables at bounds (SVR: also at the kink ``b_i = 0``), releases those whose directional
derivative says they should move, solves the equality-constrained Newton system on the free set,
projects the step exactly onto the feasible set and keeps it only if the independent certificate
gap decreases (backtracking otherwise).  Polishing can therefore never make the certified gap
worse.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from .certificate import _inner
from .hessian import DenseHessian, HessianOp, hessian_d
from .projection import _project, stack_box
from .validation import (
    check_alpha,
    check_binary_labels,
    check_bool,
    check_box,
    check_iterations,
    check_kernel,
    check_nonnegative,
    check_positive,
    check_targets,
)

__all__ = ["newton_polish", "hessian_d", "polish_svm", "polish_svr"]


def newton_polish(
    x0: np.ndarray,
    *,
    lo: float,
    hi: float,
    l1: float,
    u: np.ndarray | None,
    grad_hess: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray | HessianOp]],
    project: Callable[[np.ndarray], np.ndarray],
    score: Callable[[np.ndarray], float],
    max_iter: int = 30,
    snap: float = 1e-7,
    deadline: float = math.inf,
    merit: Callable[[np.ndarray], float] | None = None,
):
    """Maximise ``s(x) - l1 ||x||_1`` over ``{lo <= x <= hi, u'x = 0}`` (``u=None``: no equality).

    ``grad_hess(x)`` returns the gradient and Hessian of the smooth part ``s`` (a dense matrix or
    an operator with ``block(idx)`` and ``matvec(v)``, ``dank_ref.hessian.HessianOp``);
    ``score(x)`` is the certificate gap (smaller is better); ``project`` maps onto the feasible
    set exactly.  No iteration starts after ``deadline`` (``time.perf_counter`` clock).  Scores
    are memoised by the candidate's bytes: the snapping thresholds often select the same active
    set, and the identical candidates they produce are then certified once.  Cost per
    iteration: one ``grad_hess``, an ``m x m`` least-squares solve per distinct active set
    (``m`` free variables, O(m^3)) and a few certificates.  ``merit(x)`` (optional, larger is
    better: the certified lower bound ``h``) lets a step be accepted that raises ``h`` without
    lowering the gap (far from the optimum the gap is no guide).  A stop after 8 or 15 such
    steps without a smaller gap was measured and rejected: it saved ~1 s on P2 sinc but sent
    P1 blobs-imbalanced (n = 200) to the 20 s SDP where 30 steps certify in 4 s.  Returns
    ``(x_best, score_best, n_accepted_steps)``, ``x_best`` the iterate of smallest gap.
    """
    score = _memoised(score)
    merit = _memoised(merit) if merit is not None else None
    x = project(np.asarray(x0, float))
    # snapping thresholds are relative to the size of the iterate, not only to the box width:
    # a* can be far smaller than C (e.g. a tiny eta), and snapping at 1e-7 C would zero it
    width = max(float(np.max(np.abs(x))), np.finfo(float).tiny)
    if isinstance(hi - lo, np.ndarray):  # per-sample boxes: each coordinate its own width
        width = np.minimum(hi - lo, width)
    else:
        width = min(hi - lo, width)
    best_x, best = x, score(x)
    cur = _Point(x, best, merit(x) if merit is not None else -math.inf)
    accepted = 0
    mu = [0.0]
    for _ in range(max_iter):
        if best <= 0.0 or time.perf_counter() >= deadline:
            break
        g, H = grad_hess(cur.x)
        if isinstance(H, np.ndarray):
            H = DenseHessian(H)
        # try several snapping thresholds (the conic solution is only accurate to about its
        # tolerance) with and without releasing bound variables; keep the best candidate
        nxt = None
        # release every variable whose derivative points inwards, or none; when neither helps
        # (far from a*, releasing dozens at once overshoots), only the few most violating
        for releases in ((-1, 0), (8, 1)):
            cands = []
            for snap_k in (snap, 1e-5, 1e-3, 1e-9):
                for release in releases:
                    c = _newton_step(cur, g, H, lo, hi, l1, u, snap_k * width, project, score,
                                     merit, mu, release)
                    if c is not None:
                        cands.append(c)
            nxt = _choose(cands, cur)
            if nxt is not None:
                break
        if nxt is None:
            break
        cur = nxt
        accepted += 1
        if cur.gap < best:
            best_x, best = cur.x, cur.gap
    return best_x, best, accepted


class _Point:
    """An iterate with its certified gap and (when a merit is given) its lower bound ``h``."""

    __slots__ = ("x", "gap", "h")

    def __init__(self, x: np.ndarray, gap: float, h: float):
        self.x, self.gap, self.h = x, gap, h

    def beats(self, other: _Point) -> bool:
        """Smaller certified gap, or (ascent on ``h``, far from the optimum) larger ``h``."""
        return self.gap < other.gap or self.h > other.h


def _choose(cands: list[_Point], cur: _Point) -> _Point | None:
    """The candidate with the smallest gap if it lowers the gap, else the one with the largest
    ``h`` if it raises ``h``, else ``None``."""
    if not cands:
        return None
    by_gap = min(cands, key=lambda c: c.gap)
    if by_gap.gap < cur.gap:
        return by_gap
    by_h = max(cands, key=lambda c: c.h)
    return by_h if by_h.h > cur.h else None


def _memoised(score: Callable[[np.ndarray], float], size: int = 256):
    """``score`` with a cache keyed by the candidate's bytes (cleared when it holds ``size``)."""
    cache: dict[bytes, float] = {}

    def cached(x: np.ndarray) -> float:
        key = np.ascontiguousarray(x, dtype=float).tobytes()
        if key not in cache:
            if len(cache) >= size:
                cache.clear()
            cache[key] = score(x)
        return cache[key]

    return cached


def _newton_step(cur, g, H, lo, hi, l1, u, tol, project, score, merit, mu_box, release=-1):
    """One active-set Newton step with backtracking from ``cur``; returns a :class:`_Point`
    (the best of the line search: smallest gap, else largest ``h``) or ``None``.

    ``release``: how many bound variables whose directional derivative points into the
    interior are freed (the largest gains first); ``-1``: all of them, ``0``: none.
    """
    x = cur.x
    at_lo = x <= lo + tol
    at_hi = x >= hi - tol
    at_zero = (np.abs(x) <= tol) & (lo < 0.0) & ~at_lo & ~at_hi
    free = ~(at_lo | at_hi | at_zero)
    # snap the fixed variables and move the gradient there (quadratic model)
    snapped = x.copy()
    snapped[at_lo] = _on(lo, at_lo)
    snapped[at_hi] = _on(hi, at_hi)
    snapped[at_zero] = 0.0
    g = g + H.matvec(snapped - x)
    sgn = np.sign(x)
    gf = g - l1 * sgn
    mu = mu_box[0]
    if u is not None and np.any(free):
        mu = float(u[free] @ gf[free]) / float(u[free] @ u[free])
    r = g - (mu * u if u is not None else 0.0)
    rel_up, rel_dn = _released(r, g, at_lo, at_hi, at_zero, free, lo, hi, l1, release)
    free_new = free | rel_up | rel_dn
    sgn = np.where(rel_up, 1.0, np.where(rel_dn, -1.0, sgn))
    sgn = np.where(free_new & (sgn == 0.0), 1.0, sgn)
    idx = np.flatnonzero(free_new)
    if idx.size == 0:
        return None
    gF = (g - l1 * sgn)[idx]
    HF = H.block(idx)
    if u is not None:
        uF = u[idx]
        m = idx.size
        A = np.zeros((m + 1, m + 1))
        A[:m, :m] = HF
        A[:m, m] = -uF
        A[m, :m] = uF
        rhs = np.concatenate([-gF, [-float(u @ snapped)]])  # restore u'x = 0 after snapping
        sol = np.linalg.lstsq(A, rhs, rcond=1e-14)[0]
        step = sol[:m]
        mu_box[0] = float(sol[m])
    else:
        step = np.linalg.lstsq(HF, -gF, rcond=1e-14)[0]
    return _line_search(cur, snapped, idx, step, sgn, lo, hi, l1, project, score, merit)


def _on(bound, mask):
    """The bound's entries on ``mask`` (a vector box), or the scalar bound itself."""
    return bound[mask] if isinstance(bound, np.ndarray) else bound


def _released(r, g, at_lo, at_hi, at_zero, free, lo, hi, l1, release):
    """Bound variables whose directional derivative points into the interior, as masks
    ``(up, down)``: all of them (``release = -1``) or the ``release`` largest gains."""
    up_gain = np.where(at_lo & (lo < 0.0), r + l1,
                       np.where(at_zero | (at_lo & (lo >= 0.0)), r - l1, -np.inf))
    down_gain = np.where(at_hi & (hi > 0.0), -(r - l1), np.where(at_zero, -r - l1, -np.inf))
    rel_tol = 1e-12 * (1.0 + np.max(np.abs(g)))
    rel_up = (up_gain > rel_tol) & ~free
    rel_dn = (down_gain > rel_tol) & ~free
    if release >= 0:
        gain = np.where(rel_up, up_gain, np.where(rel_dn, down_gain, -np.inf))
        top = np.zeros_like(rel_up)
        top[np.argsort(-gain)[:release]] = True
        rel_up, rel_dn = rel_up & top, rel_dn & top
    return rel_up, rel_dn


def _line_search(cur, snapped, idx, step, sgn, lo, hi, l1, project, score, merit):
    """Backtracking along ``step`` on the free set ``idx``: the first point that beats ``cur``
    (smaller gap or larger ``h``), else the best tried (up to 8 halvings)."""
    best_c = None
    t = 1.0
    for _ls in range(8):
        cand = snapped.copy()
        cand[idx] += t * step
        # a free variable keeps its sign region (the l1 term is smooth there)
        if l1 > 0.0:
            cand[idx] = np.where(sgn[idx] > 0, np.maximum(cand[idx], 0.0),
                                 np.minimum(cand[idx], 0.0))
        cand = project(np.clip(cand, lo, hi))
        c = _Point(cand, score(cand), merit(cand) if merit is not None else -math.inf)
        if best_c is None or c.gap < best_c.gap or (c.gap == best_c.gap and c.h > best_c.h):
            best_c = c
        if c.beats(cur):
            return c
        t *= 0.5
    return best_c


def polish_svm(K, y, a0, *, C, eta, tau, equality: bool = True, max_iter: int = 30,
               score: Callable[[np.ndarray], float], validate: bool = True,
               deadline: float = math.inf, merit: Callable[[np.ndarray], float] | None = None):
    """Polish P1 (``equality=True``) or P3 (``equality=False``) dual vector ``a0``.

    ``score(a)`` is the certified gap to decrease (smaller is better); the returned point is
    feasible (exact projection).  No Newton iteration starts after ``deadline``
    (``time.perf_counter`` clock).  ``merit(a)`` (optional) is the certified lower bound
    ``h(a)``: a step that raises it is accepted even when the gap does not yet shrink (ascent
    on the objective far from ``a*``, where the gap is no guide); the point of smallest gap is
    returned.  Returns ``(a, score(a), n_accepted_steps)``.
    """
    if validate:
        K = check_kernel(K)
        y = check_binary_labels(y, K.shape[0], require_both=equality)
        a0 = check_alpha(a0, K.shape[0], "a0")
        C = check_box(C, K.shape[0])
        eta = check_positive(eta, "eta")
        tau = check_nonnegative(tau, "tau")
        check_bool(equality, "equality")
        max_iter = check_iterations(max_iter, "max_iter", allow_none=False)
        if not callable(score):
            raise TypeError("score must be callable")
    K = np.asarray(K, float)
    y = np.asarray(y, float)

    def grad_hess(a):
        d = a * y
        F = _inner(K, d, eta, tau)[0]
        g = 1.0 - y * ((F * K) @ d)
        return g, HessianOp(K, d, F, eta, tau, y=y)

    if equality:
        def project(z):
            return _project(z, y, C)[0]
    else:
        def project(z):
            return np.clip(z, 0.0, C)

    return newton_polish(a0, lo=0.0, hi=C, l1=0.0, u=y if equality else None,
                         grad_hess=grad_hess, project=project, score=score, max_iter=max_iter,
                         deadline=deadline, merit=merit)


def polish_svr(K, y, b0, *, C, epsilon, eta, tau, max_iter: int = 30,
               score: Callable[[np.ndarray], float], validate: bool = True,
               deadline: float = math.inf, merit: Callable[[np.ndarray], float] | None = None):
    """Polish the SVR coefficient vector ``b = ah - ac`` (maximise over ``|b| <= C, 1'b = 0``).

    Works on ``b`` with ``ah = max(b, 0)``, ``ac = max(-b, 0)`` (the optimal split for
    ``eps >= 0``); ``score(b)`` is the certified gap of that split; ``deadline`` as
    :func:`polish_svm`.  Returns ``(b, score(b), n_accepted_steps)``.
    """
    if validate:
        K = check_kernel(K)
        y = check_targets(y, K.shape[0])
        b0 = check_alpha(b0, K.shape[0], "b0")
        C = check_box(C, K.shape[0])
        epsilon = check_nonnegative(epsilon, "epsilon")
        eta = check_positive(eta, "eta")
        tau = check_nonnegative(tau, "tau")
        max_iter = check_iterations(max_iter, "max_iter", allow_none=False)
        if not callable(score):
            raise TypeError("score must be callable")
    K = np.asarray(K, float)
    y = np.asarray(y, float)
    n = K.shape[0]
    u2 = np.concatenate([np.ones(n), -np.ones(n)])

    def grad_hess(b):
        F = _inner(K, b, eta, tau)[0]
        g = y - (F * K) @ b
        return g, HessianOp(K, b, F, eta, tau)

    def project(b):
        z = np.concatenate([np.maximum(b, 0.0), np.maximum(-b, 0.0)])
        x = _project(z, u2, stack_box(C))[0]
        return x[:n] - x[n:]

    return newton_polish(b0, lo=-C, hi=C, l1=epsilon, u=np.ones(n), grad_hess=grad_hess,
                         project=project, score=score, max_iter=max_iter, deadline=deadline,
                         merit=merit)
