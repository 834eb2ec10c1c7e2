r"""The conic engine shared by P1, P2 and P3: options, the conic solvers, the SDP stages.

* the options every ``solve_*`` shares (:func:`check_options`, :func:`renamed_options` for
  the names of the previous release), their defaults (:data:`TOL`, :data:`TIME_LIMIT`,
  :data:`DEFAULT_TAU`, ...) and the memory estimate that refuses too large ``n`` before any
  problem is built (:func:`estimate_memory_bytes`, :func:`check_size`);
* one conic solve through CVXPY with a finite time limit (:func:`solver_kwargs`,
  :func:`run_conic`), the LMI ``[[Q, v], [v', corner]]`` and the recovery of the dual vector
  from its multiplier (:func:`lmi`, :func:`dual_vector`), the scale of ``F`` in the solver's
  frame (:func:`F_scale`);
* the SDP stages of the staged strategy (:mod:`dank_ref.staged`): which conic solver runs at
  which tolerance in which order (:func:`stage_plan`, from Clarabel's time model
  :func:`predicted_sdp_seconds` and :func:`stage_budget`), and the producer of one stage's
  candidate (:func:`sdp_producer`, :func:`sdp_stages`).

The problem-specific programs are built in :mod:`dank_ref.svm` (P1, P3) and
:mod:`dank_ref.svr` (P2).

``tol`` is the certified relative-gap target (the name shared with ``dank_fast``); ``eps`` is
the conic solver's own tolerance and exists only in dank_ref
(:doc:`docs/conventions.md </conventions>`).
"""

from __future__ import annotations

import math
import time
import warnings

import cvxpy as cp
import numpy as np

from ._result import SolverError
from .staged import LOOSE_EPS, MIN_FIRST_STAGE, STRATEGIES, time_left
from .validation import (
    check_bool,
    check_iterations,
    check_positive,
    check_time_limit,
    check_tolerance,
)

__all__ = ["DEFAULT_SOLVER", "SOLVERS", "DEFAULT_TAU", "TOL", "TIME_LIMIT", "MEMORY_LIMIT_BYTES",
           "SDP_BOX_CAP", "estimate_memory_bytes", "check_size", "check_options",
           "renamed_options", "solver_kwargs", "run_conic", "lmi", "dual_vector", "F_scale",
           "predicted_sdp_seconds", "stage_budget", "stage_plan", "sdp_producer", "sdp_stages"]

#: The conic solver used by default: SCS (first order, O(n^2) memory).
DEFAULT_SOLVER = "SCS"
#: The conic solvers dank_ref can use.
SOLVERS = ("SCS", "CLARABEL")
#: Default nuclear-norm weight ``tau``, dank_fast's default (swapping the import keeps the
#: problem).
DEFAULT_TAU = 0.01
#: Default ``time_limit`` in seconds for a whole solve (always finite).
TIME_LIMIT = 300.0
#: Default ``memory_limit`` in bytes (8 GiB): a solve whose :func:`estimate_memory_bytes`
#: exceeds it is refused before the problem is built.
MEMORY_LIMIT_BYTES = 8 * 2**30
#: Default certified relative-gap target ``tol``, dank_fast's default.
TOL = 1e-6
# Clarabel's loose SDP time model (predicted_sdp_seconds) and the cap of a non-final stage
CLARABEL_SECONDS_AT_60 = 18.0
CLARABEL_EXPONENT = 5.5
FAST_STAGE = 10.0  # seconds: a stage predicted slower never runs before a faster one
STAGE_BUDGET_FACTOR = 3.0
ITERATIONS_PER_SDP = 20  # Clarabel: 18-23 iterations measured at eps 1e-4 (n = 20 .. 60)
# In the solver frame a* = O(1); the SDP's box is capped here (a huge C only worsens its
# conditioning).  Only a starting point: polishing and the certificate use the true box.
SDP_BOX_CAP = 2.0**20

# CVXPY statuses that are a failure (SolverError): no usable point
FAIL_STATUSES = {None, cp.INFEASIBLE, cp.UNBOUNDED, cp.INFEASIBLE_INACCURATE,
                 cp.UNBOUNDED_INACCURATE, "infeasible_or_unbounded", "solver_error"}


