"""The inner minimiser ``F(a)`` of DANK and the one place where ``F o K`` is applied.

Lemma fbound: for ``d = a * y`` (SVR: ``d = ah - ac``),

    F(a) = argmin_{F PSD} H(a, F) = J_{tau/2}(M(a)),   M(a) = 11' + Gamma(a),
    Gamma(a) = D K D / (4 eta),  D = diag(d),

where ``J_{tau/2}`` soft-thresholds the eigenvalues of the PSD matrix ``M`` by
``tau/2``. The inner minimum has the closed form (SPEC, "Structure worth exploiting")

    h(a) = lin(a) + eta (n^2 - ||F(a)||_F^2),

with ``lin(a) = 1'a`` for P1/P3 and ``y'd - eps 1'(ah + ac)`` for P2.

Three routes compute ``F(a)``:

* ``tau == 0``: ``F = 11' + Gamma`` exactly (already PSD); no eigensolver.
* ``"dense"``: ``Gamma`` lives on ``S x S`` with ``S = {i : d_i != 0}``, so ``M``
  acts on ``span{e_i : i in S} + span{1_{S^c}}`` and vanishes on the rest; its
  eigendecomposition is exact at size ``|S| + 1`` (divide and conquer driver).
* ``"lanczos"``: the top eigenpairs of that reduced operator, matrix-free
  (ARPACK, warm-started).

On the dense route the value is computed without the cancellation of
``n^2 - ||F||^2``: with ``psi(l) = l^2`` for ``l <= tau/2`` and
``tau l - tau^2/4`` above (the inner minimum per eigenvalue),

    n^2 - ||F(a)||_F^2 = -(2 1'Gamma 1 + ||Gamma||_F^2) + sum_j psi(l_j),

where both Gamma terms are computed exactly from ``K`` and every ``psi >= 0``.
On the Lanczos route a missed eigenvalue above ``tau/2`` would make ``h`` too
large; ``missed`` bounds the error: the missed eigenvalues are non-negative and
sum to ``T_r`` (the trace of ``M``, known exactly, minus the computed ones), so
``sum_missed (l - tau/2)_+^2 <= (T_r - tau/2)_+^2``. Certificates are always
taken on the exact routes (``InnerSolution.exact``); Lanczos serves iterations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import eigh
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh
from threadpoolctl import ThreadpoolController

__all__ = [
    "KernelData",
    "LowRankF",
    "CenteredF",
    "InnerSolution",
    "inner_minimiser",
    "apply_FK",
]

# reduced size up to which a dense eigh is as fast as warm-started Lanczos
# (measured: 0.49 vs 0.46 ms at 100, 5.9 vs 0.85 ms at 300)
DENSE_LIMIT = 100
# Small dense eigendecompositions run single-threaded: faster at these sizes (measured 13 ms
# vs 28 ms at 340) and immune to the 100x slow-downs of busy-waiting BLAS threads when the
# cores are shared with other processes (seen: 8 ms -> 1 s per call).
_THREADS = ThreadpoolController()


class KernelData:
    """A kernel matrix with the derived quantities the solvers reuse.

    Caches ``K[:, S]`` and ``K[S][:, S]`` for the last support ``S`` (the
    support stabilises early, so the copies are made a handful of times), and
    ``K o K`` lazily for the ``tau = 0`` route.
    """

    def __init__(self, K: np.ndarray):
        self.K = K
        self.n = K.shape[0]
        self.diag = np.ascontiguousarray(np.diag(K))
        self.kappa = float(np.max(np.abs(K)))
        self._K2: np.ndarray | None = None
        self._cols_key: bytes | None = None
        self._cols: np.ndarray | None = None
        self._block_key: bytes | None = None
        self._block: np.ndarray | None = None

    @property
    def K2(self) -> np.ndarray:
        """Elementwise square ``K o K`` (used by the tau = 0 route)."""
        if self._K2 is None:
            self._K2 = self.K * self.K
        return self._K2

    def columns(self, S: np.ndarray) -> np.ndarray:
        """``K[:, S]`` (cached for the last ``S``)."""
        if S.size == self.n:
            return self.K
        key = S.tobytes()
        if key != self._cols_key:
            self._cols = np.ascontiguousarray(self.K[:, S])
            self._cols_key = key
        return self._cols

    def block(self, S: np.ndarray) -> np.ndarray:
        """``K[S][:, S]`` (cached for the last ``S``)."""
        if S.size == self.n:
            return self.K
        key = S.tobytes()
        if key != self._block_key:
            self._block = np.ascontiguousarray(self.K[np.ix_(S, S)])
            self._block_key = key
        return self._block


@dataclass
class LowRankF:
    """``F = U diag(mu) U'`` with ``mu > 0``: the eigenvalues that survive the threshold."""

    mu: np.ndarray
    U: np.ndarray

    @property
    def rank(self) -> int:
        return int(self.mu.size)

    def hadamard_matvec(self, kd: KernelData, x: np.ndarray) -> np.ndarray:
        """``(F o K) x = sum_k mu_k u_k * (K (u_k * x))``: one product of K with an n x r block."""
        if self.mu.size == 0:
            return np.zeros(kd.n)
        S = np.flatnonzero(x)
        if S.size == 0:
            return np.zeros(kd.n)
        if S.size > 0.7 * kd.n:
            S = np.arange(kd.n)
        block = kd.columns(S) @ (self.U[S] * x[S, None])
        return np.einsum("ik,ik,k->i", self.U, block, self.mu)

    def dense(self) -> np.ndarray:
        return (self.U * self.mu) @ self.U.T

    def column(self, j) -> np.ndarray:
        """Columns ``F[:, j]`` (``j`` an int or an index array)."""
        return self.U @ (self.mu[:, None] * np.atleast_2d(self.U[j]).T).reshape(self.mu.size, -1)

    def frob2(self) -> float:
        return float(self.mu @ self.mu)

    def trace(self) -> float:
        return float(self.mu.sum())

    def sum_all(self) -> float:
        """``1'F1``."""
        s = self.U.sum(axis=0)
        return float(self.mu @ (s * s))

    def excess(self) -> float:
        """``||F||_F^2 - 1'F1`` (enters the gap)."""
        s = self.U.sum(axis=0)
        return float(self.mu @ (self.mu - s * s))


