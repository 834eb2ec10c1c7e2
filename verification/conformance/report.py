"""Summaries and output files of a conformance run: ``results.json``, ``report.md`` and the
console lines.

Per task (and over all tasks): the success rate (certified / instances) and qpbenchmark-style
shifted geometric means ``exp(mean(log(x + s))) - s`` of the time (shift :data:`TIME_SHIFT`;
a row with status ``error`` or ``timeout`` counts at its time limit, as a failed solve does in
qpbenchmark) and of the certified relative gap (shift :data:`GAP_SHIFT`; over the rows whose gap
was evaluated and finite).  ``results.json`` is version :data:`RESULTS_VERSION` of the schema
``conformance-results`` (version 2 added each row's ``time_limit`` and ``stderr_tail`` and the
run's ``timeout_per_1000`` and ``cases``).
"""

from __future__ import annotations

import json
import math
import os
import re

import numpy as np

from .._argtypes import DOCS_URL
from .kit import STATUSES

__all__ = ["TIME_SHIFT", "GAP_SHIFT", "RESULTS_FORMAT", "RESULTS_VERSION", "summarize",
           "write_results", "write_report", "console_lines", "progress_line", "shifted_geomean"]

TIME_SHIFT = 0.01  # seconds
GAP_SHIFT = 1e-12  # the golden vectors' tolerance
RESULTS_FORMAT = "dank-conformance-results"
RESULTS_VERSION = 2


def shifted_geomean(values, shift: float) -> float | None:
    """``exp(mean(log(x + shift))) - shift`` (None for no values)."""
    x = np.asarray(list(values), dtype=float)
    if x.size == 0:
        return None
    return float(np.exp(np.mean(np.log(x + shift))) - shift)


def _stats(rows: list[dict], timeout: float) -> dict:
    counts = {s: sum(r["status"] == s for r in rows) for s in STATUSES}
    times = [r["time"] if r["status"] in ("certified", "not certified") else
             (r.get("time_limit") or timeout) for r in rows]
    gaps = [r["rel_gap"] for r in rows if r["rel_gap"] is not None and r["rel_gap"] >= 0]
    return dict(instances=len(rows), **{k.replace(" ", "_"): v for k, v in counts.items()},
                success_rate=counts["certified"] / len(rows) if rows else None,
                sgm_time=shifted_geomean(times, TIME_SHIFT),
                sgm_rel_gap=shifted_geomean(gaps, GAP_SHIFT), gaps_evaluated=len(gaps))


def summarize(rows: list[dict], timeout: float) -> dict:
    """``{task: stats, ..., "all": stats}`` for the tasks present in ``rows``; a row in error
    or timeout counts at its ``time_limit`` (``timeout`` when the row has none)."""
    tasks = [t for t in ("svm", "svr", "decomposed") if any(r["task"] == t for r in rows)]
    out = {t: _stats([r for r in rows if r["task"] == t], timeout) for t in tasks}
    out["all"] = _stats(rows, timeout)
    return out


def _finite(v):
    """JSON has no inf/NaN: non-finite floats become None."""
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_finite(x) for x in v]
    return v


def results_document(run: dict, rows: list[dict]) -> dict:
    """The ``results.json`` object: the run's settings, the summary and every row."""
    doc = dict(format=RESULTS_FORMAT, version=RESULTS_VERSION, **run,
               shifts=dict(time=TIME_SHIFT, rel_gap=GAP_SHIFT),
               summary=summarize(rows, run["timeout"]), results=rows)
    return _finite(doc)


