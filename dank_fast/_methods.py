"""Run one of the solvers on a canonical instance (shared by solve_svm, solve_svr, P3 clusters).

``max_iter`` means one thing for every method: its outer iterations, the unit of
``result.n_iter`` -- Newton steps for ``"newton"`` and ``"auto"`` (default 100), iterations
for ``"accelerated"`` (default 5000) and the paper's methods (their ``t_max``, default 2000).
Newton's accelerated fallback has its own budget, the option ``fallback_iter`` (default 5000
iterations in all; reported as ``extra["accelerated_iter"]``).

The keyword options of ``solve_svm``, ``solve_svr`` and ``solve_decomposed`` are checked here:
an option the method does not take is a ``TypeError`` naming it and listing the method's
options (:data:`OPTIONS`), as SciPy's ``minimize`` reports unknown solver options.
"""

from __future__ import annotations

import inspect

from ._accelerated import accelerated
from ._newton import newton
from ._paper import paper
from ._result import DANKResult
from ._threads import blas_threads
from ._validation import check_nonnegative

#: the ``method=`` values of :func:`dank_fast.solve_svm`, :func:`dank_fast.solve_svr` and
#: :func:`dank_fast.solve_decomposed`
METHODS = ("auto", "accelerated", "newton", "paper", "paper-monotone", "pgm")

#: arguments :func:`run_method` sets itself (``max_iter`` is the paper's ``t_max``, the
#: method names the paper's ``variant``)
_SET_BY_RUN = frozenset({"problem", "tol", "max_iter", "alpha0", "t_max", "variant"})

#: the default ``max_iter`` of every method (its outer iterations, the unit of ``n_iter``)
DEFAULT_MAX_ITER = {"auto": 100, "newton": 100, "accelerated": 5000, "paper": 2000,
                    "paper-monotone": 2000, "pgm": 2000}


def _keywords(func) -> tuple[str, ...]:
    """The keyword options of a method's function, without those :func:`run_method` sets."""
    params = inspect.signature(func).parameters
    return tuple(sorted(name for name in params if name not in _SET_BY_RUN))


def _function(method: str):
    return {"auto": newton, "newton": newton, "accelerated": accelerated}.get(method, paper)


#: the keyword options every method takes (``**options`` of the solvers), from the signatures
#: of :func:`dank_fast._newton.newton`, :func:`dank_fast._accelerated.accelerated` and
#: :func:`dank_fast._paper.paper`
OPTIONS = {method: _keywords(_function(method)) for method in METHODS}


def paper_variant(method: str) -> str | None:
    """The variant of :func:`dank_fast._paper.paper` that the paper's ``method`` runs; None
    for the other methods."""
    return {"paper": "nesterov", "paper-monotone": "monotone", "pgm": "pgm"}.get(method)


def check_options(method: str, options: dict) -> None:
    """``TypeError`` naming every option ``method`` does not take and listing those it takes.

    ``t_max`` (the paper's name) is refused with a pointer to ``max_iter``, which is it.
    """
    unknown = sorted(set(options) - set(OPTIONS[method]))
    if not unknown:
        return
    hint = ("; the paper's t_max is max_iter" if "t_max" in unknown and paper_variant(method)
            else "")
    raise TypeError(f"Unknown solver options for method={method!r}: {', '.join(unknown)}; "
                    f"valid options: {', '.join(OPTIONS[method])}{hint}")


def run_method(problem, method: str, *, c: float, tol: float, max_iter: int | None, alpha0,
               options: dict) -> DANKResult:
    """``method`` on ``problem``, the canonical instance ``(cK, C/c, eta/c)`` (docs/validity.md).

    ``alpha0`` and ``options`` are in the caller's units: the start is divided by ``c``, a
    ``callback`` receives ``z`` in the caller's units, and the paper's absolute stopping rule
    ``||a_t - a_{t-1}|| <= eps`` is kept on ``a = c a''``. The result is in the canonical frame
    (the caller unscales it with :func:`dank_fast._scaling.unscale`). ``max_iter`` (default
    :data:`DEFAULT_MAX_ITER`) and ``n_iter`` count the method's outer iterations (module
    docstring); an option the method does not take is a ``TypeError`` (:func:`check_options`).
    The method runs its BLAS on one thread (:mod:`dank_fast._threads`).
    """
    check_options(method, options)
    options = dict(options)
    if alpha0 is not None:
        alpha0 = alpha0 / c
    if c != 1.0 and options.get("callback") is not None:
        user_callback = options["callback"]
        options["callback"] = lambda z, ev: user_callback(z * c, ev)
    limit = max_iter or DEFAULT_MAX_ITER[method]
    if method not in ("auto", "newton", "accelerated"):
        options["eps"] = check_nonnegative(options.get("eps", 1e-4), "eps") / c
    with blas_threads():
        if method in ("auto", "newton"):
            return _newton_result(newton(problem, tol=tol, max_iter=limit, alpha0=alpha0,
                                         **options), limit, options)
        if method == "accelerated":
            return accelerated(problem, tol=tol, max_iter=limit, alpha0=alpha0, **options)
        return paper(problem, variant=paper_variant(method), t_max=limit, alpha0=alpha0,
                     tol=tol, **options)


def _newton_result(res: DANKResult, limit: int, options: dict) -> DANKResult:
    """Newton's result with ``n_iter`` in the unit of ``max_iter`` (Newton steps) and a
    message that names both budgets."""
    steps, acc = res.extra["newton_iter"], res.extra["accelerated_iter"]
    budget = options.get("fallback_iter", inspect.signature(newton).parameters[
        "fallback_iter"].default)
    res.n_iter = steps
    res.message += (f"; {steps} Newton steps (max_iter {limit}), {acc} accelerated fallback "
                    f"iterations (fallback_iter {budget})")
    return res
