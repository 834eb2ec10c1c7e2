"""The results every fast solver returns (cf. ``scipy.optimize.OptimizeResult``), their
warning, and ``finish``, which certifies a method's final point and builds its result.

The result contract (docs/conventions.md, "Result contract"): every result of ``dank_fast``
and of ``dank_ref`` has the fields of :data:`RESULT_FIELDS` with those meanings, its ``status``
is one of :data:`STATUSES`, and an answer that is not certified to ``tol`` comes with a
:class:`dank_fast.ConvergenceWarning` (a subclass of scikit-learn's).  ``dank_ref`` never
imports ``dank_fast`` and the two packages share no code, so ``dank_ref._result`` holds the
same tables; tests/test_result_contract.py checks that they are equal.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

from .certificate import Certificate
from .feature_kernel import FeatureKernel
from .inner import InnerSolution, KernelData, LowRankF, apply_FK

__all__ = ["DANKResult", "SolverResult", "WorkingSetResult", "STATUSES", "RESULT_FIELDS",
           "RENAMED_STATUSES", "ConvergenceWarning", "PAPER_METHODS", "finish"]

#: the paper's methods (:mod:`dank_fast._paper`): they stop on their printed rule or at
#: ``t_max``, never on the certificate
PAPER_METHODS = ("paper", "paper-monotone", "pgm")


class ConvergenceWarning(SklearnConvergenceWarning):
    """The returned point is not certified to the requested relative gap ``tol``.

    Emitted whenever ``status != "converged"`` (the point is still feasible and its bracket
    ``lower <= v* <= upper`` valid, only wider), by every solver of dank_fast.  A subclass of
    :class:`sklearn.exceptions.ConvergenceWarning` (itself a ``UserWarning``), as
    ``dank_ref.ConvergenceWarning`` is: a filter on scikit-learn's class catches both
    packages' warnings (docs/conventions.md).
    """


#: The status words of every result of dank_fast and dank_ref, each with its one meaning.
#: Whatever the status, ``lower <= v* <= upper`` holds at the returned (feasible) point.
STATUSES = {
    "converged": "the returned point is feasible and its certified rel_gap <= tol",
    "max_iter": "an iteration limit was reached before the certified rel_gap reached tol",
    "time_limit": "the time limit was reached before the certified rel_gap reached tol",
    "stopped": "the method's own stopping rule fired (the paper's methods) before the "
               "certified rel_gap reached tol",
    "stalled": "no further progress was possible (floating point, or every stage of the "
               "method ran) before the certified rel_gap reached tol",
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


@dataclass(repr=False)
class WorkingSetResult(DANKResult):
    """:class:`DANKResult` of the full problem solved on working sets.

    ``alpha`` has all ``n`` entries; ``inner`` (``F`` in factored form) and ``kernel`` belong to
    the final working set ``working_set`` (sorted indices), with the other points as ghosts:
    :attr:`F_factors` expands the factors to all ``n`` rows (``n x rank`` memory); the dense
    ``F`` (``n x n``) is refused above 2 GiB.
    """

    working_set: np.ndarray = field(default=None)
    feature_kernel: FeatureKernel | None = field(default=None)
    rounds: list = field(default_factory=list)

    @property
    def F_factors(self):
        F = self.inner.F
        if not isinstance(F, LowRankF):
            return None
        n = self.alpha.size
        U = np.empty((n, F.rank))
        U[:] = F.ghost if F.ghost is not None else 0.0
        U[self.working_set] = F.U
        return F.mu, U

    def F_rows(self, rows) -> np.ndarray:
        """``F[rows, :]`` for indices ``rows`` (``len(rows) x n`` memory)."""
        rows = np.atleast_1d(rows)
        F = self.inner.F
        n = self.alpha.size
        if isinstance(F, LowRankF):
            mu, U = self.F_factors
            return (U[rows] * mu) @ U.T
        # tau = 0: F = 11' + Gamma, Gamma supported on the working set
        d = self.alpha * self.extra["y"]
        out = np.ones((rows.size, n))
        S = np.flatnonzero(d)
        KrS = self.feature_kernel.block(rows, S)
        out[:, S] += d[rows][:, None] * d[S][None, :] * KrS / (4 * self.extra["eta"])
        return out

    @property
    def F(self) -> np.ndarray:
        n = self.alpha.size
        if 8 * n * n > 2 << 30:
            raise MemoryError(f"F is {n} x {n}; use F_factors or F_rows")
        return self.F_rows(np.arange(n))

    def apply_FK(self, x) -> np.ndarray:
        """``(F o K) x`` over all ``n`` points, blockwise from the features."""
        x = np.asarray(x, dtype=np.float64)
        S = np.flatnonzero(x)
        n = x.size
        kern = self.feature_kernel
        if S.size == 0:
            return np.zeros(n)
        F = self.inner.F
        if isinstance(F, LowRankF):
            mu, U = self.F_factors
            block = kern.product(np.arange(n), S, U[S] * x[S, None])
            return np.einsum("ik,ik,k->i", U, block, mu)
        d = self.alpha * self.extra["y"]
        c = 1.0 / (4 * self.extra["eta"])
        out = kern.product(np.arange(n), S, x[S])
        # + d_i sum_j K_ij^2 d_j x_j c: rows in blocks
        step = kern.rows_per_block(S.size)
        for lo in range(0, n, step):
            rows = np.arange(lo, min(lo + step, n))
            B = kern.block(rows, S)
            out[rows] += c * d[rows] * ((B * B) @ (d[S] * x[S]))
        return out


def _without_scratch(inner):
    """The inner solution without what only the solvers' Newton curvature reads (the dense
    route's eigenvectors, the curvature's diagonal): a result keeps ``F`` in factors only."""
    if inner.basis is None and inner.kk_d2 is None:
        return inner
    return dataclasses.replace(inner, basis=None, kk_d2=None)


def finish(problem, z, ev, cert, status, n_iter, t_start, method, hist, tol, raw=None):
    """Certify the final point, build the result; a :class:`ConvergenceWarning` when its
    certified ``rel_gap > tol`` (for ``"newton"``, :func:`dank_fast._newton.newton` warns once
    after its accelerated bursts).

    ``status`` is why the method ended (:data:`dank_fast._result.STATUSES`); a method that
    stops on the certificate (every one but the paper's) ends ``"converged"`` whenever the
    final point's certified ``rel_gap <= tol``, so for it the warning comes exactly when
    ``status != "converged"``.  The paper's methods stop on their printed rule
    (``"stopped"``) or at ``t_max`` (``"max_iter"``), whatever the certificate says.
    """
    proj_dist = 0.0
    if raw is not None:
        proj_dist = float(np.linalg.norm(raw - z))
    if ev.z is not z:
        ev, cert = problem.evaluate(z, warm=ev), None
    if cert is None:
        cert = problem.certify(ev)
    # the methods that stop on the certificate end "converged" whenever it reaches tol; the
    # paper's stop on their printed rule, and their status says which rule ended them
    if status != "converged" and cert.rel_gap <= tol and method not in PAPER_METHODS:
        status = "converged"
    bias = problem.bias(ev, cert) if problem.kind != "decomposed" else None
    if hasattr(problem.kd, "drop_caches"):
        problem.kd.drop_caches()
    message = _message(status, cert.rel_gap, tol)
    res = DANKResult(
        alpha=z,
        bias=bias,
        lower=cert.lower,
        upper=cert.upper,
        gap=cert.gap,
        rel_gap=cert.rel_gap,
        status=status,
        n_iter=n_iter,
        time=time.perf_counter() - t_start,
        method=method,
        certificate=cert,
        inner=_without_scratch(ev.inner),
        kernel=problem.kd,
        history=hist,
        projection_distance=proj_dist,
        message=message,
    )
    if not cert.rel_gap <= tol and method != "newton":  # newton warns once, after its bursts
        warnings.warn(
            f"DANK solver did not certify tol={tol:g}: {res.message}", ConvergenceWarning,
            stacklevel=3,
        )
    return res


def _message(status: str, rel_gap: float, tol: float) -> str:
    """The one line of ``result.message`` for a status of :data:`dank_fast._result.STATUSES`."""
    rel = "<=" if rel_gap <= tol else ">"
    if status == "converged":
        return f"certified relative gap {rel_gap:.2e} <= tol {tol:.1e}"
    cause = {
        "max_iter": "iteration limit reached",
        "time_limit": "time limit reached",
        "stopped": "the method's stopping rule fired",
        "stalled": "no further progress possible",
    }[status]
    return f"{cause}; certified relative gap {rel_gap:.2e} {rel} tol {tol:.1e}"
