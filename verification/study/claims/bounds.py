"""Pointwise and Lipschitz bounds: L1, HW, L2, T1, PG (P1) and L3, T2 (P2).

Every check draws random instances (:func:`draw_instance`), random feasible points, and then
runs an adversarial hill-climb maximising ``lhs / rhs`` over the feasible point(s) (random
perturbations projected back onto the feasible set; for pairs also shrinking the difference, which
probes the local Lipschitz constant).  ``scale`` multiplies the right-hand side (``scale < 1``
plants a false bound; used by the tests).
"""

from __future__ import annotations

import numpy as np

from ._common import (
    F_of,
    Tracker,
    draw_instance,
    gamma,
    grad_svm,
    grad_svr,
    kappa,
    project_A,
    project_svr,
    random_feasible,
    ratio,
    structured_instances,
    where_of,
)
from .guided import guided_search, reduce_points


# ----------------------------------------------------------------------------------------------
# evaluations: (arrays, params) -> (lhs, rhs, magnitude).  Also used by `dank-verify reproduce`.
# ----------------------------------------------------------------------------------------------
def eval_L1(arr, p):
    K, y, a = arr["K"], arr["y"], arr["a"]
    n = y.size
    F = F_of(K, a * y, p["eta"], p["tau"])
    lhs = float(np.linalg.eigvalsh(F)[-1])
    lmaxK = float(np.linalg.eigvalsh(K)[-1])
    rhs = p.get("scale", 1.0) * (n - p["tau"] / 2 + n * p["C"] ** 2 * lmaxK / (4 * p["eta"]))
    return lhs, rhs, n + p["tau"] / 2 + n * p["C"] ** 2 * lmaxK / (4 * p["eta"])


def eval_HW(arr, p):
    K, y, a = arr["K"], arr["y"], arr["a"]
    n = y.size
    F = F_of(K, a * y, p["eta"], p["tau"])
    lam = np.sort(np.linalg.eigvalsh(F))[::-1]
    lhs = float((lam[0] - n) ** 2 + np.sum(lam[1:] ** 2))
    rhs = p.get("scale", 1.0) * float(np.sum((F - 1.0) ** 2))
    return lhs, rhs, float(n * n + np.sum(F * F))


def eval_L2(arr, p):
    K, y, a1, a2 = arr["K"], arr["y"], arr["a1"], arr["a2"]
    F1 = F_of(K, a1 * y, p["eta"], p["tau"])
    F2 = F_of(K, a2 * y, p["eta"], p["tau"])
    lhs = float(np.linalg.norm(F1 - F2))
    rhs = p.get("scale", 1.0) * float(
        np.linalg.norm(K) * (np.linalg.norm(a1) + np.linalg.norm(a2)) * np.linalg.norm(a1 - a2)
        / (4 * p["eta"]))
    return lhs, rhs, 1e-3 * rhs


def L_theor(K, n, C, eta):
    return kappa(K) * (n + 3 * n * C**2 * np.linalg.norm(K) / (4 * eta))


def L_pgm(K, n, C, eta, tau):
    return n - tau / 2 + n * C**2 * float(np.linalg.eigvalsh(K)[-1]) / (4 * eta)


def _grad_pair(arr, p):
    K, y, a1, a2 = arr["K"], arr["y"], arr["a1"], arr["a2"]
    g1 = grad_svm(K, y, a1, p["eta"], p["tau"])
    g2 = grad_svm(K, y, a2, p["eta"], p["tau"])
    return float(np.linalg.norm(g1 - g2)), float(np.linalg.norm(a1 - a2)), max(
        np.linalg.norm(g1), np.linalg.norm(g2))


def eval_T1(arr, p):
    lhs, dist, gm = _grad_pair(arr, p)
    L = L_theor(arr["K"], arr["y"].size, p["C"], p["eta"])
    return lhs, p.get("scale", 1.0) * L * dist, 1e-3 * L * dist


def eval_PG(arr, p):
    lhs, dist, gm = _grad_pair(arr, p)
    L = L_pgm(arr["K"], arr["y"].size, p["C"], p["eta"], p["tau"])
    return lhs, p.get("scale", 1.0) * L * dist, 1e-3 * abs(L) * dist


