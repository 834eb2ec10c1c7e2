"""Projections onto the dual feasible sets (docs/MATH.md §6).

``project_A`` is checked three independent ways: feasibility, the KKT characterisation
``p = clip(z - lam y, 0, C)`` for some scalar ``lam``, and the distance reached by an
independent QP solve (cvxpy); it validates its input and refuses an unattainable target.
``project_paper`` (clip, then shift along y) is shown on explicit instances to be neither in
the box nor the nearest point. Exactness in rational arithmetic: tests/test_projection_exact.py.
"""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest
from _fuzz_inputs import bad_params, pm1_labels, positive_scalars
from _fuzz_rule import EITHER, VALUE, Verdict, labels_rule, real_array_rule, scalar_rule
from _fuzz_run import call, fuzz
from _projection_refs import bisect_projection
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dank_fast import project_A, project_box, project_paper, project_sum_box
from dank_fast.projection import repair_start
from dank_ref import certificate as refcert


def qp_projection(z: np.ndarray, y: np.ndarray, C: float) -> np.ndarray:
    """Nearest point of A by an interior-point QP solve, on a rescaled problem."""
    s = max(C, float(np.max(np.abs(z))), 1e-300)
    x = cp.Variable(z.size)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(x - z / s)), [y @ x == 0, x >= 0, x <= C / s])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert prob.status == cp.OPTIMAL, prob.status
    return np.asarray(x.value) * s


def kkt_lambda(p: np.ndarray, z: np.ndarray, y: np.ndarray, C: float, tol: float) -> float:
    """A multiplier ``lam`` with ``p = clip(z - lam y, 0, C)`` (asserts that one exists)."""
    free = (p > tol) & (p < C - tol)
    if np.any(free):
        lams = (z[free] - p[free]) * y[free]
        lam = float(np.median(lams))
        assert np.max(np.abs(lams - lam)) <= tol, "free coordinates disagree on lam"
        return lam
    # every coordinate at a bound: lam must satisfy one half-line per coordinate
    lo, hi = -np.inf, np.inf
    at0 = p <= tol
    atC = ~at0
    # p_i = 0  <=>  z_i - lam y_i <= 0  <=>  y_i lam >= z_i
    # p_i = C  <=>  z_i - lam y_i >= C  <=>  y_i lam <= z_i - C
    for i in np.flatnonzero(at0):
        if y[i] > 0:
            lo = max(lo, z[i])
        else:
            hi = min(hi, -z[i])
    for i in np.flatnonzero(atC):
        if y[i] > 0:
            hi = min(hi, z[i] - C)
        else:
            lo = max(lo, C - z[i])
    # each "at a bound" allows p_i up to tol from it, so two half-lines may miss by 2 tol
    # (Hypothesis: z = (0, ..., 1.8e-10) with p = 8.9e-11 on two coordinates, tol = 1e-10)
    assert lo <= hi + 2 * tol, f"no multiplier: lo={lo}, hi={hi}"
    if np.isfinite(lo) and np.isfinite(hi):
        return 0.5 * (lo + hi)
    return float(lo if np.isfinite(lo) else hi)


