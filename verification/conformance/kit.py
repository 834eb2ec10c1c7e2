"""The kit's engine: run an implementation over cases and judge every answer with the oracle.

The oracle (:func:`verification.oracle.certify`, ``reference=False``) runs in this process on
each answer as it arrives; a row is ``certified`` or ``not certified`` by its checks alone, or
``error`` / ``timeout`` when the implementation gave no usable answer.
"""

from __future__ import annotations

import math

from ..formats.spec import one_line
from ..inmemory import solution_from_arrays
from ..oracle import CERT_TOL, EvaluationError, certify
from .cases import Case
from .diagnosis import diagnose
from .runners import SOLUTION_KEYS, Outcome

__all__ = ["STATUSES", "judge", "run_cases"]

STATUSES = ("certified", "not certified", "error", "timeout")


def _solution(case: Case, raw: dict) -> dict:
    """The answer as a validated solution dict (``TypeError``/``ValueError`` if it is not one)."""
    unknown = sorted(set(raw) - SOLUTION_KEYS)
    if unknown:
        raise ValueError(f"unknown key(s) {', '.join(map(repr, unknown))} (a solution has "
                         f"{', '.join(sorted(SOLUTION_KEYS))})")
    task = raw.get("task") or case.task
    if task != case.task:
        raise ValueError(f"the solution is for task {task!r}, the instance is {case.task!r}")
    fields = {k: v for k, v in raw.items() if k != "task"}
    return solution_from_arrays(case.task, case.n, **fields)


def judge(case: Case, outcome: Outcome, tol: float = CERT_TOL) -> dict:
    """The result row of one case: id, set, family, task, n, status, failed checks, reasons,
    diagnosis, certified relative gap (None when not evaluated or not finite), absolute gap,
    time, the instance's time limit, the solution's meta, and the tail of the implementation's
    stderr or traceback when it failed (else None).  ``kit_error`` is True when the oracle
    itself could not evaluate the answer.  A failed gap or ``F`` on an instance small enough
    for dank_ref adds the oracle's ``evidence`` (``verification._evidence``)."""
    row = dict(id=case.id, set=case.set, family=case.family, task=case.task, n=case.n,
               status=outcome.status, failed=[], reasons=[], diagnosis=outcome.message,
               rel_gap=None, gap=None, time=outcome.time, time_limit=outcome.time_limit,
               meta=None, stderr_tail=outcome.stderr_tail, kit_error=False)
    if outcome.status != "ok":
        return row
    try:
        sol = _solution(case, outcome.solution)
    except (TypeError, ValueError) as exc:
        row.update(status="error", diagnosis=f"invalid solution: {one_line(exc)}")
        return row
    row["meta"] = sol.get("meta")
    try:
        rep = certify(case.inst, sol, tol=tol, reference=False)
    except (EvaluationError, ValueError, ArithmeticError, MemoryError) as exc:
        row.update(status="error", kit_error=True,
                   diagnosis=f"the oracle cannot evaluate: {type(exc).__name__}: "
                   f"{one_line(exc)}")
        return row
    rel = rep["rel_gap"]
    row.update(status="certified" if rep["certified"] else "not certified",
               failed=list(rep["failed"]), reasons=list(rep["reasons"]),
               diagnosis=diagnose(rep), rel_gap=rel if math.isfinite(rel) else None,
               gap=rep["gap"])
    if rep.get("evidence") is not None:  # optional: a failed gap or F on a small instance
        row["evidence"] = rep["evidence"]
    return row


def run_cases(cases: list[Case], runner, tol: float = CERT_TOL, progress=None) -> list[dict]:
    """Run an implementation on every case and certify each answer with the oracle.

    Parameters
    ----------
    cases : list of Case
        The instances (:func:`verification.conformance.load_cases`,
        :func:`verification.conformance.select_cases`).
    runner : ImplRunner or CmdRunner
        An entered :class:`~.runners.ImplRunner` or :class:`~.runners.CmdRunner`; its time
        limits apply to every case.
    tol : float, optional
        Relative gap up to which an answer is certified (:func:`verification.oracle.certify`).
    progress : callable, optional
        Called as ``progress(row)`` after each row, in the order answers arrive.

    Returns
    -------
    list of dict
        One row per case in the order of ``cases``: ``id``, ``set``, ``family``, ``task``,
        ``n``, ``status`` (``"certified"``, ``"not certified"``, ``"error"`` or
        ``"timeout"``), ``failed``, ``reasons``, ``diagnosis``, ``rel_gap``, ``gap``,
        ``time``, ``time_limit``, ``meta``, ``stderr_tail``, ``kit_error`` and, for a failed
        gap or ``F`` on an instance small enough for dank_ref, ``evidence``.

    Raises
    ------
    KitError
        If the runner itself fails (the implementation cannot be started); a failing answer
        is a row, never an exception.

    Notes
    -----
    Time: the implementation's own time per case (bounded by the runner's limits) plus one
    oracle check per answer in this process, up to ``O(n^3)`` time and a few ``n x n``
    matrices of memory for an instance of ``n`` points with a dense ``K``; an instance given
    by features beyond the format's dense limit (the large set) is certified in row blocks
    (:mod:`dank_ref.scale_certificate`: ``O(n s d)`` time for a support of ``s`` points,
    memory one block and ``O(n)``; P3 cluster by cluster). The instances in ``cases`` stay in
    memory.
    """
    rows = {}
    for case, outcome in runner.run(cases):
        rows[case.id] = row = judge(case, outcome, tol)
        if progress is not None:
            progress(row)
    return [rows[c.id] for c in cases]
