r"""Exact Hessian of the smooth part of ``h`` in ``d`` for every ``tau >= 0`` (Daleckii-Krein).

With ``d = a o y`` (P1/P3; P2: ``d = b = ah - ac``), ``M(d) = 11' + D K D / (4 eta)``,
``D = diag(d)``, and ``F(d) = J_{tau/2}(M) = U diag(f(l)) U'``, ``f(l) = max(l - tau/2, 0)``
(Lemma 1), the smooth part of ``h`` has the gradient ``-(F o K) d`` (Danskin, eq. (26))
and the Hessian

    Hess_d = -(F o K) - T,    T e_i = (dF[e_i] o K) d,

where by the Daleckii-Krein formula ``dF[E] = U (Phi o (U' dM[E] U)) U'`` with the divided
differences ``Phi_jk = (f(l_j) - f(l_k)) / (l_j - l_k)`` and ``dM[e_i] = (e_i w' + w e_i') /
(4 eta)``, ``w = d o K e_i``.  In the eigenbasis, with ``R = U'`` and ``W = U' D K``,
``U' dM[e_i] U = Q_i / (4 eta)``, ``Q_i = r_i w_i' + w_i r_i'`` (``r_i, w_i``: columns ``i`` of
``R, W``), so ``T`` is the symmetric Gram matrix

    T_il = 1/(8 eta) sum_jk Phi_jk (Q_i)_jk (Q_l)_jk.

``Phi`` is 1 on kept x kept (``l > tau/2``), 0 on killed x killed and
``phi_jk = (l_j - tau/2) / (l_j - l_k)`` in ``(0, 1)`` on kept x killed (the denominators are
positive: no equal-eigenvalue case arises).  Hence, with ``S`` the ``r`` kept and ``Z`` the
``n - r`` killed eigenvalues,

    sum_{S x S} = 2 [(R_S' R_S) o (W_S' W_S) + (R_S' W_S) o (R_S' W_S)']        O(n^2 r),
    sum_{S x Z} (twice, by symmetry) = a Gram matrix of n x r(n-r) rows,     O(n^2 r (n-r)).

For ``tau = 0`` (``Phi = 1``) it reduces to the closed form ``(diag(K2 d^2) + D K2 D) / (4 eta)``,
``K2 = K o K`` (:func:`dank_ref.polish.hessian_d`).  Only the block ``[idx, idx]`` of the
``m`` free variables of the active-set Newton step is needed: it costs ``O(m^2 r (n - r) +
n^2 r)`` time and ``O(m r n)`` memory (in chunks of the kept eigenvalues), after one ``eigh``
of ``M`` (``O(n^3)``, shared by every block).  Nothing here imports ``dank_fast``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SpectralHessian", "HessianOp", "DenseHessian", "hessian_d", "exact_hessian_d",
           "EXACT_BUDGET"]

CHUNK_DOUBLES = 4_000_000  # at most ~32 MB for one chunk of the S x Z Gram rows
# multiply-adds allowed for one exact block (~0.1-0.5 s on one core); dearer blocks use the
# approximate Hessian (the gradient stays exact, so only the convergence rate suffers)
EXACT_BUDGET = 5e8


def hessian_d(K: np.ndarray, d: np.ndarray, F: np.ndarray, eta: float) -> np.ndarray:
    """``-(F o K) - (diag(K2 d^2) + D K2 D) / (4 eta)``: exact for ``tau = 0``, approximate else.

    For ``tau > 0`` it is the Hessian with ``Phi`` replaced by 1 everywhere (as if no eigenvalue
    were killed).  ``O(n^2)`` time and memory.
    """
    K2 = K * K
    s = K2 @ (d * d)
    return -(F * K) - (np.diag(s) + (d[:, None] * K2 * d[None, :])) / (4.0 * eta)


class SpectralHessian:
    """The exact ``Hess_d`` at ``d`` (module docstring) from one ``eigh`` of ``M``.

    Parameters
    ----------
    K : ndarray, shape (n, n)
        Kernel (solver frame).
    d : ndarray, shape (n,)
        ``a o y`` (P1/P3) or ``b`` (P2).
    F : ndarray, shape (n, n)
        ``F(d)`` (Lemma 1), as computed by the certificate.
    eta, tau : float
        ``eta > 0``, ``tau >= 0``.

    Notes
    -----
    Construction: one ``eigh`` of ``M`` (``O(n^3)`` time, ``O(n^2)`` memory) and ``W = U' D K``
    (``O(n^3)``).  :meth:`block` then costs ``O(m^2 r (n - r) + m^2 n)``, :meth:`matvec`
    ``O(n^2 r)`` (``r`` = number of eigenvalues of ``M`` above ``tau/2``).
    """

    def __init__(self, K: np.ndarray, d: np.ndarray, F: np.ndarray, eta: float, tau: float):
        self.K, self.d, self.eta, self.tau = K, d, float(eta), float(tau)
        self.FK = F * K
        M = 1.0 + (np.outer(d, d) * K) / (4.0 * eta)
        lam, U = np.linalg.eigh(M)
        kept = lam - 0.5 * tau > 0.0 if tau > 0.0 else np.ones(lam.size, bool)
        self.S, self.Z = np.flatnonzero(kept), np.flatnonzero(~kept)
        self.R = U.T  # R = U', column i is r_i = U[i, :]
        self.W = U.T @ (d[:, None] * K)  # W = U' D K
        fS = lam[self.S] - 0.5 * tau
        # phi_jk = (l_j - tau/2) / (l_j - l_k) > 0 for j kept, k killed
        self.phi = fS[:, None] / (lam[self.S][:, None] - lam[self.Z][None, :])
        self.U, self.lam = U, lam

    @property
    def rank(self) -> int:
        """Number ``r`` of kept eigenvalues (``l > tau/2``)."""
        return int(self.S.size)

    def block_cost(self, m: int) -> float:
        """Multiply-adds of :meth:`block` for ``m`` free variables."""
        r, z = self.S.size, self.Z.size
        return float(m) * m * (r * z + r + 1) + float(m) * r * z

    def block(self, idx: np.ndarray) -> np.ndarray:
        """``Hess_d[idx, idx]`` exactly (``O(m^2 r (n-r))`` time, ``O(m r n)`` memory)."""
        idx = np.asarray(idx, dtype=np.intp)
        RS, WS = self.R[np.ix_(self.S, idx)], self.W[np.ix_(self.S, idx)]
        C = RS.T @ WS
        T = 2.0 * ((RS.T @ RS) * (WS.T @ WS) + C * C.T)
        T += self._mixed_gram(idx)
        return -self.FK[np.ix_(idx, idx)] - T / (8.0 * self.eta)

    def _mixed_gram(self, idx: np.ndarray) -> np.ndarray:
        """``2 sum_{j in S, k in Z} phi_jk (Q_i)_jk (Q_l)_jk`` over ``i, l`` in ``idx``."""
        m = idx.size
        out = np.zeros((m, m))
        if self.Z.size == 0 or self.S.size == 0:
            return out
        RZ, WZ = self.R[np.ix_(self.Z, idx)], self.W[np.ix_(self.Z, idx)]
        step = max(1, CHUNK_DOUBLES // max(1, m * self.Z.size))
        for j0 in range(0, self.S.size, step):
            J = self.S[j0:j0 + step]
            RJ, WJ = self.R[np.ix_(J, idx)], self.W[np.ix_(J, idx)]
            # G[i, j, k] = sqrt(2 phi_jk) (R_ji W_ki + W_ji R_ki), i in idx, j in J, k in Z
            G = RJ.T[:, :, None] * WZ.T[:, None, :] + WJ.T[:, :, None] * RZ.T[:, None, :]
            G *= np.sqrt(2.0 * self.phi[j0:j0 + step])[None, :, :]
            G = G.reshape(m, -1)
            out += G @ G.T
        return out

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``Hess_d v`` exactly: ``-(F o K) v - (dF[v] o K) d`` (``O(n^2 r)`` after ``eigh``).

        ``dF[v] = U (Phi o (U' dM[v] U)) U'`` needs only the kept rows ``U_S' dM[v] U`` of the
        rotated perturbation, since ``Phi`` vanishes on killed x killed.
        """
        v = np.asarray(v, float)
        if not np.any(v):
            return np.zeros_like(v)
        K, d, U = self.K, self.d, self.U
        E = (v[:, None] * K * d[None, :]) / (4.0 * self.eta)
        E = E + E.T  # dM[v] = (diag(v) K D + D K diag(v)) / (4 eta)
        US, UZ = U[:, self.S], U[:, self.Z]
        PS = US.T @ E  # r x n
        A = (PS @ US) @ US.T + ((PS @ UZ) * self.phi) @ UZ.T  # (Phi o P) rows S, back in U
        dF = US @ A
        dF = dF + dF.T - US @ ((PS @ US) @ US.T)  # the S x S block was counted twice
        return -self.FK @ v - (dF * K) @ d


