"""P3, the decomposed DANK-SVM (eqs. mainls, mainlssub; Lemma lemmalink).

P3 (eq. mainls) is P1 without the bias (box ``0 <= a <= C`` only) and without the
nuclear norm (``tau = 0``):

    max_{0 <= a <= C} min_{F PSD} 1'a - 1/2 a'Y(F o K)Y a + eta ||F - 11'||_F^2.

With ``tau = 0`` the inner minimiser is ``F(a) = 11' + Gamma(a)`` and

    h(a) = 1'a - 1/2 d'Kd - eta ||Gamma(a)||_F^2,   d = a o y,

so on the block kernel ``Kbar_ij = K_ij [pi(i) = pi(j)]`` the value separates over the
clusters: ``hbar(a) = sum_c h_c(a^(c))``. :func:`solve_decomposed` partitions the data (k-means
or given labels), solves every cluster's problem (eq. mainlssub) independently with
``joblib.Parallel`` and concatenates ``abar``.

Lemma lemmalink, corrected
--------------------------
``abar`` is optimal for P3 on ``Kbar`` and the saddle value is ``sum_c v*_c``, as the lemma
says. But the printed ``Fbar = diag(Fbar^(1,1), ..., Fbar^(v,v))`` (zeros off the blocks) is
NOT the minimiser of ``Hbar(abar, .)``: off the blocks ``Kbar`` vanishes, so only the
centering term ``eta (F_ij - 1)^2`` acts there and the minimiser is
``11' + Gamma_Kbar(abar)`` -- the blocks ``Fbar^(c,c)`` on the diagonal and **1** off the blocks.
The block-diagonal matrix costs an extra ``eta * #(off-block entries)`` in ``Hbar``. The
lemma's proof hides this in "Const". :attr:`DecomposedResult.F` is the true minimiser;
:attr:`DecomposedResult.F_blocks` are the per-cluster blocks.

Certificates: one for the concatenated solution on ``Kbar`` (its gap is the sum of the
cluster gaps) and, separately, the value ``h(abar)`` on the full kernel ``K`` (a lower bound
of the saddle value of the full problem mainls, with that problem's own upper bound).
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field

import numpy as np
from joblib import Parallel, delayed

from ._accelerated import accelerated
from ._newton import newton
from ._paper import paper
from ._problem import SVMProblem, _lambda_max
from ._result import DANKResult
from ._validation import check_finite_array, check_kernel_matrix, check_positive
from .certificate import Certificate, certify_box
from .inner import KernelData
from .projection import project_box

__all__ = ["DecomposedProblem", "DecomposedResult", "solve_decomposed", "block_kernel", "METHODS"]

METHODS = ("accelerated", "newton", "paper", "paper-monotone", "pgm")


def block_kernel(K: np.ndarray, labels) -> np.ndarray:
    """``Kbar_ij = K_ij [labels_i == labels_j]`` (Lemma lemmalink)."""
    labels = np.asarray(labels)
    return np.asarray(K, dtype=np.float64) * (labels[:, None] == labels[None, :])


class DecomposedProblem(SVMProblem):
    """P3 (eq. mainls / mainlssub) for the generic solvers: box only, no bias, ``tau = 0``."""

    kind = "decomposed"

    def __init__(self, K, y: np.ndarray, C: float, eta: float):
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
        hinge = float(np.maximum(0.0, 1.0 - self.y * ev.f0).sum())
        lin = float(ev.z.sum())
        gap = float(self.d_of(ev.z) @ ev.f0) + self.C * hinge - lin
        return gap / lin if lin > 0 else np.inf

    def bias(self, ev, cert):  # no bias in P3
        return None

    def lipschitz_pgm(self) -> float:
        n = self.kd.n
        return n + n * self.C**2 * _lambda_max(self.kd) / (4 * self.eta)


@dataclass
class DecomposedResult:
    """Solution of the decomposed problem (P3 on ``Kbar``) with its certificates.

    Attributes
    ----------
    alpha : ndarray of shape (n,)
        The concatenated ``abar`` (in the original sample order).
    labels : ndarray of shape (n,)
        Cluster of every sample.
    blocks : list of ndarray
        Sample indices of every cluster (order of ``np.unique(labels)``).
    results : list of DANKResult
        Per-cluster solver output (``results[c].alpha`` indexed like ``blocks[c]``).
    certificate : Certificate
        Certificate of ``alpha`` for P3 on ``Kbar`` (eq. mainlslemma); ``lower``, ``upper``,
        ``gap``, ``rel_gap`` below are its fields.
    full_value : float
        ``h(abar)`` on the full kernel ``K`` (eq. mainls): a lower bound of the full
        problem's saddle value.
    full_certificate : Certificate
        Certificate of ``abar`` for the full problem (its ``upper`` bounds the full saddle
        value from above; its gap measures how far ``abar`` is from optimal for mainls).
    status : str
        ``"converged"`` when the Kbar certificate reaches ``tol`` and every cluster converged,
        else ``"not_converged"`` (see ``results[c].status``).
    """

    alpha: np.ndarray
    labels: np.ndarray
    blocks: list
    results: list
    certificate: Certificate
    full_value: float
    full_certificate: Certificate
    status: str
    time: float
    kernel_bar: KernelData = field(repr=False)
    eta: float = 0.0
    y: np.ndarray | None = field(default=None, repr=False)
    bias: None = None

    @property
    def lower(self) -> float:
        return self.certificate.lower

    @property
    def upper(self) -> float:
        return self.certificate.upper

    @property
    def gap(self) -> float:
        return self.certificate.gap

    @property
    def rel_gap(self) -> float:
        return self.certificate.rel_gap

    @property
    def success(self) -> bool:
        return self.status == "converged"

    @property
    def n_iter(self) -> np.ndarray:
        return np.array([r.n_iter for r in self.results])

    @property
    def F_blocks(self) -> list:
        """Per-cluster minimisers ``Fbar^(c,c) = 11' + Gamma(abar^(c))`` (dense)."""
        return [r.F for r in self.results]

    @property
    def F(self) -> np.ndarray:
        """The true minimiser of ``Hbar(abar, .)``: ``11' + Gamma_Kbar(abar)`` (1 off-block)."""
        d = self.alpha * self.y
        return 1.0 + np.outer(d, d) * self.kernel_bar.K / (4 * self.eta)

    @property
    def F_lemma(self) -> np.ndarray:
        """The lemma's block-diagonal ``Fbar`` (0 off the blocks); not the minimiser."""
        F = np.zeros((self.alpha.size,) * 2)
        for idx, Fc in zip(self.blocks, self.F_blocks, strict=True):
            F[np.ix_(idx, idx)] = Fc
        return F

    def __repr__(self) -> str:
        return (
            f"DecomposedResult(n_clusters={len(self.blocks)}, status={self.status!r}, "
            f"gap={self.gap:.3e}, rel_gap={self.rel_gap:.3e}, lower={self.lower:.10g}, "
            f"full_value={self.full_value:.10g}, time={self.time:.3f}s)"
        )


