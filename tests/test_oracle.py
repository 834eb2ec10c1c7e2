"""Every check of ``dank-verify certify``, one wrong-but-plausible solution per check.

For each task (svm = P1, svr = P2, decomposed = P3) the fixture is a small instance solved to a
certified relative gap ~1e-12 (dank_fast newton, certified by dank_ref).  Each case below
changes the solution in one plausible way (a solver that does not clip, uses the other sign
convention, J_tau instead of J_{tau/2}, ...) and asserts that *exactly* the named check fails;
the correct solution must pass.  Feasibility perturbations are small (1e-6 C, far above the
1e-9 C sqrt(n) tolerance) and keep the other constraints satisfied, so that the point's
projection is still optimal to ~1e-12: only the violated constraint may reject it.
"""

import os
import warnings

import numpy as np
import pytest

from verification.formats import (
    kernel_from_X,
    load_instance,
    load_solution,
    save_instance,
    save_solution,
)
from verification.oracle import CHECKS, EvaluationError, certify

DELTA = 1e-6  # relative to C


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


def _F(K, d, eta, tau):
    import dank_ref.certificate as rc

    return rc.inner_F(K, d, eta=eta, tau=tau)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    X = rng.uniform(0, 1, (14, 2))
    y = np.where(X[:, 0] > X[:, 1], 1.0, -1.0)
    y[[0, 5]] *= -1
    K = kernel_from_X(X, "gaussian", sigma=0.4)
    Xr = np.linspace(-1, 1, 14)[:, None]
    yr = np.sin(3 * Xr[:, 0]) + 0.1 * rng.normal(size=14)
    Kr = kernel_from_X(Xr, "gaussian", sigma=0.5)
    labels = (X[:, 0] > 0.5).astype(np.int64)
    return dict(X=X, y=y, K=K, Kr=Kr, yr=yr, labels=labels)


@pytest.fixture(scope="module")
def cases(data, tmp_path_factory):
    """The three instances read back from files, and their solutions (alpha, bias, F)."""
    import dank_ref.certificate as rc

    d = tmp_path_factory.mktemp("oracle_checks")
    out = {}
    # P1
    K, y = data["K"], data["y"]
    save_instance(d / "p1.npz", task="svm", K=K, y=y, C=1.0, eta=2.0, tau=0.5)
    inst = load_instance(d / "p1.npz")
    a = _solve("svm", K, y, 1.0, 2.0, 0.5)
    c = rc.svm_certificate(K, y, a, C=1.0, eta=2.0, tau=0.5)
    out["svm"] = (inst, dict(task="svm", alpha=c.alpha, bias=c.bias, F=c.F))
    # P2
    Kr, yr = data["Kr"], data["yr"]
    save_instance(d / "p2.json", task="svr", K=Kr, y=yr, C=0.8, epsilon=0.05, eta=2.0, tau=0.5)
    inst = load_instance(d / "p2.json")
    ah, ac = _solve("svr", Kr, yr, 0.8, 2.0, 0.5, epsilon=0.05)
    common = np.minimum(ah, ac)
    ah, ac = ah - common, ac - common
    c = rc.svr_certificate(Kr, yr, ah, ac, C=0.8, epsilon=0.05, eta=2.0, tau=0.5)
    out["svr"] = (inst, dict(task="svr", alpha_hat=c.alpha_hat, alpha_check=c.alpha_check,
                             bias=c.bias, F=c.F))
    # P3
    lab = data["labels"]
    save_instance(d / "p3.npz", task="decomposed", K=K, y=y, C=1.0, eta=2.0, labels=lab)
    inst = load_instance(d / "p3.npz")
    a = _solve("decomposed", K, y, 1.0, 2.0, labels=lab)
    c = rc.decomposed_certificate(K, y, a, C=1.0, eta=2.0, labels=lab)
    out["decomposed"] = (inst, dict(task="decomposed", alpha=c.alpha, F=c.F))
    return out


def _run(inst, sol, tol=1e-6):
    full = dict(dict(bias=None, F=None), **sol)
    return certify(inst, full, tol=tol, reference=False)


def _idx(v, C, kind, y=None, label=None):
    """First index of a coordinate at 0 / free / at C (optionally with a given label)."""
    m = np.ones(v.size, bool) if label is None else (y == label)
    sel = {"zero": v <= 1e-12 * C, "free": (v > 1e-3 * C) & (v < (1 - 1e-3) * C),
           "C": v >= C * (1 - 1e-12)}[kind] & m
    assert sel.any(), f"fixture lacks a {kind} coordinate"
    return int(np.flatnonzero(sel)[0])