def estimate_memory_bytes(n: int, solver: str = DEFAULT_SOLVER) -> int:
    """Estimate the peak memory in bytes of the conic solve of a problem with n points.

    Interior-point solvers (CLARABEL) build a KKT system whose two PSD-cone blocks
    (F: ``m1 = n(n+1)/2``, LMI: ``m2 = (n+1)(n+2)/2``) are dense: ``~ 8 (m1^2 + m2^2)`` bytes for
    the matrix, plus factor and workspaces: factor 6 overall, calibrated on the
    measured peak RSS (~400 MB above the Python baseline at n = 60), i.e. ~n^4 growth: the
    8 GiB default limit admits n <= ~135 with CLARABEL.  SCS (first order)
    stores the sparse ``A`` (``~ 3 n^2`` non-zeros for ``F o K`` and the Frobenius term) and dense
    ``n x n`` eigen-workspaces: ``~ 8 * 40 n^2`` bytes.  Solves whose estimate exceeds
    ``memory_limit`` (default :data:`MEMORY_LIMIT_BYTES`) are refused before building.

    Parameters
    ----------
    n : int
        The number of points (P2: the number of targets).
    solver : {"SCS", "CLARABEL"}, default "SCS"
        The conic solver (case-insensitive); any other name is estimated as Clarabel.

    Returns
    -------
    int
        The estimated peak in bytes, including ~50 MB of fixed overhead.

    Examples
    --------
    >>> from dank_ref import estimate_memory_bytes
    >>> estimate_memory_bytes(100, "SCS") / 2**20 < 100
    True
    >>> estimate_memory_bytes(135, "CLARABEL") < 8 * 2**30 < estimate_memory_bytes(140, "CLARABEL")
    True
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


def check_options(*, solver: str = DEFAULT_SOLVER, eps: float = 1e-8, polish: bool = True,
                  verbose: bool = False, tol: float = TOL, memory_limit: float | None = None,
                  max_iter: int | None = None, time_limit: float = TIME_LIMIT,
                  strategy: str = "auto") -> dict:
    """Validate the options shared by every ``solve_*`` (``TypeError``/``ValueError``).

    The defaults are those of :func:`dank_ref.solve_svm`.  The returned dict also holds
    ``staged`` (the staged strategy runs: ``strategy="auto"`` with the polisher) and
    ``deadline`` (``time.perf_counter()`` + ``time_limit``): the whole solve, every stage
    included, ends by then (:mod:`dank_ref.staged`).
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
        tol=check_tolerance(tol, "tol"),
        memory_limit=(None if memory_limit is None
                      else check_positive(memory_limit, "memory_limit")),
        max_iter=check_iterations(max_iter, "max_iter"),
        time_limit=limit,
        strategy=strategy,
        # the loose solve relies on the polisher for its digits: without it, "auto" is "tight"
        staged=strategy == "auto" and bool(polish),
        deadline=time.perf_counter() + limit,
    )


def renamed_options(tol: float, max_iter: int | None, certify_tol: float | None,
                    max_iters: int | None) -> tuple[float, int | None]:
    """``(tol, max_iter)`` from the current and the previous release's names.

    ``certify_tol`` (now ``tol``) and ``max_iters`` (now ``max_iter``) still work for one
    release: each emits a :class:`DeprecationWarning` (attributed to the caller of
    ``solve_*``).  Passing both names of one option is a ``TypeError``.
    """
    for old, old_name, new, new_default, new_name in (
            (certify_tol, "certify_tol", tol, TOL, "tol"),
            (max_iters, "max_iters", max_iter, None, "max_iter")):
        if old is None:
            continue
        if new != new_default:
            raise TypeError(f"pass {new_name} only ({old_name} is its deprecated name)")
        # stacklevel 4: this function, solve_*, the BLAS-thread wrapper, the caller
        warnings.warn(f"{old_name} is deprecated and will be removed in the next release; "
                      f"use {new_name}", DeprecationWarning, stacklevel=4)
    return (tol if certify_tol is None else certify_tol,
            max_iter if max_iters is None else max_iters)


