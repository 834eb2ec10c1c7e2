"""Generate the measured tables of README.md, docs/user_guide/performance.md and others.

Every number comes from the committed benchmark results in ``benchmarks/results/`` (written by
``benchmarks/bench_large.py``, ``bench_svm.py``, ``bench_grid.py``, ``bench_ref.py``,
``bench_scale.py``, ``bench_distribution.py``, ``bench_load.py`` and ``bench_ablation.py``, the
last one's table made by ``docs/scripts/ablation_table.py``); each table goes between a pair of
markers ``<!-- tables:NAME:start -->`` / ``<!-- tables:NAME:end -->``.

Usage::

    python docs/scripts/tables.py           # rewrite the tables in place
    python docs/scripts/tables.py --check   # exit 1 if a committed table differs (CI, tests)
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the sibling table modules, and the benchmarks' one-line argument parser
sys.path[:0] = [str(Path(__file__).resolve().parent), str(ROOT / "benchmarks")]
from _args import OneLineParser  # noqa: E402
from _results import count, load_results, span, threads  # noqa: E402
from ablation_table import ablation_table  # noqa: E402
from distribution_table import (  # noqa: E402
    distribution_bands_table,
    distribution_runs_table,
    distribution_table,
    svr_distribution_table,
)

TARGETS = {"README.md": ["scale", "families-summary"],
           "docs/conformance.md": ["oracle-scale"],
           "docs/ARCHITECTURE.md": ["ablation"],
           "benchmarks/README.md": ["families"],
           "docs/user_guide/performance.md": ["families", "distribution", "distribution-runs",
                                              "distribution-bands", "svr-distribution",
                                              "large", "load",
                                              "n2000", "grid", "ref"]}


def _gb(x) -> str:
    return "-" if x is None else f"{x:.2f} GB"


def _rows(large: dict) -> dict:
    return {(r["dataset"].lower(), r["method"]): r for r in large["rows"]}


def scale_table() -> str:
    """README: what each route handles on one machine, and how fast against libsvm."""
    rows = _rows(load_results("large.json"))
    svm = load_results("svm_n2000.json")
    pair = {(r["C"], r["method"]): r for r in svm["rows"]}
    out = ["| problem | route | DANK fit, certified (time, peak memory) | SVC, same kernel "
           "| DANK / SVC |", "|---|---|---|---|---|"]
    for c in (1.0, 32.0):
        r = pair[(c, "defaults")]
        out.append(f"| `make_moons`, n = 2,000, C = {c:g} | dense | {r['time_s']:.3f} s "
                   f"| {r['time_s'] / r['ratio_paired']:.3f} s | {r['ratio_paired']:.1f}x |")
    for ds, label in (("eeg", "EEG, n = 7,490"), ("ijcnn1", "ijcnn1, n = 49,990"),
                      ("covtype", "covtype subset, n = 12,000")):
        svc = rows[(ds, "SVM-SMO")]
        for method, route in (("DANK exact", "exact"), ("DANK scalable", "decomposition")):
            r = rows[(ds, method)]
            if route == "exact":
                route = "dense" if ds == "eeg" else "working sets"
            out.append(f"| {label} | {route} | {r['time_s']:.1f} s, {_gb(r['fit_peak_rss_gb'])} "
                       f"| {svc['time_s']:.1f} s | {r['time_s'] / svc['time_s']:.1f}x |")
    r = rows[("covtype-synthetic", "DANK scalable")]
    out.append(f"| covtype-sized, n = {r['n_train']:,} | decomposition ({r['clusters']} "
               f"clusters) | {r['time_s']:.0f} s, {_gb(r['fit_peak_tree_gb'])} | - | - |")
    r = rows[("synthetic-1m", "DANK scalable, dask")]
    out.append(f"| synthetic, n = {r['n_train']:,} | decomposition on 2 dask workers "
               f"| {r['time_s']:.0f} s | - | - |")
    return "\n".join(out)


def oracle_scale_table() -> str:
    """docs/conformance.md: the oracle's certificate of the large set beside dank_fast's solve."""
    scale = load_results("scale.json")
    kit = {r["id"]: r for r in scale["kit"]["rows"]}
    out = ["| instance | n | dank_fast solve (time, peak) | oracle certify (time, peak, above "
           "the data) | route | certified rel. gap | brackets differ by | broken rejected "
           "| load | the kit, `fast_auto` (time, limit, rel. gap) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in scale["rows"]:
        ref = (f"{r['ref_s']:.1f} s, {_gb(r['ref_peak_gb'])}, "
               f"{_gb(r['ref_peak_gb'] - r['ref_data_gb'])}")
        load = f"{r['load'][0]:.1f}"
        if r.get("certify_only"):
            k = f", {r['clusters']} clusters" if r.get("clusters") else ""
            out.append(f"| {r['problem']} recipe, random point ({r['support']:,} nonzero{k}) "
                       f"| {r['n']:,} | - | {ref} | {r['route']} | - | - | - | {load} | - |")
            continue
        fast = f"{r['fast_s']:.1f} s, {_gb(r['fast_peak_gb'])}"
        broken = r.get("broken", {})
        rej = sum(not b["certified"] for b in broken.values())
        rej = f"{rej} of {len(broken)}" if broken else "-"
        k = kit.get(r["id"])
        k = (f"{k['status']} ({k['time']:.0f} s of {k['time_limit']:.0f} s, "
             f"{k['rel_gap']:.1e})" if k else "-")
        out.append(f"| `{r['id']}` | {r['n']:,} | {fast} | {ref} | {r['route']} "
                   f"| {r['ref_rel_gap']:.1e} | {max(r['d_lower'], r['d_upper']):.0e} "
                   f"| {rej} | {load} | {k} |")
    k = scale["kit"]
    out += ["", f"The kit's run (`{k['command']}`): {k['wall_seconds']:.0f} s wall in all, "
            f"load average {k['load_average'][0]:.1f} at its end; its `fast_auto` solves at "
            "`tol = 1e-8`, the benchmark's at dank_fast's default `1e-6`."]
    return "\n".join(out)


def large_table() -> str:
    large = load_results("large.json")
    env = large["environment"]
    out = [f"Measured {env['date']} on {env['cpus']} cores (`benchmarks/results/large.json`).",
           "",
           "| data set | n (train) | method | fit time | peak memory of the fit | accuracy "
           "| certified rel. gap |",
           "|---|---|---|---|---|---|---|"]
    for r in large["rows"]:
        acc = "-" if r.get("accuracy") is None else f"{100 * r['accuracy']:.2f}%"
        gap = "libsvm" if r.get("rel_gap") is None else f"{r['rel_gap']:.1e}"
        mem = r.get("fit_peak_rss_gb", r.get("fit_peak_tree_gb"))
        out.append(f"| {r['dataset']} | {r['n_train']:,} | {r['method']} | {r['time_s']:.1f} s "
                   f"| {_gb(mem)} | {acc} | {gap} |")
    return "\n".join(out)


LOAD_CONDITIONS = {"idle": "alone", "nice": "beside a busy process at nice 19",
                   "busy": "beside a busy process at normal priority"}


def load_table(data: dict | None = None) -> str:
    """performance.md: ``bench_load.py``'s run: each large solve alone and beside a busy
    process, with its ratio to the SVM fit timed in the same conditions."""
    data = load_results("load.json") if data is None else data
    meta = data["meta"]
    out = [f"Measured {meta['date']} on {meta['cpus']} cores (`{meta['command'].strip()}`, "
           "`benchmarks/results/load.json`).", "",
           "| solve | n | conditions | SVM fit | DANK fit (CPU) | DANK / SVM | certified rel. gap "
           "|", "|---|---|---|---|---|---|---|"]
    for r in data["rows"]:
        where = LOAD_CONDITIONS[r["condition"]]
        if "error" in r:
            out.append(f"| {r['case']} | - | {where} | - | failed: {r['error']} | - | - |")
            continue
        out.append(f"| {r['case']} | {r['n']:,} | {where} | {r['svc_s']:.1f} s "
                   f"| {r['dank_s']:.1f} s ({r['dank_cpu_s']:.1f} s) | {r['ratio']:.1f}x "
                   f"| {r['rel_gap']:.1e} |")
    alone = {r["case"]: r["ratio"] for r in data["rows"]
             if r["condition"] == "idle" and "error" not in r}
    moved = []
    for cond in ("nice", "busy"):
        f = [r["ratio"] / alone[r["case"]] for r in data["rows"]
             if r["condition"] == cond and "error" not in r and r["case"] in alone]
        if f:
            moved.append(f"{LOAD_CONDITIONS[cond]} {span(f, '{:.2f}')}")
    if moved:
        out += ["", "DANK / SVM over its value alone, by solve: " + "; ".join(moved) + "."]
    return "\n".join(out)


def n2000_table() -> str:
    svm = load_results("svm_n2000.json")
    out = [f"Measured {svm['meta']['date'][:10]} on {svm['meta']['cpu_count']} cores "
           "(`benchmarks/results/svm_n2000.json`); each DANK solve is paired with an SVC fit "
           "just before it.", "",
           "| C | call | DANK time | SVC time | ratio (paired) |", "|---|---|---|---|---|"]
    for r in svm["rows"]:
        call = "`solve_svm` defaults" if r["method"] == "defaults" else f"method=\"{r['method']}\""
        out.append(f"| {r['C']:g} | {call} | {1000 * r['time_s']:.0f} ms "
                   f"| {1000 * r['time_s'] / r['ratio_paired']:.1f} ms "
                   f"| {r['ratio_paired']:.1f}x |")
    return "\n".join(out)


def _families_ratio(r: dict, key: str = "ratio") -> str:
    """A row's paired ratio ``key``, or its lower bound when the solve did not finish in time
    (``ratio_with_psd``: dense rows of ``--call defaults`` only, with the PSD test an array of
    one's own pays; the one-vs-one rows build their own Gaussian kernel, which needs none)."""
    if r.get(key) is not None:
        return f"{r[key]:.1f}x"
    above = r.get("ratio_above") if key == "ratio" else None
    return f"> {above:.0f}x" if above else "-"


def _families_dank(r: dict) -> str:
    if r.get("dank_time_s") is None:
        limit = r.get("time_limit_s")
        return f"not finished in {limit:g} s" if limit else str(r.get("status"))
    t = r["dank_time_s"]
    return f"{1000 * t:.0f} ms" if t < 10 else f"{t:.1f} s"


def _families_medians(rows: list) -> list[str]:
    done = [r for r in rows if r.get("ratio") is not None]
    if not done:
        return []
    within = sum(r["ratio"] <= 5.0 for r in done)
    own = [r.get("ratio_with_psd", r["ratio"]) for r in done]
    return ["", f"Median ratio {statistics.median(r['ratio'] for r in done):.1f}x over the "
            f"{len(done)} finished rows ({within} within 5x), "
            f"{statistics.median(own):.1f}x with the PSD test of a kernel matrix of one's own "
            f"({sum(v <= 5.0 for v in own)} within 5x); "
            f"{count(len(rows) - len(done), 'row')} not finished in the time limit."]


def _families_support_bound(rows: list) -> list[str]:
    """The working-set rows against ``SVC + 3 T_eigh`` of their final support."""
    return [f"Working sets at n = {r['n']:,}: `SVC + 3 T_eigh` of the final support is "
            f"{r['svc_time_s'] + 3 * r['eigh_s']:.1f} s (`T_eigh` of its {r['eigh_size']:,}-point "
            f"decomposition on one BLAS thread, as the solve makes its own: {r['eigh_s']:.1f} "
            f"s), and the certified solve takes "
            f"{r['ratio_support_bound']:.2f} times that." for r in rows if "eigh_s" in r]


def families_summary() -> str:
    """README: the family table in one sentence (medians and ranges of the paired ratios)."""
    rows = load_results("families.json")["rows"]
    done = [r for r in rows if r.get("ratio") is not None]
    paper = [r["ratio"] for r in done if r["eta_rule"] == "||a_SVC||^2"]
    small = [r["ratio"] for r in done if r["eta_rule"] != "||a_SVC||^2"]
    own = [r.get("ratio_with_psd", r["ratio"]) for r in done]
    sizes = [r["n"] for r in rows if r["kind"] != "working-set"]
    return (f"`make_moons` is the friendly case. Over the [family table]"
            f"(docs/user_guide/performance.md) (make_moons, overlapping blobs, noisy "
            f"`make_classification`, UCI sets, a 10-class one-vs-one fit, n = {min(sizes):,} to "
            f"{max(sizes):,}, C = 1 and 32) a certified DANK fit costs a median "
            f"{statistics.median(r['ratio'] for r in done):.1f}x an SVC fit on the same kernel "
            f"({statistics.median(own):.1f}x with the PSD test that a kernel matrix not from "
            f"`compute_kernel` must pass): {min(paper):.1f}x to {max(paper):.0f}x at the "
            f"paper's `eta`, up to {max(small):.0f}x with a small `eta` that makes `F` of high "
            f"rank (each evaluation then needs dozens to hundreds of eigenpairs). "
            f"`benchmarks/README.md` gives where the time goes in every row.")


def _families_accelerated(r: dict) -> str:
    acc = r.get("accelerated")
    if not acc:
        return "-"
    if not acc.get("finished"):
        limit = acc.get("time_limit_s")
        return f"{_families_ratio(acc)} (not finished in {limit:g} s)" if limit else "failed"
    cert = "" if acc["certified"] else f", NOT certified ({acc['status']})"
    return f"{_families_ratio(acc)} ({acc['n_iter']} it.{cert})"


def _families_profiles(rows: list) -> list[str]:
    """The profiles (``--profile``) of the rows above 5x: share of the solve by part."""
    rows = [r for r in rows if r.get("profile")]
    if not rows:
        return []
    out = ["", "Where the time goes in the rows above 5x (`--profile`: one more solve under "
           "cProfile, or the first `T` seconds of one that does not finish; shares of its "
           "time): the SVC start, the validation of `K` (PSD test), the evaluations of `F(a)` "
           "(eigenpairs, line search included), the Newton systems (curvature included), the "
           "rest.", "",
           "| family | route | n | C | eta | SVC start | validation | F(a) | Newton systems "
           "| rest | evaluations of F(a) | Krylov rounds | block products | dense eigh |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        p = r["profile"]
        total = max(p["total_s"], 1e-9)
        parts = [p["svc_start"], p["validation"], p["eigen"], p["direction"]]
        rest = max(total - sum(parts), 0.0)
        cells = " | ".join(f"{100 * v / total:.0f}%" for v in [*parts, rest])
        kind = r.get("kind", "dense")
        route = FAMILY_ROUTES[kind] + (" (stopped)" if p["stopped"] else "")
        eta = r.get("eta_rule", "||a_SVC||^2").replace("||a_SVC||^2", "rule")
        out.append(f"| {r['family']} | {route} | {r['n']:,} | {r['C']:g} | {eta} | {cells} "
                   f"| {p['evaluations']} | {p.get('krylov', '-')} | {p['matvecs']} "
                   f"| {p['dense_eigh']} |")
    return out


FAMILY_ROUTES = {"dense": "dense", "ovo": "one-vs-one", "working-set": "working sets"}
FAMILY_NAMES = {"moons0.2": "make_moons", "moons0.3": "make_moons",
                "blobs": "the blobs", "classif": "`make_classification`",
                "diabetic": "diabetic", "heart": "heart"}


def _names(rows: list) -> str:
    names = list(dict.fromkeys(FAMILY_NAMES.get(r["family"], r["family"]) for r in rows))
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _families_shares(rows: list) -> list[str]:
    """The profiled dense rows at the paper's ``eta`` in one paragraph: the shares of the
    SVC start, the check of ``K`` and ``F(a)`` at ``C = 1``, of the Newton systems at
    ``C = 32``."""
    dense = [r for r in rows if r.get("kind", "dense") == "dense" and r.get("profile")
             and r["eta_rule"] == "||a_SVC||^2"]
    one = [r for r in dense if r["C"] == 1.0]
    many = [r for r in dense if r["C"] == 32.0]
    if not one or not many:
        return []

    def share(r, key):
        return 100 * r["profile"][key] / max(r["profile"]["total_s"], 1e-9)

    steps = [r["newton_iter"] for r in rows if r.get("kind", "dense") == "dense"
             and r["C"] == 32.0 and r["eta_rule"] == "||a_SVC||^2" and r.get("newton_iter")]
    return ["", f"In the profiled rows at the paper's `eta` and `C = 1`, the SVC start takes "
            f"{span([share(r, 'svc_start') for r in one])}% of a solve, the check of `K` "
            f"{span([share(r, 'validation') for r in one])}% (the matrix of `compute_kernel` "
            f"carries its PSD proof) and the evaluations of `F(a)` "
            f"{span([share(r, 'eigen') for r in one])}%; at `C = 32` the Newton systems take "
            f"{span([share(r, 'direction') for r in many])}%, and the dense rows at the "
            f"paper's `eta` take {span(steps)} Newton steps."]


def _families_accelerated_text(rows: list) -> list[str]:
    """The accelerated column in one paragraph: its time over Newton's where it certifies,
    the rows where it does not finish."""
    acc = [r for r in rows if r.get("accelerated") and r.get("dank_time_s")]
    if not acc:
        return []
    out = []
    for C in sorted({r["C"] for r in acc}):
        rs = [r for r in acc if r["C"] == C]
        done = [r for r in rs if r["accelerated"]["finished"] and r["accelerated"]["certified"]]
        late = [r for r in rs if not r["accelerated"]["finished"]]
        parts = []
        if done:
            times = [r["accelerated"]["dank_time_s"] / r["dank_time_s"] for r in done]
            its = [r["accelerated"]["n_iter"] for r in done]
            parts.append(f"certifies {_names(done)} in {span(times)} times Newton's time "
                         f"({span(its, '{:,}')} iterations)")
        if late:
            limit = late[0]["accelerated"].get("time_limit_s") or 0
            parts.append(f"does not finish in {limit:g} s on {_names(late)}")
        out.append(f"at `C = {C:g}` it " + " and ".join(parts))
    return ["", "The accelerated method, from the same SVC start (an iteration is an "
            "evaluation of `F(a)`, a product with `F o K` and the backtracking's extra "
            "evaluations): " + "; ".join(out) + ". A first-order ascent needs tens to thousands "
            "of evaluations of `F(a)` where Newton needs a few, each as costly."]


def _newton_steps(r: dict) -> str:
    """A row's Newton steps; a working-set row's are the sum over its rounds (its result's
    ``n_iter``), from the rounds it records whatever its ``newton_iter`` field holds."""
    if "rounds" in r:
        return str(sum(x["newton"] for x in r["rounds"]))
    return "-" if r.get("newton_iter") is None else str(r["newton_iter"])


def families_table() -> str:
    fam = load_results("families.json")
    meta = fam["meta"]
    blas = threads(meta)
    load = ""
    if meta.get("loadavg_start"):
        load = (f", load average {meta['loadavg_start'][0]:.1f} at the start and "
                f"{meta['loadavg_end'][0]:.1f} at the end")
    out = [f"Measured {meta['date'][:10]} on "
           f"{meta['cpu_count']} cores, {blas}{load} (`{meta['command']}`, "
           "`benchmarks/results/families.json`); each ratio is the median over the repeats of "
           "DANK's time over the SVC fit timed just before it; `accelerated` is one solve of "
           "`method=\"accelerated\"` from the SVC start, with its ratio and iterations.", "",
           "| family | route | n | C | eta | SVs | rank F | SVC | DANK | ratio (paired) "
           "| with the PSD test of one's own `K` | Newton steps | accelerated | certified |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in fam["rows"]:
        kind = r.get("kind", "dense")
        route = FAMILY_ROUTES[kind] + (f", n_jobs={r['n_jobs']}" if kind == "ovo" else "")
        eta = r.get("eta_rule", "||a_SVC||^2").replace("||a_SVC||^2", "rule")
        rank = "-" if r.get("rank") is None else str(r["rank"])
        cert = ("yes" if r["certified"] else "NO") if r.get("finished", True) else "-"
        out.append(f"| {r['family']} | {route} | {r['n']:,} | {r['C']:g} | {eta} | {r['n_SV']} "
                   f"| {rank} | {1000 * r['svc_time_s']:.1f} ms | {_families_dank(r)} "
                   f"| {_families_ratio(r)} | {_families_ratio(r, 'ratio_with_psd')} "
                   f"| {_newton_steps(r)} "
                   f"| {_families_accelerated(r)} | {cert} |")
    out += _families_medians(fam["rows"])
    bound = _families_support_bound(fam["rows"])
    out += ["", " ".join(bound)] if bound else []
    out += _families_profiles(fam["rows"])
    out += _families_shares(fam["rows"]) + _families_accelerated_text(fam["rows"])
    g = load_results("grid.json")
    points = sum(s["points"] for s in g["summaries"])
    out += ["", f"The paper's grid (`bench_grid.py`, `benchmarks/results/grid.json`: "
            f"`DANKClassifier.fit` at {points} points (sigma, C) of {len(g['summaries'])} UCI "
            f"sets against SVC on the same features, both including their kernel): median ratio "
            f"{g['median_ratio']:.1f}x cold, {g['median_warm_ratio']:.1f}x with "
            "`warm_start=True` along `C`."]
    return "\n".join(out)


def grid_table() -> str:
    g = load_results("grid.json")
    out = ["`DANKClassifier.fit` over the paper's 11 x 11 grid of `sigma` and `C`, against SVC "
           "on the same features (`benchmarks/results/grid.json`).", "",
           "| data set | n | fits | median ratio, cold | median ratio, `warm_start=True` "
           "| uncertified | worst rel. gap |", "|---|---|---|---|---|---|---|"]
    for s in g["summaries"]:
        out.append(f"| {s['dataset']} | {s['n'][0]} | {s['points']} | {s['ratio_median']:.1f}x "
                   f"| {s['warm_ratio_median']:.1f}x | {s['uncertified']} "
                   f"| {s['max_rel_gap']:.1e} |")
    out.append(f"| all | | | {g['median_ratio']:.1f}x | {g['median_warm_ratio']:.1f}x | | |")
    return "\n".join(out + _grid_profiles(g["summaries"]))


def _grid_profiles(summaries: list) -> list[str]:
    """The profiles (``bench_grid.py --profile``): where the time of a cold fit goes."""
    rows = [s for s in summaries if s.get("profile")]
    if not rows:
        return []
    out = ["", "Where the time of a cold fit goes (`--profile`: each data set's cold fits once "
           "more under cProfile, which charges every Python-level call a fraction of a "
           "microsecond: compare the profiled time per fit with the unprofiled one). Shares of "
           "the profiled time: the SVC start (libsvm on the kernel), the validation of `X`, `y` "
           "and the parameters, the kernel, the evaluations of `F(a)` (their dense "
           "eigendecompositions in brackets), the Newton systems, the final certificate, the "
           "rest; then, per fit, the evaluations of `F(a)`, the Python-level function calls, "
           "and the time of the evaluations of `F(a)` alone (profiled) over that of an SVC fit.",
           "",
           "| data set | ms per fit (profiled) | SVC start | validation | kernel | F(a) (dense "
           "eigh) | Newton systems | certificate | rest | evaluations | Python calls "
           "| F(a) / SVC fit |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    keys = ("svc_start", "validation", "kernel", "eigen", "direction", "final_certificate")
    for s in rows:
        p = s["profile"]
        total, fits = max(p["total_s"], 1e-9), p["fits"]
        share = {k: f"{100 * p[k] / total:.0f}%" for k in keys}
        rest = 100 * (total - sum(p[k] for k in keys)) / total
        svc_fit = s["svc_total_s"] / s["points"]
        out.append(f"| {s['dataset']} | {1e3 * s['dank_total_s'] / s['points']:.1f} "
                   f"({1e3 * total / fits:.1f}) | {share['svc_start']} | {share['validation']} "
                   f"| {share['kernel']} | {share['eigen']} "
                   f"({100 * p['dense_eigh_s'] / total:.0f}%) | {share['direction']} "
                   f"| {share['final_certificate']} | {rest:.0f}% "
                   f"| {p['evaluations'] / fits:.1f} | {p['calls'] / fits:,.0f} "
                   f"| {p['eigen'] / fits / svc_fit:.1f} |")
    ev = [s["profile"]["eigen"] / s["profile"]["fits"] / (s["svc_total_s"] / s["points"])
          for s in rows]
    py = [s["profile"]["calls"] / s["profile"]["fits"] for s in rows]
    out += ["", f"Per fit, the evaluations of `F(a)` alone take {span(ev, '{:.1f}')} times an "
            f"SVC fit, and a fit makes {span(py, '{:,.0f}')} Python-level function calls."]
    return out


def ref_table() -> str:
    ref = load_results("ref.json")
    groups: dict = {}
    for r in ref["rows"]:
        groups.setdefault((r["problem"], r["n"], r["solver"]), []).append(r)
    out = ["Families of instances (data shape, kernel width, `C` 0.01..100, `eta` 0.1..1000, "
           "`tau` 0..1, class balance), three seeds each; every solve asks for a certified "
           "relative gap <= 1e-10 (`benchmarks/results/ref.json`).", "",
           "| problem | n | solver | solves | median time | worst time "
           "| worst certified rel. gap |",
           "|---|---|---|---|---|---|---|"]
    for (p, n, solver), rs in groups.items():
        t = sorted(r["time_s"] for r in rs)
        med = t[len(t) // 2] if len(t) % 2 else 0.5 * (t[len(t) // 2 - 1] + t[len(t) // 2])
        out.append(f"| {p} | {n} | {solver} | {len(rs)} | {med:.2f} s | {t[-1]:.2f} s "
                   f"| {max(r['rel_gap'] for r in rs):.1e} |")
    return "\n".join(out)


TABLES = {"scale": scale_table, "oracle-scale": oracle_scale_table, "families": families_table,
          "large": large_table,
          "n2000": n2000_table, "grid": grid_table, "ref": ref_table,
          "families-summary": families_summary, "distribution": distribution_table,
          "distribution-runs": distribution_runs_table,
          "distribution-bands": distribution_bands_table,
          "svr-distribution": svr_distribution_table,
          "load": load_table, "ablation": ablation_table}


def render(text: str, names: list[str]) -> str:
    """``text`` with each named table replaced between its markers."""
    for name in names:
        start, end = f"<!-- tables:{name}:start -->", f"<!-- tables:{name}:end -->"
        if start not in text or end not in text:
            raise ValueError(f"no {start} ... {end} markers")
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        text = f"{head}{start}\n{TABLES[name]()}\n{end}{tail}"
    return text


def main(argv=None) -> int:
    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("--check", action="store_true", help="exit 1 if a table is out of date")
    a = p.parse_args(argv)
    stale = []
    for rel, names in TARGETS.items():
        path = ROOT / rel
        old = path.read_text()
        try:
            new = render(old, names)
        except ValueError as e:
            print(f"{rel}: {e}", file=sys.stderr)
            return 2
        if new != old:
            stale.append(rel)
            if not a.check:
                path.write_text(new)
    if a.check and stale:
        print("out of date: " + ", ".join(stale) + " (python docs/scripts/tables.py)",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