@st.composite
def projection_inputs(draw):
    n = draw(st.integers(2, 30))
    n_pos = draw(st.integers(1, n - 1))
    y = np.array([1.0] * n_pos + [-1.0] * (n - n_pos))
    perm = draw(st.permutations(range(n)))
    y = y[np.array(perm)]
    C = 10.0 ** draw(st.floats(-6, 6))
    spread = 10.0 ** draw(st.floats(-2, 4))  # up to 1e4 * C: far outside the box
    pool_size = draw(st.integers(1, n))  # small pools force duplicate entries
    pool = draw(
        st.lists(st.floats(-1.0, 1.0, allow_nan=False), min_size=pool_size, max_size=pool_size)
    )
    idx = draw(st.lists(st.integers(0, pool_size - 1), min_size=n, max_size=n))
    shift = draw(st.floats(-2.0, 2.0))
    z = (np.array(pool)[idx] * spread + shift) * C
    return z, y, C


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(projection_inputs())
def test_project_A_feasible_kkt_and_optimal(inp):
    z, y, C = inp
    n = z.size
    p = project_A(z, y, C)
    assert p.shape == z.shape
    # feasibility: box exactly (clip), hyperplane to 1e-12 relative
    assert np.all(p >= 0.0) and np.all(p <= C)
    assert abs(y @ p) <= 1e-12 * C * n
    # KKT: p = clip(z - lam y, 0, C) for one scalar lam
    scale = max(C, float(np.max(np.abs(z))))
    tol = 1e-10 * scale
    lam = kkt_lambda(p, z, y, C, tol)
    np.testing.assert_allclose(p, np.clip(z - lam * y, 0.0, C), rtol=0, atol=10 * tol)
    # optimal: an independent QP reaches the same point and the same distance
    q = qp_projection(z, y, C)
    d_p = np.sum((p - z) ** 2)
    d_q = np.sum((q - z) ** 2)
    assert d_p <= d_q * (1 + 1e-7) + 1e-14 * scale**2
    np.testing.assert_allclose(p, q, rtol=0, atol=1e-5 * scale)


@settings(max_examples=60, deadline=None)
@given(projection_inputs(), st.integers(0, 2**31 - 1))
def test_project_A_variational_inequality(inp, seed):
    """(z - p)'(q - p) <= 0 for every q in A (characterises the nearest point)."""
    z, y, C = inp
    p = project_A(z, y, C)
    rng = np.random.default_rng(seed)
    # feasible points: projections of random points, plus vertices-ish points
    scale = max(C, float(np.max(np.abs(z))))
    for _ in range(20):
        q = project_A(rng.uniform(-2 * C, 3 * C, size=z.size), y, C)
        assert (z - p) @ (q - p) <= 1e-9 * scale * C * z.size


@settings(max_examples=40, deadline=None)
@given(projection_inputs())
def test_project_A_idempotent(inp):
    z, y, C = inp
    p = project_A(z, y, C)
    p2 = project_A(p, y, C)
    np.testing.assert_allclose(p2, p, rtol=0, atol=1e-12 * C * z.size)


def test_project_A_fixes_feasible_points():
    rng = np.random.default_rng(3)
    y = np.array([1.0, 1.0, 1.0, -1.0, -1.0])
    a = np.array([0.2, 0.3, 0.0, 0.25, 0.25])  # y'a = 0, inside [0, 1]
    np.testing.assert_allclose(project_A(a, y, 1.0), a, atol=1e-15)
    assert np.all(project_A(np.zeros(5), y, 1.0) == 0.0)
    for _ in range(10):
        q = project_A(rng.normal(size=5), y, 1.0)
        np.testing.assert_allclose(project_A(q, y, 1.0), q, atol=1e-14)


def test_project_A_hand_examples():
    # docstring example
    assert project_A(np.array([1.0, 0.0]), np.array([1.0, -1.0]), C=1.0).tolist() == [0.5, 0.5]
    # z = [1, 0, 0], y = [+, +, -], C = 1: lam = 1/2, p = [1/2, 0, 1/2]
    p = project_A(np.array([1.0, 0.0, 0.0]), np.array([1.0, 1.0, -1.0]), 1.0)
    np.testing.assert_allclose(p, [0.5, 0.0, 0.5], atol=1e-15)
    # far outside the box: everything clipped at C on one side
    p = project_A(np.array([100.0, 100.0, 100.0]), np.array([1.0, -1.0, -1.0]), 2.0)
    np.testing.assert_allclose(p, [2.0, 1.0, 1.0], atol=1e-13)


def test_project_paper_leaves_the_box():
    z = np.array([1.0, 0.0, 0.0])
    y = np.array([1.0, 1.0, -1.0])
    a = project_paper(z, y, 1.0)
    # clip -> [1, 0, 0], y'a = 1, shift by y/3
    np.testing.assert_allclose(a, [2 / 3, -1 / 3, 1 / 3], atol=1e-15)
    assert abs(y @ a) <= 1e-15
    assert a.min() < 0.0  # not in A
    # it is closer to z than the true projection only because it is infeasible
    p = project_A(z, y, 1.0)
    assert np.linalg.norm(a - p) > 0.3


