"""Implementations for the conformance kit's tests (tests/test_conformance_kit.py): a correct
P1 solver written from docs/MATH.md alone (importing neither dank_fast nor dank_ref) and broken
variants of it, each broken in one plausible way."""

import os
import time

import numpy as np
from scipy.optimize import minimize

# the two plausible slips of an implementer: the sign of Gamma, the threshold tau
BREAK = {"gamma_sign": 1.0, "threshold": 0.5}


def _F(a, y, K, eta, tau):
    """F(a) = J_{tau/2}(11' + Gamma(a)), Gamma = D K D / (4 eta) (Lemma 1)."""
    d = a * y
    M = 1.0 + BREAK["gamma_sign"] * np.outer(d, d) * K / (4.0 * eta)
    if tau == 0:
        return M
    lam, U = np.linalg.eigh(M)
    return (U * np.maximum(lam - BREAK["threshold"] * tau, 0.0)) @ U.T


def _h(a, y, K, eta, tau):
    """h(a) = 1'a + eta (n^2 - ||F(a)||_F^2) and its gradient 1 - Y (F o K) Y a (eq. (26))."""
    F = _F(a, y, K, eta, tau)
    return a.sum() + eta * (y.size ** 2 - np.sum(F * F)), 1.0 - y * ((F * K) @ (a * y))


def _project(z, y, ub=1.0):
    """Euclidean projection onto {y'a = 0, 0 <= a <= ub}: bisection on the shift (``ub`` 1, or
    per-sample boxes at most 1, docs/MATH.md section 14)."""
    ub = np.broadcast_to(ub, z.shape)
    lo, hi = -np.abs(z).max() - 2.0, np.abs(z).max() + 2.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if y @ np.clip(z - mid * y, 0.0, ub) > 0:
            lo = mid
        else:
            hi = mid
    a = np.clip(z - 0.5 * (lo + hi) * y, 0.0, ub)
    free = (a > 0.0) & (a < ub)
    if free.any():  # the exact shift on the free set (y'a = 0 up to rounding)
        lam = (y[free] @ z[free] + (y * ub)[a >= ub].sum()) / free.sum()
        b = np.clip(z - lam * y, 0.0, ub)
        if abs(y @ b) <= abs(y @ a):
            a = b
    return a


def _slsqp(y, K, eta, tau, start, maxiter=1000, ub=1.0):
    a0 = np.where(y > 0, start / max(1, np.sum(y > 0)), start / max(1, np.sum(y < 0)))
    bounds = [(0, u) for u in np.broadcast_to(ub, y.shape)]
    a0 = np.minimum(a0, np.broadcast_to(ub, y.shape))
    s = 1.0 / max(1e-300, abs(_h(a0, y, K, eta, tau)[0]))

    def negh(a):
        v, g = _h(a, y, K, eta, tau)
        return -s * v, -s * g

    r = minimize(negh, a0, jac=True, method="SLSQP", bounds=bounds,
                 constraints=[dict(type="eq", fun=lambda a: y @ a, jac=lambda a: y)],
                 options=dict(ftol=1e-16, maxiter=maxiter))
    return _project(r.x, y, ub)


def _ascend(a, y, K, eta, tau, iters=3000, ub=1.0):
    """Projected gradient ascent with a backtracking step (a polish of the SLSQP point)."""
    v, g = _h(a, y, K, eta, tau)
    t = 1.0
    for _ in range(iters):
        while True:
            b = _project(a + t * g, y, ub)
            vb, gb = _h(b, y, K, eta, tau)
            if vb >= v + np.dot(g, b - a) - np.sum((b - a) ** 2) / (2 * t) or t < 1e-12:
                break
            t *= 0.5
        if np.max(np.abs(b - a)) < 1e-15:
            break
        if vb - v <= 1e-15 * abs(v):
            return b if vb >= v else a
        a, v, g, t = b, vb, gb, min(t * 2.0, 1e6)
    return a


