"""The cost model of the solver core: its constants, and every choice between routes.

Each choice compares the costs of the sizes at hand (docs/ARCHITECTURE.md, "The solver core and
its cost model", tabulates the work a certified solve cannot avoid). The unit of time is one
flop of matrix-matrix (BLAS-3) work on one core; interpreter time enters as
:data:`CALL_FLOPS` per NumPy/SciPy call, memory as bytes against a budget. Symbols: ``n``
points, ``N = |S| + 1`` the reduced size of ``M = 11' + Gamma`` on the support ``S``, ``r`` the
rank of ``F``, ``f`` free coordinates of a Newton step, ``b`` the width of a Krylov block.

The core's performance constants are the four below; each says where it comes from. The
other numbers in the functions are counts of the code they price (flops and calls, counted from
the function named) or follow from a stated equation. Two memory budgets close the module.
"""

from __future__ import annotations

import math

__all__ = [
    "CALL_FLOPS", "EIGH_FLOPS", "BLOCK", "OVERSAMPLE", "BLOCK_BYTES",
    "DENSE_KERNEL_BYTES", "dense_flops", "round_flops", "exact_curvature_pays",
    "exact_steps_pay", "border_pays",
    "lowrank_columns", "model_limit", "growth_flops", "growth_reach", "psd_test_pays",
    "one_step_pays", "copies_block", "dense_kernel_fits",
]

#: machine: the fixed cost of one NumPy/SciPy call from the interpreter (about 10
#: microseconds) in flops of BLAS-3 work (about 2e10 flop/s on one core); what makes a dense
#: decomposition of a small matrix cheaper than any iteration
CALL_FLOPS = 2e5
#: derived: flops of a dense symmetric eigendecomposition with vectors, over ``N^3``: LAPACK's
#: reduction to tridiagonal form (``4/3 N^3``, half of it matrix-vector work at memory speed,
#: counted twice) and the back-transformation of the eigenvectors (``2 N^3``); the
#: divide-and-conquer step itself is ``O(N^2)`` to ``O(N^3)`` with deflation and not counted
EIGH_FLOPS = 4.0
#: the rows of ``K`` a pass over it takes at a time, and the pivots of a block of the pivoted
#: Cholesky (:class:`dank_fast._psd.PivotedCholesky`): at least LAPACK's blocking of its own
#: Cholesky (``ilaenv``: 64 for ``potrf``), the width at which a block's products run at
#: matrix-matrix speed, and ``BLOCK x n`` temporaries (1 MB at n = 1,000, 8 MB at n = 8,000)
#: that stay in the last-level cache while a pass reads them several times
BLOCK = 128
#: columns beyond the previous rank in a Krylov block (:mod:`dank_fast._eigen`): a block
#: wider than the wanted invariant subspace converges at the rate of the gap past its width,
#: and 5-10 columns of oversampling make that gap (Halko, Martinsson and Tropp 2011, 4.2)
OVERSAMPLE = 8

#: memory budget: bytes of the temporaries a blockwise pass holds at a time: a block of ``K``
#: copied whatever its fraction of ``K`` (:func:`copies_block`), the dense inner eigensolver's
#: matrix (``8 N^2 <= BLOCK_BYTES``, ``N <= 2,896``), a pass over a cluster kernel
#: (:mod:`dank_fast.cluster_result`), the ranking blocks of the paper's matching
#: (:mod:`dank_fast.extension`) and the kernel and ``F`` blocks of a prediction
#: (:mod:`dank_fast.estimators`). 64 MiB keeps a block in a fraction of a laptop's memory
BLOCK_BYTES = 64 << 20
#: memory budget: the largest ``n x n`` kernel an estimator forms for the dense route
#: (:func:`dense_kernel_fits`); beyond it the working sets need ``8 |W|^2`` bytes
DENSE_KERNEL_BYTES = 1 << 30


