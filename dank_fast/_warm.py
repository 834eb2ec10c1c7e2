"""scikit-learn's ``warm_start`` for the DANK estimators: the next fit on the same data starts
from the previous solution, rescaled to the new box ``[0, C]``.

A fit with ``warm_start=True`` on the same training data as the previous fit (checked: a
SHA-256 of the features, labels and the problems' sample indices) starts every problem from
``a0 = clip(a_old * C_new / C_old, -C_new, C_new)`` (``d = ah - ac`` for P2), which the solver
projects onto the feasible set keeping its zeros (:func:`dank_fast.projection.repair_start`).
Scaling keeps ``y'a = 0`` (``1'd = 0``) and is exact where every coordinate sits at a bound, as
for a small ``C``: the paper's grid (Section 6.1.1) walks ``C`` over powers of 2 for each
kernel width. The kernel is reused too when its parameters are the same. Only the start
changes: the answer is certified as in a cold fit.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

__all__ = ["WarmState", "data_key", "rescaled_start"]


@dataclass(frozen=True)
class WarmState:
    """What a fit leaves for the next warm-started one.

    ``key``: :func:`data_key` of its training data and problems; ``C``: every problem's box
    (a scalar, or per-sample bounds from the weights); ``alphas``:
    the dual solution of each problem; ``kernel_key``: its kernel parameters; ``K``: its
    training kernel (``8 n^2`` bytes; None when no dense kernel was formed).
    """

    key: str
    C: tuple
    alphas: tuple[np.ndarray, ...]
    kernel_key: tuple
    K: np.ndarray | None

    def starts(self, key: str, C) -> list[np.ndarray] | None:
        """The rescaled start of every problem, or None when the data differ from the last
        fit's (then the fit is cold). ``C``: the new boxes, one per problem (a scalar or
        per-sample bounds each)."""
        if key != self.key:
            return None
        return [rescaled_start(a, old, new)
                for a, old, new in zip(self.alphas, self.C, C, strict=True)]

    def kernel(self, key: str, kernel_key: tuple) -> np.ndarray | None:
        """The previous fit's training kernel when the data and kernel parameters agree."""
        return self.K if key == self.key and kernel_key == self.kernel_key else None


def rescaled_start(alpha: np.ndarray, C_old, C_new) -> np.ndarray:
    """``clip(alpha C_new / C_old, -C_new, C_new)``: the previous solution in the new box (the
    solver projects it onto the feasible set); per-sample boxes coordinate by coordinate.
    ``O(n)``."""
    C_new = np.asarray(C_new, dtype=np.float64)
    return np.clip(alpha * (C_new / np.asarray(C_old, dtype=np.float64)), -C_new, C_new)


def data_key(X: np.ndarray, y: np.ndarray, indices) -> str:
    """SHA-256 of the training data (shape, dtype, bytes), the labels and each problem's sample
    indices: equal keys mean the same problems on the same data. ``O(n d)`` time."""
    h = hashlib.sha256()
    for arr in (X, y, *indices):
        a = np.ascontiguousarray(arr)
        h.update(f"{a.shape}{a.dtype.str}".encode())
        h.update(a.view(np.uint8).reshape(-1))
    return h.hexdigest()