def eval_L3(arr, p):
    K = arr["K"]
    b1 = arr["ah1"] - arr["ac1"]
    b2 = arr["ah2"] - arr["ac2"]
    F1 = F_of(K, b1, p["eta"], p["tau"])
    F2 = F_of(K, b2, p["eta"], p["tau"])
    lhs = float(np.linalg.norm(F1 - F2))
    rhs = p.get("scale", 1.0) * float(
        np.linalg.norm(K) / (4 * p["eta"]) * np.linalg.norm(b1 + b2) * np.linalg.norm(b1 - b2))
    return lhs, rhs, 1e-3 * rhs


def L_svr(K, n, C, eta):
    return 2 * kappa(K) * (n + 9 * n * C**2 * np.linalg.norm(K) / (4 * eta))


def eval_T2(arr, p):
    K, y = arr["K"], arr["y"]
    g1 = grad_svr(K, y, arr["ah1"], arr["ac1"], p["epsilon"], p["eta"], p["tau"])
    g2 = grad_svr(K, y, arr["ah2"], arr["ac2"], p["epsilon"], p["eta"], p["tau"])
    lhs = float(np.linalg.norm(g1 - g2))
    dist = float(np.linalg.norm(arr["ah1"] - arr["ah2"]) + np.linalg.norm(arr["ac1"] - arr["ac2"]))
    L = L_svr(K, y.size, p["C"], p["eta"])
    return lhs, p.get("scale", 1.0) * 2 * L * dist, 2e-3 * L * dist


EVALUATORS = {"L1": eval_L1, "HW": eval_HW, "L2": eval_L2, "T1": eval_T1, "PG": eval_PG,
              "L3": eval_L3, "T2": eval_T2}

STATEMENTS = {
    "L1": "Lemma 1: for every instance (K PSD, C, eta > 0, tau >= 0) and every a in A, "
          "lambda_max(F(a)) <= n - tau/2 + n C^2 lambda_max(K) / (4 eta).",
    "HW": "Section 2.2.2 (Hoffman-Wielandt): for every a in A, with F = F(a), "
          "(lambda_1(F) - n)^2 + sum_{i>=2} lambda_i(F)^2 <= ||F - 11'||_F^2.",
    "L2": "Lemma 3: for all a1, a2 in A, ||F(a1) - F(a2)||_F <= "
          "||K||_F (||a1|| + ||a2||) ||a1 - a2|| / (4 eta).",
    "T1": "Theorem 4: for all a1, a2 in A, ||grad h(a1) - grad h(a2)|| <= L ||a1 - a2||, "
          "L = kappa (n + 3 n C^2 ||K||_F / (4 eta)), kappa = max |K_ij|.",
    "PG": "Eq. (17): L_pgm = n - tau/2 + n C^2 lambda_max(K) / (4 eta) is a Lipschitz constant of "
          "grad h on A: ||grad h(a1) - grad h(a2)|| <= L_pgm ||a1 - a2|| for all a1, a2 in A.",
    "L3": "Lemma 8: for all feasible (ah1, ac1), (ah2, ac2) (0 <= ah, ac <= C, "
          "1'(ah - ac) = 0), with b = ah - ac, ||F(b1) - F(b2)||_F <= ||K||_F / (4 eta) "
          "||b1 + b2|| ||b1 - b2|| (||K|| read as Frobenius, as in Lemma 3).",
    "T2": "Theorem 10: for all feasible pairs, ||grad h(x1) - grad h(x2)|| <= 2L "
          "(||ah1 - ah2|| + ||ac1 - ac2||), L = 2 kappa (n + 9 n C^2 ||K||_F / (4 eta)); "
          "grad = [y - eps - (F o K) b ; -y - eps + (F o K) b] (derived, not the printed one).",
}


# ----------------------------------------------------------------------------------------------
# samplers / perturbations
# ----------------------------------------------------------------------------------------------
def _svr_point(rng, n, C):
    z = np.concatenate([random_feasible(rng, np.ones(n), C, "uniform"),
                        random_feasible(rng, np.ones(n), C, "uniform")])
    kind = rng.integers(3)
    if kind == 0:
        z = rng.uniform(0, C, 2 * n)
    elif kind == 1:
        z = C * (rng.random(2 * n) < 0.5)
    return project_svr(z, C)


