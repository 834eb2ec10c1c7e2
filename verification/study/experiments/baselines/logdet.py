"""Kernel learning with the LogDet divergence (Jain, Kulis, Davis and Dhillon, JMLR 2012).

The paper's LogDet baseline (Table 2): learn a kernel matrix ``K`` close to the Gaussian
``K0`` in the LogDet divergence ``D_ld(K, K0)`` subject to pairwise constraints on the kernel
distance ``d_K(i, j) = K_ii + K_jj - 2 K_ij = (e_i - e_j)' K (e_i - e_j)``: ``d_K <= u`` for
pairs of the same class, ``d_K >= l`` for pairs of different classes, with slack weighted by
``gamma``. Solved by cyclic Bregman projections (Jain et al. 2012, Algorithm 1, the kernelised
ITML of Davis et al. 2007), each a rank-one update
``K <- K + beta K (e_i - e_j)(e_i - e_j)' K``, with the slack update of ITML's reference code
(also metric-learn's): ``alpha = min(lambda_c, delta gamma/(gamma + 1) (1/p - 1/xi_c))``,
``beta = delta alpha / (1 - delta alpha p)``, ``xi_c <- 1 / (1/xi_c + delta alpha / gamma)``.

Representer form (Jain et al. 2012, Theorem 1): ``K = K0 + K0 S K0`` with ``S`` supported on
the ``r`` constrained points ``P``. This module tracks ``S`` itself: with ``v = K z`` and
``z = e_i - e_j``, ``v = K0 w`` for ``w = z + S K0 z``, so the update is ``S <- S + beta w w'``.
No ``K0^{-1}`` is ever formed or solved (``S = K0^{-1} (K - K0) K0^{-1}`` holds by
construction; no regularisation of a singular ``K0`` is needed). Every projection costs
``O(r^2)`` on the ``r x r`` block ``K_PP``; the out-of-sample kernel is
``K(x, x') = k0(x, x') + k0(x, X_P) S k0(X_P, x')``.

No maintained Python package implements kernel LogDet learning (metric-learn's ITML is the
linear Mahalanobis version; with the linear kernel the two coincide, see the tests).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC
from sklearn.utils.validation import check_is_fitted, validate_data

from ..cv import gamma_of

__all__ = ["MAX_CONSTRAINTS", "LogDetKernelSVC", "logdet_learn", "sample_constraints"]

#: cap of the default number of constraints (glass, 6 classes: 720 -> 200; a cost bound)
MAX_CONSTRAINTS = 200


def sample_constraints(y, n_constraints: int, rng: np.random.Generator):
    """Random similar / dissimilar pairs (ITML's convention: half of each).

    Parameters
    ----------
    y : ndarray of shape (n,)
    n_constraints : int
    rng : numpy Generator

    Returns
    -------
    pairs : ndarray of shape (m, 2) of int
    delta : ndarray of shape (m,)
        ``+1`` same class (``d_K <= u``), ``-1`` different classes (``d_K >= l``).
    """
    y = np.asarray(y)
    pairs, delta = [], []
    idx = np.arange(y.size)
    for k in range(n_constraints):
        want_same = k % 2 == 0
        for _ in range(100):  # rejection: a class of one point has no similar partner
            i = int(rng.integers(y.size))
            cand = idx[(y == y[i]) & (idx != i)] if want_same else idx[y != y[i]]
            if cand.size:
                pairs.append((i, int(rng.choice(cand))))
                delta.append(1.0 if want_same else -1.0)
                break
    if not pairs:
        raise ValueError("y: no constraint can be formed (need two classes)")
    return np.asarray(pairs, dtype=np.intp), np.asarray(delta)


def logdet_learn(K0_PP, pairs, delta, bounds, gamma: float, *, tol: float = 1e-3,
                 max_sweeps: int = 1000):
    """Cyclic LogDet (Bregman) projections on the block ``K0_PP`` of the constrained points.

    Parameters
    ----------
    K0_PP : ndarray of shape (r, r)
        Initial kernel on the constrained points (PSD; not modified).
    pairs : ndarray of shape (m, 2)
        Indices into ``K0_PP``.
    delta : ndarray of shape (m,)
        ``+1`` for ``d_K <= bound``, ``-1`` for ``d_K >= bound``.
    bounds : ndarray of shape (m,)
        Target distances (``u`` or ``l``), > 0.
    gamma : float
        Slack weight (> 0; ``inf`` = hard constraints).
    tol, max_sweeps :
        Stop when ``sum |lambda - lambda_old| / (||lambda|| + ||lambda_old||) < tol``
        (ITML's rule) or after ``max_sweeps`` sweeps.

    Returns
    -------
    S : ndarray of shape (r, r)
        ``K_PP = K0_PP + K0_PP S K0_PP``.
    K_PP : ndarray of shape (r, r)
        The learned kernel on the constrained points.
    info : dict
        ``sweeps``, ``converged``.

    Cost: ``O(m r^2)`` time per sweep, ``O(r^2)`` memory.
    """
    if not gamma > 0:
        raise ValueError(f"gamma must be > 0, got {gamma}")
    K = np.array(K0_PP, dtype=np.float64)
    S = np.zeros_like(K)
    lam = np.zeros(len(pairs))
    xi = np.array(bounds, dtype=np.float64)
    hard = bool(np.isinf(gamma))
    gproj = 1.0 if hard else gamma / (gamma + 1.0)
    delta = np.asarray(delta, dtype=np.float64).tolist()
    converged, sweeps = False, 0
    while sweeps < max_sweeps and not converged:
        sweeps += 1
        lam_old = lam.copy()
        for c, (i, j) in enumerate(pairs.tolist()):
            p = K[i, i] + K[j, j] - 2.0 * K[i, j]
            if p <= 1e-12:  # identical points: the constraint is void
                continue
            dc = delta[c]
            alpha = min(lam[c], dc * gproj * (1.0 / p - 1.0 / xi[c]))
            if alpha == 0.0:  # satisfied and inactive: the projection is the identity
                continue
            beta = dc * alpha / (1.0 - dc * alpha * p)
            if not hard:
                xi[c] = 1.0 / (1.0 / xi[c] + dc * alpha / gamma)
            lam[c] -= alpha
            v = K[i] - K[j]  # K z (K symmetric: rows are columns)
            w = (K0_PP[i] - K0_PP[j]) @ S  # S K0 z; w + z satisfies K z = K0 (w + z)
            w[i] += 1.0
            w[j] -= 1.0
            K += beta * np.outer(v, v)
            S += beta * np.outer(w, w)
        norm = np.linalg.norm(lam) + np.linalg.norm(lam_old)
        converged = bool(norm == 0 or np.abs(lam - lam_old).sum() / norm < tol)
    return S, K, dict(sweeps=sweeps, converged=converged)


class LogDetKernelSVC(ClassifierMixin, BaseEstimator):
    """SVM on the kernel learned from the Gaussian ``K0`` by LogDet projections.

    Parameters
    ----------
    sigma : float
        Width of ``K0 = exp(-||x - x'||^2 / (2 sigma^2))``.
    C : float
        The SVM's penalty (:class:`sklearn.svm.SVC`, precomputed kernel, one-vs-one).
    gamma : float
        LogDet slack weight (``inf``: hard constraints).
    n_constraints : int or None
        Pairs sampled (None: ITML's ``20 c^2`` for ``c`` classes, at most ``MAX_CONSTRAINTS``).
    percentiles : (float, float)
        ``u`` and ``l``: these percentiles of the pairwise ``K0`` distances (ITML: 5, 95).
    random_state : int
        Seed of the constraint sampling.
    tol, max_sweeps : see :func:`logdet_learn`.

    Fit costs ``O(n^2 (d + r))`` time and ``O(n^2)`` memory (the SVM's kernel) with ``r <= 2m``
    constrained points; predicting ``q`` points costs ``O(q n (d + r))``.
    """

    def __init__(self, sigma=1.0, C=1.0, gamma=1.0, n_constraints=None, percentiles=(5, 95),
                 random_state=0, tol=1e-3, max_sweeps=100):
        self.sigma = sigma
        self.C = C
        self.gamma = gamma
        self.n_constraints = n_constraints
        self.percentiles = percentiles
        self.random_state = random_state
        self.tol = tol
        self.max_sweeps = max_sweeps

    def _check_params(self):
        for name in ("sigma", "C", "gamma"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not v > 0 or (name != "gamma"
                                                                and not np.isfinite(v)):
                raise ValueError(f"{name} must be a number > 0, got {v!r}")

    def fit(self, X, y):
        """Sample the constraints, learn ``S`` (eq. of the representer form), fit the SVM."""
        self._check_params()
        X, y = validate_data(self, X, y)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError("y: need at least two classes")
        m = self.n_constraints or min(20 * self.classes_.size ** 2, MAX_CONSTRAINTS)
        rng = np.random.default_rng(self.random_state)
        pairs, delta = sample_constraints(y, m, rng)
        g = gamma_of(self.sigma)
        K0 = rbf_kernel(X, X, gamma=g)
        tri = 2.0 - 2.0 * K0[np.triu_indices_from(K0, 1)]
        u, lo = np.percentile(tri, self.percentiles)
        P, local = np.unique(pairs, return_inverse=True)
        local = local.reshape(pairs.shape)
        bounds = np.where(delta > 0, max(u, 1e-12), lo)
        S, _, self.info_ = logdet_learn(K0[np.ix_(P, P)], local, delta, bounds, self.gamma,
                                        tol=self.tol, max_sweeps=self.max_sweeps)
        if not np.all(np.isfinite(S)):
            raise FloatingPointError(f"LogDet projections diverged (gamma = {self.gamma}): "
                                     "S is not finite")
        # K0[P, :] kept (|P| x n, |P| <= 2 MAX_CONSTRAINTS): every prediction needs it
        self.X_fit_, self.P_, self.S_, self.K0P_ = X, P, S, K0[P]
        self.svc_ = SVC(kernel="precomputed", C=self.C).fit(self._kernel(K0), y)
        return self

    def _kernel(self, K0x):
        """Learned kernel from ``K0x = k0(., X_fit)``: ``K0x + K0x[:, P] S K0[P, :]``."""
        return K0x + (K0x[:, self.P_] @ self.S_) @ self.K0P_

    def _learned_kernel(self, X):
        """The learned kernel between new points ``X`` and the training points."""
        check_is_fitted(self, "svc_")
        X = validate_data(self, X, reset=False)
        return self._kernel(rbf_kernel(X, self.X_fit_, gamma=gamma_of(self.sigma)))

    def decision_function(self, X):
        K = self._learned_kernel(X)  # checks the fit first (NotFittedError)
        return self.svc_.decision_function(K)

    def predict(self, X):
        K = self._learned_kernel(X)
        return self.svc_.predict(K)