def dense_flops(N: int) -> float:
    """A dense eigendecomposition of an ``N x N`` matrix (:data:`EIGH_FLOPS`), one call."""
    return EIGH_FLOPS * float(N) ** 3 + CALL_FLOPS


def round_flops(N: int, b: int) -> float:
    """One round of the iterative route from a block of ``b`` vectors, counted from
    :func:`dank_fast._eigen._krylov_round` for the ``k = 3b`` columns of its space: the
    products with ``Gamma`` (``2 N^2 k``); the orthogonalisation (QR of the start, ``4 N b^2``;
    two Gram-Schmidt passes, a pivoted QR and a final pass for each later block against a
    basis of ``b``, then ``2b`` columns, ``44 N b^2``: about ``5.3 N k^2`` in all);
    Rayleigh-Ritz and the bound (``Q'MQ``, the rotations ``QZ`` and ``(Gamma Q) Z``,
    ``U'Gamma U``: ``8 N k^2``); the eigenproblem of size ``k``; and 40 calls."""
    k = min(3 * b, N)
    return 2.0 * N * N * k + 13.3 * N * k * k + EIGH_FLOPS * k**3 + 40 * CALL_FLOPS


def exact_curvature_pays(f: int, r: int, N: int) -> bool:
    """Whether forming the exact Hessian on ``f`` free coordinates from the dense
    decomposition an evaluation made (``2 f^2 r (N - r)`` flops,
    :func:`dank_fast._curvature._exact`) costs no more than that decomposition did."""
    return 2.0 * f * f * r * (N - r) <= dense_flops(N)


def exact_steps_pay(gap: float, rate: float, tol: float, f: int, r: int, N: int) -> bool:
    """Whether Newton's remaining steps take dense evaluations and the exact Hessian rather
    than the iterative route's and the curvature model, which reduce the relative gap by the
    ``rate`` per step seen so far: from ``gap`` to ``tol`` the model needs ``log(tol / gap) /
    log(rate)`` more steps, each one Krylov round on a block of ``r + OVERSAMPLE``
    (:func:`round_flops`), the model (``2 f^2 (r + 1)``) and its factor (``f^3 / 3``); the
    exact Hessian converges quadratically (the gap squares each step: ``log2(log tol / log
    gap)`` steps, at least one), each a dense decomposition, the Hessian's ``2 f^2 r (N - r)``
    (where :func:`exact_curvature_pays`; else it is not formed and nothing is gained) and the
    same factor, after one dense decomposition at the point where it starts. A model that no
    longer reduces the gap (``rate >= 1``) needs unboundedly many steps."""
    if not (exact_curvature_pays(f, r, N) and 0.0 < tol < gap < 1.0):
        return False
    factor = f**3 / 3.0
    steps = max(math.log2(math.log(tol) / math.log(gap)), 1.0)
    exact = dense_flops(N) + steps * (dense_flops(N) + 2.0 * f * f * r * (N - r) + factor)
    if rate >= 1.0:
        return True
    model_step = round_flops(N, r + OVERSAMPLE) + 2.0 * f * f * (r + 1) + factor
    return exact < math.log(tol / gap) / math.log(rate) * model_step


def border_pays(f: int, k: int) -> bool:
    """Whether holding ``k`` of ``f`` free coordinates at a bound by bordering the factor
    (``2 f^2 k`` flops: their solves) costs less than a new factor on the other ``f - k``
    (``(f - k)^3 / 3`` flops and the 20 calls of a new :class:`dank_fast._factor.Model`)."""
    return 2.0 * f * f * k <= (f - k) ** 3 / 3.0 + 20 * CALL_FLOPS


def model_limit(s: int) -> int:
    """The most coordinates a Newton model takes at once from a point whose support has ``s``
    (:func:`dank_fast._newton._direction`): twice the support, so that a model that grows by
    doubling costs at most ``8 / 7`` of its last factor (``sum_k 8^-k``), where taking every
    coordinate the gradient frees would factor up to all ``n`` of them (``n^3 / 3`` flops) for a
    support that grows by a factor of two or three; and at least the size whose factor costs
    no more than the 20 calls of a new model (``f^3 / 3 = 20 CALL_FLOPS``, as
    :func:`border_pays` counts them), below which growing only adds calls."""
    return max(2 * s, int(round((60.0 * CALL_FLOPS) ** (1.0 / 3.0))))


