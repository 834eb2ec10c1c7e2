"""P1 on all ``n`` points without an ``n x n`` kernel: working sets over a :class:`FeatureKernel`.

When ``a_i = 0`` outside a working set ``W``, ``M = 11' + Gamma`` acts on ``span{e_i : i in W}
+ span{1_{W^c}}`` (docs/MATH.md, "support reduction"): ``h(a)``, ``F(a)`` and the gradient on
``W`` are those of P1 on ``W`` with the other points as ghosts of zero weight
(:class:`dank_fast.inner.KernelData` with ``n_total = n``), exact for the full problem; outside
``W`` every row of ``F`` is the same, so the decision values there are one kernel expansion over
the support, computed from the features in row blocks; and the certificate is the full
problem's.

Algorithm (chunking with a certified stop): ``W`` starts as the plain SVM's support. Each round
solves P1 on ``W`` (to ``1e-2`` of the full gap it leaves, never below ``tol``) or takes one
Newton step on it, evaluates the decision values of every other point, stops when the full
problem's certified relative gap is ``<= tol``, else adds the worst margin violators and drops
points of ``W`` inactive and far from the margin. A Newton step on all ``n`` points frees
exactly those violators, so one step per round is a projected Newton step on the full problem;
it is taken where a step costs more than the round's passes over the kernel
(:func:`_step_dearer`), and in the first round. Once no point outside ``W`` violates the
margin, ``W`` is solved to ``tol``.

Cost per round: ``|W|^2`` kernel entries and memory, one pass over ``(n - |W|) x |S|`` kernel
entries in blocks, and its Newton steps on ``W``.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

from ._cost import one_step_pays
from ._kernel_data import KernelData
from ._libsvm import svc_dual
from ._newton import newton
from ._primal import bias_and_loss
from ._problem import Evaluation, SVMProblem
from ._result import ConvergenceWarning, DANKResult, WorkingSetResult
from ._threads import blas_threads
from .certificate import _assemble
from .feature_kernel import FeatureKernel
from .inner import CenteredF, InnerSolution, LowRankF, apply_FK
from .projection import repair_start

__all__ = ["solve_svm_working_set", "WorkingSetResult"]


def _ghost_coefficients(F, dW: np.ndarray, S: np.ndarray) -> np.ndarray:
    """``phi_j d_j`` on ``S``: the expansion giving ``(F o K) d`` at every point outside W."""
    if isinstance(F, CenteredF):
        return dW[S].copy()  # F_ij = 1 + Gamma_ij = 1 off the working set
    if F.rank == 0 or F.ghost is None:
        return np.zeros(S.size)
    return dW[S] * (F.U[S] @ (F.mu * F.ghost))


def solve_svm_working_set(
    kernel: FeatureKernel,
    y,
    *,
    C: float,
    eta: float,
    tau: float = 0.01,
    tol: float = 1e-6,
    alpha0=None,
    max_rounds: int = 100,
    max_add: int | None = None,
    max_iter: int = 100,
    verbose: bool = False,
) -> WorkingSetResult:
    """Solve P1 (eq. (4)) on all points of a :class:`FeatureKernel`, certified.

    Parameters
    ----------
    kernel : FeatureKernel
        The kernel of the ``n`` training points (never formed as an ``n x n`` array).
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    C, eta, tau : floats
        As in :func:`dank_fast.solve_svm`.
    tol : float
        Target certified relative gap of the *full* problem.
    alpha0 : ndarray of shape (n,), optional
        Start (e.g. the plain SVM's dual). Default: :class:`sklearn.svm.SVC` on the features
        (same kernel, ``C``, ``tol=1e-4``), whose support is the first working set.
    max_rounds : int
        Working-set rounds. While points outside the working set violate the margin, a round
        after one whose evaluation of ``F`` was a dense decomposition dearer than the round's
        passes over the kernel (and the first round) is one Newton step, so the default is
        Newton's own budget; the others solve the working set (module docstring).
    max_add : int, optional
        Points added per round (default ``max(500, |W| / 2)``, most violating first).
    max_iter : int
        Newton steps of a round that solves its working set.
    verbose : bool
        One line per round on stderr (size of W, gap, violators, time).

    Returns
    -------
    WorkingSetResult
        ``status="converged"`` iff the full problem's certified relative gap is ``<= tol``.

    Notes
    -----
    Memory: ``8 |W|^2`` bytes for ``K[W][:, W]`` plus ``8 |free|^2`` for the Newton system
    plus ``kernel.block_bytes``, and a few ``8 |W|^2`` arrays when ``F(a)`` is computed by the
    dense decomposition (a small ``eta``, :mod:`dank_fast._eigen`); time per round
    ``O(|W|^2 d + |free|^3 + (n - |W|) |S| d)`` plus the eigenpairs of ``F(a)`` per evaluation
    (``O(|W|^3)`` on the dense route).
    """
    t0 = time.perf_counter()
    n = kernel.n
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (n,):
        raise ValueError(f"y has shape {y.shape}, expected ({n},)")
    a, W, warm = _first_working_set(kernel, y, C, alpha0, verbose, t0)
    status, rounds, n_iter, last, one_step = "max_iter", [], 0, None, True
    # while points outside W violate the margin, W will change: one Newton step per round
    # where steps are dear, else W solved to 1e-2 of the full gap it leaves (module docstring);
    # once none violates, the last round solves W to tol
    tol_W = max(tol, 1e-4)
    for r in range(1, max_rounds + 1):
        tr = time.perf_counter()
        kd, res_W = _solve_round(kernel, W, a, y, (C, eta, tau), tol_W,
                                 None if one_step else max_iter, last)
        last = (res_W, W)
        n_iter += res_W.extra["newton_iter"]
        a, margin, viol, cert, n_support = _full_round(kernel, kd, res_W, W, y, C, eta, tau)
        rounds.append(_round_record(r, W, n_support, viol, cert, res_W, tr, verbose))
        if cert.rel_gap <= tol:
            status = "converged"
            break
        if viol.size == 0:  # W holds the support: close the gap on W itself
            if not one_step and tol_W <= tol and res_W.status != "converged":
                status = "stalled"
                break
            tol_W, one_step = tol, False
            continue
        # points outside W violate the margin: one Newton step on the next W where a step
        # costs more than a round's passes over the kernel (and a step was possible on this W)
        one_step = res_W.extra["newton_iter"] > 0 and _step_dearer(res_W, kernel, W, n_support)
        tol_W = max(tol, min(1e-4, 1e-2 * cert.rel_gap))
        W = _next_working_set(W, a, margin, viol, max_add or max(500, W.size // 2))
    res = WorkingSetResult(
        alpha=a, bias=float(cert.bias), lower=cert.lower, upper=cert.upper, gap=cert.gap,
        rel_gap=cert.rel_gap, status=status, n_iter=n_iter, time=time.perf_counter() - t0,
        method="working-set", certificate=cert, inner=res_W.inner, kernel=kd,
        message=f"{status}: certified relative gap {cert.rel_gap:.2e} (tol {tol:.1e}) after "
        f"{len(rounds)} working-set rounds",
        extra={"warm_start": warm, "y": y, "eta": eta, "C": C, "tau": tau, "newton_iter": n_iter},
        working_set=W, feature_kernel=kernel, rounds=rounds,
    )
    if status != "converged":
        warnings.warn(f"DANK working-set solver did not certify tol={tol:g}: {res.message}",
                      ConvergenceWarning, stacklevel=2)
    return res


def _step_dearer(res_W: DANKResult, kernel: FeatureKernel, W: np.ndarray, n_support: int) -> bool:
    """Whether a Newton step costs more than a round's own work (module docstring): its
    evaluation of ``F`` was a dense decomposition of the ``N = |S| + 1`` reduced matrix
    against the round's passes over the kernel, ``2 d (|W|^2 + (n - |W|) |S|)`` flops for
    ``d`` features (:func:`dank_fast._cost.one_step_pays`). Then a round takes one step; else
    (an iterative or closed-form ``F``, cheap beside the passes) it solves its ``W``."""
    if res_W.inner.route != "dense":
        return False
    return one_step_pays(n_support + 1, kernel.X.shape[1], W.size, kernel.n, n_support)


def _next_working_set(W: np.ndarray, a: np.ndarray, margin: np.ndarray, viol: np.ndarray,
                      add: int) -> np.ndarray:
    """The next working set: ``W`` without its inactive, well-classified points, and the
    ``add`` margin violators (outside ``W``) with the smallest margins."""
    viol = viol[np.argsort(margin[viol], kind="stable")[:add]]
    keep = W[(a[W] > 0) | (margin[W] < 1.0 + 1e-3)]
    return np.union1d(keep, viol)


def _solve_round(kernel: FeatureKernel, W: np.ndarray, a: np.ndarray, y: np.ndarray, params,
                 tol_W: float, steps: int | None, last) -> tuple[KernelData, DANKResult]:
    """P1 on the working set ``W`` (the other points as ghosts) from ``a[W]``: solved to
    ``tol_W`` by Newton in at most ``steps`` steps, or one Newton step (no accelerated burst,
    no warning) where ``steps`` is None; and its kernel data. ``params``: ``(C, eta, tau)``;
    ``last``: the previous round's result and working set (its ``F`` is this start's), or
    None."""
    C, eta, tau = params
    kd = KernelData(kernel.block(W, W), n_total=kernel.n)
    prob = SVMProblem(kd, y[W], C if np.ndim(C) == 0 else C[W], eta, tau)
    start = None if last is None else _carried(prob, last[0].inner, last[1], W, a)
    # the carried evaluation is at a[W], a feasible point
    # one step of many: no accelerated burst, and no warning (the round is not the answer)
    kw = {"max_iter": steps} if steps is not None else {"max_iter": 1, "fallback_iter": 0}
    with warnings.catch_warnings(), blas_threads():
        if steps is None:
            warnings.simplefilter("ignore", ConvergenceWarning)
        return kd, newton(prob, tol=tol_W, alpha0=a[W], record_history=False, start=start,
                          **kw)


def _carried(prob: SVMProblem, inner, W_old: np.ndarray, W: np.ndarray, a: np.ndarray):
    """The evaluation at ``a[W]`` from the previous round's ``inner`` (on ``W_old``).

    Rounds keep the support (only points with ``a_i = 0`` join or leave ``W``), so ``d`` and
    ``M`` in its reduced basis are the previous round's: so are ``F``, its certified bounds
    and ``h``. Only the rows of ``F``'s factor move; a point new to ``W`` gets the ghost row.
    ``O(|W| rank(F))``, against an evaluation's ``O(|S|^3)`` on the dense route."""
    z = a[W]
    F = inner.F
    if isinstance(F, LowRankF):
        if F.ghost is None:  # no point outside the support: W is the support, unchanged
            return None
        S = W_old[a[W_old] > 0]
        U = np.empty((W.size, F.rank))
        U[:] = F.ghost
        U[np.searchsorted(W, S)] = F.U[np.searchsorted(W_old, S)]
        F = LowRankF(F.mu, U, F.ghost)
    else:
        F = CenteredF(d=z * prob.y, eta=F.eta, _kd=prob.kd)
    inner = InnerSolution(F, inner.deficit, inner.excess, inner.eigvals, inner.route,
                          inner.tail_bound, size=inner.size)
    return Evaluation(z, inner, prob.lin(z) + prob.eta * inner.deficit, prob)


