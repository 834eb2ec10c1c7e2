"""The inner minimiser ``F(a)`` of DANK, its certified value, and the one ``F o K`` product.

Lemma fbound: for ``d = a * y`` (SVR: ``d = ah - ac``),

    F(a) = argmin_{F PSD} H(a, F) = J_{tau/2}(M),   M = 11' + Gamma,   Gamma = D K D / (4 eta),

where ``J_{tau/2}`` soft-thresholds the eigenvalues of the PSD matrix ``M`` by ``t = tau/2``.
Write ``phi(F) = ||F - M||_F^2 + tau tr F``; then ``H(a, F) = lin(a) - eta (2 1'Gamma 1 +
||Gamma||_F^2) + eta phi(F)`` and the inner minimum is, eigenvalue by eigenvalue,

    phi* = min_{F PSD} phi(F) = sum_j psi(l_j),   psi(l) = l^2 (l <= t),  2 t l - t^2 (l > t),
    h(a) = lin(a) + eta * deficit,
    deficit = n^2 - ||F(a)||_F^2 = -(2 1'Gamma 1 + ||Gamma||_F^2) + phi*,

with ``lin(a) = 1'a`` (P1/P3) or ``y'd - eps 1'(ah + ac)`` (P2). Both Gamma sums are computed
exactly from ``K``; ``psi`` has slope at most ``tau``, so the eigenvalue ``~n`` enters only as
``tau * l_1``: no ``eta n^2`` cancellation anywhere.

Support reduction
-----------------
``Gamma`` lives on ``S x S``, ``S = {i : d_i != 0}``. Of the ``n_total`` points of the problem
(``n_total >= kd.n``: a working set may leave points out of ``K`` altogether, they have ``d = 0``),
``M`` acts on ``span{e_i : i in S} + span{1_{S^c}}`` and vanishes on the rest: in the orthonormal
basis ``[e_S, 1_{S^c} / sqrt(m)]`` (``m = n_total - |S|``) it is ``vv' + Gamma_SS`` with
``v = [1_S; sqrt(m)]``, of size ``N = |S| + 1``.

Routes
------
* ``tau == 0`` (``"closed"``): ``F = 11' + Gamma`` exactly (already PSD); no eigensolver.
* ``"dense"``: full eigendecomposition of the reduced matrix (``O(N^3)`` time, ``O(N^2)`` memory).
* ``"lanczos"``: the top ``k`` eigenpairs (ARPACK, warm-started), then a Rayleigh-Ritz clean-up and
  a **certified bound** (below): ``O(N^2 k)`` time per evaluation (``|S|^2`` via ``K``), ``O(N k)``
  memory beyond ``K``.

Certified bound without a full eigendecomposition
-------------------------------------------------
Let ``U`` (``N x k``, orthonormal) hold Ritz vectors with Rayleigh quotients ``theta_j = u_j'Mu_j``
(``U'MU = diag(theta)`` after the Rayleigh-Ritz step), ``P = UU'``, residual ``R = MU - U
diag(theta)`` and the compressed tail ``G = (I - P) M (I - P)`` (PSD, as a compression of ``M``).

*Lower bound.* For any symmetric ``B <= 2t I`` (i.e. ``Z = 2t I - B`` PSD), weak duality of
``min_{F PSD} ||F - M||^2 + <2t I - Z, F>`` gives ``phi* >= <B, M> - ||B||_F^2 / 4`` (the
unconstrained minimum over ``F`` of the Lagrangian). Take ``B = 2 sum_j b_j u_j u_j' + 2 c G``
with ``b_j = min(theta_j, t)`` and ``c = min(1, t / g)``, ``g >= lambda_max(G)``; ``B`` is
block-diagonal in ``P (+) (I - P)`` and ``<G, M> = ||G||_F^2``, so

    phi* >= sum_j psi(theta_j) + (2c - c^2) ||G||_F^2.

*Upper bound.* ``F^ = sum_{theta_j > t} (theta_j - t) u_j u_j'`` is PSD, and splitting
``F^ - M`` into the blocks of ``P`` and ``I - P`` gives exactly

    phi(F^) = sum_j psi(theta_j) + 2 ||R||_F^2 + ||G||_F^2,

so ``0 <= phi(F^) - phi* <= excess := 2 ||R||_F^2 + (1 - c)^2 ||G||_F^2``.

``g`` is ``min(||G||_F, tr G)`` (both bound the largest eigenvalue of a PSD matrix), with
``tr G = tr M - sum_j theta_j`` and, for ``w = (I - P) v``,
``||G||_F^2 = ||w||^4 + 2 w'Gamma w + ||Gamma||_F^2 - 2 ||Gamma U||_F^2 + ||U'Gamma U||_F^2``:
all exact quantities plus products of ``Gamma`` with ``k + 1`` vectors. When the computed
eigenvalues include every one above ``t`` (``g <= t``), ``c = 1`` and the excess is the
Ritz residual alone (``~1e-20`` relative at ARPACK's tolerance). :class:`InnerSolution` reports
``deficit`` (a rigorous lower bound, so ``lin + eta * deficit <= h(a)``) and ``excess``
(``h(a) <= lin + eta * (deficit + excess)``, and the certificate's inner term,
see :mod:`dank_fast.certificate`). The dense route is kept as the check (``excess = 0``).
"""

from __future__ import annotations

import os
import threading
import warnings
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import eigh, qr
from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, LinearOperator, eigsh, lobpcg
from threadpoolctl import ThreadpoolController

__all__ = [
    "KernelData",
    "LowRankF",
    "CenteredF",
    "InnerSolution",
    "inner_minimiser",
    "apply_FK",
    "blas_threads",
]

