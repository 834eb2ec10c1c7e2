"""The oracle's report (verification/oracle.py) beyond the verdict.

The informative numbers (``kkt_residual``, ``distance_to_reference``, ``dank_fast_rel_gap``),
the human-readable report (one line per check, the bracket, the reasons) and the reason of
each failed feasibility check (it must name the violated constraint), see
benchmarks/MUTATION.md.  The instances are small (n = 14) and solved to a certified relative
gap ~1e-12; every expected number is recomputed here from its definition.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dank_ref.projection import project_A, project_svr
from verification.formats import kernel_from_X
from verification.oracle import CHECKS, certify, format_report

DELTA = 1e-6  # feasibility perturbation relative to C (the tolerance is 1e-9 C sqrt(n))


def _solve(task, K, y, C, eta, tau=0.0, epsilon=None, labels=None):
    import dank_fast

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if task == "svm":
            return dank_fast.solve_svm(K, y, C=C, eta=eta, tau=tau, method="newton",
                                       tol=1e-12).alpha
        if task == "svr":
            r = dank_fast.solve_svr(K, y, C=C, epsilon=epsilon, eta=eta, tau=tau,
                                    method="newton", tol=1e-12)
            return r.extra["alpha_hat"], r.extra["alpha_check"]
        return dank_fast.solve_decomposed(K, y, C=C, eta=eta, labels=labels, method="newton",
                                          tol=1e-12).alpha


@pytest.fixture(scope="module")
def cases():
    """``task -> (inst, sol)`` for P1, P2, P3, as :func:`certify` receives them."""
    import dank_ref.certificate as rc

    rng = np.random.default_rng(7)
    X = rng.uniform(0, 1, (14, 2))
    y = np.where(X[:, 0] > X[:, 1], 1.0, -1.0)
    y[[0, 5]] *= -1
    K = kernel_from_X(X, "gaussian", sigma=0.4)
    Xr = np.linspace(-1, 1, 14)[:, None]
    yr = np.sin(3 * Xr[:, 0]) + 0.1 * rng.normal(size=14)
    Kr = kernel_from_X(Xr, "gaussian", sigma=0.5)
    labels = (X[:, 0] > 0.5).astype(np.int64)
    base = dict(epsilon=None, labels=None, n=14)
    out = {}
    inst = dict(base, task="svm", K=K, y=y, C=1.0, eta=2.0, tau=0.5)
    c = rc.svm_certificate(K, y, _solve("svm", K, y, 1.0, 2.0, 0.5), C=1.0, eta=2.0, tau=0.5)
    out["svm"] = (inst, dict(task="svm", alpha=c.alpha, bias=c.bias, F=c.F))
    inst = dict(base, task="svr", K=Kr, y=yr, C=0.8, eta=2.0, tau=0.5, epsilon=0.05)
    ah, ac = _solve("svr", Kr, yr, 0.8, 2.0, 0.5, epsilon=0.05)
    common = np.minimum(ah, ac)
    c = rc.svr_certificate(Kr, yr, ah - common, ac - common, C=0.8, epsilon=0.05, eta=2.0,
                           tau=0.5)
    out["svr"] = (inst, dict(task="svr", alpha_hat=c.alpha_hat, alpha_check=c.alpha_check,
                             bias=c.bias, F=c.F))
    inst = dict(base, task="decomposed", K=K, y=y, C=1.0, eta=2.0, tau=0.0, labels=labels)
    a = _solve("decomposed", K, y, 1.0, 2.0, labels=labels)
    c = rc.decomposed_certificate(K, y, a, C=1.0, eta=2.0, labels=labels)
    out["decomposed"] = (inst, dict(task="decomposed", alpha=c.alpha, F=c.F))
    return out


def _run(inst, sol, tol=1e-6, reference=False):
    return certify(inst, dict(dict(bias=None, F=None), **sol), tol=tol, reference=reference)


def _point(task, sol):
    if task == "svr":
        return np.concatenate([sol["alpha_hat"], sol["alpha_check"]])
    return sol["alpha"]


def _kkt_residual(inst, p):
    """``||P(p + grad h(p)) - p||`` with ``grad h`` from dank_ref's ``F(p)`` (the definition)."""
    import dank_ref.certificate as rc

    task, K, y, C = inst["task"], inst["K"], inst["y"], inst["C"]
    n = y.size
    if task == "svr":
        d = p[:n] - p[n:]
        Kw = K
    else:
        d = p * y
        Kw = K if task == "svm" else rc.block_kernel(K, inst["labels"])
    g = (rc.inner_F(Kw, d, eta=inst["eta"], tau=inst["tau"]) * Kw) @ d
    if task == "svr":
        eps = inst["epsilon"]
        return np.linalg.norm(project_svr(p + np.concatenate([y - eps - g, -y - eps + g]), C)
                              - p)
    if task == "svm":
        return np.linalg.norm(project_A(p + 1.0 - y * g, y, C) - p)
    return np.linalg.norm(np.clip(p + 1.0 - y * g, 0.0, C) - p)


