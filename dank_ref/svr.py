r"""Exact reference solver for P2, DANK in SVR (eq. (22)), as ONE convex program.

Bias constraint: ``1'(ah - ac) = 0`` (the standard epsilon-SVR constraint; the paper prints
``(ah - ac)'y = 0``, see :doc:`docs/MATH.md </MATH>`, section 2).

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
``Gamma = diag(b) K diag(b) / (4 eta)``.

Rescaling: as :func:`dank_ref.solve_svm` (module :mod:`dank_ref.svm`), with ``y`` and ``eps``
unchanged, ``v*(K, C, eta, tau, eps, y) = c v*(cK, C/c, eta/c, tau, eps, y)``, ``b = c b'``.  The
conic program also sees ``y - m 1`` with ``m`` the mid-range of ``y`` (exact: ``1'b = 0`` makes
``b'y`` shift-invariant; only the bias changes, and the certificate recomputes it on the original
``y``).

Every target in the tube: if ``max y - min y <= 2 eps`` then ``ah = ac = 0`` is optimal with a
certified gap of exactly 0 (``b = 0`` gives ``lin = 0`` and zero loss at the mid-range bias).  This
is *detected by the certificate*: ``b = 0`` is certified first and returned at once when its gap is
0, so huge ``epsilon`` never reaches the conic solver.  ``K = 0``: the problem is the linear
program ``max b'y - eps 1'(ah + ac)``, solved exactly by HiGHS (``scipy.optimize.linprog``).

Status policy: as :func:`dank_ref.solve_svm`.
"""

from __future__ import annotations

import time

import cvxpy as cp
import numpy as np
from scipy.optimize import linprog

from . import certificate as cert
from ._result import RefResult, SolverError
from ._threads import single_blas_threaded
from .conic import (
    DEFAULT_SOLVER,
    DEFAULT_TAU,
    SDP_BOX_CAP,
    TIME_LIMIT,
    TOL,
    F_scale,
    cap_box,
    check_options,
    check_size,
    lmi,
    renamed_options,
    sdp_stages,
)
from .polish import polish_svr
from .projection import _project_sum_zero
from .staged import finish, time_left
from .starts import F0_factor, limit_qp, order_candidates
from .validation import (
    box_max,
    check_box,
    check_kernel,
    check_nonnegative,
    check_positive,
    check_range,
    check_targets,
    kernel_scale,
)

__all__ = ["solve_svr", "build_svr_problem"]


def build_svr_problem(K, y, *, C, epsilon, eta, tau, F_scale: float = 1.0):
    """CVXPY program derived in :mod:`dank_ref.svr`; the PSD variable is ``F / F_scale``."""
    n = K.shape[0]
    w = float(F_scale)
    F = cp.Variable((n, n), PSD=True, name="F")
    t = cp.Variable(name="t")
    lam = cp.Variable(name="lam")
    nu_h = cp.Variable(n, nonneg=True, name="nu_h")
    d_h = cp.Variable(n, nonneg=True, name="d_h")
    d_c = cp.Variable(n, nonneg=True, name="d_c")
    p = y - epsilon + nu_h - d_h + lam
    box = C @ (d_h + d_c) if isinstance(C, np.ndarray) else C * cp.sum(d_h + d_c)  # C'(d_h+d_c)
    con = lmi(cp.multiply(F, w * K), p, 2.0 * (t - box), n) >> 0
    obj = t + eta * cp.sum_squares(w * F - 1.0)
    if tau > 0.0:
        obj = obj + (tau * eta * w) * cp.trace(F)
    prob = cp.Problem(cp.Minimize(obj), [con, nu_h <= 2.0 * epsilon + d_h + d_c])
    return prob, con, {"F": F, "lam": lam, "F_scale": w}


