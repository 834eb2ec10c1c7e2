"""One-line diagnosis of a certificate report (:func:`verification.oracle.certify`): what the
failed checks, read together, say is wrong with the implementation.

A report with ``evidence`` (a failed gap or ``F`` on an instance small enough for dank_ref,
``verification._evidence``) is diagnosed by its ``kind``: "not converged", "a different
problem" or "unclear", with the reason, the certified gap and dank_ref's bracket of ``v*``
beside the point's value ``h(alpha)``."""

from __future__ import annotations

__all__ = ["diagnose"]

_FEASIBILITY = ("alpha_low", "alpha_high", "equality", "alpha_hat_low", "alpha_hat_high",
                "alpha_check_low", "alpha_check_high")


def _infeasible(rep: dict, names: list[str]) -> str:
    worst = max(names, key=lambda k: rep["checks"][k]["value"] / rep["checks"][k]["limit"])
    ch = rep["checks"][worst]
    return (f"infeasible: {worst} violated by {ch['value']:.3g} (tolerance {ch['limit']:.3g} "
            f"= 1e-9 C sqrt(n)); at the nearest feasible point the certified relative gap "
            f"would be {rep['rel_gap']:.3g}")


def _from_evidence(rep: dict, gap: str) -> str:
    """The line of a report with ``evidence``: its kind and why, the gap, ``v*`` and ``h``."""
    ev = rep["evidence"]
    if ev["v_star_lower"] is not None:
        ref = (f"v* in [{ev['v_star_lower']:.10g}, {ev['v_star_upper']:.10g}] by dank_ref, "
               f"h(alpha) = {ev['value']:.10g}")
    else:
        ref = f"v* unavailable (dank_ref {ev['reference_status']})"
    state = gap if "gap" in rep["failed"] else "alpha itself is certified"
    line = f"{ev['kind']}: {ev['why']} ({state}; {ref})"
    if ev["kind"] == "unclear":
        line += "; not converged or a wrong problem: a solve to a tighter tol tells"
    return line


def _optimality(rep: dict, failed: list[str]) -> str:
    checks, tol = rep["checks"], rep["tol"]
    gap = f"certified relative gap {rep['rel_gap']:.3g} > tol {tol:g}"
    if rep.get("evidence") is not None:
        return _from_evidence(rep, gap)
    if "gap" in failed and rep["scale"] <= 1e-300:
        return ("1'alpha = 0: the relative gap is undefined (alpha = 0 is never optimal for "
                f"P1 and P3); absolute gap {rep['gap']:.3g}")
    if "F" in failed:
        tail = f"; and {gap}" if "gap" in failed else " (alpha itself is certified)"
        return (f"F differs from F(alpha) = J_(tau/2)(11' + Gamma) by "
                f"{checks['F']['value']:.3g}: the inner minimiser is wrong{tail}")
    if "gap" in failed:
        loose = ("the gap only bounds the suboptimality from above: a solve to a tighter tol "
                 "tells")
        if checks["F"]["status"] == "pass":
            return (f"F matches F(alpha) but the {gap}: not converged or a wrong outer step "
                    f"({loose})")
        return (f"{gap}: not converged or a wrong problem (submit F to tell a wrong inner "
                f"minimiser from non-convergence; {loose})")
    return (f"alpha is certified but the bias is not: relative gap {checks['bias']['value']:.3g}"
            f" at the submitted bias (best bias {rep['best_bias']:.10g})")


def diagnose(rep: dict) -> str:
    """``""`` for a certified report, else one line naming the most telling failure."""
    if rep["certified"]:
        return ""
    failed = rep["failed"]
    infeasible = [k for k in failed if k in _FEASIBILITY]
    return _infeasible(rep, infeasible) if infeasible else _optimality(rep, failed)
