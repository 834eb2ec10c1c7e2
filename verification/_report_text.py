"""The text of a certification report: one reason per failed check, and the printed report.

:func:`verification.oracle.certify` returns its report as a dict; this module turns it into
words. :func:`failure_reason` is the one-line message of a failed check (the report's
``reasons``), :func:`format_report` the human-readable report that ``dank-verify certify``
prints: the verdict, one line per check, the bracket, the informative numbers, the evidence
of a failure (:func:`verification._evidence.format_evidence`), the reasons and, when the gap
failed, a note on what that does not prove. The wording is part of the oracle's output.
"""

from __future__ import annotations

import numpy as np

from ._evidence import format_evidence

__all__ = ["failure_reason", "format_report", "INFORMATIVE"]

# the floor of the oracle's ``scale`` (``verification.oracle.TINY``): a scale at the floor has
# no finite relative gap
_TINY = float(np.finfo(float).tiny)

INFORMATIVE = ("kkt_residual", "dank_fast_rel_gap", "distance_to_reference")


def failure_reason(name: str, ch: dict, rep: dict, sol: dict) -> str:
    """The message of a failed check.

    Parameters
    ----------
    name : str
        The check's name (a key of :data:`verification.oracle.CHECKS`).
    ch : dict
        The check's entry of ``rep["checks"]`` (``value``, ``limit``).
    rep : dict
        The report (``task``; for the gap ``scale`` and ``gap``; for the bias ``best_bias``).
    sol : dict
        The solution (for the bias: the submitted ``bias``).

    Returns
    -------
    str
        One line, starting with the check's name.
    """
    v, lim = ch["value"], ch["limit"]
    if name == "gap":
        if rep["scale"] <= _TINY:
            what = "1'alpha = 0" if rep["task"] != "svr" else "the objective's scale is 0"
            return (f"gap: certified relative gap undefined ({v:.3g}): {what}, so gap / scale "
                    f"has no finite value; the absolute gap is {rep['gap']:.3g} (alpha = 0 is "
                    "never optimal for P1 and P3: the gradient 1 - Y(F o K)Y alpha is 1 there)")
        return f"gap: certified relative gap {v:.3g} > tol {lim:g}"
    if name == "bias":
        return (f"bias: with the submitted bias {sol['bias']:.10g} the relative gap is {v:.3g} "
                f"> tol {lim:g} (best bias {rep['best_bias']:.10g})")
    if name == "F":
        return (f"F: max|F - F(alpha)| = {v:.3g} > {lim:.3g} (F(alpha) = J_(tau/2)(11' + "
                "Gamma), Lemma 1)")
    eq = "y'alpha = 0" if rep["task"] == "svm" else "1'(alpha_hat - alpha_check) = 0"
    what = {"alpha_low": "alpha >= 0", "alpha_high": "alpha <= C", "equality": eq,
            "alpha_hat_low": "alpha_hat >= 0", "alpha_hat_high": "alpha_hat <= C",
            "alpha_check_low": "alpha_check >= 0", "alpha_check_high": "alpha_check <= C"}[name]
    return f"{name}: infeasible, {what} violated by {v:.3g} > tolerance {lim:.3g}"


def format_report(rep: dict) -> str:
    """Human-readable report: verdict, one line per check, the bracket, informative numbers,
    the evidence of a failure on a small instance, the reasons, and when the gap failed a
    two-line note on what that does not prove.

    Parameters
    ----------
    rep : dict
        A report of :func:`verification.oracle.certify`.

    Returns
    -------
    str
        The report's lines, joined by newlines (no trailing newline).
    """
    lines = [f"verdict: {'CERTIFIED' if rep['certified'] else 'NOT CERTIFIED'}"
             f" (task {rep['task']}, n = {rep['n']}, tol = {rep['tol']:g})"]
    for name, ch in rep["checks"].items():
        st = ch["status"]
        if "value" in ch and ch["value"] is not None:
            st += f"  value {ch['value']:.3g}  limit {ch['limit']:.3g}"
        lines.append(f"  check {name:17s} {st}")
    for k, v in rep.items():
        if k not in ("certified", "reasons", "checks", "failed", "task", "n", "tol",
                     "evidence") and k not in INFORMATIVE:
            lines.append(f"  {k}: {v}")
    info = [k for k in INFORMATIVE if k in rep]
    if info:
        lines.append("  informative only, not part of the verdict"
                     + (" (dank_fast_rel_gap, distance_to_reference: the optional cross-check "
                        "by dank_fast)" if "distance_to_reference" in rep else "") + ":")
        lines.extend(f"    {k}: {rep[k]}" for k in info)
    if rep.get("evidence") is not None:  # before the reasons: the note stays last
        lines += format_evidence(rep["evidence"])
    for r in rep["reasons"]:
        lines.append(f"  reason: {r}")
    if "gap" in rep["failed"]:
        lines += ["  note: NOT CERTIFIED does not prove the point suboptimal: the gap only bounds "
                  "v* - lower from above",
                  "        (upper is a primal value of the fixed-F problem near alpha); to "
                  "certify it, solve to a tighter tol (docs/conformance.md)"]
    return "\n".join(lines)
