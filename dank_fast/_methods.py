"""Run one of the solvers on a canonical instance (shared by solve_svm, solve_svr, P3 clusters)."""

from __future__ import annotations

from ._accelerated import accelerated
from ._newton import newton
from ._paper import paper
from ._result import DANKResult
from ._validation import check_nonnegative

#: the ``method=`` values of :func:`dank_fast.solve_svm`, :func:`dank_fast.solve_svr` and
#: :func:`dank_fast.solve_decomposed`
METHODS = ("auto", "accelerated", "newton", "paper", "paper-monotone", "pgm")


def paper_variant(method: str) -> str | None:
    """The variant of :func:`dank_fast._paper.paper` that the paper's ``method`` runs; None
    for the other methods."""
    return {"paper": "nesterov", "paper-monotone": "monotone", "pgm": "pgm"}.get(method)


def run_method(problem, method: str, *, c: float, tol: float, max_iter: int | None, alpha0,
               options: dict) -> DANKResult:
    """``method`` on ``problem``, the canonical instance ``(cK, C/c, eta/c)`` (docs/validity.md).

    ``alpha0`` and ``options`` are in the caller's units: the start is divided by ``c``, a
    ``callback`` receives ``z`` in the caller's units, and the paper's absolute stopping rule
    ``||a_t - a_{t-1}|| <= eps`` is kept on ``a = c a''``. The result is in the canonical frame
    (the caller unscales it with :func:`dank_fast._scaling.unscale`). Default iteration limits:
    Newton 100 (accelerated fallback 5000), accelerated 5000, the paper's methods ``t_max = 2000``.
    """
    options = dict(options)
    if alpha0 is not None:
        alpha0 = alpha0 / c
    if c != 1.0 and options.get("callback") is not None:
        user_callback = options["callback"]
        options["callback"] = lambda z, ev: user_callback(z * c, ev)
    if method in ("auto", "newton"):
        options.setdefault("fallback_iter", max_iter or 5000)
        return newton(problem, tol=tol, max_iter=max_iter or 100, alpha0=alpha0, **options)
    if method == "accelerated":
        return accelerated(problem, tol=tol, max_iter=max_iter or 5000, alpha0=alpha0, **options)
    options["eps"] = check_nonnegative(options.get("eps", 1e-4), "eps") / c
    return paper(problem, variant=paper_variant(method), t_max=max_iter or 2000, alpha0=alpha0,
                 tol=tol, **options)
