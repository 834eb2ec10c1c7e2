"""Projected Newton ascent on the free set (active-set Newton), for fast high accuracy.

Not in the paper. The Hessian of ``h`` (eq. gradf differentiated once more) is, in
the coordinates ``d = a * y``,

    -hess_d h = (F o K) + Corr,   Corr = (diag((K o K) d^2) + d d' o K o K) / (4 eta)

exactly when ``tau = 0`` (``F = 11' + Gamma``); for ``tau > 0`` the same matrix is
used as a curvature model (the soft-threshold is non-expansive, so the true
correction is smaller: the model errs on the side of short steps).

Each iteration (Bertsekas' projected Newton with an equality constraint):

1. the multiplier ``lam`` of ``y'a = 0`` from the free coordinates;
2. the binding set: bounds the reduced gradient ``g - lam y`` pushes against;
3. the Newton step on the remaining coordinates, subject to ``y_F' p = 0``
   (one small KKT solve of the free-set size);
4. ``a+ = P_A(a + t p)``, ``t`` halved until ``h`` increases;
5. the certificate decides when to stop.

When a step fails to increase ``h`` the method hands over to the accelerated
gradient method from the current point (same certificate, same ``tol``).
"""

from __future__ import annotations

import time

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from ._accelerated import accelerated, finish
from .inner import ROW_BLOCK, blas_threads
from .projection import project_A

__all__ = ["newton"]



