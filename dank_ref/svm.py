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
SVM Lagrangian above, so the primal SVM variable is ``a* = -z / zeta`` (CVXPY's sign convention:
``constraint.dual_value`` is the PSD ``Z``; verified numerically against the closed form ``h``).
``b = -lam`` is kept in ``solver_stats['bias_dual']``; the reported ``bias`` is the exact
minimiser of the certificate's hinge sum at the final ``a``.

Rescaling (what the conic solver sees)
--------------------------------------
The conic solver is never handed the raw data.  With ``s = max|K|`` and the exact law of
``docs/validity.md``, ``v*(K, C, eta, tau) = c v*(cK, C/c, eta/c, tau)``, ``a* = c a*'`` (substitute
``a = c a'`` in eq. mainrank; ``F`` and the bias are unchanged), the program is built for
``(cK, C/c, eta/c)`` with ``c`` a power of two near the natural size of ``a*``,
``min(C, 1/s, (16 eta/s^2)^(1/3))`` (:func:`dank_ref.certificate.frame_scale`), so that
``a' = O(1)``, ``max|cK| <= 1`` and ``C/c >= 1``.  In addition ``F = w F'`` with ``w`` a power of
two near ``max(1, max Gamma')`` (``PSD`` is preserved; ``F o K = F' o (wK)``,
``eta ||F - 11'||^2 = eta w^2 ||F' - 11'/w||^2``).  Only one family of laws exists: ``C s`` and
``eta / C`` are invariant, so ``max|K|`` and ``C`` cannot both be normalised to 1.  ``a*'`` is
recovered and polished in that frame and mapped back exactly (``a = c a'``, powers of two); the
returned certificate is computed from the returned ``a`` in the original units.

``K = 0``: ``F(a) = J_{tau/2}(11')`` does not depend on ``a`` and P1 is the linear program
``max 1'a`` over ``A``; its solution is explicit (each class sums to ``C min(n+, n-)``) and no
conic solver runs.

Status policy
-------------
* Input outside ``docs/validity.md`` (including the representable range) -> ``TypeError`` /
  ``ValueError`` before any arithmetic.
* CVXPY status ``infeasible``/``unbounded``/``solver_error``/``None``, or a solver exception ->
  :class:`dank_ref.SolverError` (message contains the CVXPY status).
* Otherwise ``a*`` is recovered, polished (:mod:`dank_ref.polish`, kept only if the certified gap
  decreases) and certified by :mod:`dank_ref.certificate`.  ``status="optimal"`` means: the
  returned ``alpha`` is feasible to ``1e-9 C sqrt(n)`` and its independent certificate has
  ``rel_gap <= certify_tol`` (default ``1e-6``) -- whatever the conic solver said.  Otherwise
  ``status="time_limit"`` (the solve, all its stages, stopped at ``time_limit`` seconds) or
  ``"inaccurate"``, and a :class:`dank_ref.InaccurateSolutionWarning` is emitted.  Which
  stages ran (the staged strategy of :mod:`dank_ref.staged`) is in ``solver_stats["stages"]``.
"""

from __future__ import annotations

import math
import time
import warnings

import cvxpy as cp
import numpy as np

from . import certificate as cert
from ._result import RefResult, SolverError
from ._threads import single_blas_threaded
from .polish import polish_svm
from .projection import _project
from .staged import LOOSE_EPS, MIN_FIRST_STAGE, STRATEGIES, finish, time_left
from .validation import (
    check_binary_labels,
    check_bool,
    check_iterations,
    check_kernel,
    check_nonnegative,
    check_positive,
    check_range,
    check_time_limit,
    check_tolerance,
    kernel_scale,
)

__all__ = ["solve_svm", "estimate_memory_bytes", "MEMORY_LIMIT_BYTES", "DEFAULT_SOLVER",
           "DEFAULT_TAU", "TIME_LIMIT", "SOLVERS", "STRATEGIES", "predicted_sdp_seconds",
           "stage_budget"]

DEFAULT_SOLVER = "SCS"
SOLVERS = ("SCS", "CLARABEL")
DEFAULT_TAU = 0.01  # dank_fast's default: swapping the import keeps the problem
TIME_LIMIT = 300.0
MEMORY_LIMIT_BYTES = 8 * 2**30
SDP_TAGS = ("sdp", "sdp_tight", "sdp_switch")  # the stages whose point is the SDP's
CERTIFY_TOL = 1e-6
# Clarabel's loose SDP time model (predicted_sdp_seconds) and the cap of a non-final stage
CLARABEL_SECONDS_AT_60 = 18.0
CLARABEL_EXPONENT = 5.5
FAST_STAGE = 10.0  # seconds: a stage predicted slower never runs before a faster one
STAGE_BUDGET_FACTOR = 3.0
ITERATIONS_PER_SDP = 20  # Clarabel: 18-23 iterations measured at eps 1e-4 (n = 20 .. 60)
# In the solver frame a* = O(1); the SDP's box is capped here (a huge C only worsens its
# conditioning).  Only a starting point: polishing and the certificate use the true box.
SDP_BOX_CAP = 2.0**20

_FAIL = {None, cp.INFEASIBLE, cp.UNBOUNDED, cp.INFEASIBLE_INACCURATE, cp.UNBOUNDED_INACCURATE,
         "infeasible_or_unbounded", "solver_error"}


def estimate_memory_bytes(n: int, solver: str = DEFAULT_SOLVER) -> int:
    """Rough peak memory of the conic solve of the n x n problem (bytes).

    Interior-point solvers (CLARABEL) build a KKT system whose two PSD-cone blocks
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


def check_options(*, solver, eps, polish, verbose, certify_tol, memory_limit, max_iters,
                  time_limit, strategy: str = "auto") -> dict:
    """Validate the options shared by every ``solve_*`` (``TypeError``/``ValueError``).

    The returned dict also holds ``deadline`` (``time.perf_counter()`` + ``time_limit``): the
    whole solve, every stage included, ends by then (:mod:`dank_ref.staged`).
    """
    if not isinstance(solver, str):
        raise TypeError(f"solver must be a string, got {type(solver).__name__}")
    s = solver.upper()
    if s not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r} (dank_ref passes a "
                         "time limit, which it knows how to do for these two)")
    if not isinstance(strategy, str):
        raise TypeError(f"strategy must be a string, got {type(strategy).__name__}")
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {STRATEGIES}, got {strategy!r}")
    limit = check_time_limit(time_limit)
    return dict(
        solver=s,
        eps=check_tolerance(eps, "eps"),
        polish=check_bool(polish, "polish"),
        verbose=check_bool(verbose, "verbose"),
        certify_tol=check_tolerance(certify_tol, "certify_tol"),
        memory_limit=(None if memory_limit is None
                      else check_positive(memory_limit, "memory_limit")),
        max_iters=check_iterations(max_iters, "max_iters"),
        time_limit=limit,
        strategy=strategy,
        # the loose solve relies on the polisher for its digits: without it, "auto" is "tight"
        staged=strategy == "auto" and bool(polish),
        deadline=time.perf_counter() + limit,
    )


def solver_kwargs(solver: str, eps: float, max_iters: int | None,
                  time_limit: float = TIME_LIMIT) -> dict:
    """Keyword arguments for CVXPY's ``solve``; a finite time limit is always passed."""
    s = str(solver).upper()
    if s == "SCS":
        return {"eps_abs": eps, "eps_rel": eps, "max_iters": max_iters or 200_000,
                "time_limit_secs": float(time_limit)}
    if s == "CLARABEL":
        return {"tol_gap_abs": eps, "tol_gap_rel": eps, "tol_feas": eps, "tol_ktratio": 1e-6,
                "max_iter": max_iters or 400, "time_limit": float(time_limit)}
    raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")


def run_conic(prob: cp.Problem, solver: str, eps: float, verbose: bool, max_iters=None,
              time_limit: float = TIME_LIMIT, warm_start: bool = False):
    """Solve ``prob`` within ``time_limit`` seconds; raise :class:`SolverError` on failure.

    ``warm_start=True`` lets CVXPY hand the previous solution of ``prob`` to the solver (SCS
    starts from it; used when the loose solution is re-solved tightly).  Returns a stats dict;
    ``stats['time_limit_hit']`` tells whether the solver stopped on the time limit (its iterate
    is then used like an inaccurate solution).
    """
    kw = solver_kwargs(solver, eps, max_iters, time_limit)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            prob.solve(solver=str(solver).upper(), verbose=verbose, warm_start=warm_start, **kw)
    except cp.error.SolverError as exc:
        raise SolverError(f"conic solver {solver} failed (cvxpy status: "
                          f"{getattr(prob, 'status', None)}): {exc}") from exc
    wall = time.perf_counter() - t0
    status = prob.status
    stats = {"cvxpy_status": status, "wall_time": wall,
             "cvxpy_warnings": [str(w.message) for w in caught]}
    ss = getattr(prob, "solver_stats", None)
    info = ""
    if ss is not None:
        stats.update({"solve_time": ss.solve_time, "setup_time": ss.setup_time,
                      "iterations": ss.num_iters, "solver_name": ss.solver_name})
        extra = ss.extra_stats if isinstance(ss.extra_stats, dict) else {}
        info = str(extra.get("info", {}).get("status", "")) if isinstance(
            extra.get("info"), dict) else ""
    stats["time_limit_hit"] = bool("time_limit" in info or wall >= 0.97 * time_limit)
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
    if not np.isfinite(zeta) or zeta <= 0.0 or not np.all(np.isfinite(Z[:n, n])):
        raise SolverError(f"invalid LMI multiplier (corner zeta = {zeta!r})")
    return -Z[:n, n] / zeta, zeta


def F_scale(C_f: float, eta_f: float, s_f: float) -> float:
    """Power of two ``w ~ max(1, min(C_f, 1)^2 s_f / (4 eta_f))``: the size of ``Gamma``, a' ~ 1."""
    if s_f <= 0.0:
        return 1.0
    lg = 2.0 * min(math.log2(C_f), 0.0) + math.log2(s_f) - math.log2(eta_f) - 2.0
    return math.ldexp(1.0, int(round(min(max(lg, 0.0), 600.0))))


def sdp_producer(build, opt: dict, n: int, stats: dict, holder: dict, value_scale: float = 1.0,
                 *, tag: str = "sdp", solver: str | None = None, eps: float | None = None,
                 share: float = 1.0, budget: float = math.inf):
    """Producer of the SDP candidate ``a = -z/zeta``; conic stats go into ``stats``.

    The CVXPY problem is built once (``holder['prob']``) and shared by every stage, so a
    re-solve reuses CVXPY's canonicalisation and, with the same solver, warm-starts from the
    previous solution.  The conic solver (default ``opt['solver']``) gets ``share`` of the
    time left before ``opt['deadline']`` (``share < 1`` leaves time for the escalation; the
    first stage gets at least :data:`dank_ref.staged.MIN_FIRST_STAGE`), and at most ``budget``
    seconds (:func:`stage_budget`; a stage stopped by it sets ``stats[tag + '_budget_hit']``,
    not the solve's ``time_limit_hit``).
    ``stats['conic_value']`` is reported in the caller's units (``value_scale = c`` of the
    frame: ``v* = c v*'``); ``stats[tag + '_solver' | '_eps']`` record the stage.
    """
    solver = opt["solver"] if solver is None else solver
    eps = opt["eps"] if eps is None else eps

    def produce():
        left = time_left(opt["deadline"])
        first = "prob" not in holder
        if not first and left <= 0.0:
            raise SolverError(f"stage {tag}: no time left")
        if first:
            holder["prob"], holder["con"], holder["var"] = build()
        prob, con, var = holder["prob"], holder["con"], holder["var"]
        warm = not first and holder.get("last_solver") == solver
        stats[f"{tag}_solver"], stats[f"{tag}_eps"] = solver, eps
        left = max(share * time_left(opt["deadline"]), MIN_FIRST_STAGE if first else 0.0)
        one_iter = predicted_sdp_seconds(n, solver) / ITERATIONS_PER_SDP
        if left <= 0.0 or (not first and left < one_iter):
            # Clarabel checks its time limit once per iteration (seconds each at n = 80): a
            # stage started with less time than one iteration would overrun the deadline
            stats["time_limit_hit"] = True
            stats.setdefault("skipped_stages", []).append(tag)
            raise SolverError(f"stage {tag}: {max(left, 0.0):.2f} s left, less than one "
                              f"iteration of {solver} (~{one_iter:.2f} s)")
        capped = budget < left
        left = min(left, budget)
        holder["last_solver"] = solver
        hit = stats.get("time_limit_hit", False)
        try:
            st = run_conic(prob, solver, eps, opt["verbose"], opt["max_iters"], left, warm)
        finally:
            stats.setdefault("cvxpy_status", getattr(prob, "status", None))
        if st.get("conic_value") is not None:
            st["conic_value"] = value_scale * st["conic_value"]
        stats.update(st)
        stats[f"{tag}_budget_hit"] = capped and st["time_limit_hit"]
        stats["time_limit_hit"] = hit or (st["time_limit_hit"] and not capped)
        a, zeta = dual_vector(con, n)
        stats["zeta"] = zeta
        lam = var.get("lam")
        if lam is not None and lam.value is not None:
            stats["bias_dual"] = -float(lam.value)
        return a

    return produce


def predicted_sdp_seconds(n: int, solver: str) -> float:
    """Predicted wall time of one loose (``eps = 1e-4``) SDP stage on ``n`` points.

    Clarabel: ``18 s (n / 60)^5.5`` -- the dense KKT blocks of the two PSD cones; calibrated on
    2 shared cores at load ~4 (P1 moons and P2 sinc: n = 40: 2-4 s, n = 50: 8.5 s, n = 60:
    17-19 s, 20-23 iterations).  SCS (first order, ``O(n^3)`` per iteration): 0, i.e. never
    the slow one (0.2-0.5 s at n = 60, 1-25 s at n = 100-200).
    """
    if str(solver).upper() == "CLARABEL":
        return CLARABEL_SECONDS_AT_60 * (n / 60.0) ** CLARABEL_EXPONENT
    return 0.0


def stage_budget(n: int, solver: str) -> float:
    """Seconds a conic stage may take when another stage follows it (``inf``: no cap).

    ``max(FAST_STAGE, 3 x predicted)`` for Clarabel, so that a stalled or mispredicted
    interior-point solve (P2 sinc, n = 100: 170 s) cannot eat the time of the escalation; SCS
    stages are not capped (the other solver, Clarabel, is the slower one).
    """
    if str(solver).upper() == "CLARABEL":
        return max(FAST_STAGE, STAGE_BUDGET_FACTOR * predicted_sdp_seconds(n, solver))
    return math.inf


def sdp_stages(build, opt: dict, n: int, stats: dict, holder: dict,
               value_scale: float = 1.0) -> tuple[list, list]:
    """The SDP stages of ``opt['strategy']`` (:mod:`dank_ref.staged`): ``(first, escalation)``.

    ``"auto"``: ``first = [sdp: the requested solver at loose = max(eps, 1e-4)]``,
    ``escalation = [sdp_switch: the other conic solver at loose (if its memory estimate admits
    n), sdp_tight: the first stage's solver at eps (if tighter)]``.  A solver predicted slow
    (:func:`predicted_sdp_seconds` above ``FAST_STAGE``: Clarabel beyond n ~ 57) never goes
    before a fast one: if the requested solver is the slow one, the other runs first (the
    result says which solver produced the certified point, ``solver_stats['certified_solver']``)
    and the slow stages go last.  Every stage but the last gets half of the time left, capped
    by :func:`stage_budget`.  ``"tight"`` (and ``"auto"`` with ``polish=False``, which has no
    polisher to give the digits): ``first = [sdp at eps]`` with the requested solver, no
    escalation.  Each is a ``(tag, producer)`` pair.
    """
    if not opt["staged"]:
        return [("sdp", sdp_producer(build, opt, n, stats, holder, value_scale))], []
    loose = max(opt["eps"], LOOSE_EPS)
    first = opt["solver"]
    other = next(s for s in SOLVERS if s != first)
    limit = MEMORY_LIMIT_BYTES if opt["memory_limit"] is None else opt["memory_limit"]
    has_other = estimate_memory_bytes(n, other) <= limit

    def slow(solver: str) -> bool:
        return predicted_sdp_seconds(n, solver) > FAST_STAGE

    if has_other and slow(first) and not slow(other):
        first, other = other, first
    plan = [("sdp", first, loose)]
    later = [("sdp_switch", other, loose)] if has_other else []
    if loose > opt["eps"]:
        later.append(("sdp_tight", first, opt["eps"]))
    plan += sorted(later, key=lambda st: slow(st[1]))  # stable: fast stages first
    stages = []
    for k, (tag, solver, eps) in enumerate(plan):
        last = k == len(plan) - 1
        stages.append((tag, sdp_producer(
            build, opt, n, stats, holder, value_scale, tag=tag, solver=solver, eps=eps,
            share=1.0 if last else 0.5, budget=math.inf if last else stage_budget(n, solver))))
    return stages[:1], stages[1:]


def order_candidates(candidates: list, Cf: float, etaf: float, s_f: float,
                     cheap_first: bool = False) -> list:
    """Order ``[sdp, limit_qp, ray]`` by the regime: the SDP is well scaled only when ``Gamma``
    at the natural size of ``a`` is moderate (``1e-6 .. 1e6``); otherwise the limit QP
    (``Gamma`` tiny, :func:`is_stiff`) or the ray (``Gamma`` huge) goes first.

    ``cheap_first`` (the staged strategy, :mod:`dank_ref.staged`): in the moderate regime the
    limit QP (a QP in ``n`` variables: milliseconds at n = 100) goes before the SDP; polished,
    it is certified on most instances, and the SDP runs only when it is not.
    """
    by = dict(candidates)
    if is_stiff(Cf, etaf, s_f):
        order = ["limit_qp", "ray", "sdp"]
    elif s_f > 0.0 and (2.0 * min(math.log2(Cf), 0.0) + math.log2(s_f) - math.log2(etaf) - 2.0
                        > math.log2(1e6)):
        order = ["ray", "limit_qp", "sdp"]
    elif cheap_first:
        order = ["limit_qp", "sdp", "ray"]
    else:
        order = ["sdp", "limit_qp", "ray"]
    return [(k, by[k]) for k in order if k in by]


def is_stiff(Cf: float, etaf: float, s_f: float) -> bool:
    """``max Gamma`` at the natural size of ``a`` is below 1e-6: ``F(a*) = F0 + O(1e-6)``.

    Then the ``eta -> inf`` limit QP (:func:`limit_qp`) is tried before the SDP (which is stiff
    there: ``eta ||F - 11'||^2`` dwarfs the SVM part).
    """
    if s_f <= 0.0:
        return True
    lg = 2.0 * min(math.log2(Cf), 0.0) + math.log2(s_f) - math.log2(etaf) - 2.0
    return lg < math.log2(1e-6)


def _limit_qp_once(G: np.ndarray, lin: np.ndarray, eq: np.ndarray | None, C: float, *,
                   time_limit: float, pair: bool = False) -> np.ndarray:
    """Candidate from the ``eta -> inf`` limit: the plain SVM/SVR dual for the fixed kernel ``G``.

    As ``eta`` grows (relative to ``a*^2 max|K|``), ``F(a) -> F0 = J_{tau/2}(11')`` and P1/P2/P3
    tend to the quadratic program for the kernel ``G = F0 o K`` (``= max(n - tau/2, 0)/n K``);
    in that regime the SDP is stiff (``eta ||F - 11'||^2`` dwarfs the SVM part) while this QP is
    well conditioned, and its solution is within ``O(max Gamma)`` of ``a*``.  It is only a
    starting point: it is polished and certified on the true problem like the SDP candidate.
    ``pair=True`` (P2): variables ``(ah, ac)``, objective ``lin'(ah; ac) - 1/2 b'Gb``,
    ``b = ah - ac``; returns ``b``.  Otherwise returns ``a`` (``d = a o eq`` for P1, P3 has
    ``eq = None`` and labels folded into ``G``).  Solved by Clarabel within ``time_limit``.
    """
    n = G.shape[0]
    # G = L L' with L from the eigendecomposition (negative round-off eigenvalues dropped): the
    # quadratic becomes a sum of squares, which Clarabel handles better for singular kernels
    w, V = np.linalg.eigh(0.5 * (G + G.T))
    keep = w > 0.0
    L = V[:, keep] * np.sqrt(w[keep])
    if pair:
        ah = cp.Variable(n, nonneg=True)
        ac = cp.Variable(n, nonneg=True)
        b = ah - ac
        obj = lin[:n] @ ah + lin[n:] @ ac - 0.5 * cp.sum_squares(L.T @ b)
        cons = [ah <= C, ac <= C, cp.sum(b) == 0]
    else:
        a = cp.Variable(n, nonneg=True)
        obj = cp.sum(a) - 0.5 * cp.sum_squares(L.T @ a)
        cons = [a <= C] + ([eq @ a == 0] if eq is not None else [])
    prob = cp.Problem(cp.Maximize(obj), cons)
    t_end = time.perf_counter() + max(time_limit, 1.0)
    tight = dict(tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10, tol_ktratio=1e-8)
    err = None
    for settings in (tight, {}):  # tight tolerances first; Clarabel's defaults if that fails
        left = t_end - time.perf_counter()
        if left <= 0.0:
            break
        try:
            prob.solve(solver="CLARABEL", time_limit=float(left), max_iter=500, **settings)
        except cp.error.SolverError as exc:
            err = f"limit QP failed: {exc}"
            continue
        if prob.status in _FAIL:
            err = f"limit QP returned cvxpy status {prob.status!r}"
            continue
        err = None
        break
    if err is not None:
        raise SolverError(err)
    if pair:
        if ah.value is None:
            raise SolverError("limit QP returned no solution")
        return np.asarray(ah.value - ac.value, float)
    if a.value is None:
        raise SolverError("limit QP returned no solution")
    return np.asarray(a.value, float)


def limit_qp(G: np.ndarray, lin: np.ndarray, eq: np.ndarray | None, C: float, *,
             time_limit: float, pair: bool = False) -> np.ndarray:
    """:func:`_limit_qp_once` with the box capped at ``2^10``, then ``2^20`` (frame units).

    In the solver frame ``a* = O(1)``; a huge box makes the interior-point QP fail on singular
    kernels (a null-space direction is then only bounded by the box).  The larger cap is tried
    when the smaller one fails or binds.  Only a starting point: polishing and the
    certificate use the true box ``C``.
    """
    t_end = time.perf_counter() + max(time_limit, 1.0)
    out, err = None, None
    for cap in (2.0**10, 2.0**20):
        box = min(C, cap)
        try:
            out = _limit_qp_once(G, lin, eq, box, time_limit=t_end - time.perf_counter(),
                                 pair=pair)
        except SolverError as exc:
            err = exc
            if box == C:
                break
            continue
        if box == C or float(np.max(np.abs(out))) < 0.999 * box:
            return out
    if out is not None:
        return out
    raise err if err is not None else SolverError("limit QP: no time left")


def ray_candidate(a0: np.ndarray, lower, t_max: float, n_iter: int = 80) -> np.ndarray:
    """``t* a0`` with ``t*`` maximising the concave ``t -> h(t a0)`` (golden section in log t).

    A third starting point for the regime where ``Gamma`` dominates (tiny ``eta``): there the
    SDP is badly scaled and the ``eta -> inf`` QP is far off, but ``a*`` is close to a multiple
    of the LP solution ``a0``.  ``lower(a)`` is the certified lower bound ``h(a)``.
    """
    lo, hi = math.log(2.0**-60), math.log(t_max)
    g = (math.sqrt(5.0) - 1.0) / 2.0

    def f(lt):
        v = lower(math.exp(lt) * a0)
        return v if math.isfinite(v) else -math.inf

    m1, m2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = f(m1), f(m2)
    for _ in range(n_iter):
        if f1 < f2:
            lo, m1, f1 = m1, m2, f2
            m2 = lo + g * (hi - lo)
            f2 = f(m2)
        else:
            hi, m2, f2 = m2, m1, f1
            m1 = hi - g * (hi - lo)
            f1 = f(m1)
    return math.exp(0.5 * (lo + hi)) * a0


def F0_factor(n: int, tau: float) -> float:
    """``J_{tau/2}(11') = max(n - tau/2, 0)/n 11'``: the inner minimiser at ``a = 0``."""
    return max(n - 0.5 * tau, 0.0) / n


def build_svm_problem(K: np.ndarray, y: np.ndarray, *, C: float, eta: float, tau: float,
                      equality: bool = True, F_scale: float = 1.0):
    """CVXPY problem of the exact convex form of ``docs/MATH.md``, section 4 (``equality=False``:
    P3, no ``lam``).

    The PSD variable is ``F' = F / F_scale`` (exact reparametrisation, see module docstring).
    """
    n = K.shape[0]
    w = float(F_scale)
    F = cp.Variable((n, n), PSD=True, name="F")
    t = cp.Variable(name="t")
    nu = cp.Variable(n, nonneg=True, name="nu")
    delta = cp.Variable(n, nonneg=True, name="delta")
    lam = cp.Variable(name="lam") if equality else None
    v = 1.0 + nu - delta + (lam * y if equality else 0.0)
    Q = cp.multiply(F, w * (np.outer(y, y) * K))
    con = lmi(Q, v, 2.0 * (t - C * cp.sum(delta)), n) >> 0
    obj = t + eta * cp.sum_squares(w * F - 1.0)
    if tau > 0.0:
        obj = obj + (tau * eta * w) * cp.trace(F)
    prob = cp.Problem(cp.Minimize(obj), [con])
    return prob, con, {"F": F, "lam": lam, "t": t, "F_scale": w}


def lp_solution_svm(y: np.ndarray, C: float) -> np.ndarray:
    """Maximiser of ``1'a`` over ``A = {y'a = 0, 0 <= a <= C}``: each class sums to ``C m``,
    ``m = min(n+, n-)`` (the solution of P1 when ``K = 0``)."""
    npos, nneg = int(np.sum(y > 0)), int(np.sum(y < 0))
    m = min(npos, nneg)
    return np.where(y > 0, C * (m / npos), C * (m / nneg))


@single_blas_threaded
def solve_svm(K, y, *, C, eta, tau=DEFAULT_TAU, solver: str = DEFAULT_SOLVER, eps: float = 1e-8,
              polish: bool = True, verbose: bool = False, certify_tol: float = CERTIFY_TOL,
              memory_limit: float | None = None, max_iters: int | None = None,
              time_limit: float = TIME_LIMIT, strategy: str = "auto") -> RefResult:
    """Solve P1 (eq. mainrank) exactly as one SDP and certify the result independently.

    Parameters
    ----------
    K : array_like, shape (n, n)
        PSD kernel (``docs/validity.md``: real dtype, relative symmetry/PSD tolerances,
        ``K = 0`` allowed).
    y : array_like, shape (n,)
        Labels in {-1, +1}, both classes present.
    C, eta : float
        ``> 0``; ``(C, eta, max|K|, n)`` must lie in the representable range.
    tau : float, default 0.01
        Nuclear-norm weight ``>= 0`` (``dank_fast.solve_svm``'s default).
    solver : {"SCS", "CLARABEL"}, default "SCS"
        The conic solver (SCS: first order, O(n^2) memory; Clarabel: interior point).  With
        ``strategy="auto"`` a solver predicted slow (Clarabel beyond n ~ 57) runs after the
        other one, and a Clarabel stage followed by another has a time budget
        (:mod:`dank_ref.staged`); ``solver_stats["certified_solver"]`` names the solver
        whose point was certified.
    eps : float, default 1e-8
        Tightest conic tolerance (SCS ``eps_abs = eps_rel``; Clarabel gap/feasibility
        tolerances): ``strategy="auto"`` solves at ``max(eps, 1e-4)`` first and re-solves at
        ``eps`` only when the certificate asks for it; ``"tight"`` solves at ``eps`` once.
    polish : bool
        Refine ``a*`` by active-set Newton (kept only if the certified gap decreases).
    verbose : bool
        Print one progress line per stage (and the conic solver's log) to stderr.
    certify_tol : float
        ``status="optimal"`` iff the returned ``alpha`` is feasible (``1e-9 C sqrt(n)``) and its
        independently certified ``rel_gap = gap / 1'a <= certify_tol``.
    memory_limit : float, optional
        Bytes (default 8 GiB); larger problems are refused with ``ValueError`` before building.
    max_iters : int, optional
        Iteration limit of the conic solver (``>= 1``).
    time_limit : float, default 300
        Seconds for the whole solve (always finite; :mod:`dank_ref.staged`): every stage gets
        the time left, the polisher stops at the deadline; the best point so far is certified
        and the status is ``"time_limit"`` unless the certificate says ``"optimal"``.
    strategy : {"auto", "tight"}, default "auto"
        ``"auto"``: loose conic solve (``eps = 1e-4``) + dank_ref's own polish and certificate,
        escalating (``eps``, then the other conic solver) only while the certified
        ``rel_gap > certify_tol``; ``"tight"``: the previous behaviour, one conic solve at
        ``eps``.  ``solver_stats["stages"]`` records what ran (solver, eps, times, rel_gap).

    Returns
    -------
    RefResult
        The certificate fields (``lower <= v* <= upper``) are those of the returned ``alpha``, in
        the caller's units (see "Rescaling" in the module docstring).

    Raises
    ------
    TypeError, ValueError
        Invalid input (``docs/validity.md``), out of representable range, or too large ``n``.
    SolverError
        The conic solver failed.

    Warns
    -----
    InaccurateSolutionWarning
        When the result cannot be certified (status ``"inaccurate"`` or ``"time_limit"``).
    """
    t0 = time.perf_counter()
    K = check_kernel(K)
    n = K.shape[0]
    y = check_binary_labels(y, n)
    C = check_positive(C, "C")
    eta = check_positive(eta, "eta")
    tau = check_nonnegative(tau, "tau")
    opt = check_options(solver=solver, eps=eps, polish=polish, verbose=verbose,
                        certify_tol=certify_tol, memory_limit=memory_limit, max_iters=max_iters,
                        time_limit=time_limit, strategy=strategy)
    s = kernel_scale(K)
    check_range(C, eta, s, n)
    check_size(n, opt["solver"], opt["memory_limit"])
    candidates, certify, polisher, final, extra, holder, stats = _svm_plan(K, y, C, eta, tau, s,
                                                                           opt)
    res = finish(kind="P1 (SVM)", candidates=candidates, certify=certify, polisher=polisher,
                 opt=opt, stats=stats, t0=t0, final=final, extra=extra)
    var = holder.get("var")
    if var is not None and var["F"].value is not None and stats.get("candidate") in SDP_TAGS:
        Fs = var["F_scale"] * var["F"].value
        res.solver_stats["max_abs_F_sdp_minus_F_cert"] = float(np.max(np.abs(Fs - res.F)))
    return res


def _svm_plan(K, y, C: float, eta: float, tau: float, s: float, opt: dict):
    """Candidates (in the order of the strategy), certify/polish/final callables of P1."""
    n = K.shape[0]
    c = cert.frame_scale(C, eta, s)
    Kf, Cf, etaf = K * c, C / c, eta / c
    extra = {"frame_scale": c, "time_limit": opt["time_limit"], "strategy": opt["strategy"]}
    stats: dict = {"time_limit": opt["time_limit"], "time_limit_hit": False}
    holder: dict = {}
    if s == 0.0:
        stats["cvxpy_status"] = "not run (K = 0: linear program solved in closed form)"
        candidates = [("lp", lambda: lp_solution_svm(y, Cf))]
    else:
        w = F_scale(Cf, etaf, s * c)
        extra["F_scale"] = w

        def limit():
            G = F0_factor(n, tau) * (np.outer(y, y) * Kf)
            return limit_qp(G, np.ones(n), y, min(Cf, SDP_BOX_CAP),
                            time_limit=time_left(opt["deadline"]))

        first, later = sdp_stages(
            lambda: build_svm_problem(Kf, y, C=min(Cf, SDP_BOX_CAP), eta=etaf, tau=tau,
                                      equality=True, F_scale=w), opt, n, stats, holder, c)

        def ray():
            a0 = lp_solution_svm(y, 1.0)
            return ray_candidate(a0, lambda a: certify(a).lower, min(Cf, SDP_BOX_CAP))

        candidates = order_candidates(first + [("limit_qp", limit), ("ray", ray)],
                                      Cf, etaf, s * c, opt["staged"]) + later

    def certify(a):
        # the solver returns exactly feasible points: project (a no-op if already feasible)
        return cert.svm_certificate(Kf, y, _project(a, y, Cf)[0], C=Cf, eta=etaf, tau=tau,
                                    validate=False)

    def polisher(a, score, deadline, merit=None):
        return polish_svm(Kf, y, a, C=Cf, eta=etaf, tau=tau, equality=True, score=score,
                          validate=False, deadline=deadline, merit=merit)

    def final(cf):
        return cert.svm_certificate(K, y, c * cf.alpha, C=C, eta=eta, tau=tau, validate=False)

    return candidates, certify, polisher, final, extra, holder, stats
