"""Quantities of Theorems theorappf and theorsv (decomposition bound and screening).

Given the decomposed solution ``(abar, Fbar)`` (P3 on ``Kbar``, :func:`solve_decomposed`)
and the solution ``(a*, F*)`` of the full problem (P3 on ``K``, eq. mainls -- the proofs
use the bias-free, ``tau = 0`` objective ``H`` of mainls although the theorem names
mainrank), :func:`decomposition_bounds` computes exactly:

* ``Q(pi) = sum_{pi(i) != pi(j)} |K_ij|`` (all ordered off-block pairs);
* ``B1 = min_ij min(F*_ij, Fbar_ij)`` and ``B2 = max_ij max(F*_ij, Fbar_ij)``, ``B = B2 - B1``.
  The theorem prints the condition ``B1 <= max{F*_ij, Fbar_ij} <= B2``, but its proof uses
  ``|F*_ij - Fbar_ij| <= B`` and ``F*_ij <= B2``, which need *both* entries in ``[B1, B2]``:
  that is what is computed. ``Fbar`` is the true minimiser ``11' + Gamma_Kbar(abar)`` (1 off
  the blocks; see :mod:`dank_fast.decomposed`); with the lemma's block-diagonal ``Fbar``
  (0 off the blocks) ``B1 = 0`` and the theorem's ``0 < B1`` fails. Only pairs within the
  support are needed by the proof, but all pairs are used, as the theorem states.
* the bound ``1/2 B C^2 Q(pi)`` and the actual ``|H(a*, F*) - H(abar, Fbar)|`` (full ``K``);
* ``grad_i = (grad_a Hbar(abar, Fbar))_i = 1 - y_i (Fbar o Kbar)_i (abar o y)``;
* the threshold ``t_i = -(B + B2) C (||Kbar_i||_1 + kappa)`` of eq. gradsvc,
  ``kappa = max |K_ij|``; ``screened = {i : abar_i = 0 and grad_i <= t_i}`` (Theorem theorsv
  claims ``a*_i = 0`` for these); ``violations`` lists screened points with ``a*_i > 0``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._kernel_validation import check_kernel_matrix
from ._validation import (
    check_cluster_labels,
    check_feasible,
    check_finite_array,
    check_labels_pm1,
    check_nonnegative,
    check_positive,
    check_representable,
    kernel_scale,
)
from .decomposed import DecomposedProblem, block_kernel, solve_decomposed
from .inner import KernelData

__all__ = ["ScreeningReport", "decomposition_bounds"]


@dataclass
class ScreeningReport:
    """Output of :func:`decomposition_bounds` (see the module docstring)."""

    Q: float
    B1: float
    B2: float
    B: float
    bound: float
    value_gap: float
    H_star: float
    H_bar: float
    grad: np.ndarray
    threshold: np.ndarray
    screened: np.ndarray
    non_support: np.ndarray
    violations: np.ndarray
    kappa: float

    @property
    def screened_fraction(self) -> float:
        """Fraction of the full problem's non-support vectors that are screened."""
        return self.screened.size / max(self.non_support.size, 1)


def _H(K, y, a, F, eta) -> float:
    """``H(a, F) = 1'a - 1/2 d'(F o K)d + eta ||F - 11'||^2`` (tau = 0, no bias)."""
    d = a * y
    return float(a.sum() - 0.5 * d @ ((F * K) @ d) + eta * np.sum((F - 1.0) ** 2))


def _box_feasible(a, name: str, n: int, C: float) -> np.ndarray:
    """A finite real vector of length ``n`` in the box of P3 up to ``1e-9 C sqrt(n)``."""
    a = check_finite_array(a, name, ndim=1)
    if a.shape[0] != n:
        raise ValueError(f"{name} has {a.shape[0]} entries but K has {n} rows")
    check_feasible(a, C, n, name=name)
    return a


def decomposition_bounds(
    K, y, labels, abar, *, C: float, eta: float, alpha_star=None, tol: float = 1e-6,
    zero_tol: float = 1e-10,
) -> ScreeningReport:
    """Theorems theorappf and theorsv evaluated at a decomposed solution.

    Parameters
    ----------
    K : ndarray (n, n)
    y : ndarray (n,), labels in {-1, +1}
    labels : ndarray (n,), the partition ``pi``
    abar : ndarray (n,), the concatenated solution (``DecomposedResult.alpha``)
    C, eta : float
    alpha_star : ndarray (n,), optional
        Solution of the full problem mainls; solved (one cluster, ``tol``) when omitted.
    zero_tol : float
        ``a_i <= zero_tol * C`` counts as ``a_i = 0``.

    Raises
    ------
    TypeError, ValueError
        Invalid input by docs/validity.md (kernel, +-1 labels, cluster labels without
        NaN/None, an ``abar``/``alpha_star`` outside the box ``[0, C]`` beyond
        ``1e-9 C sqrt(n)``, an instance outside the representable range).
    """
    K = check_kernel_matrix(K)
    n = K.shape[0]
    y = check_labels_pm1(y, n, require_both=False)
    labels = check_cluster_labels(labels, n)
    C = check_positive(C, "C")
    eta = check_positive(eta, "eta")
    tol = check_positive(tol, "tol")
    zero_tol = check_nonnegative(zero_tol, "zero_tol")
    check_representable(C, eta, kernel_scale(K), n)
    abar = _box_feasible(abar, "abar", n, C)
    if alpha_star is None:
        alpha_star = solve_decomposed(K, y, C=C, eta=eta, tol=tol).alpha
    alpha_star = _box_feasible(alpha_star, "alpha_star", n, C)
    same = labels[:, None] == labels[None, :]
    Kbar = block_kernel(K, labels)
    Q = float(np.abs(K)[~same].sum())
    ds, db = alpha_star * y, abar * y
    F_star = 1.0 + np.outer(ds, ds) * K / (4 * eta)
    F_bar = 1.0 + np.outer(db, db) * Kbar / (4 * eta)
    B1 = float(min(F_star.min(), F_bar.min()))
    B2 = float(max(F_star.max(), F_bar.max()))
    B = B2 - B1
    H_star = _H(K, y, alpha_star, F_star, eta)
    H_bar = _H(K, y, abar, F_bar, eta)
    kappa = float(np.max(np.abs(K)))
    pb = DecomposedProblem(KernelData(Kbar), y, C, eta)
    grad = pb.evaluate(abar).grad
    threshold = -(B + B2) * C * (np.abs(Kbar).sum(axis=0) + kappa)
    zero_bar = abar <= zero_tol * C
    screened = np.flatnonzero(zero_bar & (grad <= threshold))
    non_support = np.flatnonzero(alpha_star <= zero_tol * C)
    violations = screened[alpha_star[screened] > zero_tol * C]
    return ScreeningReport(
        Q=Q, B1=B1, B2=B2, B=B, bound=0.5 * B * C * C * Q, value_gap=abs(H_star - H_bar),
        H_star=H_star, H_bar=H_bar, grad=grad, threshold=threshold, screened=screened,
        non_support=non_support, violations=violations, kappa=kappa,
    )
