r"""Exact reference solver for P1, DANK in SVM (eq. mainrank), as ONE convex program.

Derivation of the conic form (Lanckriet et al. 2004 style)
----------------------------------------------------------
Strong duality (eq. mainrank is convex-concave, Slater holds) gives
``v* = min_{F PSD} g(F)``, ``g(F) = R(F) + max_{a in A} 1'a - 1/2 a'Q a`` with
``Q = Y (F o K) Y = F o (yy' o K)`` (PSD by the Schur product theorem) and
``R(F) = eta ||F - 11'||_F^2 + tau eta tr F``.  Dualise the inner SVM: with multipliers
``lam`` (free) for ``y'a = 0``, ``nu >= 0`` for ``a >= 0`` and ``delta >= 0`` for ``a <= C``,

    L = 1'a - 1/2 a'Qa + lam y'a + nu'a + delta'(C1 - a) = v'a - 1/2 a'Qa + C 1'delta,
    v = 1 + nu - delta + lam y.

``max_a L`` is finite iff ``v`` lies in range(Q), and then equals ``1/2 v'Q^+ v + C 1'delta``.
So ``g(F) = R(F) + min { t : t >= 1/2 v'Q^+ v + C 1'delta }`` and, by the generalised Schur
complement (``Q`` PSD, ``v in range(Q)``, ``s >= v'Q^+ v``  <=>  ``[[Q, v], [v', s]] PSD``),

    v* = min_{F PSD, t, lam, nu >= 0, delta >= 0}  t + R(F)
         s.t.  [[ F o (yy' o K),  v ], [ v',  2 (t - C 1'delta) ]]  PSD.

This is the form of ``docs/MATH.md`` (section 4); it is checked numerically in the tests (SDP
value = closed-form ``h(a*)``, and = sklearn's SVM as ``eta -> inf``).

Recovering ``a*`` and the bias
------------------------------
Let ``Z = [[Z11, z], [z', zeta]] PSD`` be the multiplier of the LMI.  Stationarity in ``t`` gives
``2 zeta = 1``.  Plugging ``Z = zeta [a; -1][a; -1]'`` into ``<Z, LMI>`` reproduces exactly the
SVM Lagrangian above (``zeta (a'Qa - 2 a'v + 2(t - C1'delta))``), so the primal SVM variable is
``a* = -z / zeta`` (CVXPY's sign convention: ``constraint.dual_value`` is the PSD ``Z``; verified
numerically against the closed form ``h``).  From ``Q a = v`` on free support vectors,
``(Qa)_i = 1 + lam y_i``, i.e. ``y_i (sum_j a_j y_j G_ij - lam) = 1``: the bias of
``f = sum_j a_j y_j G(x_j, x) + b`` is ``b = -lam`` (kept in ``solver_stats['bias_dual']``).  The
reported ``bias`` is the exact minimiser of the certificate's piecewise-linear hinge sum at the
final ``a`` (same value when the solution is non-degenerate).

Status policy
-------------
* CVXPY status ``infeasible``/``unbounded``/``*_inaccurate`` infeasibility/``None``, or a solver
  exception -> :class:`dank_ref.SolverError` (message contains the CVXPY status).
* Otherwise ``a*`` is recovered, optionally polished (:mod:`dank_ref.polish`, kept only if the
  certificate gap decreases) and certified by :mod:`dank_ref.certificate`.  ``status="optimal"``
  iff ``rel_gap <= certify_tol`` (default ``1e-6``); otherwise ``status="inaccurate"`` and a
  :class:`dank_ref.InaccurateSolutionWarning` is emitted (this covers CVXPY's
  ``optimal_inaccurate``, unless polishing certified the point).
"""

from __future__ import annotations

import time
import warnings

import cvxpy as cp
import numpy as np

from . import certificate as cert
from ._result import InaccurateSolutionWarning, RefResult, SolverError
from ._validation import (
    check_binary_labels,
    check_kernel,
    check_nonnegative,
    check_positive,
)
from .polish import polish_svm

__all__ = ["solve_svm", "estimate_memory_bytes", "MEMORY_LIMIT_BYTES", "DEFAULT_SOLVER"]

DEFAULT_SOLVER = "SCS"
MEMORY_LIMIT_BYTES = 8 * 2**30
CERTIFY_TOL = 1e-6

_FAIL = {None, cp.INFEASIBLE, cp.UNBOUNDED, cp.INFEASIBLE_INACCURATE, cp.UNBOUNDED_INACCURATE,
         "infeasible_or_unbounded", "solver_error"}


