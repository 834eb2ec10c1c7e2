"""Guided adversarial search with Hypothesis, and point-by-point reduction of counterexamples.

Two ways to make a counterexample small, used by
:func:`verification.study.claims.bounds.check_bound`:

* :func:`guided_search`: a Hypothesis search over whole instances (points, labels, kernel,
  ``C``, ``eta``, ``tau``, the feasible point(s)).  ``hypothesis.target`` steers the generation
  towards a large ``lhs / rhs``; when a substantive violation (``rhs > 0``) appears, Hypothesis
  *shrinks* it: fewer points (each point is one list element, so deleting an element deletes
  the point, its label and its coordinates of ``a``), simpler parameters (log-scale exponents
  shrink to 0, i.e. ``C = eta = sigma = 1``, kernel scale 1, ``tau = 0``).  The result is
  locally minimal (no single simplification keeps it a violation), not provably the smallest.
* :func:`reduce_points`: deletes points of any counterexample one at a time (re-projecting
  the feasible points onto the smaller feasible set) while it stays a violation of the same
  kind; used for the counterexamples of the seeded search.

Both are deterministic given their seed.  Nothing is left on disk: the example database is
disabled and Hypothesis' own storage (its cache of constants) goes to a temporary directory
unless ``HYPOTHESIS_STORAGE_DIRECTORY`` is set (otherwise ``dank-verify`` would create
``.hypothesis/`` in the user's working directory).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from unittest import mock

import numpy as np

from ._common import classify, gaussian_kernel, project_A, project_svr

PAIR_CLAIMS = ("L2", "T1", "PG")
POINT_CLAIMS = ("L1", "HW")
SVR_CLAIMS = ("L3", "T2")


class _Found(Exception):
    """Raised inside the Hypothesis test on a substantive violation (carries the case)."""

    def __init__(self, case):
        super().__init__("substantive violation")
        self.case = case


def _strategy(claim: str, max_n: int):
    # start-up: hypothesis (optional dependency) only for the guided search
    from hypothesis import strategies as st

    unit = st.floats(0.0, 1.0)
    svr = claim in SVR_CLAIMS
    label = st.floats(-1.0, 1.0) if svr else st.sampled_from([1.0, -1.0])
    # one point: 2-D coordinates, label/target, and its coordinates in the feasible point(s)
    point = st.tuples(st.tuples(unit, unit), label, unit, unit, unit, unit)

    @st.composite
    def cases(draw):
        pts = draw(st.lists(point, min_size=2, max_size=max_n))
        X = np.array([p[0] for p in pts], float)
        y = np.array([p[1] for p in pts], float)
        U = np.array([p[2:] for p in pts], float)
        n = len(pts)
        if not svr and np.all(y == y[0]):
            y[0] = -y[0]
        kind = draw(st.sampled_from(["gaussian", "linear"]))
        sigma = float(2.0 ** draw(st.floats(-3.0, 3.0)))
        kscale = float(10.0 ** draw(st.floats(-1.0, 1.0)))
        K = X @ X.T if kind == "linear" else kscale * gaussian_kernel(X, sigma)
        K = 0.5 * (K + K.T)
        C = float(2.0 ** draw(st.floats(-4.0, 5.0)))
        eta = float(10.0 ** draw(st.floats(-2.0, 3.0)))
        tau = float(draw(st.sampled_from([0.0, 0.01, 1.0])))
        eps = float(10.0 ** draw(st.floats(-3.0, -0.5)))
        t = float(draw(st.floats(1e-3, 1.0)))  # distance between the two points of a pair
        par = dict(C=C, eta=eta, tau=tau, scale=1.0)
        where = dict(C=C, eta=eta, tau=tau, kernel=kind, sigma=sigma,
                     kernel_scale=1.0 if kind == "linear" else kscale, n=n,
                     source="hypothesis")
        if svr:
            par["epsilon"] = eps
            where["epsilon"] = eps
            x1 = project_svr(C * np.concatenate([U[:, 0], U[:, 1]]), C)
            x2 = project_svr(x1 + t * (C * np.concatenate([U[:, 2], U[:, 3]]) - x1), C)
            arr = dict(K=K, y=y, ah1=x1[:n], ac1=x1[n:], ah2=x2[:n], ac2=x2[n:])
        else:
            a1 = project_A(C * U[:, 0], y, C)
            if claim in POINT_CLAIMS:
                arr = dict(K=K, y=y, a=a1)
            else:
                a2 = project_A(a1 + t * (C * U[:, 1] - a1), y, C)
                arr = dict(K=K, y=y, a1=a1, a2=a2)
        return arr, par, where

    return cases()


@contextlib.contextmanager
def _private_storage():
    """Point Hypothesis' storage at a temporary directory for the duration of a search."""
    try:
        # start-up: hypothesis (optional dependency) only for the guided search
        from hypothesis.configuration import set_hypothesis_home_dir
    except ImportError:  # pragma: no cover - older Hypothesis
        yield
        return
    if os.getenv("HYPOTHESIS_STORAGE_DIRECTORY"):
        yield
        return
    with tempfile.TemporaryDirectory(prefix="dank-verify-hypothesis-") as d:
        set_hypothesis_home_dir(d)
        try:
            yield
        finally:
            set_hypothesis_home_dir(None)


