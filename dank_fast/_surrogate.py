"""The low-rank surrogate ``K~ = L L'`` of a smooth kernel as kernel data, for a presolve.

A smooth kernel on a few features is numerically of low rank: the pivoted Cholesky factor of
:func:`dank_fast._psd.kernel_factors` gives ``K = L L' + E``, ``E`` PSD with its diagonal at
most ``eps_psd max|K| / 2`` (the tolerance at which docs/validity.md accepts ``K``), ``L`` of
``n x r``. On ``K~ = L L'`` every quantity an evaluation of a solve needs costs ``O(n r)`` per
vector instead of a pass over ``K[S][:, S]`` (``|S|^2``):

* products ``K~[:, S] X = L (L_S' X)`` and ``K~[S][:, S] X = L_S (L_S' X)``;
* the exact sums of :meth:`KernelData.gamma_sums`: with ``G = L_S' D^2 L_S`` (``r x r``),
  ``d'K~d = ||L_S' d||^2``, ``sum_ij d_i^2 d_j^2 K~_ij^2 = ||G||_F^2`` and ``((K~ o K~)
  d^2)_i = l_i' G l_i`` (``O(|S| r^2)``);
* ``lambda_max(D K~_SS D) = lambda_max(G)``, exactly (the eigen-route's bound on ``Gamma``).

:func:`dank_fast.svm.solve_svm` solves the problem on ``K~`` first and then on ``K`` from that
solution, whose certificate on ``K`` is the one reported: the surrogate only chooses where
the exact solve starts. The Newton curvature (a model of ``-hess h``, never part of a bound)
reads rows of ``K`` itself, kept here as ``K``.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import eigvalsh

from ._kernel_data import KernelData

__all__ = ["FactorKernelData"]


class FactorKernelData(KernelData):
    """``K~ = L L'`` as :class:`KernelData` (module docstring).

    Parameters
    ----------
    kd : KernelData
        The kernel ``K`` that ``L`` approximates; its rows serve the Newton curvature model and
        its pivoted Cholesky factors (``kd.lowrank``) are shared.
    L : ndarray of shape (n, r)
        The factor.

    Notes
    -----
    ``O(n r)`` memory besides ``K``; no ``|S| x |S|`` block is copied (:meth:`block` forms one
    only for the dense eigendecomposition, which forms one anyway).
    """

    def __init__(self, kd: KernelData, L: np.ndarray):
        super().__init__(kd.K, n_total=kd.n_total, extremes=(-kd.kappa, kd.kappa),
                         copy_blocks=False)
        self.L = L
        self.diag = np.einsum("ij,ij->i", L, L)  # the diagonal of K~
        self.lowrank = kd.lowrank

    def support_product(self, S: np.ndarray, X: np.ndarray) -> np.ndarray:
        return self.L @ (self.L[S].T @ X)

    def block_product(self, S: np.ndarray, X: np.ndarray) -> np.ndarray:
        LS = self.L[S]
        return LS @ (LS.T @ X)

    def block(self, S: np.ndarray) -> np.ndarray:
        LS = self.L[S]
        return LS @ LS.T

    def dense_size(self, S: np.ndarray) -> int:
        """The rank: products with ``L_S`` are ``|S| x r`` (narrow work runs on one thread)."""
        return self.L.shape[1]

    def range_factor(self, S: np.ndarray) -> np.ndarray:
        return self.L[S]

    def block_into(self, S: np.ndarray, out: np.ndarray) -> None:
        LS = self.L[S]
        out[...] = LS @ LS.T

    def top_bound(self, S: np.ndarray, a: np.ndarray) -> float:
        """``lambda_max(diag(a) K~[S][:, S] diag(a))``, exactly, from ``r x r``."""
        La = self.L[S] * a[:, None]
        return float(eigvalsh(La.T @ La, check_finite=False)[-1]) if La.size else 0.0

    def gamma_sums(self, S: np.ndarray, dS: np.ndarray
                   ) -> tuple[float, float, float, np.ndarray]:
        if S.size == 0:
            return 0.0, 0.0, 0.0, np.zeros(0)
        LS = self.L[S]
        d2 = dS * dS
        w = LS.T @ dS
        G = (LS * d2[:, None]).T @ LS
        kk = np.einsum("ij,ij->i", LS @ G, LS)
        return float(w @ w), float(np.sum(G * G)), float(d2 @ self.diag[S]), kk
