"""Run every claim check and the solver cross-check; write report.md, results.json, figures.

``results.json`` layout, version 2 (``"version": 2``; version 1 had no version field):

* ``verdicts``: one object per claim (:class:`verification.study.claims._common.Verdict` fields plus
  ``name``, the paper's numbering and a description).  Changed from version 1:
  ``worst_ratio`` is the largest ``lhs / rhs`` over evaluations with ``rhs > 0`` and ``null``
  when there is none (version 1 mixed in ``"inf"``/``"-inf"`` strings from non-positive
  bounds); ``status`` may also be ``VIOLATED-DEGENERATE`` or ``VACUOUS``; new fields
  ``n_violations``, ``n_degenerate``, ``n_premise_met``, ``degenerate_where``,
  ``degenerate_counterexample_path``, ``headline``, ``vacuity``.
* ``summary``: ``counts`` of each status and ``violations``, the substantive violations sorted
  by ratio (the headline numbers).
* ``solvers``: the cross-check rows; new field ``outcome`` (see :func:`outcome_of`).
* JSON has no ``inf``/``nan``: non-finite numbers are written as ``null``.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings

import numpy as np

from .claims import GROUPS, run_group
from .claims._common import (
    RESULTS_VERSION,
    STATUSES,
    Verdict,
    _jsonable,
    draw_instance,
    fmt_ratio,
)
from .claims.empirical import check_EMP
from .claims.paper import CLAIMS, display_name
from .report_figures import CAPTIONS, figures

CROSS_TOL = 1e-8  # requested certified relative gap in the cross-check
EARLY_TOL = 1e-6  # a paper-rule stop above this certified relative gap is "premature"


def log(msg):
    print(f"[dank-verify] {msg}", file=sys.stderr, flush=True)


def outcome_of(method: str, status: str, rel_gap: float) -> str:
    """Plain-words outcome of one cross-check solve.

    ``accelerated``/``newton`` stop on the certified gap (``"certified"`` when it reached
    :data:`CROSS_TOL`).  ``paper`` (Algorithm 1 as printed) and ``pgm`` (eq. (17)) stop on
    the paper's own rule ``||a_t - a_{t-1}|| <= 1e-4`` or at ``t_max = 2000``: ``"stopped by
    its rule before the optimum"`` when the rule fired while the certified relative gap was
    still above :data:`EARLY_TOL`.
    """
    if status == "converged":
        return f"certified (rel. gap <= {CROSS_TOL:g})"
    if status == "stopped":
        if rel_gap > EARLY_TOL:
            return "stopped by its rule before the optimum"
        return "stopped by its rule near the optimum"
    if status == "max_iter":
        return "iteration limit reached"
    return status


def solver_crosscheck(rng, budget=1, n_inst=None):
    """dank_fast methods vs dank_ref on small instances."""
    # start-up: dank_fast imports scikit-learn (seconds); only this function needs it
    from dank_fast import solve_svm

    try:
        # start-up: dank_ref imports cvxpy (seconds); only this function needs it
        import dank_ref
    except ImportError:
        dank_ref = None
    rows = []
    n_inst = n_inst or 2 * budget
    for k in range(n_inst):
        inst = draw_instance(rng, n_range=(8, 16), tau_large=False)
        K, y, C, eta, tau = inst["K"], inst["y"], inst["C"], inst["eta"], inst["tau"]
        ref_val = None
        if dank_ref is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    ref = dank_ref.solve_svm(K, y, C=C, eta=eta, tau=tau, solver="SCS")
                    ref_val = (ref.lower, ref.upper)
                except Exception as exc:  # noqa: BLE001
                    log(f"dank_ref failed on instance {k}: {exc!r}")
        for method in ("accelerated", "newton", "paper", "pgm"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = solve_svm(K, y, C=C, eta=eta, tau=tau, method=method, tol=CROSS_TOL,
                              max_iter=2000 if method in ("paper", "pgm") else None)
            agree = None
            if ref_val is not None:
                # the two certified brackets must overlap
                agree = bool(r.lower <= ref_val[1] + 1e-9 * max(1, abs(r.lower))
                             and ref_val[0] <= r.upper + 1e-9 * max(1, abs(r.upper)))
            rows.append(dict(instance=k, n=int(y.size), C=C, eta=eta, tau=tau, method=method,
                             status=r.status, rel_gap=float(r.rel_gap), n_iter=int(r.n_iter),
                             time=float(r.time),
                             stopped_before_optimal=bool(r.status == "stopped"
                                                         and r.rel_gap > EARLY_TOL),
                             outcome=outcome_of(method, r.status, float(r.rel_gap)),
                             brackets_overlap_ref=agree))
    return rows


# ----------------------------------------------------------------------------------------------
# the run and the report
# ----------------------------------------------------------------------------------------------
def summarize(verdicts) -> dict:
    """Counts of each status and the substantive violations sorted by ratio (largest first)."""
    counts = {s: 0 for s in STATUSES}
    for v in verdicts:
        counts[v.status] += 1
    viol = sorted(((v.claim, v.worst_ratio) for v in verdicts
                   if v.status == "VIOLATED" and v.worst_ratio is not None),
                  key=lambda t: -t[1])
    return dict(counts=counts, violations=[dict(claim=c, ratio=r) for c, r in viol])


def run_all(out="dank-report", seed=0, budget=1, groups=GROUPS, make_figures=True,
            crosscheck=True):
    """Check the paper's claims, cross-check the solvers and write the study's report.

    Writes ``out/report.md`` and ``out/results.json`` (and the figures and any saved
    counterexamples under ``out``). A claim group whose check crashes is reported as
    ``INCONCLUSIVE`` with the exception, not raised.

    Parameters
    ----------
    out : str, optional
        Output directory (created if missing; files of the same names are replaced).
    seed : int, optional
        Seed of every random instance; the same seed and budget give the same verdicts.
    budget : int, optional
        Search budget multiplier (>= 1): 1 is ``dank-verify --quick``, 6 is ``--full``.
    groups : sequence of str, optional
        Claim groups to run (default: every group, ``verification.study.claims.GROUPS``).
    make_figures : bool, optional
        Draw the figures (skipped, with a message, when matplotlib is not installed).
    crosscheck : bool, optional
        Run the solver cross-check of dank_fast against dank_ref.

    Returns
    -------
    dict
        The content of ``results.json``: ``summary``, ``verdicts`` (one per claim, with its
        status and worst ratio), ``solvers`` (the cross-check rows), ``figures``, ``seed``,
        ``budget`` and timings.

    Raises
    ------
    OSError
        If ``out`` or a file in it cannot be written.

    Notes
    -----
    Time: budget 1 (``--quick``) takes under a minute on 2 cores; the searches grow about
    linearly with ``budget``. Memory: the dense kernels of small generated instances, one
    instance at a time.
    """
    os.makedirs(out, exist_ok=True)
    t0 = time.perf_counter()
    verdicts, emp_data = [], None
    for i, g in enumerate(groups):
        log(f"({i + 1}/{len(groups)}) claim group {g} ...")
        rng = np.random.default_rng([seed, i])
        t = time.perf_counter()
        try:
            if g == "EMP":

                vs, emp_data = check_EMP(rng, budget=budget, out_dir=out, n=100)
            else:
                vs = run_group(g, rng, budget=budget, out_dir=out)
        except Exception as exc:  # a crashing check is reported, not hidden

            vs = [Verdict(claim=g, status="INCONCLUSIVE", worst_ratio=None, where={},
                          n_instances=0, tolerance=0.0, message=f"check crashed: {exc!r}",
                          headline="check crashed")]
        for v in vs:
            log(f"    {v.claim}: {v.status} ({v.headline}; {time.perf_counter() - t:.1f}s)")
        verdicts += vs
    t_checks = time.perf_counter() - t0
    rows = []
    if crosscheck:
        log("solver cross-check dank_fast vs dank_ref ...")
        rows = solver_crosscheck(np.random.default_rng([seed, 99]), budget)
    figs = {}
    if make_figures:
        try:
            # start-up: matplotlib (optional dependency, the report extra) only for figures
            import matplotlib  # noqa: F401
        except ImportError:
            log("matplotlib is not installed: figures skipped "
                "(install the report extra: pip install 'dank[report]')")
        else:
            log("figures ...")
            figs = figures(out, np.random.default_rng([seed, 98]), emp_data,
                           {v.claim: dict(status=v.status, headline=v.headline)
                            for v in verdicts})
    elapsed = time.perf_counter() - t0
    summary = summarize(verdicts)
    results = dict(format="dank-verify-results", version=RESULTS_VERSION, seed=seed,
                   budget=budget, seconds=elapsed, seconds_checks=t_checks, summary=summary,
                   verdicts=[dict(v.to_dict(), name=display_name(v.claim)) for v in verdicts],
                   solvers=rows, figures=figs)
    with open(os.path.join(out, "results.json"), "w") as fh:
        json.dump(_jsonable(results), fh, indent=1)
    with open(os.path.join(out, "report.md"), "w") as fh:
        fh.write(render_report(verdicts, rows, figs, seed, budget, elapsed, t_checks))
    log(f"done in {elapsed:.1f}s: {out}/report.md")
    return results


STATUS_MEANING = {
    "HOLDS": "no violation found; the number is the largest lhs/rhs seen (below 1).",
    "VIOLATED": "a positive bound (rhs > 0) is exceeded: lhs/rhs > 1 on at least one "
                "instance; the smallest counterexample is saved.",
    "VIOLATED-DEGENERATE": "the claim fails only where its bound is zero or negative (so no "
                           "ratio exists); a finding about a missing condition, kept apart "
                           "from substantive violations.",
    "VACUOUS": "the claim's premise was never satisfied on any instance tried, so nothing was "
               "tested; the report says whether the premise can be satisfied at all.",
    "INCONCLUSIVE": "no trustworthy evaluation (e.g. no solve could be certified).",
}


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|")


def render_report(verdicts, rows, figs, seed, budget, elapsed, t_checks=None) -> str:
    """The markdown report: headline, summary table, one section per claim, cross-check."""
    summary = summarize(verdicts)
    counts = summary["counts"]
    L = ["# DANK verification report", ""]
    timing = f"{elapsed:.1f} s" + (f" ({t_checks:.1f} s of claim checks)" if t_checks else "")
    L += [f"seed {seed}, budget {budget}, {timing}. Each claim of the paper (Liu et al., JMLR "
          "2020) is checked on seeded random and adversarial instances and by a Hypothesis "
          "guided search; a counterexample file is re-checked by `dank-verify reproduce FILE`. "
          "Claims carry the paper's numbering (derived from its LaTeX source; see "
          "`docs/MATH.md`).", ""]
    L.append("**Verdicts:** " + ", ".join(f"{counts[s]} {s}" for s in STATUSES) + ".")
    L.append("")
    if summary["violations"]:
        parts = [f"{d['claim']} ({CLAIMS.get(d['claim'], {}).get('number', d['claim'])}) "
                 f"lhs/rhs = {fmt_ratio(d['ratio'], 3)}" for d in summary["violations"]]
        L += ["**Substantive violations (rhs > 0), largest first:** " + "; ".join(parts) + ".",
              ""]
    L += ["| id | claim (paper's numbering [LaTeX label]: what it says) | verdict | result "
          "| evaluations | counterexample |", "|---|---|---|---|---|---|"]
    for v in verdicts:
        files = [os.path.basename(p) for p in (v.counterexample_path,
                                                v.degenerate_counterexample_path) if p]
        L.append(f"| {v.claim} | {_cell(display_name(v.claim))} | **{v.status}** | "
                 f"{_cell(v.headline)} | {v.n_instances} | {'<br>'.join(files)} |")
    L += ["", "What the verdicts mean:", ""]
    L += [f"- **{s}**: {m}" for s, m in STATUS_MEANING.items()]
    L += ["", "\"lhs/rhs\" is the claimed inequality's left side over its right side, formed "
          "only when the right side is positive; comparisons use a relative tolerance of "
          f"{verdicts[0].tolerance if verdicts else 1e-8:g}.", ""]
    for v in verdicts:
        L += [f"## {v.claim} — {display_name(v.claim)}: {v.status}", "",
              f"*Tested statement.* {v.statement}", "",
              f"*Result.* {v.headline}. {v.message}".rstrip(), ""]
        if v.n_premise_met is not None:
            L += [f"*Premise.* met in {v.n_premise_met} of {v.n_instances} evaluations.", ""]
        if v.vacuity:
            L += [f"*Can the premise be met?* {v.vacuity}", ""]
        if v.where:
            L += [f"*Largest lhs/rhs (rhs > 0) at.* `{json.dumps(_jsonable(v.where))}`", ""]
        if v.degenerate_where:
            L += [f"*Degenerate cases (rhs <= 0): {v.n_degenerate}; smallest.* "
                  f"`{json.dumps(_jsonable(v.degenerate_where))}`", ""]
        for p in (v.counterexample_path, v.degenerate_counterexample_path):
            if p:
                L += [f"*Reproduce.* `dank-verify reproduce {os.path.basename(p)}`", ""]
    if rows:
        L += ["## Solver cross-check (dank_fast vs dank_ref)", "",
              "Each `dank_fast.solve_svm` method solves the same small P1 instances as "
              "`dank_ref` (the exact SDP, SCS). *Outcome*: `accelerated` and `newton` stop on "
              f"the certified relative gap (target {CROSS_TOL:g}); `paper` (Algorithm 1 as "
              "printed) and `pgm` (projected gradient, eq. (17)) stop on the paper's own rule "
              "`||a_t - a_(t-1)|| <= 1e-4` or after t_max = 2000 iterations. \"Stopped by its "
              "rule before the optimum\" means that rule fired while the certified relative "
              f"gap was still above {EARLY_TOL:g}, i.e. the paper's method declared "
              "convergence too early. *Brackets overlap*: the certified intervals "
              "[lower, upper] of the method and of dank_ref intersect (they must, both "
              "contain the optimal value).", "",
              "| inst | n | method | outcome | certified rel. gap | iterations | time (s) "
              "| brackets overlap ref |", "|---|---|---|---|---|---|---|---|"]
        for r in rows:
            L.append(f"| {r['instance']} | {r['n']} | {r['method']} | {r['outcome']} | "
                     f"{r['rel_gap']:.2e} | {r['n_iter']} | {r['time']:.3f} | "
                     f"{r['brackets_overlap_ref']} |")
        L.append("")
    if figs:
        captions = CAPTIONS
        L += ["## Figures", ""]
        for k, p in figs.items():
            L += [f"![{k}]({os.path.basename(p)})", "", captions.get(k, ""), ""]
    return "\n".join(L) + "\n"
