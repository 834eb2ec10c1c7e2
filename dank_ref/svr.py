r"""Exact reference solver for P2, DANK in SVR (eq. mainsvr), as ONE convex program.

Bias constraint: ``1'(ah - ac) = 0`` (the standard epsilon-SVR constraint; the paper prints
``(ah - ac)'y = 0``, see ``docs/MATH.md``, section 2).

Derivation
----------
For fixed ``F`` let ``G = F o K`` (PSD).  The inner SVR dual is
``max -1/2 b'Gb + b'y - eps 1'(ah + ac)``, ``b = ah - ac``, ``0 <= ah, ac <= C``,
``1'(ah - ac) = 0``.  Multipliers: ``lam`` (free) for the equality, ``nu_h, nu_c >= 0`` for
``ah, ac >= 0``, ``d_h, d_c >= 0`` for ``ah, ac <= C``.  The Lagrangian is
``-1/2 b'Gb + p'ah + q'ac + C 1'(d_h + d_c)`` with ``p = y - eps + nu_h - d_h + lam 1`` and
``q = -y - eps + nu_c - d_c - lam 1``.  Writing ``ah = (s + b)/2``, ``ac = (s - b)/2`` the
Lagrangian is linear in the free direction ``s``, so its maximum is finite only if ``p + q = 0``,
i.e. ``nu_h + nu_c - d_h - d_c = 2 eps 1``; then it equals
``max_b -1/2 b'Gb + p'b = 1/2 p'G^+ p`` (``p in range(G)``).  Eliminating ``nu_c`` (``nu_c =
2 eps + d_h + d_c - nu_h >= 0``) and using the Schur complement as for P1:

    v* = min_{F PSD, t, lam, nu_h, d_h, d_c >= 0}  t + R(F)
         s.t.  [[ F o K, p ], [ p', 2 (t - C 1'(d_h + d_c)) ]]  PSD,
               nu_h <= 2 eps + d_h + d_c,     p = y - eps 1 + nu_h - d_h + lam 1.

Recovery: with the LMI multiplier ``[[., z], [z', zeta]]`` (``zeta = 1/2``), ``b* = -z / zeta``
(same argument as P1: ``zeta [b; -1][b; -1]'`` reproduces the Lagrangian);
``alpha_hat = max(b, 0)``, ``alpha_check = max(-b, 0)`` (optimal split for ``eps >= 0``), then
projected exactly onto the feasible set.  On free ``ah_i``: ``(Gb)_i = y_i - eps + lam``, so
the bias of ``f = G b + beta`` is ``beta = -lam`` (``solver_stats['bias_dual']``); the reported
bias is the certificate's exact minimiser of ``sum_i max(0, |y_i - (Gb)_i - beta| - eps)``.

The lower bound is ``h = b'y - eps 1'(ah + ac) + eta (n^2 - ||F(b)||^2)`` with
``Gamma = diag(b) K diag(b) / (4 eta)``.  Status policy: as :func:`dank_ref.solve_svm`.
"""

from __future__ import annotations

import time

import cvxpy as cp
import numpy as np

from . import certificate as cert
from ._validation import check_kernel, check_nonnegative, check_positive, check_targets
from .polish import polish_svr
from .svm import (
    CERTIFY_TOL,
    DEFAULT_SOLVER,
    check_size,
    dual_vector,
    finish,
    lmi,
    run_conic,
)

__all__ = ["solve_svr", "build_svr_problem"]


def build_svr_problem(K, y, *, C, epsilon, eta, tau):
    n = K.shape[0]
    F = cp.Variable((n, n), PSD=True, name="F")
    t = cp.Variable(name="t")
    lam = cp.Variable(name="lam")
    nu_h = cp.Variable(n, nonneg=True, name="nu_h")
    d_h = cp.Variable(n, nonneg=True, name="d_h")
    d_c = cp.Variable(n, nonneg=True, name="d_c")
    p = y - epsilon + nu_h - d_h + lam
    con = lmi(cp.multiply(F, K), p, 2.0 * (t - C * cp.sum(d_h + d_c)), n) >> 0
    obj = t + eta * cp.sum_squares(F - 1.0)
    if tau > 0.0:
        obj = obj + tau * eta * cp.trace(F)
    prob = cp.Problem(cp.Minimize(obj), [con, nu_h <= 2.0 * epsilon + d_h + d_c])
    return prob, con, {"F": F, "lam": lam}


def solve_svr(K, y, *, C, epsilon, eta, tau=0.0, solver: str = DEFAULT_SOLVER,
              eps: float = 1e-8, polish: bool = True, verbose: bool = False,
              certify_tol: float = CERTIFY_TOL, memory_limit: float | None = None,
              max_iters: int | None = None):
    """Solve P2 (eq. mainsvr with ``1'(ah - ac) = 0``) as one SDP; certify independently.

    Returns a :class:`dank_ref.RefResult` with ``alpha = b = ah - ac``, ``alpha_hat``,
    ``alpha_check``, ``bias`` (``f = (F o K) b + bias``).  Parameters, errors and warnings as in
    :func:`dank_ref.solve_svm`; ``epsilon >= 0`` is the insensitivity width.
    """
    t0 = time.perf_counter()
    K = check_kernel(K)
    n = K.shape[0]
    y = check_targets(y, n)
    C = check_positive("C", C)
    epsilon = check_nonnegative("epsilon", epsilon)
    eta = check_positive("eta", eta)
    tau = check_nonnegative("tau", tau)
    eps = check_positive("eps", eps)
    check_size(n, solver, memory_limit)

    prob, con, var = build_svr_problem(K, y, C=C, epsilon=epsilon, eta=eta, tau=tau)
    stats = run_conic(prob, solver, eps, verbose, max_iters)
    b_raw, zeta = dual_vector(con, n)
    stats["zeta"] = zeta
    stats["bias_dual"] = -float(var["lam"].value) if var["lam"].value is not None else None

    def certify(b):
        return cert.svr_certificate(K, y, np.maximum(b, 0.0), np.maximum(-b, 0.0), C=C,
                                    epsilon=epsilon, eta=eta, tau=tau, validate=False)

    def polisher(b, score):
        return polish_svr(K, y, b, C=C, epsilon=epsilon, eta=eta, tau=tau, score=score)

    return finish(kind="P2 (SVR)", a_raw=b_raw, certify=certify, polisher=polisher,
                  polish=polish, certify_tol=certify_tol, stats=stats, solver=solver, t0=t0)