# ---------------------------------------------------------------------------------------------
# wrong-but-plausible solutions: name -> (task, builder, expected failed checks)
# ---------------------------------------------------------------------------------------------
def _svm_shift(inst, sol, i_kind, i_label, delta_sign):
    """alpha_i moved by +-DELTA*C beyond its bound, y'alpha kept by a same-label free point."""
    y, C = inst["y"], inst["C"]
    a = sol["alpha"].copy()
    i = _idx(a, C, i_kind, y, i_label)
    k = _idx(a, C, "free", y, i_label)
    a[i] += delta_sign * DELTA * C
    a[k] -= delta_sign * DELTA * C
    return dict(sol, alpha=a)


def _svm_low(inst, sol, data):  # a solver that does not clip at 0
    return _svm_shift(inst, sol, "zero", -1.0, -1.0)


def _svm_high(inst, sol, data):  # ... nor at C
    return _svm_shift(inst, sol, "C", 1.0, +1.0)


def _svm_equality(inst, sol, data):  # loose equality: y'a = 1e-6 C
    a = sol["alpha"].copy()
    a[_idx(a, inst["C"], "free")] += DELTA * inst["C"]
    return dict(sol, alpha=a)


def _svm_signed(inst, sol, data):  # submits alpha * y (signed coefficients) instead of alpha
    return dict(sol, alpha=sol["alpha"] * inst["y"])


def _svm_plain(inst, sol, data):  # the plain SVM's dual (no kernel learning), F made consistent
    a = _solve("svm", inst["K"], inst["y"], inst["C"], 1e12, 0.0)
    return dict(task="svm", alpha=a, F=_F(inst["K"], a * inst["y"], inst["eta"], inst["tau"]))


def _svm_jtau(inst, sol, data):  # solved with J_tau (tau doubled), F made consistent
    a = _solve("svm", inst["K"], inst["y"], inst["C"], inst["eta"], 2 * inst["tau"])
    return dict(task="svm", alpha=a, F=_F(inst["K"], a * inst["y"], inst["eta"], inst["tau"]))


def _svm_eta_half(inst, sol, data):  # Gamma = D K D / (2 eta) convention (eta halved)
    a = _solve("svm", inst["K"], inst["y"], inst["C"], inst["eta"] / 2, inst["tau"])
    return dict(task="svm", alpha=a)


def _svm_bias_sign(inst, sol, data):  # decision f = (F o K)(a y) - b
    assert abs(sol["bias"]) > 0.05
    return dict(sol, bias=-sol["bias"])


def _svm_F_jtau(inst, sol, data):
    return dict(sol, F=_F(inst["K"], sol["alpha"] * inst["y"], inst["eta"], 2 * inst["tau"]))


def _svm_F_unsigned(inst, sol, data):  # Gamma built from alpha instead of alpha * y
    return dict(sol, F=_F(inst["K"], sol["alpha"], inst["eta"], inst["tau"]))


def _svm_F_2eta(inst, sol, data):  # Gamma = D K D / (2 eta)
    return dict(sol, F=_F(inst["K"], sol["alpha"] * inst["y"], inst["eta"] / 2, inst["tau"]))


def _svm_F_no_ones(inst, sol, data):  # J_{tau/2}(Gamma): the centering 11' forgotten
    d = sol["alpha"] * inst["y"]
    M = np.outer(d, d) * inst["K"] / (4 * inst["eta"])
    lam, U = np.linalg.eigh(M)
    return dict(sol, F=(U * np.maximum(lam - inst["tau"] / 2, 0)) @ U.T)


def _svr_part(sol, part, kind, C):
    return _idx(sol[part], C, kind)


def _svr_shift(inst, sol, part, kind, sign):
    """``part``_i moved beyond its bound by DELTA*C; 1'(ah - ac) kept by a free coordinate."""
    C = inst["C"]
    s = {k: v.copy() for k, v in sol.items() if isinstance(v, np.ndarray)}
    i = _svr_part(sol, part, kind, C)
    k = _svr_part(sol, part, "free", C)
    s[part][i] += sign * DELTA * C
    s[part][k] -= sign * DELTA * C
    return dict(sol, **s)


