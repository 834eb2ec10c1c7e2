"""The golden vectors' instances: one specification per corner of the problem space.

:func:`specs` lists them in order; :mod:`verification.golden` solves, certifies, writes and
checks them.
"""

from __future__ import annotations

import numpy as np

from .formats import kernel_from_X

__all__ = ["specs"]


def _gauss(X, sigma):
    return kernel_from_X(X, "gaussian", sigma=sigma)


def specs() -> list[tuple[str, str, dict]]:
    """List the specification of every golden vector, in order.

    Returns
    -------
    list of (str, str, dict)
        ``(name, corner description, instance fields)``; the fields are the keyword arguments
        of :func:`~verification.formats.save_instance` plus ``ext`` (``"npz"`` or ``"json"``).

    Examples
    --------
    >>> from verification.golden import specs
    >>> name, corner, fields = specs()[0]
    >>> name, fields["task"], fields["ext"]
    ('p1_basic', 'svm', 'npz')
    """
    rng = np.random.default_rng(20240501)
    X = rng.uniform(0, 1, (12, 2))
    y = np.where(X[:, 0] + X[:, 1] > 1, 1.0, -1.0)
    K = _gauss(X, 0.5)
    n = y.size
    out = []

    def add(name, what, ext="npz", **kw):
        out.append((name, what, dict(kw, ext=ext)))

    # ---- P1 (svm) ---------------------------------------------------------------------------
    add("p1_basic", "Gaussian kernel, paper-like tau = 0.01", task="svm", K=K, y=y, C=1.0,
        eta=10.0, tau=0.01)
    add("p1_json", "p1_basic written as JSON", ext="json", task="svm", K=K, y=y, C=1.0,
        eta=10.0, tau=0.01)
    add("p1_tau0", "tau = 0: F = 11' + Gamma (no eigendecomposition)", task="svm", K=K, y=y,
        C=1.0, eta=10.0, tau=0.0)
    # F(a) = 0 iff tau/2 >= lambda_max(11' + Gamma(a)) <= n + n C^2 lambda_max(K) / (4 eta)
    tau_zero = 3.0 * (n + n * 1.0 * float(np.linalg.eigvalsh(K)[-1]) / (4 * 10.0))
    add("p1_F_zero", "tau so large that F = 0 (F o K = 0: any balanced a at the box is optimal)",
        task="svm", K=K, y=y, C=1.0, eta=10.0, tau=tau_zero)
    add("p1_rank_one_F", "tau = 2n: F of rank one", task="svm", K=K, y=y, C=1.0, eta=100.0,
        tau=2.0 * n)
    yb = np.where(X[:, 0] + X[:, 1] > np.median(X[:, 0] + X[:, 1]), 1.0, -1.0)  # 6 and 6
    add("p1_all_at_C", "C = 1e-3, balanced classes: every point at the bound", task="svm", K=K,
        y=yb, C=1e-3, eta=1.0, tau=0.01)
    add("p1_C_tiny", "C = 1e-8", task="svm", K=K, y=y, C=1e-8, eta=1.0, tau=0.01)
    add("p1_C_huge", "C = 1e3: hard margin (max a = 0.003 C), the a* of every larger C; at "
        "C = 1e6 no double-precision gap formula resolves 1e-12 (C u / 1'a ~ 1e-10)", task="svm",
        K=K, y=y, C=1e3, eta=10.0, tau=0.01)
    add("p1_large_C", "C = 1e3, narrow kernel", task="svm", K=_gauss(X, 0.3), y=y, C=1e3,
        eta=5.0, tau=0.01)
    X2 = np.array([[0.0, 0.0], [1.0, 0.5]])
    add("p1_n2", "n = 2", task="svm", K=_gauss(X2, 0.5), y=np.array([1.0, -1.0]), C=1.0,
        eta=1.0, tau=0.01)
    v = X[:, 0] + 0.5
    add("p1_rank_one_K", "rank-one K = v v'", task="svm", K=np.outer(v, v), y=y, C=1.0, eta=1.0,
        tau=0.01)
    Kw = _gauss(X, 5.0)
    add("p1_near_singular_K", "nearly singular K (Gaussian, sigma = 5: cond > 1e12)", task="svm",
        K=Kw, y=y, C=1.0, eta=1.0, tau=0.01)
    add("p1_eta_1e-3", "eta = 1e-3 (F dominated by Gamma)", task="svm", K=K, y=y, C=1.0,
        eta=1e-3, tau=0.01)
    add("p1_eta_1e6", "eta = 1e6 (F close to 11')", task="svm", K=K, y=y, C=1.0, eta=1e6,
        tau=0.01)
    Xc = X - 0.5
    add("p1_linear", "linear kernel from X", task="svm", X=Xc, kernel="linear", y=y, C=1.0,
        eta=1.0, tau=0.01)
    add("p1_polynomial", "polynomial kernel from X (degree 3, gamma 1, coef0 1), JSON",
        ext="json", task="svm", X=Xc, kernel="polynomial", degree=3, gamma=1.0, coef0=1.0, y=y,
        C=1.0, eta=1.0, tau=0.01)
    add("p1_gaussian_gamma", "Gaussian kernel from X with gamma", task="svm", X=X,
        kernel="gaussian", gamma=2.0, y=y, C=1.0, eta=10.0, tau=0.01)
    Xd = np.concatenate([X[:6], X[:6]])
    yd = np.concatenate([y[:6], y[:6]])
    yd[0], yd[1], yd[6], yd[7] = 1.0, -1.0, 1.0, -1.0
    add("p1_duplicates", "duplicate points, some with opposite labels", task="svm",
        K=_gauss(Xd, 0.5), y=yd, C=2.0, eta=1.0, tau=0.0)
    yu = -np.ones(n)
    yu[int(np.argmax(X[:, 0] + X[:, 1]))] = 1.0
    add("p1_one_positive", "one point of class +1, eleven of class -1", task="svm", K=K, y=yu,
        C=1.0, eta=10.0, tau=0.01)
    Xi = np.round(4 * X).astype(np.int64)
    add("p1_integer_K", "integer-valued K (int64 dtype, linear kernel of integer data)",
        task="svm", K=Xi @ Xi.T + 1, y=y, C=0.1, eta=10.0, tau=0.01)
    # per-sample boxes 0 <= a_i <= C_i (format version 2): powers of two, exact in binary
    w = 2.0 ** np.array([-2, 1, 0, -1, 2, 0, -3, 1, -1, 0, 2, -2], dtype=float)
    add("p1_weighted", "per-sample boxes C_i = 2^k, k in -3..2 (libsvm's sample weights)",
        task="svm", K=K, y=y, C=w, eta=10.0, tau=0.01)
    cw = np.where(yu > 0, n / (2.0 * np.sum(yu > 0)), n / (2.0 * np.sum(yu < 0)))
    add("p1_class_weights", "one positive among twelve, class weights 'balanced' "
        "(C_i = n / (2 n_class)), JSON", ext="json", task="svm", K=K, y=yu, C=cw, eta=10.0,
        tau=0.01)

    # ---- P2 (svr) ---------------------------------------------------------------------------
    Xr = np.linspace(-1.0, 1.0, 12)[:, None]
    yr = np.sin(3.0 * Xr[:, 0])
    Kr = _gauss(Xr, 0.5)
    add("p2_basic", "smooth target, tau = 0.01", task="svr", K=Kr, y=yr, C=1.0, epsilon=0.05,
        eta=5.0, tau=0.01)
    add("p2_json", "p2_basic written as JSON", ext="json", task="svr", K=Kr, y=yr, C=1.0,
        epsilon=0.05, eta=5.0, tau=0.01)
    add("p2_inside_tube", "targets inside the tube: a* = 0", task="svr", K=Kr, y=0.01 * yr + 0.3,
        C=1.0, epsilon=0.1, eta=1.0, tau=0.0)
    add("p2_eps_huge", "epsilon = 1e3 >> |y|: a* = 0", task="svr", K=Kr, y=yr, C=1.0,
        epsilon=1e3, eta=5.0, tau=0.01)
    add("p2_eps_zero", "epsilon = 0", task="svr", K=Kr, y=yr, C=1.0, epsilon=0.0, eta=5.0,
        tau=0.01)
    add("p2_tau0", "tau = 0", task="svr", K=Kr, y=yr, C=1.0, epsilon=0.05, eta=5.0, tau=0.0)
    tau_zero_r = 3.0 * (n + n * float(np.linalg.eigvalsh(Kr)[-1]) / (4 * 5.0))
    add("p2_F_zero", "tau so large that F = 0", task="svr", K=Kr, y=yr, C=1.0, epsilon=0.05,
        eta=5.0, tau=tau_zero_r)
    add("p2_C_tiny", "C = 1e-8", task="svr", K=Kr, y=yr, C=1e-8, epsilon=0.05, eta=1.0,
        tau=0.01)
    add("p2_C_huge", "C = 1e6", task="svr", K=Kr, y=yr, C=1e6, epsilon=0.05, eta=5.0, tau=0.01)
    add("p2_n2", "n = 2", task="svr", K=_gauss(Xr[[0, -1]], 0.5), y=np.array([0.3, -0.4]), C=1.0,
        epsilon=0.05, eta=1.0, tau=0.01)
    add("p2_eta_1e-3", "eta = 1e-3", task="svr", K=Kr, y=yr, C=1.0, epsilon=0.05, eta=1e-3,
        tau=0.01)
    add("p2_eta_1e6", "eta = 1e6", task="svr", K=Kr, y=yr, C=1.0, epsilon=0.05, eta=1e6,
        tau=0.01)
    add("p2_linear", "linear kernel from X", task="svr", X=np.hstack([Xr, Xr**2]),
        kernel="linear", y=yr, C=1.0, epsilon=0.05, eta=1.0, tau=0.01)
    add("p2_polynomial", "polynomial kernel from X (degree 2), JSON", ext="json", task="svr",
        X=Xr, kernel="polynomial", degree=2, gamma=1.0, coef0=0.5, y=yr, C=1.0, epsilon=0.05,
        eta=1.0, tau=0.01)
    vr = Xr[:, 0] + 2.0
    add("p2_rank_one_K", "rank-one K = v v'", task="svr", K=np.outer(vr, vr), y=yr, C=1.0,
        epsilon=0.05, eta=1.0, tau=0.01)
    add("p2_weighted", "per-sample boxes C_i = 2^k, k in -3..2", task="svr", K=Kr, y=yr,
        C=w / 2.0, epsilon=0.05, eta=5.0, tau=0.01)

    # ---- P3 (decomposed) --------------------------------------------------------------------
    two = (X[:, 0] > 0.5).astype(np.int64)
    add("p3_two_clusters", "two clusters (Kbar block-diagonal, F(abar) is not)",
        task="decomposed", K=K, y=y, C=1.0, eta=10.0, labels=two)
    add("p3_json", "p3_two_clusters written as JSON", ext="json", task="decomposed", K=K, y=y,
        C=1.0, eta=10.0, labels=two)
    add("p3_one_class_per_cluster", "one class per cluster (no bias: allowed)",
        task="decomposed", K=K, y=y, C=1.0, eta=10.0, labels=(y > 0).astype(np.int64))
    add("p3_single_cluster", "one cluster: P3 on K itself", task="decomposed", K=K, y=y, C=1.0,
        eta=10.0, labels=np.zeros(n, np.int64))
    add("p3_singletons", "every point its own cluster (Kbar diagonal)", task="decomposed", K=K,
        y=y, C=1.0, eta=10.0, labels=np.arange(n, dtype=np.int64))
    add("p3_C_tiny", "C = 1e-8", task="decomposed", K=K, y=y, C=1e-8, eta=1.0, labels=two)
    add("p3_C_huge", "C = 1e3: no point at the bound (as p1_C_huge)", task="decomposed", K=K,
        y=y, C=1e3, eta=10.0, labels=two)
    add("p3_eta_1e-3", "eta = 1e-3", task="decomposed", K=K, y=y, C=1.0, eta=1e-3, labels=two)
    add("p3_eta_1e6", "eta = 1e6", task="decomposed", K=K, y=y, C=1.0, eta=1e6, labels=two)
    add("p3_n2", "n = 2, one point per cluster", task="decomposed", K=_gauss(X2, 0.5),
        y=np.array([1.0, -1.0]), C=1.0, eta=1.0, labels=np.array([0, 1]))
    add("p3_linear", "linear kernel from X", task="decomposed", X=Xc, kernel="linear", y=y,
        C=1.0, eta=1.0, labels=two)
    add("p3_near_singular_K", "nearly singular K (sigma = 5)", task="decomposed", K=Kw, y=y,
        C=1.0, eta=1.0, labels=two)
    add("p3_weighted", "per-sample boxes C_i = 2^k, k in -3..2", task="decomposed", K=K, y=y,
        C=w, eta=10.0, labels=two)
    return out