def lowrank_columns(f: int) -> int:
    """The most columns ``R`` of a Woodbury factor of the Newton model on ``f`` coordinates
    (:mod:`dank_fast._lowrank`) whose flops ``f R^2 + R^3 / 3`` do not exceed a Cholesky
    factor's ``f^3 / 3``: ``x = R / f`` solves ``x^3 + 3 x^2 = 1``, ``x = 2 cos(2 pi / 9) - 1``
    (about 0.532)."""
    return int((2.0 * math.cos(2.0 * math.pi / 9.0) - 1.0) * f)


def growth_flops(n: int, k0: int, k1: int) -> float:
    """Growing a pivoted Cholesky factor of ``n`` rows from ``k0`` to ``k1`` columns:
    ``n (k1^2 - k0^2)`` in the blocks' products and the 24 calls of a block of :data:`BLOCK`
    pivots (counted from :meth:`dank_fast._psd.PivotedCholesky.extend`). Its blocks stop at
    the target only, so that a block takes fewer pivots where its candidates' residual has a
    lower rank above the target, as the last one or two of a growth do."""
    if k1 <= k0:
        return 0.0
    blocks = -(-(k1 - k0) // BLOCK)
    return float(n) * (k1 * k1 - k0 * k0) + blocks * 24 * CALL_FLOPS


def growth_reach(n: int, k0: int, flops: float) -> int:
    """The most columns ``k >= k0`` whose growth from ``k0`` costs at most ``flops``
    (:func:`growth_flops`, increasing in ``k``): by doubling, then bisection."""
    lo, hi = k0, k0 + 1  # growth_flops(lo) <= flops < growth_flops(hi) once the loop ends
    while growth_flops(n, k0, hi) <= flops:
        lo, hi = hi, k0 + 2 * (hi - k0)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if growth_flops(n, k0, mid) <= flops else (lo, mid)
    return lo


def psd_test_pays(n: int) -> bool:
    """Whether the low-rank PSD test (:func:`dank_fast._psd.lowrank_gershgorin_psd`) may be
    tried before a Cholesky's ``n^3 / 3`` flops: a failed attempt (the pivoted Cholesky to
    ``r = n / 16``, :func:`growth_flops`) costs at most a tenth of the Cholesky."""
    r = n // 16
    return r > 0 and growth_flops(n, 0, r) <= n**3 / 30


def one_step_pays(N: int, d: int, w: int, n: int, s: int) -> bool:
    """Whether a working-set round takes one Newton step rather than solving its set
    (:mod:`dank_fast.working_set`): the step's dense evaluation of ``F`` (reduced size ``N``)
    costs more than the round's passes over the kernel, ``2 d (w^2 + (n - w) s)`` flops for
    ``d`` features, a working set of ``w`` of the ``n`` points and a support of ``s``."""
    return dense_flops(N) > 2.0 * d * (w * w + (n - w) * s)


def copies_block(s: int, n: int) -> bool:
    """Whether the support block ``K[S][:, S]`` of ``s`` of ``n`` points is copied and kept
    (:class:`dank_fast._kernel_data.KernelData`): a memory rule, not a speed one; the copy fits
    :data:`BLOCK_BYTES` or a quarter of ``K``'s own memory (``s <= n / 2``)."""
    return 8 * s * s <= BLOCK_BYTES or 4 * s * s <= n * n


def dense_kernel_fits(n: int) -> bool:
    """Whether an estimator forms the ``n x n`` kernel of a problem (the dense route):
    ``8 n^2`` bytes within :data:`DENSE_KERNEL_BYTES`."""
    return 8 * n * n <= DENSE_KERNEL_BYTES