def write_results(path: str, doc: dict) -> None:
    """Write the ``results.json`` document (schema ``conformance-results``)."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1, allow_nan=False)
        fh.write("\n")


def _fmt(v, spec: str) -> str:
    return "-" if v is None else format(v, spec)


def _cell(text) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def summary_table(summary: dict) -> list[str]:
    """The per-task table in Markdown."""
    lines = ["| task | instances | certified | not certified | error | timeout | success rate "
             f"| time (s, sgm, shift {TIME_SHIFT:g} s) | certified rel. gap (sgm, shift "
             f"{GAP_SHIFT:g}) |", "|---|---|---|---|---|---|---|---|---|"]
    for task, s in summary.items():
        lines.append(f"| {task} | {s['instances']} | {s['certified']} | {s['not_certified']} | "
                     f"{s['error']} | {s['timeout']} | {_fmt(s['success_rate'], '.0%')} | "
                     f"{_fmt(s['sgm_time'], '.3g')} | {_fmt(s['sgm_rel_gap'], '.2g')} |")
    return lines


def _meta_text(meta) -> str:
    if meta is None:
        return ""
    text = meta if isinstance(meta, str) else json.dumps(meta, sort_keys=True)
    return text if len(text) <= 80 else text[:77] + "..."


def _limit_text(doc: dict) -> str:
    if doc.get("set") == "large":
        return "each instance's own (its row's time_limit)"
    per = doc.get("timeout_per_1000") or 0.0
    base = f"{doc['timeout']:g} s"
    return f"{base} + {per:g} s x (n/1000)^2" if per else base


def _tails(bad: list[dict]) -> list[str]:
    """A section per failure whose implementation wrote on stderr (or raised): its last lines,
    fenced so that no backtick run in the text can close the fence."""
    with_tail = [r for r in bad if r.get("stderr_tail")]
    if not with_tail:
        return []
    out = ["", "## Stderr of the failures", "",
           "The last lines (at most 20, 2,000 characters) the program wrote on stderr, or the "
           "end of the Python traceback (`--impl`).", ""]
    for r in with_tail:
        runs = [len(m) for m in re.findall(r"`+", r["stderr_tail"])]
        fence = "`" * max(3, max(runs, default=0) + 1)
        out += [f"### {r['id']}", "", fence + "text", r["stderr_tail"], fence, ""]
    return out[:-1]


def write_report(path: str, doc: dict) -> None:
    """``report.md``: settings, the summary table, the failures with their diagnosis, and every
    row."""
    rows = doc["results"]
    cases = f" (only {', '.join(doc['cases'])})" if doc.get("cases") else ""
    version = (f"large version {doc['large_version']}" if "large_version" in doc else
               f"families version {doc['families_version']}")
    lines = ["# DANK conformance report", "",
             f"Implementation: `{doc['implementation']}`; set `{doc['set']}`{cases} ({version}"
             f"); tasks {', '.join(doc['tasks'])}; tol "
             f"{doc['tol']:g}; time limit per instance {_limit_text(doc)}; jobs {doc['jobs']}.",
             "",
             "Success is decided by the oracle's certificate (`verification.oracle.certify`), "
             "never by the implementation's own status. What the statuses, the tolerance and "
             f"the limits mean: {DOCS_URL}/conformance.html.", ""]
    lines += summary_table(doc["summary"])
    bad = [r for r in rows if r["status"] != "certified"]
    lines += ["", f"## Failures ({len(bad)})", ""]
    if bad:
        lines += ["| id | task | n | status | diagnosis |", "|---|---|---|---|---|"]
        lines += [f"| {r['id']} | {r['task']} | {r['n']} | {r['status']} | "
                  f"{_cell(r['diagnosis'])} |" for r in bad]
    else:
        lines.append("None.")
    lines += _tails(bad)
    lines += ["", "## Every instance", "",
              "| id | family | task | n | status | certified rel. gap | time (s) | meta |",
              "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['id']} | {r['family']} | {r['task']} | {r['n']} | {r['status']} | "
              f"{_fmt(r['rel_gap'], '.2g')} | {r['time']:.3g} | {_cell(_meta_text(r['meta']))} |"
              for r in rows]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")


def console_lines(doc: dict, out_dir: str) -> list[str]:
    """One summary line, then one line per failure."""
    s = doc["summary"]
    per = ", ".join(f"{t} {v['certified']}/{v['instances']}" for t, v in s.items() if t != "all")
    lines = [f"conformance: {s['all']['certified']}/{s['all']['instances']} certified ({per}); "
             f"report: {os.path.join(out_dir, 'report.md')}"]
    lines += [f"  {r['status'].upper():13s} {r['id']}: {r['diagnosis']}"
              + (" (more in report.md)" if r.get("stderr_tail") else "")
              for r in doc["results"] if r["status"] != "certified"]
    return lines


def progress_line(index: int, total: int, row: dict) -> str:
    """``[index/total] id: status (seconds, certified relative gap)``, then the start of the
    diagnosis when the row is not certified: one line per finished instance, for stderr."""
    w = len(str(total))
    extra = f", rel. gap {row['rel_gap']:.2g}" if row["rel_gap"] is not None else ""
    line = f"[{index:>{w}}/{total}] {row['id']}: {row['status']} ({row['time']:.2f} s{extra})"
    why = row["diagnosis"]
    if row["status"] != "certified" and why:
        line += f": {why if len(why) <= 100 else why[:97] + '...'}"
    return line