def estimate_memory_bytes(n: int, solver: str = DEFAULT_SOLVER) -> int:
    """Rough peak memory of the conic solve of the n x n problem (bytes).

    Interior-point solvers (CLARABEL, CVXOPT, MOSEK) build a KKT system whose two PSD-cone blocks
    (F: ``m1 = n(n+1)/2``, LMI: ``m2 = (n+1)(n+2)/2``) are dense: ``~ 8 (m1^2 + m2^2)`` bytes for
    the matrix, plus factor and workspaces: factor 6 overall, calibrated on the
    measured peak RSS (~400 MB above the Python baseline at n = 60), i.e. ~n^4 growth: the
    8 GiB default limit admits n <= ~135 with CLARABEL.  SCS (first order)
    stores the sparse ``A`` (``~ 3 n^2`` non-zeros for ``F o K`` and the Frobenius term) and dense
    ``n x n`` eigen-workspaces: ``~ 8 * 40 n^2`` bytes.
    """
    n = int(n)
    if str(solver).upper() == "SCS":
        return int(8 * 40 * n * n + 50e6)
    m1 = n * (n + 1) // 2
    m2 = (n + 1) * (n + 2) // 2
    return int(8 * 6 * (m1 * m1 + m2 * m2) + 50e6)


def check_size(n: int, solver: str, memory_limit: float | None) -> None:
    """Refuse (``ValueError``) before building the problem if it would not fit in memory."""
    limit = MEMORY_LIMIT_BYTES if memory_limit is None else float(memory_limit)
    est = estimate_memory_bytes(n, solver)
    if est > limit:
        raise ValueError(
            f"n = {n} is too large for the reference conic solver {solver}: estimated "
            f"{est / 2**30:.1f} GiB > limit {limit / 2**30:.1f} GiB (the KKT system of an "
            "interior-point method grows like n^4). Use dank_fast, a smaller n, or solver='SCS'."
        )


def solver_kwargs(solver: str, eps: float, max_iters: int | None) -> dict:
    s = str(solver).upper()
    if s == "SCS":
        kw = {"eps_abs": eps, "eps_rel": eps, "max_iters": max_iters or 200_000}
    elif s == "CLARABEL":
        kw = {"tol_gap_abs": eps, "tol_gap_rel": eps, "tol_feas": eps, "tol_ktratio": 1e-6,
              "max_iter": max_iters or 400}
    else:
        kw = {}
    return kw


def run_conic(prob: cp.Problem, solver: str, eps: float, verbose: bool, max_iters=None):
    """Solve ``prob``; raise :class:`SolverError` on failure.  Returns a stats dict."""
    kw = solver_kwargs(solver, eps, max_iters)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            prob.solve(solver=str(solver).upper(), verbose=verbose, **kw)
    except cp.error.SolverError as exc:
        raise SolverError(f"conic solver {solver} failed (cvxpy status: "
                          f"{getattr(prob, 'status', None)}): {exc}") from exc
    wall = time.perf_counter() - t0
    status = prob.status
    stats = {"cvxpy_status": status, "wall_time": wall,
             "cvxpy_warnings": [str(w.message) for w in caught]}
    ss = getattr(prob, "solver_stats", None)
    if ss is not None:
        stats.update({"solve_time": ss.solve_time, "setup_time": ss.setup_time,
                      "iterations": ss.num_iters, "solver_name": ss.solver_name})
    stats["conic_value"] = prob.value
    if status in _FAIL:
        raise SolverError(f"conic solver {solver} returned cvxpy status {status!r}")
    return stats


def lmi(Q, v, corner, n: int):
    """``[[Q, v], [v', corner]]`` as a CVXPY expression (symmetric by construction)."""
    vc = cp.reshape(v, (n, 1), order="F")
    return cp.bmat([[Q, vc], [vc.T, cp.reshape(corner, (1, 1), order="F")]])


def dual_vector(con, n: int) -> tuple[np.ndarray, float]:
    """``a = -z / zeta`` from the LMI multiplier ``Z = [[.., z], [z', zeta]]``."""
    Z = con.dual_value
    if Z is None:
        raise SolverError("the conic solver returned no dual variable for the LMI")
    Z = np.asarray(Z, float)
    zeta = float(Z[n, n])
    if not np.isfinite(zeta) or zeta <= 0.0:
        raise SolverError(f"invalid LMI multiplier corner zeta = {zeta!r}")
    return -Z[:n, n] / zeta, zeta