def _svr_hat_low(inst, sol, data):
    return _svr_shift(inst, sol, "alpha_hat", "zero", -1.0)


def _svr_hat_high(inst, sol, data):
    return _svr_shift(inst, sol, "alpha_hat", "C", 1.0)


def _svr_check_low(inst, sol, data):
    return _svr_shift(inst, sol, "alpha_check", "zero", -1.0)


def _svr_check_high(inst, sol, data):
    return _svr_shift(inst, sol, "alpha_check", "C", 1.0)


def _svr_equality(inst, sol, data):  # loose 1'(ah - ac) = 1e-6 C
    ah = sol["alpha_hat"].copy()
    ah[_idx(ah, inst["C"], "free")] += DELTA * inst["C"]
    return dict(sol, alpha_hat=ah)


def _svr_swapped(inst, sol, data):  # b = ac - ah convention; F(b) = F(-b) so F still matches
    return dict(task="svr", alpha_hat=sol["alpha_check"], alpha_check=sol["alpha_hat"],
                F=sol["F"])


def _svr_common(inst, sol, data):  # same b = ah - ac but ah, ac both > 0 somewhere
    ah, ac = sol["alpha_hat"].copy(), sol["alpha_check"].copy()
    room = (ah < 0.5 * inst["C"]) & (ac < 0.5 * inst["C"])
    ah[room] += 0.1 * inst["C"]
    ac[room] += 0.1 * inst["C"]
    return dict(task="svr", alpha_hat=ah, alpha_check=ac, F=sol["F"])


def _svr_paper_target_sign(inst, sol, data):  # solved for -y (y - f instead of f - y)
    ah, ac = _solve("svr", inst["K"], -inst["y"], inst["C"], inst["eta"], inst["tau"],
                    epsilon=inst["epsilon"])
    return dict(task="svr", alpha_hat=ah, alpha_check=ac)


def _svr_bias_sign(inst, sol, data):
    return dict(sol, bias=-sol["bias"] + (0.05 if abs(sol["bias"]) < 0.025 else 0.0))


def _svr_F_jtau(inst, sol, data):
    b = sol["alpha_hat"] - sol["alpha_check"]
    return dict(sol, F=_F(inst["K"], b, inst["eta"], 2 * inst["tau"]))


def _svr_F_sum(inst, sol, data):  # Gamma from ah + ac instead of ah - ac
    b = sol["alpha_hat"] + sol["alpha_check"]
    return dict(sol, F=_F(inst["K"], b, inst["eta"], inst["tau"]))


def _p3_low(inst, sol, data):
    a = sol["alpha"].copy()
    a[_idx(a, inst["C"], "zero")] = -DELTA * inst["C"]
    return dict(sol, alpha=a)


def _p3_high(inst, sol, data):
    a = sol["alpha"].copy()
    a[_idx(a, inst["C"], "C")] += DELTA * inst["C"]
    return dict(sol, alpha=a)


def _p3_ignores_labels(inst, sol, data):  # P3 on K, not Kbar; F made consistent with Kbar
    a = _solve("decomposed", inst["K"], inst["y"], inst["C"], inst["eta"],
               labels=np.zeros(inst["n"], np.int64))
    Kb = inst["K"] * (inst["labels"][:, None] == inst["labels"][None, :])
    return dict(task="decomposed", alpha=a, F=_F(Kb, a * inst["y"], inst["eta"], 0.0))


def _p3_with_bias_constraint(inst, sol, data):  # the P1 solution (y'a = 0) of Kbar
    Kb = inst["K"] * (inst["labels"][:, None] == inst["labels"][None, :])
    a = _solve("svm", Kb, inst["y"], inst["C"], inst["eta"], 0.0)
    return dict(task="decomposed", alpha=a)


def _p3_F_block(inst, sol, data):  # Lemma 5 as printed: block-diagonal Fbar
    same = inst["labels"][:, None] == inst["labels"][None, :]
    return dict(sol, F=sol["F"] * same)


def _p3_F_on_K(inst, sol, data):  # F(alpha) computed on K instead of Kbar
    return dict(sol, F=_F(inst["K"], sol["alpha"] * inst["y"], inst["eta"], 0.0))


