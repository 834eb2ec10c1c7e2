"""Decomposition claims (P3: box 0 <= a <= C, no bias, tau = 0): T3 (Theorem 6) and
T4 (Theorem 7), plus the P3 solver they need.

Reading of the theorems used here (the paper's text is ambiguous; see each docstring):

* ``(a*, F*)``: optimal solution of eq. (18) on the full kernel ``K``;
  ``(abar, Fbar)``: optimal solution of eq. (20) on ``Kbar = K o [pi(i) = pi(j)]``
  (Lemma 5: the concatenated sub-problem solutions), ``Fbar = 11' + Gamma_Kbar(abar)``.
* ``B1 = min_ij max(F*_ij, Fbar_ij)``, ``B2 = max_ij max(F*_ij, Fbar_ij)`` (the tightest
  constants of the theorem's assumption as printed), ``B = B2 - B1``, ``kappa = max |K_ij|``.
  The proof of Theorem 6 uses ``|F*_ij - Fbar_ij| <= B``, which needs both entries in
  ``[B1, B2]``; that reading (``B1 = min_ij min(F*_ij, Fbar_ij)``) is reported beside it.
* Premises: T3 needs ``0 < B1``; T4 is about the points its rule screens (``abar_i = 0`` and
  the gradient below the threshold), so an instance on which nothing is screened does not
  test it.  T4's premise can in fact never be met (:data:`T4_VACUITY`).
"""

from __future__ import annotations

import numpy as np

from ._common import Tracker, fmt, fmt_ratio, gaussian_kernel, kappa, where_of

TAU0 = 0.0


def h_p3(K, y, a, eta):
    d = a * y
    G = np.outer(d, d) * K / (4 * eta)
    n = y.size
    F = 1.0 + G
    return float(a.sum() + eta * (n * n - np.sum(F * F)))


def grad_p3(K, y, a, eta):
    d = a * y
    F = 1.0 + np.outer(d, d) * K / (4 * eta)
    return 1.0 - y * ((F * K) @ d)


def certificate_p3(K, y, a, C, eta):
    """(lower, upper, gap) for P3 at ``a`` (SVM duality gap of the fixed kernel F(a) o K)."""
    try:
        # start-up: dank_ref imports cvxpy (seconds); only this function needs it
        from dank_ref.certificate import decomposed_certificate

        c = decomposed_certificate(K, y, a, C=C, eta=eta, validate=False)
        return c.lower, c.upper, c.gap
    except ImportError:  # pragma: no cover - dank_ref is part of the repo
        d = a * y
        F = 1.0 + np.outer(d, d) * K / (4 * eta)
        g = (F * K) @ d
        gap = float(d @ g) + C * float(np.sum(np.maximum(0, 1 - y * g))) - float(a.sum())
        low = h_p3(K, y, a, eta)
        return low, low + gap, gap


def solve_p3(K, y, C, eta, tol=1e-9, max_iter=800):
    """Accelerated projected gradient (FISTA with backtracking, restarts) for P3 on ``K``,
    then dank_ref's active-set Newton polish; returns ``(a, lower, upper, gap, rel_gap)``."""
    n = y.size
    a = np.zeros(n)
    z, t, L = a.copy(), 1.0, 1.0
    ha = h_p3(K, y, a, eta)
    for it in range(max_iter):
        g = grad_p3(K, y, z, eta)
        hz = h_p3(K, y, z, eta)
        while True:
            a_new = np.clip(z + g / L, 0.0, C)
            diff = a_new - z
            h_new = h_p3(K, y, a_new, eta)
            if h_new >= hz + g @ diff - 0.5 * L * diff @ diff - 1e-14 * abs(hz):
                break
            L *= 2.0
        if h_new < ha:  # restart
            z, t = a.copy(), 1.0
            continue
        t_new = 0.5 * (1 + np.sqrt(1 + 4 * t * t))
        z = a_new + (t - 1) / t_new * (a_new - a)
        a, ha, t = a_new, h_new, t_new
        L *= 0.9
        if it % 50 == 0:
            lo, up, gap = certificate_p3(K, y, a, C, eta)
            if gap <= max(tol, 1e-7) * max(a.sum(), 1e-300):
                break
    try:
        # start-up: dank_ref imports cvxpy (seconds); only this function needs it
        from dank_ref.polish import polish_svm

        def score(b):
            return certificate_p3(K, y, b, C, eta)[2]

        out = polish_svm(K, y, a, C=C, eta=eta, tau=0.0, equality=False, score=score)
        cand = out[0] if isinstance(out, tuple) else out
        cand = np.clip(np.asarray(cand, float), 0, C)
        if score(cand) < score(a):
            a = cand
    except Exception:  # polish is an optional refinement
        pass
    lo, up, gap = certificate_p3(K, y, a, C, eta)
    return a, lo, up, gap, gap / max(a.sum(), 1e-300)


