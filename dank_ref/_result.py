"""Result object and exceptions of the reference package."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["RefResult", "SolverError", "InaccurateSolutionWarning", "STATUSES"]

#: The values of ``RefResult.status``, each with its meaning.
STATUSES = {
    "converged": "certified relative gap <= tol (the point is feasible)",
    "inaccurate": "no candidate reached tol; the certified gap of the best one is reported",
    "time_limit": "the solve stopped at time_limit before reaching tol; the certified gap of "
                  "the best point so far is reported",
}


class SolverError(RuntimeError):
    """The conic solver failed or returned an infeasible/unbounded/unknown status.

    The message contains the CVXPY status string.
    """


class InaccurateSolutionWarning(UserWarning):
    """The solution could not be certified to the requested relative gap ``tol``.

    Emitted when no candidate (conic solution, cheap start, each polished) reaches a certified
    ``rel_gap <= tol``; ``status`` is then ``"inaccurate"`` or ``"time_limit"``.
    """


@dataclass
class RefResult:
    """Solution of one reference solve, with its independent certificate.

    The names and meanings are shared with ``dank_fast``'s ``DANKResult``
    (:doc:`docs/conventions.md </conventions>`).

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
        ``F(alpha)``, the inner minimiser (Lemma 1), n x n.
    lower, upper, gap, rel_gap : float
        Independent certificate (``dank_ref.certificate``): ``lower <= v* <= upper``.
    status : str
        One of :data:`STATUSES`: ``"converged"`` (certified ``rel_gap <= tol``),
        ``"inaccurate"`` or ``"time_limit"``.
    time : float
        Wall-clock seconds of the whole solve.
    solver : str
        The conic solver asked for (``solver_stats["certified_solver"]`` names the one whose
        point was certified).
    solver_stats : dict
        What ran: the stages, the conic solver's statistics.
    n_iter : int or None
        Iterations of the last conic solve (None when none ran).
    message : str
        A human-readable account of the status.
    projection_distance : float
        Distance from the raw candidate to the certified (feasible) point.
    polished : bool
        Whether the active-set Newton polisher improved the candidate.
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
    message: str = ""
    alpha_hat: np.ndarray | None = None
    alpha_check: np.ndarray | None = None
    projection_distance: float = 0.0
    polished: bool = False

    @property
    def success(self) -> bool:
        """``True`` iff ``status == "converged"``."""
        return self.status == "converged"

    @property
    def value(self) -> float:
        """Best estimate of the saddle value: the certified lower bound ``h(alpha)``."""
        return self.lower

    def __repr__(self) -> str:  # compact: no big arrays
        return (
            f"RefResult(status={self.status!r}, value={self.value:.10g}, gap={self.gap:.3e}, "
            f"rel_gap={self.rel_gap:.3e}, n={self.alpha.shape[0]}, solver={self.solver!r}, "
            f"time={self.time:.3f}s)"
        )