# ---------------------------------------------------------------- informative numbers


@pytest.mark.parametrize("task", ["svm", "svr", "decomposed"])
def test_distance_to_reference_is_small_at_the_optimum(cases, task):
    """The reference solve (dank_fast newton, tol 1e-10) lands within 1e-4 C of the fixture's
    1e-12 solution on these small instances, and the distance is a number (an
    "unavailable: ..." string means the reference solve itself broke)."""
    inst, sol = cases[task]
    rep = _run(inst, sol, reference=True)
    dist = rep["distance_to_reference"]
    assert isinstance(dist, float), dist
    assert 0.0 <= dist <= 1e-4 * inst["C"]


@pytest.mark.parametrize("task", ["svm", "svr", "decomposed"])
def test_distance_to_reference_measures_the_distance(cases, task):
    """Moved along a feasible direction, the point's distance to the reference is the move."""
    inst, sol = cases[task]
    p = _point(task, sol)
    step = 1e-2 * inst["C"]
    s = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in sol.items()}
    part = "alpha_hat" if task == "svr" else "alpha"
    v = s[part]
    free = np.flatnonzero((v > 0.05 * inst["C"]) & (v < 0.95 * inst["C"]))
    if task == "svm":  # two free points of the same label keep y'alpha = 0
        lab = inst["y"][free]
        same = free[lab == lab[0]]
        i, k = int(same[0]), int(same[1])
    else:  # svr: two free alpha_hat keep 1'(ah - ac); P3 has no equality: one point
        i, k = int(free[0]), int(free[1])
    v[i] += step
    if task != "decomposed":
        v[k] -= step
    moved = np.linalg.norm(_point(task, s) - p)
    rep = _run(inst, dict(s, bias=None, F=None), reference=True)
    assert rep["checks"]["gap"]["status"] == "fail"  # moved off the optimum
    assert abs(rep["distance_to_reference"] - moved) <= 1e-4 * inst["C"]


@pytest.mark.parametrize("task", ["svm", "svr", "decomposed"])
def test_kkt_residual_is_the_projected_gradient_step(cases, task):
    """``kkt_residual = ||P(p + grad h) - p||``: ~0 at the optimum, recomputed at a feasible
    non-optimal point from dank_ref's F (the sign convention of grad h for each task)."""
    inst, sol = cases[task]
    rep = _run(inst, sol)
    assert 0.0 <= rep["kkt_residual"] <= 1e-6
    p = _point(task, sol)
    q = 0.5 * p  # feasible for every task (the constraints are homogeneous, the box holds)
    s = (dict(sol, alpha_hat=q[:14], alpha_check=q[14:]) if task == "svr"
         else dict(sol, alpha=q))
    rep = _run(inst, dict(s, bias=None, F=None))
    assert rep["failed"] == ["gap"]
    want = _kkt_residual(inst, q)
    assert want > 1e-3
    assert abs(rep["kkt_residual"] - want) <= 1e-9 * want


@pytest.mark.parametrize("task", ["svm", "svr"])
def test_dank_fast_rel_gap_is_reported(cases, task):
    """svm, svr: dank_fast's certificate of the same point (a number, ~0 at the optimum, equal to
    the oracle's own relative gap at a non-optimal point); P3 has none."""
    import dank_fast

    inst, sol = cases[task]
    assert "dank_fast_rel_gap" not in _run(inst, sol)  # the cross-check is optional
    rep = _run(inst, sol, reference=True)
    assert isinstance(rep["dank_fast_rel_gap"], float)
    assert abs(rep["dank_fast_rel_gap"]) <= 1e-9
    p = 0.5 * _point(task, sol)
    s = (dict(sol, alpha_hat=p[:14], alpha_check=p[14:]) if task == "svr"
         else dict(sol, alpha=p))
    rep = _run(inst, s, reference=True)
    K, y = inst["K"], inst["y"]
    if task == "svm":
        cf = dank_fast.svm_certificate(K, y, p, C=inst["C"], eta=inst["eta"], tau=inst["tau"])
    else:
        cf = dank_fast.svr_certificate(K, y, p[:14], p[14:], C=inst["C"],
                                       epsilon=inst["epsilon"], eta=inst["eta"],
                                       tau=inst["tau"])
    assert cf.rel_gap > 1e-3
    assert rep["dank_fast_rel_gap"] == pytest.approx(cf.rel_gap, rel=1e-9)