@dataclass
class CenteredF:
    """``F = 11' + Gamma``, ``Gamma = d d' o K / (4 eta)``: the exact tau = 0 minimiser."""

    d: np.ndarray
    eta: float
    _kd: KernelData = field(repr=False)

    @property
    def rank(self) -> int:  # rank of 11' + Gamma, not computed cheaply; report support size + 1
        return int(np.count_nonzero(self.d)) + 1

    def hadamard_matvec(self, kd: KernelData, x: np.ndarray) -> np.ndarray:
        """``(F o K) x = K x + d * ((K o K)(d * x)) / (4 eta)``."""
        S = np.flatnonzero(x)
        if S.size == 0:
            return np.zeros(kd.n)
        if S.size > 0.7 * kd.n:
            return kd.K @ x + self.d * (kd.K2 @ (self.d * x)) / (4 * self.eta)
        KS = kd.columns(S)
        return KS @ x[S] + self.d * ((KS * KS) @ (self.d[S] * x[S])) / (4 * self.eta)

    def dense(self) -> np.ndarray:
        return 1.0 + np.outer(self.d, self.d) * self._kd.K / (4 * self.eta)

    def column(self, j) -> np.ndarray:
        j = np.atleast_1d(j)
        return 1.0 + self.d[:, None] * self.d[j][None, :] * self._kd.K[:, j] / (4 * self.eta)

    def _gamma_sums(self) -> tuple[float, float, float]:
        d = self.d
        S = np.flatnonzero(d)
        if S.size == 0:
            return 0.0, 0.0, 0.0
        KSS = self._kd.block(S)
        dS = d[S]
        one_g_one = float(dS @ KSS @ dS) / (4 * self.eta)
        d2 = dS * dS
        g_frob2 = float(d2 @ (KSS * KSS) @ d2) / (16 * self.eta**2)
        g_tr = float(d2 @ self._kd.diag[S]) / (4 * self.eta)
        return one_g_one, g_frob2, g_tr

    def frob2(self) -> float:
        n = self.d.size
        a, b, _ = self._gamma_sums()
        return n * n + 2 * a + b

    def trace(self) -> float:
        return self.d.size + self._gamma_sums()[2]

    def sum_all(self) -> float:
        n = self.d.size
        return n * n + self._gamma_sums()[0]

    def excess(self) -> float:
        a, b, _ = self._gamma_sums()
        return a + b


