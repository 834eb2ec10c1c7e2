"""The result object every fast solver returns (cf. ``scipy.optimize.OptimizeResult``).

The result contract (docs/conventions.md, "Result contract"): every result of ``dank_fast``
and of ``dank_ref`` has the fields of :data:`RESULT_FIELDS` with those meanings, its ``status``
is one of :data:`STATUSES`, and an answer that is not certified to ``tol`` comes with a
:class:`dank_fast.ConvergenceWarning` (a subclass of scikit-learn's).  ``dank_ref`` never
imports ``dank_fast`` and the two packages share no code, so ``dank_ref._result`` holds the
same tables; tests/test_result_contract.py checks that they are equal.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .certificate import Certificate
from .inner import InnerSolution, KernelData, apply_FK

__all__ = ["DANKResult", "SolverResult", "STATUSES", "RESULT_FIELDS", "RENAMED_STATUSES"]

#: The status words of every result of dank_fast and dank_ref, each with its one meaning.
#: Whatever the status, ``lower <= v* <= upper`` holds at the returned (feasible) point.
STATUSES = {
    "converged": "the returned point is feasible and its certified rel_gap <= tol",
    "max_iter": "an iteration limit was reached before the certified rel_gap reached tol",
    "time_limit": "the time limit was reached before the certified rel_gap reached tol",
    "stopped": "the method's own stopping rule fired (the paper's methods) before the "
               "certified rel_gap reached tol",
    "stalled": "no further progress was possible (floating point, or every stage of the "
               "method was tried) before the certified rel_gap reached tol",
}

#: Status words of the previous release and the word that replaces each (docs/conventions.md).
RENAMED_STATUSES = {
    "inaccurate": "stalled (dank_ref; max_iter when the conic solver's max_iter stopped it)",
    "not_converged": "the first of time_limit, max_iter, stopped, stalled that a cluster "
                     "reports (dank_fast's DecomposedResult)",
}

#: The fields every result has (dank_fast's DANKResult, WorkingSetResult, DecomposedResult;
#: dank_ref's RefResult), each with its one meaning; None where a result has no value
#: (docs/conventions.md, "Result contract").
RESULT_FIELDS = {
    "alpha": "the returned dual vector, feasible (P2: alpha_hat - alpha_check)",
    "alpha_hat": "P2: the certified pair's first vector; None for P1 and P3",
    "alpha_check": "P2: the certified pair's second vector; None for P1 and P3",
    "bias": "the exact best bias of the certified kernel F o K; None for P3",
    "lower": "certified lower bound of the saddle value v*: h(alpha)",
    "upper": "certified upper bound of v*",
    "gap": "upper - lower (>= 0)",
    "rel_gap": "gap / scale (docs/MATH.md section 5)",
    "value": "the certified lower bound h(alpha) (= lower)",
    "status": "one of STATUSES",
    "success": 'status == "converged"',
    "F": "F(alpha), the inner minimiser, a dense n x n array",
    "time": "wall-clock seconds of the whole solve",
    "n_iter": "iterations, in the unit of max_iter; None where none ran",
    "projection_distance": "distance from the method's raw point to the returned feasible one",
    "message": "one line on how the solve ended",
    "method": "the method that produced alpha; None where the solve has no method argument",
    "certificate": "the certificate of the returned point (the package's own Certificate)",
}


class SolverResult:
    """The result contract shared by every result of dank_fast and dank_ref.

    Subclasses have every name of :data:`RESULT_FIELDS` (fields or properties); this base
    gives the two that follow from the others, ``success`` and ``value``.
    """

    @property
    def success(self) -> bool:
        """``True`` iff ``status == "converged"``."""
        return self.status == "converged"

    @property
    def value(self) -> float:
        """Best estimate of the saddle value: the certified lower bound ``h(alpha)``."""
        return self.lower


@dataclass
class DANKResult(SolverResult):
    """Solution of a DANK saddle problem with its certificate.

    Has every field of ``dank_fast._result.RESULT_FIELDS`` (docs/conventions.md, "Result
    contract"); ``success`` and ``value`` come from the base ``SolverResult``.

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
        One of :data:`STATUSES`; ``success`` is True only for ``"converged"``, and every other
        status comes with a :class:`dank_fast.ConvergenceWarning`.
    n_iter : int
        Iterations of the method, the unit of ``max_iter``: Newton steps for ``"newton"`` and
        ``"auto"`` (the accelerated fallback's are ``extra["accelerated_iter"]``), iterations
        for ``"accelerated"`` and the paper's methods, Newton steps over all rounds for the
        working sets.
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
        Route-specific details (for instance the working-set route's statistics, Newton's
        ``newton_iter``, ``accelerated_iter`` and ``handovers``, or the paper's ``L``).
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
