"""Projected Newton ascent on the free set (active-set Newton), for fast high accuracy.

Not in the paper. Each iteration (Bertsekas' projected Newton with an equality constraint):

1. the multiplier ``lam`` of ``y'a = 0`` from the free coordinates (:func:`_multiplier`);
2. the binding set: bounds the reduced gradient ``g - lam y`` pushes against;
3. the Newton step on the remaining coordinates, subject to ``y_F' p = 0``, with the curvature
   of :mod:`dank_fast._curvature` and the bordered factor of :mod:`dank_fast._factor`;
4. ``a+ = a + t p`` on the free coordinates, ``t = 1, 1/2, ..., 1/256`` along the arc (many
   bounds can become active in one step): where it leaves the box, the coordinates it pushes
   out are held at their bound and the others re-solved by the curvature model
   (:func:`dank_fast._factor.held_point`; a Euclidean projection would shift all of them along
   ``y``), then the ratio test's step (one bound), halved until ``h`` increases
   (:func:`_step_along`);
5. the certificate decides when to stop.

When no step is possible (empty free set, curvature not positive definite, no accepted step) it
hands over to a burst of accelerated iterations from the current point and then resumes Newton:
the bursts move the active set where the Newton model could not. The bursts double in length
within the ``fallback_iter`` budget (the accelerated method alone has the same budget).
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from ._accelerated import ConvergenceWarning, accelerated, finish
from ._curvature import switch_budget, uses_exact
from ._factor import Factor, held_point, newton_direction
from .projection import _project_core

__all__ = ["newton"]

#: quick relative gap below which a Newton step first tries the previous step's factor where
#: the free set only lost coordinates (near the optimum the curvature changes little; family
#: rows, in process, without it against with, paired: make_classification n = 2,000, C = 32
#: 1.20-1.23x the time, diabetic C = 32 1.09-1.13x, the others within 0.96-1.03x)
REUSE_GAP = 1e-2


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


#: largest first trial multiple of a Newton step (:func:`_next_scale`; family rows, in process,
#: 1 against 2, paired: heart C = 32 takes 1.27-1.33x the time, C = 1 1.19-1.32x,
#: make_classification n = 2,000, C = 32 1.08-1.13x; it costs diabetic C = 32 and the blobs
#: at n = 1,000-2,000 up to 9%: 0.91-0.97x)
SCALE_MAX = 2.0


def _newton_step(problem, z, ev, quick: float, previous: Factor | None = None,
                 scale: float = 1.0):
    """One projected Newton step from ``z``: ``((z+, ev+, t), factor)``, ``t`` the multiple of
    the Newton direction taken (:func:`_step_along`), or None.

    None when no coordinate is free, the curvature is not positive definite, or neither the
    full projected step nor any halving of the ratio-test step (down to ``1e-12``) is accepted
    by :func:`_better`. ``previous``: the previous step's factor, tried first where it serves
    (:func:`dank_fast._factor.newton_direction`); when its step is not accepted at once the step
    is redone with a new one. ``scale``: the first trial step's multiple of the Newton step
    (:func:`_next_scale`).
    """
    C = problem.C
    y = problem.eq_vector  # normal of the equality constraint (None for P3)
    g = ev.grad
    margin = 1e-12 * C
    lam = _multiplier(z, g, y, C, margin) if y is not None else 0.0
    r = g - lam * y if y is not None else g
    binding = ((z <= margin) & (r < 0)) | ((z >= C - margin) & (r > 0))
    out = newton_direction(problem, ev, z, g, binding, margin, previous)
    if out is None or np.count_nonzero(out[1]) < (2 if y is not None else 1):
        # (with y'p = 0 one free coordinate cannot move: its p is round-off, and every trial
        # point along it was z itself, 49 evaluations before the hand-over; wine, sigma = 32)
        return None
    free, pF, factor, system = out
    held = None if y is None else (
        lambda t: held_point(problem, z, factor, system, free, pF, t))
    step = _step_along(problem, z, ev, quick, free, pF, full_only=factor.stale, t0=scale,
                       held=held)
    if step is None and factor.stale:  # the old factor's step failed: a new factor decides
        return _newton_step(problem, z, ev, quick, scale=scale)
    return None if step is None else (step, factor)


def _step_along(problem, z, ev, quick: float, free: np.ndarray, pF: np.ndarray,
                full_only: bool = False, t0: float = 1.0, arc_steps: int = 8, held=None):
    """The accepted ``(z+, ev+, t)`` along the Newton direction ``pF`` on ``free``, or None
    (``full_only``: the full projected step only, no shorter step); ``t`` is the multiple of
    ``pF`` taken (0 for the ratio test's steps).

    Tried in order, each one evaluation, until :func:`_better` accepts: the step ``t0 pF``
    when ``t0 > 1`` (:func:`_next_scale`); the full step; where a step leaves the box,
    ``held(t)`` gives its point (:func:`dank_fast._factor.held_point`), else the projection;
    ``arc_steps`` halvings of it along the projection arc while they are longer than the ratio
    test's step; the ratio test's step (the longest that keeps every free coordinate in the box:
    one bound becomes active), halved. Without the arc, a start off the solution's active set
    (half the SVC solution, make_moons n = 300-2,000) made Newton crawl one bound per step for
    46-100 steps; with it 5-12.
    """
    C = problem.C
    y = problem.eq_vector
    # 1. the step on the free coordinates only (binding ones stay put): a+_F = a_F + t p_F,
    #    where it leaves the box the held point (``held``: the coordinates pushed out held at
    #    their bound, the others re-solved), then P onto {y_F'a_F = -y_B'a_B, box} (round-off,
    #    or the whole correction where there is no held point), so several bounds can become
    #    active at once; t = 1, then (2.) halvings along this arc while longer than the ratio
    #    test's step
    fixed = np.ones(problem.dim, dtype=bool)  # the dropped coordinates stay put too
    fixed[free] = False
    target = None if y is None else -float(y[fixed] @ z[fixed])
    with np.errstate(divide="ignore", invalid="ignore"):
        to_bound = np.where(pF > 0, (C - z[free]) / pF, np.where(pF < 0, -z[free] / pF, np.inf))
    t_max = float(min(1.0, np.min(to_bound)))
    trials = [0.5 ** k for k in range(1 + (0 if full_only else arc_steps))]
    for t in ([t0] if t0 > 1.0 else []) + trials:
        if t < 1.0 and t <= t_max:
            break
        z_new = None if held is None else held(t)
        if z_new is None:
            z_new = z.copy()
            z_new[free] = z[free] + t * pF
        z_new[free] = (np.clip(z_new[free], 0.0, C) if y is None
                       else _project_core(z_new[free], y[free], C, target))
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
    exact = uses_exact(problem)
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
                           scale)
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
    burst_iter: int = 50,
) -> object:
    """Projected Newton with accelerated hand-overs (module docstring), stopping on the gap.

    At most ``max_iter`` Newton steps and ``fallback_iter`` accelerated iterations in all.
    Whenever Newton cannot step it hands over to a burst of accelerated iterations
    (``burst_iter`` at the first hand-over, doubled at each next one, within ``fallback_iter``)
    and resumes from where the burst ends, so that it is never less robust than the
    accelerated method with the same budget, and stops as soon as either certifies ``tol``.
    """
    t_start = time.perf_counter()
    z = problem.start(alpha0)
    ev = problem.evaluate(z)
    hist = {"h": [ev.h], "step": [], "gap": [], "L": [], "offset": 0}
    n_newton = n_acc = n_burst = useless = 0
    burst = burst_iter
    status, cert = "max_iter", None
    switch = switch_budget(problem)
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


