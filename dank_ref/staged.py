r"""The staged solve shared by P1, P2 and P3: candidates, escalation, deadline, progress.

Default strategy (``strategy="auto"``)
--------------------------------------
A conic solve to a *loose* tolerance (``eps = 1e-4``: SCS ``eps_abs = eps_rel``, Clarabel's gap
and feasibility tolerances) only has to land in the basin of the active-set Newton polisher
(:mod:`dank_ref.polish`); the polisher and dank_ref's own certificate
(:mod:`dank_ref.certificate`) then give the digits.  A tight conic tolerance (``eps =
1e-8``) buys nothing the polisher does not already give and costs up to a hundredfold (P1,
moons, n = 100: 137 s of SCS at 1e-8 against 1 s at 1e-4).  The candidates
are tried in order, each polished and certified; the first one whose certified
``rel_gap <= tol`` is returned (else the best one):

1. the regime's candidates in the order of ``dank_ref.starts.order_candidates`` with
   ``cheap_first``: in the moderate regime the ``eta -> inf`` limit QP (``"limit_qp"``, a QP
   in ``n`` variables, milliseconds at n = 100) before the SDP at the loose tolerance
   (``"sdp"``), then the ray (P1, P3);
2. escalation, only when none of those is certified: the SDP with the other conic solver at
   the loose tolerance (``"sdp_switch"``; skipped where its memory estimate refuses ``n``),
   then the first solver at ``eps`` (default ``1e-8``, ``"sdp_tight"``).  Every conic stage
   but the last gets half of the time left, so the escalation always has time to run.

The conic solver asked for is used where it is fast, and no conic stage may hang the solve
while the other solver would finish quickly (``dank_ref.conic.stage_plan``): a solver whose
predicted time (``dank_ref.conic.predicted_sdp_seconds``; Clarabel's interior-point SDP grows
like ``n^5.5``: ~18 s at n = 60, minutes at n = 100, while SCS at the loose tolerance takes
seconds) exceeds ``FAST_STAGE = 10 s`` never runs before a fast one -- ``solver="CLARABEL"``
at n = 100 runs SCS first and Clarabel only as the last escalation -- and a Clarabel stage
followed by another stage stops at its budget (``dank_ref.conic.stage_budget``, at most
``max(10 s, 3 x predicted)``), after which the escalation runs.  The result says which conic
solver produced the certified point (``solver_stats["certified_solver"]``, ``None`` for the
cheap candidates, and the message when it is not the requested one); ``result.solver`` stays
the solver asked for.  ``strategy="tight"`` runs exactly the requested solver.

The polisher's merit far from ``a*`` is dank_ref's certified lower bound ``h`` (ascent), its
score the certified gap; with the exact Hessian of :mod:`dank_ref.hessian` (also for
``tau > 0``) the cheap start is polished to the optimum also on instances far from it (P1,
blobs, 15% positive, ``C = 100``, ``eta = 1000``, ``tau = 1``).

``strategy="tight"``: the SDP solved once at ``eps`` first, then the
other candidates, no escalation; ``"auto"`` with ``polish=False`` is ``"tight"`` (without the
polisher a loose solve has no way to its digits).  Either way every returned point is
certified by dank_ref's own certificate; the conic solver's status is only recorded.

Time limit and progress
-----------------------
``time_limit`` bounds the *whole* solve: every conic stage gets the time that is left (the
first one at least 1 ms, so that some point is always produced), the polisher stops at the
deadline, and stages that find no time left are skipped.  A result that is not certified when
the deadline stopped the escalation has ``status = "time_limit"`` (with a valid, if loose,
certificate of the returned point).  Only the conic solver's problem set-up (CVXPY
canonicalisation, ~1 s at n = 100) cannot be interrupted.  ``verbose=True`` prints one line per
stage (and the conic solver's own iteration log) to stderr.

``solver_stats["stages"]`` records every stage that ran: its name, conic solver and ``eps``
(``None`` for the cheap candidates), the time to produce and to polish it, and the certified
``rel_gap`` after polishing.
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Callable

import numpy as np

from ._result import ConvergenceWarning, RefResult, SolverError

__all__ = ["LOOSE_EPS", "STRATEGIES", "MIN_FIRST_STAGE", "progress", "finish", "time_left"]

LOOSE_EPS = 1e-4
#: The values of ``strategy``: ``"auto"`` (loose conic solve, polish, escalate only while
#: the certificate asks for it) and ``"tight"`` (one conic solve at ``eps``).
STRATEGIES = ("auto", "tight")
MIN_FIRST_STAGE = 1e-3  # seconds: the first conic stage always runs (some point is returned)


def progress(verbose: bool, t0: float, msg: str) -> None:
    """Print ``msg`` with the elapsed time to stderr when ``verbose``."""
    if verbose:
        print(f"[dank_ref {time.perf_counter() - t0:7.2f} s] {msg}", file=sys.stderr, flush=True)


def time_left(deadline: float) -> float:
    """Seconds until ``deadline`` (``time.perf_counter`` clock; negative when passed)."""
    return deadline - time.perf_counter()


def polish_candidate(a_raw, certify, polisher, polish: bool, stats: dict, tag: str,
                     tol: float = 0.0, rounds: int = 4, deadline: float = np.inf,
                     report: Callable[[str], None] | None = None):
    """Certify ``a_raw``; polish it (restarted while it improves and is not yet certified).

    Each round is one run of the polisher, stopped at ``deadline``; cost per round: up to 30
    Newton iterations, each a few certificates (one ``eigh`` of ``n x n``: O(n^3) time,
    O(n^2) memory).  The polisher gets the certified gap as its score and the certified lower
    bound ``h`` as its merit (ascent far from ``a*``), both from one memoised certificate.
    ``report(msg)`` (if given) is called after every round.
    """
    c0 = certify(a_raw)
    stats[f"{tag}_gap_before_polish"] = c0.gap
    stats[f"{tag}_projection_distance"] = c0.projection_distance
    best, polished, steps = c0, False, 0
    if not polish:
        return best, polished
    bounds = _bounds_memo(certify)
    for k in range(rounds):  # always one full polish; restarts only while not certified
        if best.gap <= 0.0 or (k > 0 and best.rel_gap <= tol) or time_left(deadline) <= 0:
            break
        try:
            x, _, nstep = polisher(best.alpha, lambda z: bounds(z)[0], deadline,
                                   lambda z: bounds(z)[1])
        except (np.linalg.LinAlgError, ValueError) as exc:  # never fatal
            stats[f"{tag}_polish_error"] = repr(exc)
            break
        c1 = certify(x)
        steps += nstep
        if report is not None:
            report(f"stage {tag}: polish round {k + 1}: {nstep} Newton steps, certified "
                   f"rel_gap {c1.rel_gap:.2e}")
        if not c1.gap < best.gap:
            break
        best, polished = c1, True
    stats[f"{tag}_polish_steps"] = steps
    return best, polished


def _bounds_memo(certify: Callable, size: int = 4096) -> Callable:
    """``x -> (gap, lower)`` of ``certify(x)``, memoised by the bytes of ``x`` (two floats per
    entry, cleared when it holds ``size``): the polisher's score (the certified gap) and merit
    (the certified lower bound ``h``) then cost one certificate per distinct point."""
    cache: dict[bytes, tuple[float, float]] = {}

    def bounds(x: np.ndarray) -> tuple[float, float]:
        key = np.ascontiguousarray(x, dtype=float).tobytes()
        if key not in cache:
            if len(cache) >= size:
                cache.clear()
            c = certify(x)
            cache[key] = (c.gap, c.lower)
        return cache[key]

    return bounds


def _run_stages(candidates, certify, polisher, opt: dict, stats: dict, t0: float, kind: str):
    """Produce, polish and certify the candidates in order until one is certified."""
    best, polished, errors = None, False, []
    stages = stats.setdefault("stages", [])
    for tag, produce in candidates:
        if best is not None and time_left(opt["deadline"]) <= 0.0:
            stats["time_limit_hit"] = True
            stats.setdefault("skipped_stages", []).append(tag)
            continue
        progress(opt["verbose"], t0, f"{kind}: stage {tag} ...")
        t1 = time.perf_counter()
        try:
            raw = produce()
        except SolverError as exc:
            stats[f"{tag}_error"] = str(exc)
            errors.append(exc)
            progress(opt["verbose"], t0, f"{kind}: stage {tag} failed: {exc}")
            continue
        t2 = time.perf_counter()
        cand, pol = polish_candidate(raw, certify, polisher, opt["polish"], stats, tag,
                                     opt["tol"], deadline=opt["deadline"],
                                     report=lambda m: progress(opt["verbose"], t0, f"{kind}: {m}"))
        stages.append({"stage": tag, "solver": stats.get(f"{tag}_solver"),
                       "eps": stats.get(f"{tag}_eps"), "time_s": t2 - t1,
                       "polish_time_s": time.perf_counter() - t2, "rel_gap": cand.rel_gap})
        progress(opt["verbose"], t0, f"{kind}: stage {tag}: produced in {t2 - t1:.2f} s, "
                 f"polished in {time.perf_counter() - t2:.2f} s, certified rel_gap "
                 f"{cand.rel_gap:.2e}")
        if best is None or cand.rel_gap < best.rel_gap:
            best, polished = cand, pol
            stats["candidate"] = tag
        if best.rel_gap <= opt["tol"]:
            break
    if best is None:
        raise SolverError(f"{kind}: no candidate solution: " + "; ".join(map(str, errors)))
    return best, polished


def finish(*, kind: str, candidates, certify: Callable, polisher: Callable | None, opt: dict,
           stats: dict, t0: float, final: Callable, extra: dict | None = None) -> RefResult:
    """Run the stages (``_run_stages``), return the best certified point.

    ``candidates`` is a list of ``(tag, producer)``; ``producer()`` returns a raw frame vector
    or raises :class:`dank_ref.SolverError` (recorded in ``stats[tag + '_error']``).  ``certify(x)``
    certifies a frame vector (explicit projection of the raw vector); ``polisher(x, score,
    deadline)`` refines it; ``final(cert_f)`` maps the chosen frame certificate back to
    original units and certifies the returned point there.  ``opt`` holds ``polish``,
    ``tol``, ``verbose``, ``deadline`` and ``solver`` (``dank_ref.conic.check_options``).
    """
    best, polished = _run_stages(candidates, certify, polisher, opt, stats, t0, kind)
    stats["gap_before_polish"] = stats.get(f"{stats['candidate']}_gap_before_polish")
    # the conic solver whose point was certified (None: a cheap candidate, no conic solve)
    stats["certified_solver"] = stats.get(f"{stats['candidate']}_solver")
    stats.setdefault("cvxpy_status", "not run")
    out = final(best)
    stats["gap_raw"] = out.gap_raw
    certified = out.rel_gap <= opt["tol"]
    status = _status(certified, stats, opt)
    msg = (f"{kind}: cvxpy status {stats['cvxpy_status']!r}; candidate {stats['candidate']}; "
           f"certified rel_gap {out.rel_gap:.3e} ({'<=' if certified else '>'} tol "
           f"{opt['tol']:g})")
    if stats["certified_solver"] not in (None, opt["solver"]):
        msg += (f"; the point comes from {stats['certified_solver']}, not the requested "
                f"{opt['solver']} (dank_ref.conic.stage_plan: the faster solver goes first, a "
                "slow stage has a time budget)")
    if status == "time_limit":
        msg += f"; the solve stopped at its time limit ({stats.get('time_limit')} s)"
    elif status == "max_iter":
        msg += f"; the last conic solve stopped at max_iter = {opt['max_iter']}"
    elif status == "stalled":
        msg += "; every stage was tried"
    if not certified:
        warnings.warn(ConvergenceWarning(msg), stacklevel=3)
    progress(opt["verbose"], t0, msg)
    res = RefResult(
        alpha=out.alpha, bias=out.bias, F=out.F, lower=out.lower, upper=out.upper,
        gap=out.gap, rel_gap=out.rel_gap, status=status, time=time.perf_counter() - t0,
        solver=opt["solver"], solver_stats=stats, n_iter=stats.get("iterations"),
        message=msg, alpha_hat=out.alpha_hat, alpha_check=out.alpha_check,
        projection_distance=best.projection_distance, polished=polished,
        method=(extra or {}).get("method"), certificate=out,
    )
    if extra:
        res.solver_stats.update(extra)
    return res


def _status(certified: bool, stats: dict, opt: dict) -> str:
    """The word of :data:`dank_ref.STATUSES` for a solve whose returned point is (or is not)
    ``certified``: ``"time_limit"`` when the deadline stopped it, ``"max_iter"`` when the last
    conic solve used the whole ``max_iter`` the caller gave, else ``"stalled"`` (every stage
    was tried; the previous release's ``"inaccurate"``)."""
    if certified:
        return "converged"
    if stats.get("time_limit_hit"):
        return "time_limit"
    limit, its = opt.get("max_iter"), stats.get("iterations")
    if limit is not None and its is not None and its >= limit:
        return "max_iter"
    return "stalled"
