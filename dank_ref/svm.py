r"""Exact reference solver for P1, DANK in SVM (eq. (4)), as ONE convex program.

Derivation of the conic form (Lanckriet et al. 2004 style)
----------------------------------------------------------
Strong duality (eq. (4) is convex-concave, Slater holds) gives
``v* = min_{F PSD} g(F)``, ``g(F) = R(F) + max_{a in A} 1'a - 1/2 a'Q a`` with
``Q = Y (F o K) Y = F o (yy' o K)`` (PSD by the Schur product theorem) and
``R(F) = eta ||F - 11'||_F^2 + tau eta tr F``.  Dualise the inner SVM: with multipliers
``lam`` (free) for ``y'a = 0``, ``nu >= 0`` for ``a >= 0`` and ``delta >= 0`` for ``a <= C``,

    L = 1'a - 1/2 a'Qa + lam y'a + nu'a + delta'(C1 - a) = v'a - 1/2 a'Qa + C 1'delta,
    v = 1 + nu - delta + lam y.

``max_a L`` is finite iff ``v`` lies in range(Q), and then equals ``1/2 v'Q^+ v + C 1'delta``.
So ``g(F) = R(F) + min { t : t >= 1/2 v'Q^+ v + C 1'delta }`` and, by the generalised Schur
complement (``Q`` PSD, ``v in range(Q)``, ``s >= v'Q^+ v``  <=>  ``[[Q, v], [v', s]] PSD``),

    v* = min_{F PSD, t, lam, nu >= 0, delta >= 0}  t + R(F)
         s.t.  [[ F o (yy' o K),  v ], [ v',  2 (t - C 1'delta) ]]  PSD.

This is the form of :doc:`docs/MATH.md </MATH>` (section 4); it is checked numerically in the tests
(SDP value = closed-form ``h(a*)``, and = sklearn's SVM as ``eta -> inf``).

Recovering ``a*`` and the bias
------------------------------
Let ``Z = [[Z11, z], [z', zeta]] PSD`` be the multiplier of the LMI.  Stationarity in ``t`` gives
``2 zeta = 1``.  Plugging ``Z = zeta [a; -1][a; -1]'`` into ``<Z, LMI>`` reproduces exactly the
SVM Lagrangian above, so the primal SVM variable is ``a* = -z / zeta`` (CVXPY's sign convention:
``constraint.dual_value`` is the PSD ``Z``; verified numerically against the closed form ``h``).
``b = -lam`` is kept in ``solver_stats['bias_dual']``; the reported ``bias`` is the exact
minimiser of the certificate's hinge sum at the final ``a``.

Rescaling (what the conic solver sees)
--------------------------------------
The conic solver is never handed the raw data.  With ``s = max|K|`` and the exact law of
:doc:`docs/validity.md </validity>`, ``v*(K, C, eta, tau) = c v*(cK, C/c, eta/c, tau)``,
``a* = c a*'`` (substitute ``a = c a'`` in eq. (4); ``F`` and the bias are unchanged), the program
is built for ``(cK, C/c, eta/c)`` with ``c`` a power of two near the natural size of ``a*``,
``min(C, 1/s, (16 eta/s^2)^(1/3))`` (:func:`dank_ref.certificate.frame_scale`), so that
``a' = O(1)``, ``max|cK| <= 1`` and ``C/c >= 1``. In addition ``F = w F'`` with ``w`` a power of two
near ``max(1, max Gamma')`` (``PSD`` is preserved; ``F o K = F' o (wK)``,
``eta ||F - 11'||^2 = eta w^2 ||F' - 11'/w||^2``). Only one family of laws exists: ``C s`` and
``eta / C`` are invariant, so ``max|K|`` and ``C`` cannot both be normalised to 1. ``a*'`` is
recovered and polished in that frame and mapped back exactly (``a = c a'``, powers of two); the
returned certificate is computed from the returned ``a`` in the original units.

``K = 0``: ``F(a) = J_{tau/2}(11')`` does not depend on ``a`` and P1 is the linear program
``max 1'a`` over ``A``; its solution is explicit (each class sums to ``C min(n+, n-)``) and no
conic solver runs.

Status policy
-------------
* Input outside :doc:`docs/validity.md </validity>` (including the representable range) ->
  ``TypeError`` / ``ValueError`` before any arithmetic.
* CVXPY status ``infeasible``/``unbounded``/``solver_error``/``None``, or a solver exception ->
  :class:`dank_ref.SolverError` (message contains the CVXPY status).
* Otherwise ``a*`` is recovered, polished (:mod:`dank_ref.polish`, kept only if the certified gap
  decreases) and certified by :mod:`dank_ref.certificate`.  ``status="converged"`` means: the
  returned ``alpha`` is feasible to ``1e-9 C sqrt(n)`` and its independent certificate has
  ``rel_gap <= tol`` (default ``1e-6``) -- whatever the conic solver said.  Otherwise
  ``status="time_limit"`` (the solve, all its stages, stopped at ``time_limit`` seconds),
  ``"max_iter"`` or ``"stalled"`` (:data:`dank_ref.STATUSES`), and a
  :class:`dank_ref.ConvergenceWarning` is emitted.  Which
  stages ran (the staged strategy of :mod:`dank_ref.staged`) is in ``solver_stats["stages"]``.
"""