def test_p3_has_no_dank_fast_rel_gap(cases):
    inst, sol = cases["decomposed"]
    assert "dank_fast_rel_gap" not in _run(inst, sol, reference=True)


# ------------------------------------------------------------------- reasons and report


def _shift(sol, part, kind, sign, C):
    """``part``_i moved beyond its bound (kind "zero": below 0, "C": above C) by DELTA C; a free
    coordinate of the same part compensates, so that 1'(ah - ac) = 0 still holds."""
    s = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in sol.items()}
    v = s[part]
    i = int(np.flatnonzero(v <= 1e-12 * C)[0] if kind == "zero"
            else np.flatnonzero(v >= C * (1 - 1e-12))[0])
    v[i] += sign * DELTA * C
    k = int(np.flatnonzero((v > 1e-3 * C) & (v < (1 - 1e-3) * C))[0])
    v[k] -= sign * DELTA * C
    return s


@pytest.mark.parametrize("check, part, kind, sign, constraint", [
    ("alpha_hat_low", "alpha_hat", "zero", -1.0, "alpha_hat >= 0"),
    ("alpha_hat_high", "alpha_hat", "C", 1.0, "alpha_hat <= C"),
    ("alpha_check_low", "alpha_check", "zero", -1.0, "alpha_check >= 0"),
    ("alpha_check_high", "alpha_check", "C", 1.0, "alpha_check <= C"),
])
def test_svr_reason_names_the_violated_constraint(cases, check, part, kind, sign, constraint):
    """The reason of a failed svr bound says which of the four bounds is violated and by how
    much (a message naming the wrong variable or bound sends the user to the wrong place)."""
    inst, sol = cases["svr"]
    s = _shift(sol, part, kind, sign, inst["C"])
    rep = _run(inst, s)
    assert rep["failed"] == [check]
    (reason,) = rep["reasons"]
    assert reason.startswith(f"{check}: infeasible, {constraint} violated by ")
    v = rep["checks"][check]["value"]
    assert v == pytest.approx(DELTA * inst["C"], rel=1e-6)
    assert f"{v:.3g}" in reason


def test_svm_reasons_name_the_violated_constraint(cases):
    inst, sol = cases["svm"]
    y, C = inst["y"], inst["C"]
    a = sol["alpha"].copy()
    i = int(np.flatnonzero(a >= C * (1 - 1e-12))[0])
    k = int(np.flatnonzero((a > 1e-3) & (a < 1 - 1e-3) & (y == y[i]))[0])
    a[i] += DELTA
    a[k] -= DELTA
    rep = _run(inst, dict(sol, alpha=a))
    assert rep["failed"] == ["alpha_high"]
    assert rep["reasons"][0].startswith("alpha_high: infeasible, alpha <= C violated by ")
    a = sol["alpha"].copy()
    a[k] += DELTA
    rep = _run(inst, dict(sol, alpha=a))
    assert rep["failed"] == ["equality"]
    assert rep["reasons"][0].startswith("equality: infeasible, y'alpha = 0 violated by ")
    a = sol["alpha"].copy()
    j = int(np.flatnonzero((a <= 1e-12) & (y == y[k]))[0])
    a[j] -= DELTA
    a[k] += DELTA
    rep = _run(inst, dict(sol, alpha=a))
    assert rep["failed"] == ["alpha_low"]
    assert rep["reasons"][0].startswith("alpha_low: infeasible, alpha >= 0 violated by ")


def test_svr_equality_reason_names_the_svr_constraint(cases):
    """svr's equality is ``1'(ah - ac) = 0``, not P1's ``y'alpha = 0``."""
    inst, sol = cases["svr"]
    ah = sol["alpha_hat"].copy()
    ah[int(np.flatnonzero((ah > 1e-3) & (ah < 0.8 * (1 - 1e-3)))[0])] += DELTA * inst["C"]
    rep = _run(inst, dict(sol, alpha_hat=ah))
    assert rep["failed"] == ["equality"]
    assert rep["reasons"][0].startswith(
        "equality: infeasible, 1'(alpha_hat - alpha_check) = 0 violated by ")


