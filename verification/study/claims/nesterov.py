"""NR: the rate of Algorithm 1 (Section 3.2) and SD: strong duality of eq. (4)."""

from __future__ import annotations

import warnings

import numpy as np

from ._common import Tracker, draw_instance, grad_svm, h_svm, project_A, where_of
from .bounds import L_theor

STATEMENT_NR = (
    "Section 3.2 (Theorem 2 of Nesterov 2005): for Algorithm 1 (a0 = 0, L of Theorem "
    "4, exact projection onto A), for every t >= 0, h(a*) - h(beta_t) <= 8 L ||a0 - a*||^2 "
    "/ ((t+1)(t+2)). h(a*) is replaced by the certified lower bound of a tight dank_fast solve, "
    "so a reported violation is certain. Sign '{sign}' in line 7.")


def ago3_betas(K, y, C, eta, tau, L, T, sign=+1.0):
    """Literal transcription of Algorithm 1 (exact projection); returns the beta_t list.

    ``sign=-1`` is line 7 as printed (``a0 - 1/(2L) sum``); ``+1`` is the ascent sign."""
    n = y.size
    a0 = np.zeros(n)
    a = a0.copy()
    gsum = np.zeros(n)
    betas = []
    for t in range(T):
        g = grad_svm(K, y, a, eta, tau)
        theta = project_A(a + g / L, y, C)
        gsum += (t + 1) * g
        beta = project_A(a0 + sign * gsum / (2 * L), y, C)
        betas.append(beta)
        a = (t + 1) / (t + 3) * theta + 2 / (t + 3) * beta
    return betas


def _optimum(K, y, C, eta, tau):
    # start-up: dank_fast imports scikit-learn (seconds); only this function needs it
    from dank_fast import solve_svm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = solve_svm(K, y, C=C, eta=eta, tau=tau, method="newton", tol=1e-11)
        if not res.rel_gap <= 1e-8:
            res = solve_svm(K, y, C=C, eta=eta, tau=tau, method="accelerated", tol=1e-10,
                            max_iter=20000)
    return res


def reproduce_NR(arr, p):
    K, y = arr["K"], arr["y"]
    L = L_theor(K, y.size, p["C"], p["eta"])
    t = int(p["t"])
    beta = ago3_betas(K, y, p["C"], p["eta"], p["tau"], L, t + 1, p["sign"])[t]
    res = _optimum(K, y, p["C"], p["eta"], p["tau"])
    lhs = res.lower - h_svm(K, y, beta, p["eta"], p["tau"])
    rhs = p.get("scale", 1.0) * 8 * L * np.sum(res.alpha**2) / ((t + 1) * (t + 2))
    return lhs, rhs, abs(res.lower)


def check_NR(rng, budget=1, scale=1.0, out_dir=None, instances=None):
    """Returns [Verdict NR (ascent sign), Verdict NR[printed] (sign as printed)]."""
    T = 60 * budget
    insts = instances if instances is not None else [
        draw_instance(rng, n_range=(6, 16), tau_large=False) for _ in range(2 + budget)]
    out = []
    for sign, cid in ((+1.0, "NR"), (-1.0, "NR[printed]")):
        tr = Tracker(cid)
        skipped = 0
        for inst in insts:
            K, y, C, eta, tau = inst["K"], inst["y"], inst["C"], inst["eta"], inst["tau"]
            res = _optimum(K, y, C, eta, tau)
            if not res.rel_gap <= 1e-8:
                skipped += 1
                continue
            L = L_theor(K, y.size, C, eta)
            R2 = float(np.sum(res.alpha**2))
            for t, beta in enumerate(ago3_betas(K, y, C, eta, tau, L, T, sign)):
                lhs = res.lower - h_svm(K, y, beta, eta, tau)
                rhs = scale * 8 * L * R2 / ((t + 1) * (t + 2))
                par = dict(C=C, eta=eta, tau=tau, t=t, sign=sign, scale=scale)
                tr.record(lhs, rhs, abs(res.lower), where_of(inst, t=t),
                          dict(K=K, y=y), par, size=y.size)
        inc = "no instance's optimum could be certified" if tr.n == 0 else None
        msg = f"{T} iterations per instance; {skipped} uncertified instance(s) skipped."
        out.append(tr.verdict(STATEMENT_NR.format(sign="+" if sign > 0 else "- (printed)"),
                              out_dir, msg, inconclusive=inc))
    return out


STATEMENT_SD = (
    "Eq. (4), strong duality: max_{a in A} min_F H = min_F max_{a in A} H. The max-min "
    "value is bracketed by dank_fast's certificate [lower, upper]; the min-max value is the "
    "optimal value of dank_ref's SDP (min over F of g(F)); claim: |minmax - maxmin| <= "
    "certified gap + 1e-5 max(1, |v|) (explicit conic-solver tolerance).")


def reproduce_SD(arr, p):
    return _sd_pair(arr["K"], arr["y"], p["C"], p["eta"], p["tau"], p.get("scale", 1.0))[:3]


def _sd_pair(K, y, C, eta, tau, scale):
    # start-up: dank_ref (cvxpy) and dank_fast (scikit-learn) take seconds to import
    import dank_ref
    from dank_fast import solve_svm

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast = solve_svm(K, y, C=C, eta=eta, tau=tau, method="newton", tol=1e-10)
        ref = dank_ref.solve_svm(K, y, C=C, eta=eta, tau=tau, solver="SCS", polish=False)
    minmax = float(ref.solver_stats["conic_value"])
    mid = 0.5 * (fast.lower + fast.upper)
    lhs = max(abs(minmax - mid) - 0.5 * fast.gap, 0.0)
    rhs = scale * 1e-5 * max(1.0, abs(mid))
    return lhs, rhs, abs(mid), dict(maxmin_lower=fast.lower, maxmin_upper=fast.upper,
                                    minmax=minmax, fast_rel_gap=fast.rel_gap)


def check_SD(rng, budget=1, scale=1.0, out_dir=None, instances=None):
    tr = Tracker("SD")
    try:
        # start-up: dank_ref imports cvxpy (seconds); only this function needs it
        import dank_ref  # noqa: F401
    except ImportError as exc:
        return [tr.verdict(STATEMENT_SD, inconclusive=f"dank_ref unavailable: {exc}")]
    insts = instances if instances is not None else [
        draw_instance(rng, n_range=(5, 12), tau_large=False) for _ in range(2 * budget)]
    fails = []
    for inst in insts:
        K, y, C, eta, tau = inst["K"], inst["y"], inst["C"], inst["eta"], inst["tau"]
        try:
            lhs, rhs, mag, info = _sd_pair(K, y, C, eta, tau, scale)
        except Exception as exc:  # solver failure: not evidence either way
            fails.append(repr(exc)[:120])
            continue
        tr.record(lhs, rhs, mag, where_of(inst, **info), dict(K=K, y=y),
                  dict(C=C, eta=eta, tau=tau, scale=scale), size=y.size)
    inc = f"no instance solved: {fails}" if tr.n == 0 else None
    msg = f"{len(fails)} solver failure(s) skipped." if fails else ""
    return [tr.verdict(STATEMENT_SD, out_dir, msg, inconclusive=inc)]