@dataclass
class InnerSolution:
    """``F(a)`` and the quantities derived from it.

    Attributes
    ----------
    F : LowRankF or CenteredF
    deficit : float
        ``n^2 - ||F||_F^2`` (without cancellation on the exact routes), so that
        ``h(a) = lin(a) + eta * deficit``; on the Lanczos route
        ``lin(a) + eta * (deficit - missed)`` is a rigorous lower bound.
    missed : float
        Bound on ``sum (l - tau/2)_+^2`` over eigenvalues the Lanczos route did
        not compute (0 for the exact routes).
    eigvals : ndarray
        Computed eigenvalues of ``M(a)`` (descending); empty for tau = 0.
    route : str
        ``"closed"``, ``"dense"`` or ``"lanczos"``.
    """

    F: LowRankF | CenteredF
    deficit: float
    missed: float
    eigvals: np.ndarray
    route: str

    @property
    def exact(self) -> bool:
        """True when ``F`` is the exact minimiser (closed form or full eigendecomposition)."""
        return self.route in ("closed", "dense")


def _reduced_operator(kd: KernelData, d: np.ndarray, S: np.ndarray, eta: float):
    """Matrix of ``M = 11' + Gamma`` in the orthonormal basis ``[e_S, 1_{S^c}/sqrt(m)]``."""
    n, s = kd.n, S.size
    m = n - s
    dS = d[S]
    KSS = kd.block(S)
    if m > 0:
        rm = np.sqrt(m)
        size = s + 1
    else:
        rm = 0.0
        size = s
    return KSS, dS, m, rm, size


def _eig_dense(kd, d, S, eta):
    KSS, dS, m, rm, size = _reduced_operator(kd, d, S, eta)
    s = S.size
    B = np.empty((size, size))
    B[:s, :s] = 1.0 + np.outer(dS, dS) * KSS / (4 * eta)
    if m > 0:
        B[:s, s] = rm
        B[s, :s] = rm
        B[s, s] = m
    with _THREADS.limit(limits=1, user_api="blas"):
        lam, W = eigh(B, driver="evd", overwrite_a=True, check_finite=False)
    return lam[::-1], W[:, ::-1]


def _eig_lanczos(kd, d, S, eta, k, v0):
    KSS, dS, m, rm, size = _reduced_operator(kd, d, S, eta)
    s = S.size
    c = 1.0 / (4 * eta)

    def mv(v):
        v = np.asarray(v).ravel()
        out = np.empty(size)
        vs = v[:s]
        tot = vs.sum() + (rm * v[s] if m > 0 else 0.0)
        out[:s] = tot + c * dS * (KSS @ (dS * vs))
        if m > 0:
            out[s] = rm * tot
        return out

    op = LinearOperator((size, size), matvec=mv, dtype=np.float64)
    k = min(k, size - 1)
    try:
        with _THREADS.limit(limits=1, user_api="blas"):
            lam, W = eigsh(op, k=k, which="LA", v0=v0, tol=1e-13, maxiter=50 * size)
    except ArpackNoConvergence as exc:  # fall back to what converged, if anything
        if exc.eigenvalues.size == 0:
            raise
        lam, W = exc.eigenvalues, exc.eigenvectors
    order = np.argsort(lam)[::-1]
    return lam[order], W[:, order]


