"""The report of a ``dank-reproduce`` run: every table from the cell records, the verdicts,
report.md and results.json.

:func:`aggregate` asks each table module (:mod:`.socmkl`, :mod:`.ucires`, :mod:`.ucirank`,
:mod:`.ucireg`, :mod:`.ucireg_nw`, :mod:`.certification`) for its part of the tables,
:func:`verdicts` for its claims, and :func:`render_report` for its section of report.md, in
the report's order; what is not a table (the header, the verdict list, warnings, errors, the
protocol) is written here.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter

from ...claims.paper import printed
from ..protocol import Protocol
from ..runner import _json_default as default  # numpy scalars/arrays, as the cell cache
from . import certification, conv, large, sensitivity, socmkl, ucirank, ucireg, ucireg_nw, ucires

__all__ = ["aggregate", "render_report", "verdicts", "write_json"]


def aggregate(records: dict, proto: Protocol, cls_sets, reg_sets, ds_info: dict) -> dict:
    """Tables from the cell records.

    Parameters
    ----------
    records : dict
        ``{cell key: record}`` of :func:`..runner.run_cells`.
    proto : Protocol
    cls_sets, reg_sets : sequence of str
    ds_info : dict
        Per data set: ``n``, ``d``, ``y_range`` (regression), ``note``.

    Returns
    -------
    dict
        ``socmkl``, ``ucirank``, ``ucireg``, ``certification``, ``warnings``, ``errors``;
        ``sensitivity`` when the run has reading cells (:mod:`.sensitivity`), ``ucires`` and
        ``ucireg_nw`` (the re-run baselines) when their cells are in the run.
    """
    out = {"socmkl": {}, "ucirank": {}, "ucireg": {}, "certification": [], "warnings": {},
           "errors": []}
    methods = {r.get("method") for r in records.values()}
    for name in cls_sets:
        out["socmkl"][name] = socmkl.aggregate(records, proto, name)
        out["ucirank"][name] = ucirank.aggregate(records, proto, name)
        if methods & set(ucires.RERUN.values()):  # the baselines' table only when run
            out.setdefault("ucires", {})[name] = ucires.aggregate(records, proto, name)
    for name in reg_sets:
        yr = ds_info[name]["y_range"]
        out["ucireg"][name] = ucireg.aggregate(records, proto, name, yr)
        if methods & {"nw-cv", "nw-ml"}:
            out.setdefault("ucireg_nw", {})[name] = ucireg_nw.aggregate(records, proto, name, yr)
    # certification, warnings, errors
    for key, r in sorted(records.items()):
        if r.get("status") != "ok":
            out["errors"].append(dict(cell=key, error=r.get("error", ""),
                                      traceback=r.get("traceback", "")))
        for cat, k in r.get("warnings", {}).items():
            w = out["warnings"].setdefault(r["method"], {})
            w[cat] = w.get(cat, 0) + k
    out["warning_examples"] = {}
    for r in records.values():
        for cat, msg in r.get("warning_examples", {}).items():
            out["warning_examples"].setdefault(cat, msg)
    out["certification"] = certification.certification(records)
    if sens := sensitivity.aggregate(records, proto, cls_sets):
        out["sensitivity"] = sens
    return out


def verdicts(tables: dict, proto: Protocol, conv_run: dict | None = None,
             large_rows: list | None = None) -> list[dict]:
    """One verdict per empirical claim of the paper, table by table (each module's
    ``verdicts``), then Figure 4 and the large-scale table."""
    V = socmkl.verdicts(tables, proto) + ucires.verdicts(tables, proto)
    V += ucirank.verdicts(tables, proto) + ucireg.verdicts(tables, proto)
    if conv_run:
        V.append(conv.conv_verdict(conv_run))
    V += large.large_verdicts(large_rows)
    return V


def render_report(res: dict) -> str:
    """report.md from the results dictionary written to results.json; the paper cited by its
    printed numbers (:func:`verification.study.claims.paper.printed`) also where the results'
    texts name its LaTeX labels."""
    L = _header(res) + _verdict_section(res["verdicts"])
    L += socmkl.render(res) + sensitivity.render(res) + ucires.render(res)
    L += ucirank.render(res) + ucireg.render(res) + ucireg_nw.render(res)
    L += conv.render(res)
    for k, p in res.get("figures", {}).items():
        L.append(f"![{k}]({os.path.basename(p)})")
    if res.get("figures"):
        L.append("")
    L += large.render(res) + certification.render(res) + _problems(res["tables"])
    L += ["## Protocol", ""] + [f"- {x}" for x in res["protocol_notes"]]
    L += ["", "Data sets:", ""] + [f"- {k}: {v['n']} points, {v['d']} features"
                                    + (f"; {v['note']}" if v.get("note") else "")
                                    for k, v in res["datasets"].items()]
    return printed("\n".join(L) + "\n")


def _header(res: dict) -> list[str]:
    """Title, the command and its protocol, versions and the legend of the cell marks."""
    proto = res["protocol"]
    L = ["# DANK: the paper's experiments, re-run", ""]
    L += [f"`{res['command']}` -- seed {proto['seed']}, {proto['n_splits']} splits, "
          f"{proto['n_folds']}-fold CV on a {len(proto['sigma_grid'])} x {len(proto['C_grid'])} "
          f"(sigma, C) grid, {res['seconds'] / 60:.1f} min "
          f"({res['n_cells']} cells, {res['n_cached']} from the cache), jobs {res['jobs']}. "
          f"Versions: " + ", ".join(f"{k} {v}" for k, v in res["versions"].items()) + ".", ""]
    L += ["Every cell is `paper / ours` (paper's number first). `•` significant by a two-sided "
          "paired t-test at 5% (paper's bullets as printed; ours computed on the same splits), "
          "`†` a cell with at least one final DANK solve not certified to the requested gap, "
          "`‡` DANK-SVR with SVR-CV's (sigma, C) (its own CV not run).", ""]
    return L


def _verdict_section(V: list[dict]) -> list[str]:
    """The verdict table, the totals and the numbered rules."""
    rules: dict[str, str] = {}
    for v in V:
        rules.setdefault(v["rule"], f"r{len(rules) + 1}")
    L = ["## Verdicts", "", "| claim | paper | ours | verdict (rule) |", "|---|---|---|---|"]
    for v in V:
        L.append(f"| {v['claim']} | {v['paper']} | {v['ours']} | **{v['verdict']}** "
                 f"({rules[v['rule']]}) |")
    cnt = Counter(v["verdict"] for v in V)
    L += ["", "Totals: " + ", ".join(f"{k} {cnt[k]}" for k in
                                     ("REPRODUCED", "PARTLY", "NOT REPRODUCED", "NOT RUN")
                                     if cnt[k]) + ".", "", "Rules:", ""]
    L += [f"- {tag}: {rule}" for rule, tag in rules.items()]
    L.append("")
    return L


def _problems(tb: dict) -> list[str]:
    """The warnings raised (none suppressed) and the cells that failed."""
    L = ["## Warnings raised (none suppressed)", ""]
    if tb["warnings"]:
        L += ["| cell type | warning | count | example |", "|---|---|---|---|"]
        for meth, ws in sorted(tb["warnings"].items()):
            for cat, k in sorted(ws.items()):
                ex = tb["warning_examples"].get(cat, "").replace("|", "/").replace("\n", " ")
                L.append(f"| {meth} | {cat} | {k} | {ex[:120]} |")
    else:
        L.append("None.")
    L.append("")
    if tb["errors"]:
        L += ["## Cells that failed", ""] + [f"- `{e['cell']}`: {e['error']}" for e in tb["errors"]]
        L.append("")
    return L


def write_json(path, obj) -> None:
    """``obj`` as compact JSON at ``path``: non-finite floats as strings, numpy values as the
    cell cache writes them."""

    def clean(x):
        if isinstance(x, float) and not math.isfinite(x):
            return str(x)
        if isinstance(x, dict):
            return {str(k): clean(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [clean(v) for v in x]
        return x

    with open(path, "w") as fh:  # compact: the full run has ~640 cells
        json.dump(clean(obj), fh, separators=(",", ":"), default=default)
