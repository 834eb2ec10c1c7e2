"""Result object, status words and exceptions of the reference package.

The result contract (docs/conventions.md, "Result contract"): every result of ``dank_ref`` and
of ``dank_fast`` has the fields of :data:`RESULT_FIELDS` with those meanings, its ``status`` is
one of :data:`STATUSES`, and an answer that is not certified to ``tol`` comes with a
:class:`ConvergenceWarning` (a subclass of scikit-learn's).  ``dank_ref`` never imports
``dank_fast``, so ``dank_fast._result`` holds the same two tables; tests/test_result_contract.py
checks that they are equal.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["RefResult", "SolverResult", "SolverError", "STATUSES",
           "RESULT_FIELDS", "RENAMED_STATUSES"]

#: The status words of every result of dank_ref and dank_fast, each with its one meaning.
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

#: The fields every result has (dank_ref's RefResult; dank_fast's DANKResult,
#: WorkingSetResult, DecomposedResult), each with its one meaning; None where a result has
#: no value (docs/conventions.md, "Result contract").
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


class SolverError(RuntimeError):
    """The conic solver failed or returned an infeasible/unbounded/unknown status.

    The message contains the CVXPY status string.
    """


@functools.cache
def _convergence_warning() -> type:
    """dank_ref's :class:`ConvergenceWarning`, created on first use: scikit-learn, whose class
    it extends, takes about a second to import, and the oracle's building blocks
    (validation, projection, kernels, certificate) must stay light."""
    # start-up: sklearn is imported only when a solver warns or the class is asked for
    from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

    class ConvergenceWarning(SklearnConvergenceWarning):
        """The returned point is not certified to the requested relative gap ``tol``.

        Emitted whenever ``status != "converged"`` (the point is still feasible and its
        bracket ``lower <= v* <= upper`` valid, only wider).  A subclass of
        :class:`sklearn.exceptions.ConvergenceWarning`, as ``dank_fast.ConvergenceWarning`` is:
        a filter on scikit-learn's class catches both packages' warnings.  Replaces
        ``InaccurateSolutionWarning``, an alias of this class for one release.
        """

    ConvergenceWarning.__module__ = __name__
    ConvergenceWarning.__qualname__ = "ConvergenceWarning"
    return ConvergenceWarning


def deprecated_warning_name(stacklevel: int = 3) -> type:
    """``InaccurateSolutionWarning``: :class:`ConvergenceWarning` under its previous name, with
    a :class:`DeprecationWarning` attributed ``stacklevel`` frames up (removed in the next
    release)."""
    warnings.warn("dank_ref.InaccurateSolutionWarning is deprecated and will be removed in the "
                  "next release; use dank_ref.ConvergenceWarning (a subclass of "
                  "sklearn.exceptions.ConvergenceWarning)", DeprecationWarning,
                  stacklevel=stacklevel)
    return _convergence_warning()


def __getattr__(name: str):
    if name == "ConvergenceWarning":
        return _convergence_warning()
    if name == "InaccurateSolutionWarning":
        return deprecated_warning_name()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class SolverResult:
    """The result contract shared by every result of dank_ref and dank_fast.

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


@dataclass(repr=False)
class RefResult(SolverResult):
    """Solution of one reference solve, with its independent certificate.

    Has every field of :data:`RESULT_FIELDS` with the meaning shared with ``dank_fast``'s
    results (:doc:`docs/conventions.md </conventions>`, "Result contract"); ``success`` and ``value`` come from
    :class:`SolverResult`.

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
        One of :data:`STATUSES`: ``"converged"`` (certified ``rel_gap <= tol``), else
        ``"time_limit"`` (the solve stopped at ``time_limit``), ``"max_iter"`` (the last
        conic solve stopped at the ``max_iter`` it was given) or ``"stalled"`` (every stage
        was tried; the previous release's ``"inaccurate"``), with a
        :class:`ConvergenceWarning`.
    time : float
        Wall-clock seconds of the whole solve.
    solver : str
        The conic solver asked for (``solver_stats["certified_solver"]`` names the one whose
        point was certified).
    solver_stats : dict
        What ran: the stages, the conic solver's statistics.
    n_iter : int or None
        Iterations of the last conic solve, the unit of ``max_iter`` (None when none ran).
    message : str
        A human-readable account of the status.
    method : str or None
        P3: the ``method`` argument, ``"joint"`` or ``"blocks"``; None for P1 and P2, which
        have no method argument (``solver_stats["candidate"]`` names the stage whose point
        was certified).
    certificate : dank_ref.certificate.Certificate or None
        The independent certificate of the returned point (``lower`` ... ``rel_gap`` are its
        fields; ``infeasibility``, ``scale`` and ``gap_raw`` besides).
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
    method: str | None = None
    certificate: Any = None

    def __repr__(self) -> str:  # compact: no big arrays
        return (
            f"RefResult(status={self.status!r}, value={self.value:.10g}, gap={self.gap:.3e}, "
            f"rel_gap={self.rel_gap:.3e}, n={self.alpha.shape[0]}, solver={self.solver!r}, "
            f"time={self.time:.3f}s)"
        )
