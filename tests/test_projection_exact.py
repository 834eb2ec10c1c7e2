"""The projections are exact: compared with references computed here independently of
:mod:`dank_fast.projection` (plain bisection to the last bit, or rational arithmetic), far
outside the box, with ties, and for the residual repair ``_restore_equality`` and the warm
start's ``repair_start`` (SPEC, "Projection onto A").
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from _projection_refs import bisect_projection, exact_projection

from dank_fast import project_A
from dank_fast.projection import _restore_equality, repair_start


def svc_like_start(rng, n, C, support):
    """A warm start like a plain SVM's dual: support ``S`` only, feasible to about 1e-4 C."""
    y = np.where(np.arange(n) % 3 == 0, -1.0, 1.0)
    z = np.zeros(n)
    z[support] = rng.uniform(0.05 * C, C, size=support.size)
    z[support[:2]] = C  # bound support vectors
    # make it nearly feasible, then perturb like a solver tolerance would
    pos, neg = support[y[support] > 0], support[y[support] < 0]
    z[neg] *= z[pos].sum() / z[neg].sum()
    z = np.minimum(z, C)
    z[support] += rng.normal(scale=1e-4 * C, size=support.size)
    return z, y


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("C", [1e-3, 1.0, 50.0])
def test_repair_start_keeps_zeros_and_projects_on_the_support(seed, C):
    """Warm start with both classes on its support S: the nearest point of A with a = 0 off S.

    Projecting on the whole set would spread a shift over every zero of one class (thousands of
    spurious support vectors at scale); repair_start must keep them at exactly zero.
    """
    rng = np.random.default_rng(seed)
    n = 30
    S = np.sort(rng.choice(n, size=12, replace=False))
    z0, y = svc_like_start(rng, n, C, S)
    S = np.flatnonzero(np.clip(z0, 0.0, C) > 0)
    assert np.unique(y[S]).size == 2
    a = repair_start(z0, y, C)
    assert a.dtype == np.float64 and a.shape == (n,)
    off = np.setdiff1d(np.arange(n), S)
    assert np.all(a[off] == 0.0), "zeros of the start must stay zero"
    assert np.all(a >= 0.0) and np.all(a <= C)
    assert abs(y @ a) <= 1e-12 * C * np.sqrt(n)
    ref = np.zeros(n)
    ref[S] = bisect_projection(np.clip(z0[S], 0.0, C), y[S], C)
    np.testing.assert_allclose(a, ref, rtol=0, atol=1e-12 * C)
    # and it differs from the full projection, which moves zero coordinates
    full = project_A(np.clip(z0, 0.0, C), y, C)
    assert np.count_nonzero(full[off]) > 0


@pytest.mark.parametrize("cls", [1.0, -1.0])
def test_repair_start_one_class_support_uses_the_full_projection(cls):
    """Support of one class only: no feasible point lives on S except 0, so project on all of A."""
    rng = np.random.default_rng(7)
    n, C = 10, 2.0
    y = np.array([1.0, -1.0] * 5)
    z0 = np.zeros(n)
    idx = np.flatnonzero(y == cls)[:3]
    z0[idx] = rng.uniform(0.5, 1.5, size=3)
    z0[idx[0]] = 3.0 * C  # above the box: clipped first
    z0[np.flatnonzero(y != cls)[:2]] = -0.5  # below the box: clipped to 0 first
    a = repair_start(z0, y, C)
    ref = bisect_projection(np.clip(z0, 0.0, C), y, C)
    np.testing.assert_allclose(a, ref, rtol=0, atol=1e-12 * C)
    assert abs(y @ a) <= 1e-12 * C * n and a.min() >= 0.0 and a.max() <= C
    assert np.count_nonzero(a[y != cls]) > 0  # the other class carries the balance
    assert a.sum() > 0.0