def inner_minimiser(
    kd: KernelData,
    d: np.ndarray,
    eta: float,
    tau: float,
    *,
    route: str = "auto",
    warm: InnerSolution | None = None,
) -> InnerSolution:
    """Inner minimiser ``F(a) = J_{tau/2}(11' + Gamma(a))``, Lemma fbound.

    Parameters
    ----------
    kd : KernelData
    d : ndarray of shape (n,)
        ``a * y`` (P1/P3) or ``ah - ac`` (P2).
    eta : float > 0
    tau : float >= 0
    route : {"auto", "dense", "lanczos"}
        Ignored when ``tau == 0`` (closed form). ``"auto"`` uses the dense
        reduced eigendecomposition up to size ``DENSE_LIMIT``, Lanczos above.
    warm : InnerSolution, optional
        Previous solution; its rank sizes the Lanczos block and its leading
        eigenvector starts it.

    Returns
    -------
    InnerSolution
    """
    n = kd.n
    if tau == 0.0:
        F = CenteredF(d=d, eta=eta, _kd=kd)
        a, b, _ = F._gamma_sums()
        return InnerSolution(F, -(2 * a + b), 0.0, np.empty(0), "closed")
    S = np.flatnonzero(d)
    s = S.size
    thr = tau / 2.0
    if s == 0:  # M = 11'
        mu = np.array([n - thr]) if n > thr else np.empty(0)
        U = np.full((n, mu.size), 1.0 / np.sqrt(n))
        F = LowRankF(mu, U)
        psi = tau * n - tau * tau / 4.0 if n > thr else float(n) ** 2
        return InnerSolution(F, psi, 0.0, np.array([float(n)]), "dense")
    m = n - s
    size = s + 1 if m > 0 else s
    use_dense = route == "dense" or (route == "auto" and size <= DENSE_LIMIT) or size <= 8
    if use_dense:
        lam, W = _eig_dense(kd, d, S, eta)
        missed = 0.0
        used = "dense"
    else:
        k = 8 if warm is None or warm.F.rank == 0 else min(size - 1, warm.F.rank + 6)
        v0 = None
        if warm is not None and isinstance(warm.F, LowRankF) and warm.F.rank > 0:
            U0 = warm.F.U
            v0 = np.empty(size)
            v0[:s] = U0[S] @ warm.F.mu
            if m > 0:
                Sc = np.setdiff1d(np.arange(n), S, assume_unique=True)
                v0[s] = (U0[Sc] @ warm.F.mu).sum() / np.sqrt(m)
            if not np.any(v0):
                v0 = None
        while True:
            lam, W = _eig_lanczos(kd, d, S, eta, k, v0)
            if lam[-1] <= thr or k >= size - 1:
                break
            k = min(size - 1, 2 * k)
        trace_M = n + float(d[S] ** 2 @ kd.diag[S]) / (4 * eta)
        rest = trace_M - float(lam.sum())
        # missed eigenvalues are >= 0 and sum to rest: sum (l - tau/2)_+^2 <= (rest - tau/2)_+^2
        missed = max(rest - thr, 0.0) ** 2 if lam.size < size else 0.0
        if rest - thr <= 1e-12 * n:  # round-off of the trace subtraction
            missed = 0.0
        used = "lanczos"
    keep = lam > thr
    mu = lam[keep] - thr
    Wk = W[:, keep]
    U = np.empty((n, mu.size))
    U[S] = Wk[:s]
    if m > 0:
        Sc = np.setdiff1d(np.arange(n), S, assume_unique=True)
        U[Sc] = Wk[s] / np.sqrt(m)
    F = LowRankF(mu, U)
    if used == "dense":
        lam_pos = np.maximum(lam, 0.0)
        psi = np.where(lam_pos <= thr, lam_pos**2, tau * lam_pos - tau * tau / 4.0)
        one_g_one, g_frob2 = _gamma_sums(kd, d, S, eta)
        deficit = -(2.0 * one_g_one + g_frob2) + float(np.sort(psi).sum())
    else:
        # exact unless an eigenvalue above tau/2 was missed (bounded by ``missed``)
        deficit = n * n - F.frob2()
    return InnerSolution(F, deficit, missed, lam, used)


def _gamma_sums(kd: KernelData, d: np.ndarray, S: np.ndarray, eta: float) -> tuple[float, float]:
    """``1'Gamma 1`` and ``||Gamma||_F^2``, exactly from ``K`` (no eigenvalues)."""
    if S.size == 0:
        return 0.0, 0.0
    KSS = kd.block(S)
    dS = d[S]
    d2 = dS * dS
    return float(dS @ KSS @ dS) / (4 * eta), float(d2 @ (KSS * KSS) @ d2) / (16 * eta**2)


def apply_FK(F: LowRankF | CenteredF, kd: KernelData, x: np.ndarray) -> np.ndarray:
    """``(F o K) x`` without forming ``F`` or ``F o K``: the only product route the solvers use."""
    return F.hadamard_matvec(kd, np.asarray(x, dtype=np.float64))
