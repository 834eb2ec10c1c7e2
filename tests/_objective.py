"""DANK's dual objective ``h`` and its gradient through the public API, for the tests.

``h(a) = 1'a + eta * deficit`` with the inner minimiser ``F(a)`` of Lemma 1
(:func:`dank_fast.inner_minimiser`), defined for any ``a``, feasible or not (finite
differences and the paper's projection leave the box); ``grad h(a) = 1 - Y (F(a) o K) Y a``
(eq. (26), :func:`dank_fast.apply_FK`).
"""

from __future__ import annotations

import numpy as np

from dank_fast import KernelData, apply_FK, inner_minimiser


def h_and_inner(K, y, a, eta, tau, route="auto"):
    """``(h(a), F(a))``; ``K`` a kernel matrix or a :class:`dank_fast.KernelData`."""
    kd = K if isinstance(K, KernelData) else KernelData(K)
    inner = inner_minimiser(kd, a * y, eta, tau, route=route)
    return float(a.sum()) + eta * inner.deficit, inner


def h_value(K, y, a, eta, tau, route="auto") -> float:
    """``h(a)`` (module docstring)."""
    return h_and_inner(K, y, a, eta, tau, route)[0]


def grad_h(K, y, a, eta, tau, route="auto") -> np.ndarray:
    """``grad h(a)`` (module docstring)."""
    kd = K if isinstance(K, KernelData) else KernelData(K)
    _, inner = h_and_inner(kd, y, a, eta, tau, route)
    return 1.0 - y * apply_FK(inner.F, kd, a * y)