def test_repair_start_clips_before_projecting():
    """Entries above C or below 0 are clipped first (then the support is where clip > 0)."""
    y = np.array([1.0, 1.0, -1.0, -1.0, 1.0])
    C = 1.0
    z0 = np.array([5.0, -3.0, 0.5, 0.5, 0.0])
    a = repair_start(z0, y, C)
    # clip -> [1, 0, .5, .5, 0]: support {0, 2, 3}, already feasible: unchanged
    np.testing.assert_allclose(a, [1.0, 0.0, 0.5, 0.5, 0.0], rtol=0, atol=1e-15)
    assert np.all(repair_start(np.zeros(5), y, C) == 0.0)


def _targets(y, C):
    npos, nneg = int(np.sum(y > 0)), int(np.sum(y < 0))
    return [0.0, 0.3 * C, -0.7 * C, C * npos, -C * nneg, 0.5 * C * (npos - nneg)]


@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("seed", range(8))
def test_project_A_onto_a_shifted_hyperplane(seed):
    """``{y'a = target, box}`` (the Newton step on a free subset): nearest point, exactly."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 12))
    y = rng.choice([-1.0, 1.0], size=n)
    C = float(10.0 ** rng.uniform(-3, 3))
    for target in _targets(y, C):
        lo, hi = -C * np.sum(y < 0), C * np.sum(y > 0)
        if not lo <= target <= hi:
            continue
        z = rng.normal(scale=2 * C, size=n) + rng.choice([0.0, C], size=n)
        p = project_A(z, y, C, target=target)
        assert np.all(p >= 0.0) and np.all(p <= C)
        assert abs(y @ p - target) <= 1e-12 * C * n
        np.testing.assert_allclose(p, bisect_projection(z, y, C, target), rtol=0,
                                   atol=1e-11 * max(C, float(np.abs(z).max())))


def far_cases(seed, count):
    """Points up to 1e20 C away from the box, distinct coordinates (no ties), any target."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n = int(rng.integers(2, 10))
        y = rng.choice([-1.0, 1.0], size=n)
        C = float(10.0 ** rng.choice([-95, -30, -10, -3, 0, 3]))
        s = C * float(10.0 ** rng.uniform(-1, 20))
        z = rng.normal(scale=s, size=n) + rng.choice([0.0, C, 1.0], size=n) * rng.random(n)
        lo, hi = -C * np.sum(y < 0), C * np.sum(y > 0)
        target = 0.0
        if rng.random() < 0.4:
            target = float(rng.choice([lo, hi, rng.uniform(lo, hi)]))
        yield z, y, C, target


