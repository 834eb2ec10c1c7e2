"""P2, DANK in SVR (eq. (22)): ``SVRProblem`` and ``solve_svr``.

    max_{ah, ac} min_{F PSD}  -1/2 d'(F o K)d + y'd - eps 1'(ah + ac) + R(F),   d = ah - ac,
    0 <= ah, ac <= C,   1'(ah - ac) = 0.

The bias constraint is the standard epsilon-SVR one, ``1'(ah - ac) = 0`` (the paper
prints ``(ah - ac)'y = 0``; docs/MATH.md §2). The variable is ``z = [ah; ac]`` (length 2n).

Gradient (derived here; Proposition 9 has slips)
-----------------------------------------------------------
``h(z) = lin(z) + eta (n^2 - ||F(d)||_F^2)`` with ``lin = y'd - eps 1'(ah + ac)`` and
``F(d) = J_{tau/2}(11' + Gamma(d))``, ``Gamma = diag(d) K diag(d) / (4 eta)``. By the
envelope theorem (the inner minimum over F is attained at F(d), and ``H`` is smooth in
``d`` for fixed F), ``grad_d [min_F H] = -(F o K) d =: -f0``. With ``dd/dah = I`` and
``dd/dac = -I``:

    grad_ah h = y - eps 1 - f0,        grad_ac h = -y - eps 1 + f0.

The paper prints ``-eps I - (ah - ac) F o K + y`` and ``-eps I - (ah - ac) F o K - y``:
``I`` should be the vector ``1``, the product should be the matrix-vector product
``(F o K)(ah - ac)``, and in the second line the sign of the ``(F o K)`` term is wrong
(it must be ``+``, since ``d`` depends on ``ac`` with a minus sign). The tests check the
gradient against central finite differences of ``h``.

Lipschitz constant (Theorem 10)
-------------------------------------
The theorem states ``||grad h(z1) - grad h(z2)|| <= 2L (||ah1 - ah2|| + ||ac1 - ac2||)`` with
``L = 2 kappa (n + 9 n C^2 ||K||_F / (4 eta))``, and Algorithm 2 steps by ``1/(2L)``
(theta) and ``1/(4L)`` (beta). The generic Algorithm 1 implementation
(:mod:`dank_fast._paper`) steps by ``1/L'`` and ``1/(2 L')``; it is driven with
``L' = 2L`` so that the steps are exactly the printed ones
(:meth:`SVRProblem.lipschitz_paper` returns ``2L``; ``result.extra["L_theorem"]`` is ``L``).
"""

from __future__ import annotations

import math
import time

import numpy as np

from ._checked import CheckedKernel, kernel_data_of
from ._libsvm import svr_dual
from ._methods import METHODS, paper_variant, run_method
from ._primal import best_bias
from ._problem import SVMProblem, _lambda_max
from ._result import DANKResult
from ._scaling import canonical_factor as _canonical_factor
from ._scaling import recertify_zero_kernel
from ._scaling import unscale as _unscale
from ._validation import (
    FEASIBILITY_RTOL,
    box_max,
    check_box,
    check_finite_array,
    check_nonnegative,
    check_positive,
    check_representable,
    check_solver_options,
    check_targets,
    feasibility_violation,
)
from .certificate import Certificate, certify_svr, svr_certificate, svr_scale
from .projection import _project_core, _restore_equality, project_paper

__all__ = ["SVRProblem", "solve_svr", "check_targets", "METHODS"]