from __future__ import annotations

import importlib
import time
import warnings

import cvxpy as cp
import numpy as np

from . import certificate as cert
from ._result import RefResult
from ._threads import single_blas_threaded
from .conic import (
    DEFAULT_SOLVER,
    DEFAULT_TAU,
    SDP_BOX_CAP,
    TIME_LIMIT,
    TOL,
    F_scale,
    cap_box,
    check_options,
    check_size,
    lmi,
    renamed_options,
    sdp_stages,
)
from .polish import polish_svm
from .projection import _project
from .staged import finish, time_left
from .starts import F0_factor, limit_qp, order_candidates, ray_candidate
from .validation import (
    box_max,
    check_binary_labels,
    check_box,
    check_kernel,
    check_nonnegative,
    check_positive,
    check_range,
    kernel_scale,
)

__all__ = ["solve_svm", "build_svm_problem", "lp_solution_svm", "SDP_TAGS"]

SDP_TAGS = ("sdp", "sdp_tight", "sdp_switch")  # the stages whose point is the SDP's

# public names of this module that moved to dank_ref.conic / dank_ref.staged: still readable
# here for one release, with a DeprecationWarning
_MOVED = {"estimate_memory_bytes": "conic", "MEMORY_LIMIT_BYTES": "conic", "SOLVERS": "conic",
          "predicted_sdp_seconds": "conic", "stage_budget": "conic", "run_conic": "conic",
          "check_options": "conic", "STRATEGIES": "staged"}