def test_F_reason_names_the_inner_minimiser(cases):
    inst, sol = cases["svm"]
    rep = _run(inst, dict(sol, F=sol["F"] + 1e-3))
    assert rep["failed"] == ["F"]
    assert rep["reasons"][0] == (f"F: max|F - F(alpha)| = {1e-3:.3g} > "
                                 f"{rep['checks']['F']['limit']:.3g} (F(alpha) = "
                                 "J_(tau/2)(11' + Gamma), Lemma 1)")


def test_format_report_has_one_line_per_check_and_per_number(cases):
    """The report: the verdict line, one ``check`` line per check (status, and value / limit
    when evaluated), one line per other number of the report, one line per reason; the
    bookkeeping keys (certified, reasons, checks, failed, task, n, tol) are not repeated."""
    inst, sol = cases["svr"]
    s = _shift(sol, "alpha_check", "C", 1.0, inst["C"])
    rep = _run(inst, dict(s, F=None))
    text = format_report(rep)
    lines = text.split("\n")
    assert lines[0] == "verdict: NOT CERTIFIED (task svr, n = 14, tol = 1e-06)"
    check_lines = [ln for ln in lines if ln.startswith("  check ")]
    assert len(check_lines) == len(CHECKS["svr"])
    for name, line in zip(rep["checks"], check_lines, strict=True):
        ch = rep["checks"][name]
        head = f"  check {name:17s} {ch['status']}"
        if ch.get("value") is not None:
            assert line == head + f"  value {ch['value']:.3g}  limit {ch['limit']:.3g}"
        else:
            assert line == head
    assert "  check F                 not submitted" in check_lines
    info = [k for k in ("kkt_residual", "dank_fast_rel_gap", "distance_to_reference")
            if k in rep]
    assert info == ["kkt_residual"]  # no dank_fast cross-check unless asked for
    header = "  informative only, not part of the verdict:"
    keys = [ln.split(":")[0].strip() for ln in lines[1:] if not ln.startswith("  check ")
            and not ln.startswith("  reason: ") and not ln.startswith("    ") and ln != header]
    skip = {"certified", "reasons", "checks", "failed", "task", "n", "tol"}
    assert keys == [k for k in rep if k not in skip and k not in info]
    i = lines.index(header)
    assert lines[i + 1:i + 1 + len(info)] == [f"    {k}: {rep[k]}" for k in info]
    assert [ln for ln in lines if ln.startswith("  reason: ")] == [
        f"  reason: {r}" for r in rep["reasons"]]
    assert len(lines) == 1 + len(check_lines) + len(keys) + 1 + len(info) + len(rep["reasons"])
    text = format_report(_run(inst, sol, reference=True))
    assert ("  informative only, not part of the verdict (dank_fast_rel_gap, "
            "distance_to_reference: the optional cross-check by dank_fast):") in text
    assert "\n    distance_to_reference: " in text and "\n    dank_fast_rel_gap: " in text
    assert format_report(_run(inst, sol)).startswith("verdict: CERTIFIED (task svr")


def test_p3_solution_with_a_bias_is_bad_input(cases):
    """P3 (eq. (18)) has no bias: a submitted bias is a ValueError naming it, not ignored."""
    inst, sol = cases["decomposed"]
    with pytest.raises(ValueError, match="'decomposed' has no bias"):
        certify(inst, dict(sol, bias=0.25, F=None), reference=False)


def test_projection_distance_and_F_error_are_reported(cases):
    """``projection_distance = ||z - P(z)||`` (0 for a feasible point, the move to the nearest
    feasible point otherwise) and ``F_error = max|F - F(p)|`` of a submitted F."""
    inst, sol = cases["svm"]
    rep = _run(inst, dict(sol, F=sol["F"] + 2e-3))
    # a feasible point does not move (up to the projection's rounding, far below any move)
    assert rep["projection_distance"] <= 1e-14 * inst["C"] * np.sqrt(inst["n"])
    assert rep["F_error"] == pytest.approx(2e-3, rel=1e-6)
    a = sol["alpha"].copy()
    a[int(np.flatnonzero((a > 1e-3) & (a < 1 - 1e-3))[0])] += 0.3
    rep = _run(inst, dict(sol, alpha=a))
    p = project_A(a, inst["y"], inst["C"])
    assert rep["projection_distance"] == pytest.approx(float(np.linalg.norm(a - p)), rel=1e-12)
    assert rep["projection_distance"] > 0.05  # a real move, not rounding