class SVRProblem(SVMProblem):
    """P2 for the generic solvers: ``z = [ah; ac]``, ``d = ah - ac``.

    ``C`` a scalar or ``n`` per-sample bounds; :attr:`C` is then the box of ``z`` (length
    ``2n``: ``C_i`` bounds both ``ah_i`` and ``ac_i``) and :attr:`C_samples` the ``n`` bounds
    of the certificate's loss ``sum_i C_i max(0, |y_i - f_i| - eps)``.
    """

    kind = "svr"

    def __init__(self, K, y, C, eta: float, tau: float, epsilon: float, route: str = "auto"):
        box = C if np.ndim(C) == 0 else np.concatenate([C, C])
        super().__init__(K, y, box, eta, tau, route)
        self.C_samples = C
        self.epsilon = epsilon
        self.n = y.size
        self.dim = 2 * y.size
        self.s = np.concatenate([np.ones(self.n), -np.ones(self.n)])

    @property
    def eq_vector(self) -> np.ndarray:
        """Normal ``[1; -1]`` of the bias constraint ``1'(ah - ac) = 0``."""
        return self.s

    def d_coordinates(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``z = [ah; ac]``: coordinate ``i`` moves ``d_(i mod n)`` with sign +1 (ah) or -1 (ac)."""
        return idx % self.n, self.s[idx]

    def normalize(self, z: np.ndarray) -> np.ndarray:
        """Remove ``min(ah_i, ac_i)`` from both: same ``d``, still feasible, ``lin`` not lower."""
        n = self.n
        m = np.minimum(z[:n], z[n:])
        if not np.any(m > 0):
            return z
        return z - np.concatenate([m, m])

    def project(self, z: np.ndarray) -> np.ndarray:
        """Projection onto ``{0 <= ah, ac <= C, 1'(ah - ac) = 0}`` that is always feasible.

        :func:`dank_fast.project_A` (exact), then :func:`_restore_equality` when its result
        misses the equality constraint (gradient steps much longer than ``C``, see there).
        """
        return _restore_equality(_project_core(z, self.s, self.C), z, self.s, self.C)

    def project_paper(self, z: np.ndarray) -> np.ndarray:
        """The paper's projection (clip, then shift along the constraint normal ``[1; -1]``)."""
        return project_paper(z, self.s, self.C)

    def d_of(self, z: np.ndarray) -> np.ndarray:
        return z[: self.n] - z[self.n :]

    def lin(self, z: np.ndarray) -> float:
        return float(self.y @ self.d_of(z)) - self.epsilon * float(z.sum())

    def grad(self, z: np.ndarray, f0: np.ndarray) -> np.ndarray:
        """``[y - eps - f0; -y - eps + f0]`` with ``f0 = (F o K)(ah - ac)`` (module doc)."""
        r = self.y - f0
        return np.concatenate([r - self.epsilon, -r - self.epsilon])

    def certify(self, ev) -> Certificate:
        """Certificate at ``ev.z`` with the inner solution ``ev`` has, as for P1: the bracket is
        rigorous for a Ritz ``F^`` too (its ``eta * excess`` is part of the gap, see
        :mod:`dank_fast.certificate`), and no dense decomposition is needed for it.
        """
        return certify_svr(
            self.kd, self.y, ev.z, self.C_samples, self.eta, self.tau, self.epsilon, ev.inner,
            ev.f0,
        )

    def quick_rel_gap(self, ev) -> float:
        Cs = self.C_samples
        weights, factor = (None, Cs) if np.ndim(Cs) == 0 else (Cs, 1.0)
        _, _, loss = best_bias(ev.f0, self.y, eps=self.epsilon, weights=weights)
        d = self.d_of(ev.z)
        q = float(d @ ev.f0)
        gap = q + factor * loss - self.lin(ev.z)
        scale = svr_scale(d, self.y, float(ev.z.sum()), q, Cs, self.epsilon)
        return gap / scale if scale > 0 else (0.0 if gap <= 0 else float("inf"))

    def bias(self, ev, cert: Certificate) -> float:
        """KKT bias: mean of ``y_i -+ eps - f0_i`` over free ``ah_i`` / ``ac_i`` (``0 < ah_i <
        C_i``); else the certificate's exact best bias."""
        n, C = self.n, self.C_samples
        margin = 1e-8 * C
        ah, ac = ev.z[:n], ev.z[n:]
        r = self.y - ev.f0
        free_h = (ah > margin) & (ah < C - margin)
        free_c = (ac > margin) & (ac < C - margin)
        vals = np.concatenate([r[free_h] - self.epsilon, r[free_c] + self.epsilon])
        if vals.size == 0:
            return cert.bias
        return float(np.mean(vals))

    def lipschitz_theorem(self) -> float:
        """``L = 2 kappa (n + 9 n C^2 ||K||_F / (4 eta))``, Theorem 10."""
        n, K, C = self.n, self.kd.K, float(np.max(self.C))  # per-sample boxes: max C
        return 2 * self.kd.kappa * (n + 9 * n * C * C * np.linalg.norm(K) / (4 * self.eta))

    def lipschitz_paper(self) -> float:
        """``2L`` (Theorem 10's bound), so the generic Algorithm 1 steps ``1/(2L)``, ``1/(4L)``.

        ``K = 0`` gives ``L = 0`` (``kappa = 0``) and the steps ``1/(2L) = inf``. Then
        ``f0 = (F o K) d = 0``, ``F = J_{tau/2}(11')`` does not depend on ``d``, and ``h`` is
        affine with the constant gradient ``g = [y - eps; -y - eps]``: its gradient is
        Lipschitz with constant 0, so every ``L > 0`` satisfies the theorem. We take
        ``L = max|g| / (2^20 C)``: a step ``g / L`` of ``2^20 C`` per coordinate, longer than the
        diameter ``C sqrt(2n)`` of the feasible set (for ``n < 2^39``), so one projected step
        reaches the face of ``A`` that maximises the affine ``h`` (the projection of
        ``z + t g`` onto that face does not change once ``t`` is large), while ``z + g / L``
        keeps ``C``'s digits to ``2^20 u ~ 2e-10`` relative (:func:`dank_fast.project_A` is
        exact at that scale). ``g = 0`` (``y = 0``, ``eps = 0``: ``h`` constant) takes
        ``L = 1 / C``.
        """
        L = 2.0 * self.lipschitz_theorem()
        if L > 0.0:
            return L
        g = float(np.max(np.abs(self.y))) + self.epsilon
        C = float(np.max(self.C))
        return g / (2.0**20 * C) if g > 0.0 else 1.0 / C

    def lipschitz_pgm(self) -> float:
        """Analogue of eq. (17) for ``z``: ``2 (n - tau/2 + n C^2 lambda_max(K) / (4 eta))``.

        The factor 2 is ``||[I, -I]||^2`` (``d = ah - ac``); the paper gives no pgm rule for P2.
        """
        lmax = _lambda_max(self.kd)
        C = float(np.max(self.C))
        return 2.0 * (self.n - self.tau / 2 + self.n * C * C * lmax / (4 * self.eta))


def _split(res: DANKResult, n: int) -> DANKResult:
    """Turn the generic result (alpha = z) into the SVR one (alpha = ah - ac)."""
    z = res.alpha
    res.alpha_hat, res.alpha_check = z[:n].copy(), z[n:].copy()
    res.extra["alpha_hat"], res.extra["alpha_check"] = res.alpha_hat, res.alpha_check
    res.extra["z"] = z
    res.alpha = z[:n] - z[n:]
    return res


def solve_svr(
    K,
    y,
    *,
    C,
    epsilon: float,
    eta: float,
    tau: float = 0.01,
    method: str = "auto",
    tol: float = 1e-6,
    max_iter: int | None = None,
    alpha0=None,
    check_psd: bool = True,
    eig_route: str = "auto",
    **options,
) -> DANKResult:
    """Solve DANK in SVR, eq. (22) (bias constraint ``1'(ah - ac) = 0``), certified.

    Parameters
    ----------
    K : array_like of shape (n, n)
        PSD initial kernel, checked as docs/validity.md says (``check_psd=False`` skips only
        the PSD test; the matrix :func:`dank_fast.compute_kernel` returns carries a proof and
        is not checked, rule 6).
    y : array_like of shape (n,)
        Finite real targets. Constant targets are allowed (not degenerate for this
        problem): every target then fits in the tube, ``ah = ac = 0`` is optimal and the
        bias is the constant.
    C : float > 0, or array_like of shape (n,)
        Box ``0 <= ah_i, ac_i <= C``; a vector of ``n`` finite per-sample bounds ``C_i > 0``
        gives the box-weighted problem (libsvm's ``sample_weight`` times ``C``, docs/MATH.md
        section 14).
    epsilon : float >= 0
        Width of the epsilon-insensitive tube.
    eta : float > 0
    tau : float >= 0, default 0.01
    method : {"auto", "accelerated", "newton", "paper", "paper-monotone", "pgm"}
        ``"auto"`` (default): ``"newton"`` started from the plain SVR's dual solution ``d = ah
        - ac``, which it computes itself with scikit-learn's libsvm (``kernel="precomputed"``,
        same ``C`` and ``epsilon``, ``tol`` = 1e-4) unless ``alpha0`` is given; the SVR fit is
        included in ``time`` and reported in ``extra["warm_start"]`` (``"svr"`` or
        ``"given"``). ``"newton"``: projected Newton on the free set with accelerated
        hand-overs (:mod:`dank_fast._newton`), from ``alpha0`` or from zero; the most robust
        method measured (the conformance comparison, reproduction/conformance: 30 of 30 P2
        instances certified, accelerated 28).
        ``"accelerated"``: accelerated projected gradient (backtracking, restart, exact
        projection), stops on the certified relative gap. ``"paper"``: Algorithm 2
        as printed (L of Theorem 10, steps ``1/(2L)`` and ``1/(4L)``,
        ``t_max = 2000``, ``eps = 1e-4``; options ``projection``, ``beta_sign`` as
        :func:`dank_fast.solve_svm`).
    tol : float, default 1e-6
        Target certified relative gap ``gap / max(|d'y| + eps 1'(ah + ac) + d'(F o K)d,
        C (max y - min y) / 2)`` (:func:`dank_fast.certificate.svr_scale`: every term in the
        units of the objective).
    max_iter : int, optional
        The method's outer iterations, the unit of ``result.n_iter``: Newton steps for
        ``"auto"``/``"newton"`` (default 100; the accelerated fallback has its own budget, the
        option ``fallback_iter``, default 5000), iterations for ``"accelerated"`` (default
        5000) and the paper's methods (default 2000).
    alpha0 : array_like of shape (n,) or (2n,), optional
        Warm start: ``d`` (split as ``ah = max(d, 0)``, ``ac = max(-d, 0)``) or ``[ah; ac]``;
        projected onto the feasible set. Newton starts from it or, where that has a higher
        ``h``, from a point of its ray (docs/MATH.md section 5.4), and for ``tau > 0`` first
        solves the relaxed problem ``tau = 0`` from there where a bound proves that solution
        nearer the optimum (section 5.5).

    Returns
    -------
    DANKResult
        ``alpha = ah - ac`` (the decision function is ``f = (F o K) alpha + bias``),
        ``alpha_hat``, ``alpha_check`` (also in ``extra``) and ``extra["z"] = [ah; ac]``: exactly
        the point the certificate (``lower``, ``upper``, ``gap``) is computed at, feasible to
        ``1e-9 C sqrt(n)``. It is *not* normalised: ``ah_i`` and ``ac_i`` may both be positive
        (typically after ``method="paper"``). ``extra["overlap"] = sum_i min(ah_i, ac_i)``:
        removing the overlap from both keeps ``d`` and ``F`` (so ``upper``) and raises the
        lower bound by exactly ``2 epsilon overlap`` (``lin = y'd - eps 1'(ah + ac)``); a
        certificate of the normalised point (as ``dank_ref.certificate.svr_certificate``
        computes) is therefore tighter but certifies a different point.
        ``extra["rescale"] = c`` when the canonical instance was solved (see Notes).

    Raises
    ------
    TypeError, ValueError
        Invalid input (docs/validity.md), including an instance outside the representable
        range (:func:`dank_fast._validation.check_representable`):
        ``1e-100 <= C max|K| n <= 1e100`` and ``1e-100 <= eta / (C^2 max|K|) <= 1e100``.

    Notes
    -----
    The problem is solved in the canonical form ``(cK, C/c, eta/c)`` with the power of two
    ``c`` of :func:`_canonical_factor` (``c = 1`` for a kernel whose largest entry is 1): by
    the exact law ``v*(K, C, eta) = c v*(cK, C/c, eta/c)`` (``y``, ``epsilon``, ``tau``
    unchanged; substitute ``a = c a''`` in eq. (22)) the values, gaps and dual variables are
    multiplied back by ``c`` and ``F``, the bias and all relative gaps are unchanged; with
    ``c`` a power of two these products are exact. The paper's stopping rule
    ``||a_t - a_{t-1}|| <= eps`` is applied to the original ``a``. A ``callback`` receives the
    original ``z`` and the evaluation of the canonical instance.

    Examples
    --------
    >>> import numpy as np
    >>> from dank_fast import solve_svr, compute_kernel
    >>> X = np.linspace(-1, 1, 30)[:, None]; y = np.sin(3 * X[:, 0])
    >>> res = solve_svr(compute_kernel(X, sigma=0.5), y, C=1.0, epsilon=0.05, eta=10.0)
    >>> res.status, bool(res.lower <= res.upper), abs(float(res.alpha.sum())) < 1e-9
    ('converged', True, True)
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    kd = kernel_data_of(K, check_psd)
    n = kd.n
    y = check_targets(y, n)
    C = check_box(C, n)
    epsilon = check_nonnegative(epsilon, "epsilon")
    eta = check_positive(eta, "eta")
    tau = check_nonnegative(tau, "tau")
    tol, max_iter = check_solver_options(tol, max_iter, eig_route)
    check_representable(C, eta, kd.kappa, n)
    alpha0 = _check_start(alpha0, n)
    t0 = time.perf_counter()
    if kd.kappa == 0.0 and eta != box_max(C):  # K = 0: a* does not depend on eta
        res = solve_svr(kd, y, C=C, epsilon=epsilon, eta=box_max(C), tau=tau, method=method,
                        tol=tol, max_iter=max_iter, alpha0=alpha0, check_psd=False,
                        eig_route=eig_route, **options)
        cert = svr_certificate(kd.K, y, res.extra["alpha_hat"], res.extra["alpha_check"], C=C,
                               epsilon=epsilon, eta=eta, tau=tau)
        res = recertify_zero_kernel(res, cert, eta, tol)
        res.time = time.perf_counter() - t0
        return res
    alpha0, warm = _auto_start(kd, y, C, epsilon, method, alpha0)
    # solve the canonical instance (cK, C/c, eta/c) with a power of two c (kernel of scale ~1):
    # exact (docs/validity.md), and the solvers' numbers stay representable whatever the scales
    c = _canonical_factor(box_max(C), eta, kd.kappa)  # per-sample boxes: from max C
    kd_c = kd if c == 1.0 else CheckedKernel(kd.K * c)
    problem = SVRProblem(kd_c, y, C / c, eta / c, tau, epsilon, eig_route)
    res = run_method(problem, method, c=c, tol=tol, max_iter=max_iter, alpha0=alpha0,
                     options=options)
    if method == "auto":
        res.method = "auto"
        res.time = time.perf_counter() - t0
        res.extra["warm_start"] = warm
    if paper_variant(method) is not None:
        res.extra["L_theorem"] = problem.lipschitz_theorem()
    res = _unscale(res, c, kd, eta)
    res.extra["epsilon"] = epsilon
    res = _split(res, n)
    z = res.extra["z"]
    res.extra["overlap"] = float(np.minimum(z[:n], z[n:]).sum())
    _refuse_infeasible(z, problem.C * c, problem.s, method)
    return res


def _auto_start(kd, y: np.ndarray, C, epsilon: float, method: str, alpha0):
    """``(alpha0, warm_start)``: for ``method="auto"`` without ``alpha0`` the plain SVR's dual
    (:func:`dank_fast._libsvm.svr_dual`, ``"svr"``), else ``alpha0`` (``"given"``)."""
    if method == "auto" and alpha0 is None:
        return _check_start(svr_dual(kd.K, y, C, epsilon, for_eta=False), y.size), "svr"
    return alpha0, "given"


def _check_start(alpha0, n: int) -> np.ndarray | None:
    """``alpha0`` as ``[ah; ac]`` (length ``2n``): a finite ``(2n,)`` array as given, an
    ``(n,)`` array ``d`` split into ``(max(d, 0), max(-d, 0))``; ``None`` stays ``None``."""
    if alpha0 is None:
        return None
    alpha0 = check_finite_array(alpha0, "alpha0")
    if alpha0.shape not in ((n,), (2 * n,)):
        raise ValueError(
            f"alpha0 must be a finite array of shape (n,) or (2n,) = ({n},) or "
            f"({2 * n},), got {alpha0.shape}"
        )
    if alpha0.shape == (n,):
        alpha0 = np.concatenate([np.maximum(alpha0, 0.0), np.maximum(-alpha0, 0.0)])
    return alpha0


def _refuse_infeasible(z: np.ndarray, C, s: np.ndarray, method: str) -> None:
    """``RuntimeError`` when the returned ``z`` violates P2's constraints by more than
    ``1e-9 max(C) sqrt(n)``: a solver bug, whose certificate would not bound ``v*`` (``C``
    the box of ``z``: a scalar or ``2n`` bounds)."""
    n = z.size // 2
    infeas = feasibility_violation(z, C, s)
    tol = FEASIBILITY_RTOL * box_max(C) * math.sqrt(n)
    if not infeas <= tol:
        raise RuntimeError(  # a solver bug, never a valid certificate: do not return it
            f"solve_svr({method!r}) ended at an infeasible point (violation {infeas:.3g} > "
            f"1e-9 max(C) sqrt(n) = {tol:.3g}); its certificate "
            "would not bound v*. Please report this instance."
        )