def finish(*, kind: str, a_raw, certify, polisher, polish: bool, certify_tol: float, stats: dict,
           solver: str, t0: float, extra: dict | None = None) -> RefResult:
    """Certify (and polish) the recovered vector; build the :class:`RefResult`."""
    c0 = certify(a_raw)
    stats["gap_before_polish"] = c0.gap
    best, polished = c0, False
    if polish and c0.gap > 0.0:
        try:
            x, _, nstep = polisher(c0.alpha, lambda z: certify(z).gap)
            c1 = certify(x)
            stats["polish_steps"] = nstep
            if c1.gap < c0.gap:
                best, polished = c1, True
        except (np.linalg.LinAlgError, ValueError) as exc:  # never fatal
            stats["polish_error"] = repr(exc)
    certified = best.rel_gap <= certify_tol
    status = "optimal" if certified else "inaccurate"
    msg = (f"{kind}: cvxpy status {stats['cvxpy_status']!r}; certified rel_gap "
           f"{best.rel_gap:.3e} ({'<=' if certified else '>'} certify_tol {certify_tol:g})")
    if not certified:
        warnings.warn(InaccurateSolutionWarning(msg), stacklevel=3)
    res = RefResult(
        alpha=best.alpha, bias=best.bias, F=best.F, lower=best.lower, upper=best.upper,
        gap=best.gap, rel_gap=best.rel_gap, status=status, time=time.perf_counter() - t0,
        solver=str(solver).upper(), solver_stats=stats, n_iter=stats.get("iterations"),
        value=best.value, message=msg, alpha_hat=best.alpha_hat, alpha_check=best.alpha_check,
        projection_distance=best.projection_distance, polished=polished,
    )
    if extra:
        res.solver_stats.update(extra)
    return res


def build_svm_problem(K: np.ndarray, y: np.ndarray, *, C: float, eta: float, tau: float,
                      equality: bool = True):
    """CVXPY problem of the exact convex form of ``docs/MATH.md``, section 4 (``equality=False``:
    P3, no ``lam``)."""
    n = K.shape[0]
    F = cp.Variable((n, n), PSD=True, name="F")
    t = cp.Variable(name="t")
    nu = cp.Variable(n, nonneg=True, name="nu")
    delta = cp.Variable(n, nonneg=True, name="delta")
    lam = cp.Variable(name="lam") if equality else None
    v = 1.0 + nu - delta + (lam * y if equality else 0.0)
    Q = cp.multiply(F, np.outer(y, y) * K)
    con = lmi(Q, v, 2.0 * (t - C * cp.sum(delta)), n) >> 0
    obj = t + eta * cp.sum_squares(F - 1.0)
    if tau > 0.0:
        obj = obj + tau * eta * cp.trace(F)
    prob = cp.Problem(cp.Minimize(obj), [con])
    return prob, con, {"F": F, "lam": lam, "t": t}


def solve_svm(K, y, *, C, eta, tau=0.0, solver: str = DEFAULT_SOLVER, eps: float = 1e-8,
              polish: bool = True, verbose: bool = False, certify_tol: float = CERTIFY_TOL,
              memory_limit: float | None = None, max_iters: int | None = None) -> RefResult:
    """Solve P1 (eq. mainrank) exactly as one SDP and certify the result independently.

    Parameters
    ----------
    K : (n, n) PSD kernel;  y : labels in {-1, +1};  C > 0;  eta > 0;  tau >= 0.
    solver : CVXPY conic solver name ("CLARABEL" default, "SCS", ...).
    eps : solver tolerance (SCS ``eps_abs = eps_rel``; Clarabel gap/feasibility tolerances).
    polish : refine ``a*`` by active-set Newton (kept only if the certified gap decreases).
    certify_tol : ``status="optimal"`` iff the certified ``rel_gap <= certify_tol``.
    memory_limit : bytes (default 8 GiB); larger problems are refused with ``ValueError``.

    Raises
    ------
    ValueError for invalid input or too large ``n``; :class:`SolverError` on solver failure.
    Warns :class:`InaccurateSolutionWarning` when the result cannot be certified.
    """
    t0 = time.perf_counter()
    K = check_kernel(K)
    n = K.shape[0]
    y = check_binary_labels(y, n)
    C = check_positive("C", C)
    eta = check_positive("eta", eta)
    tau = check_nonnegative("tau", tau)
    eps = check_positive("eps", eps)
    check_size(n, solver, memory_limit)

    prob, con, var = build_svm_problem(K, y, C=C, eta=eta, tau=tau, equality=True)
    stats = run_conic(prob, solver, eps, verbose, max_iters)
    a_raw, zeta = dual_vector(con, n)
    stats["zeta"] = zeta
    stats["bias_dual"] = -float(var["lam"].value) if var["lam"].value is not None else None

    def certify(a):
        return cert.svm_certificate(K, y, a, C=C, eta=eta, tau=tau, validate=False)

    def polisher(a, score):
        return polish_svm(K, y, a, C=C, eta=eta, tau=tau, equality=True, score=score)

    res = finish(kind="P1 (SVM)", a_raw=a_raw, certify=certify, polisher=polisher, polish=polish,
                 certify_tol=certify_tol, stats=stats, solver=solver, t0=t0)
    Fs = var["F"].value
    if Fs is not None:
        res.solver_stats["max_abs_F_sdp_minus_F_cert"] = float(np.max(np.abs(Fs - res.F)))
    return res