WRONG = {
    "svm_alpha_low": ("svm", _svm_low, ["alpha_low"]),
    "svm_alpha_high": ("svm", _svm_high, ["alpha_high"]),
    "svm_equality": ("svm", _svm_equality, ["equality"]),
    "svm_signed_alpha": ("svm", _svm_signed, ["alpha_low", "equality"]),
    "svm_plain_svm": ("svm", _svm_plain, ["gap"]),
    "svm_J_tau": ("svm", _svm_jtau, ["gap"]),
    "svm_eta_half": ("svm", _svm_eta_half, ["gap"]),
    "svm_bias_sign": ("svm", _svm_bias_sign, ["bias"]),
    "svm_F_J_tau": ("svm", _svm_F_jtau, ["F"]),
    "svm_F_alpha_not_alpha_y": ("svm", _svm_F_unsigned, ["F"]),
    "svm_F_2eta": ("svm", _svm_F_2eta, ["F"]),
    "svm_F_without_11": ("svm", _svm_F_no_ones, ["F"]),
    "svr_alpha_hat_low": ("svr", _svr_hat_low, ["alpha_hat_low"]),
    "svr_alpha_hat_high": ("svr", _svr_hat_high, ["alpha_hat_high"]),
    "svr_alpha_check_low": ("svr", _svr_check_low, ["alpha_check_low"]),
    "svr_alpha_check_high": ("svr", _svr_check_high, ["alpha_check_high"]),
    "svr_equality": ("svr", _svr_equality, ["equality"]),
    "svr_ac_minus_ah": ("svr", _svr_swapped, ["gap"]),
    "svr_common_part": ("svr", _svr_common, ["gap"]),
    "svr_target_sign": ("svr", _svr_paper_target_sign, ["gap"]),
    "svr_bias_sign": ("svr", _svr_bias_sign, ["bias"]),
    "svr_F_J_tau": ("svr", _svr_F_jtau, ["F"]),
    "svr_F_ah_plus_ac": ("svr", _svr_F_sum, ["F"]),
    "p3_alpha_low": ("decomposed", _p3_low, ["alpha_low"]),
    "p3_alpha_high": ("decomposed", _p3_high, ["alpha_high"]),
    "p3_ignores_labels": ("decomposed", _p3_ignores_labels, ["gap"]),
    "p3_with_bias_constraint": ("decomposed", _p3_with_bias_constraint, ["gap"]),
    "p3_F_block_diagonal": ("decomposed", _p3_F_block, ["F"]),
    "p3_F_on_K": ("decomposed", _p3_F_on_K, ["F"]),
}


@pytest.mark.parametrize("task", ["svm", "svr", "decomposed"])
def test_correct_solution_passes_every_check(cases, task):
    inst, sol = cases[task]
    rep = _run(inst, sol)
    assert rep["certified"] and rep["failed"] == [] and rep["reasons"] == []
    assert [k for k in CHECKS[task] if rep["checks"][k]["status"] != "pass"] == []
    assert 0 <= rep["rel_gap"] <= 1e-11
    rep = _run(inst, {k: v for k, v in sol.items() if k not in ("bias", "F")})
    assert rep["certified"]
    assert rep["checks"]["F"]["status"] == "not submitted"


@pytest.mark.parametrize("name", sorted(WRONG))
def test_each_check_rejects_its_wrong_solution(cases, data, name):
    task, build, expected = WRONG[name]
    inst, sol = cases[task]
    bad = build(inst, sol, data)
    rep = _run(inst, bad)
    assert rep["failed"] == expected, (rep["failed"], rep["reasons"])
    assert not rep["certified"]
    assert len(rep["reasons"]) == len(expected)
    for check, reason in zip(expected, rep["reasons"], strict=True):
        assert reason.startswith(f"{check}:")


def test_every_check_has_a_wrong_solution():
    covered = {(task, c) for task, _, exp in WRONG.values() for c in exp}
    assert covered == {(t, c) for t, cs in CHECKS.items() for c in cs}


def test_infeasible_point_is_judged_only_by_feasibility(cases, data):
    """An infeasible point's gap, bias and F are reported at its projection, not judged."""
    inst, sol = cases["svm"]
    a = sol["alpha"].copy()
    a[_idx(a, 1.0, "free")] += 0.3  # far outside: its projection is not optimal either
    rep = _run(inst, dict(sol, alpha=a, bias=-sol["bias"]))
    assert rep["failed"] == ["equality"]
    assert {rep["checks"][k]["status"] for k in ("gap", "bias", "F")} == {"not evaluated"}
    assert "nearest feasible point" in rep["evaluated_at"]
    assert rep["checks"]["gap"]["value"] > 1e-6  # the projection is far from optimal