def _first_working_set(kernel: FeatureKernel, y: np.ndarray, C: float, alpha0, verbose: bool,
                       t0: float):
    """``(a, W, warm)``: the start repaired onto ``A`` (the plain SVM's dual unless ``alpha0``
    is given), its support as the first working set (with a few points of each class when the
    support misses one), and where the start came from (``"given"`` or ``"svc"``)."""
    warm = "given"
    if alpha0 is None:
        alpha0 = svc_dual(kernel, y, C)
        warm = "svc"
        if verbose:
            _log(f"SVC warm start: {np.count_nonzero(alpha0)} support vectors, "
                 f"{time.perf_counter() - t0:.1f} s")
    a = repair_start(alpha0, y, C)
    W = np.flatnonzero(a > 0)
    if W.size == 0 or np.unique(y[W]).size < 2:  # seed with a few points of each class
        W = np.union1d(W, np.concatenate([np.flatnonzero(y > 0)[:5], np.flatnonzero(y < 0)[:5]]))
    return a, W, warm


def _round_record(r: int, W: np.ndarray, n_support: int, viol: np.ndarray, cert, res_W,
                  tr: float, verbose: bool) -> dict:
    """The record of round ``r`` (started at ``tr``) for ``WorkingSetResult.rounds``, also
    logged to stderr when ``verbose``."""
    record = dict(round=r, W=int(W.size), support=n_support, violators=int(viol.size),
                  rel_gap=float(cert.rel_gap), newton=int(res_W.extra["newton_iter"]),
                  route=res_W.inner.route, time=time.perf_counter() - tr)
    if verbose:
        _log(f"round {r}: |W| = {W.size}, |S| = {n_support}, certified rel. gap "
             f"{cert.rel_gap:.2e}, {viol.size} margin violators outside W, "
             f"{time.perf_counter() - tr:.1f} s")
    return record