def lp_solution_svr(y: np.ndarray, C: float, epsilon: float,
                    time_limit: float = TIME_LIMIT) -> np.ndarray:
    """``b`` maximising ``b'y - eps 1'|b|`` s.t. ``1'b = 0``, ``|b| <= C`` (P2 with ``K = 0``).

    Solved as the LP in ``(ah, ac) / C in [0, 1]^2n`` by HiGHS; a vertex, so exact up to the
    LP's rounding.  A vector box ``C``: the same LP in ``(ah_i, ac_i) / C_i`` (costs and the
    equality weighted by ``C_i``).
    """

    n = y.size
    w = np.concatenate([C, C]) if isinstance(C, np.ndarray) else np.ones(2 * n)
    cost = -np.concatenate([y - epsilon, -y - epsilon]) * w
    A_eq = (np.concatenate([np.ones(n), -np.ones(n)]) * w)[None, :]
    res = linprog(cost, A_eq=A_eq, b_eq=[0.0], bounds=[(0.0, 1.0)] * (2 * n), method="highs",
                  options={"time_limit": float(time_limit)})
    if res.status != 0 or res.x is None:
        raise SolverError(f"linear program for K = 0 failed: {res.message}")
    x = np.clip(res.x, 0.0, 1.0)
    return C * x[:n] - C * x[n:]


