r"""Independent duality certificates for P1 (SVM), P2 (SVR) and P3 (decomposed SVM).

This module is dank_ref's own code (dense ``numpy.linalg.eigh``); it never imports ``dank_fast``.

What is certified
-----------------
Exactly the point handed in.  A candidate must be feasible to the shared tolerance of
:doc:`docs/validity.md </validity>` (violation ``<= 1e-9 C sqrt(n)``), else ``ValueError``; it is
evaluated as given (no projection, no removal of ``min(ah_i, ac_i)`` for P2 -- ``h`` of P2 depends
on ``ah + ac`` through ``-eps 1'(ah + ac)``). Only ``project=True``, an explicit request, replaces
an infeasible candidate by its exact Euclidean projection; the result then says so
(``projected=True``, ``projection_distance``, ``alpha`` = the certified point). The measured
violation of the certified point is ``Certificate.infeasibility``.

For a feasible ``a`` let ``F_hat = F(a) = J_{tau/2}(11' + Gamma(a))`` (Lemma 1).

* lower bound ``h(a) = H(a, F_hat) <= v*``, evaluated without the cancellation of
  ``1'a + eta (n^2 - ||F_hat||_F^2)``: with ``d = a o y``, ``M = 11' + Gamma`` and eigenvalues
  ``l_k`` of ``M``,

      eta (n^2 - ||F_hat||^2) = -1/2 d'Kd - eta ||Gamma||_F^2 + eta sum_k phi(l_k),
      phi(l) = tau l - tau^2/4  (l >= tau/2),   phi(l) = l^2  (l < tau/2),

  because ``||M||^2 = n^2 + 2 1'Gamma 1 + ||Gamma||^2``, ``2 eta 1'Gamma 1 = 1/2 d'Kd`` and
  ``||M||^2 - ||F_hat||^2 = sum_k phi(l_k)``.  For ``tau = 0`` the last sum vanishes.
* upper bound ``v* <= g(F_hat) <= Primal(a, b) + R(F_hat)`` for every bias ``b``: the SVM (SVR)
  primal of the fixed kernel ``G = F_hat o K`` at ``w = sum_i a_i y_i phi(x_i)``.  Since
  ``F_hat`` minimises ``H(a, .)``, ``upper - lower`` is the plain SVM duality gap of ``G``::

      gap_raw = d'Gd + sum_i C_i max(0, 1 - y_i (G d + b)_i) - 1'a            (P1; P3: b = 0)
      gap_raw = b'Gb + sum_i C_i max(0, |y_i - (Gb)_i - beta| - eps) - lin     (P2),
      lin = b'y - eps 1'(ah + ac),   b = ah - ac,

  computed in this form (no large cancelling terms).  ``C_i = C`` for a scalar box; a vector
  ``C`` (per-sample boxes ``0 <= a_i <= C_i``, libsvm's weights) changes only the feasible set,
  hence the weights of the hinge (the primal of the box-weighted SVM).  P1/P3 also try the
  hard-margin primal point ``(s w, s beta)``, ``beta`` the max-margin bias and ``s = 1 / m``
  its smallest margin (when ``m > 0``), and keep the smaller bound
  (``_scaled_primal_gap``): any primal point is a valid upper bound; this one removes
  margin violations that are mere rounding, which ``C >> a*`` (hard-margin regime) would
  otherwise amplify into a spurious gap of order ``C n u``, and shrinks ``w`` when every
  margin exceeds 1.
* ``lower <= upper`` by construction: ``gap = max(gap_raw, 0)`` and ``upper = lower + gap``.
  This is justified because for a point of the feasible set the exact gap is ``>= 0`` (weak
  duality of the fixed-kernel SVM/SVR: ``C_i max(0, 1 - y_i f_i) >= a_i (1 - y_i f_i)`` for
  ``0 <= a_i <= C_i`` and ``y'a = 0``), so a negative ``gap_raw`` is rounding error (or the
  permitted ``1e-9 C sqrt(n)`` feasibility residual).  ``gap_raw`` is kept in the result.
* the best bias minimises a convex piecewise-linear function of one variable (weighted by
  ``C_i`` for a vector box); it is found exactly by sorting the breakpoints (``best_bias``,
  ``weighted_bias``).
* feasibility and the frame use ``max C`` for a vector box: the tolerance is
  ``1e-9 max(C) sqrt(n)`` for every constraint, the P2 scale's floor is
  ``max(C) (max y - min y) / 2``.
* relative gaps (invariant under the rescaling laws): P1 and P3 ``gap / 1'a`` (the SVM-side
  scale, :doc:`docs/MATH.md </MATH>` section 5); P2
  ``gap / max(|b'y| + eps 1'(ah + ac) + b'(F o K)b, C (max y - min y) /
  2)`` (``svr_gap_scale``, the rule of :doc:`docs/MATH.md </MATH>` shared with dank_fast): every
  term has the units of the objective, so the P2 measure is also invariant under a change of units
  of ``y`` (``y, C, eps -> c y, c C, c eps``, ``eta -> c^2 eta``). All are invariant under the
  rescaling law below. A scale of 0 (``a = 0``; P2: also constant targets) gives ``rel_gap = inf``
  unless the gap is 0.

Numerical frame
---------------
All arithmetic is done in an internally rescaled, well-conditioned frame: by the exact law of
:doc:`docs/validity.md </validity>` (substitute ``a = c a'`` in eq. (4)),
``v*(K, C, eta) = c v*(c K, C/c, eta/c)``, ``a = c a'``, ``F`` and the bias unchanged, for every
``c > 0``.  ``frame_scale`` picks ``c`` as a power of two near the natural size of ``a*``
(``min(C, 1/max|K|, (16 eta / max|K|^2)^(1/3))``), so ``a / c``, ``c K``, ``C / c``, ``eta / c``
and the mapping back (``lower``, ``upper``, ``gap`` times ``c``) are exact in binary floating
point (barring underflow of negligible entries): the certified point is still exactly the one
given.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .projection import _project, project_box_hyperplane, stack_box
from .validation import (
    box_max,
    check_alpha,
    check_binary_labels,
    check_bool,
    check_box,
    check_kernel,
    check_nonnegative,
    check_partition,
    check_positive,
    check_range,
    check_targets,
    feasibility_tolerance,
    kernel_scale,
)

TINY = np.finfo(float).tiny  # floor of the reported ``scale`` (callers divide by it)

__all__ = [
    "Certificate",
    "frame_scale",
    "svr_gap_scale",
    "inner_F",
    "h_svm",
    "grad_h_svm",
    "project_box_hyperplane",
    "best_bias",
    "weighted_bias",
    "hard_margin_gap",
    "svm_primal_gap",
    "svm_certificate",
    "svr_certificate",
    "decomposed_certificate",
    "block_kernel",
]


@dataclass
class Certificate:
    """Certified bracket ``lower <= v* <= upper`` at the point ``alpha`` (original units).

    Attributes
    ----------
    lower, upper : float
        ``h(alpha) <= v* <= upper``; ``upper = lower + gap`` so ``lower <= upper`` always.
    gap : float
        ``max(gap_raw, 0)`` (see the module docstring for why the clip is exact).
    gap_raw : float
        The computed duality gap of the fixed kernel ``F(alpha) o K`` before the clip.
    rel_gap : float
        ``gap / scale`` (invariant under the rescaling laws of :doc:`docs/validity.md </validity>`).
    scale : float
        P1/P3: ``1'a``; P2: :func:`svr_gap_scale` (all floored at the smallest normal float).
    bias : float or None
        Exact best bias of the fixed kernel (``None`` for P3).
    F : ndarray
        ``F(alpha)`` (Lemma 1).
    alpha : ndarray
        The certified point (P2: ``b = ah - ac``).
    alpha_hat, alpha_check : ndarray or None
        P2: the certified ``(ah, ac)``, exactly as given unless ``projected``.
    infeasibility : float
        ``max(|y'a|, -min a, max a - C)`` of the certified point (P2: ``1'(ah - ac)`` and both
        vectors; P3: box only); ``<= 1e-9 C sqrt(n)``.
    projected : bool
        ``True`` iff ``project=True`` was requested and the candidate was moved.
    projection_distance : float
        Euclidean distance from the candidate to the certified point (0 unless projected).
    """

    lower: float
    upper: float
    gap: float
    rel_gap: float
    bias: float | None
    F: np.ndarray
    alpha: np.ndarray
    projection_distance: float
    scale: float
    alpha_hat: np.ndarray | None = None
    alpha_check: np.ndarray | None = None
    infeasibility: float = 0.0
    projected: bool = False
    gap_raw: float = 0.0

    @property
    def value(self) -> float:
        """The certified lower bound ``h(alpha)`` (the meaning of ``value`` in every result of
        dank_ref and dank_fast, :doc:`docs/conventions.md </conventions>`)."""
        return self.lower


# ---------------------------------------------------------------------------------------------
# numerical frame
# ---------------------------------------------------------------------------------------------
def frame_scale(C: float, eta: float, s: float) -> float:
    """Power of two ``c`` near the natural size of ``a*``: ``min(C, 1/s, (16 eta/s^2)^(1/3))``.

    Used with the exact law ``v*(K, C, eta) = c v*(cK, C/c, eta/c)`` (``a = c a'``).  Computed in
    base-2 logarithms (no overflow).  ``s = max|K| = 0`` (valid for every finite ``C, eta > 0``)
    gives ``c ~ C``, moved if needed until ``eta / c`` lies in ``[2^-1022, 2^1000]``, then
    until ``C / c`` does: the numbers of that frame are ``1'a / c``, ``C / c`` times the hinge
    loss and ``eta / c`` times ``n^2 - ||F||^2``, since ``Gamma = 0`` is then formed without any
    product ``d_i d_j`` (``_inner``); neither may underflow to 0 (a zero ``C / c`` would
    certify a wrong upper bound) or overflow.  Possible whenever ``|log2(C / eta)| <= 2022``
    (every ``C, eta`` in ``[1e-300, 1e300]``).
    """
    lg = math.log2(C)
    if s > 0.0:
        ls = math.log2(s)
        lg = min(lg, -ls, (4.0 + math.log2(eta) - 2.0 * ls) / 3.0)
    else:
        la, le = lg, math.log2(eta)
        lg = min(max(lg, le - 1000.0), le + 1022.0)
        lg = min(max(lg, la - 1000.0), la + 1022.0)
    k = int(round(lg))
    k = max(min(k, 1000), -1000)
    return math.ldexp(1.0, k)


def svr_gap_scale(by: float, tube: float, q: float, C: float, y: np.ndarray) -> float:
    """Scale of P2's relative gap (:doc:`docs/MATH.md </MATH>` section 5), in the units of the
    objective.

    ``max(|b'y| + eps 1'(ah + ac) + b'(F o K)b, C (max y - min y) / 2)`` with ``by = b'y``,
    ``tube = eps 1'(ah + ac)``, ``q = b'(F o K)b``: the magnitude of the terms of the gap
    ``q + C loss - lin`` without cancellation, and a floor (``C`` times the half-range of the
    targets, shift-invariant like the problem) for ``a* = 0``, where the sum vanishes.  Each term
    scales like the gap under the frame law (``1/c``) and under a change of units of ``y``
    (``c^2``).
    """
    y = np.asarray(y, dtype=np.float64)
    half_range = 0.5 * (float(np.max(y)) - float(np.min(y))) if y.size else 0.0
    return max(abs(by) + tube + abs(q), C * half_range)


def _rel(gap: float, scale: float) -> float:
    if scale > 0.0:
        return gap / scale
    return 0.0 if gap == 0.0 else math.inf


# ---------------------------------------------------------------------------------------------
# inner problem
# ---------------------------------------------------------------------------------------------
def _inner(K: np.ndarray, d: np.ndarray, eta: float, tau: float):
    """Return ``(F, Gamma, eig_term)`` with ``eig_term = sum_k phi(l_k)`` (see module doc).

    ``K = 0`` gives ``Gamma = 0`` exactly, without forming ``d_i d_j`` (which overflows for
    large ``d``: ``inf * 0 = NaN``) or dividing by ``4 eta``.
    """
    if not np.any(K):
        Gamma = np.zeros_like(K, dtype=np.float64)
    else:
        Gamma = (np.outer(d, d) * K) / (4.0 * eta)
    M = Gamma + 1.0
    if tau == 0.0:
        return M, Gamma, 0.0
    lam, U = np.linalg.eigh(M)
    keep = lam - 0.5 * tau
    pos = keep > 0
    Up = U[:, pos]
    F = (Up * keep[pos]) @ Up.T
    F = 0.5 * (F + F.T)
    phi = np.where(pos, tau * lam - 0.25 * tau * tau, lam * lam)
    return F, Gamma, float(np.sum(phi))


def _inner_value(K, d, Gamma, eig_term, eta) -> float:
    """``min_F [-1/2 d'(F o K)d + R(F)] = eta (n^2 - ||F(d)||^2)`` without cancellation."""
    return float(-0.5 * (d @ K @ d) - eta * np.sum(Gamma * Gamma) + eta * eig_term)


def _checked(K, y, a, eta, tau, *, labels_kind: str = "svm"):
    K = check_kernel(K)
    n = K.shape[0]
    if labels_kind == "svm":
        y = check_binary_labels(y, n, require_both=False)
    else:
        y = check_targets(y, n)
    a = check_alpha(a, n)
    eta = check_positive(eta, "eta")
    tau = check_nonnegative(tau, "tau")
    return K, y, a, eta, tau


def inner_F(K, d, *, eta: float, tau: float) -> np.ndarray:
    """``F = J_{tau/2}(11' + diag(d) K diag(d) / (4 eta))`` (Lemma 1), dense eigh.

    ``d = a o y`` (P1/P3) or ``b = ah - ac`` (P2); validated like a candidate vector.
    """
    K = check_kernel(K)
    d = check_alpha(d, K.shape[0], "d")
    eta = check_positive(eta, "eta")
    tau = check_nonnegative(tau, "tau")
    return _inner(K, d, eta, tau)[0]


def h_svm(K, y, a, *, eta: float, tau: float) -> float:
    """Closed-form ``h(a) = min_F H(a, F)`` of eq. (4) at ``a`` (no feasibility check)."""
    K, y, a, eta, tau = _checked(K, y, a, eta, tau)
    d = a * y
    _, Gamma, eig = _inner(K, d, eta, tau)
    return float(np.sum(a)) + _inner_value(K, d, Gamma, eig, eta)


def grad_h_svm(K, y, a, *, eta: float, tau: float) -> np.ndarray:
    """``grad h(a) = 1 - Y (F(a) o K) Y a`` (Danskin; eq. (26))."""
    K, y, a, eta, tau = _checked(K, y, a, eta, tau)
    d = a * y
    F = _inner(K, d, eta, tau)[0]
    return 1.0 - y * ((F * K) @ d)


# ---------------------------------------------------------------------------------------------
# exact bias
# ---------------------------------------------------------------------------------------------
def best_bias(c, s, w=None):
    """Exact minimiser of ``f(b) = sum_k w_k max(0, s_k (b - c_k))``, ``s_k in {-1,+1}``.

    Sorting the breakpoints ``c_k``: the right-slope of ``f`` left of all breakpoints is
    ``-sum_{s_k=-1} w_k`` and increases by ``w_k`` at each ``c_k``.  The minimiser is the first
    breakpoint where the right-slope becomes ``>= 0``; if it is exactly 0 the minimisers form an
    interval and its midpoint is returned.  Returns ``(b, f(b))``; ``f(b)`` is evaluated directly.
    """
    c = np.asarray(c, float)
    s = np.asarray(s, float)
    w = np.ones_like(c) if w is None else np.asarray(w, float)
    if c.ndim != 1 or c.size == 0 or s.shape != c.shape or w.shape != c.shape:
        raise ValueError("best_bias: c, s, w must be non-empty 1-D arrays of the same length")
    if not (np.all(np.isfinite(c)) and np.all(np.isfinite(w)) and np.all(w >= 0)):
        raise ValueError("best_bias: c must be finite and w finite and >= 0")
    order = np.argsort(c, kind="stable")
    cs, ws = c[order], w[order]
    slope = -np.sum(w[s < 0]) + np.cumsum(ws)
    # unit weights: slopes are exact small integers
    j = int(np.searchsorted(slope >= 0, True)) if np.any(slope >= 0) else len(cs) - 1
    b = float(cs[j])
    if slope[j] == 0.0 and j + 1 < len(cs):
        b = 0.5 * cs[j] + 0.5 * cs[j + 1]
    if j == 0 and -np.sum(w[s < 0]) == 0.0:  # f non-decreasing: any b <= c_min
        b = float(cs[0])
    fb = float(np.sum(w * np.maximum(0.0, s * (b - c))))
    return b, fb


def weighted_bias(c, s, C):
    """Best bias and the box-weighted loss ``min_b sum_k C_k max(0, s_k (b - c_k))``.

    A scalar box keeps the unit-weight search of :func:`best_bias` and multiplies its value by
    ``C`` (the unweighted computation); a vector box (one weight per
    breakpoint) is the weighted search, still exact: sorting the breakpoints, the slope grows
    by ``C_k`` at each.  Returns ``(b, value)``.
    """
    if isinstance(C, np.ndarray):
        return best_bias(c, s, C)
    b, f = best_bias(c, s)
    return b, C * f


# ---------------------------------------------------------------------------------------------
# certificates
# ---------------------------------------------------------------------------------------------
def _admit(z, proj_fn, infeas_fn, C: float, n: int, project: bool, what: str):
    """Return ``(point, infeasibility, projected, distance)``; never moves a feasible point."""
    tol = feasibility_tolerance(C, n)
    infeas = infeas_fn(z)
    if infeas <= tol:
        return z, infeas, False, 0.0
    if not project:
        raise ValueError(
            f"{what} is infeasible: violation {infeas:.3e} > 1e-9 * C * sqrt(n) = {tol:.3e} "
            "(pass project=True to certify its Euclidean projection instead)"
        )
    x = proj_fn(z)
    return x, infeas_fn(x), True, float(np.linalg.norm(z - x))


def _scaled_primal_gap(q: float, lin: float, g: np.ndarray, y: np.ndarray,
                       chinge: float, b: float | None):
    """Best of two primal points: ``(w, b)`` at the best bias, and the hard-margin point.

    ``g = G d`` (decision values without bias), ``b`` the best bias of the hinge (None: no
    bias, P3), ``chinge`` its value ``sum_i C_i max(0, 1 - y_i (g_i + b))`` (the box's
    weights included; ``C`` times the hinge sum for a scalar box).  Any primal point bounds the
    fixed-kernel SVM from above.
    The hard-margin point is ``(s w, s beta)`` with the bias ``beta`` that maximises the smallest
    margin ``m`` (with a bias: ``beta = -(min_{y=+1} g + max_{y=-1} g) / 2``, ``m = (min_{y=+1}
    g - max_{y=-1} g) / 2``; without: ``m = min_i y_i g_i``) and ``s = 1 / m``: no margin is
    violated (``s`` is enlarged by a few ulps until no *computed* margin is below 1), at the
    price ``||s w||^2 = s^2 q``, in *both* directions: ``s < 1`` when every margin exceeds 1
    (e.g. ``n = 2``, margins ``1 + 1.5e-5``: the point ``(w, b)`` overstates the gap by that
    much), ``s > 1`` when ``C >> a*`` and the violations are rounding errors that ``C`` would
    amplify into a spurious gap ``C n u``.  Returns ``(gap_raw, s)``.
    """
    gap1 = q + chinge - lin
    if not q > 0.0:
        return gap1, 1.0
    if b is None:
        beta, m = 0.0, float(np.min(y * g))
    else:
        pos = y > 0
        if pos.all() or not pos.any():
            return gap1, 1.0
        top, bot = float(np.min(g[pos])), float(np.max(g[~pos]))
        beta, m = -0.5 * (top + bot), 0.5 * (top - bot)
    if not m > 0.0:
        return gap1, 1.0
    gap_s, sc = hard_margin_gap(q, lin, y * (g + beta))
    return (gap_s, sc) if gap_s < gap1 else (gap1, 1.0)


def hard_margin_gap(q: float, lin: float, margins: np.ndarray) -> tuple[float, float]:
    """Gap ``q (1 + s^2) / 2 - lin`` of the point ``(s w, s beta)`` that violates no margin.

    ``margins = y o (g + beta)`` at a given bias ``beta``; ``s = 1 / min margins``, enlarged by
    a few ulps until no *computed* margin ``s * margins_i`` is below 1 (the hinge is then
    exactly 0).  Returns ``(inf, 1)`` when the smallest margin is not positive or ``q <= 0``.
    Used by the certificates' hard-margin point (max-margin bias; :func:`svm_primal_gap`) and
    by the oracle's check of a submitted bias.
    """
    m = float(np.min(margins))
    if not (m > 0.0 and q > 0.0):
        return float("inf"), 1.0
    sc = 1.0 / m
    for _ in range(8):
        if m * sc >= 1.0:
            return (q - lin) + 0.5 * q * (sc * sc - 1.0), sc
        sc *= 1.0 + 2.0**-49
    return float("inf"), 1.0


def svm_primal_gap(g: np.ndarray, d: np.ndarray, y: np.ndarray, C,
                   lin: float) -> tuple[float, float]:
    """``(gap, b)``: the duality gap of the SVM with a fixed kernel ``G`` at its dual point
    ``d = a o y`` (``g = G d``, ``lin = 1'a``), unscaled: the best of the primal ``(w, b)`` at
    the exact best bias ``b`` (:func:`weighted_bias`; ``C`` a scalar or per-sample box) and
    the hard-margin point at the max-margin bias (:func:`hard_margin_gap`), minus the dual
    ``lin - d'g / 2``. The gap of :func:`svm_certificate` at ``G = F o K``; at ``G = K``
    (``F = 11'``) that of a plain SVM. ``O(n log n)``."""
    q = float(d @ g)
    b, chinge = weighted_bias(y - g, -y, C)
    return _scaled_primal_gap(q, lin, g, y, chinge, b)[0], b


def _svm_infeas(y, C):
    def f(a):
        return max(abs(float(y @ a)), float(-np.min(a)), float(np.max(a - C)), 0.0)
    return f


def svm_certificate(K, y, alpha, *, C, eta, tau, project: bool = False,
                    validate: bool = True) -> Certificate:
    """Certificate for P1 (eq. (4)) at exactly the given ``alpha``.

    Parameters
    ----------
    K, y : kernel and labels in {-1, +1} (both classes), validated per
    :doc:`docs/validity.md </validity>`. alpha : candidate, feasible for
    ``A = {y'a = 0, 0 <= a <= C}`` up to ``1e-9 C sqrt(n)``. C, eta, tau : as in eq. (4)
    (``C, eta > 0``, ``tau >= 0``; representable range);
        ``C`` a scalar or a vector of ``n`` per-sample bounds (``0 <= a_i <= C_i``).
    project : if ``True`` an infeasible ``alpha`` is replaced by its exact Euclidean projection
        onto ``A`` and the result says so (``projected``, ``projection_distance``); otherwise an
        infeasible ``alpha`` raises ``ValueError``.  A feasible ``alpha`` is never moved.
    validate : internal use (callers that validated already).

    Returns
    -------
    Certificate
        ``lower <= v* <= upper`` (``lower <= upper`` by construction), ``gap``, ``rel_gap``,
        the exact best ``bias``, ``F = F(alpha)`` and the certified ``alpha``.
    """
    if validate:
        K = check_kernel(K)
        n = K.shape[0]
        y = check_binary_labels(y, n)
        alpha = check_alpha(alpha, n)
        C = check_box(C, n)
        eta = check_positive(eta, "eta")
        tau = check_nonnegative(tau, "tau")
        project = check_bool(project, "project")
        check_range(C, eta, kernel_scale(K), n)
    K, y = np.asarray(K, float), np.asarray(y, float)
    alpha = np.asarray(alpha, float)
    n = K.shape[0]
    a, infeas, moved, dist = _admit(alpha, lambda z: _project(z, y, C)[0], _svm_infeas(y, C),
                                    C, n, project, "alpha")
    c = frame_scale(box_max(C), eta, kernel_scale(K))
    Kf, Cf, etaf, af = K * c, C / c, eta / c, a / c
    d = af * y
    F, Gamma, eig = _inner(Kf, d, etaf, tau)
    lower_f = float(np.sum(af)) + _inner_value(Kf, d, Gamma, eig, etaf)
    g = (F * Kf) @ d
    scale_f = float(np.sum(af))
    gap_raw_f, b = svm_primal_gap(g, d, y, Cf, scale_f)
    gap_f = max(gap_raw_f, 0.0)
    lower, gap = c * lower_f, c * gap_f
    return Certificate(lower=lower, upper=lower + gap, gap=gap, rel_gap=_rel(gap_f, scale_f),
                       bias=b, F=F, alpha=a, projection_distance=dist, scale=max(c * scale_f, TINY),
                       infeasibility=infeas, projected=moved, gap_raw=c * gap_raw_f)


def svr_certificate(K, y, alpha_hat, alpha_check, *, C, epsilon, eta, tau, project: bool = False,
                    validate: bool = True) -> Certificate:
    """Certificate for P2 (eq. (22), bias constraint ``1'(ah - ac) = 0``) at exactly
    ``(alpha_hat, alpha_check)``.

    The pair is certified as given: ``h = b'y - eps 1'(ah + ac) + eta (n^2 - ||F(b)||^2)``,
    ``b = ah - ac``, ``Gamma = diag(b) K diag(b) / (4 eta)``.  ``min(ah_i, ac_i)`` is *not*
    removed (that would certify another point: ``h`` depends on ``ah + ac``).  Feasibility:
    ``max(|1'(ah - ac)|, -min(ah, ac), max(ah, ac) - C) <= 1e-9 C sqrt(n)``, else ``ValueError``
    unless ``project=True`` (explicit exact projection of ``[ah; ac]``, reported in the result).
    """
    if validate:
        K = check_kernel(K)
        n = K.shape[0]
        y = check_targets(y, n)
        alpha_hat = check_alpha(alpha_hat, n, "alpha_hat")
        alpha_check = check_alpha(alpha_check, n, "alpha_check")
        C = check_box(C, n)
        epsilon = check_nonnegative(epsilon, "epsilon")
        eta = check_positive(eta, "eta")
        tau = check_nonnegative(tau, "tau")
        project = check_bool(project, "project")
        check_range(C, eta, kernel_scale(K), n)
    K, y = np.asarray(K, float), np.asarray(y, float)
    n = K.shape[0]
    z = np.concatenate([np.asarray(alpha_hat, float), np.asarray(alpha_check, float)])
    u = np.concatenate([np.ones(n), -np.ones(n)])
    C2 = stack_box(C)
    x, infeas, moved, dist = _admit(z, lambda v: _project(v, u, C2)[0], _svm_infeas(u, C2),
                                    C, n, project, "(alpha_hat, alpha_check)")
    ah, ac = x[:n].copy(), x[n:].copy()
    c = frame_scale(box_max(C), eta, kernel_scale(K))
    Kf, Cf, etaf = K * c, C / c, eta / c
    ahf, acf = ah / c, ac / c
    bf = ahf - acf
    F, Gamma, eig = _inner(Kf, bf, etaf, tau)
    by = float(bf @ y)
    l1 = float(np.sum(ahf) + np.sum(acf))
    lin_f = by - epsilon * l1
    lower_f = lin_f + _inner_value(Kf, bf, Gamma, eig, etaf)
    g = (F * Kf) @ bf
    r = y - g
    cpts = np.concatenate([r - epsilon, r + epsilon])
    sgn = np.concatenate([-np.ones(n), np.ones(n)])
    beta, closs = weighted_bias(cpts, sgn, stack_box(Cf))
    q = float(bf @ g)
    gap_raw_f = q + closs - lin_f
    gap_f = max(gap_raw_f, 0.0)
    scale_f = svr_gap_scale(by, epsilon * l1, q, box_max(Cf), y)
    lower, gap = c * lower_f, c * gap_f
    return Certificate(lower=lower, upper=lower + gap, gap=gap, rel_gap=_rel(gap_f, scale_f),
                       bias=beta, F=F, alpha=ah - ac, projection_distance=dist,
                       scale=max(c * scale_f, TINY), alpha_hat=ah, alpha_check=ac,
                       infeasibility=infeas,
                       projected=moved, gap_raw=c * gap_raw_f)


def block_kernel(K, labels) -> np.ndarray:
    """``Kbar_ij = K_ij [labels_i == labels_j]`` (Lemma 5)."""
    K = np.asarray(K, float)
    labels = check_partition(labels, K.shape[0])
    return K * (labels[:, None] == labels[None, :])


def decomposed_certificate(K, y, alpha, *, C, eta, labels=None, project: bool = False,
                           validate: bool = True) -> Certificate:
    """Certificate for P3 (eq. (18) on ``Kbar``): box ``0 <= a <= C`` only, no bias, tau = 0.

    If ``labels`` is given, ``K`` is replaced by :func:`block_kernel` ``(K, labels)``.  The point
    is certified as given (box violation ``<= 1e-9 C sqrt(n)``); ``project=True`` explicitly
    clips an infeasible one to the box and says so.
    """
    if validate:
        K = check_kernel(K)
        n = K.shape[0]
        y = check_binary_labels(y, n, require_both=False)
        alpha = check_alpha(alpha, n)
        C = check_box(C, n)
        eta = check_positive(eta, "eta")
        project = check_bool(project, "project")
        if labels is not None:
            labels = check_partition(labels, n)
    K, y, alpha = np.asarray(K, float), np.asarray(y, float), np.asarray(alpha, float)
    if labels is not None:
        K = block_kernel(K, labels)
    n = K.shape[0]
    if validate:
        check_range(C, eta, kernel_scale(K), n)

    def infeas_fn(a):
        return max(float(-np.min(a)), float(np.max(a - C)), 0.0)

    a, infeas, moved, dist = _admit(alpha, lambda z: np.clip(z, 0.0, C), infeas_fn, C, n,
                                    project, "alpha")
    c = frame_scale(box_max(C), eta, kernel_scale(K))
    Kf, Cf, etaf, af = K * c, C / c, eta / c, a / c
    d = af * y
    F, Gamma, _ = _inner(Kf, d, etaf, 0.0)
    lower_f = float(np.sum(af)) + _inner_value(Kf, d, Gamma, 0.0, etaf)
    g = (F * Kf) @ d
    hinge_i = np.maximum(0.0, 1.0 - y * g)
    if isinstance(Cf, np.ndarray):
        chinge = float(Cf @ hinge_i)
    else:
        chinge = Cf * float(np.sum(hinge_i))
    scale_f = float(np.sum(af))
    gap_raw_f, _ = _scaled_primal_gap(float(d @ g), scale_f, g, y, chinge, None)
    gap_f = max(gap_raw_f, 0.0)
    lower, gap = c * lower_f, c * gap_f
    return Certificate(lower=lower, upper=lower + gap, gap=gap, rel_gap=_rel(gap_f, scale_f),
                       bias=None, F=F, alpha=a, projection_distance=dist,
                       scale=max(c * scale_f, TINY),
                       infeasibility=infeas, projected=moved, gap_raw=c * gap_raw_f)