def test_p3_needs_no_bias_constraint(cases):
    inst, sol = cases["decomposed"]
    assert abs(inst["y"] @ sol["alpha"]) > 1e-3  # a P1 oracle would call this infeasible
    assert _run(inst, sol)["certified"]


@pytest.mark.parametrize("task", ["svm", "svr", "decomposed"])
def test_feasibility_tolerance_is_relative_to_C(cases, task):
    """validity.md: violation <= 1e-9 C sqrt(n); half of it passes, twice it fails, at C = 1e-3
    and 1e3."""
    inst0, sol0 = cases[task]
    n = inst0["n"]
    for c in (1e-3, 1e3):
        # exact rescaling law: (K / c, C c, eta c) has the solution alpha c, same bias and F
        inst = dict(inst0, K=inst0["K"] / c, C=inst0["C"] * c, eta=inst0["eta"] * c)
        sol = {k: (v * c if k.startswith("alpha") else v) for k, v in sol0.items()}
        C = inst["C"]
        tol = 1e-9 * C * np.sqrt(n)
        part = "alpha_hat" if task == "svr" else "alpha"
        name = "alpha_hat_high" if task == "svr" else "alpha_high"
        for factor, ok in ((0.5, True), (2.0, False)):
            s = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in sol.items()}
            i = _idx(s[part], C, "C")
            s[part][i] += factor * tol
            if task == "svm":  # keep y'a = 0 with a same-label free coordinate
                s[part][_idx(s[part], C, "free", inst["y"], inst["y"][i])] -= factor * tol
            elif task == "svr":
                s[part][_idx(s[part], C, "free")] -= factor * tol
            rep = _run(inst, s)
            assert rep["certified"] is ok, (c, factor, rep["reasons"])
            assert rep["failed"] == ([] if ok else [name])


@pytest.mark.parametrize("task", ["svm", "svr", "decomposed"])
def test_bracket_matches_the_packages_and_scales_with_C(cases, task):
    """The oracle's bracket is dank_ref's/dank_fast's, multiplied back by C exactly."""
    import dank_fast

    inst0, sol0 = cases[task]
    base = _run(inst0, sol0)
    if task == "svm":
        f = dank_fast.svm_certificate(inst0["K"], inst0["y"], sol0["alpha"], C=inst0["C"],
                                      eta=inst0["eta"], tau=inst0["tau"])
        assert abs(base["lower"] - f.lower) <= 1e-12 * abs(f.lower)
        assert abs(base["gap"] - f.gap) <= 1e-12 * abs(f.lower)
    for c in (1e-4, 1e4):
        inst = dict(inst0, K=inst0["K"] / c, C=inst0["C"] * c, eta=inst0["eta"] * c)
        sol = {k: (v * c if k.startswith("alpha") else v) for k, v in sol0.items()}
        rep = _run(inst, sol)
        assert rep["certified"], rep["reasons"]
        assert abs(rep["lower"] - c * base["lower"]) <= 1e-10 * abs(c * base["lower"])
        assert rep["upper"] >= rep["lower"]
        assert abs(rep["rel_gap"] - base["rel_gap"]) <= 1e-10


@pytest.mark.parametrize("task", ["svm", "svr", "decomposed"])
def test_wrong_solutions_stay_wrong_after_rescaling(cases, data, task):
    """The gap and bias checks are relative: a wrong gap / bias is rejected at any scale."""
    inst0, sol0 = cases[task]
    names = [k for k, (t, _, exp) in WRONG.items() if t == task and exp in (["gap"], ["bias"])]
    for name in names:
        _, build, expected = WRONG[name]
        bad = build(inst0, sol0, data)
        for c in (1e-4, 1e4):
            inst = dict(inst0, K=inst0["K"] / c, C=inst0["C"] * c, eta=inst0["eta"] * c)
            s = {k: (v * c if k.startswith("alpha") else v) for k, v in bad.items()}
            assert _run(inst, s)["failed"] == expected, (name, c)


