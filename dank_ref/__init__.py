"""dank_ref: exact (conic) reference solvers for DANK -- the independent oracle.

Depends only on numpy, scipy, cvxpy and threadpoolctl; it never imports ``dank_fast``.

* :func:`solve_svm`  -- P1 (eq. (4)) as one SDP (derivation in :mod:`dank_ref.svm`).
* :func:`solve_svr`  -- P2 (eq. (22), bias constraint ``1'(ah - ac) = 0``), :mod:`dank_ref.svr`.
* :func:`solve_decomposed` -- P3 (eqs. (18), (19), Lemma 5),
  :mod:`dank_ref.decomposed`.
* :mod:`dank_ref.certificate` -- independent duality certificates (lower/upper/gap, exact bias).
* :mod:`dank_ref.polish` -- active-set Newton refinement, kept only if the certified gap shrinks.

Every input is validated first, exactly per :doc:`docs/validity.md </validity>` (``TypeError`` /
``ValueError`` naming the parameter; instances outside the representable range are refused up
front). ``C`` is a scalar or a vector of ``n`` per-sample boxes ``0 <= a_i <= C_i`` (libsvm's sample
and class weights; :doc:`docs/MATH.md </MATH>` section 14: only the feasible set changes). Every
result is certified by dank_ref's own code at exactly the point it returns:
``status == "converged"`` iff that point is feasible (``1e-9 C sqrt(n)``) and its certified
``rel_gap <= tol`` (1e-6) -- the conic solver's own status is only recorded.  Otherwise
``"time_limit"`` (the whole solve got ``time_limit`` seconds, default 300, always finite),
``"max_iter"`` or ``"stalled"`` (:data:`STATUSES`), plus a :class:`ConvergenceWarning` (a
subclass of scikit-learn's; ``InaccurateSolutionWarning`` is its deprecated alias).  Solver
failures raise :class:`SolverError`.  Defaults match ``dank_fast``: ``tau = 0.01``.

How a solve works (:mod:`dank_ref.staged`): the problem is rescaled exactly
(``v*(K, C, eta) = c v*(cK, C/c, eta/c)``, ``c`` a power of two near the natural size of
``a*``); candidate starting points are tried in an order chosen by the regime -- the ``eta ->
inf`` limit QP (``F ~ J(11')``), the SDP's dual at a loose tolerance (``eps = 1e-4``), a ray
``t * a_LP`` (tiny ``eta``: ``Gamma`` dominates) -- each polished by active-set Newton and
certified; the first certified one is returned.  Only when none is certified does the solve
escalate (the other conic solver at ``1e-4``, then ``eps``, default ``1e-8``);
``strategy="tight"`` solves the SDP at ``eps`` first.  ``time_limit``
bounds the whole solve; ``solver_stats["stages"]`` records what ran.  ``K = 0`` (an LP,
closed form / HiGHS) and P2 with every target in the tube (``b = 0`` certified with gap 0)
need no conic solve.  Measured times over families of instances: the README's dank_ref table
(``benchmarks/bench_ref.py``; :doc:`/user_guide/performance`).

Default solver: **SCS** (first order, O(n^2) memory; far faster than Clarabel on the SDP beyond
a few dozen points). Clarabel (interior point) is kept as the second, independent conic solver;
it copes better with extreme scalings (e.g. ``eta = 1e6 .. 1e8``, where SCS needs many
iterations), but its KKT system grows like n^4 (:func:`estimate_memory_bytes`; with the 8 GiB
default limit it refuses n > ~135, before building the problem).

Why a hand-derived SDP and not a disciplined saddle program (``dsp-cvxpy``): the coupling
term ``-1/2 (a o y)'(F o K)(a o y) = -1/2 sum_k x_k' F x_k`` (``x_k = a o y o l_k``,
``K = L L'``) needs ``saddle_quad_form(x, P)`` with ``x`` on the *maximisation* side and
``P = F`` on the minimisation side, while DSP's atom has it the other way round (convex in
``x``, concave/affine in a PSD ``P``), so DSP rejects the objective.  The SDP used here (Schur
complement of the dualised inner SVM) is what a DSP reformulation would produce, with one LMI
instead of n.
"""

import importlib

from . import _result
from ._result import (
    RENAMED_STATUSES,
    RESULT_FIELDS,
    STATUSES,
    RefResult,
    SolverError,
    SolverResult,
)

# The solvers import cvxpy (about 4 s of start-up time); the oracle's building blocks
# (validation, projection, kernels, certificate) need only numpy and scipy.  The solver names
# are therefore loaded on first use (PEP 562), so that ``import dank_ref.certificate`` stays
# light.
_LAZY = {
    "solve_svm": "svm",
    "solve_svr": "svr",
    "solve_decomposed": "decomposed",
    "estimate_memory_bytes": "conic",
    "DEFAULT_SOLVER": "conic",
    "MEMORY_LIMIT_BYTES": "conic",
    "DEFAULT_TAU": "conic",
    "TIME_LIMIT": "conic",
    "STRATEGIES": "staged",
    "TOL": "conic",
    "FeatureKernel": "features",
    "ScaleCertificate": "scale_certificate",
    "svm_certificate_features": "scale_certificate",
    "svr_certificate_features": "scale_certificate",
    "decomposed_certificate_features": "scale_certificate",
}
_SUBMODULES = frozenset({"certificate", "conic", "decomposed", "features", "hessian", "kernels",
                         "polish", "projection", "reduced", "scale_certificate", "staged",
                         "starts", "svm", "svr", "validation"})


def __getattr__(name: str):
    # ConvergenceWarning extends scikit-learn's, imported on first use (dank_ref._result);
    # InaccurateSolutionWarning is its deprecated alias (with a DeprecationWarning)
    if name == "ConvergenceWarning":
        return _result.__getattr__(name)
    if name == "InaccurateSolutionWarning":
        return _result.deprecated_warning_name(stacklevel=3)
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES | {"ConvergenceWarning"})


__all__ = [
    "solve_svm",
    "solve_svr",
    "solve_decomposed",
    "RefResult",
    "SolverResult",
    "SolverError",
    "ConvergenceWarning",
    "estimate_memory_bytes",
    "DEFAULT_SOLVER",
    "MEMORY_LIMIT_BYTES",
    "DEFAULT_TAU",
    "TIME_LIMIT",
    "TOL",
    "STRATEGIES",
    "STATUSES",
    "RESULT_FIELDS",
    "RENAMED_STATUSES",
    "FeatureKernel",
    "ScaleCertificate",
    "svm_certificate_features",
    "svr_certificate_features",
    "decomposed_certificate_features",
]