def __getattr__(name: str):
    if name in _MOVED:
        where = f"dank_ref.{_MOVED[name]}"
        warnings.warn(f"dank_ref.svm.{name} is deprecated and will be removed in the next "
                      f"release; use {where}.{name}", DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module(where), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_svm_problem(K: np.ndarray, y: np.ndarray, *, C: float, eta: float, tau: float,
                      equality: bool = True, F_scale: float = 1.0):
    """CVXPY problem of the exact convex form of :doc:`docs/MATH.md </MATH>`, section 4
    (``equality=False``: P3, no ``lam``).  ``C`` a float or a vector of per-sample bounds (the
    LMI's ``C 1'delta`` is then ``C'delta``).

    The PSD variable is ``F' = F / F_scale`` (exact reparametrisation, see :mod:`dank_ref.svm`).
    """
    n = K.shape[0]
    w = float(F_scale)
    F = cp.Variable((n, n), PSD=True, name="F")
    t = cp.Variable(name="t")
    nu = cp.Variable(n, nonneg=True, name="nu")
    delta = cp.Variable(n, nonneg=True, name="delta")
    lam = cp.Variable(name="lam") if equality else None
    v = 1.0 + nu - delta + (lam * y if equality else 0.0)
    Q = cp.multiply(F, w * (np.outer(y, y) * K))
    box = C @ delta if isinstance(C, np.ndarray) else C * cp.sum(delta)  # C'delta
    con = lmi(Q, v, 2.0 * (t - box), n) >> 0
    obj = t + eta * cp.sum_squares(w * F - 1.0)
    if tau > 0.0:
        obj = obj + (tau * eta * w) * cp.trace(F)
    prob = cp.Problem(cp.Minimize(obj), [con])
    return prob, con, {"F": F, "lam": lam, "t": t, "F_scale": w}


def lp_solution_svm(y: np.ndarray, C) -> np.ndarray:
    """Maximiser of ``1'a`` over ``A = {y'a = 0, 0 <= a <= C}``: each class sums to ``C m``,
    ``m = min(n+, n-)`` (the solution of P1 when ``K = 0``).  A vector box: each class sums to
    ``m = min(sum_{y=+1} C_i, sum_{y=-1} C_i)``, every ``a_i`` the same fraction of its ``C_i``."""
    pos = y > 0
    if isinstance(C, np.ndarray):
        cp_, cn = float(np.sum(C[pos])), float(np.sum(C[~pos]))
        m = min(cp_, cn)
        return np.where(pos, C * (m / cp_), C * (m / cn))
    npos, nneg = int(np.sum(y > 0)), int(np.sum(y < 0))
    m = min(npos, nneg)
    return np.where(y > 0, C * (m / npos), C * (m / nneg))


@single_blas_threaded
def solve_svm(K, y, *, C, eta, tau=DEFAULT_TAU, solver: str = DEFAULT_SOLVER, eps: float = 1e-8,
              polish: bool = True, verbose: bool = False, tol: float = TOL,
              memory_limit: float | None = None, max_iter: int | None = None,
              time_limit: float = TIME_LIMIT, strategy: str = "auto",
              certify_tol: float | None = None, max_iters: int | None = None) -> RefResult:
    """Solve P1 exactly as one SDP and certify the result independently.

    P1 is the saddle problem eq. (4) (:doc:`docs/MATH.md </MATH>` section 1), written as one
    semidefinite program (derivation in :mod:`dank_ref.svm`) and solved by CVXPY; the returned point
    is polished and certified by dank_ref's own code (:mod:`dank_ref.certificate`). Cost: SCS needs
    O(n^2) memory; Clarabel's KKT system grows like n^4 (:func:`estimate_memory_bytes`), which
    limits it to n ~ 135 under the 8 GiB default. Measured over families of instances (SCS;
    ``benchmarks/bench_ref.py``, :doc:`/user_guide/performance`): median 0.1 s at n = 100, 0.8 s at
    n = 200 and 3.5 s at n = 500 (worst 6.9 s); a solve that must escalate to a tight conic solve
    takes longer.

    Parameters
    ----------
    K : array_like, shape (n, n)
        PSD kernel (:doc:`docs/validity.md </validity>`: real dtype, relative symmetry/PSD
        tolerances, ``K = 0`` allowed).
    y : array_like, shape (n,)
        Labels in {-1, +1}, both classes present.
    C : float or array_like of shape (n,)
        ``> 0``: the box ``0 <= a <= C``, or per-sample boxes ``0 <= a_i <= C_i`` (libsvm's
        sample weights times ``C``); ``(C_i, eta, max|K|, n)`` must lie in the representable
        range for every ``i``.
    eta : float
        ``> 0``.
    tau : float, default 0.01
        Nuclear-norm weight ``>= 0`` (:func:`dank_fast.solve_svm`'s default).
    solver : {"SCS", "CLARABEL"}, default "SCS"
        The conic solver (SCS: first order, O(n^2) memory; Clarabel: interior point).  With
        ``strategy="auto"`` a solver predicted slow (Clarabel beyond n ~ 57) runs after the
        other one, and a Clarabel stage followed by another has a time budget
        (:mod:`dank_ref.staged`); ``solver_stats["certified_solver"]`` names the solver
        whose point was certified.
    eps : float, default 1e-8
        dank_ref only: the tightest tolerance of the conic solver (SCS ``eps_abs =
        eps_rel``; Clarabel gap/feasibility tolerances): ``strategy="auto"`` solves at
        ``max(eps, 1e-4)`` first and re-solves at ``eps`` only when the certificate asks for
        it; ``"tight"`` solves at ``eps`` once.
    polish : bool
        Refine ``a*`` by active-set Newton (kept only if the certified gap decreases).
    verbose : bool
        Print one progress line per stage (and the conic solver's log) to stderr.
    tol : float, default 1e-6
        Certified relative-gap target (as in ``dank_fast``): ``status="converged"`` iff the
        returned ``alpha`` is feasible (``1e-9 C sqrt(n)``) and its independently certified
        ``rel_gap = gap / 1'a <= tol``.
    memory_limit : float, optional
        Bytes (default 8 GiB); larger problems are refused with ``ValueError`` before building.
    max_iter : int, optional
        Iteration limit of the conic solver (``>= 1``; default: SCS 200,000, Clarabel 400).
    time_limit : float, default 300
        Seconds for the whole solve (always finite; :mod:`dank_ref.staged`): every stage gets
        the time left, the polisher stops at the deadline; the best point so far is certified
        and the status is ``"time_limit"`` unless the certificate says ``"converged"``.
    strategy : {"auto", "tight"}, default "auto"
        ``"auto"``: loose conic solve (``eps = 1e-4``) + dank_ref's own polish and certificate,
        escalating (``eps``, then the other conic solver) only while the certified
        ``rel_gap > tol``; ``"tight"``: one conic solve at ``eps``.
        ``solver_stats["stages"]`` records what ran (solver, eps, times, rel_gap).
    certify_tol : float, optional
        Deprecated alias of ``tol`` (``DeprecationWarning``).
    max_iters : int, optional
        Deprecated alias of ``max_iter`` (``DeprecationWarning``).

    Returns
    -------
    RefResult
        The certificate fields (``lower <= v* <= upper``) are those of the returned ``alpha``, in
        the caller's units (see "Rescaling" in :mod:`dank_ref.svm`).

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
    DeprecationWarning
        ``certify_tol`` and ``max_iters``, the previous names of ``tol`` and ``max_iter``,
        still work for one release.

    Examples
    --------
    >>> import numpy as np
    >>> from dank_ref import solve_svm
    >>> K = np.array([[1.0, 0.5], [0.5, 1.0]]); y = np.array([1.0, -1.0])
    >>> res = solve_svm(K, y, C=1.0, eta=1.0)
    >>> res.status, bool(res.rel_gap <= 1e-6), res.alpha.round(6).tolist()
    ('converged', True, [1.0, 1.0])
    """
    t0 = time.perf_counter()
    K = check_kernel(K)
    n = K.shape[0]
    y = check_binary_labels(y, n)
    C = check_box(C, n)
    eta = check_positive(eta, "eta")
    tau = check_nonnegative(tau, "tau")
    tol, max_iter = renamed_options(tol, max_iter, certify_tol, max_iters)
    opt = check_options(solver=solver, eps=eps, polish=polish, verbose=verbose, tol=tol,
                        memory_limit=memory_limit, max_iter=max_iter, time_limit=time_limit,
                        strategy=strategy)
    s = kernel_scale(K)
    check_range(C, eta, s, n)
    check_size(n, opt["solver"], opt["memory_limit"])
    candidates, certify, polisher, final, extra, holder, stats = _svm_plan(K, y, C, eta, tau, s,
                                                                           opt)
    res = finish(kind="P1 (SVM)", candidates=candidates, certify=certify, polisher=polisher,
                 opt=opt, stats=stats, t0=t0, final=final, extra=extra)
    var = holder.get("var")
    if var is not None and var["F"].value is not None and stats.get("candidate") in SDP_TAGS:
        Fs = var["F_scale"] * var["F"].value
        res.solver_stats["max_abs_F_sdp_minus_F_cert"] = float(np.max(np.abs(Fs - res.F)))
    return res


def _svm_plan(K, y, C, eta: float, tau: float, s: float, opt: dict):
    """Candidates (in the order of the strategy), certify/polish/final callables of P1.

    A vector box ``C`` enters the frame, the SDP's scaling and the order of the candidates
    through ``max C`` (the natural size of ``a``), and the programs, the starting points, the
    polish and the certificates as the box itself."""
    n = K.shape[0]
    c = cert.frame_scale(box_max(C), eta, s)
    Kf, Cf, etaf = K * c, C / c, eta / c
    Cm = box_max(Cf)
    extra = {"frame_scale": c, "time_limit": opt["time_limit"], "strategy": opt["strategy"]}
    stats: dict = {"time_limit": opt["time_limit"], "time_limit_hit": False}
    holder: dict = {}
    if s == 0.0:
        stats["cvxpy_status"] = "not run (K = 0: linear program solved in closed form)"
        candidates = [("lp", lambda: lp_solution_svm(y, Cf))]
    else:
        w = F_scale(Cm, etaf, s * c)
        extra["F_scale"] = w

        def limit():
            G = F0_factor(n, tau) * (np.outer(y, y) * Kf)
            return limit_qp(G, np.ones(n), y, cap_box(Cf, SDP_BOX_CAP),
                            time_limit=time_left(opt["deadline"]))

        first, later = sdp_stages(
            lambda: build_svm_problem(Kf, y, C=cap_box(Cf, SDP_BOX_CAP), eta=etaf, tau=tau,
                                      equality=True, F_scale=w), opt, n, stats, holder, c)

        def ray():
            a0 = lp_solution_svm(y, Cf / Cm if isinstance(Cf, np.ndarray) else 1.0)
            return ray_candidate(a0, lambda a: certify(a).lower, min(Cm, SDP_BOX_CAP))

        candidates = order_candidates(first + [("limit_qp", limit), ("ray", ray)],
                                      Cm, etaf, s * c, opt["staged"]) + later

    def certify(a):
        # the solver returns exactly feasible points: project (a no-op if already feasible)
        return cert.svm_certificate(Kf, y, _project(a, y, Cf)[0], C=Cf, eta=etaf, tau=tau,
                                    validate=False)

    def polisher(a, score, deadline, merit=None):
        return polish_svm(Kf, y, a, C=Cf, eta=etaf, tau=tau, equality=True, score=score,
                          validate=False, deadline=deadline, merit=merit)

    def final(cf):
        return cert.svm_certificate(K, y, c * cf.alpha, C=C, eta=eta, tau=tau, validate=False)

    return candidates, certify, polisher, final, extra, holder, stats
