"""Independent duality certificates for P1 (SVM), P2 (SVR) and P3 (decomposed SVM).

This module is dank_ref's own code (dense ``numpy.linalg.eigh``); it never imports ``dank_fast``.

For a feasible ``a`` let ``F_hat = F(a) = J_{tau/2}(11' + Gamma(a))`` (Lemma fbound).

* lower bound ``h(a) = H(a, F_hat) <= v*``.  It is evaluated without the cancellation of
  ``1'a + eta (n^2 - ||F_hat||_F^2)``: with ``d = a o y``, ``M = 11' + Gamma`` and eigenvalues
  ``l_k`` of ``M``,

      eta (n^2 - ||F_hat||^2) = -1/2 d'Kd - eta ||Gamma||_F^2 + eta sum_k phi(l_k),
      phi(l) = tau l - tau^2/4  (l >= tau/2),   phi(l) = l^2  (l < tau/2),

  because ``||M||^2 = n^2 + 2 1'Gamma 1 + ||Gamma||^2``, ``2 eta 1'Gamma 1 = 1/2 d'Kd`` and
  ``||M||^2 - ||F_hat||^2 = sum_k phi(l_k)``.  For ``tau = 0`` the last sum vanishes.
* upper bound ``v* <= g(F_hat) <= Primal(a, b) + R(F_hat)`` for every bias ``b``, where Primal is
  the SVM (SVR) primal objective for the fixed kernel ``G = F_hat o K`` at
  ``w = sum_i a_i y_i phi(x_i)``.  Because ``F_hat`` minimises ``H(a, .)``,
  ``h(a) = 1'a - 1/2 d'Gd + R(F_hat)`` exactly, so

      gap = upper - lower = d'Gd + C sum_i max(0, 1 - y_i (G d + b)_i) - 1'a

  (the plain SVM duality gap for the kernel ``G``); it is computed in this form (no large
  cancelling terms) and ``upper := lower + gap``.  SVR: ``b`` is the coefficient vector
  ``alpha_hat - alpha_check``, ``gap = b'Gb + C sum_i max(0, |y_i - (Gb)_i - beta| - eps)
  - b'y + eps 1'(alpha_hat + alpha_check)``.  P3: no bias (``beta = 0``), ``tau = 0``.
* the best bias minimises a convex piecewise-linear function of one variable; it is found
  exactly by sorting the breakpoints (:func:`best_bias`).
* ``a`` is first projected exactly onto the feasible set (:func:`project_box_hyperplane`); the
  Euclidean projection distance is reported.
* relative gaps: SVM and P3 ``gap / max(1'a, tiny)`` (the SVM-side scale, ``docs/MATH.md``
  section 5); SVR
  ``gap / max(|b'y|, 1'(alpha_hat + alpha_check), C)`` (``b'y`` is the SVR analogue of
  ``1'a``: at a saddle point ``b'y - eps 1'(ah+ac) = b'Gb + C loss``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import (
    check_alpha,
    check_binary_labels,
    check_kernel,
    check_nonnegative,
    check_partition,
    check_positive,
    check_targets,
)

__all__ = [
    "Certificate",
    "inner_F",
    "h_svm",
    "grad_h_svm",
    "project_box_hyperplane",
    "best_bias",
    "svm_certificate",
    "svr_certificate",
    "decomposed_certificate",
    "block_kernel",
]

TINY = np.finfo(float).tiny


@dataclass
class Certificate:
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

    @property
    def value(self) -> float:
        return 0.5 * (self.lower + self.upper)


# ---------------------------------------------------------------------------------------------
# inner problem
# ---------------------------------------------------------------------------------------------
def _inner(K: np.ndarray, d: np.ndarray, eta: float, tau: float):
    """Return ``(F, Gamma, eig_term)`` with ``eig_term = sum_k phi(l_k)`` (see module doc)."""
    n = K.shape[0]
    Gamma = np.outer(d, d) * K / (4.0 * eta)
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
    del n
    return F, Gamma, float(np.sum(phi))


def inner_F(K, d, *, eta: float, tau: float) -> np.ndarray:
    """``F = J_{tau/2}(11' + diag(d) K diag(d) / (4 eta))`` by a dense eigendecomposition."""
    K = np.asarray(K, float)
    return _inner(K, np.asarray(d, float), float(eta), float(tau))[0]


def _inner_value(K, d, Gamma, eig_term, eta) -> float:
    """``min_F [-1/2 d'(F o K)d + R(F)] = eta (n^2 - ||F(d)||^2)`` without cancellation."""
    return float(-0.5 * d @ K @ d - eta * np.sum(Gamma * Gamma) + eta * eig_term)


def h_svm(K, y, a, *, eta: float, tau: float) -> float:
    """Closed-form ``h(a) = min_F H(a, F)`` (no feasibility check)."""
    K = np.asarray(K, float)
    a = np.asarray(a, float)
    d = a * np.asarray(y, float)
    _, Gamma, eig = _inner(K, d, eta, tau)
    return float(np.sum(a)) + _inner_value(K, d, Gamma, eig, eta)


def grad_h_svm(K, y, a, *, eta: float, tau: float) -> np.ndarray:
    """``grad h(a) = 1 - Y (F(a) o K) Y a`` (Danskin; eq. gradf)."""
    K = np.asarray(K, float)
    y = np.asarray(y, float)
    d = np.asarray(a, float) * y
    F = _inner(K, d, eta, tau)[0]
    return 1.0 - y * ((F * K) @ d)


# ---------------------------------------------------------------------------------------------
# projection and exact bias
# ---------------------------------------------------------------------------------------------
def project_box_hyperplane(z, u, C: float, *, n_bisect: int = 200):
    """Euclidean projection of ``z`` onto ``{x : 0 <= x <= C, u'x = 0}`` for ``u in {-1,+1}^m``.

    ``x(lam) = clip(z - lam u, 0, C)``; ``phi(lam) = u'x(lam)`` is non-increasing, its root is
    bracketed and bisected, then made exact by solving the linear equation on the final piece.
    Returns ``(x, lam)``.
    """
    z = np.asarray(z, float)
    u = np.asarray(u, float)

    def phi(lam):
        return float(u @ np.clip(z - lam * u, 0.0, C))

    R = float(np.max(np.abs(z))) + C + 1.0
    lo, hi = -R, R  # phi(lo) >= 0 >= phi(hi)
    for _ in range(n_bisect):
        mid = 0.5 * (lo + hi)
        if phi(mid) > 0.0:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 4 * np.finfo(float).eps * max(1.0, abs(mid)):
            break
    lam = 0.5 * (lo + hi)
    w = z - lam * u
    free = (w > 0.0) & (w < C)
    if np.any(free):
        up = w >= C
        lam_exact = (float(u[free] @ z[free]) + C * float(np.sum(u[up]))) / int(np.sum(free))
        w2 = z - lam_exact * u
        # accept only if the active pattern is unchanged (it must be, up to ties)
        if np.array_equal((w2 > 0.0) & (w2 < C), free) and np.array_equal(w2 >= C, up):
            lam = lam_exact
    x = np.clip(z - lam * u, 0.0, C)
    return x, lam


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
    order = np.argsort(c, kind="stable")
    cs, ws = c[order], w[order]
    slope = -np.sum(w[s < 0]) + np.cumsum(ws)
    # unit weights: slopes are exact small integers
    j = int(np.searchsorted(slope >= 0, True)) if np.any(slope >= 0) else len(cs) - 1
    b = float(cs[j])
    if slope[j] == 0.0 and j + 1 < len(cs):
        b = 0.5 * (cs[j] + cs[j + 1])
    elif slope[j] == 0.0 and j + 1 == len(cs):
        b = float(cs[j])
    if j == 0 and -np.sum(w[s < 0]) == 0.0:  # f non-decreasing: any b <= c_min
        b = float(cs[0])
    fb = float(np.sum(w * np.maximum(0.0, s * (b - c))))
    return b, fb


# ---------------------------------------------------------------------------------------------
# certificates
# ---------------------------------------------------------------------------------------------
def _feasibility_check(alpha, proj, project: bool, what: str, tol: float = 1e-9):
    dist = float(np.linalg.norm(alpha - proj))
    if not project and dist > tol * max(1.0, float(np.max(np.abs(alpha)))):
        raise ValueError(f"{what} is infeasible (distance {dist:.3e} to the feasible set)")
    return dist


def svm_certificate(K, y, alpha, *, C, eta, tau, project: bool = True,
                    validate: bool = True) -> Certificate:
    """Certificate for P1 (eq. mainrank) at ``alpha`` (projected onto ``A`` first).

    With ``project=False`` an infeasible ``alpha`` raises ``ValueError`` instead.
    Returns :class:`Certificate` with ``lower <= v* <= upper``, ``gap``, ``rel_gap``,
    the exact best ``bias``, ``F = F(alpha)`` and the projected ``alpha``.
    """
    if validate:
        K = check_kernel(K)
        n = K.shape[0]
        y = check_binary_labels(y, n)
        alpha = check_alpha(alpha, n)
        C = check_positive("C", C)
        eta = check_positive("eta", eta)
        tau = check_nonnegative("tau", tau)
    K, y, alpha = np.asarray(K, float), np.asarray(y, float), np.asarray(alpha, float)
    a, _ = project_box_hyperplane(alpha, y, C)
    dist = _feasibility_check(alpha, a, project, "alpha")
    d = a * y
    F, Gamma, eig = _inner(K, d, eta, tau)
    lower = float(np.sum(a)) + _inner_value(K, d, Gamma, eig, eta)
    g = (F * K) @ d
    b, hinge = best_bias(y - g, -y)
    gap = float(d @ g) + C * hinge - float(np.sum(a))
    scale = max(float(np.sum(a)), TINY)
    return Certificate(lower=lower, upper=lower + gap, gap=gap, rel_gap=gap / scale, bias=b, F=F,
                       alpha=a, projection_distance=dist, scale=scale)


def svr_certificate(K, y, alpha_hat, alpha_check, *, C, epsilon, eta, tau, project: bool = True,
                    validate: bool = True) -> Certificate:
    """Certificate for P2 (eq. mainsvr, bias constraint ``1'(ah - ac) = 0``).

    ``(alpha_hat, alpha_check)`` is projected exactly onto
    ``{0 <= ah, ac <= C, 1'(ah - ac) = 0}``.  Lower bound
    ``h = b'y - eps 1'(ah + ac) + eta (n^2 - ||F(b)||^2)``, ``b = ah - ac``,
    ``Gamma = diag(b) K diag(b) / (4 eta)``.
    """
    if validate:
        K = check_kernel(K)
        n = K.shape[0]
        y = check_targets(y, n)
        alpha_hat = check_alpha(alpha_hat, n, "alpha_hat")
        alpha_check = check_alpha(alpha_check, n, "alpha_check")
        C = check_positive("C", C)
        epsilon = check_nonnegative("epsilon", epsilon)
        eta = check_positive("eta", eta)
        tau = check_nonnegative("tau", tau)
    K, y = np.asarray(K, float), np.asarray(y, float)
    n = K.shape[0]
    z = np.concatenate([np.asarray(alpha_hat, float), np.asarray(alpha_check, float)])
    u = np.concatenate([np.ones(n), -np.ones(n)])
    x, _ = project_box_hyperplane(z, u, C)
    dist = _feasibility_check(z, x, project, "(alpha_hat, alpha_check)")
    ah, ac = x[:n], x[n:]
    # ah_i, ac_i > 0 together is never better (eps >= 0): remove the common part (b unchanged)
    common = np.minimum(ah, ac)
    ah, ac = ah - common, ac - common
    dist = float(np.linalg.norm(z - np.concatenate([ah, ac])))
    bvec = ah - ac
    F, Gamma, eig = _inner(K, bvec, eta, tau)
    lin = float(bvec @ y) - epsilon * float(np.sum(ah + ac))
    lower = lin + _inner_value(K, bvec, Gamma, eig, eta)
    g = (F * K) @ bvec
    r = y - g
    cpts = np.concatenate([r - epsilon, r + epsilon])
    sgn = np.concatenate([-np.ones(n), np.ones(n)])
    beta, loss = best_bias(cpts, sgn)
    gap = float(bvec @ g) + C * loss - lin
    # floor C: a* = 0 is optimal when every target fits in the eps-tube, and then
    # b'y and 1'(ah + ac) both vanish while the gap is pure round-off
    scale = max(abs(float(bvec @ y)), float(np.sum(ah + ac)), C)
    return Certificate(lower=lower, upper=lower + gap, gap=gap, rel_gap=gap / scale, bias=beta,
                       F=F, alpha=bvec, projection_distance=dist, scale=scale, alpha_hat=ah,
                       alpha_check=ac)


def block_kernel(K, labels) -> np.ndarray:
    """``Kbar_ij = K_ij [labels_i == labels_j]`` (Lemma lemmalink)."""
    labels = np.asarray(labels)
    return np.asarray(K, float) * (labels[:, None] == labels[None, :])


def decomposed_certificate(K, y, alpha, *, C, eta, labels=None, project: bool = True,
                           validate: bool = True) -> Certificate:
    """Certificate for P3 (eq. mainls on ``Kbar``): box ``0 <= a <= C`` only, no bias, tau = 0.

    If ``labels`` is given, ``K`` is replaced by :func:`block_kernel` ``(K, labels)``.
    """
    if validate:
        K = check_kernel(K)
        n = K.shape[0]
        y = check_binary_labels(y, n, require_both=False)
        alpha = check_alpha(alpha, n)
        C = check_positive("C", C)
        eta = check_positive("eta", eta)
        if labels is not None:
            labels = check_partition(labels, n)
    K, y, alpha = np.asarray(K, float), np.asarray(y, float), np.asarray(alpha, float)
    if labels is not None:
        K = block_kernel(K, labels)
    a = np.clip(alpha, 0.0, C)
    dist = _feasibility_check(alpha, a, project, "alpha")
    d = a * y
    F, Gamma, _ = _inner(K, d, eta, 0.0)
    lower = float(np.sum(a)) + _inner_value(K, d, Gamma, 0.0, eta)
    g = (F * K) @ d
    hinge = float(np.sum(np.maximum(0.0, 1.0 - y * g)))
    gap = float(d @ g) + C * hinge - float(np.sum(a))
    scale = max(float(np.sum(a)), TINY)
    return Certificate(lower=lower, upper=lower + gap, gap=gap, rel_gap=gap / scale, bias=None,
                       F=F, alpha=a, projection_distance=dist, scale=scale)
