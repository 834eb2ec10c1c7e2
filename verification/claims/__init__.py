"""Claim checks: one function per claim group, each returning a list of :class:`Verdict`.

Claim ids follow SPEC's table: L1, L2, T1, PG, L3, T2, T3, T4, NR, SD, HW, EMP
(plus ``NR[printed]``: Algorithm ago3 with line 7's sign as printed).
"""

from __future__ import annotations

import json

import numpy as np

from ._common import STATUSES, Verdict, violated
from .bounds import EVALUATORS, check_bound
from .decomposition import check_decomposition, reproduce_T3, reproduce_T4
from .empirical import check_EMP
from .nesterov import check_NR, check_SD, reproduce_NR, reproduce_SD

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
    """Load a counterexample file written by a check (``allow_pickle=False``)."""
    with np.load(path, allow_pickle=False) as z:
        claim = str(z["claim"])
        params = json.loads(str(z["params_json"]))
        arrays = {k: np.asarray(z[k]) for k in z.files
                  if k not in ("claim", "params_json", "format_version")}
    return claim, arrays, params


def reproduce(path):
    """Re-evaluate a counterexample; returns ``(claim, lhs, rhs, still_violated)``."""
    claim, arrays, params = load_counterexample(path)
    if claim not in REPRODUCERS:
        raise ValueError(f"no reproducer for claim {claim!r}")
    lhs, rhs, mag = REPRODUCERS[claim](arrays, params)
    return claim, float(lhs), float(rhs), bool(violated(lhs, rhs, mag))


__all__ = ["Verdict", "STATUSES", "CLAIM_IDS", "GROUPS", "run_group", "reproduce",
           "load_counterexample"]
