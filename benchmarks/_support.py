"""The support's dense decomposition that the benchmarks judge DANK against: ``11' + Gamma``
reduced to the support, and the time of its ``scipy.linalg.eigh`` (``bench_distribution.py``'s
bound, ``bench_families.py``'s working-set rows), on one BLAS thread as the solvers run
(docs/ARCHITECTURE.md, "Threads")."""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg
from threadpoolctl import threadpool_limits


def support_matrix(K_SS: np.ndarray, d_S: np.ndarray, n: int, eta: float) -> np.ndarray:
    """``M = v v' + diag(d_S) K_SS diag(d_S) / (4 eta)``: ``11' + Gamma`` of ``n`` points on
    the span of ``e_i`` (``i`` in the support ``S``, where ``d_S != 0``) and ``1_{S^c}``
    (docs/MATH.md's support reduction), ``v = [1_S; sqrt(n - |S|)]``; size ``|S| + 1``, or
    ``|S|`` when ``S`` is every point. Its eigenvalues are the nonzero ones of ``11' +
    Gamma``. Built in place: the new array and no ``|S| x |S|`` temporary beside ``K_SS``."""
    s, m = d_S.size, n - d_S.size
    M = np.empty((s + (m > 0), s + (m > 0)))
    B = M[:s, :s]
    np.multiply(K_SS, d_S[:, None], out=B)
    B *= d_S[None, :] / (4 * eta)
    B += 1.0
    if m > 0:
        M[:s, s] = M[s, :s] = np.sqrt(m)
        M[s, s] = m
    return M


def best_time(fn, repeat: int) -> float:
    """Best of ``repeat`` wall times of ``fn()``."""
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def eigh_time(M: np.ndarray, repeat: int, **kw) -> float:
    """Best of ``repeat`` times of ``scipy.linalg.eigh(M, **kw)`` on one BLAS thread: a DANK
    solve makes its own decompositions on one thread, so the bound it is judged against does
    too (two threads make it 1.7-1.9 times as fast at ``N = 3,000`` on 2 cores)."""
    with threadpool_limits(limits=1, user_api="blas"):
        return best_time(lambda: scipy.linalg.eigh(M, **kw), repeat)