# reduced size up to which the dense eigh is used outright (a 200 x 200 eigh takes ~3 ms; the
# iterative route can cost far more when the rank is high: 1.15 s against 0.02 s on a
# 108-point problem with a small eta)
DENSE_LIMIT = 200
# Dense work below this size runs single-threaded: faster (measured 13 ms vs 28 ms for an
# eigh at 340) and immune to the 100x slow-downs of busy-waiting BLAS threads when cores are
# shared (seen: 8 ms -> 1 s per call). Above it every core is used.
PARALLEL_MIN = 1500
# the Lanczos route switches to a dense decomposition when it needs half the spectrum
DENSE_FALLBACK = 3000
# reduced size from which the iterative route uses LOBPCG blocks rather than ARPACK
LOBPCG_MIN = 1500
#: block Krylov steps tried first from a warm start (the previous Ritz vectors): when their
#: Rayleigh-Ritz certifies the target excess, no ARPACK run (make_moons n = 2,000, C = 32: every
#: evaluation of the Newton solve after the first, -6% of the solve)
KRYLOV_STEPS = 2
#: the Krylov block is used when its excess is below this fraction of the target, i.e. about as
#: accurate as ARPACK's: Ritz vectors that only just meet the target leave an error in
#: ``(F o K) d`` that stalled Newton at a relative gap of 1e-4 (cpusmall SVR, n = 4,096, C = 32)
KRYLOV_ACCEPT = 1e-6
#: a widened block whose tail bound is above this fraction of the previous one did not separate
#: the tail: the dense decomposition takes over (diabetic, n = 460, sigma = 2^-4: the bound
#: stayed at 1.0236 t for blocks of 6, 12, 24 and 48 vectors, 87 ms, then the dense 13 ms)
STALL_TAIL = 0.99
# rows per block when a pass over K is done piecewise (bounded temporaries)
ROW_BLOCK = 1024
#: rows of ``K[S, :]`` gathered at a time where they are read once and dropped (the block
#: ``K[S][:, S]``, the product ``K[:, S] @ X`` without the cached rows): temporaries that stay
#: in cache (128 x 2,000: 2 MB)
GATHER_ROWS = 128
_THREADS = ThreadpoolController()


def blas_threads(size: int):
    """BLAS threads for dense work of dimension ``size``: all cores from ``PARALLEL_MIN`` on,
    unless the machine is already busy; one thread otherwise.

    Measured on 2 cores: a 2000 x 2000 Cholesky takes 0.15 s on one thread, about 0.08 s on two
    when the machine is idle, but 2.1 s on two when other processes keep the load average at
    4.7 (OpenBLAS threads busy-wait for each other). So all cores are used only when the
    1-minute load average leaves one free (``load < cpus - 0.5``). ``DANK_BLAS_THREADS`` in the
    environment (an integer) overrides the choice for large work.
    """
    if size < PARALLEL_MIN:
        return _one_thread()
    forced = os.environ.get("DANK_BLAS_THREADS")
    if forced:
        return _threads(max(1, int(forced)))
    if not spare_core():
        return _one_thread()
    return nullcontext()


def spare_core() -> bool:
    """True when the 1-minute load average leaves a core free (``load < cpus - 0.5``; True
    where the platform has no load average): :func:`blas_threads` uses all cores then, and
    :func:`dank_fast.svm.solve_svm` fits its warm start beside the PSD test."""
    cpus = os.cpu_count() or 1
    try:
        return os.getloadavg()[0] < cpus - 0.5
    except OSError:  # no load average on this platform
        return True


#: per thread: how many single-thread limits of :func:`blas_threads` are open. Inside one, a
#: nested request for one thread costs nothing (a threadpoolctl limit costs ~50 us, and a small
#: fit asks hundreds of times: 1 ms of a 15 ms fit at n = 108)
_DEPTH = threading.local()


@contextmanager
def _one_thread():
    """One BLAS thread, unless a limit of this thread already holds it at one."""
    if getattr(_DEPTH, "single", 0) > 0:
        yield
        return
    with _THREADS.limit(limits=1, user_api="blas"):
        _DEPTH.single = 1
        try:
            yield
        finally:
            _DEPTH.single = 0


@contextmanager
def _threads(k: int):
    """``k`` BLAS threads (``DANK_BLAS_THREADS``); nested one-thread requests limit again."""
    saved = getattr(_DEPTH, "single", 0)
    _DEPTH.single = 0
    try:
        with _THREADS.limit(limits=k, user_api="blas"):
            yield
    finally:
        _DEPTH.single = saved


