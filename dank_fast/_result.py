"""The result object every fast solver returns (cf. ``scipy.optimize.OptimizeResult``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .certificate import Certificate
from .inner import InnerSolution, KernelData, apply_FK

__all__ = ["DANKResult", "STATUSES"]

STATUSES = {
    "converged": "certified relative gap <= tol",
    "max_iter": "iteration limit reached before the certified gap reached tol",
    "stopped": "the method's own stopping rule fired; the certified gap is reported, not <= tol",
    "stalled": "no further progress possible in floating point; the certified gap is reported",
}


@dataclass
class DANKResult:
    """Solution of a DANK saddle problem with its certificate.

    Attributes
    ----------
    alpha : ndarray of shape (n,)
        Dual variable (feasible: exactly projected if the method's iterate was not).
    bias : float or None
        Bias ``b`` of the decision function ``f = (F o K)(alpha * y) + b`` (None for P3).
    lower, upper, gap, rel_gap : float
        Certified bracket of the saddle value ``v*`` and its width (see
        :mod:`dank_fast.certificate`).
    status : str
        One of :data:`STATUSES`; ``success`` is True only for ``"converged"``.
    n_iter : int
        Iterations of the method.
    time : float
        Wall-clock seconds.
    method : str
        The method that produced ``alpha``.
    certificate : Certificate
        The full certificate at ``alpha`` (bias interval, inner excess, infeasibility).
    inner : InnerSolution
        ``F(alpha)`` in factored form; see :attr:`F`, :attr:`F_factors`, :meth:`apply_FK`.
    kernel : KernelData
        The kernel the problem was solved on (products with it, without copies).
    history : dict of lists
        Per-iteration traces (``h`` estimate, ``step`` = ``||a_t - a_{t-1}||``,
        and ``gap`` where computed).
    projection_distance : float
        Distance from the method's last iterate to the returned (feasible) alpha.
    message : str
        A human-readable account of the status.
    extra : dict
        Route-specific details (for instance the working-set route's statistics, or
        ``"presolve"``: the rank, iterations and status of the solve on the low-rank surrogate
        of the kernel that started the solve, where one ran; see docs/MATH.md 5.3).
    alpha_hat, alpha_check : ndarray of shape (n,) or None
        SVR only: the certified pair (``alpha = alpha_hat - alpha_check``), as in
        ``dank_ref``'s ``RefResult`` (docs/conventions.md); None for P1 and P3.  The same
        arrays are also readable as ``extra["alpha_hat"]`` and ``extra["alpha_check"]``.
    """

    alpha: np.ndarray
    bias: float | None
    lower: float
    upper: float
    gap: float
    rel_gap: float
    status: str
    n_iter: int
    time: float
    method: str
    certificate: Certificate
    inner: InnerSolution = field(repr=False)
    kernel: KernelData = field(repr=False)
    history: dict = field(default_factory=dict, repr=False)
    projection_distance: float = 0.0
    message: str = ""
    extra: dict = field(default_factory=dict, repr=False)
    alpha_hat: np.ndarray | None = field(default=None, repr=False)
    alpha_check: np.ndarray | None = field(default=None, repr=False)

    @property
    def success(self) -> bool:
        """Whether the certified relative gap reached the tolerance (``status == "converged"``)."""
        return self.status == "converged"

    @property
    def value(self) -> float:
        """Best estimate of the saddle value: the certified lower bound ``h(alpha)``."""
        return self.lower

    @property
    def F(self) -> np.ndarray:
        """The learned matrix ``F(alpha)`` as a dense n x n array (O(n^2) memory)."""
        return self.inner.F.dense()

    @property
    def F_factors(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(mu, U)`` with ``F = U diag(mu) U'``, or None for the tau = 0 form ``11' + Gamma``."""
        F = self.inner.F
        return (F.mu, F.U) if hasattr(F, "mu") else None

    def apply_FK(self, x) -> np.ndarray:
        """Return ``(F o K) x`` without forming ``F`` or ``F o K``.

        Costs one product with ``K`` per factor of ``F`` (O(r n^2) time for rank ``r`` with a
        dense kernel) and O(n) memory besides the kernel.

        Parameters
        ----------
        x : array_like of shape (n,)
            The vector to multiply.

        Returns
        -------
        ndarray of shape (n,)
            ``(F o K) x``; with ``x = alpha * y`` (P1) this is the decision value without bias
            at the training points.
        """
        return apply_FK(self.inner.F, self.kernel, x)

    def __repr__(self) -> str:
        return (
            f"DANKResult(method={self.method!r}, status={self.status!r}, n_iter={self.n_iter}, "
            f"gap={self.gap:.3e}, rel_gap={self.rel_gap:.3e}, lower={self.lower:.10g}, "
            f"upper={self.upper:.10g}, time={self.time:.3f}s)"
        )
