"""``dank-verify certify``: check a solution produced by any implementation.

Checks (all must pass for "CERTIFIED"):

1. feasibility: distance to the feasible set <= ``feas_tol * max(1, C)`` (no silent projection);
2. certificate (dank_ref's independent code; dank_fast's for P1 as a second opinion):
   relative gap ``gap / scale <= tol``;
3. bias (if given): the primal objective at the submitted bias is within ``tol`` (relative) of
   the one at the best bias, i.e. the gap *with the submitted bias* is <= tol;
4. F (if given): ``max |F - F(alpha)| <= 1e-6 max(1, max |F(alpha)|)``;
5. informative: projected-gradient KKT residual ``||P(a + grad h) - a||`` and the distance to a
   reference solution computed here (the optimum need not be unique: not a pass/fail criterion).
"""

from __future__ import annotations

import warnings

import numpy as np

from .claims._common import F_of, grad_svm, grad_svr, project_A, project_svr

CERT_TOL = 1e-6
FEAS_TOL = 1e-8


def _hinge_gap(Fk, d, y, C, lin, bias, task, eps=0.0):
    g = Fk @ d
    if task == "svr":
        r = y - g - bias
        loss = float(np.sum(np.maximum(0.0, np.abs(r) - eps)))
    else:
        loss = float(np.sum(np.maximum(0.0, 1.0 - y * (g + (bias or 0.0)))))
    return float(d @ g) + C * loss - lin


def certify(inst: dict, sol: dict, tol: float = CERT_TOL, reference: bool = True) -> dict:
    """Returns a report dict with ``certified`` (bool) and every number computed."""
    import dank_ref.certificate as rc

    task, K, y = inst["task"], inst["K"], inst["y"]
    C, eta, tau = inst["C"], inst["eta"], inst["tau"]
    if sol["task"] != task:
        return dict(certified=False, reasons=[f"solution task {sol['task']!r} != instance task "
                                              f"{task!r}"])
    n = y.size
    rep = dict(task=task, n=n, tol=tol, reasons=[])
    if task == "svr":
        z = np.concatenate([sol["alpha_hat"], sol["alpha_check"]])
        proj = project_svr(z, C)
    elif task == "svm":
        z = sol["alpha"]
        proj = project_A(z, y, C)
    else:
        z = sol["alpha"]
        proj = np.clip(z, 0.0, C)
    infeas = float(np.linalg.norm(z - proj))
    rep["infeasibility"] = infeas
    if infeas > FEAS_TOL * max(1.0, C) * np.sqrt(n):
        rep["reasons"].append(f"infeasible: distance {infeas:.3g} to the feasible set")
    # certificate at the projected point (so the numbers are meaningful); the infeasibility
    # above already decides
    if task == "svm":
        c = rc.svm_certificate(K, y, proj, C=C, eta=eta, tau=tau)
        d = c.alpha * y
        try:
            from dank_fast import svm_certificate as fc

            cf = fc(K, y, c.alpha, C=C, eta=eta, tau=tau)
            rep["dank_fast_gap"] = float(cf.gap)
        except Exception as exc:  # noqa: BLE001
            rep["dank_fast_gap"] = f"unavailable: {exc!r}"
        lin = float(np.sum(c.alpha))
    elif task == "svr":
        c = rc.svr_certificate(K, y, proj[:n], proj[n:], C=C, epsilon=inst["epsilon"], eta=eta,
                               tau=tau)
        d = c.alpha
        lin = float(d @ y - inst["epsilon"] * np.sum(c.alpha_hat + c.alpha_check))
    else:
        c = rc.decomposed_certificate(K, y, proj, C=C, eta=eta, labels=inst["labels"])
        d = c.alpha * y
        lin = float(np.sum(c.alpha))
    rep.update(lower=float(c.lower), upper=float(c.upper), gap=float(c.gap),
               rel_gap=float(c.rel_gap), best_bias=c.bias)
    if not c.rel_gap <= tol:
        rep["reasons"].append(f"certified relative gap {c.rel_gap:.3g} > tol {tol:g}")
    Kw = K if task != "decomposed" else rc.block_kernel(K, inst["labels"])
    Fa = F_of(Kw, d, eta, tau)
    if sol.get("bias") is not None:
        gb = _hinge_gap(Fa * Kw, d, y, C, lin, sol["bias"], task, inst.get("epsilon") or 0.0)
        rep["gap_at_submitted_bias"] = gb
        if not gb / c.scale <= tol:
            rep["reasons"].append(
                f"submitted bias {sol['bias']:.6g}: relative gap {gb / c.scale:.3g}"
                f" > tol (best bias {c.bias})"
            )
    if sol.get("F") is not None:
        err = float(np.max(np.abs(sol["F"] - Fa)))
        rep["F_error"] = err
        if err > 1e-6 * max(1.0, float(np.max(np.abs(Fa)))):
            rep["reasons"].append(f"F differs from F(alpha) = J_(tau/2)(11' + Gamma) by {err:.3g}")
    # KKT residual (projected gradient)
    if task == "svm":
        g = grad_svm(K, y, c.alpha, eta, tau)
        rep["kkt_residual"] = float(np.linalg.norm(project_A(c.alpha + g, y, C) - c.alpha))
    elif task == "svr":
        x = np.concatenate([c.alpha_hat, c.alpha_check])
        g = grad_svr(K, y, c.alpha_hat, c.alpha_check, inst["epsilon"], eta, tau)
        rep["kkt_residual"] = float(np.linalg.norm(project_svr(x + g, C) - x))
    else:
        g = 1.0 - y * ((Fa * Kw) @ d)
        rep["kkt_residual"] = float(np.linalg.norm(np.clip(c.alpha + g, 0, C) - c.alpha))
    if reference:
        try:
            rep["distance_to_reference"] = _distance_to_reference(inst, c)
        except Exception as exc:  # noqa: BLE001 - informative only
            rep["distance_to_reference"] = f"unavailable: {exc!r}"
    rep["certified"] = not rep["reasons"]
    return rep


def _distance_to_reference(inst, c):
    K, y, C, eta, tau = inst["K"], inst["y"], inst["C"], inst["eta"], inst["tau"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if inst["task"] == "svm":
            from dank_fast import solve_svm

            ref = solve_svm(K, y, C=C, eta=eta, tau=tau, method="newton", tol=1e-10).alpha
            return float(np.linalg.norm(c.alpha - ref))
        if inst["task"] == "decomposed":
            from .claims.decomposition import block_kernel, solve_p3

            ref = solve_p3(block_kernel(K, inst["labels"]), y, C, eta)[0]
            return float(np.linalg.norm(c.alpha - ref))
        if y.size <= 40:
            import dank_ref

            ref = dank_ref.solve_svr(K, y, C=C, epsilon=inst["epsilon"], eta=eta, tau=tau)
            return float(np.linalg.norm(c.alpha - ref.alpha))
    return "skipped (n > 40)"


def format_report(rep) -> str:
    lines = [f"verdict: {'CERTIFIED' if rep['certified'] else 'NOT CERTIFIED'}"]
    for k, v in rep.items():
        if k not in ("certified", "reasons"):
            lines.append(f"  {k}: {v}")
    for r in rep.get("reasons", []):
        lines.append(f"  reason: {r}")
    return "\n".join(lines)