def solver_kwargs(solver: str, eps: float, max_iter: int | None,
                  time_limit: float = TIME_LIMIT) -> dict:
    """Keyword arguments for CVXPY's ``solve``; a finite time limit is always passed."""
    s = str(solver).upper()
    if s == "SCS":
        return {"eps_abs": eps, "eps_rel": eps, "max_iters": max_iter or 200_000,
                "time_limit_secs": float(time_limit)}
    if s == "CLARABEL":
        return {"tol_gap_abs": eps, "tol_gap_rel": eps, "tol_feas": eps, "tol_ktratio": 1e-6,
                "max_iter": max_iter or 400, "time_limit": float(time_limit)}
    raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")


def run_conic(prob: cp.Problem, solver: str, eps: float, verbose: bool,
              max_iter: int | None = None,
              time_limit: float = TIME_LIMIT, warm_start: bool = False):
    """Solve ``prob`` within ``time_limit`` seconds; raise :class:`SolverError` on failure.

    ``warm_start=True`` lets CVXPY hand the previous solution of ``prob`` to the solver (SCS
    starts from it; used when the loose solution is re-solved tightly).  Returns a stats dict;
    ``stats['time_limit_hit']`` tells whether the solver stopped on the time limit (its iterate
    is then used like an inaccurate solution).
    """
    kw = solver_kwargs(solver, eps, max_iter, time_limit)
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
    if status in FAIL_STATUSES:
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


def cap_box(C, cap: float):
    """The box ``min(C, cap)`` of a starting point's program (entrywise for a vector box)."""
    return np.minimum(C, cap) if isinstance(C, np.ndarray) else min(C, cap)


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
            st = run_conic(prob, solver, eps, opt["verbose"], opt["max_iter"], left, warm)
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


def stage_plan(n: int, opt: dict) -> list[tuple[str, str, float, float, float]]:
    """The SDP stages of ``opt['strategy']`` in order: ``(tag, solver, eps, share, budget)``.

    ``"auto"`` (``opt['staged']``): ``sdp`` -- the requested solver at
    ``loose = max(eps, 1e-4)`` --, then the escalation: ``sdp_switch`` (the other conic solver
    at ``loose``, if its memory estimate admits ``n``) and ``sdp_tight`` (the first stage's
    solver at ``eps``, if tighter).  A solver predicted slow (:func:`predicted_sdp_seconds`
    above ``FAST_STAGE``: Clarabel beyond n ~ 57) never goes before a fast one: if the
    requested solver is the slow one, the other runs first (the result says which solver
    produced the certified point, ``solver_stats['certified_solver']``) and the slow stages
    go last.  Every stage but the last gets ``share = 0.5`` of the time left and at most
    ``budget = stage_budget(n, solver)`` seconds; the last gets all the time left.
    ``"tight"`` (and ``"auto"`` with ``polish=False``, which has no polisher to give the
    digits): one stage, the requested solver at ``eps``.  ``opt`` is from
    :func:`check_options`.
    """
    if not opt["staged"]:
        return [("sdp", opt["solver"], opt["eps"], 1.0, math.inf)]
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
    last = len(plan) - 1
    return [(tag, solver, eps, 1.0 if k == last else 0.5,
             math.inf if k == last else stage_budget(n, solver))
            for k, (tag, solver, eps) in enumerate(plan)]


def sdp_stages(build, opt: dict, n: int, stats: dict, holder: dict,
               value_scale: float = 1.0) -> tuple[list, list]:
    """The stages of :func:`stage_plan` as ``(tag, producer)`` pairs: ``(first, escalation)``.

    ``build()`` returns ``(problem, LMI constraint, variables)`` (built once, shared by every
    stage: :func:`sdp_producer`).
    """
    stages = [(tag, sdp_producer(build, opt, n, stats, holder, value_scale, tag=tag,
                                 solver=solver, eps=eps, share=share, budget=budget))
              for tag, solver, eps, share, budget in stage_plan(n, opt)]
    return stages[:1], stages[1:]