def _sample(claim, rng, inst):
    y, C = inst["y"], inst["C"]
    n = y.size
    if claim in ("L1", "HW"):
        return {"a": random_feasible(rng, y, C)}
    if claim in ("L2", "T1", "PG"):
        a1 = random_feasible(rng, y, C)
        if rng.random() < 0.5:
            a2 = random_feasible(rng, y, C)
        else:
            a2 = project_A(a1 + rng.normal(0, 1e-2 * C, n), y, C)
        return {"a1": a1, "a2": a2}
    x1 = _svr_point(rng, n, C)
    x2 = _svr_point(rng, n, C) if rng.random() < 0.5 else project_svr(
        x1 + rng.normal(0, 1e-2 * C, 2 * n), C)
    return {"ah1": x1[:n], "ac1": x1[n:], "ah2": x2[:n], "ac2": x2[n:]}


def _perturb(claim, rng, inst, pt, step):
    y, C = inst["y"], inst["C"]
    n = y.size
    if claim in ("L1", "HW"):
        return {"a": project_A(pt["a"] + rng.normal(0, step * C, n), y, C)}
    if claim in ("L2", "T1", "PG"):
        a1, a2 = pt["a1"], pt["a2"]
        u = rng.random()
        if u < 0.2:  # shrink the difference: local Lipschitz constant
            a2 = project_A(a1 + 0.5 * (a2 - a1), y, C)
        elif u < 0.5:  # power step: difference <- Hessian-ish image of the difference
            dg = grad_svm(inst["K"], y, a2, inst["eta"], inst["tau"]) - grad_svm(
                inst["K"], y, a1, inst["eta"], inst["tau"])
            nd, na = np.linalg.norm(dg), np.linalg.norm(a2 - a1)
            if nd > 0:
                a2 = project_A(a1 + na * dg / nd, y, C)
        else:
            a1 = project_A(a1 + rng.normal(0, step * C, n), y, C)
            a2 = project_A(a2 + rng.normal(0, step * C, n), y, C)
        if np.linalg.norm(a1 - a2) == 0:
            return pt
        return {"a1": a1, "a2": a2}
    x1 = np.concatenate([pt["ah1"], pt["ac1"]])
    x2 = np.concatenate([pt["ah2"], pt["ac2"]])
    u = rng.random()
    if u < 0.2:
        x2 = project_svr(x1 + 0.5 * (x2 - x1), C)
    elif u < 0.5:
        g = grad_svr(inst["K"], inst["y"], x2[:n], x2[n:], inst["epsilon"], inst["eta"],
                     inst["tau"]) - grad_svr(inst["K"], inst["y"], x1[:n], x1[n:],
                                             inst["epsilon"], inst["eta"], inst["tau"])
        nd, nx = np.linalg.norm(g), np.linalg.norm(x2 - x1)
        if nd > 0:
            x2 = project_svr(x1 + nx * g / nd, C)
    else:
        x1 = project_svr(x1 + rng.normal(0, step * C, 2 * n), C)
        x2 = project_svr(x2 + rng.normal(0, step * C, 2 * n), C)
    if np.linalg.norm(x1 - x2) == 0:
        return pt
    return {"ah1": x1[:n], "ac1": x1[n:], "ah2": x2[:n], "ac2": x2[n:]}


DEGENERATE_NOTES = {
    "L1": "The bound n - tau/2 + n C^2 lambda_max(K)/(4 eta) is <= 0 exactly when tau/2 >= "
          "n + n C^2 lambda_max(K)/(4 eta); there F(a) = 0 (every eigenvalue of 11' + Gamma is "
          "below tau/2), so lambda_max(F) = 0 exceeds the negative bound. The lemma needs the "
          "extra condition tau/2 < n + n C^2 lambda_max(K)/(4 eta) (or a max(., 0)).",
    "PG": "L_pgm = n - tau/2 + n C^2 lambda_max(K)/(4 eta) is <= 0 exactly when tau/2 >= "
          "n + n C^2 lambda_max(K)/(4 eta): a non-positive 'Lipschitz constant' (step 1/L "
          "undefined or negative) while grad h still varies.",
}


