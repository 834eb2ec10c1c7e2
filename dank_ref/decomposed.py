r"""Reference solver for P3, the decomposed DANK-SVM (eqs. (18), (19); Lemma 5).

P3 has no bias (box ``0 <= a <= C`` only) and ``tau = 0``.  On the block kernel
``Kbar_ij = K_ij [labels_i == labels_j]`` it is the SDP of :mod:`dank_ref.svm` without ``lam``:

    min_{F PSD, t, nu, delta >= 0}  t + eta ||F - 11'||_F^2
    s.t. [[ F o (yy' o Kbar), 1 + nu - delta ], [ ., 2 (t - C 1'delta) ]]  PSD.

``method="joint"`` solves this one program on all ``n`` points; ``method="blocks"`` solves the
same program per cluster (eq. (19)) and concatenates ``a``.  With ``tau = 0``,
``h(a) = 1'a - 1/2 d'Kbar d - eta ||Gamma||^2`` separates over the blocks, so both give the same
``a`` and value (Lemma 5) -- checked in the tests.

Note on Lemma 5's ``Fbar``: the minimiser of ``Hbar(abar, .)`` over all PSD ``F`` is
``11' + Gamma(abar)``, whose off-block entries are 1 (``Kbar`` is 0 there, so only the centering
term acts), NOT the block-diagonal matrix with zero off-block entries printed in the lemma: the
latter costs an extra ``eta * #(off-block entries)`` in ``Hbar``.  The ``abar`` part and the
saddle value of the lemma hold.  ``RefResult.F`` is the true minimiser ``11' + Gamma(abar)``;
``solver_stats['F_blocks']`` holds the per-block ``F^(c,c)`` for ``method="blocks"``.
"""

from __future__ import annotations

import time

import numpy as np

from . import certificate as cert
from ._result import RefResult, SolverError
from ._threads import single_blas_threaded
from .conic import (
    DEFAULT_SOLVER,
    SDP_BOX_CAP,
    TIME_LIMIT,
    TOL,
    F_scale,
    cap_box,
    check_options,
    check_size,
    dual_vector,
    renamed_options,
    run_conic,
    sdp_stages,
)
from .polish import polish_svm
from .staged import LOOSE_EPS, finish, time_left
from .starts import limit_qp, order_candidates, ray_candidate
from .svm import build_svm_problem
from .validation import (
    box_max,
    check_binary_labels,
    check_box,
    check_kernel,
    check_partition,
    check_positive,
    check_range,
    kernel_scale,
)

__all__ = ["solve_decomposed"]