def _full_round(kernel: FeatureKernel, kd: KernelData, res_W: DANKResult, W: np.ndarray,
                y: np.ndarray, C: float, eta: float, tau: float):
    """The full problem at the solution ``res_W`` of the working set ``W``.

    Returns ``(a, margin, viol, cert, |S|)``: ``a`` on all ``n`` points (0 outside ``W``), the
    margins ``y_i (f_i + b)`` with the exact best bias, the margin violators outside ``W``, the
    full problem's certificate (module docstring) and the support size. One pass over
    ``(n - |W|) x |S|`` kernel entries in blocks.
    """
    n = y.size
    a = np.zeros(n)
    a[W] = res_W.alpha
    dW = res_W.alpha * y[W]
    S = np.flatnonzero(dW)
    f0 = np.empty(n)
    f0[W] = apply_FK(res_W.inner.F, kd, dW)
    out = np.setdiff1d(np.arange(n), W, assume_unique=True)
    if out.size and S.size:
        f0[out] = kernel.product(out, W[S], _ghost_coefficients(res_W.inner.F, dW, S))
    elif out.size:
        f0[out] = 0.0
    q_half = 0.5 * float(dW @ f0[W])
    b, interval, loss = bias_and_loss(f0, y, C, q_half)  # C: scalar or per-sample boxes
    lin = float(a.sum())
    infeas = max(abs(float(y @ a)), float(-a.min()), float(np.max(a - C)), 0.0)
    cert = _assemble(lin, q_half, loss, res_W.inner, eta, tau, b, interval, lin, infeas)
    margin = y * (f0 + b)
    return a, margin, out[margin[out] < 1.0], cert, int(S.size)


def _log(msg: str) -> None:
    print(f"[dank working-set] {msg}", file=sys.stderr, flush=True)
