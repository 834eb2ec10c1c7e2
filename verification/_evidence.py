"""Which kind of wrong a failed certificate points to, on an instance small enough for dank_ref.

A failed gap says only that the point is not *certified*. When the gap or ``F`` check fails at
a feasible point of a dense instance with ``n <= EVIDENCE_MAX_N``, :func:`failure_evidence`
gathers what tells the two usual causes apart and :func:`verification.oracle.certify` adds it
to its report as ``evidence`` (informative only: the verdict never depends on it):

* ``v_star_lower``, ``v_star_upper``: the reference optimum ``v*``, bracketed by dank_ref's own
  solve of the instance (``dank_ref.solve_svm`` / ``solve_svr`` / ``solve_decomposed``, at a
  certified relative gap of :data:`REFERENCE_TOL`, at most :data:`REFERENCE_TIME_LIMIT`
  seconds; ``reference_status`` says whether it got there, ``null`` bounds when it failed);
* ``value``: ``h(alpha)``, the submitted point's objective (the oracle's certified ``lower``),
  and ``shortfall``: ``(v_star_lower - value) / scale``, a *proved* relative suboptimality
  when positive (``scale`` as in the gap check);
* ``F_distance``: ``||F - F(alpha)||_F / ||F(alpha)||_F`` of a submitted ``F`` (``F(alpha)``
  DANK's inner minimiser at the submitted point), and ``F_nearest``: the related problem
  (below) whose inner minimiser at ``alpha`` the submitted ``F`` is, if any;
* ``related``: the certified relative gap of the point on each related problem a slip of an
  implementation produces: the plain SVM / SVR with ``F = 11'`` (the kernel ``K``; P3 its
  ``Kbar``), DANK with ``eta`` times :data:`ETA_FACTORS`, with ``tau`` times
  :data:`TAU_FACTORS` (``tau > 0``; P1, P2), for P3 DANK on the whole ``K`` (the clusters
  ignored) and, when ``F`` is submitted, the fixed-kernel problem with the submitted kernel
  ``F o K`` when that is a kernel (symmetric, PSD; whatever inner problem gave that ``F``,
  the outer one is right if the point is optimal for it; ``F_distance`` ``null``). Same
  certificate as the gap check (dank_ref's bracket at ``alpha``, the smaller of the primal
  at the point and after a Newton step of the fixed-``F`` problem), relative to the same
  ``scale``;
* ``reference_distance``: ``||alpha - alpha*|| / ||alpha*||`` to dank_ref's solution, and
  ``ascent_cosine``: the cosine between the projected-gradient step of ``h`` at ``alpha``
  (step ``1 / lambda_max(F(alpha) o K)``) and ``alpha* - alpha``: positive when DANK's own
  ascent moves the point towards the reference's solution.

The criteria of ``kind`` (first that applies):

1. ``"a different problem"`` if a submitted ``F`` is not ``F(alpha)``: ``F_distance >``
   :data:`F_REL_LIMIT` (``1e-6``, ten orders above the rounding of an ``eigh``, and below
   what a slip moves: doubling ``tau`` moves the top eigenvalue, about ``n``, by ``tau / 2``;
   a mis-scaled ``eta`` scales ``Gamma``);
2. ``"a different problem"`` if the point is near-optimal for a related problem: its relative
   gap there is at most :data:`FIT_MAX` (``1e-3``) and at most :data:`FIT_RATIO` (``1/100``)
   of its gap on the instance. A point stopped early is about as far from every related
   optimum as from DANK's (its error is not aimed at another problem), so two orders of
   magnitude do not happen by chance; a point solved for another problem is at its gap there
   (rounding, or that solver's own tolerance). tests/test_oracle_evidence.py checks both
   kinds on points of each sort;
3. ``"unclear"`` if ``ascent_cosine <= 0`` (DANK's ascent at the point leads away from the
   reference's solution: for a concave ``h`` and a short step this does not happen, so the
   reference solve or the evaluation is in doubt);
4. ``"not converged"`` otherwise: ``F`` matches ``F(alpha)`` (or none was given), no related
   problem fits, the value is below ``v*`` and DANK's ascent at the point leads towards the
   reference's solution: a solve to a tighter tolerance would close the gap. Without ``F`` a
   different *inner* problem outside the related ones tried is not excluded, and ``why``
   says so.

Cost: the reference solve (its first conic stage imports CVXPY; dank_ref's cheap starts often
certify without one), cached per instance (:data:`CACHE_SIZE` instances), and one
dense certificate per related problem (``O(n^3)`` each).
"""