@pytest.mark.parametrize("seed", range(4))
def test_project_A_is_exact_far_outside_the_box(seed):
    """``|z| >> C`` (a gradient step of length ``>> C``): ``z_i - C`` rounds to ``z_i`` and the
    breakpoints collapse, yet the result is the exact projection (to ``1e-12 C``) and lies in the
    box exactly -- the regime that the residual repair of project_A exists for."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for z, y, C, target in far_cases(seed, 60):
            p = project_A(z, y, C, target=target)
            assert p.min() >= 0.0 and p.max() <= C
            q = np.array([float(v) for v in exact_projection(z, y, C, target)])
            np.testing.assert_allclose(p / C, q / C, rtol=0, atol=1e-12,
                                       err_msg=f"z={z!r}, y={y!r}, C={C!r}, target={target!r}")


@pytest.mark.parametrize("seed", range(5))
def test_restore_equality_reaches_the_hyperplane_from_any_box_point(seed):
    """The residual repair (projection.py, _restore_equality): from any point of the box it
    returns a point of the box with ``e'p = target`` up to ``O(u C n)``, its documented
    guarantee in every case, and it only moves coordinates in the direction that reduces the
    residual."""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(2, 12))
        e = rng.choice([-1.0, 1.0], size=n)
        C = float(10.0 ** rng.uniform(-5, 5))
        p = rng.uniform(0.0, C, size=n)
        p[rng.random(n) < 0.3] = 0.0
        p[rng.random(n) < 0.3] = C
        z = p + rng.normal(scale=1e17 * C, size=n)
        lo, hi = -C * np.sum(e < 0), C * np.sum(e > 0)
        target = float(rng.uniform(lo, hi)) if rng.random() < 0.5 else 0.0
        out = _restore_equality(p.copy(), z, e, C, target)
        assert out.min() >= 0.0 and out.max() <= C
        assert abs(float(e @ out) - target) <= 1e-12 * C * n
        moved = e * (out - p)  # the change of e'p coordinate by coordinate
        r = float(e @ p) - target
        assert np.all(moved * np.sign(r) <= 1e-15 * C), "a coordinate moved the wrong way"


def test_project_A_degenerate_equal_coordinates_one_class():
    """All coordinates equal and far from a tiny box, one class: the breakpoints collapse to a
    single value; the only feasible point is 0 (or C 1 for the extreme target)."""
    for label in (1.0, -1.0):
        y = np.full(3, label)
        z = np.full(3, 0.5)
        np.testing.assert_array_equal(project_A(z, y, 1e-95), np.zeros(3))
        np.testing.assert_allclose(project_A(z, y, 1e-95, target=3e-95 * label),
                                   np.full(3, 1e-95), rtol=1e-15)


def test_project_A_is_exact_for_tied_coordinates_far_outside_the_box():
    # a projected gradient step from a = 0 has every coordinate equal; with C = 1 and a step
    # of 1e20 the nearest point is [1/3, 1/3, 1/3, 1], project_A returns [0, 0, 1, 1]
    z = np.full(4, 1e20)
    y = np.array([1.0, 1.0, 1.0, -1.0])
    C = 1.0
    p = project_A(z, y, C)
    q = np.array([float(v) for v in exact_projection(z, y, C)])
    np.testing.assert_allclose(q, [1 / 3, 1 / 3, 1 / 3, 1.0], rtol=1e-15)
    np.testing.assert_allclose(p / C, q / C, rtol=0, atol=1e-9)


# tied coordinates far from the box are exact (moving them one by one is off by up to C)
@pytest.mark.parametrize("seed", range(3))
def test_project_A_is_exact_with_ties_at_every_scale(seed):
    """Coordinates drawn from a few values (ties within and across classes), up to 1e20 C
    from the box: every coordinate within 1e-12 C of the exact projection (the tied ones used
    to be moved one after another, off by up to C)."""
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(2, 9))
        y = rng.choice([-1.0, 1.0], size=n)
        C = float(10.0 ** rng.choice([-95, -3, 0, 4]))
        vals = C * 10.0 ** rng.uniform(-1, 20, size=3) * rng.choice([-1.0, 1.0], size=3)
        z = rng.choice(vals, size=n)
        lo, hi = -C * np.sum(y < 0), C * np.sum(y > 0)
        target = float(rng.choice([0.0, lo, hi, rng.uniform(lo, hi)]))
        if target == 0.0 and (lo == 0.0 or hi == 0.0):
            target = 0.0
        p = project_A(z, y, C, target=target)
        q = np.array([float(v) for v in exact_projection(z, y, C, target)])
        assert p.min() >= 0.0 and p.max() <= C
        np.testing.assert_allclose(p / C, q / C, rtol=0, atol=1e-12,
                                   err_msg=f"z={z!r}, y={y!r}, C={C!r}, target={target!r}")


def _exact_clip_root(z, e, C, target):
    """``lam*`` with ``e' clip(z - lam* e, 0, C) = target`` and that point, in exact arithmetic."""
    zf = [Fraction(float(v)) for v in z]
    es = [int(v) for v in e]
    Cf, tf = Fraction(float(C)), Fraction(float(target))

    def p_of(lam):
        return [min(max(zi - lam * ei, Fraction(0)), Cf) for zi, ei in zip(zf, es, strict=True)]

    def phi(lam):  # non-increasing, piecewise linear
        return sum(ei * pi for ei, pi in zip(es, p_of(lam), strict=True)) - tf

    br = sorted({zi * ei for zi, ei in zip(zf, es, strict=True)}
                | {(zi - Cf) * ei for zi, ei in zip(zf, es, strict=True)})
    for a, b in zip(br, br[1:], strict=False):
        fa, fb = phi(a), phi(b)
        if fa >= 0 >= fb and fa != fb:
            lam = a + (b - a) * fa / (fa - fb)
            return lam, p_of(lam)
    raise AssertionError("target not attainable")  # pragma: no cover


