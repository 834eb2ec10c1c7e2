"""Shared machinery of the claim checks: verdicts, instances, closed forms, counterexamples.

The closed forms here are written independently of ``dank_fast`` (dense ``numpy.linalg.eigh``)
so that a claim check does not rely only on the code under test:

* ``F(d) = J_{tau/2}(11' + diag(d) K diag(d) / (4 eta))`` (Lemma fbound), for any vector ``d``
  (``d = a * y`` for P1/P3, ``d = ah - ac`` for P2);
* ``h = lin + eta (n^2 - ||F||_F^2)`` (inner minimum in closed form, SPEC);
* ``grad_a h = 1 - Y (F o K) Y a`` (P1, eq. gradf), P2 partial gradients
  ``y - eps - (F o K) b`` and ``-y - eps + (F o K) b`` (derived; finite-difference tested).
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass, field

import numpy as np

STATUSES = ("HOLDS", "VIOLATED", "INCONCLUSIVE")
RTOL = 1e-8  # relative tolerance of every inequality check (relative to the magnitudes involved)


@dataclass
class Verdict:
    """Outcome of one claim check.

    ``worst_ratio`` is the largest ``lhs / rhs`` seen (``> 1 + tolerance`` means violated);
    ``where`` describes the instance that attained it.
    """

    claim: str
    status: str
    worst_ratio: float
    where: dict
    n_instances: int
    tolerance: float
    counterexample_path: str | None = None
    message: str = ""
    statement: str = ""
    details: dict = field(default_factory=dict)
    seconds: float = 0.0

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")

    def to_dict(self) -> dict:
        return _jsonable(dataclasses.asdict(self))


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (np.floating, float)):
        v = float(x)
        return v if np.isfinite(v) else str(v)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def violated(lhs: float, rhs: float, magnitude: float = 0.0, rtol: float = RTOL) -> bool:
    """``lhs > rhs`` beyond round-off: ``lhs - rhs > rtol * max(|lhs|, |rhs|, magnitude)``."""
    return (lhs - rhs) > rtol * max(abs(lhs), abs(rhs), abs(magnitude), np.finfo(float).tiny)


def ratio(lhs: float, rhs: float) -> float:
    if rhs > 0:
        return float(lhs / rhs)
    if lhs <= rhs:
        return 0.0 if rhs == 0 else float("-inf") if lhs < 0 else 0.0
    return float("inf")


# ----------------------------------------------------------------------------------------------
# closed forms (independent of dank_fast)
# ----------------------------------------------------------------------------------------------
def gamma(K, d, eta):
    return np.outer(d, d) * K / (4.0 * eta)


def F_of(K, d, eta, tau):
    """``J_{tau/2}(11' + Gamma(d))`` by a dense eigendecomposition."""
    M = 1.0 + gamma(K, d, eta)
    if tau == 0.0:
        return M
    lam, U = np.linalg.eigh(M)
    keep = np.maximum(lam - tau / 2.0, 0.0)
    F = (U * keep) @ U.T
    return 0.5 * (F + F.T)


def h_svm(K, y, a, eta, tau):
    n = len(y)
    F = F_of(K, a * y, eta, tau)
    return float(a.sum() + eta * (n * n - np.sum(F * F)))


def grad_svm(K, y, a, eta, tau):
    d = a * y
    F = F_of(K, d, eta, tau)
    return 1.0 - y * ((F * K) @ d)


def h_svr(K, y, ah, ac, eps, eta, tau):
    n = len(y)
    b = ah - ac
    F = F_of(K, b, eta, tau)
    return float(b @ y - eps * np.sum(ah + ac) + eta * (n * n - np.sum(F * F)))


def grad_svr(K, y, ah, ac, eps, eta, tau):
    b = ah - ac
    g = (F_of(K, b, eta, tau) * K) @ b
    return np.concatenate([y - eps - g, -y - eps + g])


def kappa(K):
    return float(np.max(np.abs(K)))


# ----------------------------------------------------------------------------------------------
# feasible sets
# ----------------------------------------------------------------------------------------------
def project_A(z, y, C):
    """Exact Euclidean projection onto ``{y'a = 0, 0 <= a <= C}`` (bisection on the shift)."""
    z = np.asarray(z, float)
    y = np.asarray(y, float)

    def phi(lam):
        return float(y @ np.clip(z - lam * y, 0.0, C))

    lo, hi = -(np.max(np.abs(z)) + C + 1.0), np.max(np.abs(z)) + C + 1.0
    for _ in range(200):  # phi is non-increasing in lam
        mid = 0.5 * (lo + hi)
        if phi(mid) > 0:
            lo = mid
        else:
            hi = mid
    a = np.clip(z - 0.5 * (lo + hi) * y, 0.0, C)
    # remove the residual of y'a exactly on free coordinates where possible
    r = float(y @ a)
    free = (a > 0) & (a < C)
    if free.any() and r != 0.0:
        a[free] -= r * y[free] / free.sum()
        a = np.clip(a, 0.0, C)
    return a


def project_svr(z, C):
    """Projection onto ``{0 <= ah, ac <= C, 1'(ah - ac) = 0}`` (``z = [ah; ac]``)."""
    n = z.size // 2
    u = np.concatenate([np.ones(n), -np.ones(n)])
    return project_A(z, u, C)


def random_feasible(rng, y, C, kind=None):
    """A random point of ``A`` of a random flavour (interior, vertex-like, sparse, full)."""
    n = y.size
    kind = kind or rng.choice(["uniform", "vertex", "sparse", "full"])
    if kind == "uniform":
        z = rng.uniform(0, C, n)
    elif kind == "vertex":
        z = C * (rng.random(n) < 0.5) + rng.normal(0, 0.05 * C, n)
    elif kind == "sparse":
        z = np.where(rng.random(n) < 0.2, rng.uniform(0, C, n), 0.0)
    else:
        z = np.full(n, C) + rng.normal(0, 0.01 * C, n)
    return project_A(z, y, C)


# ----------------------------------------------------------------------------------------------
# instances
# ----------------------------------------------------------------------------------------------
def gaussian_kernel(X, sigma):
    sq = np.sum(X * X, 1)
    D = np.maximum(sq[:, None] + sq[None, :] - 2 * X @ X.T, 0.0)
    return np.exp(-D / (2.0 * sigma**2))


def draw_instance(rng, n_range=(4, 24), task="svm", tau_large=True):
    """A random instance: data, kernel (Gaussian / scaled Gaussian / linear), C, eta, tau.

    C, eta, kernel width and scale are log-uniform over wide ranges; tau is 0, 0.01, or
    log-uniform up to ``3 n`` (so that the ``tau/2 > n`` regime of Lemma fbound is visited).
    """
    n = int(rng.integers(n_range[0], n_range[1] + 1))
    d = int(rng.integers(1, 6))
    X = rng.uniform(0, 1, (n, d))
    kind = rng.choice(["gaussian", "gaussian", "scaled", "linear"])
    sigma = float(2.0 ** rng.uniform(-3, 3))
    if kind == "linear":
        K = X @ X.T
        scale = 1.0
    else:
        K = gaussian_kernel(X, sigma)
        scale = float(10.0 ** rng.uniform(-1, 1)) if kind == "scaled" else 1.0
        K = scale * K
    K = 0.5 * (K + K.T)
    if task == "svr":
        y = X @ rng.normal(size=d) + 0.1 * rng.normal(size=n)
    else:
        if rng.random() < 0.5:  # labels aligned with the data (clusters = classes)
            y = np.where(X[:, 0] > np.median(X[:, 0]), 1.0, -1.0)
        else:
            y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        if np.all(y == y[0]):
            y[0] = -y[0]
    C = float(2.0 ** rng.uniform(-4, 5))
    eta = float(10.0 ** rng.uniform(-2, 3))
    u = rng.random()
    if u < 0.25:
        tau = 0.0
    elif u < 0.5 or not tau_large:
        tau = 0.01
    else:
        tau = float(np.exp(rng.uniform(np.log(1e-3), np.log(3.0 * n))))
    eps = float(10.0 ** rng.uniform(-3, -0.5))
    return dict(X=X, K=K, y=y, C=C, eta=eta, tau=tau, epsilon=eps, kernel=str(kind),
                sigma=sigma, kernel_scale=scale)


def structured_instances(rng, task="svm"):
    """Adversarial data: two far-apart clusters, labels alternating inside each cluster, so
    that ``Y K Y`` has a large eigenvalue orthogonal to ``y`` (the direction the constraint
    y'a = 0 leaves free); kernel scales 1 (Gaussian) and 3, 10 (non-normalised)."""
    out = []
    for s in (1.0, 3.0, 10.0):
        n = int(rng.integers(3, 7)) * 2
        X = np.concatenate([rng.normal(0, 0.01, (n // 2, 2)), 5 + rng.normal(0, 0.01, (n // 2, 2))])
        K = s * gaussian_kernel(X, 0.5)
        if task == "svr":
            y = rng.normal(size=n)
        else:
            y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        for eta in (0.1, 1e4):
            out.append(dict(X=X, K=0.5 * (K + K.T), y=y, C=1.0, eta=eta, tau=0.01, epsilon=0.01,
                            kernel="scaled" if s != 1.0 else "gaussian", sigma=0.5,
                            kernel_scale=s))
    return out


def where_of(inst, **extra):
    w = {k: inst[k] for k in ("C", "eta", "tau", "kernel", "sigma", "kernel_scale") if k in inst}
    w["n"] = int(len(inst["y"]))
    w.update(extra)
    return _jsonable(w)


# ----------------------------------------------------------------------------------------------
# counterexamples
# ----------------------------------------------------------------------------------------------
COUNTEREXAMPLE_VERSION = 1


def save_counterexample(out_dir, claim, arrays: dict, params: dict) -> str | None:
    """Write ``<out_dir>/counterexample_<claim>.npz`` (plain arrays only: allow_pickle=False)."""
    if out_dir is None:
        return None
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"counterexample_{claim.replace('[', '_').replace(']', '')}.npz")
    payload = {k: np.asarray(v, dtype=float) for k, v in arrays.items()}
    payload["claim"] = np.array(claim)
    payload["format_version"] = np.array(COUNTEREXAMPLE_VERSION)
    payload["params_json"] = np.array(json.dumps(_jsonable(params)))
    np.savez(path, **payload)
    return path


class Tracker:
    """Keeps the worst ratio seen and the smallest violating instance."""

    def __init__(self, claim, rtol=RTOL):
        self.claim = claim
        self.rtol = rtol
        self.worst = -np.inf
        self.where = {}
        self.n = 0
        self.best_cex = None  # (size, arrays, params, where)
        self.worst_pos = -np.inf  # worst ratio among evaluations with a positive rhs
        self.where_pos = {}
        self.t0 = time.perf_counter()

    def record(self, lhs, rhs, magnitude, where, arrays=None, params=None, size=None):
        self.n += 1
        r = ratio(lhs, rhs)
        if rhs > 0 and r > self.worst_pos:
            self.worst_pos, self.where_pos = r, dict(where, lhs=float(lhs), rhs=float(rhs))
        if r > self.worst or not self.where:
            self.worst, self.where = r, dict(where, lhs=float(lhs), rhs=float(rhs))
        if violated(lhs, rhs, magnitude, self.rtol) and arrays is not None:
            size = size if size is not None else len(where and [0])
            if self.best_cex is None or size < self.best_cex[0] or (
                size == self.best_cex[0] and r > ratio(*self.best_cex[4])
            ):
                self.best_cex = (size, arrays, params, dict(where), (lhs, rhs))
        return r

    def verdict(self, statement, out_dir=None, message="", inconclusive=None, details=None):
        path = None
        details = dict(details or {})
        if self.worst_pos > -np.inf and self.worst_pos != self.worst:
            details["worst_ratio_positive_rhs"] = self.worst_pos
            details["where_positive_rhs"] = self.where_pos
            message = (message + f" Worst ratio among instances with rhs > 0: "
                       f"{self.worst_pos:.4g}.").strip()
        if self.best_cex is not None:
            status = "VIOLATED"
            size, arrays, params, where, (lhs, rhs) = self.best_cex
            path = save_counterexample(out_dir, self.claim, arrays, params)
            message = (f"smallest counterexample (n={size}): lhs={lhs:.6g} > rhs={rhs:.6g} "
                       f"(ratio {ratio(lhs, rhs):.6g}). " + message)
            details = dict(details or {}, counterexample_where=where)
        elif inconclusive:
            status = "INCONCLUSIVE"
            message = inconclusive + (" " + message if message else "")
        else:
            status = "HOLDS"
        return Verdict(claim=self.claim, status=status, worst_ratio=float(self.worst),
                       where=_jsonable(self.where), n_instances=self.n, tolerance=self.rtol,
                       counterexample_path=path, message=message, statement=statement,
                       details=_jsonable(details or {}),
                       seconds=time.perf_counter() - self.t0)