class KernelData:
    """A kernel matrix with the derived quantities the solvers reuse.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel of the points that may carry weight (``d_i != 0``).
    n_total : int, optional
        Number of points of the whole problem (default ``n``). Points ``n .. n_total - 1`` are
        not in ``K`` and have ``d = 0`` (a working set leaves them out); they enter ``M = 11' +
        Gamma`` only through the all-ones vector.
    extremes : (float, float), optional
        ``(min K, max K)`` when the caller has them
        (:func:`dank_fast._validation.validate_kernel_matrix`); else two passes over ``K``.

    Notes
    -----
    Memory: ``K`` is used in place. ``K[:, S]`` and ``K[S][:, S]`` are copied (and cached for the
    last ``S``) only while ``|S| <= 0.6 n``; above that, products go through ``K`` itself with
    zero-padded vectors (``n^2`` instead of ``|S|^2`` work, no copy), unless the block is
    small (``|S|^2 <= 2^23`` entries, 64 MiB). The rows ``K[S, :]`` are cached for the last
    ``S`` up to :attr:`ROWS_BYTES` (64 MiB); :meth:`drop_caches` releases all three.
    """

    COPY_FRACTION = 0.6
    SUPPORT_ROWS_FRACTION = 0.5  # support_product by row blocks of K[S] up to this |S| / n
    COPY_ENTRIES = 1 << 23  # blocks up to 64 MiB are always copied (faster products)
    #: ``K[S, :]`` is gathered once and cached for the last ``S`` up to this many bytes: the
    #: block ``K[S][:, S]`` and the products ``K[:, S] @ X`` of one evaluation then read it
    #: instead of gathering from ``K`` twice (make_moons n = 2,000, |S| = 676: block 0.83 ->
    #: 0.47 ms, product 1.13 -> 0.45 ms)
    ROWS_BYTES = 64 << 20

    def __init__(self, K: np.ndarray, *, n_total: int | None = None,
                 extremes: tuple[float, float] | None = None):
        self.K = K
        self.n = K.shape[0]
        self.n_total = self.n if n_total is None else int(n_total)
        if self.n_total < self.n:
            raise ValueError(f"n_total = {self.n_total} < n = {self.n}")
        self.diag = np.ascontiguousarray(np.diag(K))
        if extremes is None and self.n:  # (min K, max K), e.g. from validate_kernel_matrix
            extremes = float(np.min(K)), float(np.max(K))
        kmin, kmax = extremes if self.n else (0.0, 0.0)
        self.kappa = float(max(kmax, -kmin)) if self.n else 0.0
        self.nonnegative = kmin >= 0.0
        self._K2: np.ndarray | None = None
        self._cols_key: bytes | None = None
        self._cols: np.ndarray | None = None
        self._block_key: bytes | None = None
        self._block: np.ndarray | None = None
        self._rows_key: bytes | None = None
        self._rows: np.ndarray | None = None

    @property
    def K2(self) -> np.ndarray:
        """Elementwise square ``K o K`` (used by the tau = 0 route on large supports)."""
        if self._K2 is None:
            self._K2 = self.K * self.K
        return self._K2

    def _copy(self, S: np.ndarray | int) -> bool:
        """Whether a block ``K[S][:, S]`` of ``S`` (indices, or their number) is copied."""
        s = S if isinstance(S, int) else S.size
        return s <= self.COPY_FRACTION * self.n or s * s <= self.COPY_ENTRIES

    def columns(self, S: np.ndarray) -> np.ndarray:
        """``K[:, S]`` (cached for the last ``S``; ``K`` itself when ``S`` is everything)."""
        if S.size == self.n:
            return self.K
        key = S.tobytes()
        if key != self._cols_key:
            self._cols = np.take(self.K, S, axis=1)  # 4x faster than K[:, S] (n = 2,000)
            self._cols_key = key
        return self._cols

    def drop_caches(self) -> None:
        """Release the cached ``K[S, :]``, ``K[:, S]`` and ``K[S][:, S]`` (a result keeps its
        kernel data; the caches served the solve only)."""
        self._rows_key = self._rows = self._cols_key = self._cols = None
        self._block_key = self._block = None

    def rows(self, S: np.ndarray) -> np.ndarray | None:
        """``K[S, :]`` (cached for the last ``S``), or None above :attr:`ROWS_BYTES`."""
        if 8 * S.size * self.n > self.ROWS_BYTES:
            return None
        key = S.tobytes()
        if key != self._rows_key:
            self._rows = np.take(self.K, S, axis=0)
            self._rows_key = key
        return self._rows

    def block(self, S: np.ndarray) -> np.ndarray:
        """``K[S][:, S]`` (cached for the last ``S``; from :meth:`rows` where they fit)."""
        if S.size == self.n:
            return self.K
        key = S.tobytes()
        if key != self._block_key:
            R = self.rows(S)
            if R is not None:
                self._block = np.take(R, S, axis=1)
                self._block_key = key
                return self._block
            # by row blocks of K[S] (ROW_BLOCK x n temporaries, not |S| x n): np.take is faster
            # than K[np.ix_(S, S)] (0.62 vs 1.07 ms at |S| = 680, n = 2,000)
            self._block = np.empty((S.size, S.size))
            for lo in range(0, S.size, GATHER_ROWS):
                np.take(self.K[S[lo:lo + GATHER_ROWS]], S, axis=1,
                        out=self._block[lo:lo + GATHER_ROWS])
            self._block_key = key
        return self._block

    def support_product(self, S: np.ndarray, X: np.ndarray) -> np.ndarray:
        """``K[:, S] @ X`` for ``X`` of shape ``(|S|,)`` or ``(|S|, b)``, without copying
        ``K[:, S]`` when ``S`` is more than a quarter of the points (used once per evaluation: a
        copy costs more than the product saves).

        Up to ``SUPPORT_ROWS_FRACTION n`` points, ``K`` is symmetric so ``K[:, S] @ X =
        (X' K[S, :])'``, summed over contiguous row blocks of ``K[S, :]`` (``ROW_BLOCK x n``
        temporaries): ``|S| n b`` flops instead of the ``n^2 b`` of the zero-padded product
        with all of ``K`` that is used above it.
        """
        if S.tobytes() == self._cols_key:
            return self.columns(S) @ X
        R = self.rows(S)  # K symmetric: K[:, S] = K[S, :]'
        if R is not None:  # as (X' R)': BLAS reads the C-ordered rows in order (R' X: twice
            return (X.T @ R).T  # the time, 2.2 against 1.1 ms at 676 x 2,000, 3 columns)
        if S.size <= 0.25 * self.n:
            return self.columns(S) @ X
        if S.size <= self.SUPPORT_ROWS_FRACTION * self.n:
            X2 = X.reshape(S.size, -1)
            outT = np.zeros((X2.shape[1], self.n))
            for lo in range(0, S.size, GATHER_ROWS):
                outT += X2[lo:lo + GATHER_ROWS].T @ self.K[S[lo:lo + GATHER_ROWS]]
            return outT[0] if X.ndim == 1 else outT.T
        full = np.zeros((self.n,) + X.shape[1:])
        full[S] = X
        return self.K @ full

    def block_product(self, S: np.ndarray, X: np.ndarray) -> np.ndarray:
        """``K[S][:, S] @ X`` (see :meth:`support_product`)."""
        if self._copy(S):
            return self.block(S) @ X
        return self.support_product(S, X)[S]

    def abs_block_product(self, S: np.ndarray, X: np.ndarray) -> np.ndarray:
        """``|K[S][:, S]| @ X`` (``K`` itself when it has no negative entry)."""
        if self.nonnegative:
            return self.block_product(S, X)
        out = np.empty((S.size,) + X.shape[1:])
        for lo in range(0, S.size, ROW_BLOCK):
            rows = S[lo:lo + ROW_BLOCK]
            out[lo:lo + ROW_BLOCK] = np.abs(self.K[np.ix_(rows, S)]) @ X
        return out

    def gamma_sums(self, S: np.ndarray, dS: np.ndarray
                   ) -> tuple[float, float, float, np.ndarray]:
        """``(d'Kd, sum_ij d_i^2 d_j^2 K_ij^2, sum_i d_i^2 K_ii, (K o K)[S][:, S] d_S^2)`` over
        ``S``, exactly.

        ``1'Gamma 1``, ``||Gamma||_F^2`` and ``tr Gamma`` are the first three divided by ``4
        eta``, ``16 eta^2`` and ``4 eta``; the vector (length ``|S|``), whose dot product with
        ``d_S^2`` is the second, is the diagonal of the Newton curvature model on the support
        (:func:`dank_fast._newton._curvature`). One pass over ``K[S][:, S]`` in row chunks of
        ``GATHER_ROWS`` (one chunk-sized buffer, no ``K o K``).
        """
        if S.size == 0:
            return 0.0, 0.0, 0.0, np.zeros(0)
        d2 = dS * dS
        if self._copy(S):
            src, rows_of, dv, d2v = self.block(S), S, dS, d2
        else:  # contiguous row slices of K itself, d zero-padded: no fancy-indexed copies
            src, rows_of = self.K, np.arange(self.n)
            dv = np.zeros(self.n)
            dv[S] = dS
            d2v = dv * dv
        kk = np.empty(rows_of.size)
        Kd = np.empty(rows_of.size)
        # row chunks that stay in cache while they are read twice and squared into one buffer
        # (a 3.6 MB block at |S| = 676 was read three times and squared into a new temporary)
        sqbuf = np.empty((min(GATHER_ROWS, rows_of.size), src.shape[1]))
        for lo in range(0, rows_of.size, GATHER_ROWS):
            rows = slice(lo, min(lo + GATHER_ROWS, rows_of.size))
            B = src[rows]
            Kd[rows] = B @ dv
            B2 = np.multiply(B, B, out=sqbuf[: rows.stop - lo])
            kk[rows] = B2 @ d2v
        quad = float(dv @ Kd)
        if rows_of.size != S.size:
            kk = kk[S]
        sq = float(d2 @ kk)
        tr = float(d2 @ self.diag[S])
        return quad, sq, tr, kk


