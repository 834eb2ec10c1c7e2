"""A second upper bound for the oracle's dense route: the fixed-``F`` problem near its optimum.

The saddle value satisfies ``v* <= max_{a'} L(F(a), a')`` for the inner minimiser ``F(a)`` at
the submitted point ``a``: the SVM (P1, P3) or SVR (P2) with the fixed kernel ``G = F(a) o K``.
Its primal value at *any* ``(w(a'), b)``, ``w(a') = sum_i d'_i phi_G(x_i)``, bounds that
maximum from above, so

    v* - h(a) <= P_G(w(a'), b) - D_G(a) = q' / 2 + q / 2 + sum_i C_i loss_i(a', b) - lin

(``q = d'Gd``, ``q' = d''Gd'``, ``lin`` the linear part of the dual at ``a``) for every
feasible ``a'`` and bias ``b``. The certificate evaluates it at ``a' = a`` (the primal at the
submitted point, a first-order bound: a gradient of ``1e-6`` on the free coordinates leaves a
gap of that order); here ``a'`` is ``a`` plus one Newton step of the fixed-``F`` dual on the
free coordinates of ``a`` (the active set kept, the equality constraint kept by projection),
solved by conjugate gradients, then put back in the feasible set exactly (box clip and
:mod:`dank_ref.projection`) and given its best bias. No property of the step is trusted: ``a'``
is only a point at which a valid bound is evaluated, and the oracle keeps the smaller bound.

Cost: ``_CG_STEPS + 2`` products with ``G`` restricted to the free set (``O(n^2)`` each, no
``n x n`` array beyond ``G``), against the certificate's ``O(n^3)`` ``eigh``.
"""

from __future__ import annotations

import numpy as np

import dank_ref.certificate as rc
from dank_ref.projection import project_A, project_svr

__all__ = ["fixed_kernel_gap"]

#: conjugate-gradient steps of the Newton system (each one product with G on the free set);
#: the step only has to reach the fixed-F optimum to the oracle's tolerance, 1e-6
_CG_STEPS = 50


def _cg(A, rhs: np.ndarray, proj) -> np.ndarray:
    """Approximate solution of ``A x = rhs`` on the range of the projector ``proj`` by
    projected conjugate gradients (``A`` PSD; stops at a non-positive curvature)."""
    x = np.zeros_like(rhs)
    r = proj(rhs)
    p = r.copy()
    rr = float(r @ r)
    stop = 1e-28 * max(rr, np.finfo(float).tiny)
    for _ in range(_CG_STEPS):
        if rr <= stop:
            break
        Ap = proj(A(p))
        curv = float(p @ Ap)
        if not curv > 0.0:
            break
        step = rr / curv
        x += step * p
        r -= step * Ap
        rr_new = float(r @ r)
        p = r + (rr_new / rr) * p
        rr = rr_new
    return x


def _free(z: np.ndarray, C) -> np.ndarray:
    return np.flatnonzero((z > 1e-12 * C) & (z < C * (1.0 - 1e-12)))


def _on(C, S):
    """The boxes of the coordinates ``S`` (a vector box), or the scalar box itself."""
    return C[S] if isinstance(C, np.ndarray) else C


def _weighted(C, v: np.ndarray) -> float:
    """``sum_i C_i v_i`` (a vector box) or ``C sum_i v_i`` (a scalar box)."""
    return float(C @ v) if isinstance(C, np.ndarray) else C * float(np.sum(v))


def fixed_kernel_gap(G: np.ndarray, d: np.ndarray, y: np.ndarray, C: float, lin: float,
                     task: str, eps: float = 0.0) -> float:
    """Upper bound of ``v* - h(a)`` at the fixed kernel ``G = F(a) o K`` from a Newton step.

    Parameters
    ----------
    G : ndarray of shape (n, n)
        ``F(a) o K`` (P3: ``F(a) o Kbar``).
    d : ndarray of shape (n,)
        ``a o y`` (svm, P3) or ``b = ah - ac`` (svr) at the submitted feasible point.
    y : ndarray of shape (n,)
        Labels (svm, P3) or targets (svr).
    C : float or ndarray of shape (n,)
        The box (scalar or per-sample; the loss is then weighted by ``C_i``).
    lin, eps : float
        The dual's linear part at the point (``1'a``; svr ``b'y - eps 1'(ah + ac)``)
        and the tube width (svr).
    task : {"svm", "svr", "decomposed"}
        The problem (P3 has no bias and no equality constraint).

    Returns
    -------
    float
        ``P_G(w(a'), b*) - D_G(a)`` at the stepped point ``a'`` (module docstring); ``inf``
        when there is nothing to step (no free coordinate).
    """
    g = G @ d
    q = float(d @ g)
    if task == "svr":
        z = np.abs(d)
        sgn = np.sign(d)
        grad = y - eps * sgn - g
        S = _free(z, C)
    else:
        a = d * y
        grad = 1.0 - y * g
        S = _free(a, C)
    if S.size == 0:
        return float("inf")
    GS = G[np.ix_(S, S)]
    if task == "decomposed":
        def proj(v):
            return v
    else:
        u = y[S] if task == "svm" else np.ones(S.size)
        uu = float(u @ u)

        def proj(v):
            return v - u * (float(u @ v) / uu)
    if task == "svr":
        delta = _cg(lambda v: GS @ v, grad[S], proj)
        b = d.copy()
        b[S] += delta
        CS = _on(C, S)
        b[S] = np.where(sgn[S] > 0, np.clip(b[S], 0.0, CS), np.clip(b[S], -CS, 0.0))
        p = project_svr(np.concatenate([np.maximum(b, 0.0), np.maximum(-b, 0.0)]), C)
        d2 = p[: y.size] - p[y.size:]
        g2 = G @ d2
        r = y - g2
        _, closs = rc.weighted_bias(np.concatenate([r + eps, r - eps]),
                                    np.concatenate([np.ones_like(r), -np.ones_like(r)]),
                                    np.concatenate([C, C]) if isinstance(C, np.ndarray) else C)
    else:
        yS = y[S]
        delta = _cg(lambda v: yS * (GS @ (yS * v)), grad[S], proj)
        a2 = a.copy()
        a2[S] = np.clip(a2[S] + delta, 0.0, _on(C, S))
        if task == "svm":
            a2 = project_A(a2, y, C)
        d2 = a2 * y
        g2 = G @ d2
        if task == "svm":
            _, closs = rc.weighted_bias(y - g2, -y, C)
        else:
            closs = _weighted(C, np.maximum(0.0, 1.0 - y * g2))
    q2 = float(d2 @ g2)
    return 0.5 * (q + q2) + closs - lin