def block_kernel(K, labels):
    return K * (labels[:, None] == labels[None, :])


def kmeans_labels(X, v, seed=0):
    # start-up: scikit-learn's k-means (seconds to import) only here
    from sklearn.cluster import KMeans

    return KMeans(n_clusters=v, n_init=3, random_state=seed).fit_predict(X)


def Q_of(K, labels):
    return float(np.sum(np.abs(K) * (labels[:, None] != labels[None, :])))


def decomposition_instance(rng, n=None):
    n = int(n or rng.integers(8, 21))
    k = int(rng.integers(2, 4))
    centers = rng.uniform(0, 1, (k, 2))
    X = centers[rng.integers(k, size=n)] + rng.normal(0, 0.08, (n, 2))
    y = np.where(X @ rng.normal(size=2) + 0.1 * rng.normal(size=n) > np.median(
        X @ rng.normal(size=2)), 1.0, -1.0)
    if np.all(y == y[0]):
        y[0] = -y[0]
    sigma = float(2.0 ** rng.uniform(-3, 1))
    K = gaussian_kernel(X, sigma)
    return dict(X=X, K=K, y=y, C=float(2.0 ** rng.uniform(-2, 4)),
                eta=float(10.0 ** rng.uniform(-1, 3)), tau=0.0, kernel="gaussian", sigma=sigma,
                kernel_scale=1.0, v=k)


def solve_pair(inst, labels, tol=1e-9):
    K, y, C, eta = inst["K"], inst["y"], inst["C"], inst["eta"]
    Kb = block_kernel(K, labels)
    full = solve_p3(K, y, C, eta, tol=tol)
    blk = solve_p3(Kb, y, C, eta, tol=tol)
    return Kb, full, blk


STATEMENT_T3 = (
    "Theorem 6 (P3: no bias, tau = 0): for every partition pi, with (a*, F*) optimal for "
    "eq. (18) on K and (abar, Fbar) optimal for eq. (20) on Kbar, "
    "|H(a*, F*) - H(abar, Fbar)| <= 1/2 B C^2 Q(pi), H the objective of eq. (18) (kernel K), "
    "Q(pi) = sum_{pi(i) != pi(j)} |K_ij|, B = B2 - B1 with the tightest "
    "B1 <= max(F*_ij, Fbar_ij) <= B2 (premise: B1 > 0). H(a*, F*) is known to lie in a "
    "certified interval; lhs is the distance from H(abar, Fbar) to it (a violation is "
    "therefore certain).")

STATEMENT_T4 = (
    "Theorem 7: for every partition and every i with abar_i = 0 and "
    "(grad Hbar(abar, Fbar))_i <= -(B + B2) C (||Kbar_i||_1 + kappa), the full P3 optimum has "
    "a*_i = 0 (tested as a*_i <= 1e-4 C with both problems certified to rel. gap 1e-6).")


def _eval_T3(inst, labels, Kb, full, blk, scale):
    """T3 at one solved pair: ``(lhs, rhs, info)``.

    ``lhs`` is the theorem as printed, ``|H(a*, F*) - H(abar, Fbar)|`` with ``H`` the full
    objective of eq. (18) (kernel ``K``) evaluated at the sub-problems' solution; the
    saddle value ``H(a*, F*)`` is only known to lie in the certified ``[lower, upper]``, so
    ``lhs`` is the distance from ``H(abar, Fbar)`` to that interval (a violation is certain).
    ``info["lhs_subproblem_value"]`` is the other reading, ``|v*(K) - v*(Kbar)|`` (the
    sub-problems' value ``Hbar(abar, Fbar)``), reduced by both certified gaps.
    """
    K, y, C, eta = inst["K"], inst["y"], inst["C"], inst["eta"]
    a_s, a_b = full[0], blk[0]
    Fs = 1.0 + np.outer(a_s * y, a_s * y) * K / (4 * eta)
    Fb = 1.0 + np.outer(a_b * y, a_b * y) * Kb / (4 * eta)
    M = np.maximum(Fs, Fb)
    B1, B2 = float(M.min()), float(M.max())
    B = B2 - B1
    B_both = B2 - float(np.minimum(Fs, Fb).min())  # both entries in [B1, B2] (the proof's use)
    Q = Q_of(K, labels)
    d = a_b * y
    H_bar_full = float(a_b.sum() - 0.5 * d @ ((Fb * K) @ d) + eta * np.sum((Fb - 1.0) ** 2))
    lhs = max(full[1] - H_bar_full, H_bar_full - full[2], 0.0)
    diff = abs(full[1] - blk[1])
    slack = full[3] + blk[3]
    return lhs, scale * 0.5 * B * C**2 * Q, dict(
        B1=B1, B2=B2, Q=Q, H_star_lower=full[1], H_star_upper=full[2],
        H_abar_Fbar=H_bar_full, subproblem_value=blk[1],
        lhs_subproblem_value=max(diff - slack, 0.0),
        rhs_both_entries=scale * 0.5 * B_both * C**2 * Q)


