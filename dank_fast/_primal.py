"""The SVM primal of a fixed kernel: the exact best bias and the loss term of the duality gap.

For decision values ``f0 = (F^ o K) d`` without the bias (``d = a o y`` for P1 and P3, ``d = ah -
ac`` for P2), :mod:`dank_fast.certificate` bounds the saddle value from above by the primal of the
fixed kernel ``F^ o K`` at the expansion ``d``. This module computes that primal's loss:

* the best bias: ``sum_i C_i loss_i(f0_i + b)`` is convex and piecewise linear in the scalar
  ``b`` (the hinge ``max(0, 1 - y_i f)`` of P1, the epsilon-insensitive ``max(0, |y_i - f| -
  eps)`` of P2), so its exact minimiser is found by sorting the breakpoints
  (:func:`best_bias`);
* the hard-margin point: the expansion rescaled until no margin is violated, whose hinge is 0
  (:func:`hard_margin_loss`); the loss term of P1's and P3's gap is the smaller of the two
  (:func:`bias_and_loss`, :func:`primal_loss`, which the solvers' cheap gap estimates use too);
* the KKT bias of the coordinates strictly inside their boxes (:func:`kkt_bias`).

``C`` is a scalar or per-sample bounds ``C_i`` (docs/MATH.md section 14).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "best_bias",
    "bias_and_loss",
    "hard_margin_loss",
    "kkt_bias",
    "primal_loss",
]


def best_bias(f0: np.ndarray, y: np.ndarray, eps: float | None = None, weights=None):
    """Return the exact minimiser of ``sum_i w_i loss_i(f0_i + b)`` over the scalar bias ``b``.

    Classification (``eps is None``): ``loss_i(f) = max(0, 1 - y_i f)``, labels +-1.
    Regression: ``loss_i(f) = max(0, |y_i - f| - eps)`` (epsilon-insensitive).

    Both are sums of hinges in ``b``: ``w (p - b)_+`` terms (slope ``-w``) and
    ``w (b - q)_+`` terms (slope ``+w``). The minimum of a convex piecewise-linear
    function is attained at a breakpoint; all breakpoints are evaluated with weighted
    prefix sums after one sort: O(n log n) time, O(n) memory.  The inputs are not validated.

    Parameters
    ----------
    f0 : array_like of shape (n,)
        The decision values without bias, ``f0 = (F o K)(a o y)`` for P1.
    y : array_like of shape (n,)
        Labels -1 or +1 (classification) or finite targets (regression).
    eps : float or None, default None
        ``None`` for the hinge loss of classification; the tube half-width ``epsilon >= 0``
        for the epsilon-insensitive loss of regression.
    weights : array_like of shape (n,), optional
        Positive weights ``w_i`` of the losses: the per-sample boxes ``C_i`` (docs/MATH.md
        section 14). ``None``: every weight 1.

    Returns
    -------
    b : float
        Midpoint of the set of minimisers.
    (lo, hi) : tuple of float
        The set of minimisers (an interval).
    value : float
        The minimum of the (weighted) loss sum.

    Examples
    --------
    >>> import numpy as np
    >>> b, (lo, hi), value = best_bias(np.array([0.0, 0.0]), np.array([1.0, -1.0]))
    >>> b, (lo, hi), value
    (0.0, (-1.0, 1.0), 2.0)
    """
    f0 = np.asarray(f0, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if weights is None:
        return _best_bias_unit(f0, y, eps)
    w = np.broadcast_to(np.asarray(weights, dtype=np.float64), y.shape)
    if eps is None:
        pos = y > 0
        P, wP = y[pos] - f0[pos], w[pos]  # w (P - b)_+ terms
        Q, wQ = y[~pos] - f0[~pos], w[~pos]  # w (b - Q)_+ terms
    else:
        P, wP = y - f0 - eps, w  # w (y - f0 - eps - b)_+
        Q, wQ = y - f0 + eps, w  # w (b - (y - f0 + eps))_+
    oP, oQ = np.argsort(P, kind="stable"), np.argsort(Q, kind="stable")
    P, wP, Q, wQ = P[oP], wP[oP], Q[oQ], wQ[oQ]
    t = np.unique(np.concatenate([P, Q]))
    cP = np.concatenate([[0.0], np.cumsum(wP * P)])
    cWP = np.concatenate([[0.0], np.cumsum(wP)])
    cQ = np.concatenate([[0.0], np.cumsum(wQ * Q)])
    cWQ = np.concatenate([[0.0], np.cumsum(wQ)])
    iP = np.searchsorted(P, t, side="right")
    iQ = np.searchsorted(Q, t, side="left")
    val = (cP[-1] - cP[iP]) - (cWP[-1] - cWP[iP]) * t + cWQ[iQ] * t - cQ[iQ]
    return _flat_minimum(t, val, cWP[-1] + cWQ[-1])


def _best_bias_unit(f0: np.ndarray, y: np.ndarray, eps: float | None):
    """:func:`best_bias` with every weight 1 (the numbers of the unweighted certificate)."""
    if eps is None:
        pos = y > 0
        P = np.sort(y[pos] - f0[pos])  # (P - b)_+ terms
        Q = np.sort(y[~pos] - f0[~pos])  # (b - Q)_+ terms
    else:
        P = np.sort(y - f0 - eps)  # (y - f0 - eps - b)_+
        Q = np.sort(y - f0 + eps)  # (b - (y - f0 + eps))_+
    t = np.unique(np.concatenate([P, Q]))
    cP = np.concatenate([[0.0], np.cumsum(P)])
    cQ = np.concatenate([[0.0], np.cumsum(Q)])
    iP = np.searchsorted(P, t, side="right")
    iQ = np.searchsorted(Q, t, side="left")
    val = (cP[-1] - cP[iP]) - (P.size - iP) * t + iQ * t - cQ[iQ]
    return _flat_minimum(t, val, float(P.size + Q.size))


def _flat_minimum(t: np.ndarray, val: np.ndarray, total_weight: float):
    """The midpoint, interval and value of the minimum of ``val`` over the breakpoints ``t``."""
    vmin = float(val.min())
    # ties within rounding: the prefix sums' error is ~ u * (total weight) * max|t|, so the
    # tolerance is relative to that magnitude (homogeneous of degree 1: scale invariant, no
    # absolute floor; every breakpoint 0 gives tolerance 0 and the exact minimisers)
    tol = 1e-13 * max(abs(vmin), float(np.max(np.abs(t))) * total_weight)
    flat = np.flatnonzero(val <= vmin + tol)
    lo, hi = float(t[flat[0]]), float(t[flat[-1]])
    return 0.5 * (lo + hi), (lo, hi), max(vmin, 0.0)


def kkt_bias(f0: np.ndarray, y: np.ndarray, alpha: np.ndarray, C) -> float | None:
    """Bias from the KKT conditions: mean of ``y_i - f0_i`` over free support vectors.

    Free is measured against each coordinate's own box: ``0 < a_i < C_i`` (``C`` a scalar or
    per-sample bounds; a point at ``a_i = C_j`` for a larger ``C_j`` is free, docs/MATH.md
    section 14). Returns None when no coefficient is strictly inside its box (then the bias
    is only determined up to an interval; use :func:`best_bias`).
    """
    margin = 1e-8 * C
    free = (alpha > margin) & (alpha < C - margin)
    if not np.any(free):
        return None
    return float(np.mean(y[free] - f0[free]))


def _weights(C):
    """``(weights, factor)`` of the loss ``sum_i C_i loss_i = factor * sum_i weights_i
    loss_i``: ``(None, C)`` for a scalar box (the unweighted sums), ``(C, 1)`` for
    per-sample boxes."""
    if np.ndim(C) == 0:
        return None, float(C)
    return np.asarray(C, dtype=np.float64), 1.0


def bias_and_loss(f0: np.ndarray, y: np.ndarray, C, q_half: float):
    """``(b, interval, loss)``: the primal point of :func:`dank_fast.certificate.certify_svm`
    for ``f0`` over all points (``q_half = d'f0 / 2``): the loss ``sum_i C_i max(0, 1 - y_i
    (f0_i + b))`` at the exact best bias, or its hard-margin rescaling where that is smaller
    (``C`` a scalar or per-sample bounds)."""
    w, factor = _weights(C)
    b, interval, hinge = best_bias(f0, y, weights=w)
    loss, b, interval = _best_loss(f0, y, q_half, factor, hinge, b, interval)
    return b, interval, loss


# the hard-margin candidate's scale is enlarged by this factor (a few units of rounding) until
# every computed margin is >= 1: its hinge is then exactly 0 in floating point
_MARGIN_SAFETY = 1.0 + 2.0**-49


def hard_margin_loss(f0: np.ndarray, y: np.ndarray, q_half: float, with_bias: bool = True):
    """The primal point ``(t w, t b)`` that violates no margin, or None (Lemma 5's SVM).

    Weak duality holds for every primal point, so besides ``(w, b)`` (``w = sum_i a_i y_i
    phi_i``, best bias) the certificate may use ``(t w, t b)`` with ``t = 1 / m`` and ``b`` the
    max-margin bias, ``m = (min_{y=+1} f0 - max_{y=-1} f0) / 2`` (``m = min_i y_i f0_i`` without
    a bias, P3): every margin is then ``>= 1`` and the hinge is 0, at the price of
    ``||t w||^2 = t^2 q``. This matters when ``C`` is far above ``max a*`` (the hard-margin
    regime, e.g. ``C = 1e20``): the margins of the support vectors are 1 only up to rounding
    (``~1e-16``, and how much depends on the BLAS kernels), and ``C`` times that rounding is a
    spurious gap of ``~1e4`` that no solver can remove. This candidate's gap is ``q (1 + t^2) / 2
    - 1'a``, which is 0 at the optimum whatever ``C``. O(n) time and memory.

    Returns
    -------
    (loss, bias) or None
        ``loss = (t^2 - 1) q / 2`` (the slot of ``C hinge`` in the gap formula, so that
        ``q + loss - 1'a`` is this candidate's SVM duality gap) and the max-margin bias of the
        unscaled decision function ``f0 + bias`` (``0`` without a bias); None when the points
        are not separated by ``f0`` (``m <= 0``) or ``q <= 0``.
    """
    if not q_half > 0.0:
        return None
    pos = y > 0
    if with_bias:
        if pos.all() or not pos.any():
            return None
        hi, lo = float(f0[pos].min()), float(f0[~pos].max())
        m, bias = 0.5 * (hi - lo), -0.5 * (hi + lo)
    else:
        m, bias = float((y * f0).min()), 0.0
    if not m > 0.0:
        return None
    t = 1.0 / m
    for _ in range(8):  # rounding of t * (f0 + bias): enlarge t until no computed margin is < 1
        if float((y * (f0 + bias)).min()) * t >= 1.0:
            break
        t *= _MARGIN_SAFETY
    else:
        return None
    return (t * t - 1.0) * q_half, bias


def _hinge_at_zero(f0: np.ndarray, y: np.ndarray, w) -> float:
    """``sum_i w_i max(0, 1 - y_i f0_i)`` (every ``w_i = 1`` when ``w`` is None)."""
    h = np.maximum(0.0, 1.0 - y * f0)
    return float(h.sum()) if w is None else float(w @ h)


def primal_loss(f0: np.ndarray, y: np.ndarray, q_half: float, C,
                with_bias: bool = True) -> float:
    """The loss slot of the SVM duality gap ``q + loss - 1'a`` that the certificate uses.

    ``sum_i C_i`` times the hinge at the best bias (``C`` a scalar or per-sample bounds), or
    :func:`hard_margin_loss`'s when smaller. The solvers' cheap gap estimates use this too, so
    that they agree with the certificate about when to certify (at ``C = 1e20`` the hinge alone
    is a rounding artefact). O(n log n).
    """
    w, factor = _weights(C)
    if with_bias:
        hinge = best_bias(f0, y, weights=w)[2]
    else:
        hinge = _hinge_at_zero(f0, y, w)
    return _best_loss(f0, y, q_half, factor, hinge, None, None, with_bias)[0]


def _best_loss(f0, y, q_half, factor, hinge, bias, interval, with_bias=True):
    """The smaller of ``factor * hinge`` (the box-weighted hinge at the best bias, see
    :func:`_weights`) and :func:`hard_margin_loss`'s candidate."""
    hm = hard_margin_loss(f0, y, q_half, with_bias)
    if hm is not None and hm[0] < factor * hinge:
        return hm[0], (hm[1] if with_bias else bias), ((hm[1], hm[1]) if with_bias else interval)
    return factor * hinge, bias, interval
