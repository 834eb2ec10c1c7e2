"""The paper's own solvers, as printed: Algorithm 1, its monotone variant, eq. (17).

Algorithm 1 (Section 3.2), with ``L`` from Theorem 4, ``a0 = 0``,
``t_max = 2000`` and the stopping rule ``||a_t - a_{t-1}|| <= 1e-4``:

    theta_t = P_A(a_t + grad h(a_t) / L)
    beta_t  = P_A(a_0 - 1/(2L) sum_{i<=t} (i+1) grad h(a_i))      # sign as printed
    a_{t+1} = (t+1)/(t+3) theta_t + 2/(t+3) beta_t

Two faithful details are options, since the printed text is ambiguous or slips:

* ``beta_sign``: the printed ``-`` comes from Nesterov's scheme for *minimisation*;
  for the maximisation of ``h`` the ascent-consistent sign is ``+``
  (``beta_sign="ascent"``). Default ``"printed"``.
* ``projection``: ``"paper"`` (clip then shift along y, the printed method) or
  ``"exact"``. The returned alpha is always exactly projected onto ``A`` before it
  is certified; the distance moved is ``result.projection_distance``.

``variant="monotone"`` replaces line 6 by the argmax of h over
``{theta_{t-1}, P_A(a_t + grad/L), a_t}`` (Section 3.2); ``variant="pgm"`` is the
plain projected gradient of eq. (17) with ``L = n - tau/2 + n C^2 lambda_max(K)/(4 eta)``.
"""

from __future__ import annotations

import time

import numpy as np

from ._result import finish

__all__ = ["paper"]


def paper(
    problem,
    *,
    variant: str = "nesterov",
    projection: str = "paper",
    beta_sign: str = "printed",
    t_max: int = 2000,
    eps: float = 1e-4,
    alpha0: np.ndarray | None = None,
    L: float | None = None,
    tol: float = 1e-6,
    record_history: bool = True,
    certify_every: int = 0,
) -> object:
    """Run Algorithm 1 (``variant="nesterov"``), its monotone variant or eq. (17).

    Parameters
    ----------
    problem : SVMProblem or SVRProblem
        The (canonical) instance; supplies ``evaluate``, ``project``, ``project_paper``,
        ``start`` and the Lipschitz constants of Theorem 4 / eq. (17).
    variant, projection, beta_sign : str
        See the module docstring.
    t_max : int
        Iteration limit (the paper's 2000).
    eps : float
        The printed stopping rule ``||a_t - a_{t-1}|| <= eps``.
    alpha0 : ndarray, optional
        Warm start ``a_0``, made feasible by ``problem.start`` (clipped to the box, projected
        onto ``A`` within its support) before ``h`` is evaluated; default ``a_0 = 0``.
    L : float, optional
        Lipschitz constant (default: Theorem 4, or eq. (17)'s for ``variant="pgm"``).
    tol : float
        Target relative gap; only decides whether a :class:`dank_fast.ConvergenceWarning` is
        issued (certified ``rel_gap > tol``): the method never stops on the certificate.
    record_history : bool
        Record ``h``, step lengths and ``L`` per iteration.
    certify_every : int
        Certify every this many iterations (0: never) into ``history["gap"]``.

    Returns
    -------
    DANKResult
        ``status`` is the rule that ended the method (:data:`dank_fast._result.STATUSES`):
        ``"stopped"`` (``||a_t - a_{t-1}|| <= eps``) or ``"max_iter"`` (``t = t_max``), also
        when the final point's certified ``rel_gap <= tol``; ``n_iter`` is ``t``.
    """
    _check_choices(variant, projection, beta_sign)
    t_start = time.perf_counter()
    P = problem.project_paper if projection == "paper" else problem.project
    if L is None:
        L = problem.lipschitz_pgm() if variant == "pgm" else problem.lipschitz_paper()
    sgn = -1.0 if beta_sign == "printed" else 1.0
    a0 = _first_point(problem, alpha0)
    a = a0.copy()
    grad_sum = np.zeros(problem.dim)
    theta_prev, h_theta_prev = None, -np.inf
    hist = {"h": [], "step": [], "gap": [], "L": [L]}
    status = "max_iter"
    ev = problem.evaluate(a)
    t = 0
    while t < t_max:
        g = ev.grad
        if record_history:
            hist["h"].append(ev.h)
        if variant == "pgm":
            a_next = P(a + g / L)
        else:
            theta = P(a + g / L)
            if variant == "monotone":
                h_theta_prev, theta = _best_of(problem, theta, ev, a, theta_prev, h_theta_prev)
                theta_prev = theta
            grad_sum += (t + 1) * g
            beta = P(a0 + sgn * grad_sum / (2.0 * L))
            a_next = (t + 1) / (t + 3) * theta + 2.0 / (t + 3) * beta
        step = float(np.linalg.norm(a_next - a))
        a = a_next
        t += 1
        ev = problem.evaluate(a, warm=ev)
        if record_history:
            _record(problem, hist, a, t, step, certify_every)
        if step <= eps:
            status = "stopped"
            break
    if record_history:
        hist["h"].append(ev.h)
    z = problem.project(a)
    method = {"nesterov": "paper", "monotone": "paper-monotone", "pgm": "pgm"}[variant]
    res = finish(problem, z, problem.evaluate(z), None, status, t, t_start, method, hist, tol,
                 raw=a)
    res.extra.update({"L": L, "variant": variant, "projection": projection, "beta_sign": beta_sign})
    return res


def _check_choices(variant: str, projection: str, beta_sign: str) -> None:
    """``ValueError`` naming the option for an unknown ``variant``, ``projection`` or
    ``beta_sign`` (module docstring)."""
    if variant not in ("nesterov", "monotone", "pgm"):
        raise ValueError(f"variant must be 'nesterov', 'monotone' or 'pgm', got {variant!r}")
    if projection not in ("paper", "exact"):
        raise ValueError(f"projection must be 'paper' or 'exact', got {projection!r}")
    if beta_sign not in ("printed", "ascent"):
        raise ValueError(f"beta_sign must be 'printed' or 'ascent', got {beta_sign!r}")


def _first_point(problem, alpha0) -> np.ndarray:
    """``a_0``: 0 as printed; a warm start is made feasible first (clipped to the box and
    projected within its support, as the other methods' ``problem.start`` does): ``h`` and its
    gradient are only defined on ``A``, and a huge ``alpha0`` used raw overflowed
    (IndexError / LinAlgError)."""
    if alpha0 is None:
        return np.zeros(problem.dim)
    return problem.start(np.asarray(alpha0, dtype=np.float64))


def _record(problem, hist: dict, a: np.ndarray, t: int, step: float, certify_every: int) -> None:
    """Append iteration ``t``'s step length, and every ``certify_every`` iterations the
    certified gap at the projection of ``a``, to ``hist``."""
    hist["step"].append(step)
    if certify_every and t % certify_every == 0:
        zc = problem.project(a)
        hist["gap"].append((t, problem.certify(problem.evaluate(zc)).gap))


def _best_of(problem, theta, ev, a, theta_prev, h_theta_prev):
    """The monotone variant's ``(h, point)``: the best of ``theta``, the current ``a`` (value
    ``ev.h``) and the previous choice ``theta_prev`` (value ``h_theta_prev``)."""
    cands = [(problem.evaluate(theta).h, theta), (ev.h, a)]
    if theta_prev is not None:
        cands.append((h_theta_prev, theta_prev))
    return max(cands, key=lambda c: c[0])