def _fixed_step(a, y, K, eta, tau, iters=5000, ub=1.0):
    """Projected gradient with the fixed step 1/L, L = 2 lambda_max(F o K) (the curvature for a
    large eta): it needs gradients only, which carry no cancellation, whereas the value h loses
    ~u eta n^2 to rounding (1e-8 at eta = 1e6), too much for a value-based line search."""
    F = _F(a, y, K, eta, tau)
    step = 0.5 / max(np.linalg.eigvalsh(F * K)[-1], 1e-300)
    for _ in range(iters):
        b = _project(a + step * _h(a, y, K, eta, tau)[1], y, ub)
        if np.max(np.abs(b - a)) < 1e-15:
            break
        a = b
    return a


def _alpha(inst, maxiter=1000, polish=True):
    """P1 (eq. (4)) on (C K, 1, eta / C): SLSQP from two starts, then projected gradient
    ascent; returns alpha for the original instance (docs/validity.md: a* = C a*(CK, 1, eta/C)).
    Per-sample boxes (a vector C): on (Cm K, C / Cm, eta / Cm), Cm = max C."""
    K, y, C, eta, tau = (inst[k] for k in ("K", "y", "C", "eta", "tau"))
    Cm = float(np.max(C))
    ub = np.asarray(C, dtype=float) / Cm if np.ndim(C) else 1.0
    Ks, etas = Cm * K, eta / Cm
    a = max((_slsqp(y, Ks, etas, tau, s, maxiter, ub) for s in (1.0, 1e-3)),
            key=lambda a: _h(a, y, Ks, etas, tau)[0])
    if polish:
        a = _ascend(a, y, Ks, etas, tau, ub=ub)
        if etas > 1e3:  # the value-based search stalls on rounding: gradients only from here
            a = _fixed_step(a, y, Ks, etas, tau, ub=ub)
    return Cm * a


def correct(inst):
    """A correct P1 solver written from docs/MATH.md alone."""
    return dict(alpha=_alpha(inst), meta="independent: SLSQP + projected gradient")


def gamma_sign(inst):
    """Broken: F = J_{tau/2}(11' - Gamma); submits its F."""
    BREAK["gamma_sign"] = -1.0
    try:
        a = _alpha(inst)
        return dict(alpha=a, F=_F(a, inst["y"], inst["K"], inst["eta"], inst["tau"]))
    finally:
        BREAK["gamma_sign"] = 1.0


def threshold_tau(inst):
    """Broken: thresholds at tau instead of tau/2."""
    BREAK["threshold"] = 1.0
    try:
        return dict(alpha=_alpha(inst))
    finally:
        BREAK["threshold"] = 0.5


def five_iterations(inst):
    """Broken: stops after 5 iterations."""
    return dict(alpha=_alpha(inst, maxiter=5, polish=False))


def raises(inst):
    raise RuntimeError("the solver gave up")


def hangs(inst):
    time.sleep(3600)


def infeasible(inst):
    """Broken: the correct alpha moved by 1e-6 C on one point (y'a = 1e-6 C, not 0)."""
    a = _alpha(inst)
    i = int(np.argmin(np.abs(a - inst["C"] / 2)))
    a[i] += 1e-6 * inst["C"] * (1.0 if a[i] < inst["C"] / 2 else -1.0)
    return dict(alpha=a)


def wrong_bias(inst):
    """Broken: a correct alpha with a bias off by one."""
    return dict(alpha=_alpha(inst), bias=1.0)


def hangs_on_large(inst):
    """Hangs for n > 2, else correct: the kit must kill the worker and start a new one."""
    if inst["y"].size > 2:
        time.sleep(3600)
    return correct(inst)


def crashes(inst):
    """Ends its process without an answer (as a segfault would)."""
    os._exit(3)


def not_a_dict(inst):
    return [0.0] * inst["y"].size


def wrong_shape(inst):
    return dict(alpha=np.zeros(inst["y"].size - 1))


def stops_at_start(inst):
    """Broken: returns its (feasible) starting point, zero, for any task and size; the large
    set's instances arrive without K (tests/test_conformance_large.py)."""
    n = inst["y"].size
    if inst["task"] == "svr":
        return dict(alpha_hat=np.zeros(n), alpha_check=np.zeros(n), meta="zero start")
    return dict(alpha=np.zeros(n), meta="zero start")


def dispatch(inst):
    """The function named in the file ``$DANK_CONFORMANCE_MODE`` (read at each call): one worker
    process serves every variant in the tests."""
    with open(os.environ["DANK_CONFORMANCE_MODE"]) as fh:
        return globals()[fh.read().strip()](inst)