def test_project_paper_in_box_but_not_nearest():
    z = np.array([2.0, 0.0, 0.0])
    y = np.array([1.0, -1.0, -1.0])
    a = project_paper(z, y, 1.0)
    np.testing.assert_allclose(a, [2 / 3, 1 / 3, 1 / 3], atol=1e-15)
    assert np.all((a >= 0) & (a <= 1)) and abs(y @ a) <= 1e-15  # feasible ...
    p = project_A(z, y, 1.0)
    np.testing.assert_allclose(p, [1.0, 0.5, 0.5], atol=1e-15)
    # ... but distance^2 2 instead of the optimal 1.5
    assert np.sum((a - z) ** 2) == pytest.approx(2.0, abs=1e-14)
    assert np.sum((p - z) ** 2) == pytest.approx(1.5, abs=1e-14)


@settings(max_examples=40, deadline=None)
@given(projection_inputs())
def test_project_paper_on_hyperplane_never_closer(inp):
    z, y, C = inp
    a = project_paper(z, y, C)
    scale = max(C, float(np.max(np.abs(z))))
    assert abs(y @ a) <= 1e-12 * scale * z.size
    p = project_A(z, y, C)
    # when the paper's point is feasible it cannot be closer than the projection
    if np.all(a >= 0) and np.all(a <= C):
        assert np.sum((a - z) ** 2) >= np.sum((p - z) ** 2) * (1 - 1e-12) - 1e-20 * scale**2


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 15), st.floats(-3, 3), st.integers(0, 2**31 - 1))
def test_project_sum_box(n, logC, seed):
    rng = np.random.default_rng(seed)
    C = 10.0**logC
    z = rng.normal(size=2 * n) * C * rng.choice([0.1, 1.0, 10.0])
    ah, ac = project_sum_box(z, C)
    assert ah.shape == (n,) and ac.shape == (n,)
    assert np.all((ah >= 0) & (ah <= C) & (ac >= 0) & (ac <= C))
    assert abs(ah.sum() - ac.sum()) <= 1e-12 * C * n
    s = np.concatenate([np.ones(n), -np.ones(n)])
    q = qp_projection(z, s, C)
    scale = max(C, float(np.max(np.abs(z))))
    np.testing.assert_allclose(np.concatenate([ah, ac]), q, rtol=0, atol=1e-5 * scale)
    # idempotent
    ah2, ac2 = project_sum_box(np.concatenate([ah, ac]), C)
    np.testing.assert_allclose(
        np.concatenate([ah2, ac2]), np.concatenate([ah, ac]), atol=1e-12 * C * n
    )


def test_project_box():
    z = np.array([-1.0, 0.5, 3.0])
    np.testing.assert_array_equal(project_box(z, 2.0), [0.0, 0.5, 2.0])
    np.testing.assert_array_equal(project_box(project_box(z, 2.0), 2.0), [0.0, 0.5, 2.0])


def test_project_A_hyperplane_accuracy_relative_to_C_for_huge_z():
    y = np.array([-1.0, 1.0, -1.0, -1.0])
    C = 0.01
    p = project_A(np.full(4, 1e6), y, C)
    np.testing.assert_allclose(p, [C / 3, C, C / 3, C / 3], rtol=1e-12)
    assert abs(y @ p) <= 1e-12 * C * y.size  # observed 1.07e-10 = 1e-8 * C


