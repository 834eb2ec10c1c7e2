"""Accelerated projected gradient ascent with backtracking and adaptive restart.

FISTA (Beck & Teboulle 2009) for ``max_{z in Z} h(z)`` with

* a local Lipschitz estimate ``L``: doubled until the ascent condition
  ``h(x+) >= h(y) + g'(x+ - y) - L/2 ||x+ - y||^2`` holds, then allowed to shrink;
* adaptive restart (O'Donoghue & Candes 2015): momentum is reset when ``h``
  decreases or the gradient-mapping test ``g(y)'(x+ - x) < 0`` fails;
* exact projection;
* stopping on the certified relative gap (every ``check_every`` iterations).
"""

from __future__ import annotations

import time

import numpy as np

from ._result import DANKResult, finish

__all__ = ["accelerated"]


def accelerated(
    problem,
    *,
    tol: float = 1e-6,
    max_iter: int = 5000,
    alpha0: np.ndarray | None = None,
    check_every: int = 1,
    record_history: bool = True,
    callback=None,
) -> DANKResult:
    t_start = time.perf_counter()
    x = problem.start(alpha0)
    ex = problem.evaluate(x)
    L = _initial_L(problem, ex)
    yv, ey = x, ex
    t = 1.0
    hist = {"h": [ex.h], "step": [], "gap": [], "L": []}
    status, cert = "max_iter", None
    it = 0
    if alpha0 is not None and ex.quick <= tol:
        cert = problem.certify(ex)
        if cert.rel_gap <= tol:  # the warm start is already certified
            return finish(problem, x, ex, cert, "converged", 0, t_start, "accelerated", hist, tol)
    for it in range(1, max_iter + 1):
        g = ey.grad
        x_new, en, L = _backtrack(problem, yv, ey, L)
        dx = x_new - x
        restart = en.h < ex.h or g @ dx < 0
        if restart:
            t_next = 1.0
            y_next = x_new
        else:
            t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
            y_next = x_new + ((t - 1.0) / t_next) * dx
        step_norm = float(np.linalg.norm(dx))
        x, ex, cert = x_new, en, None  # a certificate is of the point it was made at
        if record_history:
            hist["h"].append(ex.h)
            hist["step"].append(step_norm)
            hist["L"].append(L)
        if it % check_every == 0:
            cert = problem.certify(ex)
            if record_history:
                hist["gap"].append((it, cert.gap))
            if cert.rel_gap <= tol:
                status = "converged"
                break
            if step_norm == 0.0 and restart and L > 1e15:
                status = "stalled"
                break
        if callback is not None:
            callback(x, ex)
        if y_next is x_new:
            yv, ey = x, ex
        else:
            yv = y_next
            ey = problem.evaluate(yv, warm=ex)
        L = max(L * 0.9, 1e-12)
    return finish(problem, x, ex, cert, status, it, t_start, "accelerated", hist, tol)


def _backtrack(problem, yv, ey, L: float):
    """The projected gradient step from ``yv`` with the local Lipschitz estimate ``L``, doubled
    until the secant curvature along the step is at most ``L`` (robust to the round-off in
    ``h ~ eta n^2``, unlike the function-value ascent test); returns ``(x+, ev+, L)``."""
    g = ey.grad
    while True:
        x_new = problem.project(yv + g / L)
        step = x_new - yv
        en = problem.evaluate(x_new, warm=ey)
        ss = float(step @ step)
        curv = -float((en.grad - g) @ step)
        if curv <= L * ss or ss == 0.0 or L > 1e20:
            return x_new, en, L
        L = max(2.0 * L, curv / ss)


def _initial_L(problem, ev) -> float:
    """A cheap local estimate: the curvature along the gradient direction at the start."""
    g = ev.grad
    z2 = problem.project(ev.z + 1e-3 * g / max(np.linalg.norm(g), 1e-300))
    dz = z2 - ev.z
    if not np.any(dz):
        return 1.0
    e2 = problem.evaluate(z2)
    return max(float(np.linalg.norm(e2.grad - g) / np.linalg.norm(dz)), 1e-6)


