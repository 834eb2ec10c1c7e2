"""P3 as a problem of the generic solvers (box only, no bias, ``tau = 0``) and its certificates.

:class:`DecomposedProblem` is what :func:`dank_fast.decomposed.solve_decomposed` runs on each
cluster; the certificate on the block kernel ``Kbar`` is the sum of the clusters'
(:func:`sum_certificates`), and the value ``h(abar)`` on the full kernel with that problem's
own certificate comes from a dense ``K`` (:func:`full_certificate_dense`) or from features in
row blocks (:func:`full_certificate_features`).
"""

from __future__ import annotations

import math

import numpy as np

from ._kernel_data import KernelData
from ._primal import primal_loss
from ._problem import SVMProblem, _lambda_max
from ._scaling import scale_certificate
from .certificate import Certificate, _assemble, certify_box
from .feature_kernel import FeatureKernel
from .inner import InnerSolution
from .projection import project_box

__all__ = ["DecomposedProblem", "block_kernel", "sum_certificates", "full_certificate_dense",
           "full_certificate_features"]


def block_kernel(K: np.ndarray, labels) -> np.ndarray:
    """``Kbar_ij = K_ij [labels_i == labels_j]`` (Lemma 5)."""
    labels = np.asarray(labels)
    return np.asarray(K, dtype=np.float64) * (labels[:, None] == labels[None, :])


class DecomposedProblem(SVMProblem):
    """P3 (eq. (18) / mainlssub) for the generic solvers: box only, no bias, ``tau = 0``
    (``C`` a scalar or per-sample bounds)."""

    kind = "decomposed"

    def __init__(self, K, y: np.ndarray, C, eta: float):
        super().__init__(K, y, C, eta, 0.0)

    @property
    def eq_vector(self) -> None:
        """P3 has no bias, hence no equality constraint (box only)."""
        return None

    def project(self, z: np.ndarray) -> np.ndarray:
        return project_box(z, self.C)

    def project_paper(self, z: np.ndarray) -> np.ndarray:
        # no equality constraint: the paper's "clip" is the exact projection
        return project_box(z, self.C)

    def certify(self, ev) -> Certificate:
        return certify_box(self.kd, self.y, ev.z, self.C, self.eta, ev.inner, ev.f0)

    def quick_rel_gap(self, ev) -> float:
        lin = float(ev.z.sum())
        q = float(self.d_of(ev.z) @ ev.f0)
        gap = q + primal_loss(ev.f0, self.y, 0.5 * q, self.C, with_bias=False) - lin
        return gap / lin if lin > 0 else np.inf

    def bias(self, ev, cert):  # no bias in P3
        return None

    def lipschitz_pgm(self) -> float:
        n, C = self.kd.n, float(np.max(self.C))  # per-sample boxes: the bound with max C
        return n + n * C * C * _lambda_max(self.kd) / (4 * self.eta)


def sum_certificates(certs, alphas) -> Certificate:
    """Certificate on ``Kbar`` from the clusters': lower, upper and gap add up (no bias)."""
    lower = math.fsum(c.lower for c in certs)
    gap = math.fsum(c.gap for c in certs)
    lin = math.fsum(float(a.sum()) for a in alphas)
    return Certificate(
        lower=lower, upper=lower + gap, gap=gap,
        rel_gap=gap / lin if lin > 0 else (0.0 if gap == 0 else math.inf),
        rel_gap_value=gap / abs(lower) if lower else (0.0 if gap == 0 else math.inf),
        bias=float("nan"), bias_interval=(0.0, 0.0),
        inner_excess=math.fsum(c.inner_excess for c in certs),
        infeasibility=max(c.infeasibility for c in certs),
    )


def full_certificate_dense(K, y, abar, C, eta, c):
    """``h(abar)`` and the certificate of the full problem mainls on a dense ``K`` (``C`` a
    scalar or per-sample bounds)."""
    kd = KernelData(K if c == 1.0 else K * c)
    p = DecomposedProblem(kd, y, C / c, eta / c)
    ev = p.evaluate(abar / c)  # tau = 0: F in closed form
    cert = p.certify(ev)
    return ev.h * c, scale_certificate(cert, c)


def full_certificate_features(kern: FeatureKernel, y, abar, C, eta, c):
    """The same from features, in row blocks: ``O(n |S| d)`` time, ``kernel.block_bytes``."""
    n = kern.n
    d = abar * y / c  # canonical instance (cK, C/c, eta/c), a'' = a / c
    Cc, etac = C / c, eta / c
    S = np.flatnonzero(d)
    dS, dS2 = d[S], d[S] * d[S]
    f0 = np.zeros(n)
    quad = quart = 0.0
    if S.size:
        inS = np.zeros(n, dtype=bool)
        inS[S] = True
        step = kern.rows_per_block(S.size)
        for lo in range(0, n, step):
            rows = np.arange(lo, min(lo + step, n))
            B = kern.block(rows, S) * c
            Kd = B @ dS
            Q = (B * B) @ dS2
            f0[rows] = Kd + d[rows] * Q / (4 * etac)
            m = inS[rows]
            quad += float(d[rows][m] @ Kd[m])
            quart += float((d[rows][m] ** 2) @ Q[m])
    lin = float(abar.sum()) / c
    deficit = -(2 * quad / (4 * etac) + quart / (4 * etac) / (4 * etac))
    inner = InnerSolution(F=None, deficit=deficit, excess=0.0, eigvals=np.empty(0), route="closed")
    q_half = 0.5 * float(d @ f0)
    loss = primal_loss(f0, y, q_half, Cc, with_bias=False)  # hinge, or the hard-margin point
    infeas = max(float(-abar.min()), float(np.max(abar - C)), 0.0) / c
    cert = _assemble(lin, q_half, loss, inner, etac, 0.0, None, (0.0, 0.0), lin, infeas)
    return (lin + etac * deficit) * c, scale_certificate(cert, c)