@pytest.mark.filterwarnings("error")  # no division by zero at the extreme targets
@pytest.mark.parametrize("label", [1.0, -1.0])
def test_project_A_single_feasible_point(label):
    """One class (or an extreme target): the feasible set is a single vertex."""
    z = np.array([0.3, -2.0, 5.0, 0.7])
    y = np.full(4, label)
    np.testing.assert_array_equal(project_A(z, y, 1.0), np.zeros(4))
    # all labels alike and target = y'C1: every coordinate at C
    np.testing.assert_allclose(project_A(z, y, 1.0, target=4.0 * label), np.ones(4), atol=1e-15)
    # mixed labels, target = C * n_plus: plus at C, minus at 0
    ym = np.array([1.0, -1.0, 1.0, -1.0])
    np.testing.assert_allclose(project_A(z, ym, 1.0, target=2.0), [1.0, 0.0, 1.0, 0.0],
                               atol=1e-15)
    np.testing.assert_allclose(project_A(z, ym, 1.0, target=-2.0), [0.0, 1.0, 0.0, 1.0],
                               atol=1e-15)


@pytest.mark.parametrize("dtype", [np.int64, np.float32, np.longdouble])
def test_projections_compute_in_float64(dtype):
    """Every projection returns float64 (the solvers' feasibility tolerance is 1e-9 C sqrt(n),
    which float32 arithmetic cannot meet), whatever the real dtype of its input."""
    z = np.array([3, -1, 2, 7, 0, 1], dtype=dtype)
    y = np.array([1, -1, 1, -1, -1, 1], dtype=dtype)
    C = 2.5
    p = project_A(z, y, C)
    assert p.dtype == np.float64
    np.testing.assert_allclose(p, bisect_projection(z.astype(float), y.astype(float), C),
                               rtol=0, atol=1e-13)
    ah, ac = project_sum_box(z, C)
    assert ah.dtype == ac.dtype == np.float64
    assert abs(ah.sum() - ac.sum()) <= 1e-13
    assert project_box(z, C).dtype == np.float64
    assert project_paper(z, y, C).dtype == np.float64
    assert repair_start(z, y, C).dtype == np.float64


def test_project_A_float32_input_meets_the_hyperplane_in_double_precision():
    rng = np.random.default_rng(0)
    z = rng.normal(size=200).astype(np.float32)
    y = np.where(rng.random(200) < 0.5, -1.0, 1.0).astype(np.float32)
    p = project_A(z, y, 0.37)
    assert abs(float(y.astype(np.float64) @ p)) <= 1e-13


# project_A refuses bad input by name (no NaN or infeasible points)
@pytest.mark.parametrize("args, exc, match", [
    ((np.array([np.nan, 1.0]), [1.0, -1.0], 1.0), ValueError, "z contains NaN"),
    ((np.array([np.inf, 1.0]), [1.0, -1.0], 1.0), ValueError, "z contains NaN"),
    ((np.zeros(0), np.zeros(0), 1.0), ValueError, "z must have at least one entry"),
    ((np.ones((2, 2)), [1.0, -1.0], 1.0), ValueError, "z must be 1-dimensional"),
    ((["1", "2"], [1.0, -1.0], 1.0), TypeError, "z must be"),
    ((np.ones(2), [1.0, 2.0], 1.0), ValueError, "y must contain only -1 and \\+1"),
    ((np.ones(2), [1.0, -1.0, 1.0], 1.0), ValueError, "y has 3 entries but z has 2"),
    ((np.ones(2), [True, False], 1.0), TypeError, "y must be"),
    ((np.ones(2), [1.0, -1.0], -1.0), ValueError, "C must be a finite number > 0"),
    ((np.ones(2), [1.0, -1.0], 0.0), ValueError, "C must be a finite number > 0"),
    ((np.ones(2), [1.0, -1.0], "1"), TypeError, "C must be a real number"),
    ((np.ones(2), [1.0, -1.0], np.nan), ValueError, "C must be a finite number > 0"),
])
def test_project_A_validates_its_input(args, exc, match):
    with pytest.raises(exc, match=match):  # not NaN / infeasible output, IndexError, ...
        project_A(*args)