@single_blas_threaded
def solve_decomposed(K, y, labels, *, C, eta, solver: str = DEFAULT_SOLVER, method: str = "joint",
                     eps: float = 1e-8, polish: bool = True, verbose: bool = False,
                     tol: float = TOL, memory_limit: float | None = None,
                     max_iter: int | None = None, time_limit: float = TIME_LIMIT,
                     strategy: str = "auto", certify_tol: float | None = None,
                     max_iters: int | None = None) -> RefResult:
    """Solve P3, the decomposed problem, exactly and certify it on the block kernel.

    P3 (eqs. (18), (19), Lemma 5) is P1 without bias and with
    ``tau = 0`` on ``Kbar = K o [labels_i == labels_j]``; the certificate is computed on
    ``Kbar``.  Cost: ``method="joint"`` is one SDP on all n points (as
    :func:`dank_ref.solve_svm`); ``method="blocks"`` solves one SDP per cluster, so its
    time and memory are those of the largest cluster.

    Parameters
    ----------
    K : array_like, shape (n, n)
        PSD kernel, as in :func:`dank_ref.solve_svm`.
    y : array_like, shape (n,)
        Labels in {-1, +1}; one class is allowed (P3 has no bias).
    labels : array_like, shape (n,)
        Cluster ids, one per point (``NaN`` / ``None`` rejected).
    C : float or array_like of shape (n,)
        ``> 0``: the box, or per-sample boxes ``0 <= a_i <= C_i`` (each cluster's solve
        takes its own entries); the representable range is checked on ``Kbar``.
    eta : float
        ``> 0`` (P3 has ``tau = 0``).
    solver : {"SCS", "CLARABEL"}, default "SCS"
        The conic solver, as in :func:`dank_ref.solve_svm`.
    method : {"joint", "blocks"}, default "joint"
        ``"joint"``: one SDP on all points; ``"blocks"``: one SDP per cluster, concatenated
        (polishing and the certificate then act on the concatenated vector).
    eps, polish, verbose, tol, memory_limit, max_iter, time_limit, strategy, certify_tol, \
max_iters
        As in :func:`dank_ref.solve_svm` (``time_limit`` bounds the whole solve; ``"auto"``:
        loose conic solves, polish, re-solve at ``eps`` only if the certificate asks for it).

    Returns
    -------
    RefResult
        With ``bias = None``; rescaled internally exactly as :func:`dank_ref.solve_svm`.

    Raises
    ------
    TypeError, ValueError
        Invalid input (:doc:`docs/validity.md </validity>`), out of representable range, or too
        large ``n``.
    SolverError
        The conic solver failed.

    Warns
    -----
    ConvergenceWarning
        When the result cannot be certified (``status`` ``"time_limit"``, ``"max_iter"`` or
        ``"stalled"``; :class:`dank_ref.ConvergenceWarning`, a subclass of scikit-learn's).

    Examples
    --------
    >>> import numpy as np
    >>> from dank_ref import solve_decomposed
    >>> K = np.array([[1.0, 0.5, 0.2], [0.5, 1.0, 0.5], [0.2, 0.5, 1.0]])
    >>> res = solve_decomposed(K, np.array([1.0, -1.0, 1.0]), [0, 0, 1], C=1.0, eta=1.0)
    >>> res.status, res.bias is None
    ('converged', True)
    """
    t0 = time.perf_counter()
    K = check_kernel(K)
    n = K.shape[0]
    y = check_binary_labels(y, n, require_both=False)
    labels = check_partition(labels, n)
    C = check_box(C, n)
    eta = check_positive(eta, "eta")
    if not isinstance(method, str) or method not in ("joint", "blocks"):
        raise ValueError(f"method must be 'joint' or 'blocks', got {method!r}")
    tol, max_iter = renamed_options(tol, max_iter, certify_tol, max_iters)
    opt = check_options(solver=solver, eps=eps, polish=polish, verbose=verbose, tol=tol,
                        memory_limit=memory_limit, max_iter=max_iter, time_limit=time_limit,
                        strategy=strategy)
    Kb = cert.block_kernel(K, labels)
    s = kernel_scale(Kb)
    check_range(C, eta, s, n)
    c = cert.frame_scale(box_max(C), eta, s)
    Kbf, Cf, etaf = Kb * c, C / c, eta / c
    Cm = box_max(Cf)
    extra = {"method": method, "frame_scale": c, "time_limit": opt["time_limit"],
             "strategy": opt["strategy"]}
    stats: dict = {"time_limit": opt["time_limit"], "time_limit_hit": False}

    def limit():
        G = np.outer(y, y) * Kbf  # tau = 0: F0 = 11'
        return limit_qp(G, np.ones(n), None, cap_box(Cf, SDP_BOX_CAP),
                        time_limit=time_left(opt["deadline"]))

    if s == 0.0:
        stats["cvxpy_status"] = "not run (Kbar = 0: a = C solves the linear program)"
        candidates = [("lp", lambda: np.broadcast_to(Cf, (n,)).astype(float))]
    elif method == "joint":
        check_size(n, opt["solver"], opt["memory_limit"])
        w = F_scale(Cm, etaf, s * c)
        extra["F_scale"] = w
        first, later = sdp_stages(
            lambda: build_svm_problem(Kbf, y, C=cap_box(Cf, SDP_BOX_CAP), eta=etaf, tau=0.0,
                                      equality=False, F_scale=w), opt, n, stats, {}, c)
        candidates = first + [("limit_qp", limit)]
    else:
        uniq = list(dict.fromkeys(labels.tolist()))
        check_size(max(int(np.sum(labels == u)) for u in uniq), opt["solver"],
                   opt["memory_limit"])
        blocks = [np.flatnonzero(labels == u) for u in uniq]
        extra["blocks"] = blocks

        candidates, later = _blocks_stages(Kbf, y, blocks, Cf, etaf, opt, stats)
        candidates.append(("limit_qp", limit))

    if s > 0.0:
        def ray():
            a0 = Cf / Cm if isinstance(Cf, np.ndarray) else np.ones(n)
            return ray_candidate(a0, lambda a: certify(a).lower, min(Cm, SDP_BOX_CAP))

        candidates = order_candidates(candidates + [("ray", ray)], Cm, etaf, s * c,
                                      opt["staged"]) + later

    def certify(a):
        return cert.decomposed_certificate(Kbf, y, np.clip(a, 0.0, Cf), C=Cf, eta=etaf,
                                           validate=False)

    def polisher(a, score, deadline, merit=None):
        return polish_svm(Kbf, y, a, C=Cf, eta=etaf, tau=0.0, equality=False, score=score,
                          validate=False, deadline=deadline, merit=merit)

    def final(cf):
        return cert.decomposed_certificate(Kb, y, c * cf.alpha, C=C, eta=eta, validate=False)

    res = finish(kind=f"P3 (decomposed, {method})", candidates=candidates, certify=certify,
                 polisher=polisher, opt=opt, stats=stats, t0=t0, final=final, extra=extra)
    if method == "blocks":
        if "blocks" not in extra:  # Kbar = 0: no per-block solve was needed
            extra["blocks"] = [np.flatnonzero(labels == u)
                               for u in dict.fromkeys(labels.tolist())]
            res.solver_stats["blocks"] = extra["blocks"]
        res.solver_stats["F_blocks"] = [res.F[np.ix_(b, b)] for b in extra["blocks"]]
    return res