@dataclass
class LowRankF:
    """``F = U diag(mu) U'`` with ``mu > 0``: the eigenvalues that survive the threshold.

    ``U`` has one row per point of ``K``; ``ghost`` (shape ``(r,)``) is the row shared by every
    point outside the support (all such rows of ``U`` are equal), including points of the
    problem that are not in ``K`` at all (working sets). ``None`` when there is no such point.
    """

    mu: np.ndarray
    U: np.ndarray
    ghost: np.ndarray | None = None

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
        with blas_threads(S.size):
            block = kd.support_product(S, self.U[S] * x[S, None])
        return np.einsum("ik,ik,k->i", self.U, block, self.mu)

    def dense(self) -> np.ndarray:
        return (self.U * self.mu) @ self.U.T

    def column(self, j) -> np.ndarray:
        """Columns ``F[:, j]`` (``j`` an int or an index array): shape ``(n, len(j))``."""
        j = np.atleast_1d(j)
        return (self.U * self.mu) @ self.U[j].T

    def frob2(self) -> float:
        return float(self.mu @ self.mu)

    def trace(self) -> float:
        return float(self.mu.sum())


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
        xs = x[S]
        if not kd._copy(S):
            with blas_threads(kd.n):
                return kd.K @ x + self.d * (kd.K2 @ (self.d * x)) / (4 * self.eta)
        KS = kd.columns(S)
        return KS @ xs + self.d * ((KS * KS) @ (self.d[S] * xs)) / (4 * self.eta)

    def dense(self) -> np.ndarray:
        return 1.0 + np.outer(self.d, self.d) * self._kd.K / (4 * self.eta)

    def column(self, j) -> np.ndarray:
        j = np.atleast_1d(j)
        return 1.0 + self.d[:, None] * self.d[j][None, :] * self._kd.K[:, j] / (4 * self.eta)


