"""Projected Newton ascent on the free set (active-set Newton), for fast high accuracy.

Not in the paper. It starts from the given start ``z0`` or, where that provably raises ``h``,
from a point of its ray ``{s z0 : 0 < s < 1}`` (:func:`_ray_start`, docs/MATH.md section 5.4);
for ``tau > 0``, from there by the same steps on the relaxed problem ``tau = 0`` (``F(a)`` in
closed form) where a bound proves its solution nearer the optimum (:func:`_relaxed_start`,
docs/MATH.md section 5.5), and from that solution moved towards ``tau`` by one step of the
relaxed model (:func:`_tau_predictor`). Each iteration (Bertsekas' projected Newton with an
equality constraint):

1. the multiplier ``lam`` of ``y'a = 0`` from the free coordinates (:func:`_multiplier`), and
   the binding set: the bounds the reduced gradient ``g - lam y`` pushes against;
2. the Newton direction on the others: the maximiser of the quadratic model
   (:class:`dank_fast._factor.Model`) under ``y_F'p = 0``, the coordinates it pushes out of the
   box held (or, where that costs more than a new factor, moved to the binding set); a model
   takes at most twice the support (:func:`dank_fast._cost.model_limit`), the most violating
   coordinates first, the others waiting for the next step (:func:`_direction`);
3. trial points along the arc ``t = t0, 1, 1/2, ..., 1/256`` (:func:`_trial`: the model's
   maximiser with the bounds the step crosses held, so many bounds become active in one step),
   the first that increases ``h`` taken (:func:`_better`); ``t0`` in ``[1, 2]`` is the secant
   estimate along the previous step (:func:`_next_scale`: for ``tau > 0`` the curvature model's
   full steps fall short by a steady factor);
4. the certificate decides when to stop.

Cost per iteration: the curvature (``2 f^2 (r + 1)`` flops for ``f`` free coordinates and ``F``
of rank ``r``), its factor (``f^3 / 3``), ``2 f^2`` per held coordinate and one evaluation of
``F(a)`` per trial point.
Where ``F`` came from the iterative route its ``h`` is exact only up to ``eta * excess``: a
trial within that ends the step, and where no step is possible ``F`` is evaluated densely from
there on; so it is where the model's steps converge so slowly that dense evaluations and the
exact Hessian cost less (:func:`_exact_pays`), unless that Hessian cannot step
(:func:`_next_mode`). Where that does not help, a burst of accelerated iterations (doubling
in length within ``fallback_iter``) hands back to Newton, so Newton is never less robust than
the accelerated method alone.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from scipy.optimize import brentq

from ._accelerated import accelerated
from ._cost import exact_steps_pay, model_limit
from ._curvature import rank
from ._factor import Model
from ._result import ConvergenceWarning, finish
from .projection import _project_core

__all__ = ["newton"]


def _multiplier(z: np.ndarray, g: np.ndarray, y: np.ndarray, box) -> float:
    """Estimate of the multiplier ``lam`` of ``y'z = const`` (``y`` in {-1, +1}): the mean of
    ``y_i g_i`` over the coordinates inside the box; with none inside, the middle of the
    interval that the bounds leave (as libsvm's bias without free support vectors).

    A coordinate at a bound is binding for ``r = g - lam y`` when ``lam`` lies on one side of
    ``b_i = y_i g_i``: above it at 0 with ``y_i = 1`` and at ``C`` with ``y_i = -1`` (``lam >=
    b_i`` keeps it), below it otherwise. With ``lo = max`` of the first kind and ``hi = min`` of
    the second, the midpoint frees the violators on both sides. ``box``: :func:`_box` of ``z``.
    """
    margin, inside = box
    b = y * g
    if np.any(inside):
        return float(np.mean(b[inside]))
    at0 = z <= margin
    keeps_above = (at0 & (y > 0)) | (~at0 & (y < 0))
    ends = [float(b[keeps_above].max())] if np.any(keeps_above) else []
    if not np.all(keeps_above):
        ends.append(float(b[~keeps_above].min()))
    return float(np.mean(ends)) if ends else 0.0


def _ray_start(problem, z: np.ndarray) -> np.ndarray:
    """``s z`` for the maximiser ``s`` in ``(0, 1)`` of ``phi(s) = s lin - eta (2 s^2 q + s^4 G
    - tau s^2 T)`` (``q = 1'Gamma 1``, ``G = ||Gamma||_F^2``, ``T = tr Gamma`` at ``z``), which
    is ``h(s z) - eta tau n`` up to a term in ``[-eta N tau^2 / 4, 0]`` (docs/MATH.md section
    5.4), where its gain over ``z`` exceeds that term and the round-off: then ``h(s z) >
    h(z)``; else ``z``. Feasible: ``d`` and ``lin`` are linear in ``z``, and the constraints
    keep every ``s z``. One pass over ``K[S][:, S]``
    (:meth:`dank_fast.inner.KernelData.gamma_sums`), no evaluation."""
    d = problem.d_of(z)
    S = np.flatnonzero(d)
    lin, eta, tau = problem.lin(z), problem.eta, problem.tau
    if S.size == 0 or not lin > 0.0:
        return z
    quad, sq, tr, _ = problem.kd.gamma_sums(S, d[S])
    c = 1.0 / (4.0 * eta)
    q, G, T = quad * c, sq * c * c, tr * c

    def phi(s: float) -> float:
        return s * lin - eta * (2.0 * s * s * q + s**4 * G - tau * s * s * T)

    def slope(s: float) -> float:  # concave in s >= 0, lin > 0 at 0: one root in (0, 1)
        return lin - eta * (4.0 * s * q + 4.0 * s**3 * G - 2.0 * tau * s * T)

    if not (np.isfinite(slope(1.0)) and slope(1.0) < 0.0):
        return z
    s = brentq(slope, 0.0, 1.0)
    bound = eta * (S.size + 1) * (0.5 * tau) ** 2
    roundoff = 64.0 * float(np.finfo(float).eps) * (lin + eta * (2.0 * q + G + tau * T))
    return s * z if phi(s) - phi(1.0) > bound + roundoff else z


def _box(z: np.ndarray, C) -> tuple[np.ndarray, np.ndarray]:
    """``(margin, inside)``: a coordinate within ``margin = 1e-12 C`` of a bound is at it (a
    relative round-off of the box), and ``inside`` marks the others."""
    margin = 1e-12 * np.asarray(C)
    return margin, (z > margin) & (z < C - margin)


def _binding(z, g, y, C, box):
    """``(binding, r)``: the reduced gradient ``r = g - lam y`` (:func:`_multiplier`) and the
    coordinates at a bound that it pushes against; ``box``: :func:`_box` of ``z``."""
    margin = box[0]
    lam = _multiplier(z, g, y, box) if y is not None else 0.0
    r = g - lam * y if y is not None else g
    return ((z <= margin) & (r < 0)) | ((z >= C - margin) & (r > 0)), r


def _direction(problem, z, ev):
    """``(model, p, held)``: the Newton direction on the free coordinates (steps 1-3 of the
    module docstring), or None when nothing can move or the curvature is not positive
    definite.

    A model takes at most :func:`dank_fast._cost.model_limit` of the support's size: the
    coordinates inside the box, then those at a bound that the reduced gradient frees, in order
    of their violation; the others wait for the next step.
    """
    margin, inside = box = _box(z, problem.C)
    binding, r = _binding(z, ev.grad, problem.eq_vector, problem.C, box)
    free = np.flatnonzero(~binding)
    waiting = free[~inside[free]]
    waiting = waiting[np.argsort(-np.abs(r[waiting]), kind="stable")]
    W, rest = _admit(free[inside[free]], waiting, np.count_nonzero(z > margin))
    out = _model_direction(problem, z, ev, W)
    if out is None and rest.size:  # too few to move: all of them
        return _model_direction(problem, z, ev, free)
    return out


def _admit(W: np.ndarray, waiting: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``W`` and the first of ``waiting`` (coordinates outside ``W``, in order) up to
    :func:`dank_fast._cost.model_limit` of ``size`` coordinates in all, sorted; and the rest
    of ``waiting``."""
    k = max(model_limit(size) - W.size, 0)
    return np.sort(np.concatenate([W, waiting[:k]])), waiting[k:]


def _model_direction(problem, z, ev, free):
    """The model on ``free`` and its direction (:func:`_direction`), the coordinates it
    pushes out of the box held, or cut where holding them costs more than a new model."""
    y = problem.eq_vector
    model = Model(problem, ev, z, free) if free.size else None
    while model is not None and model.ok:
        # with y'p = 0 one free coordinate cannot move: its p is round-off
        if model.free.size < (2 if y is not None else 1):
            return None
        p, held = model.point(1.0, hold_inside=False)
        if p is not None:
            return model, p, held
        # holding the coordinates pushed out costs more than a model without them
        keep = np.ones(model.free.size, dtype=bool)
        keep[list(held)] = False
        model = model.cut(problem, ev, z, keep)
    return None


def _trial(problem, z, model, p, held, t: float):
    """The trial point of the arc at the multiple ``t`` (module docstring, step 4): the
    model's maximiser with the crossed bounds held; where holding them does not pay, the
    Euclidean projection of ``z + t p``, unless the model says it does not ascend (the
    equality constraint can turn the projected step, as when many coordinates are held),
    where the holds are made whatever they cost. ``z`` itself where nothing can move."""
    s, _ = model.point(t, hold_inside=True, held=held)
    free = model.free
    z_new = z.copy()
    if s is None:
        w = _project_free(problem, z, free, z[free] + t * p)
        if model.gain(w - z[free]) > 0.0:
            z_new[free] = w
            return z_new
        s, _ = model.point(t, hold_inside=True, held=held, affordable=False)
        if s is None:
            return z_new
    z_new[free] = _project_free(problem, z, free, z[free] + s)
    return z_new


def _project_free(problem, z, free, w: np.ndarray) -> np.ndarray:
    """The Euclidean projection of ``w`` (new values of the coordinates ``free``) onto the
    feasible set with the other coordinates of ``z`` fixed."""
    y = problem.eq_vector
    C = problem.C if np.ndim(problem.C) == 0 else problem.C[free]
    if y is None:
        return np.clip(w, 0.0, C)
    fixed = np.ones(z.size, dtype=bool)
    fixed[free] = False
    return _project_core(w, y[free], C, -float(y[fixed] @ z[fixed]))


def _step(problem, z, ev, t0: float, exact: bool):
    """One projected Newton step from ``z``: ``(z+, ev+, t)`` with ``t`` the multiple taken,
    or None (module docstring)."""
    out = _direction(problem, z, ev)
    if out is None:
        return None
    model, p, held = out
    for t in ([t0] if t0 > 1.0 else []) + [0.5**k for k in range(9)]:
        z_new = _trial(problem, z, model, p, held, t)
        if np.array_equal(z_new, z):
            continue
        en = problem.evaluate(z_new, warm=ev, exact=exact)
        verdict = _better(problem, en, ev)
        if verdict is None:  # F^ cannot tell: a shorter step would not either
            return None
        if verdict:
            return z_new, en, t
    return None


def _next_scale(ev, en, z, z_new, t: float) -> float:
    """The first trial multiple of the next step: ``t rho`` in ``[1, 2]``, ``rho = g'dz / (g -
    g+)'dz`` the maximiser of the quadratic that interpolates ``h``'s slope along the step
    ``dz = z+ - z`` just taken; 1 after a step shorter than the model's. The arc's trials
    halve the step; this is the one doubling beyond it (near the optimum the two slopes are
    at their round-off and their ratio says nothing)."""
    if t < 1.0:
        return 1.0
    dz = z_new - z
    g0, g1 = float(ev.grad @ dz), float(en.grad @ dz)
    if not (g0 > 0.0 and g1 < g0):
        return 1.0
    return min(max(t * g0 / (g0 - g1), 1.0), 2.0)


def _newton_phase(problem, z, ev, tol: float, steps: int, hist: dict, record: bool,
                  exact: bool, blocked: int = -1):
    """Newton steps until certified or stuck (no step accepted), at most ``steps`` of them,
    or (where not ``exact``) until the model's rate says that dense evaluations and the exact
    Hessian pay (:func:`_exact_pays`) at a rank of ``F`` other than ``blocked``.
    Returns ``(z, ev, cert, n_steps, state)``, ``state`` one of
    ``"converged"``, ``"stuck"`` and ``"exact"``."""
    scale, gaps = 1.0, []
    for k in range(steps + 1):
        cert = None  # the certificate of this z, where it is made
        z_norm = problem.normalize(z)  # SVR: ah_i, ac_i > 0 together is never optimal
        if z_norm is not z:
            z, ev = z_norm, problem.evaluate(z_norm, warm=ev, exact=exact)
        quick = ev.quick
        if quick <= tol:
            cert = problem.certify(ev)
            if record:
                hist["gap"].append((hist["offset"] + k, cert.gap))
            if cert.rel_gap <= tol:
                return z, ev, cert, k, "converged"
        gaps.append(quick)
        if k == steps:
            return z, ev, cert, k, "stuck"
        if not exact and _exact_pays(problem, ev, gaps, tol, blocked):
            return z, ev, cert, k, "exact"
        out = _step(problem, z, ev, scale, exact)
        if out is None:
            return z, ev, cert, k, "stuck"
        z_new, en, t = out
        scale = _next_scale(ev, en, z, z_new, t)
        if record:
            hist["h"].append(en.h)
            hist["step"].append(float(np.linalg.norm(z_new - z)))
        z, ev = z_new, en
    return z, ev, cert, steps, "stuck"


def _exact_pays(problem, ev, gaps: list, tol: float, blocked: int = -1) -> bool:
    """Whether Newton continues with dense evaluations and the exact Hessian, from an
    evaluation of the iterative route (:func:`dank_fast._cost.exact_steps_pay`), at the rate
    of the relative gap over the last four steps (``gaps``: one per point). Where the model's
    curvature is far from the Hessian's, the gap's upper bound zigzags with a period of two
    steps; four take the mean of two periods. Not at the rank ``blocked`` of ``F``, where
    that Hessian could not step (:func:`_next_mode`)."""
    if len(gaps) < 5 or ev.inner.route != "lanczos":
        return False
    r = rank(problem, ev)
    if r == blocked:
        return False
    f = int(np.count_nonzero(_box(ev.z, problem.C)[1]))
    N = int(np.count_nonzero(problem.d_of(ev.z))) + 1
    rate = float((gaps[-1] / gaps[-5]) ** 0.25)
    return exact_steps_pay(gaps[-1], rate, tol, f, r, N)


def _relaxed_start(problem, z: np.ndarray, tol: float, steps: int) -> tuple[np.ndarray, int]:
    """``(z+, k)``: the solution of the relaxed problem ``tau = 0`` reached from ``z`` in ``k``
    Newton steps, where a bound proves it nearer the optimum than ``z``; else ``(z, 0)``.

    At ``tau = 0``, ``F(a) = 11' + Gamma`` in closed form (no eigensolver) and the curvature
    model is the exact Hessian: a step costs its factor and ``O(|S|^2)``. The two problems'
    gradients differ by ``y o ((F0 - F) o K) d`` with ``0 <= F0 - F <= t I`` (``t = tau / 2``,
    Lemma 1), of norm at most ``e = t kappa ||d||`` (Schur's bound, ``kappa = max K_ii``). To
    first order the relaxed solution, where the relaxed reduced gradient vanishes, has a true
    one of norm at most ``e``, and ``z`` at least ``||r0|| - e`` (``r0``: the relaxed reduced
    gradient at ``z``). The relaxed phase runs where ``rho = e / ||r0|| < 1/2`` (the relaxed
    solution is then the nearer), to ``rho`` times ``z``'s relaxed gap, beyond which the two
    problems' optima differ (docs/MATH.md section 5.5). Costs one closed-form evaluation where
    it does not run."""
    if problem.tau == 0.0:
        return z, 0
    relaxed = problem.relaxed()
    e0 = relaxed.evaluate(z)
    binding, r0 = _binding(z, e0.grad, problem.eq_vector, problem.C, _box(z, problem.C))
    size = float(np.linalg.norm(r0[~binding]))
    bound = 0.5 * problem.tau * problem.kd.kappa * float(np.linalg.norm(problem.d_of(z)))
    if not 2.0 * bound < size:
        return z, 0
    tol0 = max(tol, bound / size * e0.quick)
    z_new, e_new, _, k, _ = _newton_phase(relaxed, z, e0, tol0, steps, {}, False, False)
    return (_tau_predictor(problem, relaxed, e_new) if k else z_new), k


def _tau_predictor(problem, relaxed, ev) -> np.ndarray:
    """The relaxed solution ``ev.z`` moved from ``tau = 0`` towards ``tau``, the predictor of a
    continuation in ``tau`` (docs/MATH.md section 5.5): the maximiser of the relaxed model at
    ``ev.z`` (:func:`_direction`, then :func:`_trial` at ``t = 1``: the bounds it crosses
    held) for the relaxed gradient plus the separable part ``t Y diag(K) d`` of the two
    problems' difference, ``t = tau / 2``. One factor of the relaxed model, no eigensolver;
    ``ev.z`` where the model cannot step."""
    shift = 0.5 * problem.tau * problem.kd.diag * problem.d_of(ev.z)
    out = _direction(relaxed, ev.z, ev.with_f0(ev.f0 - shift))
    if out is None:
        return ev.z
    model, p, held = out
    return _trial(relaxed, ev.z, model, p, held, 1.0)


def _start(problem, alpha0, start, tol: float, steps: int):
    """``(z, ev, k, back)``: the caller's evaluation ``start``, or the start of ``alpha0`` on
    its ray (:func:`_ray_start`), then the relaxed phase's ``k`` steps
    (:func:`_relaxed_start`), and its evaluation; ``back``: the start that the relaxed phase
    moved from (None where it did not move)."""
    if start is not None:
        return start.z, start, 0, None
    z0 = _ray_start(problem, problem.start(alpha0))
    z, k = _relaxed_start(problem, z0, tol, steps)
    return z, problem.evaluate(z), k, (z0 if k else None)


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
    start=None,
) -> object:
    """Projected Newton with accelerated hand-overs (module docstring), stopping on the gap.

    At most ``max_iter`` Newton steps and ``fallback_iter`` accelerated iterations in all.
    Whenever Newton cannot step it hands over to a burst of accelerated iterations
    (``burst_iter`` at the first hand-over, doubled at each next one, within ``fallback_iter``)
    and resumes from where the burst ends, and stops as soon as either certifies ``tol``.
    ``start``: the evaluation at a feasible start, where the caller has it (working sets: the
    previous round's solution and ``F``, :mod:`dank_fast.working_set`); it replaces ``alpha0``
    and the relaxed phase. The relaxed phase's steps count in ``max_iter`` and in
    ``extra["newton_iter"]``; where Newton cannot take a step from the relaxed solution, it
    starts again from the start that phase moved from.
    """
    t_start = time.perf_counter()
    z, ev, n_newton, back = _start(problem, alpha0, start, tol, max_iter)
    hist = {"h": [ev.h], "step": [], "gap": [], "L": [], "offset": n_newton}
    n_acc = n_burst = useless = 0
    burst = burst_iter
    status, cert, exact, since, blocked = "max_iter", None, False, None, -1
    while True:
        z, ev, cert, k, state = _newton_phase(problem, z, ev, tol, max_iter - n_newton, hist,
                                              record_history, exact, blocked)
        n_newton += k
        hist["offset"] += k
        if state == "converged":
            status = "converged"
            break
        if back is not None and k == 0 and n_newton < max_iter:
            # Newton cannot step from the relaxed solution: from the start that phase replaced
            z, ev, back = back, problem.evaluate(back), None
            continue
        back = None
        mode = _next_mode(state, k, (exact, since, blocked), n_burst,
                          ev.inner.route == "lanczos", n_newton < max_iter, rank(problem, ev))
        if mode != (exact, since, blocked):
            exact, since, blocked = mode
            ev = problem.evaluate(z, warm=ev, exact=exact)
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
        ev = problem.evaluate(z, warm=ev, exact=exact)
        if res.status in ("converged", "stalled"):
            status = res.status
            break
    del hist["offset"]
    return _result(problem, z, ev, cert, status, (n_newton, n_acc, n_burst), t_start, hist, tol)


def _next_mode(state: str, k: int, mode: tuple, n_burst: int, iterative: bool,
               steps_left: bool, rank_F: int) -> tuple:
    """Newton's evaluations after a phase of ``k`` steps that ended in ``state`` short of the
    certificate, at a point where ``F`` has rank ``rank_F``: ``mode = (exact, since,
    blocked)``, ``exact`` for dense evaluations, ``since`` the burst count at which the rule
    of :func:`_exact_pays` chose them (None where it did not), ``blocked`` the rank at which
    that rule does not act. Dense evaluations from here on where the rule says they pay, or
    where Newton is stuck on the iterative route's ``F^`` (``iterative``: its error, not the
    model, stops Newton short of the certificate). Back to the model where the exact Hessian
    the rule chose cannot take a step even after a burst: beside an eigenvalue of ``M`` just
    below ``t`` it is near singular and its steps overshoot; the rule acts again once that
    eigenvalue has crossed, at another rank."""
    exact, since, blocked = mode
    if since is not None and k == 0 and n_burst > since and steps_left:
        return False, None, rank_F
    if state == "exact":
        return True, n_burst, blocked
    if steps_left and not exact and iterative:
        return True, None, blocked
    return mode


def _result(problem, z, ev, cert, status: str, counts, t_start: float, hist: dict, tol: float):
    """The result (:func:`dank_fast._result.finish`) with Newton's counts ``(steps,
    accelerated iterations, hand-overs)``, and the warning where it is not certified."""
    n_newton, n_acc, n_burst = counts
    res = finish(problem, z, ev, cert, status, n_newton, t_start, "newton", hist, tol)
    res.extra.update(newton_iter=n_newton, accelerated_iter=n_acc, fallback=n_burst > 0,
                     handovers=n_burst)
    if status != "converged":
        warnings.warn(f"DANK solver did not certify tol={tol:g}: {res.message}",
                      ConvergenceWarning, stacklevel=4)
    return res


def _better(problem, en, ev) -> bool | None:
    """Accept a trial point: ``h`` increased beyond its uncertainty, or (for exact ``F``) the
    cheap duality gap decreased while ``h`` changed by no more than its round-off
    (:func:`_h_roundoff`; near the optimum the change drowns in it). ``h`` is a lower bound
    that is exact up to ``eta * excess`` (:class:`dank_fast.inner.InnerSolution`): where either
    point's ``F`` is the iterative route's and the change lies within that, the evaluations
    cannot decide, and None says so. (The gap alone is not a merit function away from the
    optimum.)"""
    rounding = _h_roundoff(problem, ev)
    error = problem.eta * (ev.inner.excess + en.inner.excess)  # of the two lower bounds
    if en.h > ev.h + rounding + error:
        return True
    if ev.h - en.h > rounding + error:
        return False
    if error > 2.0 * rounding:
        return None
    return bool(en.quick < ev.quick)


def _h_roundoff(problem, ev) -> float:
    """A bound on the round-off of a computed ``h``: ``64 eps`` (at least ``log2`` of any sum's
    length, for NumPy's pairwise sums and BLAS's blocked ones) times the magnitudes of the
    terms ``h`` adds, ``|h| + |lin|`` and ``eta`` times those of the deficit
    (:attr:`dank_fast.inner.InnerSolution.size`)."""
    size = abs(float(ev.h)) + abs(problem.lin(ev.z)) + problem.eta * ev.inner.size
    return 64.0 * float(np.finfo(float).eps) * size
