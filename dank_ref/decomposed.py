r"""Reference solver for P3, the decomposed DANK-SVM (eqs. mainls, mainlssub; Lemma lemmalink).

P3 has no bias (box ``0 <= a <= C`` only) and ``tau = 0``.  On the block kernel
``Kbar_ij = K_ij [labels_i == labels_j]`` it is the SDP of :mod:`dank_ref.svm` without ``lam``:

    min_{F PSD, t, nu, delta >= 0}  t + eta ||F - 11'||_F^2
    s.t. [[ F o (yy' o Kbar), 1 + nu - delta ], [ ., 2 (t - C 1'delta) ]]  PSD.

``method="joint"`` solves this one program on all ``n`` points; ``method="blocks"`` solves the
same program per cluster (``mainlssub``) and concatenates ``a``.  With ``tau = 0``,
``h(a) = 1'a - 1/2 d'Kbar d - eta ||Gamma||^2`` separates over the blocks, so both give the same
``a`` and value (Lemma lemmalink) -- checked in the tests.

Note on Lemma lemmalink's ``Fbar``: the minimiser of ``Hbar(abar, .)`` over all PSD ``F`` is
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
from ._validation import check_binary_labels, check_kernel, check_partition, check_positive
from .polish import polish_svm
from .svm import (
    CERTIFY_TOL,
    DEFAULT_SOLVER,
    build_svm_problem,
    check_size,
    dual_vector,
    finish,
    run_conic,
)

__all__ = ["solve_decomposed"]


def _solve_p3_conic(Kb, y, *, C, eta, solver, eps, verbose, max_iters):
    n = Kb.shape[0]
    prob, con, _ = build_svm_problem(Kb, y, C=C, eta=eta, tau=0.0, equality=False)
    stats = run_conic(prob, solver, eps, verbose, max_iters)
    a, zeta = dual_vector(con, n)
    stats["zeta"] = zeta
    return a, stats


def solve_decomposed(K, y, labels, *, C, eta, solver: str = DEFAULT_SOLVER, method: str = "joint",
                     eps: float = 1e-8, polish: bool = True, verbose: bool = False,
                     certify_tol: float = CERTIFY_TOL, memory_limit: float | None = None,
                     max_iters: int | None = None):
    """Solve P3 on ``Kbar = K o [labels_i == labels_j]``; certified on ``Kbar``.

    ``method="joint"``: one SDP on all points; ``"blocks"``: one SDP per cluster, concatenated
    (the polishing / certificate then act on the concatenated vector).  ``bias`` is ``None``.
    Errors and warnings as :func:`dank_ref.solve_svm`.
    """
    t0 = time.perf_counter()
    K = check_kernel(K)
    n = K.shape[0]
    y = check_binary_labels(y, n, require_both=False)
    labels = check_partition(labels, n)
    C = check_positive("C", C)
    eta = check_positive("eta", eta)
    eps = check_positive("eps", eps)
    if method not in ("joint", "blocks"):
        raise ValueError(f"method must be 'joint' or 'blocks', got {method!r}")
    Kb = cert.block_kernel(K, labels)
    extra = {"method": method}
    if method == "joint":
        check_size(n, solver, memory_limit)
        a_raw, stats = _solve_p3_conic(Kb, y, C=C, eta=eta, solver=solver, eps=eps,
                                       verbose=verbose, max_iters=max_iters)
    else:
        uniq = list(dict.fromkeys(labels.tolist()))
        check_size(max(int(np.sum(labels == c)) for c in uniq), solver, memory_limit)
        a_raw = np.zeros(n)
        stats = {"cvxpy_status": [], "wall_time": 0.0, "iterations": 0}
        blocks = []
        for c in uniq:
            idx = np.flatnonzero(labels == c)
            if idx.size == 1:  # 1-point block: max_a a - a^2 K_ii/2 - a^4 K_ii^2/(16 eta)
                a_raw[idx] = _one_point(float(K[idx[0], idx[0]]), C, eta)
                blocks.append(idx)
                continue
            Kc = Kb[np.ix_(idx, idx)]
            ac, st = _solve_p3_conic(Kc, y[idx], C=C, eta=eta, solver=solver, eps=eps,
                                     verbose=verbose, max_iters=max_iters)
            a_raw[idx] = ac
            stats["cvxpy_status"].append(st["cvxpy_status"])
            stats["wall_time"] += st["wall_time"]
            stats["iterations"] += st.get("iterations") or 0
            blocks.append(idx)
        stats["cvxpy_status"] = ("optimal" if all(s == "optimal" for s in stats["cvxpy_status"])
                                 else ",".join(map(str, stats["cvxpy_status"])))
        extra["blocks"] = blocks

    def certify(a):
        return cert.decomposed_certificate(Kb, y, a, C=C, eta=eta, validate=False)

    def polisher(a, score):
        return polish_svm(Kb, y, a, C=C, eta=eta, tau=0.0, equality=False, score=score)

    res = finish(kind=f"P3 (decomposed, {method})", a_raw=a_raw, certify=certify,
                 polisher=polisher, polish=polish, certify_tol=certify_tol, stats=stats,
                 solver=solver, t0=t0, extra=extra)
    if method == "blocks":
        res.solver_stats["F_blocks"] = [res.F[np.ix_(b, b)] for b in extra["blocks"]]
    return res


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