def _separated_case(rng):
    """Coordinates whose moving ranges in ``lam`` are disjoint and more than ``C`` apart.

    ``p_i(lam) = clip(z_i - lam e_i, 0, C)`` moves for ``lam`` in ``[w_i - C, w_i]`` (``e_i = +1``)
    or ``[w_i, w_i + C]`` (``e_i = -1``), ``w = e z``; the ranges are laid out left to right with
    gaps drawn in ``(0.1 C, 2 C)``, so that the thresholds are 1.1 C to 3 C apart: the regime in
    which _restore_equality is documented to be the exact projection.
    """
    n = int(rng.integers(3, 9))
    e = rng.choice([-1.0, 1.0], size=n)
    C = float(2.0 ** int(rng.integers(-20, 20)))
    left = 0.0
    w = np.empty(n)
    for i in range(n):
        left += C * float(rng.uniform(0.1, 2.0))
        w[i] = left + C if e[i] > 0 else left  # the range is [left, left + C]
        left += C
    perm = rng.permutation(n)
    e, w = e[perm], w[perm]
    z = e * w
    lo, hi = -C * np.sum(e < 0), C * np.sum(e > 0)
    target = float(rng.uniform(lo, hi)) if rng.random() < 0.5 else 0.0
    return z, e, C, target


@pytest.mark.parametrize("seed", range(3))
def test_restore_equality_is_the_exact_projection_for_separated_thresholds(seed):
    """From ``p = clip(z - lam e, 0, C)`` at a wrong ``lam`` (either side of the root) the repair
    returns ``clip(z - lam* e, 0, C)``, the exact projection: each coordinate absorbs the
    residual in the order of its threshold (plus-coordinates leave C at ``w - C``,
    minus-coordinates leave 0 at ``w``), each up to its room."""
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(60):
        z, e, C, target = _separated_case(rng)
        lam_star, p_star = _exact_clip_root(z, e, C, target)
        want = np.array([float(v) for v in p_star])
        for shift in (-1, 1):
            lam = float(lam_star) + shift * C * float(rng.uniform(0.5, 3 * z.size))
            p = np.clip(z - lam * e, 0.0, C)
            if abs(float(e @ p) - target) <= 1e-9 * C:
                continue  # the wrong lam happens to be a root too
            out = _restore_equality(p.copy(), z, e, C, target)
            np.testing.assert_allclose(out / C, want / C, rtol=0, atol=1e-12,
                                       err_msg=f"z={z!r} e={e!r} C={C!r} target={target!r} "
                                               f"lam={lam!r}")
            checked += 1
    assert checked >= 80


def test_restore_equality_leaves_a_rounding_level_residual_alone():
    """``|e'p - target| <= 1e-12 C sqrt(n)`` (the normal case): ``p`` is returned as it is (the
    same array, unchanged), even though the repair would move it; just above, it is repaired."""
    n, C = 100, 1.0
    e = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    p = np.full(n, 0.5)
    z = p.copy()
    p[0] += 0.5e-12 * C * math.sqrt(n)  # residual 5e-12: 5 sqrt(n) times 1e-12 C / sqrt(n)
    out = _restore_equality(p, z, e, C)
    assert out is p
    p2 = p.copy()
    p2[0] += 1e-12 * C * math.sqrt(n)  # residual 1.5e-11 > 1e-11
    out2 = _restore_equality(p2, z, e, C)
    assert out2 is not p2
    assert abs(float(e @ out2)) <= 1e-15