# an unattainable target is refused (not an infeasible point)
@pytest.mark.parametrize("target", [2.5, -1.5, np.nan, "0"])
def test_project_A_refuses_an_unattainable_target(target):
    y = np.array([1.0, 1.0, -1.0])  # y'a ranges over [-1, 2] for C = 1
    with pytest.raises((ValueError, TypeError), match="target"):
        project_A(np.zeros(3), y, 1.0, target=target)
    # the ends are attainable (the extreme points), also within the feasibility tolerance
    np.testing.assert_array_equal(project_A(np.zeros(3), y, 1.0, target=2.0), [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(project_A(np.zeros(3), y, 1.0, target=-1.0 - 1e-12),
                                  [0.0, 0.0, 1.0])


# fuzz: project_A against dank_ref's projection


FEAS = 1e-9


@fuzz(80)
@given(data=st.data())
def test_fuzz_project_A(data):
    """project_A(z, y, C, target): the nearest point of {y'a = target, 0 <= a <= C}."""
    bad = data.draw(bad_params("z", "y", "C", "target"))
    n = data.draw(st.integers(1, 8))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    C = data.draw(positive_scalars(lo=-6, hi=6, good="C" not in bad), label="C")
    Cf = float(C) if scalar_rule(C, "C", "pos").valid else 1.0
    z = rng.normal(size=n) * Cf * float(10.0 ** data.draw(st.integers(-3, 12)))
    if "z" in bad:
        z = data.draw(st.sampled_from([np.full(n, np.nan), np.append(z, 1.0), z[:, None],
                                       z + 0j, z.astype(str), np.zeros(0)]), label="z")
    y = data.draw(pm1_labels(n, good="y" not in bad), label="y")
    yv = np.asarray(y, dtype=float) if labels_rule(y, n, require_both=False).valid else None
    if "target" in bad:
        target = data.draw(st.sampled_from([float("nan"), "0", 10.0 * (n + 1), None]))
    else:  # attainable: y'a for some a in the box
        target = 0.0 if yv is None else float(yv @ (rng.random(n) * Cf))
    v = Verdict()
    vz = Verdict()
    fz = real_array_rule(z, "z", 1, vz)
    if fz is not None and fz.size == 0:
        vz.add("z", VALUE)
    v.merge(vz).merge(labels_rule(y, fz.size if fz is not None else None, require_both=False))
    v.merge(scalar_rule(C, "C", "pos"))
    if not isinstance(target, int | float) or isinstance(target, bool) or not math.isfinite(
            target):
        v.add("target", EITHER)
    elif yv is not None and v.valid:
        lo, hi = float(np.minimum(yv * Cf, 0).sum()), float(np.maximum(yv * Cf, 0).sum())
        if not lo - 1e-9 * Cf * n <= target <= hi + 1e-9 * Cf * n:
            v.add("target", VALUE)  # unattainable
    p, _ = call("project_A", v, lambda: project_A(z, y, C, target=target))
    if p is None:
        return
    yv = np.asarray(y, dtype=float)
    p = np.asarray(p)
    n = fz.size  # a "bad" z and a "bad" y of the same other size make a valid pair
    assert p.shape == (n,) and np.all(np.isfinite(p))
    tol = FEAS * Cf * math.sqrt(n)
    assert float(-p.min()) <= tol and float(p.max() - Cf) <= tol, "project_A left the box"
    assert abs(float(yv @ p) - target) <= tol * max(1.0, float(np.abs(fz).max()) / Cf) * 10, (
        f"project_A misses y'a = target: {float(yv @ p)} vs {target}")
    if target == 0.0:  # nearest point: no farther than dank_ref's projection (own code)
        q, _ = refcert.project_box_hyperplane(fz, yv, Cf)
        dz = float(np.linalg.norm(p - fz))
        dq = float(np.linalg.norm(q - fz))
        assert dz <= dq + 1e-9 * (dq + Cf * n), (dz, dq)


def test_project_A_kkt_helper_at_a_tiny_free_pair():
    # a Hypothesis example: two coordinates free at 8.9e-11, below the helper's tolerance
    z = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.77827941e-10])
    y = np.array([1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0])
    p = project_A(z, y, 1.0)
    lam = kkt_lambda(p, z, y, 1.0, 1e-10)
    np.testing.assert_allclose(p, np.clip(z - lam * y, 0.0, 1.0), rtol=0, atol=1e-9)
