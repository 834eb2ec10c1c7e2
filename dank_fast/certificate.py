"""Certified duality gaps for DANK solutions (docs/MATH.md, "Certificates").

For a feasible ``a``, with ``F^`` the PSD matrix computed by :func:`dank_fast.inner.inner_minimiser`
(the exact ``F(a)`` of Lemma 1, or its certified Ritz approximation):

* lower bound: ``lin(a) + eta * deficit <= h(a) <= v*``, where ``deficit`` is the inner
  solution's rigorous lower bound of ``n^2 - ||F(a)||_F^2``;
* upper bound: ``v* <= g(F^) <= Primal(a, b) + R(F^)`` for every bias ``b``, where ``Primal`` is
  the SVM primal for the fixed kernel ``F^ o K`` (PSD by the Schur product theorem) at the
  expansion ``w = sum_i a_i y_i phi(x_i)``: ``1/2 q + C sum_i max(0, 1 - y_i f_i)``,
  ``q = (a y)'(F^ o K)(a y)``, ``f = (F^ o K)(a y) + b``, and
  ``R(F) = eta ||F - 11'||_F^2 + tau eta tr F``.

The best bias minimises a convex piecewise-linear function of one variable and is found exactly
by sorting its breakpoints (:func:`best_bias`); it and the primal's loss are computed in
:mod:`dank_fast._primal`.

Per-sample boxes (``C`` a vector of bounds ``C_i``, sample and class weights, docs/MATH.md
section 14): the primal's hinge is ``sum_i C_i max(0, 1 - y_i f_i)`` (P2: ``sum_i C_i max(0,
|y_i - f_i| - eps)``), its best bias the weighted breakpoint search of :func:`best_bias`, the
free coordinates of :func:`kkt_bias` those with ``0 < a_i < C_i``, and every feasibility
tolerance ``1e-9 max(C) sqrt(n)``. Everything else is unchanged.

With ``phi(F) = ||F - M||^2 + tau tr F`` (``M = 11' + Gamma``), ``R(F^) = eta (phi(F^) - 2 1'Gamma 1
- ||Gamma||^2) + q / 2`` because ``2 eta tr(F^ Gamma) = q / 2``, so the two bounds differ by

    gap = (q + C hinge(b) - 1'a) + eta * excess,

the SVM duality gap of the fixed kernel ``F^ o K`` (>= 0 by weak duality, computed without any
``eta n^2`` term) plus ``eta`` times the inner solution's bound on ``phi(F^) - phi*`` (0 when
``F^ = F(a)`` exactly). The gap is zero exactly at a saddle point; it is computed from these
non-negative pieces, so ``lower <= upper`` holds by construction (a rounding-level negative SVM
gap is reported as 0). All sums are formed without cancellation of large terms; the bracket is
exact up to the floating-point rounding of those sums (relative ~ n * 1e-16).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._canonical import canonical_factor, scale_certificate
from ._kernel_validation import check_kernel_matrix

# the primal's bias and loss (dank_fast._primal); the public ones are importable from here too
from ._primal import (
    _best_loss,
    _hinge_at_zero,
    _weights,
    best_bias,
    bias_and_loss,
    hard_margin_loss,
    kkt_bias,
    primal_loss,
)
from ._validation import (
    box_max,
    check_binary_labels,
    check_box,
    check_finite_array,
    check_nonnegative,
    check_positive,
    check_representable,
    kernel_scale,
)
from .inner import InnerSolution, KernelData, apply_FK, inner_minimiser

__all__ = [
    "Certificate",
    "best_bias",
    "bias_and_loss",
    "hard_margin_loss",
    "primal_loss",
    "kkt_bias",
    "svm_certificate",
    "certify_svm",
    "certify_svr",
    "certify_box",
    "svr_certificate",
    "svr_scale",
]


# the routes of dank_fast.inner.inner_minimiser that svm_certificate offers
_ROUTES = ("auto", "dense", "lanczos")


@dataclass
class Certificate:
    """A certified bracket ``lower <= v* <= upper`` of the saddle value.

    Attributes
    ----------
    lower, upper, gap : float
        ``gap = upper - lower`` (computed without cancellation, see module doc).
    rel_gap : float
        ``gap / 1'a`` (inf when 1'a = 0): relative to the SVM-side scale (docs/MATH.md §5);
        P2: ``gap /`` :func:`svr_scale`.
    rel_gap_value : float
        ``gap / |lower|``: relative to the objective (can flatter the
        solution when the regulariser dominates ``|h|``).
    bias : float
        The exact minimiser of the primal over ``b`` (midpoint if flat).
    bias_interval : tuple of float
        All minimisers.
    inner_excess : float
        ``eta * excess``: the part of the gap due to an inexact ``F^`` (0 when ``F^ = F(a)``;
        see :mod:`dank_fast.inner`).
    infeasibility : float
        ``max(|y'a|, -min a, max(a - C))`` of the certified point.
    """

    lower: float
    upper: float
    gap: float
    rel_gap: float
    rel_gap_value: float
    bias: float
    bias_interval: tuple[float, float]
    inner_excess: float
    infeasibility: float


def _box_excess(alpha: np.ndarray, C) -> float:
    """``max(alpha - C)`` (``C`` a scalar or per-sample bounds)."""
    return float(np.max(alpha - C)) if alpha.size else 0.0


def _ratio(num: float, den: float) -> float:
    """``num / den`` with ``den <= 0`` meaning "no scale": inf unless ``num`` is 0."""
    if den > 0:
        return float(num / den)
    return 0.0 if num == 0 else float(np.copysign(np.inf, num))


def _assemble(lin, q_half, loss, inner: InnerSolution, eta, tau, bias, interval, scale, infeas):
    """Combine the pieces; see the module docstring for the gap formula."""
    lower = lin + eta * inner.deficit
    svm_gap = max(2.0 * q_half + loss - lin, 0.0)  # >= 0 exactly (weak duality for F^ o K PSD)
    gap = svm_gap + eta * inner.excess
    upper = lower + gap
    return Certificate(
        lower=float(lower),
        upper=float(max(upper, lower)),
        gap=float(gap),
        rel_gap=_ratio(gap, scale),
        rel_gap_value=_ratio(gap, abs(lower)),
        bias=float(bias) if bias is not None else float("nan"),
        bias_interval=interval,
        inner_excess=float(eta * inner.excess),
        infeasibility=float(infeas),
    )


def certify_svm(kd: KernelData, y, alpha, C, eta, tau, inner: InnerSolution, f0=None):
    """Certificate for P1 at a feasible ``alpha`` whose inner solution is ``inner``.

    ``f0 = (F o K)(alpha * y)`` may be passed when already computed (the solvers
    have it from the gradient). ``C`` is a scalar or per-sample bounds (the weighted hinge
    ``sum_i C_i max(0, 1 - y_i f_i)``). The primal point is the better of the expansion at the
    best bias and its hard-margin rescaling (:func:`hard_margin_loss`).
    """
    d = alpha * y
    if f0 is None:
        f0 = apply_FK(inner.F, kd, d)
    q_half = 0.5 * float(d @ f0)
    b, interval, loss = bias_and_loss(f0, y, C, q_half)
    infeas = max(abs(float(y @ alpha)), float(-alpha.min()), _box_excess(alpha, C), 0.0)
    return _assemble(
        float(alpha.sum()), q_half, loss, inner, eta, tau, b, interval, float(alpha.sum()),
        infeas,
    )


def svm_certificate(K, y, alpha, *, C, eta: float, tau: float,
                    route: str = "auto") -> Certificate:
    """Certify a candidate solution ``alpha`` of P1 from scratch.

    P1 is the saddle problem ``eq. (4)``.  Returns a bracket ``lower <= v* <= upper``
    of the saddle value computed from ``K``, ``y`` and ``alpha`` alone (docs/MATH.md §5),
    with the exact best bias.  Cost: the inner minimiser ``F(alpha)``; the ``"dense"`` route
    takes O(n^3) time and O(n^2) memory (``K`` and ``F`` are n x n), the Lanczos route
    O(n^2) per iteration.

    Parameters
    ----------
    K : array_like of shape (n, n)
        PSD kernel matrix.
    y : array_like of shape (n,)
        Labels in {-1, +1}.
    alpha : array_like of shape (n,)
        Candidate dual variable; must lie in ``A = {y'a = 0, 0 <= a <= C}`` up to
        round-off (``1e-9 * max(C) * sqrt(n)``), else ``ValueError``.
    C : float > 0, or array_like of shape (n,)
        The box bound of ``A``; a vector of per-sample bounds ``C_i > 0`` (sample and class
        weights) certifies the box-weighted problem (docs/MATH.md section 14).
    eta : float > 0
        The weight of the kernel-learning regulariser.
    tau : float >= 0
        The weight of the nuclear term.
    route : {"auto", "dense", "lanczos"}, default "auto"
        How ``F(alpha)`` is computed (:func:`dank_fast.inner_minimiser`); every route
        gives a rigorous bracket, ``"dense"`` (``O(n^3)``) is exact.

    Returns
    -------
    Certificate
        The bracket, the gaps, the exact bias and the infeasibility of ``alpha``.

    Raises
    ------
    TypeError
        An argument of the wrong kind (bool, str, complex, ...).
    ValueError
        Naming the parameter: ``K`` not square, not symmetric or not PSD, labels other than
        +-1 or of one class, shapes that differ, ``C`` or ``eta <= 0``, ``tau < 0``, an
        unknown ``route``, ``alpha`` outside ``A``, an instance outside the representable
        range (docs/validity.md).

    Examples
    --------
    >>> import numpy as np
    >>> K = np.eye(2); y = np.array([1.0, -1.0])
    >>> cert = svm_certificate(K, y, np.array([1.0, 1.0]), C=1.0, eta=1e6, tau=0.0)
    >>> # by hand (g = 1/(4 eta)): lower = 1 - g/2, upper = 1/(1 + g) + g/2 (hard-margin point)
    >>> bool(cert.lower <= cert.upper), round(cert.lower, 10), bool(cert.gap < 1e-13)
    (True, 0.999999875, True)
    """
    if not isinstance(route, str) or route not in _ROUTES:
        raise ValueError(f"route must be one of {', '.join(map(repr, _ROUTES))}; got {route!r}")
    K = check_kernel_matrix(K)
    y = check_binary_labels(y, K.shape[0])
    C = check_box(C, y.size)
    eta = check_positive(eta, "eta")
    tau = check_nonnegative(tau, "tau")
    alpha = check_finite_array(alpha, "alpha", ndim=1)
    if alpha.shape != y.shape:
        raise ValueError(f"alpha has shape {alpha.shape}, expected {y.shape}")
    s = kernel_scale(K)
    check_representable(C, eta, s, y.size)
    tol = 1e-9 * box_max(C) * np.sqrt(y.size)
    infeas = max(abs(float(y @ alpha)), float(-alpha.min()), _box_excess(alpha, C))
    if infeas > tol:
        raise ValueError(f"alpha is not feasible for A (violation {infeas:.3g} > {tol:.3g})")
    # the canonical instance (cK, C/c, eta/c) at alpha/c, c a power of two: the same point,
    # every intermediate representable (docs/validity.md); per-sample boxes: c from max C
    c = canonical_factor(box_max(C), eta, s)
    kd = KernelData(K if c == 1.0 else K * c)
    a = alpha / c
    inner = _inner_at(kd, a * y, eta / c, tau, s, route)
    return scale_certificate(certify_svm(kd, y, a, C / c, eta / c, tau, inner), c)


def _inner_at(kd: KernelData, d: np.ndarray, eta: float, tau: float, s: float, route: str):
    """The inner solution ``F(d)`` for a certificate; ``K = 0`` (``s = 0``) exactly, without
    products of ``d`` or ``eta``.

    ``K = 0`` is valid for every finite ``C, eta > 0`` (docs/validity.md) and has no kernel
    scale to rescale by (the canonical factor is 1). There ``Gamma = D K D / (4 eta) = 0``
    whatever ``d`` and ``eta``, so ``F(d) = J_{tau/2}(11')`` and its ``deficit`` do not depend
    on them: the inner solution is computed at ``d = 0``, ``eta = 1``. With the actual ``d``
    (``C = 1e155``) ``d_i d_j`` overflowed and ``inf * 0 = NaN``; with ``eta = 1e-169``,
    ``16 eta^2`` underflowed to 0 (0 / 0). The remaining terms of the bracket (``1'a``,
    ``C`` times the hinge loss at ``f0 = 0``, ``eta`` times the deficit) are single products
    of representable numbers.
    """
    if s > 0.0:
        return inner_minimiser(kd, d, eta, tau, route=route)
    return inner_minimiser(kd, np.zeros_like(d), 1.0, tau, route=route)


# --------------------------------------------------------------------------- P2 and P3
def svr_scale(d, y, z_sum: float, q: float, C: float, epsilon: float) -> float:
    """Scale of P2's relative gap, ``max(|d'y| + eps 1'(ah + ac) + q, C (max y - min y) / 2)``.

    The sum is the magnitude of the terms the gap ``q + C loss(b) - lin`` is made of, without
    cancellation (``lin = y'd - eps 1'(ah + ac)``, ``q = d'(F o K)d``); every term has the units
    of the objective (and of the gap). Under the change of units ``y, C, eps -> c y, c C,
    c eps``, ``eta -> c^2 eta`` (the same problem, ``d -> c d``) each scales by ``c^2``, and
    under the rescaling law of docs/validity.md (``K -> cK``, ``C -> C/c``, ``eta -> eta/c``,
    ``d -> d/c``) by ``1/c``, like the gap: the relative gap is invariant under both (the former
    ``max(|d'y|, 1'(ah + ac), C)`` mixed the units of ``d`` with those of ``y d``). The floor
    ``C (max y - min y) / 2`` (``C`` times the half-range of the targets: the tube half-width
    that fits them all, invariant under a shift of ``y``, which the bias absorbs) keeps the
    measure finite near ``a* = 0``, optimal when every target fits in the tube, where the sum
    vanishes. docs/MATH.md §5.

    Parameters
    ----------
    d : ndarray
        ``ah - ac``.
    y : ndarray
        Targets.
    z_sum : float
        ``1'(ah + ac)``.
    q : float
        ``d'(F o K)d`` (``>= 0``).
    C : float or ndarray
        The box; per-sample bounds use ``max C`` (docs/MATH.md section 14).
    epsilon : float
    """
    y = np.asarray(y, dtype=np.float64)
    half_range = 0.5 * (float(y.max()) - float(y.min())) if y.size else 0.0
    return max(abs(float(d @ y)) + epsilon * z_sum + abs(q), box_max(C) * half_range)


def certify_svr(kd: KernelData, y, z, C, eta, tau, epsilon, inner: InnerSolution, f0=None):
    """Certificate for P2 (eq. (22)) at a feasible ``z = [ah; ac]``.

    With ``d = ah - ac``, ``G = F o K``, ``f0 = G d`` and ``lin = y'd - eps 1'(ah + ac)``:

    * lower bound ``h = lin + eta (n^2 - ||F||^2)``;
    * upper bound: the epsilon-SVR primal of the fixed kernel ``G`` at the expansion
      ``w = sum_i d_i phi(x_i)``, ``1/2 d'Gd + C sum_i max(0, |y_i - f0_i - b| - eps)``,
      plus ``R(F)``, with the exact best ``b`` (:func:`best_bias` with ``eps``).

    For the exact ``F``, ``R(F) = eta (||F||^2 - ... )`` cancels as for P1
    (``2 eta tr(F Gamma) = q/2``, ``q = d'f0``), so ``gap = q + C loss(b) - lin``: the
    epsilon-SVR duality gap of the fixed kernel ``G``. Relative gap: ``gap /`` :func:`svr_scale`.
    ``C`` is a scalar or ``n`` per-sample bounds (the loss ``sum_i C_i max(0, |y_i - f_i| -
    eps)``, each ``C_i`` bounding both ``ah_i`` and ``ac_i``).
    """
    y = np.asarray(y, dtype=np.float64)
    n = y.size
    ah, ac = z[:n], z[n:]
    d = ah - ac
    if f0 is None:
        f0 = apply_FK(inner.F, kd, d)
    w, factor = _weights(C)
    b, interval, loss = best_bias(f0, y, eps=epsilon, weights=w)
    lin = float(y @ d) - epsilon * float(z.sum())
    q_half = 0.5 * float(d @ f0)
    scale = svr_scale(d, y, float(z.sum()), 2.0 * q_half, C, epsilon)
    infeas = max(abs(float(d.sum())), float(-z.min()), _box_excess(ah, C), _box_excess(ac, C),
                 0.0)
    return _assemble(lin, q_half, factor * loss, inner, eta, tau, b, interval, scale, infeas)


def certify_box(kd: KernelData, y, alpha, C, eta, inner: InnerSolution, f0=None):
    """Certificate for P3 (eq. (18)): box ``0 <= a <= C`` only, no bias, ``tau = 0``.

    As :func:`certify_svm` with the bias fixed at 0: ``gap = q + sum_i C_i max(0, 1 - y_i
    f0_i) - 1'a`` (``C`` a scalar or per-sample bounds). ``bias`` and ``bias_interval`` of the
    result are NaN / (0, 0).
    """
    d = alpha * y
    if f0 is None:
        f0 = apply_FK(inner.F, kd, d)
    w, factor = _weights(C)
    hinge = _hinge_at_zero(f0, y, w)
    q_half = 0.5 * float(d @ f0)
    loss, _, _ = _best_loss(f0, y, q_half, factor, hinge, None, (0.0, 0.0), with_bias=False)
    infeas = max(float(-alpha.min()), _box_excess(alpha, C), 0.0)
    cert = _assemble(
        float(alpha.sum()), q_half, loss, inner, eta, 0.0, None, (0.0, 0.0),
        float(alpha.sum()), infeas,
    )
    return cert


def svr_certificate(K, y, alpha_hat, alpha_check, *, C, epsilon: float, eta: float,
                    tau: float) -> Certificate:
    """Certify a candidate solution ``(alpha_hat, alpha_check)`` of P2 from scratch.

    Mirrors :func:`svm_certificate` for DANK in SVR (``eq. (22)``).  With
    ``d = ah - ac`` and ``f0 = (F o K) d``, the lower bound is the dual objective
    ``y'd - epsilon 1'(ah + ac) + eta (n^2 - ||F||^2)`` and the upper bound the
    epsilon-SVR primal of the fixed kernel ``F o K`` at the expansion ``d`` with the exact
    best bias (:func:`best_bias` with ``eps = epsilon``), plus the regulariser.  Cost: one
    dense inner solve, O(n^3) time and O(n^2) memory.

    Parameters
    ----------
    K : array_like of shape (n, n)
        PSD kernel matrix.
    y : array_like of shape (n,)
        Finite regression targets.
    alpha_hat, alpha_check : array_like of shape (n,)
        The candidate pair; it must be feasible for ``{0 <= ah, ac <= C, 1'(ah - ac) = 0}``
        up to ``1e-9 max(C) sqrt(n)``.
    C : float > 0, or array_like of shape (n,)
        The box bound; a vector gives per-sample boxes ``0 <= ah_i, ac_i <= C_i``
        (docs/MATH.md section 14).
    epsilon : float >= 0
        The half-width of the insensitive tube.
    eta : float > 0
        The weight of the kernel-learning regulariser.
    tau : float >= 0
        The weight of the nuclear term.

    Returns
    -------
    Certificate
        The bracket, the gaps (``rel_gap`` relative to the SVR scale), the exact bias and the
        infeasibility of the pair.

    Raises
    ------
    TypeError
        An argument of the wrong kind (bool, str, complex, ...).
    ValueError
        Naming the parameter: ``K`` not square, not symmetric or not PSD, non-finite
        targets, shapes that differ, ``C`` or ``eta <= 0``, ``epsilon`` or ``tau < 0``, an
        infeasible pair, an instance outside the representable range (docs/validity.md).

    Examples
    --------
    >>> import numpy as np
    >>> K = np.eye(2); y = np.array([1.0, -1.0])
    >>> cert = svr_certificate(K, y, np.array([0.5, 0.0]), np.array([0.0, 0.5]), C=1.0,
    ...                        epsilon=0.1, eta=1e6, tau=0.0)
    >>> bool(cert.lower <= cert.upper)
    True
    """
    K = check_kernel_matrix(K)
    n = K.shape[0]
    y = check_finite_array(y, "y", ndim=1)
    if y.size != n:
        raise ValueError(f"y has {y.size} entries but K has {n} rows")
    C = check_box(C, n)
    epsilon = check_nonnegative(epsilon, "epsilon")
    eta = check_positive(eta, "eta")
    tau = check_nonnegative(tau, "tau")
    ah = check_finite_array(alpha_hat, "alpha_hat", ndim=1)
    ac = check_finite_array(alpha_check, "alpha_check", ndim=1)
    if ah.shape != y.shape or ac.shape != y.shape:
        raise ValueError("alpha_hat and alpha_check must have the shape of y")
    z = np.concatenate([ah, ac])
    tol = 1e-9 * box_max(C) * np.sqrt(n)
    infeas = max(abs(float(ah.sum() - ac.sum())), float(-z.min()), _box_excess(ah, C),
                 _box_excess(ac, C))
    if infeas > tol:
        raise ValueError(f"(alpha_hat, alpha_check) is not feasible (violation {infeas:.3g})")
    s = kernel_scale(K)
    check_representable(C, eta, s, n)
    c = canonical_factor(box_max(C), eta, s)
    kd = KernelData(K if c == 1.0 else K * c)
    zc = z / c
    inner = _inner_at(kd, zc[:n] - zc[n:], eta / c, tau, s, "dense")
    return scale_certificate(certify_svr(kd, y, zc, C / c, eta / c, tau, epsilon, inner), c)
