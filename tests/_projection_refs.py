"""Reference projections onto ``{y'a = target, 0 <= a <= C}`` computed independently of
:mod:`dank_fast.projection` and :mod:`dank_ref.projection`: plain bisection to the last bit and
exact rational arithmetic (SPEC, "Projection onto A")."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

__all__ = ["bisect_projection", "exact_projection"]


def bisect_projection(z, y, C, target=0.0):
    """Nearest point of ``{y'a = target, 0 <= a <= C}`` to ``z`` by bisection on ``lam``."""
    z = np.asarray(z, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)

    def phi(lam):
        return float(y @ np.clip(z - lam * y, 0.0, C)) - target

    lo = float(np.min(np.concatenate([z * y, (z - C) * y]))) - 1.0
    hi = float(np.max(np.concatenate([z * y, (z - C) * y]))) + 1.0
    slack = 1e-13 * C * z.size  # rounding of an extreme target such as -C * n_minus
    assert phi(lo) >= -slack and phi(hi) <= slack, "target not attainable"
    for _ in range(400):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if phi(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    return np.clip(z - hi * y, 0.0, C)


def exact_projection(z, y, C, target=0.0):
    """The nearest point of ``{y'a = target, 0 <= a <= C}`` in exact rational arithmetic.

    ``phi(lam) = y' clip(z - lam y, 0, C) - target`` is piecewise linear between the
    breakpoints ``y_i z_i`` and ``y_i (z_i - C)``; its root is found on the piece where it
    changes sign, exactly (no rounding: ``z_i - C`` is not representable when ``|z| >> C``).
    """
    zf = [Fraction(float(v)) for v in z]
    Cf, tf = Fraction(float(C)), Fraction(float(target))
    ys = [int(v) for v in y]

    def p_of(lam):
        return [min(max(zi - lam * yi, Fraction(0)), Cf) for zi, yi in zip(zf, ys, strict=True)]

    def phi(lam):
        return sum(yi * pi for yi, pi in zip(ys, p_of(lam), strict=True)) - tf

    br = sorted({zi * yi for zi, yi in zip(zf, ys, strict=True)}
                | {(zi - Cf) * yi for zi, yi in zip(zf, ys, strict=True)})
    if phi(br[0]) <= 0:
        return p_of(br[0])
    if phi(br[-1]) >= 0:
        return p_of(br[-1])
    for a, b in itertools.pairwise(br):
        fa, fb = phi(a), phi(b)
        if fa > 0 >= fb:
            return p_of(a + (b - a) * fa / (fa - fb))
    raise AssertionError("no sign change")  # pragma: no cover
