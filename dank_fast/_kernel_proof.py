"""Kernel matrices that are PSD by construction: the proof :func:`dank_fast.compute_kernel`
attaches to the matrix it returns.

The Gaussian, linear and polynomial kernels (``gamma > 0``, ``coef0 >= 0``, integer degree)
give a PSD matrix ``K`` on any points. The matrix computed in floating point is ``K^ = K + E``,
and ``lambda_min(K^) >= -||E||_2 >= -n max|E_ij|``. docs/validity.md, rule 4, accepts ``K^``
when ``lambda_min(K^) >= -eps_psd n s`` (``s = max|K^_ij|``); so ``max|E_ij| <= eps_psd s``
proves what the ``O(n^3)`` PSD test would decide, whatever the data. The bounds of
:func:`rounding_bound` (``u`` the unit round-off, ``g(k) = k u / (1 - k u)``, Higham, Thm 3.5;
``d`` features, ``R^2 = max_i ||x_i||^2``):

* linear, ``K^ = fl(X X')``: ``|E_ij| <= g(d) ||x_i|| ||x_j|| <= g(d) R^2`` and
  ``s >= max_i K^_ii >= (1 - g(d)) R^2``;
* Gaussian, ``exp(-gamma D)`` with ``D^ = fl(|x_i|^2 + |x_j|^2 - 2 x_i'x_j)`` (clipped at 0,
  zero diagonal: both only move ``D^`` towards ``D``): ``|D^ - D| <= 4 g(d + 3) R^2``; the
  product by ``gamma`` adds a relative ``u`` (at most ``u / e`` in ``K``, since ``x e^-x <= 1
  / e``) and ``exp`` at most ``4 u`` (numpy's is within 4 ulp); ``s = 1``, so ``max|E| <=
  1.02 (4 gamma g(d + 3) R^2 + 5 u)`` while ``4 gamma g(d + 3) R^2 <= 1e-3``;
* polynomial, ``(gamma x'z + c0)^p`` (scikit-learn's ``K *= gamma; K += c0; K **= p``): the
  base errs by at most ``g(d + 2) B``, ``B = gamma R^2 + c0 >= |base|``, so the power by
  ``p g(d + 2) (1 + g(d + 2))^(p - 1) B^p + 4 u B^p``, and ``s >= K^_ii`` at the longest
  ``x_i`` is ``B^p`` up to the same relative error.

:func:`compute_kernel` mirrors the upper triangle (so ``K^`` is exactly symmetric), makes the
array read-only (an in-place change would void the proof) and records it here with its
extremes; :func:`dank_fast._kernel_validation.validate_kernel_matrix` then accepts that very
array without a pass over it. A copy, a view or any other array is checked as usual.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from ._rounding import UNIT_ROUNDOFF as _U
from ._rounding import gamma as _g

__all__ = ["rounding_bound", "symmetrise", "attach", "proof_of"]


#: id -> (weak reference, min, max) of the arrays carrying a proof; the record goes with the array
_PROVED: dict[int, tuple[weakref.ref, float, float]] = {}


def rounding_bound(params: dict, X: np.ndarray) -> float:
    """A bound on ``max|K^_ij - K_ij| / max|K^_ij|`` for the kernel of ``X`` with itself
    computed by :func:`dank_fast.kernels.evaluate_kernel` (module docstring); ``inf`` for a
    kernel without one."""
    d = X.shape[1]
    R2 = float(np.max(np.einsum("ij,ij->i", X, X), initial=0.0))
    metric = params["metric"]
    if metric == "linear":
        return 1.01 * _g(d) / (1.0 - _g(d))
    if metric == "rbf":
        a = 4.0 * params["gamma"] * _g(d + 3) * R2
        return 1.02 * (a + 5.0 * _U) if a <= 1e-3 else math.inf
    if metric == "poly":
        p, gd = params["degree"], _g(d + 2)
        if p * gd > 1e-3:  # (1 + g)^(p - 1) <= e^(p g) stays near 1 below this
            return math.inf
        grow = math.exp((p - 1) * math.log1p(gd))
        return 1.02 * (p * gd * grow + 4.0 * _U) / (1.0 - p * gd * grow)
    return math.inf


def symmetrise(K: np.ndarray, block: int = 256) -> np.ndarray:
    """Mirror the upper triangle of the square ``K`` onto the lower one in place, by blocks of
    ``block`` rows (no ``n x n`` temporary): ``O(n^2)`` copies."""
    n = K.shape[0]
    for lo in range(0, n, block):
        hi = min(lo + block, n)
        K[hi:, lo:hi] = K[lo:hi, hi:].T
        tile = K[lo:hi, lo:hi]
        low = np.tril_indices(hi - lo, -1)
        tile[low] = tile.T[low]
    return K


def attach(K: np.ndarray) -> np.ndarray:
    """Record the read-only, exactly symmetric float64 ``K`` as PSD within the tolerance of
    docs/validity.md (the caller has proved it, :func:`rounding_bound`); returns ``K``."""
    if K.flags.writeable:
        raise ValueError("only a read-only array can carry a proof")
    key = id(K)
    ref = weakref.ref(K, lambda _, key=key: _PROVED.pop(key, None))
    _PROVED[key] = (ref, float(K.min()), float(K.max()))
    return K


def proof_of(K) -> tuple[float, float] | None:
    """``(min K, max K)`` when ``K`` is an array :func:`attach` recorded and nobody has made
    it writable since; None otherwise."""
    if not isinstance(K, np.ndarray) or K.flags.writeable:
        return None
    record = _PROVED.get(id(K))
    return None if record is None or record[0]() is not K else record[1:]
