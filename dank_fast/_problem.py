"""The saddle problems as objects the generic first-order solvers can drive.

Each problem maps its dual variable ``z`` to ``d`` (the vector that scales the
kernel in ``Gamma = D K D / (4 eta)``), a linear term ``lin(z)``, a projection,
and a certificate. With ``f0 = (F o K) d``, the chain rule gives the gradient of
``h(z) = lin(z) + eta (n^2 - ||F(d(z))||_F^2)``: ``grad_d [eta (n^2 - ||F||^2)] = -f0``
(envelope theorem on the inner minimum, eq. (26)).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
from scipy.sparse.linalg import ArpackError, eigsh

from ._kernel_data import KernelData
from ._primal import kkt_bias, primal_loss
from .certificate import Certificate, certify_svm
from .inner import InnerSolution, apply_FK, inner_minimiser
from .projection import _project_core, project_paper, repair_start

__all__ = ["SVMProblem", "Evaluation"]


@dataclass
class Evaluation:
    """``F(z)``, ``h(z)`` and (lazily) the gradient at one point."""

    z: np.ndarray
    inner: InnerSolution
    h: float
    _problem: object
    _f0: np.ndarray | None = None
    _grad: np.ndarray | None = None
    _quick: float | None = None

    @property
    def f0(self) -> np.ndarray:
        if self._f0 is None:
            self._f0 = apply_FK(self.inner.F, self._problem.kd, self._problem.d_of(self.z))
        return self._f0

    @property
    def grad(self) -> np.ndarray:
        if self._grad is None:
            self._grad = self._problem.grad(self.z, self.f0)
        return self._grad

    @property
    def quick(self) -> float:
        """The problem's cheap relative gap at this point (``quick_rel_gap``), computed once."""
        if self._quick is None:
            self._quick = self._problem.quick_rel_gap(self)
        return self._quick

    def with_f0(self, f0: np.ndarray) -> Evaluation:
        """A new evaluation at the same point whose ``(F o K) d`` is ``f0`` (its gradient with
        it); ``F`` and ``h`` are this one's (the relaxed phase's predictor,
        :func:`dank_fast._newton._tau_predictor`)."""
        return Evaluation(self.z, self.inner, self.h, self._problem, _f0=f0)


class SVMProblem:
    """P1, eq. (4): ``max_{a in A} h(a)``, ``A = {y'a = 0, 0 <= a <= C}``."""

    kind = "svm"

    def __init__(self, K: np.ndarray | KernelData, y: np.ndarray, C, eta: float, tau: float,
                 route: str = "auto"):
        self.kd = K if isinstance(K, KernelData) else KernelData(K)
        self.y = y
        self.C = C
        self.eta = eta
        self.tau = tau
        self.dim = y.size
        #: how ``F(a)`` is computed (:func:`dank_fast.inner.inner_minimiser`)
        self.route = route

    def relaxed(self) -> SVMProblem:
        """The same problem at ``tau = 0`` (``F(a)`` in closed form), a new object."""
        out = copy.copy(self)
        out.tau = 0.0
        return out

    @property
    def eq_vector(self) -> np.ndarray | None:
        """Normal of the equality constraint (``y'a = 0``); None when there is none."""
        return self.y

    def d_coordinates(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Indices of ``d`` that coordinates ``idx`` of ``z`` move, and ``dd/dz`` there."""
        return idx, self.y[idx]

    def normalize(self, z: np.ndarray) -> np.ndarray:
        """A point with the same ``d`` and no lower ``h`` (identity here; see SVR)."""
        return z

    def project(self, z: np.ndarray) -> np.ndarray:
        return _project_core(z, self.y, self.C)

    def start(self, z0: np.ndarray | None) -> np.ndarray:
        """A feasible start from ``z0`` that keeps its zeros (:func:`repair_start`)."""
        if z0 is None:
            return self.project(np.zeros(self.dim))
        if self.eq_vector is None:
            return self.project(z0)
        return repair_start(z0, self.eq_vector, self.C)

    def project_paper(self, z: np.ndarray) -> np.ndarray:
        return project_paper(z, self.y, self.C)

    def d_of(self, z: np.ndarray) -> np.ndarray:
        return z * self.y

    def lin(self, z: np.ndarray) -> float:
        return float(z.sum())

    def grad(self, z: np.ndarray, f0: np.ndarray) -> np.ndarray:
        """``grad h(a) = 1 - Y (F(a) o K) Y a`` (eq. (26))."""
        return 1.0 - self.y * f0

    def evaluate(self, z: np.ndarray, warm: Evaluation | None = None, exact: bool = False):
        """``F(z)`` and ``h(z)`` by the problem's route, or with ``exact`` by the dense one."""
        inner = inner_minimiser(self.kd, self.d_of(z), self.eta, self.tau,
                                route="dense" if exact else self.route,
                                warm=None if warm is None else warm.inner)
        return Evaluation(z, inner, self.lin(z) + self.eta * inner.deficit, self)

    def certify(self, ev: Evaluation) -> Certificate:
        """Certificate at ``ev.z`` (every inner route is certified, :mod:`dank_fast.inner`)."""
        return certify_svm(self.kd, self.y, ev.z, self.C, self.eta, self.tau, ev.inner, ev.f0)

    def quick_rel_gap(self, ev: Evaluation) -> float:
        """The certificate's gap formula for exact F, evaluated with whatever F ``ev`` has.

        Cheap; ``certify(ev).rel_gap`` adds ``eta * excess / 1'a`` (0 on the exact routes).
        Solvers use it to decide *when* to certify, never as the certificate.
        """
        lin = self.lin(ev.z)
        q = float(self.d_of(ev.z) @ ev.f0)
        gap = q + primal_loss(ev.f0, self.y, 0.5 * q, self.C) - lin
        return gap / lin if lin > 0 else np.inf

    def bias(self, ev: Evaluation, cert: Certificate) -> float:
        b = kkt_bias(ev.f0, self.y, ev.z, self.C)
        return cert.bias if b is None else b

    def lipschitz_paper(self) -> float:
        """``L = kappa (n + 3 n C^2 ||K||_F / (4 eta))``, Theorem 4."""
        n, K = self.kd.n, self.kd.K
        # (C ||K|| C) / eta in this order: K = 0 gives 0 whatever C (no C^2 overflow)
        C = float(np.max(self.C))  # per-sample boxes: the bound holds with max C
        return self.kd.kappa * (n + 3 * n * (C * np.linalg.norm(K) * C) / (4 * self.eta))

    def lipschitz_pgm(self) -> float:
        """``L = n - tau/2 + n C^2 lambda_max(K) / (4 eta)``, eq. (17) (from Lemma 1)."""
        n = self.kd.n
        lmax = _lambda_max(self.kd)
        C = float(np.max(self.C))  # per-sample boxes: the bound holds with max C
        return n - self.tau / 2 + n * (C * lmax * C) / (4 * self.eta)


def _lambda_max(kd: KernelData) -> float:
    """``lambda_max(K)``: dense up to n = 200, else ARPACK from a fixed start (repeatable), with
    the dense value when ARPACK fails (its errors are never the caller's)."""
    if kd.n <= 200:
        return float(np.linalg.eigvalsh(kd.K)[-1])
    v0 = np.random.default_rng(0).uniform(0.5, 1.5, kd.n)
    try:
        return float(eigsh(kd.K, k=1, which="LA", return_eigenvectors=False, tol=1e-8,
                           v0=v0)[0])
    except ArpackError:
        return float(np.linalg.eigvalsh(kd.K)[-1])
