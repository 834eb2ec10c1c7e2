r"""DANK's inner problem on the support-reduced space, from features (:doc:`docs/MATH.md </MATH>`
section 12).

With ``d = a o y`` (P2: ``ah - ac``) and ``S = {i : d_i != 0}``, ``M = 11' + Gamma`` acts on
``span{e_S} + span{1_{S^c}}``: :func:`fixed_kernel_g` returns ``g = (F o K) d`` at all ``n``
points and the inner value ``-1/2 d'Kd - eta ||Gamma||^2 + eta sum phi`` (or its certified lower
bound) for ``F = F(a)`` (routes ``"tau0"``, ``"dense"``) or the Krylov route's ``F^``, whose
``excess`` the caller adds to the gap. Costs: :mod:`dank_ref.scale_certificate`.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg
from scipy.sparse.linalg import LinearOperator, eigsh

from .features import FeatureKernel

__all__ = ["fixed_kernel_g", "tau0_pass", "DENSE_MAX", "SUPPORT_BYTES", "ARPACK_TOL",
           "DENSE_BYTES"]

#: Largest support of the ``"auto"`` dense route. Measured on 2 shared cores (load ~9): an
#: ``eigh`` of 2,000 x 2,000 takes 12.6 s on one thread, while the Krylov route certified a
#: support of 2,955 with 8 eigenvalues above ``tau / 2`` in 6.7 s in all (P1 at n = 20,000:
#: make_classification, class_sep 1, flip_y 0.02); with 177 of 1,025 above, Krylov took 84 s
#: and dense 5 s, hence the fallback of :func:`_krylov_inner`.
DENSE_MAX = 1500
#: The Krylov route falls back to the dense one (about ``5 s^2`` floats) up to this size.
DENSE_BYTES = 2 << 30
#: ``K[S, S]`` of the Krylov route is held in memory up to this size (bytes), else recomputed.
SUPPORT_BYTES = 1 << 30
#: ARPACK's relative accuracy of the Ritz pairs (their residual enters the bound squared).
ARPACK_TOL = 1e-13


# ---------------------------------------------------------------------------------------------
# the support kernel K[S, S] (frame units)
# ---------------------------------------------------------------------------------------------
class _Support:
    """``c K[S, S]`` held dense when it fits in ``max_bytes``, else recomputed per product."""

    def __init__(self, fk: FeatureKernel, S: np.ndarray, c: float, max_bytes: int) -> None:
        self.fk, self.S, self.c = fk, S, c
        s = S.size
        self.K = None
        if 8 * s * s <= max_bytes:
            self.K = fk.block(S, S)
            self.K *= c

    def matmat(self, V: np.ndarray) -> np.ndarray:
        if self.K is not None:
            return self.K @ V
        return self.c * self.fk.product(self.S, V, rows=self.S)

    def gamma_stats(self, dS: np.ndarray, eta: float) -> tuple[float, float]:
        """``(d'Kd, ||Gamma||_F^2)`` on the support, ``Gamma = D K D / (4 eta)``."""
        if self.K is not None:
            blocks = [(slice(0, self.S.size), self.K)]
        else:  # row blocks of K[S, S] come in the order of S
            blocks = self._blocks()
        dkd = g2 = 0.0
        d2 = dS * dS
        for pos, Kb in blocks:
            dkd += float(dS[pos] @ (Kb @ dS))
            g2 += float(d2[pos] @ ((Kb * Kb) @ d2))
        return dkd, g2 / (16.0 * eta * eta)

    def _blocks(self):
        lo = 0
        for r, Kb in self.fk.row_blocks(self.S, rows=self.S):
            Kb *= self.c
            yield slice(lo, lo + r.size), Kb
            lo += r.size


def tau0_pass(fk: FeatureKernel, c: float, S: np.ndarray, dS: np.ndarray, rows: np.ndarray,
               d_rows: np.ndarray, eta: float, progress=None):
    """One pass over ``c K[rows][:, S]``: ``g = (F o K) d`` on ``rows`` for ``F = 11' + Gamma``,
    plus ``d'Kd`` and ``||Gamma||^2`` restricted to those rows (``d_rows = d[rows]``);
    ``progress(done, total)`` per row block (:meth:`FeatureKernel.row_blocks`)."""
    g = np.empty(rows.size)
    d2 = dS * dS
    dkd = g2 = 0.0
    pos = 0
    for r, Kb in fk.row_blocks(S, rows=rows, progress=progress):
        Kb *= c
        kd = Kb @ dS
        Kb *= Kb
        kkd = Kb @ d2
        dr = d_rows[pos:pos + r.size]
        g[pos:pos + r.size] = kd + dr * kkd / (4.0 * eta)
        dkd += float(dr @ kd)
        g2 += float((dr * dr) @ kkd)
        pos += r.size
    return g, dkd, g2 / (16.0 * eta * eta)


# ---------------------------------------------------------------------------------------------
# the inner problem on the reduced space (tau > 0)
# ---------------------------------------------------------------------------------------------
def _psi_sum(theta: np.ndarray, t: float) -> float:
    """``sum psi(theta)``, ``psi(l) = 2 t l - t^2`` above ``t``, ``l^2`` below."""
    return float(np.sum(np.where(theta > t, 2.0 * t * theta - t * t, theta * theta)))


def _dense_inner(sk: _Support, dS: np.ndarray, m: int, eta: float, t: float):
    """Exact ``F(a)`` on the reduced space by ``eigh``; returns ``(inner, gS, f, rank)``."""
    s = dS.size
    N = s + (1 if m else 0)
    Ks = sk.K if sk.K is not None else sk.matmat(np.eye(s))
    B = np.empty((N, N))
    Bs = B[:s, :s]
    np.multiply(dS[:, None], dS[None, :], out=Bs)
    Bs *= Ks
    Bs /= 4.0 * eta
    gam2 = float(np.einsum("ij,ij->", Bs, Bs))
    dkd = float(dS @ (Ks @ dS))
    Bs += 1.0
    if m:
        B[:s, s] = math.sqrt(m)
        B[s, :s] = math.sqrt(m)
        B[s, s] = float(m)
    lam, V = scipy.linalg.eigh(B, overwrite_a=True, check_finite=False)
    del B, Bs
    keep = lam - t
    pos = keep > 0
    Vp = V[:, pos]
    Fb = (Vp * keep[pos]) @ Vp.T
    Fb = 0.5 * (Fb + Fb.T)
    inner = -0.5 * dkd - eta * gam2 + eta * _psi_sum(lam, t)
    gS = (Fb[:s, :s] * Ks) @ dS
    f = Fb[:s, s] / math.sqrt(m) if m else np.zeros(s)
    return inner, gS, f, int(pos.sum()), 0.0, "dense"


def _krylov_inner(sk: _Support, dS: np.ndarray, m: int, eta: float, t: float, scale: float,
                  k0: int, k_max: int, excess_rtol: float, fallback: bool):
    """``F^`` from ``k`` Ritz pairs of ``B = e e' + Gamma`` and the rigorous bound of MATH.md
    section 12; returns ``(inner_lower, gS, f, rank, excess, route)`` (frame units).

    The dense route is taken instead when the block would be the whole space, or (``fallback``,
    the ``"auto"`` route) when ``k`` outgrows ``N / 16`` and the dense route fits in
    :data:`DENSE_BYTES`.
    """
    s = dS.size
    N = s + (1 if m else 0)
    e = np.ones(N)
    if m:
        e[s] = math.sqrt(m)
    dkd, gam2 = sk.gamma_stats(dS, eta)
    trG = sk.c * float((dS * dS) @ sk.fk.subset(sk.S).diag()) / (4.0 * eta)

    def gam(V):  # Gamma (padded with a zero row/column for the off-support vector)
        V = V.reshape(N, -1)
        out = np.zeros_like(V)
        out[:s] = dS[:, None] * sk.matmat(dS[:, None] * V[:s]) / (4.0 * eta)
        return out

    def bmat(V):
        V2 = V.reshape(N, -1)
        out = gam(V2) + np.outer(e, e @ V2)
        return out if V.ndim == 2 else out.ravel()

    op = LinearOperator((N, N), matvec=bmat, matmat=bmat, dtype=np.float64)
    dense_fits = fallback and 40 * N * N <= DENSE_BYTES
    rng = np.random.default_rng(0)
    k = min(k0, N - 2)
    while True:
        if k < 1 or k >= N - 1:
            break
        _, U = eigsh(op, k=k, which="LA", v0=rng.standard_normal(N), tol=ARPACK_TOL)
        U, _ = np.linalg.qr(U)
        GU = gam(U)
        BU = GU + np.outer(e, e @ U)
        Hm = U.T @ BU
        theta, W = np.linalg.eigh(0.5 * (Hm + Hm.T))
        U, GU, BU = U @ W, GU @ W, BU @ W
        R = BU - U * theta
        A = theta > t
        UA, GUA = U[:, A], GU[:, A]
        w = e - UA @ (UA.T @ e)
        ww = float(w @ w)
        G2 = max(ww * ww + 2.0 * float(w @ gam(w).ravel()) + gam2
                 - 2.0 * float(np.sum(GUA * GUA)) + float(np.sum((UA.T @ GUA) ** 2)), 0.0)
        trGA = ww + trG - float(np.sum(UA * GUA))
        wa = e - U @ (U.T @ e)
        wwa = float(wa @ wa)
        fro_b = max(wwa * wwa + 2.0 * float(wa @ gam(wa).ravel()) + gam2
                    - 2.0 * float(np.sum(GU * GU)) + float(np.sum((U.T @ GU) ** 2)), 0.0)
        g_b = min(math.sqrt(fro_b), max(wwa + trG - float(np.sum(U * GU)), 0.0))
        g = min(math.sqrt(G2), max(trGA, 0.0))
        if not A.all():
            th = float(np.max(theta[~A]))
            rl = float(np.linalg.norm(R[:, ~A], 2))
            g = min(g, 0.5 * (th + g_b) + math.hypot(0.5 * (th - g_b), rl))
        cc = 1.0 if g <= t else t / g
        excess = 2.0 * float(np.sum(R[:, A] ** 2)) + (1.0 - cc) ** 2 * G2
        phi_lb = _psi_sum(theta[A], t) + (2.0 * cc - cc * cc) * G2
        done = not A.all() and eta * excess <= excess_rtol * scale
        if done or (2 * k > k_max and not dense_fits):
            thA = theta[A] - t
            UAS = UA[:s]
            gS = np.sum(UAS * sk.matmat(UAS * dS[:, None]) * thA, axis=1)
            f = UAS @ (thA * UA[s]) / math.sqrt(m) if m else np.zeros(s)
            inner = -0.5 * dkd - eta * gam2 + eta * phi_lb
            return inner, gS, f, int(A.sum()), excess, "krylov"
        if k >= N - 2 or (2 * k > N // 16 and dense_fits):
            break
        k = min(2 * k, N - 2)
    # many eigenvalues above t (ARPACK's cost grows like N k^2 per restart): the dense route
    # is exact and, with k > N / 16, not slower
    if sk.K is None:
        sk.K = sk.matmat(np.eye(s))
    return _dense_inner(sk, dS, m, eta, t)


def _phase(progress, name: str):
    """``progress(name, done, total)`` as a ``(done, total)`` callback (or None)."""
    if progress is None:
        return None
    return lambda done, total: progress(name, done, total)


def fixed_kernel_g(fk, c, d, eta, tau, *, route, dense_max, support_bytes, k0, k_max,
                    excess_rtol, scale, progress=None):
    """``g = (F o K) d`` at all ``n`` points and ``-1/2 d'Kd - eta ||Gamma||^2 + eta sum phi``
    (or its lower bound), frame units; ``F`` is ``F(a)`` or the Krylov route's ``F^``.

    ``progress(phase, done, total)``, if given, reports each phase (row blocks, or 0 / 1 for a
    phase done in one piece)."""
    n = fk.n
    S = np.flatnonzero(d)
    Sc = np.flatnonzero(d == 0.0)
    dS = d[S]
    s, m = S.size, Sc.size
    t = 0.5 * tau
    if s == 0:  # M = 11': one eigenvalue n (the others 0), g = 0
        if tau == 0.0:
            return np.zeros(n), 0.0, "tau0", -1, 0.0
        return np.zeros(n), eta * _psi_sum(np.array([float(n)]), t), "dense", int(n > t), 0.0
    if tau == 0.0:
        g, dkd, g2 = tau0_pass(fk, c, S, dS, np.arange(n), d, eta,
                               _phase(progress, "(F o K) d, row blocks"))
        return g, -0.5 * dkd - eta * g2, "tau0", -1, 0.0
    use = route if route != "auto" else ("dense" if s <= dense_max else "krylov")
    step = _phase(progress, f"support kernel K[S, S] and the eigenpairs ({use}, s = {s})")
    if step is not None:
        step(0, 1)
    sk = _Support(fk, S, c, max(support_bytes, 8 * s * s) if use == "dense" else support_bytes)
    if use == "dense":
        inner, gS, f, rank, excess, use = _dense_inner(sk, dS, m, eta, t)
    else:
        inner, gS, f, rank, excess, use = _krylov_inner(sk, dS, m, eta, t, scale, k0, k_max,
                                                        excess_rtol, route == "auto")
    if step is not None:
        step(1, 1)
    sk.K = None
    g = np.zeros(n)
    g[S] = gS
    if m:
        g[Sc] = c * fk.product(S, f * dS, rows=Sc,
                               progress=_phase(progress, "rows off the support, row blocks"))
    return g, inner, use, rank, excess