def test_relative_gap_is_on_the_svm_side_scale():
    """rel_gap = gap / 1'a (svm, P3) and gap / max(|b'y|, 1'(ah + ac), C) (svr), not gap / |h|:
    with eta = 1e6 the objective (1e5) dwarfs 1'a (~6), and a point whose gap is 1e-4 of 1'a
    but 1e-9 of the objective is not certified at tol 1e-6."""
    import os

    from verification.golden import GOLDEN_DIR

    inst = load_instance(os.path.join(GOLDEN_DIR, "p1_eta_1e6_instance.npz"))
    sol = load_solution(os.path.join(GOLDEN_DIR, "p1_eta_1e6_solution.npz"), inst["n"])
    a, y = sol["alpha"].copy(), inst["y"]
    i, k = _idx(a, inst["C"], "C", y, 1.0), _idx(a, inst["C"], "free", y, -1.0)
    a[i] -= 1e-3 * inst["C"]  # y'a kept: one point of each class moved by the same amount
    a[k] -= 1e-3 * inst["C"]
    rep = _run(inst, dict(task="svm", alpha=a))
    assert rep["scale"] == np.sum(a) and rep["rel_gap"] == rep["gap"] / np.sum(a)
    assert rep["gap"] / abs(rep["lower"]) < 1e-6 < rep["rel_gap"]
    assert rep["failed"] == ["gap"]
    inst = load_instance(os.path.join(GOLDEN_DIR, "p2_basic_instance.npz"))
    sol = load_solution(os.path.join(GOLDEN_DIR, "p2_basic_solution.npz"), inst["n"])
    rep = _run(inst, sol)
    b = sol["alpha_hat"] - sol["alpha_check"]
    # P2's scale is in the objective's units (docs/MATH.md): the three terms of the saddle value
    # at b, with F(b) = J_{tau/2}(11' + B K B / (4 eta)) computed here by a dense eigh
    K, y, n = inst["K"], inst["y"], inst["n"]
    lam, V = np.linalg.eigh(np.ones((n, n)) + np.outer(b, b) * K / (4 * inst["eta"]))
    F = (V * np.maximum(lam - inst["tau"] / 2, 0.0)) @ V.T
    terms = (abs(b @ y) + inst["epsilon"] * np.sum(sol["alpha_hat"] + sol["alpha_check"])
             + b @ (F * K) @ b)
    assert rep["scale"] == pytest.approx(max(terms, inst["C"] * (y.max() - y.min()) / 2),
                                         rel=1e-10)
    inst = load_instance(os.path.join(GOLDEN_DIR, "p2_inside_tube_instance.npz"))
    sol = load_solution(os.path.join(GOLDEN_DIR, "p2_inside_tube_solution.npz"), inst["n"])
    y = inst["y"]  # a* = 0: every term vanishes, the floor C (max y - min y) / 2 remains
    assert _run(inst, sol)["scale"] == pytest.approx(inst["C"] * (y.max() - y.min()) / 2,
                                                     rel=1e-12)


def test_tol_decides_the_gap_check(cases):
    """A point with relative gap between 1e-10 and 1e-6 passes at tol 1e-6, fails at 1e-10."""
    inst, sol = cases["svm"]
    a = sol["alpha"].copy()
    y = inst["y"]
    i, k = _idx(a, 1.0, "zero", y, 1.0), _idx(a, 1.0, "free", y, 1.0)
    a[i] += 1e-7
    a[k] -= 1e-7  # y'a unchanged, feasible, slightly suboptimal: a coordinate at 0 moved
    # against its reduced gradient, so the gap is first order (two free coordinates moved
    # along y would lose only second order at an exactly stationary point)
    rep = _run(inst, dict(task="svm", alpha=a))
    assert 1e-10 < rep["rel_gap"] < 1e-6
    assert rep["certified"]
    rep = _run(inst, dict(task="svm", alpha=a), tol=1e-10)
    assert rep["failed"] == ["gap"]


