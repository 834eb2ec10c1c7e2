"""Exact rescaling of DANK results (docs/validity.md, "Representable range").

Every solver works on the canonical instance ``(cK, C/c, eta/c)`` with ``c`` a power of two
(``c ~ 1 / max|K|``): ``v*(K, C, eta) = c v*(cK, C/c, eta/c)`` and ``a* = c a''*`` for P1, P2
and P3 (``y``, ``epsilon`` and ``tau`` unchanged). With ``c`` a power of two every product of the
map is exact in floating point, and the solvers' numbers (``eta^2``, ``K o K``, ``C^2``) stay
representable for every instance inside the representable range.
"""

from __future__ import annotations

import dataclasses

from ._canonical import canonical_factor, scale_certificate
from ._kernel_data import KernelData
from ._result import DANKResult
from .inner import CenteredF

# canonical_factor and scale_certificate (certificates, no results) live in dank_fast._canonical,
# below dank_fast.certificate; re-exported here for the solvers that map results back
__all__ = ["canonical_factor", "unscale", "scale_certificate", "recertify_zero_kernel"]


def unscale(res: DANKResult, c: float, kd: KernelData, eta: float) -> DANKResult:
    """Map the solution of the canonical instance ``(cK, C/c, eta/c)`` back (``a = c a''``).

    ``v*(K, C, eta) = c v*(cK, C/c, eta/c)`` (docs/validity.md; the same law holds for P2 with
    ``y`` and ``epsilon`` unchanged): values, gaps, dual variables, distances and the
    infeasibility scale by ``c``; ``F``, the gradient ``(y - eps - (F o K) d)``, the bias and
    every relative gap are invariant; Lipschitz estimates (gradient change per unit of ``z``)
    scale by ``1/c``. With ``c`` a power of two every product above is exact in floating point.
    """
    if c == 1.0:
        return res
    res.alpha = res.alpha * c
    res.lower, res.upper, res.gap = res.lower * c, res.upper * c, res.gap * c
    cert = res.certificate
    res.certificate = dataclasses.replace(
        cert, lower=cert.lower * c, upper=cert.upper * c, gap=cert.gap * c,
        infeasibility=cert.infeasibility * c,
    )
    F = res.inner.F
    if isinstance(F, CenteredF):  # F = 11' + diag(d) K diag(d) / (4 eta): same matrix
        F = CenteredF(d=F.d * c, eta=eta, _kd=kd)
    res.inner = dataclasses.replace(res.inner, F=F)
    res.kernel = kd
    res.projection_distance *= c
    hist = res.history
    for key in ("h", "step"):
        if key in hist:
            hist[key] = [v * c for v in hist[key]]
    if "gap" in hist:
        hist["gap"] = [(it, g * c) for it, g in hist["gap"]]
    if "L" in hist:
        hist["L"] = [v / c for v in hist["L"]]
    for key in ("L", "L_theorem"):
        if key in res.extra:
            res.extra[key] = res.extra[key] / c
    res.extra["rescale"] = c
    return res


def recertify_zero_kernel(res: DANKResult, cert, eta: float, tol: float) -> DANKResult:
    """The result of a ``K = 0`` instance solved at ``eta' = C``, certified at the true ``eta``.

    With ``K = 0``, ``Gamma(a) = 0`` and ``F(a) = J_{tau/2}(11')`` for every ``a``, so
    ``h(a) = 1'a + eta k(n, tau)`` (P1; P2 likewise): the maximiser does not depend on ``eta``,
    which only shifts both bounds by the same constant. The solvers therefore work on the
    well-scaled instance ``eta' = C`` (whatever the ratio of ``C`` and ``eta``, which for
    ``K = 0`` the representable range does not bound) and ``cert`` (computed from scratch at
    ``eta``) replaces the bracket; the status is ``converged`` exactly when its relative gap is
    ``<= tol``.
    """
    res.certificate = cert
    res.lower, res.upper, res.gap, res.rel_gap = cert.lower, cert.upper, cert.gap, cert.rel_gap
    res.bias = cert.bias
    if res.status == "converged" and not cert.rel_gap <= tol:
        res.status = "stalled"
        res.message = (f"stalled: certified relative gap {cert.rel_gap:.2e} > tol {tol:.1e} "
                       "at eta (solved at eta = C)")
    res.extra["zero_kernel"] = ("K = 0: solved at eta = C (a* does not depend on eta), "
                                "certified at eta")
    return res