class DenseHessian:
    """A dense Hessian matrix behind the interface of :class:`HessianOp` (``block``, ``matvec``)."""

    exact = True

    def __init__(self, H: np.ndarray):
        self.H = H

    def block(self, idx: np.ndarray) -> np.ndarray:
        """``H[idx, idx]``."""
        return self.H[np.ix_(idx, idx)]

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``H v``."""
        return self.H @ v


class HessianOp:
    """Hessian of the smooth part of ``h`` in ``x`` with ``d = x o y`` (``y=None``: ``d = x``).

    ``tau = 0``: the dense closed form (:func:`hessian_d`, ``O(n^2)``).  ``tau > 0``: blocks are
    exact (:class:`SpectralHessian`) when they cost at most ``budget`` multiply-adds
    (:meth:`SpectralHessian.block_cost`), else the approximate :func:`hessian_d` block
    (``O(m^2)`` after an ``O(n^2)`` set-up); ``matvec`` is always exact (``O(n^2 r)``).  Blocks
    are memoised by their index set (the Newton step asks for the same free set repeatedly).
    ``n_exact`` / ``n_approx`` count the blocks of each kind.
    """

    def __init__(self, K: np.ndarray, d: np.ndarray, F: np.ndarray, eta: float, tau: float,
                 y: np.ndarray | None = None, budget: float = EXACT_BUDGET):
        self.y, self.budget, self.tau = y, float(budget), float(tau)
        self.n_exact = self.n_approx = 0
        self._cache: dict[bytes, np.ndarray] = {}
        if tau == 0.0:
            self.dense, self.spec = hessian_d(K, d, F, eta), None
        else:
            self.dense, self.spec = None, SpectralHessian(K, d, F, eta, tau)
            self.K2, self.d = K * K, d
            self.s = self.K2 @ (d * d)

    def _block_d(self, idx: np.ndarray) -> np.ndarray:
        if self.spec is None:
            return self.dense[np.ix_(idx, idx)]
        if self.spec.block_cost(idx.size) <= self.budget:
            self.n_exact += 1
            return self.spec.block(idx)
        self.n_approx += 1
        d, sp = self.d[idx], self.spec
        return (-sp.FK[np.ix_(idx, idx)] - (np.diag(self.s[idx])
                + d[:, None] * self.K2[np.ix_(idx, idx)] * d[None, :]) / (4.0 * sp.eta))

    def block(self, idx: np.ndarray) -> np.ndarray:
        """``Hess_x[idx, idx]`` (``Hess_x = Y Hess_d Y``, ``Y = diag(y)``)."""
        idx = np.asarray(idx, dtype=np.intp)
        key = idx.tobytes()
        if key not in self._cache:
            B = self._block_d(idx)
            if self.y is not None:
                B = B * np.outer(self.y[idx], self.y[idx])
            self._cache[key] = B
        return self._cache[key]

    def matvec(self, v: np.ndarray) -> np.ndarray:
        """``Hess_x v`` (exact)."""
        v = np.asarray(v, float)
        if self.y is not None:
            v = self.y * v
        out = self.dense @ v if self.spec is None else self.spec.matvec(v)
        return out if self.y is None else self.y * out


def exact_hessian_d(K: np.ndarray, d: np.ndarray, F: np.ndarray, eta: float,
                    tau: float) -> np.ndarray:
    """The full exact ``Hess_d`` (``n x n``; ``O(n^4)`` worst case: for tests and small ``n``)."""
    return SpectralHessian(K, d, F, eta, tau).block(np.arange(K.shape[0]))