def _curvature(problem, ev, free: np.ndarray) -> np.ndarray:
    """``-hess h`` restricted to ``free`` (in the coordinates ``z`` of the problem).

    Built in row blocks straight into one ``|free| x |free|`` array (the only matrix of that
    size; block temporaries are ``ROW_BLOCK x n``): ``O(|free|^2 (r + 1))`` time for a rank-``r``
    ``F``, ``O(|free|^2)`` memory.
    """
    kd = problem.kd
    K = kd.K
    d = problem.d_of(ev.z)
    dix, sv = problem.d_coordinates(free)
    f = dix.size
    F = ev.inner.F
    low_rank = hasattr(F, "mu")
    c = 1.0 / (4.0 * problem.eta)
    dF = d[dix]
    d2 = d * d
    H = np.empty((f, f))
    if low_rank:
        UFmu = F.U[dix] * F.mu
        UF = F.U[dix]
    step = max(64, min(ROW_BLOCK, (1 << 21) // max(kd.n, 1)))  # temporaries <= 16 MiB each
    with blas_threads(f):
        for lo in range(0, f, step):
            rows = slice(lo, min(lo + step, f))
            Krows = K[dix[rows]]  # b x n
            KB = Krows[:, dix]  # b x f
            out = H[rows]
            if low_rank:
                np.matmul(UFmu[rows], UF.T, out=out)  # F[rows, free]
            else:
                np.multiply.outer(dF[rows], dF, out=out)
                out *= c * KB
                out += 1.0
            out *= KB  # (F o K)[rows, free]
            KB *= KB
            KB *= np.multiply.outer(dF[rows], dF)
            out += c * KB  # (d d') o K o K
            np.square(Krows, out=Krows)
            diag = c * (Krows @ d2)  # diag((K o K) d^2) on these rows
            idx = np.arange(rows.start, rows.stop)
            out[idx - lo, idx] += diag
    H *= sv[:, None]
    H *= sv[None, :]
    return H


def _better(problem, en, ev, quick: float) -> bool:
    """Accept a trial point: ``h`` increased, or (near the optimum, where the change in
    ``h`` drowns in its round-off, ~eps eta n^2) the cheap duality gap decreased."""
    return en.h > ev.h or problem.quick_rel_gap(en) < quick


def _newton_step(problem, ev, free, g, has_eq, H=None):
    """Solve ``max g_F'p - 1/2 p'H p`` s.t. ``y_F'p = 0``, or None if ``H`` is not PD.

    Cholesky of ``H`` (in place) and the Schur complement of the equality constraint:
    ``p = H^-1 (g - nu y)``, ``nu = y'H^-1 g / y'H^-1 y``. Single-threaded BLAS below
    ``PARALLEL_MIN`` (as fast there, and immune to busy-waiting threads on shared cores),
    every core above: ``O(|free|^3 / 3)`` time, ``O(|free|^2)`` memory. ``H`` (the curvature
    on ``free``, overwritten) may be given, e.g. cut from the curvature of a larger free set.
    """
    Hf = _curvature(problem, ev, free) if H is None else H
    Hf[np.diag_indices_from(Hf)] += 1e-12 * max(1.0, float(np.max(np.diag(Hf))))
    gF = g[free]
    try:
        with blas_threads(free.size):
            # Hf is symmetric: its transpose is the same matrix in Fortran order, which LAPACK
            # factorises in place (no |free|^2 copy)
            fac = cho_factor(Hf.T, check_finite=False, overwrite_a=True)
            if not has_eq:
                return cho_solve(fac, gF, check_finite=False)
            yF = problem.eq_vector[free]
            sol = cho_solve(fac, np.column_stack([gF, yF]), check_finite=False)
    except LinAlgError:
        return None
    Hg, Hy = sol[:, 0], sol[:, 1]
    nu = float(yF @ Hg) / float(yF @ Hy)
    return Hg - nu * Hy


def newton(
    problem,
    *,
    tol: float = 1e-6,
    max_iter: int = 100,
    alpha0: np.ndarray | None = None,
    record_history: bool = True,
    fallback_iter: int = 5000,
) -> object:
    t_start = time.perf_counter()
    C = problem.C
    y = problem.eq_vector  # normal of the equality constraint (None for P3)
    has_eq = y is not None
    z = problem.start(alpha0)
    ev = problem.evaluate(z)
    hist = {"h": [ev.h], "step": [], "gap": [], "L": []}
    status, cert = "max_iter", None
    it = 0
    for it in range(1, max_iter + 1):
        z_norm = problem.normalize(z)  # SVR: ah_i, ac_i > 0 together is never optimal
        if z_norm is not z:
            z, ev = z_norm, problem.evaluate(z_norm, warm=ev)
        quick = problem.quick_rel_gap(ev)
        if quick <= tol:
            cert = problem.certify(ev)
            if record_history:
                hist["gap"].append((it - 1, cert.gap))
            if cert.rel_gap <= tol:
                status = "converged"
                it -= 1
                break
        g = ev.grad
        margin = 1e-12 * C
        inside = (z > margin) & (z < C - margin)
        lam = float(np.mean(y[inside] * g[inside])) if has_eq and np.any(inside) else 0.0
        r = g - lam * y if has_eq else g
        binding = ((z <= margin) & (r < 0)) | ((z >= C - margin) & (r > 0))
        pF = free = None
        H_all, free_all = None, None
        for _ in range(50):  # drop bound coordinates the Newton step would push outward
            free = np.flatnonzero(~binding)
            if free.size == 0:
                break
            H = None
            if free_all is None:
                free_all = free
                # the curvature of the first free set; later sets are subsets: cut it (kept
                # only while small: above 4M entries the factorisation overwrites it)
                H_all = _curvature(problem, ev, free)
                H = H_all.copy() if H_all.size <= (1 << 22) else H_all
                if H is H_all:
                    H_all = None
            elif H_all is not None:
                pos = np.searchsorted(free_all, free)
                H = H_all[np.ix_(pos, pos)]
            pF = _newton_step(problem, ev, free, g, has_eq, H)
            if pF is None:
                break
            zF = z[free]
            bad = ((zF <= margin) & (pF < 0)) | ((zF >= C - margin) & (pF > 0))
            if not np.any(bad):
                break
            binding[free[bad]] = True
        if pF is None or free is None or free.size == 0:
            break
        p = np.zeros(problem.dim)
        p[free] = pF
        # 1. the full step projected on the free coordinates only (binding ones stay
        #    put): a+_F = P(a_F + p_F) onto {y_F'a_F = -y_B'a_B, box}, so several
        #    bounds can become active at once (shorter arcs were measured to stall);
        # 2. otherwise the ratio test (longest step that keeps the free coordinates
        #    in the box; one bound becomes active), halved until accepted.
        fixed = np.flatnonzero(binding)
        z_new = z.copy()
        if has_eq:
            target = -float(y[fixed] @ z[fixed])
            z_new[free] = project_A(z[free] + pF, y[free], C, target=target)
        else:
            z_new[free] = np.clip(z[free] + pF, 0.0, C)
        en = problem.evaluate(z_new, warm=ev)
        accepted = _better(problem, en, ev, quick)
        if not accepted:
            with np.errstate(divide="ignore", invalid="ignore"):
                to_bound = np.where(
                    pF > 0, (C - z[free]) / pF, np.where(pF < 0, -z[free] / pF, np.inf)
                )
            t_max = float(min(1.0, np.min(to_bound)))
            hit = free[np.argmin(to_bound)] if t_max < 1.0 else -1
            t = t_max
            while t > 1e-12 * max(t_max, 1e-300):
                z_new = z + t * p
                if t == t_max and hit >= 0:  # land exactly on the bound that was hit
                    z_new[hit] = C if p[hit] > 0 else 0.0
                z_new = problem.project(z_new)
                en = problem.evaluate(z_new, warm=ev)
                if _better(problem, en, ev, quick):
                    accepted = True
                    break
                t *= 0.5
        if not accepted:
            break
        step = float(np.linalg.norm(z_new - z))
        z, ev = z_new, en
        if record_history:
            hist["h"].append(ev.h)
            hist["step"].append(step)
    if status != "converged":
        # hand over to the first-order method from where Newton stopped
        res = accelerated(problem, tol=tol, max_iter=fallback_iter, alpha0=z)
        res.n_iter += it
        res.time = time.perf_counter() - t_start
        res.method = "newton"
        res.extra["newton_iter"] = it
        res.extra["fallback"] = True
        return res
    res = finish(problem, z, ev, cert, status, it, t_start, "newton", hist, tol)
    res.extra["newton_iter"] = it
    res.extra["fallback"] = False
    return res