from __future__ import annotations

import collections
import hashlib
import math
import time
import warnings

import numpy as np

import dank_ref
import dank_ref.certificate as rc
from dank_ref.projection import project_A, project_svr
from dank_ref.validation import box_max

from ._upper import fixed_kernel_gap

__all__ = ["failure_evidence", "wants_evidence", "format_evidence", "EVIDENCE_MAX_N",
           "F_REL_LIMIT", "FIT_RATIO", "FIT_MAX", "ETA_FACTORS", "TAU_FACTORS", "KINDS"]

#: The largest ``n`` for which a failed certificate gets its evidence (the reference solve).
EVIDENCE_MAX_N = 400
#: The reference solve's certified relative gap and its time limit in seconds.
REFERENCE_TOL = 1e-9
REFERENCE_TIME_LIMIT = 60.0
#: A submitted ``F`` farther than this (relative Frobenius) from ``F(alpha)`` is another ``F``.
F_REL_LIMIT = 1e-6
#: A related problem fits when the point's relative gap there is at most ``FIT_RATIO`` times
#: its gap on the instance and at most ``FIT_MAX`` (near-optimal there, not just less far).
FIT_RATIO = 1e-2
FIT_MAX = 1e-3
#: The mis-scalings of ``eta`` and ``tau`` tried (a dropped or doubled 1/2 or 1/4, no ``tau``).
ETA_FACTORS = (0.25, 0.5, 2.0, 4.0)
TAU_FACTORS = (0.0, 0.5, 2.0)
KINDS = ("not converged", "a different problem", "unclear")
#: The related problem of a submitted ``F``: the fixed-kernel problem with its ``F o K``.
SUBMITTED = {"svm": "the SVM with the submitted kernel F o K",
             "svr": "the SVR with the submitted kernel F o K",
             "decomposed": "the SVM without bias with the submitted kernel F o Kbar"}
CACHE_SIZE = 8
_TINY = float(np.finfo(float).tiny)
_CACHE: collections.OrderedDict = collections.OrderedDict()


def wants_evidence(rep: dict, feasible: bool, evidence) -> bool:
    """Whether :func:`verification.oracle.certify` adds ``evidence`` to a dense report:
    ``evidence`` True, or None (automatic) and ``n <= EVIDENCE_MAX_N``; and the point is
    feasible, its scale positive and its gap or ``F`` check failed."""
    if evidence is False or not feasible or rep["certified"]:
        return False
    if evidence is None and rep["n"] > EVIDENCE_MAX_N:
        return False
    return bool({"gap", "F"} & set(rep["failed"])) and rep["scale"] > _TINY


# ------------------------------------------------------------------------------ the reference
def _key(inst: dict) -> str:
    h = hashlib.sha256()
    for k in ("task", "eta", "tau", "epsilon"):
        h.update(repr(inst.get(k)).encode())
    for k in ("K", "y", "labels", "C"):  # C: a scalar or per-sample boxes, hashed whole
        v = inst.get(k)
        if v is None:
            h.update(b"-")
        else:
            v = np.ascontiguousarray(v)
            h.update(f"{v.dtype.str}{v.shape}".encode() + v.tobytes())
    return h.hexdigest()