@dataclass
class InnerSolution:
    """``F(a)`` and the certified quantities derived from it.

    Attributes
    ----------
    F : LowRankF or CenteredF
        The computed minimiser ``F^`` (exact on the ``"closed"`` and ``"dense"`` routes; the
        Ritz approximation of the module docstring on ``"lanczos"``). Always PSD.
    deficit : float
        Rigorous lower bound of ``n^2 - ||F(a)||_F^2``, so ``h = lin + eta * deficit <= h(a)``.
    excess : float
        Bound on ``phi(F^) - phi*`` (0 on the exact routes): ``h(a) <= lin + eta * (deficit +
        excess)``, and the inner part of the duality gap.
    eigvals : ndarray
        Computed eigenvalues (Ritz values) of ``M(a)``, descending; empty for tau = 0.
    route : str
        ``"closed"``, ``"dense"`` or ``"lanczos"``.
    tail_bound : float
        Upper bound ``g`` of the largest eigenvalue not computed (0 on the exact routes).
    basis : ndarray or None
        On the ``"dense"`` route with ``N = |S| + 1 <= DENSE_LIMIT + 1``, the eigenvectors of
        the reduced ``M`` (columns, in the order of ``eigvals``; at most 323 kB): the solvers'
        exact Newton curvature reuses them. None elsewhere, and in results
        (:func:`dank_fast._accelerated.finish` drops it).
    kk_d2 : ndarray or None
        ``(K o K)[S][:, S] d_S^2`` on the support ``S`` of ``d`` (:meth:`KernelData.gamma_sums`
        computes it anyway): the diagonal of the solvers' Newton curvature model. None where
        ``S`` is empty, and in results.
    """

    F: LowRankF | CenteredF
    deficit: float
    excess: float
    eigvals: np.ndarray
    route: str
    tail_bound: float = 0.0
    basis: np.ndarray | None = field(default=None, repr=False)
    kk_d2: np.ndarray | None = field(default=None, repr=False)

    @property
    def exact(self) -> bool:
        """True when ``F`` is the exact minimiser (closed form or full eigendecomposition)."""
        return self.route in ("closed", "dense")

    @property
    def certified(self) -> bool:
        """True when ``deficit`` and ``excess`` are rigorous (every route produces this)."""
        return True


class _Reduced:
    """``M = vv' + Gamma_SS`` in the basis ``[e_S, 1_{S^c} / sqrt(m)]`` (module docstring)."""

    def __init__(self, kd: KernelData, d: np.ndarray, S: np.ndarray, eta: float):
        self.kd, self.S, self.eta = kd, S, eta
        self.s = S.size
        self.m = kd.n_total - self.s
        self.N = self.s + (1 if self.m > 0 else 0)
        self.dS = d[S]
        self.v = np.ones(self.N)
        if self.m > 0:
            self.v[-1] = np.sqrt(self.m)
        self.c = 1.0 / (4.0 * eta)
        self.cdS = self.c * self.dS
        # the block K[S][:, S] itself when the kernel data copy it (an eigensolver calls gamma
        # dozens of times per evaluation: no cache look-up per product)
        self._block = kd.block(S) if kd._copy(S) else None

    def gamma(self, X: np.ndarray) -> np.ndarray:
        """``Gamma_red @ X`` for ``X`` of shape ``(N,)`` or ``(N, b)``."""
        out = np.zeros_like(X, dtype=np.float64)
        one = X.ndim == 1
        dS = self.dS if one else self.dS[:, None]
        Y = dS * X[: self.s]
        P = self._block @ Y if self._block is not None else self.kd.block_product(self.S, Y)
        out[: self.s] = (self.cdS if one else self.cdS[:, None]) * P
        return out

    def matmat(self, X: np.ndarray) -> np.ndarray:
        return np.multiply.outer(self.v, self.v @ X) + self.gamma(X)

    def dense(self) -> np.ndarray:
        s = self.s
        B = np.outer(self.v, self.v)
        B[:s, :s] += self.c * np.outer(self.dS, self.dS) * self.kd.block(self.S)
        return B


def _psi(theta: np.ndarray, t: float) -> np.ndarray:
    """``min_{f >= 0} (f - theta)^2 + 2 t f``: ``theta^2`` below ``t``, else ``2 t theta - t^2``."""
    return np.where(theta <= t, theta * theta, 2.0 * t * theta - t * t)


def _eig_dense(red: _Reduced):
    B = red.dense()
    lam, W = eigh(B, driver="evd", overwrite_a=True, check_finite=False)
    return lam[::-1], W[:, ::-1]


def _eig_arpack(red: _Reduced, k: int, v0: np.ndarray, tol: float):
    """Top ``k`` eigenpairs of the reduced ``M`` by ARPACK (matrix-free, one product per step)."""
    N = red.N
    op = LinearOperator((N, N), matvec=red.matmat, matmat=red.matmat, dtype=np.float64)
    k = min(k, N - 2)
    if not np.any(v0):  # ARPACK's own start is random: a fixed one keeps every fit repeatable
        v0 = np.random.default_rng(N).uniform(0.5, 1.5, N)
    try:
        lam, W = eigsh(op, k=k, which="LA", v0=v0, tol=tol, maxiter=50 * N)
    except ArpackNoConvergence as exc:  # certify what converged (the bound stays rigorous)
        if exc.eigenvalues.size == 0:
            return _eig_block(red, _pad(red, v0[:, None], k), 1e-10 * N, 200)
        lam, W = exc.eigenvalues, exc.eigenvectors
    except ArpackError:  # ARPACK's own failures: the block method from the same start
        return _eig_block(red, _pad(red, v0[:, None], k), 1e-10 * N, 200)
    order = np.argsort(lam)[::-1]
    return lam[order], W[:, order]