def reproduce_T3(arr, p):
    inst = dict(K=arr["K"], y=arr["y"], C=p["C"], eta=p["eta"])
    labels = arr["labels"].astype(int)
    Kb, full, blk = solve_pair(inst, labels)
    lhs, rhs, info = _eval_T3(inst, labels, Kb, full, blk, p.get("scale", 1.0))
    return lhs, rhs, rhs


def screening(inst, labels, Kb, full, blk, scale=1.0):
    """Screened set of Theorem 7 and its violations; returns a dict.

    Also ``excess = grad - thr`` (how far each gradient is above the threshold; the rule
    screens ``i`` only when it is <= 0) and ``excess_bound = 1 + B C ||Kbar_i||_1 + (B + B2) C
    kappa``, its proven lower bound (:data:`T4_VACUITY`)."""
    K, y, C, eta = inst["K"], inst["y"], inst["C"], inst["eta"]
    a_s, a_b = full[0], blk[0]
    Fs = 1.0 + np.outer(a_s * y, a_s * y) * K / (4 * eta)
    Fb = 1.0 + np.outer(a_b * y, a_b * y) * Kb / (4 * eta)
    M = np.maximum(Fs, Fb)
    B1, B2 = float(M.min()), float(M.max())
    B = B2 - B1
    gbar = 1.0 - y * ((Fb * Kb) @ (a_b * y))
    k1 = np.abs(Kb).sum(0)
    thr = -(B + B2) * C * (k1 + kappa(K))
    zero_bar = a_b <= 1e-9 * C
    S = zero_bar & (gbar <= scale * thr)
    nonsv = a_s <= 1e-4 * C
    bad = S & ~nonsv
    return dict(S=S, bad=bad, gbar=gbar, thr=thr, B=B, B2=B2, nonsv=nonsv, zero_bar=zero_bar,
                excess=gbar - scale * thr,
                excess_bound=1.0 + B * C * k1 + (B + B2) * C * kappa(K) if scale == 1.0 else None,
                fraction=float(S.sum() / max(nonsv.sum(), 1)),
                max_bad=float(a_s[bad].max()) if bad.any() else 0.0)


T4_VACUITY = (
    "The premise can never be met. Fbar is positive semi-definite (11' plus D Kbar D / (4 eta), "
    "Kbar block-diagonal with PSD blocks; the same holds for any PSD minimiser), so |Fbar_ij| <= "
    "sqrt(Fbar_ii Fbar_jj) <= B2 for all i, j, because B2 bounds every entry, diagonal ones "
    "included. With 0 <= abar_j <= C this gives (grad Hbar(abar, Fbar))_i = 1 - y_i sum_j "
    "Fbar_ij Kbar_ij y_j abar_j >= 1 - B2 C ||Kbar_i||_1, while the threshold "
    "-(B + B2) C (||Kbar_i||_1 + kappa) is at most -B2 C ||Kbar_i||_1 - B2 C kappa. So every "
    "gradient exceeds its threshold by at least 1 + B C ||Kbar_i||_1 + (B + B2) C kappa >= 1, "
    "for every instance, partition and point: the screening rule never fires and the theorem "
    "is vacuously true. (The paper's remark bounds the gradient below by the looser "
    "1 - n B2 kappa C, which hides this; its experiment in section 6.2.4 compares the gradient "
    "with +442.3, a positive threshold, which is not condition gradsvc.)")


def reproduce_T4(arr, p):
    inst = dict(K=arr["K"], y=arr["y"], C=p["C"], eta=p["eta"])
    labels = arr["labels"].astype(int)
    Kb, full, blk = solve_pair(inst, labels)
    sc = screening(inst, labels, Kb, full, blk, p.get("scale", 1.0))
    return sc["max_bad"], 1e-4 * p["C"], 1e-4 * p["C"]


