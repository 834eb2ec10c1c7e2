"""The constants of floating-point error analysis the certified bounds use (Higham, *Accuracy
and Stability of Numerical Algorithms*, 2nd ed., section 3.1)."""

from __future__ import annotations

import numpy as np

__all__ = ["UNIT_ROUNDOFF", "gamma"]

#: the unit round-off ``u`` of float64 (half the machine epsilon)
UNIT_ROUNDOFF = 0.5 * float(np.finfo(np.float64).eps)


def gamma(k: float) -> float:
    """Higham's ``gamma_k = k u / (1 - k u)``: the relative error of ``k`` rounded operations
    (of a dot product of length ``k``, for instance); valid for ``k u < 1``."""
    return k * UNIT_ROUNDOFF / (1.0 - k * UNIT_ROUNDOFF)