def _reference(inst: dict) -> dict:
    """dank_ref's solve of the instance: ``lower``, ``upper``, the point ``z`` (svr: ``[ah;
    ac]``), ``status``, ``seconds``; ``status`` ``"failed: ..."`` (and no bounds) on an error.
    Cached per instance."""
    key = _key(inst)
    if key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    task, K, y, C, eta, tau = (inst[k] for k in ("task", "K", "y", "C", "eta", "tau"))
    opts = dict(C=C, eta=eta, tol=REFERENCE_TOL, time_limit=REFERENCE_TIME_LIMIT)
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if task == "svm":
                r = dank_ref.solve_svm(K, y, tau=tau, **opts)
                z = np.asarray(r.alpha, float)
            elif task == "svr":
                r = dank_ref.solve_svr(K, y, epsilon=inst["epsilon"], tau=tau, **opts)
                z = np.concatenate([r.alpha_hat, r.alpha_check]).astype(float)
            else:
                labels = inst["labels"]
                r = dank_ref.solve_decomposed(K, y, np.zeros(y.size, np.int64)
                                              if labels is None else labels, **opts)
                z = np.asarray(r.alpha, float)
        out = dict(lower=float(r.lower), upper=float(r.upper), z=z, status=r.status)
    except Exception as exc:  # noqa: BLE001 - informative only: the report says why
        out = dict(lower=None, upper=None, z=None,
                   status=f"failed: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
    out["seconds"] = time.perf_counter() - t0
    _CACHE[key] = out
    while len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return out


# ------------------------------------------------------------------------- related problems
def _related(inst: dict) -> list[tuple[str, dict | None]]:
    """``(name, instance)`` of each related problem; instance ``None``: the plain problem."""
    task, eta, tau = inst["task"], inst["eta"], inst["tau"]
    plain = {"svm": "the plain SVM (F = 11', kernel K)",
             "svr": "the plain SVR (F = 11', kernel K)",
             "decomposed": "the plain SVM without bias on Kbar (F = 11')"}[task]
    out = [(plain, None)]
    out += [(f"DANK with eta x {f:g}", dict(inst, eta=f * eta)) for f in ETA_FACTORS]
    if task != "decomposed" and tau > 0:
        out += [("DANK with tau = 0" if f == 0 else f"DANK with tau x {f:g}",
                 dict(inst, tau=f * tau)) for f in TAU_FACTORS]
    labels = inst.get("labels")
    if task == "decomposed" and labels is not None and np.unique(labels).size > 1:
        out.append(("DANK on the whole K (P3 without its clusters)", dict(inst, labels=None)))
    return out


def _kernel(inst: dict) -> np.ndarray:
    K = inst["K"]
    if inst["task"] == "decomposed" and inst.get("labels") is not None:
        return rc.block_kernel(K, inst["labels"])
    return K


def _d_lin(inst: dict, p: np.ndarray):
    """``d`` (``a o y``; svr ``b``) and the dual's linear part at the point ``p``."""
    y = inst["y"]
    if inst["task"] == "svr":
        n = y.size
        d = p[:n] - p[n:]
        return d, float(d @ y) - inst["epsilon"] * float(np.sum(p))
    return p * y, float(np.sum(p))


def _plain_gap(inst: dict, G: np.ndarray, d: np.ndarray, lin: float) -> float:
    """Duality gap of the fixed-kernel SVM / SVR with kernel ``G`` at ``d``: the primal at the
    induced ``w`` with its best bias (svm: or the hard-margin point), or after a Newton step.
    A vector ``C`` weights each point's loss by its box (docs/MATH.md section 14)."""
    task, y, C = inst["task"], inst["y"], inst["C"]
    eps = inst.get("epsilon") or 0.0
    g = G @ d
    q = float(d @ g)
    if task == "svr":
        r = y - g
        Cw = np.concatenate([C, C]) if isinstance(C, np.ndarray) else C
        _, loss = rc.weighted_bias(np.concatenate([r - eps, r + eps]),
                                   np.concatenate([-np.ones_like(r), np.ones_like(r)]), Cw)
        gap = q + loss - lin
    elif task == "svm":
        gap = rc.svm_primal_gap(g, d, y, C, lin)[0]
    else:
        loss = float(np.sum(C * np.maximum(0.0, 1.0 - y * g)))
        gap = min(q + loss - lin, rc.hard_margin_gap(q, lin, y * g)[0])
    return min(gap, fixed_kernel_gap(G, d, y, C, lin, task, eps))


def _dank_gap(inst: dict, p: np.ndarray, d: np.ndarray, lin: float):
    """``(gap, F(p))`` of DANK on ``inst`` at ``p``: dank_ref's certificate on the exactly
    rescaled instance ``(Cm K, C / Cm, eta / Cm)`` at ``p / Cm``, ``Cm`` the largest box (as
    the oracle's gap check), the smaller of its gap and the Newton-stepped one; svr certified
    as given (``ah + ac`` as submitted)."""
    task, K, y, C, eta, tau = (inst[k] for k in ("task", "K", "y", "C", "eta", "tau"))
    n = y.size
    Cm = box_max(C)
    Cs = C / Cm if isinstance(C, np.ndarray) else 1.0
    if task == "svm":
        c = rc.svm_certificate(Cm * K, y, p / Cm, C=Cs, eta=eta / Cm, tau=tau, validate=False)
        gap = Cm * float(c.gap)
    elif task == "decomposed":
        c = rc.decomposed_certificate(Cm * K, y, p / Cm, C=Cs, eta=eta / Cm,
                                      labels=inst.get("labels"), validate=False)
        gap = Cm * float(c.gap)
    else:
        eps = inst["epsilon"]
        c = rc.svr_certificate(Cm * K, y, p[:n] / Cm, p[n:] / Cm, C=Cs, epsilon=eps,
                               eta=eta / Cm, tau=tau, validate=False)
        removed = float(np.sum(p)) - Cm * float(np.sum(c.alpha_hat) + np.sum(c.alpha_check))
        gap = Cm * float(c.gap) + eps * removed
    F = np.asarray(c.F, float)
    G = F * _kernel(inst)
    return min(gap, fixed_kernel_gap(G, d, y, C, lin, task, inst.get("epsilon") or 0.0)), F


def _rel_distance(A: np.ndarray, B: np.ndarray) -> float:
    """``||A - B||_F / ||B||_F`` (``||A||_F`` when ``B = 0``; 0 when both are 0)."""
    den = max(float(np.linalg.norm(B)), float(np.linalg.norm(A)) if not np.any(B) else 0.0)
    num = float(np.linalg.norm(A - B))
    return 0.0 if num == 0.0 else num / max(den, _TINY)


def _related_gaps(inst: dict, p: np.ndarray, scale: float, F_sub):
    """Per related problem ``{problem, rel_gap, F_distance}`` (``F_distance`` of a submitted
    ``F`` from that problem's inner minimiser at ``p``; ``None`` without ``F``)."""
    d, lin = _d_lin(inst, p)
    n = inst["y"].size
    out = []
    for name, other in _related(inst):
        try:
            if other is None:
                gap = _plain_gap(inst, _kernel(inst), d, lin)
                F = np.ones((n, n))
            else:
                gap, F = _dank_gap(other, p, d, lin)
        except (ValueError, FloatingPointError, np.linalg.LinAlgError):
            continue  # e.g. a mis-scaled instance outside the representable range
        rel = max(gap, 0.0) / scale
        out.append(dict(problem=name, rel_gap=_finite(rel),
                        F_distance=None if F_sub is None else _finite(_rel_distance(F_sub, F))))
    G = None if F_sub is None else _psd_kernel(np.asarray(F_sub, float) * _kernel(inst))
    if G is not None:  # the outer problem of the submitted kernel, whatever its F
        gap = _plain_gap(inst, G, d, lin)
        out.append(dict(problem=SUBMITTED[inst["task"]],
                        rel_gap=_finite(max(gap, 0.0) / scale), F_distance=None))
    return out


def _psd_kernel(G: np.ndarray):
    """``G`` symmetrised if it is a kernel (symmetric and PSD up to ``1e-10`` relative), else
    ``None``: the fixed-kernel problem of an indefinite ``G`` is not a convex SVM and its
    "gap" proves nothing."""
    top = float(np.max(np.abs(G))) if G.size else 0.0
    if not top > 0.0 or np.max(np.abs(G - G.T)) > 1e-10 * top:
        return None
    G = 0.5 * (G + G.T)
    lam = np.linalg.eigvalsh(G)
    return G if lam[0] >= -1e-10 * max(abs(lam[-1]), top) else None


# ------------------------------------------------------------------------------- the ascent
def _ascent_cosine(inst: dict, p: np.ndarray, G: np.ndarray, z_ref: np.ndarray):
    """Cosine between DANK's projected-gradient step at ``p`` and ``z_ref - p``."""
    task, y, C = inst["task"], inst["y"], inst["C"]
    d, _ = _d_lin(inst, p)
    g = G @ d
    top = float(np.linalg.eigvalsh(G)[-1]) if G.size else 0.0
    if task == "svr":
        eps = inst["epsilon"]
        grad = np.concatenate([y - eps - g, -y - eps + g])
        step = 1.0 / (2.0 * top) if top > 0 else 1.0
        move = project_svr(p + step * grad, C) - p
    else:
        grad = 1.0 - y * g
        step = 1.0 / top if top > 0 else 1.0
        q = p + step * grad
        move = (project_A(q, y, C) if task == "svm" else np.clip(q, 0.0, C)) - p
    to_ref = z_ref - p
    den = float(np.linalg.norm(move)) * float(np.linalg.norm(to_ref))
    return None if not den > 0.0 else _finite(float(move @ to_ref) / den)


def _finite(v):
    return float(v) if v is not None and math.isfinite(v) else None


# ---------------------------------------------------------------------------- the evidence
def failure_evidence(inst: dict, sol: dict, p: np.ndarray, rep: dict, F_p: np.ndarray) -> dict:
    """The ``evidence`` of a failed dense report (module docstring): numbers and ``kind``.

    ``inst`` as :func:`verification.oracle.certify` completes it (``tau``, ``epsilon``,
    ``labels`` present), ``p`` the certified point (svr ``[ah; ac]``), ``rep`` the report so
    far (``lower``, ``scale``, ``rel_gap``, ``tol``), ``F_p = F(p)``.
    """
    scale = rep["scale"]
    ref = _reference(inst)
    F_sub = sol.get("F")
    ev = dict(kind=None, why=None, value=_finite(rep["lower"]), v_star_lower=_finite(ref["lower"]),
              v_star_upper=_finite(ref["upper"]), reference_status=ref["status"],
              reference_seconds=round(ref["seconds"], 3), shortfall=None,
              F_distance=None if F_sub is None else _finite(_rel_distance(F_sub, F_p)),
              F_nearest=None, related=_related_gaps(inst, p, scale, F_sub),
              reference_distance=None, ascent_cosine=None)
    if ref["lower"] is not None:
        ev["shortfall"] = _finite((ref["lower"] - rep["lower"]) / scale)
        z = ref["z"]
        ev["reference_distance"] = _finite(float(np.linalg.norm(p - z))
                                           / max(float(np.linalg.norm(z)), _TINY))
        ev["ascent_cosine"] = _ascent_cosine(inst, p, F_p * _kernel(inst), z)
    if F_sub is not None:
        near = [r for r in ev["related"] if r["F_distance"] is not None
                and r["F_distance"] <= F_REL_LIMIT]
        if near:
            ev["F_nearest"] = min(near, key=lambda r: r["F_distance"])["problem"]
    ev["kind"], ev["why"] = _kind(ev, rep)
    return ev


def _best_fit(ev: dict, rep: dict):
    """The related problem on which the point's gap is smallest, if it fits (``FIT_RATIO``)."""
    gaps = [r for r in ev["related"] if r["rel_gap"] is not None]
    if not gaps:
        return None
    best = min(gaps, key=lambda r: r["rel_gap"])
    fits = best["rel_gap"] <= min(FIT_RATIO * rep["rel_gap"], FIT_MAX)
    return best if fits else None


def _kind(ev: dict, rep: dict) -> tuple[str, str]:
    fit = _best_fit(ev, rep)
    here = f"{rep['rel_gap']:.2g} here"
    fits = (f"alpha is near-optimal for {fit['problem']} (relative gap {fit['rel_gap']:.2g} "
            f"there, {here})") if fit else None
    if ev["F_distance"] is not None and ev["F_distance"] > F_REL_LIMIT:
        what = (f"it is the inner minimiser of {ev['F_nearest']}" if ev["F_nearest"]
                else "it is the inner minimiser of none of the related problems tried")
        return "a different problem", (
            f"the submitted F is not F(alpha): relative Frobenius distance "
            f"{ev['F_distance']:.2g} > {F_REL_LIMIT:g}, so the inner minimiser is wrong; {what}"
            + (f"; {fits}" if fits else ""))
    if fits:
        return "a different problem", fits
    cos = ev["ascent_cosine"]
    if cos is not None and cos <= 0.0:
        return "unclear", (f"no related problem fits, but DANK's ascent at alpha leads away "
                           f"from the reference solution (cosine {cos:.2g})")
    parts = ["F matches F(alpha)" if ev["F_distance"] is not None else
             "no F submitted (a different inner problem outside those tried is not excluded)",
             "no related problem fits (best: "
             + _best_related(ev) + ")"]
    if ev["shortfall"] is not None:
        parts.append(_value_words(ev))
    if cos is not None:
        parts.append(f"DANK's ascent at alpha leads towards the reference solution "
                     f"(cosine {cos:.2g})")
    return "not converged", "; ".join(parts) + ": a solve to a tighter tol closes the gap"


def _best_related(ev: dict) -> str:
    gaps = [r for r in ev["related"] if r["rel_gap"] is not None]
    if not gaps:
        return "none evaluated"
    best = min(gaps, key=lambda r: r["rel_gap"])
    return f"{best['problem']}, relative gap {best['rel_gap']:.2g}"


def _value_words(ev: dict) -> str:
    s = ev["shortfall"]
    if s > 0:
        return f"h(alpha) is below v* by at least {s:.2g} x scale (proved by dank_ref's bound)"
    return "h(alpha) is within the reference's bracket of v*"


def format_evidence(ev: dict) -> list[str]:
    """The report's lines of ``evidence``, indented for
    :func:`verification.oracle.format_report`."""
    lines = [f"  evidence: {ev['kind']} (informative only; dank_ref's reference solve and "
             "related problems, docs/user_guide/checking.md)",
             f"    why: {ev['why']}"]
    if ev["v_star_lower"] is not None:
        lines.append(f"    v*: in [{ev['v_star_lower']!r}, {ev['v_star_upper']!r}] (dank_ref, "
                     f"{ev['reference_status']}, {ev['reference_seconds']:.3g} s)")
    else:
        lines.append(f"    v*: unavailable (dank_ref {ev['reference_status']})")
    tail = "" if ev["shortfall"] is None else f" (v* - h(alpha) >= {ev['shortfall']:.3g} x scale)"
    lines.append(f"    h(alpha): {ev['value']!r}{tail}")
    if ev["F_distance"] is not None:
        lines.append(f"    F_distance: {ev['F_distance']:.3g} (relative Frobenius, F to F(alpha))"
                     + (f"; F is that of {ev['F_nearest']}" if ev["F_nearest"] else ""))
    if ev["reference_distance"] is not None:
        cos = ev["ascent_cosine"]
        lines.append(f"    reference_distance: {ev['reference_distance']:.3g}; ascent_cosine: "
                     + ("n/a" if cos is None else f"{cos:.3g}"))
    rel = ", ".join(f"{r['problem']} {r['rel_gap']:.2g}" for r in ev["related"]
                    if r["rel_gap"] is not None)
    lines.append(f"    related problems (relative gap of alpha): {rel}")
    return lines