def check_bound(claim, rng, budget=1, scale=1.0, out_dir=None, instances=None, guided=None):
    """Seeded random instances + adversarial hill-climb of ``lhs / rhs``, then a Hypothesis
    guided search (:func:`guided.guided_search`), for one of :data:`EVALUATORS`.

    ``instances`` (optional) replaces the random draws (planted cases in the tests);
    ``guided`` (default: only without ``instances``) runs the Hypothesis stage with
    ``300 * budget`` examples.  The counterexample saved for each kind is the smallest found,
    reduced point by point (:func:`guided.reduce_points`).
    """
    ev = EVALUATORS[claim]
    task = "svr" if claim in ("L3", "T2") else "svm"
    tr = Tracker(claim)
    n_inst = 6 * budget
    steps = 12 * budget
    insts = instances if instances is not None else [
        draw_instance(rng, task=task) for _ in range(n_inst)]
    if instances is None:
        insts += structured_instances(rng, task)
    if instances is None and claim in ("L1", "PG"):
        # adversarial over the parameters: tau beyond 2 (n + n C^2 lambda_max(K) / (4 eta))
        for inst in list(insts[: max(1, budget)]):
            n = inst["y"].size
            lmax = np.linalg.eigvalsh(inst["K"])[-1]
            thr = 2 * (n + n * inst["C"] ** 2 * lmax / (4 * inst["eta"]))
            insts.append(dict(inst, tau=float(thr * 1.5)))
    for inst in insts:
        par = {k: inst[k] for k in ("C", "eta", "tau", "epsilon") if k in inst}
        par["scale"] = scale
        base = {"K": inst["K"], "y": inst["y"]}
        best_r, best_pt = -np.inf, None
        for _ in range(3):
            pt = _sample(claim, rng, inst)
            lhs, rhs, mag = ev({**base, **pt}, par)
            tr.record(lhs, rhs, mag, where_of(inst), {**base, **pt}, par, size=inst["y"].size)
            r = _score(lhs, rhs)
            if r > best_r:
                best_r, best_pt = r, pt
        step = 0.1
        for _ in range(steps):
            cand = _perturb(claim, rng, inst, best_pt, step)
            lhs, rhs, mag = ev({**base, **cand}, par)
            tr.record(lhs, rhs, mag, where_of(inst), {**base, **cand}, par,
                      size=inst["y"].size)
            r = _score(lhs, rhs)
            if r > best_r:
                best_r, best_pt = r, cand
                step = min(step * 1.5, 1.0)
            else:
                step = max(step * 0.7, 1e-4)
    details = {}
    if guided if guided is not None else instances is None:
        g = guided_search(claim, ev, tr, seed=int(rng.integers(2**31)),
                          max_examples=300 * budget, scale=scale)
        details["guided_search"] = g
    for kind in ("violated", "degenerate"):
        c = tr.cex[kind]
        if c is None:
            continue
        red = reduce_points(claim, ev, c.arrays, c.params, kind)
        if red is not None:
            arrays, lhs, rhs, _ = red
            tr.offer_counterexample(kind, lhs, rhs,
                                    dict(c.where, n=int(arrays["y"].size), reduced_from=c.size),
                                    arrays, c.params, size=arrays["y"].size, preferred=True)
    extra = ""
    if claim == "HW":
        extra = ("Both sides are differences of numbers of size n^2 (eigenvalues of F near n), so "
                 "they are compared with a tolerance relative to n^2 + ||F||_F^2; the bound is "
                 "tight (equality up to rounding) when Gamma is tiny.")
    if claim == "L3":
        extra = ("The middle link ||F1 - F2||_F <= ||Gamma1 - Gamma2||_F (non-expansiveness of "
                 "J_{tau/2}) is implied when the final bound holds with ratio < 1.")
    g = details.get("guided_search")
    if g:
        extra += (f" Hypothesis guided search: {g['examples']} evaluations"
                  + (f", shrunk counterexample with n = {g['n']} (lhs/rhs {g['ratio']:.4g})"
                     if g["found"] else ", no substantive violation")
                  + (f" (search error: {g['error']})" if g["error"] else "") + ".")
    return tr.verdict(STATEMENTS[claim], out_dir=out_dir, message=extra.strip(),
                      details=details, degenerate_note=DEGENERATE_NOTES.get(claim, ""))


def _score(lhs, rhs):
    """Hill-climbing score: ``lhs / rhs`` for a positive bound, else ``+inf`` when violated
    (a degenerate violation is the strongest find) and ``-inf`` otherwise."""
    if rhs > 0:
        return lhs / rhs
    return np.inf if lhs > rhs else -np.inf


def gamma_chain_ratio(K, b1, b2, eta, tau):
    """``||F1 - F2|| / ||Gamma1 - Gamma2||`` (the first link of Lemma 8)."""
    F1, F2 = F_of(K, b1, eta, tau), F_of(K, b2, eta, tau)
    return ratio(float(np.linalg.norm(F1 - F2)),
                 float(np.linalg.norm(gamma(K, b1, eta) - gamma(K, b2, eta))))