@single_blas_threaded
def solve_svr(K, y, *, C, epsilon, eta, tau=DEFAULT_TAU, solver: str = DEFAULT_SOLVER,
              eps: float = 1e-8, polish: bool = True, verbose: bool = False, tol: float = TOL,
              memory_limit: float | None = None, max_iter: int | None = None,
              time_limit: float = TIME_LIMIT, strategy: str = "auto",
              certify_tol: float | None = None, max_iters: int | None = None) -> RefResult:
    """Solve P2, DANK in SVR, exactly as one SDP and certify the result independently.

    P2 is eq. (22) with the bias constraint ``1'(ah - ac) = 0`` (:doc:`docs/MATH.md </MATH>` section
    2). The SDP has the PSD blocks of P1's (``F`` n x n and an (n+1) x (n+1) LMI) and O(n) scalar
    multipliers more, so it costs about as much as :func:`dank_ref.solve_svm` on the same n (SCS:
    O(n^2) memory; Clarabel: :func:`estimate_memory_bytes`). Every target in the tube
    (``max y - min y <= 2 epsilon``) needs no conic solve: ``ah = ac = 0`` is certified with gap 0.

    Parameters
    ----------
    K : array_like, shape (n, n)
        PSD kernel, as in :func:`dank_ref.solve_svm`.
    y : array_like, shape (n,)
        Finite real targets.
    C : float or array_like of shape (n,)
        ``> 0``: the box ``0 <= ah, ac <= C``, or per-sample boxes ``0 <= ah_i, ac_i <= C_i``;
        ``(C_i, eta, max|K|, n)`` must lie in the representable range for every ``i``.
    epsilon : float
        Insensitivity width ``>= 0``.
    eta : float
        ``> 0``, the weight of the kernel-learning regulariser.
    tau, solver, eps, polish, verbose, tol, memory_limit, max_iter, time_limit, strategy, \
certify_tol, max_iters
        As in :func:`dank_ref.solve_svm` (default ``tau = 0.01``, solver SCS, 300 s for the
        whole solve, strategy ``"auto"``: loose conic solve, polish, escalate only if needed).

    Returns
    -------
    RefResult
        ``alpha = b = ah - ac``, ``alpha_hat``, ``alpha_check`` (``min(ah_i, ac_i) = 0``: the
        polished/recovered split), ``bias`` (``f = (F o K) b + bias``) and the certificate of
        exactly that ``(alpha_hat, alpha_check)``.  ``status="converged"`` iff it is feasible and
        ``rel_gap <= tol``, with P2's relative gap of
        :func:`dank_ref.certificate.svr_gap_scale` (in the objective's units,
        :doc:`docs/MATH.md </MATH>`).

    Raises
    ------
    TypeError, ValueError
        Invalid input (:doc:`docs/validity.md </validity>`), out of representable range, or too
        large ``n`` (as :func:`dank_ref.solve_svm`).
    SolverError
        The conic solver failed.

    Warns
    -----
    ConvergenceWarning
        When the result cannot be certified (``status`` ``"time_limit"``, ``"max_iter"`` or
        ``"stalled"``; :class:`dank_ref.ConvergenceWarning`, a subclass of scikit-learn's).
    DeprecationWarning
        ``certify_tol`` and ``max_iters``, the previous names of ``tol`` and ``max_iter``.

    Examples
    --------
    >>> import numpy as np
    >>> from dank_ref import solve_svr
    >>> K = np.array([[1.0, 0.5], [0.5, 1.0]])
    >>> res = solve_svr(K, np.array([0.0, 1.0]), C=1.0, epsilon=0.1, eta=1.0)
    >>> res.status, bool(res.rel_gap <= 1e-6), res.alpha_hat.shape
    ('converged', True, (2,))
    """
    t0 = time.perf_counter()
    K = check_kernel(K)
    n = K.shape[0]
    y = check_targets(y, n)
    C = check_box(C, n)
    epsilon = check_nonnegative(epsilon, "epsilon")
    eta = check_positive(eta, "eta")
    tau = check_nonnegative(tau, "tau")
    tol, max_iter = renamed_options(tol, max_iter, certify_tol, max_iters)
    opt = check_options(solver=solver, eps=eps, polish=polish, verbose=verbose, tol=tol,
                        memory_limit=memory_limit, max_iter=max_iter, time_limit=time_limit,
                        strategy=strategy)
    s = kernel_scale(K)
    check_range(C, eta, s, n)
    check_size(n, opt["solver"], opt["memory_limit"])

    def final_of_b(b):
        return cert.svr_certificate(K, y, np.maximum(b, 0.0), np.maximum(-b, 0.0), C=C,
                                    epsilon=epsilon, eta=eta, tau=tau, validate=False)

    c = cert.frame_scale(box_max(C), eta, s)
    Kf, Cf, etaf = K * c, C / c, eta / c
    Cm = box_max(Cf)
    extra = {"frame_scale": c, "time_limit": opt["time_limit"], "strategy": opt["strategy"]}

    stats: dict = {"time_limit": opt["time_limit"], "time_limit_hit": False}
    zero = final_of_b(np.zeros(n))
    if zero.gap == 0.0:  # every target fits the tube: a* = 0, certified exactly
        stats["cvxpy_status"] = ("not run (b = 0 certified with gap 0: every target fits the "
                                 "epsilon-tube)")
        return finish(kind="P2 (SVR)", candidates=[("zero", lambda: np.zeros(n))],
                      certify=lambda b: zero, polisher=None, opt={**opt, "polish": False},
                      stats=stats, t0=t0, final=lambda cf: zero, extra=extra)

    if s == 0.0:
        stats["cvxpy_status"] = "not run (K = 0: linear program solved by HiGHS)"
        candidates = [("lp", lambda: lp_solution_svr(y, Cf, epsilon, opt["time_limit"]))]
    else:
        w = F_scale(Cm, etaf, s * c)
        extra["F_scale"] = w
        yc = y - (0.5 * float(np.max(y)) + 0.5 * float(np.min(y)))

        def limit():
            G = F0_factor(n, tau) * Kf
            lin = np.concatenate([yc - epsilon, -yc - epsilon])
            return limit_qp(G, lin, None, cap_box(Cf, SDP_BOX_CAP),
                            time_limit=time_left(opt["deadline"]), pair=True)

        first, later = sdp_stages(
            lambda: build_svr_problem(Kf, yc, C=cap_box(Cf, SDP_BOX_CAP), epsilon=epsilon, eta=etaf,
                                      tau=tau, F_scale=w), opt, n, stats, {}, c)
        candidates = order_candidates(first + [("limit_qp", limit)], Cm, etaf, s * c,
                                      opt["staged"]) + later

    def certify(b):
        # the solver returns feasible points with min(ah_i, ac_i) = 0: project b (a no-op if
        # already feasible), then split
        b = _project_sum_zero(np.asarray(b, float), Cf)
        return cert.svr_certificate(Kf, y, np.maximum(b, 0.0), np.maximum(-b, 0.0), C=Cf,
                                    epsilon=epsilon, eta=etaf, tau=tau, validate=False)

    def polisher(b, score, deadline, merit=None):
        return polish_svr(Kf, y, b, C=Cf, epsilon=epsilon, eta=etaf, tau=tau, score=score,
                          validate=False, deadline=deadline, merit=merit)

    def final(cf):
        return cert.svr_certificate(K, y, c * cf.alpha_hat, c * cf.alpha_check, C=C,
                                    epsilon=epsilon, eta=eta, tau=tau, validate=False)

    return finish(kind="P2 (SVR)", candidates=candidates, certify=certify, polisher=polisher,
                  opt=opt, stats=stats, t0=t0, final=final, extra=extra)