def _solve_block(K, y, C, eta, method, tol, max_iter, options) -> DANKResult:
    problem = DecomposedProblem(KernelData(K), y, C, eta)
    if method == "accelerated":
        return accelerated(problem, tol=tol, max_iter=max_iter or 5000, **options)
    if method == "newton":
        opts = {"fallback_iter": max_iter or 5000, **options}
        return newton(problem, tol=tol, max_iter=max_iter or 100, **opts)
    variant = {"paper": "nesterov", "paper-monotone": "monotone", "pgm": "pgm"}[method]
    return paper(problem, variant=variant, t_max=max_iter or 2000, tol=tol, **options)


def _check_labels_pm1(y, n: int) -> np.ndarray:
    y = check_finite_array(y, "y", ndim=1)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but K has {n} rows")
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError("y must contain only -1 and +1 (P3 is the decomposed DANK-SVM)")
    return y


def solve_decomposed(
    K,
    y,
    *,
    C: float,
    eta: float,
    n_clusters: int | None = None,
    labels=None,
    X=None,
    random_state=None,
    n_jobs: int | None = None,
    backend: str | None = None,
    method: str = "accelerated",
    tol: float = 1e-6,
    max_iter: int | None = None,
    check_psd: bool = True,
    **options,
) -> DecomposedResult:
    """Solve P3 by k-means decomposition (eq. mainlssub), certified on ``Kbar``.

    Parameters
    ----------
    K : array_like of shape (n, n)
        PSD kernel of all samples.
    y : array_like of shape (n,)
        Labels in {-1, +1} (one class per cluster is allowed: no bias constraint).
    C, eta : float > 0
    n_clusters : int, optional
        Number of k-means clusters (``sklearn.cluster.KMeans(n_clusters,
        random_state=random_state, n_init=10)`` on ``X``). Ignored when ``labels`` is given.
    labels : array_like of shape (n,), optional
        A given partition (any hashable values). If neither ``labels`` nor
        ``n_clusters`` is given, one cluster (the undecomposed P3).
    X : array_like of shape (n, d), optional
        Features for k-means (required with ``n_clusters``).
    random_state : int, RandomState or None
        Seed of k-means.
    n_jobs, backend :
        Passed to ``joblib.Parallel``: the caller chooses where the clusters are solved.
    method : {"accelerated", "paper", "paper-monotone", "pgm"}
        Solver of every cluster (``"paper"`` = Algorithm ago3 with the box projection).
    tol : float
        Target certified relative gap of every cluster.

    Returns
    -------
    DecomposedResult

    Examples
    --------
    >>> import numpy as np
    >>> from dank_fast import compute_kernel, solve_decomposed
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-3, 1, (20, 2)), rng.normal(3, 1, (20, 2))])
    >>> y = np.where(X[:, 0] + rng.normal(size=40) > 0, 1.0, -1.0)
    >>> res = solve_decomposed(compute_kernel(X, sigma=1.0), y, C=1.0, eta=10.0,
    ...                        n_clusters=2, X=X, random_state=0)
    >>> len(res.blocks), bool(res.rel_gap <= 1e-6)
    (2, True)
    >>> bool(res.full_value <= res.full_certificate.upper)
    True
    """
    t0 = time.perf_counter()
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    K = check_kernel_matrix(K, check_psd=check_psd)
    n = K.shape[0]
    y = _check_labels_pm1(y, n)
    C = check_positive(C, "C")
    eta = check_positive(eta, "eta")
    tol = check_positive(tol, "tol")
    if max_iter is not None and (
        isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1
    ):
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    if labels is not None:
        labels = np.asarray(labels)
        if labels.ndim != 1 or labels.shape[0] != n:
            raise ValueError(f"labels must have shape ({n},), got {labels.shape}")
    elif n_clusters is not None:
        if isinstance(n_clusters, bool) or not isinstance(n_clusters, numbers.Integral):
            raise TypeError("n_clusters must be an integer")
        if not 1 <= n_clusters <= n:
            raise ValueError(f"n_clusters must be in [1, {n}], got {n_clusters}")
        if X is None:
            raise ValueError("n_clusters needs the features X for k-means (or pass labels)")
        X = check_finite_array(X, "X", ndim=2)
        if X.shape[0] != n:
            raise ValueError(f"X has {X.shape[0]} rows but K has {n}")
        from sklearn.cluster import KMeans

        labels = KMeans(n_clusters=n_clusters, random_state=random_state, n_init=10).fit_predict(X)
    else:
        labels = np.zeros(n, dtype=np.intp)
    blocks = [np.flatnonzero(labels == c) for c in np.unique(labels)]
    results = Parallel(n_jobs=n_jobs, backend=backend)(
        delayed(_solve_block)(
            np.ascontiguousarray(K[np.ix_(idx, idx)]), y[idx], C, eta, method, tol, max_iter,
            options,
        )
        for idx in blocks
    )
    abar = np.zeros(n)
    for idx, r in zip(blocks, results, strict=True):
        abar[idx] = r.alpha
    # certificate on Kbar (eq. mainlslemma) and the value on the full K (eq. mainls)
    kd_bar = KernelData(block_kernel(K, labels))
    pbar = DecomposedProblem(kd_bar, y, C, eta)
    cert_bar = pbar.certify(pbar.evaluate(abar, route="dense"))
    pfull = DecomposedProblem(KernelData(K), y, C, eta)
    ev_full = pfull.evaluate(abar, route="dense")
    cert_full = pfull.certify(ev_full)
    ok = all(r.status == "converged" for r in results) and cert_bar.rel_gap <= tol * (1 + 1e-9)
    res = DecomposedResult(
        alpha=abar,
        labels=labels,
        blocks=blocks,
        results=list(results),
        certificate=cert_bar,
        full_value=float(ev_full.h),
        full_certificate=cert_full,
        status="converged" if ok else "not_converged",
        time=time.perf_counter() - t0,
        kernel_bar=kd_bar,
        eta=eta,
        y=y,
    )
    return res
