"""The canonical instance of a DANK problem: its power-of-two factor, and certificates mapped back.

Every solver and certificate works on the canonical instance ``(cK, C/c, eta/c)`` with ``c`` a
power of two (``c ~ 1 / max|K|``): ``v*(K, C, eta) = c v*(cK, C/c, eta/c)`` and ``a* = c a''*``
for P1, P2 and P3 (docs/validity.md, "Representable range"). This module holds what
:mod:`dank_fast.certificate` needs of that law (the factor, and a certificate's values times
``c``); mapping a whole :class:`dank_fast.DANKResult` back is :mod:`dank_fast._scaling`, above
the result type.
"""

from __future__ import annotations

import dataclasses
import math

__all__ = ["canonical_factor", "scale_certificate"]




def canonical_factor(C: float, eta: float, s: float) -> float:
    """The power of two ``c`` of the canonical instance ``(cK, C/c, eta/c)`` solved internally.

    Preferred: ``c ~ 1/max|K|`` (a kernel of scale 1, where the solvers' step-size and
    Lipschitz safeguards are tuned; ``c = 1`` for every kernel whose largest entry is 1, such
    as the Gaussian). That ``c`` is moved, if needed, until ``C/c``, ``c max|K|`` and ``eta/c``
    all lie within ``2^(+-498) ~ 1e(+-150)``, which is always possible inside the representable
    range (the worst case, ``C max|K| n = 1e100`` with ``eta / (C^2 max|K|) = 1e-100``, needs
    exactly ``1e150``); otherwise (never for valid input) the ``c`` minimising the largest of
    the three exponents.
    """
    # exponent bound (log2 of 1e150) of C, max|K| and eta in the instance the solvers see: their
    # squares (eta**2, K o K, C**2 in Python floats) then stay inside the float range
    bound = 150.0 * math.log2(10.0)
    if s == 0.0:  # K = 0: only C/c and eta/c to keep in range; balance their exponents
        a, e = math.log2(C), math.log2(eta)
        lo, hi = max(a, e) - bound, min(a, e) + bound
        k = round(min(max((a + e) / 2, lo), hi)) if lo <= hi else round((a + e) / 2)
        return math.ldexp(1.0, k)
    a, b, e = math.log2(C), math.log2(s), math.log2(eta)
    lo = max(a - bound, -b - bound, e - bound)
    hi = min(a + bound, -b + bound, e + bound)
    if lo <= hi:
        t = min(max(-b, lo), hi)
    else:  # minimax of max(|a - t|, |b + t|, |e - t|) (convex, piecewise linear)
        cands = [a, e, -b, (a - b) / 2, (e - b) / 2, (a + e) / 2]
        t = min(cands, key=lambda u: max(abs(a - u), abs(b + u), abs(e - u)))
    k = round(t)
    if not lo <= k <= hi and lo <= hi:  # rounding left the interval: take its inner integer
        k = math.ceil(lo) if k < lo else math.floor(hi)
    return math.ldexp(1.0, k)


def scale_certificate(cert, c: float):
    """A certificate of the canonical instance mapped back: values times ``c`` (exact)."""
    if c == 1.0:
        return cert
    return dataclasses.replace(cert, lower=cert.lower * c, upper=cert.upper * c,
                               gap=cert.gap * c, inner_excess=cert.inner_excess * c,
                               infeasibility=cert.infeasibility * c)
