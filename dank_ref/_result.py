"""Result object and exceptions of the reference package."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["RefResult", "SolverError", "InaccurateSolutionWarning"]


class SolverError(RuntimeError):
    """The conic solver failed or returned an infeasible/unbounded/unknown status.

    The message contains the CVXPY status string.
    """


class InaccurateSolutionWarning(UserWarning):
    """The solution could not be certified to the requested relative gap.

    Emitted when CVXPY reports ``optimal_inaccurate`` (or the independent certificate fails to
    confirm an ``optimal`` report) and polishing did not repair it; ``status`` is then
    ``"inaccurate"``.
    """


@dataclass
class RefResult:
    """Solution of one reference solve (field names shared with ``dank_fast``).

    Attributes
    ----------
    alpha : ndarray
        SVM / P3: the dual vector ``a``.  SVR: ``b = alpha_hat - alpha_check``.
    alpha_hat, alpha_check : ndarray or None
        SVR only (``alpha_hat = max(b, 0)``, ``alpha_check = max(-b, 0)`` after projection).
    bias : float or None
        Exact best bias for the certified kernel ``F o K`` (``None`` for P3, which has no bias).
        Decision function: ``f(x) = sum_i alpha_i y_i (F o K)(x_i, x) + bias`` (SVR: ``alpha_i``
        in place of ``alpha_i y_i``).
    F : ndarray
        ``F(alpha)``, the inner minimiser (Lemma fbound), n x n.
    lower, upper, gap, rel_gap : float
        Independent certificate (``dank_ref.certificate``): ``lower <= v* <= upper``.
    status : str
        ``"optimal"`` (certified: ``rel_gap <= certify_tol``) or ``"inaccurate"``.
    value : float
        Best estimate of the saddle value, ``(lower + upper) / 2``.
    """

    alpha: np.ndarray
    bias: float | None
    F: np.ndarray
    lower: float
    upper: float
    gap: float
    rel_gap: float
    status: str
    time: float
    solver: str
    solver_stats: dict[str, Any] = field(default_factory=dict)
    n_iter: int | None = None
    value: float = float("nan")
    message: str = ""
    alpha_hat: np.ndarray | None = None
    alpha_check: np.ndarray | None = None
    projection_distance: float = 0.0
    polished: bool = False

    def __repr__(self) -> str:  # compact: no big arrays
        return (
            f"RefResult(status={self.status!r}, value={self.value:.10g}, gap={self.gap:.3e}, "
            f"rel_gap={self.rel_gap:.3e}, n={self.alpha.shape[0]}, solver={self.solver!r}, "
            f"time={self.time:.3f}s)"
        )
