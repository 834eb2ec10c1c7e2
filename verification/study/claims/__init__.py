"""Claim checks: one function per claim group, each returning a list of :class:`Verdict`.

Claim ids (the paper's numbering and a description of each: :mod:`.paper`, and the table in
``docs/MATH.md``): L1, L2, T1, PG, L3, T2, T3, T4, NR, SD, HW, EMP (plus ``NR[printed]``:
Algorithm 1 with line 7's sign as printed).  Verdict kinds: :mod:`._common`.
"""

from __future__ import annotations

from ._common import STATUSES, Verdict, classify, describe, ratio, violated
from ._io import load_counterexample as _load_strict
from .bounds import EVALUATORS, check_bound
from .decomposition import check_decomposition, reproduce_T3, reproduce_T4
from .empirical import check_EMP
from .nesterov import check_NR, check_SD, reproduce_NR, reproduce_SD
from .paper import CLAIMS, display_name

#: The ids of the paper's claims that the study checks (:data:`CLAIMS` describes each).
CLAIM_IDS = ("L1", "L2", "T1", "PG", "L3", "T2", "T3", "T4", "NR", "SD", "HW", "EMP")

REPRODUCERS = dict(EVALUATORS, T3=reproduce_T3, T4=reproduce_T4, NR=reproduce_NR,
                   SD=reproduce_SD)
REPRODUCERS["NR[printed]"] = reproduce_NR


def run_group(group: str, rng, budget=1, out_dir=None, scale=1.0):
    """Run the checks of one claim group and return their verdicts.

    Seeded random instances, an adversarial search of ``lhs / rhs`` and, for the bounds, a
    Hypothesis-guided search; the work grows linearly with ``budget`` (``dank-verify claims``
    runs every group).

    Parameters
    ----------
    group : str
        One of :data:`GROUPS`.
    rng : numpy.random.Generator
        The source of the random instances (seeded by the caller for a reproducible run).
    budget : int, default 1
        Multiplies the number of instances and search steps.
    out_dir : str or path-like, optional
        Where counterexample files are written (none are written when None).
    scale : float, default 1.0
        Multiplies each bound's right-hand side (``scale < 1`` plants a false bound, which the
        search must find; used by the tests).

    Returns
    -------
    list of Verdict
        One verdict per claim of the group (two for ``"T3T4"``).

    Raises
    ------
    ValueError
        An unknown ``group``.
    """
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


#: The groups :func:`run_group` runs, in the report's order (``"T3T4"`` checks T3 and T4
#: together).
GROUPS = ("L1", "HW", "L2", "T1", "PG", "L3", "T2", "NR", "SD", "T3T4", "EMP")


def load_counterexample(path):
    """Load and validate a counterexample file.

    The file is an ``.npz`` read with ``allow_pickle=False``, its headers checked before
    loading and its arrays by the rules of ``docs/validity.md``.

    Parameters
    ----------
    path : str or path-like
        A counterexample file written by a claim check.

    Returns
    -------
    claim : str
        The claim id.
    arrays : dict of str to ndarray
        The instance and point (``K``, ``y``, ...).
    params : dict
        The scalar parameters (``C``, ``eta``, ``tau``, ...).

    Raises
    ------
    TypeError, ValueError
        A malformed file or an unknown claim, with a message naming the file and the problem.
    """
    return _load_strict(path, known=REPRODUCERS)


def reproduce_report(path) -> dict:
    """Re-evaluate a counterexample file and classify the result.

    Parameters
    ----------
    path : str or path-like
        A counterexample file written by a claim check.

    Returns
    -------
    dict
        ``claim``, ``lhs``, ``rhs``, ``magnitude``, ``kind`` (``"holds"``, ``"violated"``
        or ``"degenerate"``, :func:`classify`), ``ratio`` (``lhs / rhs``, only when
        ``rhs > 0``, else ``None``) and ``text`` (one line, same convention as the report).

    Raises
    ------
    TypeError, ValueError
        A malformed file (see :func:`load_counterexample`).
    """
    claim, arrays, params = load_counterexample(path)
    lhs, rhs, mag = REPRODUCERS[claim](arrays, params)
    lhs, rhs, mag = float(lhs), float(rhs), float(mag)
    kind = classify(lhs, rhs, mag)
    return dict(claim=claim, lhs=lhs, rhs=rhs, magnitude=mag, kind=kind,
                ratio=ratio(lhs, rhs), text=f"{claim}: {describe(lhs, rhs, mag)}")


def reproduce(path):
    """Re-evaluate a counterexample file.

    Parameters
    ----------
    path : str or path-like
        A counterexample file written by a claim check.

    Returns
    -------
    claim : str
        The claim id.
    lhs, rhs : float
        The two sides of the claimed inequality ``lhs <= rhs`` at the stored point.
    still_violated : bool
        True for a substantive or a degenerate violation.

    Raises
    ------
    TypeError, ValueError
        A malformed file (see :func:`load_counterexample`).
    """
    r = reproduce_report(path)
    return r["claim"], r["lhs"], r["rhs"], r["kind"] != "holds"


__all__ = ["Verdict", "STATUSES", "CLAIM_IDS", "CLAIMS", "GROUPS", "run_group", "reproduce",
           "reproduce_report", "load_counterexample", "display_name", "classify", "describe",
           "violated"]