@contextlib.contextmanager
def _no_local_constants():
    """Keep the search independent of how the package is installed.

    Hypothesis (6.13 and later) mixes into its draws numeric constants harvested from the source
    of "local" modules: dank's own modules when it is installed in editable mode or run from a
    checkout, none when it is installed in site-packages. The same seed then gave different
    searches (PG's worst ratio 4.6 vs 8.9). During a search no local constants are used (and
    Hypothesis' per-process cache of them is a fresh one). A private Hypothesis API: when it is
    absent the search runs unchanged.
    """
    try:
        # start-up: hypothesis (optional dependency) only for the guided search
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants

        patches = [mock.patch.object(providers, "_get_local_constants", lambda: Constants()),
                   mock.patch.object(providers, "CONSTANTS_CACHE", {})]
    except (ImportError, AttributeError):  # pragma: no cover - other Hypothesis versions
        patches = []
    with contextlib.ExitStack() as stack:
        for pt in patches:
            try:
                stack.enter_context(pt)
            except AttributeError:  # pragma: no cover
                pass
        yield


def guided_search(claim: str, evaluate, tracker, seed: int, max_examples: int = 300,
                  max_n: int = 10, scale: float = 1.0):
    """Hypothesis search for a substantive violation of ``claim``; records every evaluation.

    Parameters
    ----------
    claim : str
        One of the pointwise/pair claims (L1, HW, L2, T1, PG, L3, T2).
    evaluate : callable
        ``(arrays, params) -> (lhs, rhs, magnitude)`` (:data:`bounds.EVALUATORS`).
    tracker : Tracker
        Receives every evaluation (the shrunk counterexample as ``preferred``).
    seed : int
        Hypothesis seed (the search is deterministic given it).
    max_examples : int
        Hypothesis' example budget (generation and targeting; shrinking is extra).
    max_n : int
        Largest number of points.
    scale : float
        Multiplies the right-hand side (planted false bounds in the tests).

    Returns
    -------
    dict
        ``found`` (bool), ``n`` and ``ratio`` of the shrunk counterexample, ``examples`` (test
        calls, shrinking included), ``error`` (a Hypothesis failure other than a violation).
    """
    try:
        # start-up: hypothesis (optional dependency) only for the guided search
        from hypothesis import HealthCheck, Phase, Verbosity, given, settings, target
        from hypothesis import seed as hseed
    except ImportError as exc:  # the report extra brings it: pip install "dank[report]"
        raise ImportError(
            "the guided search of the claims needs Hypothesis: install the main job's extra "
            "(python -m pip install \".[report]\") or hypothesis itself"
        ) from exc

    calls = [0]

    def run_case(case):
        arr, par, where = case
        par = dict(par, scale=scale)
        calls[0] += 1
        lhs, rhs, mag = evaluate(arr, par)
        kind = tracker.record(lhs, rhs, mag, where, arr, par, size=arr["y"].size)
        if rhs > 0:
            target(float(lhs / rhs), label="lhs/rhs")
        if kind == "violated":
            raise _Found((arr, par, where, lhs, rhs, mag))

    test = settings(max_examples=max_examples, deadline=None, database=None,
                    phases=[Phase.generate, Phase.target, Phase.shrink],
                    suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
                    report_multiple_bugs=False, print_blob=False)(
        hseed(int(seed))(given(_strategy(claim, max_n))(run_case)))
    out = dict(found=False, n=None, ratio=None, examples=0, error=None)
    try:
        with _private_storage(), _no_local_constants():
            test()
    except _Found as exc:  # Hypothesis re-raises the shrunk (minimal) failing example last
        arr, par, where, lhs, rhs, mag = exc.case
        tracker.offer_counterexample("violated", lhs, rhs, dict(where, shrunk=True), arr, par,
                                     size=arr["y"].size, preferred=True)
        out.update(found=True, n=int(arr["y"].size), ratio=float(lhs / rhs))
    except Exception as exc:  # noqa: BLE001 - a search failure is reported, not fatal
        out["error"] = repr(exc)[:200]
    out["examples"] = calls[0]
    return out


def _drop(claim, arr, par, i):
    keep = np.arange(arr["y"].size) != i
    K = arr["K"][np.ix_(keep, keep)]
    y = arr["y"][keep]
    C = par["C"]
    new = dict(arr, K=K, y=y)
    if claim in SVR_CLAIMS:
        for s in ("1", "2"):
            x = project_svr(np.concatenate([arr["ah" + s][keep], arr["ac" + s][keep]]), C)
            new["ah" + s], new["ac" + s] = x[: y.size], x[y.size:]
        return new
    if np.all(y == y[0]):
        return None  # P1 needs both classes
    for k in ("a", "a1", "a2"):
        if k in arr:
            new[k] = project_A(arr[k][keep], y, C)
    return new


def reduce_points(claim: str, evaluate, arrays: dict, params: dict, kind: str,
                  max_evals: int = 400):
    """Delete points while ``evaluate`` keeps classifying the case as ``kind``.

    Returns ``(arrays, lhs, rhs, magnitude)`` of the reduced case, or ``None`` when no point
    could be removed.  Greedy (first removable point, then restart): ``O(n^2)`` evaluations.
    """
    cur = arrays
    best = None
    evals = 0
    changed = True
    while changed and cur["y"].size > 2 and evals < max_evals:
        changed = False
        for i in range(cur["y"].size):
            cand = _drop(claim, cur, params, i)
            if cand is None:
                continue
            evals += 1
            lhs, rhs, mag = evaluate(cand, params)
            if classify(lhs, rhs, mag) == kind:
                cur, best, changed = cand, (cand, lhs, rhs, mag), True
                break
    return best