def _eig_block(red: _Reduced, X0: np.ndarray, tol: float, maxiter: int):
    """Top eigenpairs of the reduced ``M`` by LOBPCG from the block ``X0`` (block products)."""
    N = red.N
    op = LinearOperator((N, N), matvec=red.matmat, matmat=red.matmat, dtype=np.float64)
    try:
        with warnings.catch_warnings():  # convergence is judged by the certificate
            warnings.simplefilter("ignore", UserWarning)
            lam, W = lobpcg(op, X0, largest=True, tol=tol, maxiter=maxiter)
    except (np.linalg.LinAlgError, ValueError, ArpackError):
        # an iterative eigensolver's failure is a reason to change tools, never an exception
        # for the user: the dense decomposition where affordable, else a fresh seeded block
        if N <= DENSE_FALLBACK:
            lam, W = _eig_dense(red)
            return lam[: X0.shape[1]], W[:, : X0.shape[1]]
        X1 = np.random.default_rng(N + X0.shape[1]).standard_normal(X0.shape)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            lam, W = lobpcg(op, np.linalg.qr(X1)[0], largest=True, tol=tol, maxiter=maxiter)
    order = np.argsort(lam)[::-1]
    return lam[order], W[:, order]


@dataclass
class _Ritz:
    theta: np.ndarray
    U: np.ndarray
    deficit_part: float  # sum psi(theta) + (2c - c^2) ||G||^2
    excess: float
    tail_bound: float


def _tail_frob2(U, GU, g_frob2: float, w: np.ndarray, Gw: np.ndarray) -> tuple[float, float]:
    """``||(I - P) M (I - P)||_F^2`` for ``P = UU'`` (module docstring formula), and
    ``||w||^2``, from ``w = (I - P) v`` and ``Gamma w`` (:func:`_certify_ritz` forms both tails'
    ``w`` and multiplies them by ``Gamma`` in one product)."""
    UGU = U.T @ GU
    A2 = g_frob2 - 2.0 * float(np.sum(GU * GU)) + float(np.sum(UGU * UGU))
    ww = float(w @ w)
    return ww * ww + 2.0 * float(w @ Gw) + max(A2, 0.0), ww


def _certify_ritz(red: _Reduced, W: np.ndarray, t: float, g_frob2: float, g_trace: float,
                  gamma_max: float = np.inf):
    """Rayleigh-Ritz on ``span(W)`` and the certified bounds of the module docstring.

    ``P`` is spanned by the Ritz vectors with ``theta > t`` (those in ``F^``); the other Ritz
    vectors ``V`` of the block sharpen the bound on ``lambda_max(G)``: in the basis ``[V, the
    complement of the block]``, ``G = [[diag(theta_V), R_V'], [R_V, G_b]]`` (joint Rayleigh-Ritz
    makes every residual orthogonal to the whole block), so ``lambda_max(G)`` is at most the
    largest eigenvalue of ``[[max theta_V, ||R_V||], [||R_V||, g_b]]`` with
    ``g_b = min(||G_b||_F, tr G_b)`` for the compression ``G_b`` off the whole block. A third
    bound holds for flat tails (many small eigenvalues, where both norms exceed ``t``):
    ``G = (I - P)(vv' + Gamma)(I - P)``, so ``lambda_max(G) <= ||(I - P) v||^2 + gamma_max`` for
    any ``gamma_max >= lambda_max(Gamma)`` (:func:`_gamma_max_bound`).
    """
    Q, _ = qr(W, mode="economic", check_finite=False)
    GQ = red.gamma(Q)
    vQ = red.v @ Q
    MQ = np.multiply.outer(red.v, vQ) + GQ
    T = Q.T @ MQ
    theta, Z = eigh(0.5 * (T + T.T))
    theta, Z = theta[::-1], Z[:, ::-1]
    U = Q @ Z
    GU = GQ @ Z
    vU = vQ @ Z
    R = np.multiply.outer(red.v, vU) + GU - U * theta
    trace_M = red.kd.n_total + g_trace
    keep = theta > t
    # w = (I - P) v for the whole block and for P = span(U[:, keep]): one product for both
    w2 = red.v[:, None] - np.column_stack([U @ vU, U[:, keep] @ vU[keep]])
    Gw2 = red.gamma(w2)
    # compression off the whole block
    Gb2, wwb = _tail_frob2(U, GU, g_frob2, w2[:, 0], Gw2[:, 0])
    gb = min(np.sqrt(Gb2), max(trace_M - float(theta.sum()), 0.0), wwb + gamma_max)
    # compression off P = span(U[:, keep])
    GP2, wwP = _tail_frob2(U[:, keep], GU[:, keep], g_frob2, w2[:, 1], Gw2[:, 1])
    trGP = max(trace_M - float(theta[keep].sum()), 0.0)
    g = min(np.sqrt(GP2), trGP, wwP + gamma_max)
    if not np.all(keep):
        a = float(theta[~keep].max())
        beta = float(np.sqrt(np.sum(R[:, ~keep] ** 2)))
        g = min(g, 0.5 * (a + gb) + np.hypot(0.5 * (a - gb), beta))
    c = 1.0 if g <= t else t / g
    r2 = float(np.sum(R[:, keep] ** 2))
    part = float(np.sort(_psi(theta[keep], t)).sum()) + (2.0 * c - c * c) * GP2
    excess = 2.0 * r2 + (1.0 - c) ** 2 * GP2
    return _Ritz(theta, U, part, excess, g)


def _gamma_max_bound(red: _Reduced) -> float:
    """An upper bound of ``lambda_max(Gamma_SS)`` by Collatz-Wielandt on ``|Gamma|``.

    For any symmetric ``A`` and positive ``s``, ``lambda_max(A) <= rho(|A|) <= max_i
    (|A| s)_i / s_i``. With ``|Gamma| = |D| |K| |D| / (4 eta)`` and ``s = 1`` or ``s = |d|`` this
    is ``max_i |d_i| (|K| |d|)_i / (4 eta)`` resp. ``max_i (|K| d^2)_i / (4 eta)``: two products
    with ``|K[S][:, S]|`` (``K`` itself for a non-negative kernel such as the Gaussian). Tight when
    ``K`` is nearly diagonal (narrow kernels), exactly where the Frobenius bound is not.
    """
    a = np.abs(red.dS)
    X = np.column_stack([a, a * a])
    P = red.kd.abs_block_product(red.S, X)
    return red.c * float(min(np.max(a * P[:, 0]), np.max(P[:, 1])))


