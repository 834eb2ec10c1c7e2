"""Contracts of the first three mutated modules that their mutation survivors showed unchecked.

projection.py (``_restore_equality``: the residual repair is the exact projection when the
thresholds are more than ``C`` apart; it leaves rounding-level residuals alone), certificate.py
and _validation.py (see benchmarks/MUTATION.md for every survivor and why the others are
equivalent).  Expected values are computed here from the definitions, in exact rational
arithmetic where it matters.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dank_fast.projection import _restore_equality

# ------------------------------------------------------------------ projection: residual repair


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


# ------------------------------------------------------------------ certificate: no scale


def test_relative_gaps_without_a_scale_are_zero_or_infinite():
    """``rel_gap_value = gap / |lower|`` when ``lower = 0`` (the point ``a = 0``): a zero gap is
    relatively zero, a positive gap infinitely large -- never a finite made-up number.

    P2 at ``ah = ac = 0``: ``lower = h(0) = 0`` and the primal value is
    ``C sum max(0, |y_i - b| - eps)`` at the best bias ``b``: exactly 0 when every target lies in
    a tube of width ``2 eps`` (then the point is optimal), ``C (spread - 2 eps)`` otherwise.
    """
    from dank_fast import svr_certificate

    K = np.eye(4)
    z = np.zeros(4)
    y = np.array([0.25, 0.5, 0.75, 0.5])
    kw = dict(C=1.0, eta=1.0, tau=0.0)
    inside = svr_certificate(K, y, z, z, epsilon=0.25, **kw)  # tube [0.25, 0.75]
    assert inside.lower == 0.0 and inside.gap == 0.0
    assert inside.rel_gap_value == 0.0 and inside.rel_gap == 0.0
    outside = svr_certificate(K, y, z, z, epsilon=0.125, **kw)  # spread 0.5 > 2 eps
    assert outside.lower == 0.0
    assert outside.gap == pytest.approx(0.25, rel=1e-12)
    assert outside.rel_gap_value == math.inf
    # P2's scale at d = 0: every term of the objective vanishes, the floor C (max y - min y)/2
    # = 0.25 remains (docs/MATH.md), so the relative gap is 0.25 / 0.25
    assert outside.rel_gap == pytest.approx(1.0, rel=1e-12)