@pytest.mark.parametrize("task", ["svm", "svr"])
def test_bias_check_is_the_gap_at_the_submitted_bias(cases, task):
    """Its value is (q + C loss(bias) - lin) / scale (docs/MATH.md §5), recomputed here from
    the submitted F; biases whose gap is 0.5 tol pass and 2 tol fail."""
    inst, sol = cases[task]
    y, C, K = inst["y"], inst["C"], inst["K"]
    if task == "svm":
        d, lin = sol["alpha"] * y, np.sum(sol["alpha"])

        def loss(f):
            return np.sum(np.maximum(0.0, 1.0 - y * f))
    else:
        d = sol["alpha_hat"] - sol["alpha_check"]
        lin = d @ y - inst["epsilon"] * np.sum(sol["alpha_hat"] + sol["alpha_check"])

        def loss(f):
            return np.sum(np.maximum(0.0, np.abs(y - f) - inst["epsilon"]))
    g = (sol["F"] * K) @ d
    scale = _run(inst, sol)["scale"]

    def value(b):
        return (d @ g + C * loss(g + b) - lin) / scale

    for t in (1e-3, -1e-3):
        rep = _run(inst, dict(sol, bias=sol["bias"] + t))
        assert rep["checks"]["bias"]["value"] == pytest.approx(value(sol["bias"] + t), rel=1e-9)
    tol = 1e-6
    for target, ok in ((0.5 * tol, True), (2 * tol, False)):
        lo, hi = 0.0, 1.0  # bisect the shift t >= 0 with value(b + t) = target
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if value(sol["bias"] + mid) < target else (lo, mid)
        rep = _run(inst, dict(sol, bias=sol["bias"] + lo), tol=tol)
        assert rep["failed"] == ([] if ok else ["bias"])


def test_F_tolerance(cases):
    inst, sol = cases["svm"]
    scale = max(1.0, float(np.max(np.abs(sol["F"]))))
    F = sol["F"].copy()
    F[0, 1] += 0.5e-6 * scale
    assert _run(inst, dict(sol, F=F))["certified"]
    F[0, 1] += 1.5e-6 * scale
    assert _run(inst, dict(sol, F=F))["failed"] == ["F"]


def test_submitted_bias_inside_the_optimal_set_passes(cases):
    """P2 with a* = 0: every bias with |y - bias| <= eps everywhere is optimal."""
    inst, _ = cases["svr"]
    y = inst["y"]
    inst = dict(inst, epsilon=float(np.max(np.abs(y))) + 1.0)
    z = np.zeros(inst["n"])
    for bias, ok in ((0.0, True), (0.9, True), (3.0, False)):
        rep = _run(inst, dict(task="svr", alpha_hat=z, alpha_check=z, bias=bias))
        assert rep["certified"] is ok
        assert rep["failed"] == ([] if ok else ["bias"])


# ---------------------------------------------------------------------------------------------
# bad input and failures to evaluate
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("tol", [0.0, -1.0, float("nan"), float("inf"), True, "1e-6"])
def test_bad_tol(cases, tol):
    inst, sol = cases["svm"]
    with pytest.raises((ValueError, TypeError), match="tol"):
        certify(inst, dict(sol), tol=tol, reference=False)


def test_task_and_size_mismatch_are_bad_input(cases):
    inst, _ = cases["svm"]
    _, sol_r = cases["svr"]
    with pytest.raises(ValueError, match="task 'svr'.*task 'svm'"):
        certify(inst, dict(sol_r), reference=False)
    _, sol = cases["svm"]
    with pytest.raises(ValueError, match="n = 14"):
        certify(inst, dict(sol, alpha=sol["alpha"][:5], F=None), reference=False)


def test_dank_ref_moving_the_point_is_an_evaluation_error(cases, monkeypatch):
    import dank_ref.certificate as rc

    inst, sol = cases["svm"]
    real = rc.svm_certificate

    def moved(K, y, a, **kw):
        c = real(K, y, a, **kw)
        c.alpha = c.alpha.copy()
        c.alpha[0] = 0.5 * c.alpha[0] + 0.25
        return c

    monkeypatch.setattr(rc, "svm_certificate", moved)
    with pytest.raises(EvaluationError, match="other than"):
        _run(inst, sol)


def test_lower_above_upper_is_an_evaluation_error(cases, monkeypatch):
    import dank_ref.certificate as rc

    inst, sol = cases["decomposed"]
    real = rc.decomposed_certificate

    def contradicts(*args, **kw):
        c = real(*args, **kw)
        c.gap = -1e-3 * c.scale
        return c

    monkeypatch.setattr(rc, "decomposed_certificate", contradicts)
    with pytest.raises(EvaluationError, match="inconsistent certificate"):
        _run(inst, sol)


