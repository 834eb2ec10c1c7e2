"""``dank-verify certify``: check a solution produced by any implementation.

The instance and solution are read by :mod:`verification.formats` (strict, versioned).  The
certificate is recomputed by ``dank_ref`` (independent code, dense ``eigh``); the oracle itself
only checks feasibility, compares numbers and keeps the bookkeeping.  Every check has a name
(``report["checks"]``); the solution is CERTIFIED iff none fails.  ``n`` is the number of
points, ``p`` the submitted point, ``tol`` the required relative gap (``--tol``, default 1e-6).

Feasibility (:doc:`docs/validity.md </validity>`: ``max violation <= 1e-9 C sqrt(n)``, relative to
``C``), one check per constraint. Per-sample boxes (``C`` a vector of ``n`` bounds, format version
2): the box checks are ``alpha_i <= C_i`` for every ``i`` (the value is the largest
``alpha_i - C_i``), and the tolerance of every check is ``1e-9 max(C) sqrt(n)``, the rule of
``dank_ref.validation.feasibility_tolerance`` (a solver's rounding and the certificate's numbers
scale with the largest box, not with the smallest):

============================  =====================================================  =========
check                         constraint                                              tasks
============================  =====================================================  =========
``alpha_low``                 ``min alpha >= 0``                                      svm, P3
``alpha_high``                ``max alpha <= C``                                      svm, P3
``equality``                  ``|y'alpha| = 0`` (svm); ``|1'(ah - ac)| = 0`` (svr)    svm, svr
``alpha_hat_low/high``        ``0 <= alpha_hat <= C``                                 svr
``alpha_check_low/high``      ``0 <= alpha_check <= C``                               svr
============================  =====================================================  =========

P3 (``decomposed``) has no equality constraint: a P3 solution with ``y'alpha != 0`` is fine.

Optimality, evaluated only when the point is feasible (for an infeasible point the same
numbers are computed at the nearest feasible point and reported as informative):

* ``gap``: ``rel_gap = gap / scale <= tol``.  The bracket ``lower <= v* <= upper`` is
  ``dank_ref.certificate``'s at the exact Euclidean projection of ``p`` onto the feasible set
  (a move of at most the feasibility tolerance, reported as ``projection_distance``); P3 on
  ``Kbar = K o [labels_i = labels_j]``.  ``scale`` is ``1'alpha`` (svm, P3) or
  ``max(|b'y| + eps 1'(ah + ac) + b'(F o K)b, C (max y - min y) / 2)`` (svr, ``b = ah - ac``;
  every term in the units of the objective, :doc:`docs/MATH.md </MATH>` section 5). ``upper`` is the
  smaller of two primal values of the fixed-kernel problem (kernel ``F(p) o K``): at the ``w``
  induced by ``p`` and after one Newton step of that problem from ``p`` (:mod:`verification._upper`;
  ``upper_from`` says which, ``upper_at_point`` gives the first); the blockwise route evaluates the
  first only. The svr point is certified *as given*: ``lin = b'y - eps 1'(ah + ac)`` depends on
  ``ah + ac``, so if the certificate function normalises ``min(ah_i, ac_i)`` to 0 the oracle adds
  the difference back.
* ``bias`` (if submitted; svm, svr): the primal-dual gap with the submitted bias,
  ``(q + C loss(bias) - lin) / scale <= tol`` with ``q = d'(F o K)d``, the decision function
  ``f = (F o K)d + bias`` and ``d = alpha * y`` (svm) or ``b`` (svr); hinge loss
  ``max(0, 1 - y f)`` (svm), ``max(0, |y - f| - eps)`` (svr). svm: also at the rescaled
  point ``(s w, s bias)``, ``s = 1 / min_i y_i f_i`` (the same classifier).
* ``F`` (if submitted): ``max|F - F(p)| <= 1e-6 max(1, max|F(p)|)``, ``F(p) =
  J_{tau/2}(11' + Gamma)`` from dank_ref (P3: the full ``n x n`` minimiser on ``Kbar``, not the
  block-diagonal matrix of Lemma 5).

A negative gap beyond ``tol`` (``lower > upper``) means the evaluation itself is broken and
raises :class:`EvaluationError`, as does any failure of dank_ref; a task or size mismatch
between the instance and the solution is a ``ValueError`` (bad input).

Informative only (never decide the verdict): ``kkt_residual`` (``||P(x + grad h) - x||``,
dank_ref's projection) and, with ``reference=True`` (``dank-verify certify --reference``), an
optional cross-check by the fast package: ``dank_fast_rel_gap`` (svm, svr: dank_fast's
certificate of the same projected point) and ``distance_to_reference`` (to a dank_fast Newton
solution at ``tol = 1e-10``, one more solve and another validation of ``K``; the optimum need
not be unique).  Without it the oracle imports nothing of dank_fast: its verdicts depend on
dank_ref alone.

Also informative: ``evidence`` (``verification._evidence``), when the gap or ``F`` check fails
at a feasible point of a dense instance with ``n <= 400`` (``certify(evidence=...)``):
dank_ref's reference optimum ``v*``, the point's value, the distance of a submitted ``F`` from
``F(p)``, the point's gap on related problems (the plain SVM / SVR, mis-scaled ``eta`` or
``tau``, ...), and which kind of wrong they point to, "not converged" or "a different
problem".

Cost: ``K`` is validated once, by the loader (:mod:`verification.formats`) or by
:func:`verification.certify_arrays` (one ``eigvalsh``, the PSD test of
:doc:`docs/validity.md </validity>`); :func:`certify` trusts its input and calls dank_ref's
certificate without re-validating it. The certificate itself takes one dense ``eigh`` of an
``n x n`` matrix (``O(n^3)`` time, a few ``n x n`` arrays). An instance given by ``X`` whose
``n x n`` kernel exceeds the format's limit (``K`` is ``None``) is certified blockwise from ``X`` by
:mod:`dank_ref.scale_certificate` (never an ``n x n`` array: time ``O(n s d)`` plus ``O(s^3)`` for
``tau > 0``, ``s`` the support; memory one block plus ``O(n d)``; P3 one cluster at a time), where a
submitted ``F`` is "not evaluated". ``progress`` (:func:`certify`) reports the phases of either
route.

The report's text, the reason of each failed check and :func:`format_report`, is
:mod:`verification._report_text`'s.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

import dank_ref.certificate as rc
from dank_ref.features import FeatureKernel
from dank_ref.projection import project_A, project_svr
from dank_ref.scale_certificate import (
    decomposed_certificate_features,
    svm_certificate_features,
    svr_certificate_features,
)

from ._evidence import failure_evidence, wants_evidence
from ._report_text import failure_reason, format_report
from ._upper import fixed_kernel_gap

__all__ = ["certify", "format_report", "feature_kernel", "EvaluationError", "CHECKS",
           "CERT_TOL", "FEAS_RTOL", "F_RTOL"]

CERT_TOL = 1e-6
FEAS_RTOL = 1e-9  # docs/validity.md: violation <= 1e-9 * C * sqrt(n)
F_RTOL = 1e-6
TINY = float(np.finfo(float).tiny)

CHECKS = {
    "svm": ("alpha_low", "alpha_high", "equality", "gap", "bias", "F"),
    "svr": ("alpha_hat_low", "alpha_hat_high", "alpha_check_low", "alpha_check_high",
            "equality", "gap", "bias", "F"),
    "decomposed": ("alpha_low", "alpha_high", "gap", "F"),
}


class EvaluationError(RuntimeError):
    """The oracle could not evaluate the certificate (exit code 2, not "not certified")."""


def _check_tol(tol) -> float:
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real):
        raise TypeError(f"tol must be a real number, got {type(tol).__name__}")
    tol = float(tol)
    if not math.isfinite(tol) or tol <= 0:
        raise ValueError(f"tol must be a finite number > 0, got {tol!r}")
    return tol


_INSTANCE_KEYS = {"svm": ("K", "y", "C", "eta", "tau"),
                  "svr": ("K", "y", "C", "eta", "tau", "epsilon"),
                  "decomposed": ("K", "y", "C", "eta", "labels")}
_SOLUTION_KEYS = {"svm": ("alpha",), "svr": ("alpha_hat", "alpha_check"),
                  "decomposed": ("alpha",)}


def _check_keys(inst, sol) -> None:
    """Every key :func:`certify` reads is there: ``ValueError`` naming a missing one."""
    for what, d in (("inst", inst), ("sol", sol)):
        if not isinstance(d, dict):
            raise TypeError(f"{what} must be a dict, got {type(d).__name__}")
    task = inst.get("task")
    if task not in _INSTANCE_KEYS:
        raise ValueError(f"inst['task'] must be one of {tuple(_INSTANCE_KEYS)}, got {task!r}")
    if sol.get("task", task) != task:
        raise ValueError(f"the solution is for task {sol['task']!r} but the instance is task "
                         f"{task!r}")
    for what, d, keys in (("inst", inst, _INSTANCE_KEYS[task]),
                          ("sol", sol, _SOLUTION_KEYS[task])):
        missing = [k for k in keys if d.get(k) is None
                   and not (k == "K" and d.get("X") is not None)]  # blockwise: X, no K
        if missing:
            raise ValueError(f"{what} lacks {', '.join(map(repr, missing))} (required for task "
                             f"{task!r}; verification.certify_arrays validates raw arrays)")


def _check_pair(inst: dict, sol: dict) -> int:
    _check_keys(inst, sol)
    n = inst["y"].size
    for name in ("alpha", "alpha_hat", "alpha_check"):
        v = sol.get(name)
        if v is not None and v.shape != (n,):
            raise ValueError(f"solution field {name!r} has shape {v.shape}, the instance has "
                             f"n = {n}")
    if sol.get("F") is not None and sol["F"].shape != (n, n):
        raise ValueError(f"solution field 'F' has shape {sol['F'].shape}, expected ({n}, {n})")
    if sol.get("bias") is not None and inst["task"] == "decomposed":
        raise ValueError("task 'decomposed' has no bias")
    return n


def _feasibility(task, y, sol, C, n):
    """``{check: violation}`` for every constraint of the task (0 when satisfied); a vector
    ``C``: the largest ``alpha_i - C_i``."""
    if task == "svr":
        ah, ac = sol["alpha_hat"], sol["alpha_check"]
        return {"alpha_hat_low": max(0.0, -float(ah.min())),
                "alpha_hat_high": max(0.0, float(np.max(ah - C))),
                "alpha_check_low": max(0.0, -float(ac.min())),
                "alpha_check_high": max(0.0, float(np.max(ac - C))),
                "equality": abs(float(np.sum(ah) - np.sum(ac)))}
    a = sol["alpha"]
    out = {"alpha_low": max(0.0, -float(a.min())), "alpha_high": max(0.0, float(np.max(a - C)))}
    if task == "svm":
        out["equality"] = abs(float(y @ a))
    return out


def _project(task, y, sol, C):
    if task == "svm":
        return project_A(sol["alpha"], y, C)
    if task == "svr":
        return project_svr(np.concatenate([sol["alpha_hat"], sol["alpha_check"]]), C)
    return np.clip(sol["alpha"], 0.0, C)


def _reference_certificate(inst, p):
    """dank_ref's certificate at ``p``; returns ``(cert, d, lin, scale, Kw)``.

    dank_ref is called on the exactly rescaled instance ``(C K, C = 1, eta / C)`` at ``p / C``
    (:doc:`docs/validity.md </validity>`: ``v*(K, C, eta) = C v*(C K, 1, eta / C)``, ``a -> a / C``;
    ``F`` and the bias are unchanged), so that no absolute threshold inside it meets a tiny or huge
    ``C``; ``lower``, ``upper`` and ``gap`` are multiplied back by ``C``. A vector ``C`` is rescaled
    by its largest entry ``Cm``: ``(Cm K, C / Cm, eta / Cm)`` at ``p / Cm``.
    """
    task, K, y, C, eta, tau = (inst[k] for k in ("task", "K", "y", "C", "eta", "tau"))
    n = y.size
    Cm = _box_max(C)
    Cs = C / Cm if isinstance(C, np.ndarray) else 1.0
    Ks, etas, ps = Cm * K, eta / Cm, p / Cm
    moved = "dank_ref certified a point other than the (projected) submission"
    try:
        if task == "svm":
            c = rc.svm_certificate(Ks, y, ps, C=Cs, eta=etas, tau=tau, validate=False)
            cz = np.asarray(c.alpha)
        elif task == "decomposed":
            c = rc.decomposed_certificate(Ks, y, ps, C=Cs, eta=etas, labels=inst["labels"],
                                          validate=False)
            cz = np.asarray(c.alpha)
        else:
            c = rc.svr_certificate(Ks, y, ps[:n], ps[n:], C=Cs, epsilon=inst["epsilon"],
                                   eta=etas, tau=tau, validate=False)
            cz = np.asarray(c.alpha_hat) - np.asarray(c.alpha_check)
    except ValueError as exc:
        raise EvaluationError(f"dank_ref cannot certify this instance: {exc}") from exc
    lower, gap = Cm * float(c.lower), Cm * float(c.gap)
    if task == "svr":
        eps = inst["epsilon"]
        b = p[:n] - p[n:]
        if np.max(np.abs(Cm * cz - b), initial=0.0) > FEAS_RTOL * Cm * math.sqrt(n):
            raise EvaluationError(moved)
        lin = float(b @ y) - eps * float(np.sum(p))
        # dank_ref may remove the common part min(ah_i, ac_i) before certifying: that changes
        # lin (so the lower bound and the gap) by eps 1'(ah + ac - ah' - ac'); certify p as given
        removed = float(np.sum(p)) - Cm * float(np.sum(c.alpha_hat) + np.sum(c.alpha_check))
        lower, gap = lower - eps * removed, gap + eps * removed
        # P2's unit-consistent scale (docs/MATH.md section 5), at the point as given
        q = float(b @ ((np.asarray(c.F, dtype=float) * K) @ b))
        # (0 only for constant targets at d = 0 with eps 1'(ah + ac) = 0, where the gap is 0)
        scale = max(rc.svr_gap_scale(float(b @ y), eps * float(np.sum(p)), q, Cm, y), TINY)
        d, Kw = b, K
    else:
        if np.max(np.abs(Cm * cz - p), initial=0.0) > FEAS_RTOL * Cm * math.sqrt(n):
            raise EvaluationError(moved)
        lin = float(np.sum(p))
        d, scale = p * y, max(lin, TINY)
        Kw = K if task == "svm" else rc.block_kernel(K, inst["labels"])
    best_bias = None if task == "decomposed" else float(c.bias)
    return dict(lower=lower, gap=gap, F=np.asarray(c.F), bias=best_bias), d, lin, scale, Kw


def _primal_gap(G, d, y, C, lin, bias, task, eps):
    """``q + C loss(bias) - lin`` for the fixed kernel ``G`` (svm hinge / svr tube).

    svm: the smaller of that and the gap of the rescaled point ``(s w, s bias)``, ``s = 1 /
    min_i y_i (g_i + bias)`` when that margin is positive (``q (1 + s^2) / 2 - lin``, hinge 0;
    ``s`` enlarged by a few ulps until no computed margin is below 1): the same classifier
    ``sign(g + bias)``, judged at its best scale, as dank_ref's certificate does with its own
    bias. Without it a hard-margin solution's bias fails on rounding (margins ``1 - 1e-16``
    times a large ``C``) or on margins all slightly above 1 (``n = 2``).
    """
    g = G @ d
    q = float(d @ g)
    if task == "svr":
        return q + _weighted(C, np.maximum(0.0, np.abs(y - g - bias) - eps)) - lin
    margins = y * (g + bias)
    gap = q + _weighted(C, np.maximum(0.0, 1.0 - margins)) - lin
    return min(gap, rc.hard_margin_gap(q, lin, margins)[0])


def _box_max(C) -> float:
    """The largest box: ``max_i C_i`` of a vector ``C``, or the scalar ``C``."""
    return float(np.max(C)) if isinstance(C, np.ndarray) else C


def _weighted(C, v: np.ndarray) -> float:
    """``sum_i C_i v_i`` (a vector box) or ``C sum_i v_i`` (a scalar box)."""
    return float(C @ v) if isinstance(C, np.ndarray) else C * float(np.sum(v))


def feature_kernel(inst: dict, block_rows: int | None = None) -> FeatureKernel:
    """The kernel of an instance given by features (``inst["X"]`` and ``inst["kernel"]``, as
    :func:`verification.formats.load_instance` returns them) as dank_ref's
    :class:`~dank_ref.features.FeatureKernel`, evaluated in blocks of ``block_rows`` rows
    (default: blocks of at most ``dank_ref.features.BLOCK_BYTES``). ``O(n d)``."""
    info = inst["kernel"]
    params = {k: info[k] for k in ("sigma", "gamma", "degree", "coef0") if k in info}
    kernel = {"gaussian": "rbf", "polynomial": "poly"}.get(info["kernel"], info["kernel"])
    return FeatureKernel(inst["X"], kernel, block_rows=block_rows, **params)


def _check_options(block_rows, progress) -> None:
    if block_rows is not None and (isinstance(block_rows, bool)
                                   or not isinstance(block_rows, numbers.Integral)
                                   or block_rows < 1):
        raise ValueError(f"block_rows must be an integer >= 1 or None, got {block_rows!r}")
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable or None, got {type(progress).__name__}")


def certify(inst: dict, sol: dict, tol: float = CERT_TOL, reference: bool = False, *,
            block_rows: int | None = None, progress=None, evidence: bool | None = None) -> dict:
    """Check a submitted solution of an instance (every check: :mod:`verification.oracle`).

    Parameters
    ----------
    inst, sol : dict
        From :func:`verification.formats.load_instance` / :func:`~.formats.load_solution`.
    tol : float
        Required certified relative gap (finite, > 0).
    reference : bool
        Also run the optional cross-check by dank_fast (``dank_fast_rel_gap``,
        ``distance_to_reference``: a Newton solve at ``tol = 1e-10`` and dank_fast's own
        validation of ``K``, another ``O(n^3)``).  Informative only, never part of the
        verdict; without it dank_fast is not imported.
    block_rows : int, optional
        Blockwise route (an instance given by ``X`` whose ``K`` is ``None``): rows per kernel
        block (:func:`feature_kernel`); ignored by the dense route.
    progress : callable, optional
        Called as ``progress(phase, done, total)`` (the protocol of
        :func:`dank_ref.svm_certificate_features`): the blockwise route
        reports its row blocks or clusters, the dense route its one certificate (and the
        ``evidence`` of a failure, below) as 0 / 1 then 1 / 1.  Default: nothing is reported.
    evidence : bool, optional
        Dense route, a failed gap or ``F`` check at a feasible point: add ``evidence`` to the
        report (``verification._evidence``: dank_ref's reference optimum ``v*``, the
        point's value, the distance of a submitted ``F`` from ``F(alpha)``, the point's gap
        on related problems, and ``kind``, "not converged" or "a different problem").
        Default (None): when ``n <= 400`` (one reference solve by dank_ref, cached per
        instance); True: at any ``n``; False: never. Informative only, never the verdict.

    Returns
    -------
    dict
        ``certified`` (bool), ``failed`` (names of the failed checks, in the order of
        :data:`CHECKS`), ``reasons`` (one message per failed check), ``checks`` (per check:
        ``status`` "pass" / "fail" / "not evaluated" / "not submitted", ``value``, ``limit``),
        the bracket ``lower``, ``upper``, ``gap``, ``rel_gap``, ``scale``, ``best_bias``, the
        informative numbers and the solution's ``meta`` (when it has one).

    Raises
    ------
    ValueError, TypeError
        Bad input: ``tol``, a missing key (named), or an instance/solution task or size
        mismatch.  ``inst`` and ``sol`` are trusted otherwise (the loaders validate them;
        :func:`verification.certify_arrays` validates raw arrays).
    EvaluationError
        The certificate could not be evaluated (dank_ref refused or contradicted itself).
    """
    tol = _check_tol(tol)
    _check_options(block_rows, progress)
    if evidence is not None and not isinstance(evidence, bool):
        raise TypeError(f"evidence must be True, False or None, got {evidence!r}")
    n = _check_pair(inst, sol)
    task, y, C = inst["task"], inst["y"], inst["C"]
    inst = dict(inst, tau=inst.get("tau") or 0.0, epsilon=inst.get("epsilon"),
                labels=inst.get("labels"))
    eps = inst["epsilon"] or 0.0
    checks = {}
    rep = dict(task=task, n=n, tol=tol, checks=checks)
    if sol.get("meta") is not None:
        rep["meta"] = sol["meta"]

    feas_tol = FEAS_RTOL * _box_max(C) * math.sqrt(n)
    viol = _feasibility(task, y, sol, C, n)
    for name, v in viol.items():
        checks[name] = dict(status="pass" if v <= feas_tol else "fail", value=v, limit=feas_tol)
    feasible = all(v <= feas_tol for v in viol.values())

    z = np.concatenate([sol["alpha_hat"], sol["alpha_check"]]) if task == "svr" else sol["alpha"]
    p = z if all(v == 0.0 for v in viol.values()) else _project(task, y, sol, C)
    if inst.get("K") is None:  # features above the dense limit: blockwise, in bounded memory
        return _certify_blockwise(inst, sol, rep, z, feasible, tol,
                                  dict(block_rows=block_rows, progress=progress))
    if progress is not None:
        progress(f"dense certificate (eigh of {n} x {n})", 0, 1)
    c, d, lin, scale, Kw = _reference_certificate(inst, p)
    if progress is not None:
        progress(f"dense certificate (eigh of {n} x {n})", 1, 1)
    Fp = c["F"]
    gap, upper_from = c["gap"], "the primal at the point"
    stepped = fixed_kernel_gap(Fp * Kw, d, y, C, lin, task, eps)
    if stepped < gap:  # rounding may take it below 0, as dank_ref's own gap (kept at 0)
        gap, upper_from = stepped, "the primal after a Newton step of the fixed-F problem"
    rel_gap = gap / scale
    if rel_gap >= -tol:
        gap, rel_gap = max(gap, 0.0), max(rel_gap, 0.0)
    if not rel_gap >= -tol:
        raise EvaluationError(f"inconsistent certificate: lower bound {c['lower']!r} exceeds "
                              f"upper bound {c['lower'] + gap!r} (relative {rel_gap:.3g})")
    rep.update(projection_distance=float(np.linalg.norm(z - p)), lower=c["lower"],
               upper=c["lower"] + gap, gap=gap, scale=scale, rel_gap=rel_gap,
               best_bias=c["bias"], upper_from=upper_from,
               upper_at_point=c["lower"] + c["gap"])
    if not feasible:
        rep["evaluated_at"] = "the nearest feasible point (the submission is infeasible)"

    def opt_check(name, value, limit, submitted=True):
        checks[name] = _opt_check(value, limit, submitted, feasible)

    opt_check("gap", rel_gap, tol)
    if task != "decomposed":
        if sol.get("bias") is not None:
            gb = _primal_gap(Fp * Kw, d, y, C, lin, sol["bias"], task, eps)
            rep["gap_at_submitted_bias"] = gb
            opt_check("bias", gb / scale, tol)
        else:
            opt_check("bias", None, tol, submitted=False)
    if sol.get("F") is not None:
        err = float(np.max(np.abs(sol["F"] - Fp)))
        rep["F_error"] = err
        opt_check("F", err, F_RTOL * max(1.0, float(np.max(np.abs(Fp)))))
    else:
        opt_check("F", None, None, submitted=False)

    rep.update(_informative(inst, p, Fp * Kw, d, reference))
    _verdict(rep, sol, feasible)
    _add_evidence(rep, inst, sol, p, Fp, feasible, evidence, progress)
    return rep


def _add_evidence(rep, inst, sol, p, Fp, feasible, evidence, progress) -> None:
    """``rep["evidence"]`` of a failed dense report (``verification._evidence``: the
    reference optimum, the point's value, ``F`` against ``F(alpha)``, related problems, and
    which kind of wrong they point to); informative only, never part of the verdict."""
    if wants_evidence(rep, feasible, evidence):
        phase = "evidence (dank_ref's reference solve, related problems)"
        if progress is not None:
            progress(phase, 0, 1)
        rep["evidence"] = failure_evidence(inst, sol, p, rep, Fp)
        if progress is not None:
            progress(phase, 1, 1)


def _certify_blockwise(inst, sol, rep, z, feasible, tol, opts) -> dict:
    """The optimality checks of :func:`certify` for an instance given by ``X`` whose ``n x n``
    kernel exceeds the format's limit: dank_ref's certificates from features
    (:mod:`dank_ref.scale_certificate`, row blocks, never ``n x n``) at the point ``p``.
    A submitted ``F`` is not evaluated (an ``n x n`` field is refused by the format anyway);
    the informative numbers that need ``F o K`` are not computed. A feasible ``z`` (within
    ``1e-9 C sqrt(n)``) is certified exactly as given: its projection would move every
    coordinate by the rounding of ``y'z`` and fill the support; an infeasible one fails its
    feasibility checks and its optimality is not evaluated."""
    task, y, C, eta, tau = (inst[k] for k in ("task", "y", "C", "eta", "tau"))
    n, checks = y.size, rep["checks"]
    if not feasible:
        for name in ("gap", "bias", "F"):
            checks[name] = dict(status="not evaluated")
        if task == "decomposed":
            del checks["bias"]
        rep["evaluated_at"] = "nothing (the submission is infeasible; blockwise instance)"
        _verdict(rep, sol, feasible)
        return rep
    p = z
    fk = feature_kernel(inst, opts["block_rows"])
    bias = sol.get("bias") if task != "decomposed" else None
    progress = opts["progress"]
    try:
        if task == "svm":
            c = svm_certificate_features(fk, y, p, C=C, eta=eta, tau=tau, bias=bias,
                                         progress=progress)
        elif task == "svr":
            c = svr_certificate_features(fk, y, p[:n], p[n:], C=C, epsilon=inst["epsilon"],
                                         eta=eta, tau=tau, bias=bias, progress=progress)
        else:
            c = decomposed_certificate_features(fk, y, p, inst["labels"], C=C, eta=eta,
                                                progress=progress)
    except ValueError as exc:
        raise EvaluationError(f"dank_ref cannot certify this instance: {exc}") from exc
    if not c.rel_gap >= -tol:
        raise EvaluationError(f"inconsistent certificate: lower bound {c.lower!r} exceeds "
                              f"upper bound {c.upper!r}")
    rep.update(projection_distance=0.0, lower=c.lower, upper=c.upper, gap=c.gap, scale=c.scale,
               rel_gap=c.rel_gap, best_bias=c.bias, route=c.route,
               upper_from="the primal at the point", upper_at_point=c.upper)

    def opt_check(name, value, limit, submitted=True):
        checks[name] = _opt_check(value, limit, submitted, feasible)

    opt_check("gap", c.rel_gap, tol)
    if task != "decomposed":
        if bias is not None:
            rep["gap_at_submitted_bias"] = c.gap_at_bias
            opt_check("bias", c.rel_gap_at_bias, tol)
        else:
            opt_check("bias", None, tol, submitted=False)
    checks["F"] = dict(status="not submitted" if sol.get("F") is None else "not evaluated")
    _verdict(rep, sol, feasible)
    return rep


def _verdict(rep: dict, sol: dict, feasible: bool) -> None:
    """The report's failed checks (in :data:`CHECKS` order), their reasons, and the verdict:
    certified when the point is feasible and no check failed."""
    checks = rep["checks"]
    rep["failed"] = [k for k in CHECKS[rep["task"]] if checks[k]["status"] == "fail"]
    rep["reasons"] = [failure_reason(k, checks[k], rep, sol) for k in rep["failed"]]
    rep["certified"] = feasible and not rep["failed"]


def _opt_check(value, limit, submitted: bool, feasible: bool) -> dict:
    """One optimality check: not submitted, not evaluated (infeasible point), pass or fail."""
    if not submitted:
        return dict(status="not submitted")
    if not feasible:
        return dict(status="not evaluated", value=value, limit=limit)
    return dict(status="pass" if value <= limit else "fail", value=value, limit=limit)


def _informative(inst, p, G, d, reference) -> dict:
    """``kkt_residual`` (dank_ref's projection) and, if ``reference``, dank_fast's cross-check.

    Never part of the verdict: a failure of the cross-check is reported as "unavailable".
    """
    task, y, C = inst["task"], inst["y"], inst["C"]
    out = {}
    g = G @ d
    if task == "svr":
        eps = inst["epsilon"]
        grad = np.concatenate([y - eps - g, -y - eps + g])
        out["kkt_residual"] = float(np.linalg.norm(project_svr(p + grad, C) - p))
    elif task == "svm":
        grad = 1.0 - y * g
        out["kkt_residual"] = float(np.linalg.norm(project_A(p + grad, y, C) - p))
    else:
        grad = 1.0 - y * g
        out["kkt_residual"] = float(np.linalg.norm(np.clip(p + grad, 0.0, C) - p))
    if reference:
        out.update(_dank_fast_cross_check(inst, p))
    return out


def _dank_fast_cross_check(inst, p) -> dict:
    """The optional cross-check by dank_fast (``reference=True``); informative only."""
    task, K, y, C, eta, tau = (inst[k] for k in ("task", "K", "y", "C", "eta", "tau"))
    n = y.size
    out = {}
    try:
        # optional path: the oracle's verdict never needs dank_fast (nor scikit-learn)
        import dank_fast
    except ImportError as exc:  # pragma: no cover - dank_fast ships with the oracle today
        why = f"unavailable: {type(exc).__name__}: {exc}"
        return dict(dank_fast_rel_gap=why, distance_to_reference=why)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if task != "decomposed":
            try:
                if task == "svm":
                    cf = dank_fast.svm_certificate(K, y, p, C=C, eta=eta, tau=tau)
                else:
                    cf = dank_fast.svr_certificate(K, y, p[:n], p[n:], C=C,
                                                   epsilon=inst["epsilon"], eta=eta, tau=tau)
                out["dank_fast_rel_gap"] = float(cf.rel_gap)
            except Exception as exc:  # noqa: BLE001 - informative only
                out["dank_fast_rel_gap"] = f"unavailable: {type(exc).__name__}: {exc}"
        try:
            if task == "svm":
                ref = dank_fast.solve_svm(K, y, C=C, eta=eta, tau=tau, method="newton",
                                          tol=1e-10).alpha
            elif task == "svr":
                r = dank_fast.solve_svr(K, y, C=C, epsilon=inst["epsilon"], eta=eta, tau=tau,
                                        method="newton", tol=1e-10)
                ref = np.concatenate([r.extra["alpha_hat"], r.extra["alpha_check"]])
            else:
                ref = dank_fast.solve_decomposed(K, y, C=C, eta=eta, labels=inst["labels"],
                                                 tol=1e-10).alpha
            out["distance_to_reference"] = float(np.linalg.norm(p - ref))
        except Exception as exc:  # noqa: BLE001 - informative only
            out["distance_to_reference"] = f"unavailable: {type(exc).__name__}: {exc}"
    return out