def check_decomposition(rng, budget=1, scale_T3=1.0, scale_T4=1.0, out_dir=None,
                        instances=None, tol=1e-6):
    """Run T3 and T4 on the same solved pairs; returns ``[Verdict T3, Verdict T4]``.

    Adversarial part: for each instance v in {2, 3} and C, eta multiplied by {1, 4} x {1, 30}
    (T3's ratio grows with eta since B -> 0 while the values differ).  T3's premise is
    ``B1 > 0``; T4's is that the rule screens at least one point.  For T4 the smallest
    ``gradient - threshold`` over all points is recorded, with its proven lower bound."""
    t3, t4 = Tracker("T3", premise=True), Tracker("T4", premise=True)
    insts = instances if instances is not None else [
        decomposition_instance(rng) for _ in range(2 * budget)]
    uncert = 0
    screened_total, zero_points, points = 0, 0, 0
    min_excess, min_slack = np.inf, np.inf  # slack: excess minus its proven lower bound
    worst_both = worst_sub = None
    for inst in insts:
        variants = [inst] if instances is not None else [
            dict(inst, C=inst["C"] * fc, eta=inst["eta"] * fe) for fc in (1, 4) for fe in (1, 30)]
        for v_inst in variants:
            for v in ([inst.get("v", 2)] if instances is not None else (2, 3)):
                labels = kmeans_labels(v_inst["X"], v, seed=0)
                Kb, full, blk = solve_pair(v_inst, labels)
                if full[4] > tol or blk[4] > tol:
                    uncert += 1
                    continue
                arrays = dict(K=v_inst["K"], y=v_inst["y"], labels=labels)
                par = dict(C=v_inst["C"], eta=v_inst["eta"])
                w = where_of(v_inst, v=int(v))
                lhs, rhs, info = _eval_T3(v_inst, labels, Kb, full, blk, scale_T3)
                t3.record(lhs, rhs, rhs, dict(w, **info), arrays, dict(par, scale=scale_T3),
                          size=v_inst["y"].size, premise_met=info["B1"] > 0)
                if info["B1"] > 0 and rhs > 0:
                    r_sub = info["lhs_subproblem_value"] / rhs
                    worst_sub = r_sub if worst_sub is None else max(worst_sub, r_sub)
                if info["B1"] > 0 and info["rhs_both_entries"] > 0:
                    r = lhs / info["rhs_both_entries"]
                    worst_both = r if worst_both is None else max(worst_both, r)
                sc = screening(v_inst, labels, Kb, full, blk, scale_T4)
                n_s = int(sc["S"].sum())
                screened_total += n_s
                zero_points += int(sc["zero_bar"].sum())
                points += int(v_inst["y"].size)
                min_excess = min(min_excess, float(sc["excess"].min()))
                if sc["excess_bound"] is not None:
                    min_slack = min(min_slack, float((sc["excess"] - sc["excess_bound"]).min()))
                t4.record(sc["max_bad"], 1e-4 * v_inst["C"], 1e-4 * v_inst["C"],
                          dict(w, screened=n_s, fraction=sc["fraction"]),
                          arrays, dict(par, scale=scale_T4), size=v_inst["y"].size,
                          premise_met=n_s > 0)
    inc = (f"{uncert} solve pair(s) not certified to rel. gap {tol}; none certified."
           if t3.n == 0 else None)
    msg3 = f"{uncert} uncertified pair(s) skipped." if uncert else ""
    if t3.n_viol:
        msg3 += (" Why it fails: as eta grows, F* and Fbar tend to 11' and B -> 0, so the bound "
                 "tends to 0, while the two problems tend to the bias-free SVMs on K and on "
                 "Kbar, whose values differ whenever Q(pi) > 0. In the proof, the step "
                 "H(abar, F*) <= H(abar, Fbar) is unjustified (Fbar minimises Hbar(abar, .), not "
                 "H(abar, .)).")
    if worst_sub is not None:
        msg3 += (" Reading H(abar, Fbar) as the sub-problems' value Hbar(abar, Fbar) instead "
                 f"of the full objective, the worst lhs/rhs is {fmt_ratio(worst_sub)}.")
    if worst_both is not None:
        msg3 += (f" With B read as the proof uses it (both F*_ij and Fbar_ij in [B1, B2]), "
                 f"the worst lhs/rhs is {fmt_ratio(worst_both)}.")
    d4 = dict(points=points, points_with_abar_zero=zero_points, screened=screened_total,
              min_gradient_minus_threshold=min_excess if points else None,
              min_excess_over_proven_bound=min_slack if np.isfinite(min_slack) else None)
    msg4 = (f"{points} points on {t4.n} certified solve pairs, {zero_points} with abar_i = 0; "
            f"screened {screened_total}.")
    if points:
        msg4 += (f" Smallest gradient - threshold over all points: {fmt(min_excess, 4)} "
                 "(the rule needs <= 0)")
        msg4 += (f"; it exceeds its proven lower bound 1 + B C ||Kbar_i||_1 + (B + B2) C kappa "
                 f"by at least {fmt(min_slack, 3)} on every point." if np.isfinite(min_slack)
                 else ".")
    return [t3.verdict(STATEMENT_T3, out_dir, msg3.strip(), inconclusive=inc),
            t4.verdict(STATEMENT_T4, out_dir, msg4, inconclusive=inc, details=d4,
                       vacuity=T4_VACUITY,
                       headline_suffix=(f"{zero_points} points with abar_i = 0, "
                                        f"0 below the threshold; provably never met")
                       if screened_total == 0 and points else "")]