def test_dank_ref_refusal_is_an_evaluation_error(cases, monkeypatch):
    import dank_ref.certificate as rc

    inst, sol = cases["svr"]

    def refuse(*args, **kw):
        raise ValueError("K is identically zero")

    monkeypatch.setattr(rc, "svr_certificate", refuse)
    with pytest.raises(EvaluationError, match="dank_ref cannot certify.*identically zero"):
        _run(inst, sol)


def test_files_round_trip_through_the_oracle(cases, tmp_path):
    """The same verdicts when the solution goes through a file (npz and JSON)."""
    for task in ("svm", "svr", "decomposed"):
        inst, sol = cases[task]
        for ext in ("npz", "json"):
            p = tmp_path / f"{task}.{ext}"
            save_solution(p, **sol)
            back = load_solution(p, inst["n"])
            assert _run(inst, back)["certified"]


# ---------------------------------------------------------------------------------------------
# the upper bound after a Newton step of the fixed-F problem (verification/_upper.py)
# ---------------------------------------------------------------------------------------------
def _golden_pair(name):
    from verification.golden import GOLDEN_DIR

    inst = load_instance(os.path.join(GOLDEN_DIR, f"{name}_instance.npz"))
    sol = load_solution(os.path.join(GOLDEN_DIR, f"{name}_solution.npz"), inst["n"])
    return inst, sol


def _nudged(task, sol, y, C, rel, seed):
    """The golden point moved by ``rel * C`` on its free coordinates, kept feasible."""
    rng = np.random.default_rng(seed)
    sol = dict(sol)
    if task == "svr":
        b = sol["alpha_hat"] - sol["alpha_check"]
        free = np.flatnonzero((np.abs(b) > 1e-6 * C) & (np.abs(b) < C * (1 - 1e-6)))
        step = rng.uniform(-1, 1, free.size) * rel * C
        step -= step.mean()
        b[free] += step
        sol["alpha_hat"], sol["alpha_check"] = np.maximum(b, 0.0), np.maximum(-b, 0.0)
        return sol
    a = sol["alpha"].copy()
    free = np.flatnonzero((a > 1e-6 * C) & (a < C * (1 - 1e-6)))
    step = rng.uniform(-1, 1, free.size) * rel * C
    if task == "svm":
        step -= y[free] * (y[free] @ step) / free.size
    a[free] += step
    sol["alpha"] = a
    return sol


@pytest.mark.parametrize("name", ["p1_basic", "p2_basic", "p3_one_class_per_cluster"])
@pytest.mark.parametrize("rel", [1e-6, 1e-4, 1e-2])
def test_the_stepped_upper_bound_stays_above_the_optimum(name, rel):
    """Near the optimum and far from it, the dense route's upper bound is never below ``v*``
    (dank_ref's conic solve, certified to 1e-9), and never above the bound at the point."""
    import dank_ref

    inst, sol = _golden_pair(name)
    task, y, C = inst["task"], inst["y"], inst["C"]
    kw = dict(C=C, eta=inst["eta"])
    if task == "svm":
        ref = dank_ref.solve_svm(inst["K"], y, tau=inst["tau"], tol=1e-9, **kw)
    elif task == "svr":
        ref = dank_ref.solve_svr(inst["K"], y, tau=inst["tau"], epsilon=inst["epsilon"],
                                 tol=1e-9, **kw)
    else:
        ref = dank_ref.solve_decomposed(inst["K"], y, labels=inst["labels"], tol=1e-9, **kw)
    for seed in range(3):
        rep = _run(inst, _nudged(task, sol, y, C, rel, seed))
        assert rep["lower"] <= ref.upper + 1e-12 * abs(ref.upper)
        assert rep["upper"] >= ref.lower - 1e-12 * abs(ref.lower)
        assert rep["upper"] <= rep["upper_at_point"]


def test_a_point_whose_value_is_within_tol_is_certified_by_the_stepped_bound():
    """P3 with one class per cluster, the golden point moved by 1e-5 C: the primal at the
    point leaves a relative gap above 1e-6 (a first-order bound), the Newton step of the
    fixed-F problem certifies it, and the report says which bound decided."""
    inst, sol = _golden_pair("p3_one_class_per_cluster")
    rep = _run(inst, _nudged("decomposed", sol, inst["y"], inst["C"], 1e-5, 0))
    assert (rep["upper_at_point"] - rep["lower"]) / rep["scale"] > 1e-6
    assert rep["certified"], rep["reasons"]
    assert rep["upper_from"] == "the primal after a Newton step of the fixed-F problem"