def _blocks_stages(Kbf, y, blocks, Cf: float, etaf: float, opt: dict, stats: dict):
    """``method="blocks"``: the per-cluster SDP stages ``(first, escalation)`` of the strategy.

    ``"auto"``: every block at ``max(eps, 1e-4)``, then (escalation) every block at ``eps``;
    ``"tight"``: every block at ``eps``.  Each conic solve gets the time left before the
    deadline (:mod:`dank_ref.staged`).
    """
    def stage(tag: str, eps: float):
        def produce():
            return _blocks_sdp(Kbf, y, blocks, Cf, etaf, opt, stats, tag, eps)
        return (tag, produce)

    if not opt["staged"]:
        return [stage("sdp", opt["eps"])], []
    loose = max(opt["eps"], LOOSE_EPS)
    return [stage("sdp", loose)], ([stage("sdp_tight", opt["eps"])] if loose > opt["eps"] else [])


def _blocks_sdp(Kbf, y, blocks, Cf, etaf, opt, stats, tag, eps) -> np.ndarray:
    """One conic solve per block at ``eps``, the block vectors concatenated (a frame vector)."""
    n = Kbf.shape[0]
    a_raw = np.zeros(n)
    stats.update({"cvxpy_status": [], "wall_time": 0.0, "iterations": 0,
                  f"{tag}_solver": opt["solver"], f"{tag}_eps": eps})
    for idx in blocks:
        Kc = Kbf[np.ix_(idx, idx)]
        Cc = Cf[idx] if isinstance(Cf, np.ndarray) else Cf  # the block's own boxes
        if idx.size == 1:  # max_a a - a^2 k/2 - a^4 k^2/(16 eta) on [0, C]
            a_raw[idx] = _one_point(float(Kc[0, 0]), box_max(Cc), etaf)
            continue
        left = time_left(opt["deadline"])
        if left <= 0.0 and tag != "sdp":
            raise SolverError(f"stage {tag}: no time left")
        w = F_scale(box_max(Cc), etaf, max(float(np.max(np.abs(Kc))), np.finfo(float).tiny))
        prob, con, _ = build_svm_problem(Kc, y[idx], C=cap_box(Cc, SDP_BOX_CAP), eta=etaf,
                                         tau=0.0, equality=False, F_scale=w)
        st = run_conic(prob, opt["solver"], eps, opt["verbose"], opt["max_iter"],
                       max(left, 1e-3))
        a_raw[idx] = dual_vector(con, idx.size)[0]
        stats["cvxpy_status"].append(st["cvxpy_status"])
        stats["wall_time"] += st["wall_time"]
        stats["iterations"] += st.get("iterations") or 0
        stats["time_limit_hit"] = stats["time_limit_hit"] or st["time_limit_hit"]
    stats["cvxpy_status"] = (
        "optimal" if all(x == "optimal" for x in stats["cvxpy_status"])
        else ",".join(map(str, stats["cvxpy_status"])))
    return a_raw


def _one_point(k: float, C: float, eta: float) -> float:
    """Maximiser of ``a - k a^2 / 2 - k^2 a^4 / (16 eta)`` on ``[0, C]`` (strictly concave)."""
    if k <= 0.0:
        return C
    lo, hi = 0.0, C
    if 1.0 - k * C - k * k * C**3 / (4 * eta) >= 0.0:
        return C
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if 1.0 - k * mid - k * k * mid**3 / (4 * eta) > 0.0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)
