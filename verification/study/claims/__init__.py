"""Claim checks: one function per claim group, each returning a list of :class:`Verdict`.

Claim ids (the paper's numbering and a description of each: :mod:`.paper`, and the table in
``docs/MATH.md``): L1, L2, T1, PG, L3, T2, T3, T4, NR, SD, HW, EMP (plus ``NR[printed]``:
Algorithm ago3 with line 7's sign as printed).  Verdict kinds: :mod:`._common`.
"""

from __future__ import annotations

from ._common import STATUSES, Verdict, classify, describe, ratio, violated
from ._io import load_counterexample as _load_strict
from .bounds import EVALUATORS, check_bound
from .decomposition import check_decomposition, reproduce_T3, reproduce_T4
from .empirical import check_EMP
from .nesterov import check_NR, check_SD, reproduce_NR, reproduce_SD
from .paper import CLAIMS, display_name

CLAIM_IDS = ("L1", "L2", "T1", "PG", "L3", "T2", "T3", "T4", "NR", "SD", "HW", "EMP")

REPRODUCERS = dict(EVALUATORS, T3=reproduce_T3, T4=reproduce_T4, NR=reproduce_NR,
                   SD=reproduce_SD)
REPRODUCERS["NR[printed]"] = reproduce_NR


def run_group(group: str, rng, budget=1, out_dir=None, scale=1.0):
    """Run one claim group; returns a list of verdicts (and extra data for EMP)."""
    if group in EVALUATORS:
        return [check_bound(group, rng, budget=budget, scale=scale, out_dir=out_dir)]
    if group == "T3T4":
        return check_decomposition(rng, budget=budget, scale_T3=scale, scale_T4=scale,
                                   out_dir=out_dir)
    if group == "NR":
        return check_NR(rng, budget=budget, scale=scale, out_dir=out_dir)
    if group == "SD":
        return check_SD(rng, budget=budget, scale=scale, out_dir=out_dir)
    if group == "EMP":
        return check_EMP(rng, budget=budget, out_dir=out_dir)[0]
    raise ValueError(f"unknown claim group {group!r}")


GROUPS = ("L1", "HW", "L2", "T1", "PG", "L3", "T2", "NR", "SD", "T3T4", "EMP")


def load_counterexample(path):
    """Load and validate a counterexample file (``allow_pickle=False``, header-checked,
    ``docs/validity.md``); returns ``(claim, arrays, params)``.  Raises ``ValueError`` /
    ``TypeError`` with a message naming the file and the problem."""
    return _load_strict(path, known=REPRODUCERS)


def reproduce_report(path) -> dict:
    """Re-evaluate a counterexample file.

    Returns
    -------
    dict
        ``claim``, ``lhs``, ``rhs``, ``magnitude``, ``kind`` (``"holds"``, ``"violated"``
        or ``"degenerate"``, :func:`classify`), ``ratio`` (``lhs / rhs``, only when
        ``rhs > 0``, else ``None``) and ``text`` (one line, same convention as the report).
    """
    claim, arrays, params = load_counterexample(path)
    lhs, rhs, mag = REPRODUCERS[claim](arrays, params)
    lhs, rhs, mag = float(lhs), float(rhs), float(mag)
    kind = classify(lhs, rhs, mag)
    return dict(claim=claim, lhs=lhs, rhs=rhs, magnitude=mag, kind=kind,
                ratio=ratio(lhs, rhs), text=f"{claim}: {describe(lhs, rhs, mag)}")


def reproduce(path):
    """Re-evaluate a counterexample; returns ``(claim, lhs, rhs, still_violated)`` where
    ``still_violated`` is true for a substantive or a degenerate violation."""
    r = reproduce_report(path)
    return r["claim"], r["lhs"], r["rhs"], r["kind"] != "holds"


__all__ = ["Verdict", "STATUSES", "CLAIM_IDS", "CLAIMS", "GROUPS", "run_group", "reproduce",
           "reproduce_report", "load_counterexample", "display_name", "classify", "describe",
           "violated"]