def _iterate(red: _Reduced, warm, t, g_frob2, g_trace, excess_tol, route):
    """Certified top eigenpairs: blocks grown until the bound's excess is below ``excess_tol``.

    The eigen-engine is ARPACK (implicitly restarted Lanczos, one vector at a time: least
    overhead) below ``PARALLEL_MIN`` and LOBPCG (block products, warm-started from the previous
    Ritz block: fewest passes over ``K``) above. Returns None when the dense decomposition is the
    better tool (route ``"auto"``, ``N <= DENSE_FALLBACK``, and the block would need a fifth
    of the spectrum, or widening it left the tail bound where it was: a flat tail of
    eigenvalues just below ``t`` that only the whole spectrum separates).

    The first block has the size that certified the warm start (:data:`InnerSolution.eigvals`
    of the Lanczos route), so that a Newton solve does not grow it anew at every evaluation
    (diabetic, n = 460, rank 11: three ARPACK runs of 15, 30 and 60 vectors per evaluation).
    """
    N = red.N
    rank = 0 if warm is None else warm.F.rank
    b = max(6, rank + 4)
    X0 = _start_block(red, warm, b)
    gmax = _gamma_max_bound(red)
    use_lobpcg = N >= LOBPCG_MIN
    maxiter, arpack_tol = 40, 1e-13
    if KRYLOV_STEPS and rank > 0 and 5 * b < N:  # warm: a short Krylov block often certifies
        rz = _certify_ritz(red, _krylov_block(red, X0, KRYLOV_STEPS), t, g_frob2, g_trace, gmax)
        if rz.theta[-1] <= t and rz.excess <= KRYLOV_ACCEPT * excess_tol:
            return rz
    if warm is not None and warm.route == "lanczos" and warm.eigvals.size > b:
        b = min(warm.eigvals.size, max(N // 5 - 1, b))  # the block that certified last time
        X0 = _pad(red, X0, b)
    rz = None
    widened = None  # the tail bound before the block was last widened
    for _ in range(8):
        if 5 * b >= N:  # a fifth of the spectrum or more
            if route == "auto" and N <= DENSE_FALLBACK:
                return None  # the dense decomposition is the better tool
            if N <= DENSE_FALLBACK:  # explicit "lanczos" on a small problem: exact Ritz blocks
                lam, V = _eig_dense(red)
                b = min(max(b, int(np.count_nonzero(lam > t)) + 2), N)
                while True:
                    rz = _certify_ritz(red, V[:, :b], t, g_frob2, g_trace, gmax)
                    if rz.excess <= excess_tol or b == N:
                        return rz
                    b = min(N, 2 * b)
            use_lobpcg = False
            b = min(b, N - 2)
        if use_lobpcg:
            tol = max(np.sqrt(max(excess_tol, 0.0) / (8.0 * b)), 1e-14 * N)
            lam, W = _eig_block(red, X0, tol, maxiter)
        else:
            lam, W = _eig_arpack(red, b, X0[:, : max(rank, 1)].sum(axis=1), arpack_tol)
        rz = _certify_ritz(red, W, t, g_frob2, g_trace, gmax)
        full = rz.theta[-1] > t  # every computed eigenvalue is above t: some may be missing
        if not full and rz.excess <= excess_tol:
            break
        if full or (rz.tail_bound > t and (1.0 - t / rz.tail_bound) ** 2 * rz.tail_bound ** 2
                    > 0.5 * excess_tol):
            if (not full and widened is not None and rz.tail_bound > STALL_TAIL * widened
                    and route == "auto" and N <= DENSE_FALLBACK):
                return None  # a flat tail: widening did not lower its bound
            widened = rz.tail_bound if not full else None
            b *= 2  # the tail holds eigenvalues above t: widen the block
        else:  # residuals dominate: iterate longer
            maxiter *= 2
            arpack_tol = max(arpack_tol * 1e-2, 1e-16)
        X0 = _pad(red, rz.U, b)
        rank = int(np.count_nonzero(rz.theta > t))
    return rz


def _krylov_block(red: _Reduced, X0: np.ndarray, steps: int) -> np.ndarray:
    """``[X0, M X0, ..., M^steps X0]``, each product's columns scaled to unit norm (the
    Rayleigh-Ritz of :func:`_certify_ritz` orthonormalises the block): ``steps`` block products
    with ``K[S][:, S]``, ``O(N b (steps + 1))`` memory."""
    blocks = [X0]
    X = X0
    for _ in range(steps):
        X = red.matmat(X)
        X = X / np.maximum(np.linalg.norm(X, axis=0), 1e-300)
        blocks.append(X)
    return np.hstack(blocks)


def _start_block(red: _Reduced, warm, b: int) -> np.ndarray:
    """``b`` start vectors: the previous Ritz vectors (reduced basis), ``v``, then seeded noise."""
    cols = []
    F = None if warm is None else warm.F
    if isinstance(F, LowRankF) and F.rank > 0:
        Wp = np.empty((red.N, F.rank))
        Wp[: red.s] = F.U[red.S]
        if red.m > 0:
            g = F.ghost if F.ghost is not None else np.zeros(F.rank)
            Wp[red.s] = g * np.sqrt(red.m)
        cols.append(Wp)
    cols.append(red.v[:, None])
    return _pad(red, np.hstack(cols), b)


def _pad(red: _Reduced, W: np.ndarray, b: int) -> np.ndarray:
    """An orthonormal block of ``b`` columns: the independent directions of ``W`` first,
    completed by deterministic random vectors (lobpcg rejects dependent start blocks)."""
    rng = np.random.default_rng(1000 * b + W.shape[1])
    W = np.hstack([W[:, :b], rng.standard_normal((red.N, b))])
    Q, R, piv = qr(W, mode="economic", pivoting=True, check_finite=False)
    diag = np.abs(np.diag(R))
    indep = diag > 1e-10 * diag[0]
    return Q[:, indep][:, :b]


def inner_minimiser(
    kd: KernelData,
    d: np.ndarray,
    eta: float,
    tau: float,
    *,
    route: str = "auto",
    warm: InnerSolution | None = None,
    excess_tol: float | None = None,
) -> InnerSolution:
    """Inner minimiser ``F(a) = J_{tau/2}(11' + Gamma(a))``, Lemma fbound, with certified value.

    Parameters
    ----------
    kd : KernelData
    d : ndarray of shape (kd.n,)
        ``a * y`` (P1/P3) or ``ah - ac`` (P2) on the points of ``kd`` (the ``n_total - n``
        points outside ``kd`` have ``d = 0``).
    eta : float > 0
    tau : float >= 0
    route : {"auto", "dense", "lanczos"}
        Ignored when ``tau == 0`` (closed form). ``"auto"`` uses the dense reduced
        eigendecomposition up to size ``DENSE_LIMIT``, the certified Lanczos route above.
    warm : InnerSolution, optional
        Previous solution; its Ritz vectors start the iterative route's block.
    excess_tol : float, optional
        Target for ``excess`` on the iterative route (default ``1e-12 * n_total``): the block
        grows, or iterates longer, until the certified excess is below it (or the route's limits
        are reached; the bound stays rigorous either way).

    Returns
    -------
    InnerSolution
        ``lin + eta * deficit`` is a rigorous lower bound of ``h(a)``; see the module docstring.

    Notes
    -----
    Cost with ``s = |S|``: ``"dense"`` ``O(s^3)`` time and ``O(s^2)`` memory; ``"lanczos"``
    ``O(s^2 k)`` time (products with ``K[S][:, S]``; ``k`` ~ the rank of ``F`` + 6), ``O(s k)``
    memory beyond ``K``; ``tau = 0`` ``O(s^2)``.
    """
    S = np.flatnonzero(d)
    with blas_threads(S.size):  # one thread policy for all the dense work below
        return _inner(kd, d, S, eta, tau, route, warm, excess_tol)


def _inner(kd, d, S, eta, tau, route, warm, excess_tol) -> InnerSolution:
    n = kd.n_total
    s = S.size
    dS = d[S]
    quad, sq, tr, kk = kd.gamma_sums(S, dS)
    # (sq / 4 eta) / 4 eta, not sq / (16 eta^2): eta^2 underflows for eta < 1e-154
    one_g_one, g_frob2, g_trace = quad / (4 * eta), sq / (4 * eta) / (4 * eta), tr / (4 * eta)
    if tau == 0.0:
        F = CenteredF(d=d, eta=eta, _kd=kd)
        return InnerSolution(F, -(2 * one_g_one + g_frob2), 0.0, np.empty(0), "closed",
                             kk_d2=kk)
    t = tau / 2.0
    if s == 0:  # M = 11': one eigenvalue n with eigenvector 1/sqrt(n)
        mu = np.array([n - t]) if n > t else np.empty(0)
        U = np.full((kd.n, mu.size), 1.0 / np.sqrt(n))
        F = LowRankF(mu, U, np.full(mu.size, 1.0 / np.sqrt(n)))
        return InnerSolution(F, float(_psi(np.array([float(n)]), t)[0]), 0.0,
                             np.array([float(n)]), "dense")
    red = _Reduced(kd, d, S, eta)
    N = red.N
    warm_rank = 0 if warm is None else warm.F.rank
    use_dense = (route == "dense" or N <= 8 or route == "auto" and (
        N <= DENSE_LIMIT or (N <= DENSE_FALLBACK and 5 * (warm_rank + 4) >= N)))
    base = -(2.0 * one_g_one + g_frob2)
    if excess_tol is None:
        excess_tol = 1e-12 * n
    rz = None if use_dense else _iterate(red, warm, t, g_frob2, g_trace, excess_tol, route)
    basis = None
    if rz is None:
        lam, W = _eig_dense(red)
        deficit = base + float(np.sort(_psi(np.maximum(lam, 0.0), t)).sum())
        excess, tail, used = 0.0, 0.0, "dense"
        theta, Uk = lam, W
        basis = W if N <= DENSE_LIMIT + 1 else None  # kept small (the dense fallback reaches
        # N = DENSE_FALLBACK: 72 MB per evaluation that no curvature would read)
    else:
        theta, Uk = rz.theta, rz.U
        deficit = base + rz.deficit_part
        excess, tail, used = rz.excess, rz.tail_bound, "lanczos"
    keep = theta > t
    mu = theta[keep] - t
    Wk = Uk[:, keep]
    U = np.empty((kd.n, mu.size))
    U[S] = Wk[:s]
    ghost = None
    if red.m > 0:
        ghost = Wk[s] / np.sqrt(red.m)
        rest = np.ones(kd.n, dtype=bool)
        rest[S] = False
        U[rest] = ghost
    return InnerSolution(LowRankF(mu, U, ghost), deficit, excess, theta, used, tail, basis, kk)


def apply_FK(F: LowRankF | CenteredF, kd: KernelData, x: np.ndarray) -> np.ndarray:
    """``(F o K) x`` without forming ``F`` or ``F o K``: the only product route the solvers use."""
    return F.hadamard_matvec(kd, np.asarray(x, dtype=np.float64))
