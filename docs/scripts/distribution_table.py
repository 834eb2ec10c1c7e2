"""The random-problem section of docs/user_guide/performance.md, from the committed runs of
``benchmarks/bench_distribution.py``: the profiled run (``distribution.json``) in detail, every
run (that one and those at further seeds, ``distribution_seed<SEED>.json``) a line each, and
the draws of all runs by the time of their SVM fit; and the two runs of
``benchmarks/bench_svr_distribution.py`` (regression); rendered by ``docs/scripts/tables.py``."""

from __future__ import annotations

import statistics

from _results import RESULTS, count, load_results, ms, span, threads

DISTRIBUTION_FAMILY_KEYS = ("noise", "factor", "s", "n_features", "n_informative", "flip_y",
                            "class_sep")


def _draw_params(r: dict) -> str:
    fam = ", ".join(f"{k} = {r[k]:.3g}" if isinstance(r[k], float) else f"{k} = {r[k]}"
                    for k in DISTRIBUTION_FAMILY_KEYS if k in r)
    return (f"{r['family']} ({fam}), n = {r['n']:,}, sigma = {r['sigma']:.3g} (median distance "
            f"x {r['sigma_factor']:.3g}), C = {r['C']:.3g}, eta = {r['eta']:.3g} "
            f"(`||a_SVC||^2` x {r['eta_factor']:.3g})")


def _tally(draws: list) -> tuple[int, int, int]:
    """The draws within the bound, within twice it, and the certified solves."""
    return (sum(r["ratio_bound"] <= 1.0 for r in draws),
            sum(r["ratio_bound"] <= 2.0 for r in draws),
            sum(r["status"] == "converged" for r in draws))


def distribution_table(data: dict | None = None) -> str:
    """performance.md: ``bench_distribution.py``'s run: the summary by family and overall, the
    worst draw with its parameters and, when profiled, where its time goes."""
    data = load_results("distribution.json") if data is None else data
    meta, s, draws = data["meta"], data["summary"], data["draws"]
    load = (f", load average {meta['loadavg_start'][0]:.1f} at the start and "
            f"{meta['loadavg_end'][0]:.1f} at the end")
    out = [f"Measured {meta['date'][:10]} on "
           f"{meta['cpu_count']} cores, {threads(meta)}{load} (`{meta['command']}`, seed "
           f"{meta['seed']}, `benchmarks/results/distribution.json`).", "",
           "| family | draws | n | DANK / SVC, median | DANK / SVC, 90th percentile "
           "| within the bound | within twice the bound | an array of one's own (its PSD test "
           "added): median, within the bound | certified |",
           "|---|---|---|---|---|---|---|---|---|"]

    def row(name, rs):
        ratios = [r["ratio_svc"] for r in rs]
        within, within2, cert = _tally(rs)
        p90 = statistics.quantiles(ratios, n=10, method="inclusive")[-1] if len(rs) > 1 \
            else ratios[0]
        k = len(rs)
        solve = "-"
        if all("ratio_svc_own" in r for r in rs):
            solve = (f"{statistics.median(r['ratio_svc_own'] for r in rs):.1f}x, "
                     f"{sum(r['ratio_bound_own'] <= 1.0 for r in rs)} of {k}")
        return (f"| {name} | {k} | {span([r['n'] for r in rs], '{:,}')} "
                f"| {statistics.median(ratios):.1f}x | {p90:.1f}x | {within} of {k} "
                f"| {within2} of {k} | {solve} | {cert} of {k} |")
    families = list(dict.fromkeys(r["family"] for r in sorted(draws, key=lambda r: r["family"])))
    out += [row(f, [r for r in draws if r["family"] == f]) for f in families]
    out.append(row("all", draws))
    certified = ("every solve certified" if s["all_certified"]
                 else f"{s['uncertified']} of {s['draws']} solves NOT certified")
    out += ["", f"Over the {s['draws']} draws: DANK / SVC median {s['ratio_svc_median']:.1f}x, "
            f"90th percentile {s['ratio_svc_p90']:.1f}x; {100 * s['within_bound']:.0f}% within "
            f"the bound, {100 * s['within_2x_bound']:.0f}% within twice the bound; {certified}."]
    o = s.get("over_bound")
    if o and o["draws"]:
        out[-1] += (f" Of the {o['draws']} draws over their bound, {o['bound_5_svc']} are "
                    "judged by 5 x SVC (small supports, where three decompositions cost less "
                    f"than four SVC fits) and {o['bound_svc_3_eigh']} by SVC + 3 x `T_eigh`.")
        if o["profiled"]:
            lp = o["largest_part"]
            out[-1] += (f" The largest part of their solves is the evaluations of `F(a)` in "
                        f"{lp['evaluations']}, the Newton systems in {lp['newton_systems']} "
                        f"and the rest (SVC start, gradients, certificates, interpreter) in "
                        f"{lp['rest']}.")
    out[-1] += (" The unavoidable work of the cost model (docs/ARCHITECTURE.md), timed as its "
                "BLAS and LAPACK calls alone at each draw's sizes and Newton steps (the SVM "
                "start, one evaluation of `F(a)` per step and one more, one Newton system per "
                f"step), is a median {s['model_ratio_svc_median']:.1f}x SVC and within the "
                f"bound for {100 * s['model_within_bound']:.0f}% of the draws; DANK takes a "
                f"median {s['ratio_model_median']:.1f} times it.")
    w = next(r for r in draws if r["index"] == s["worst"]["index"])
    out += ["", f"The worst draw by DANK / bound (draw {w['index']}): {_draw_params(w)}. SVC "
            f"{ms(w['svc_s'])}, DANK {ms(w['dank_s'])} ({w['ratio_svc']:.1f}x SVC, "
            f"{w['ratio_bound']:.1f}x its bound of {ms(w['bound_s'])}); `eigh` of the "
            f"support's reduced matrix ({w['eigh_size']:,} rows) {ms(w['eigh_s'])}; "
            f"|S| = {w['support']:,}, rank F = {w['rank_F']}, {w['status']} at rel. gap "
            f"{w['rel_gap']:.1e}."]
    p = w.get("profile")
    if p:
        total = max(p["total_s"], 1e-9)
        parts = {"SVC start": p["svc_start"], "validation of `K` (PSD test)": p["validation"],
                 "evaluations of `F(a)`": p["eigen"], "Newton systems": p["direction"]}
        parts["rest"] = max(total - sum(parts.values()), 0.0)
        own = ", ".join(f"`{t['function']}` {100 * t['tottime'] / total:.0f}%"
                        for t in p["top"]["tottime"][:3])
        out[-1] += (" Its profile (one more solve under cProfile, "
                   f"{ms(p['total_s'])}): " + ", ".join(
                       f"{k} {100 * v / total:.0f}%" for k, v in parts.items())
                     + f"; {p['evaluations']} evaluations of `F(a)`; most own time in {own}.")
    return "\n".join(out)


def _runs() -> list[dict]:
    """Every committed run of ``bench_distribution.py``, oldest first."""
    runs = [load_results(p.name) for p in sorted(RESULTS.glob("distribution*.json"))]
    return sorted(runs, key=lambda d: d["meta"]["date"])


def distribution_runs_table(runs: list[dict] | None = None) -> str:
    """performance.md: one line per committed run (its seed, the median and 90th percentile of
    DANK / SVC, the draws within the bound and within twice it, the worst draw's DANK / bound,
    the certified solves), the figures over all their draws and the command of each run."""
    runs = _runs() if runs is None else runs
    out = ["| seed | measured | draws | DANK / SVC, median | DANK / SVC, 90th percentile "
           "| within the bound | within twice the bound | worst draw, DANK / bound "
           "| certified | relative gap, median: SVC's fit, DANK's |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for d in runs:
        m, s, draws = d["meta"], d["summary"], d["draws"]
        k = len(draws)
        within, within2, cert = _tally(draws)
        out.append(f"| {m['seed']} | {m['date'][:10]} | {k} | {s['ratio_svc_median']:.1f}x "
                   f"| {s['ratio_svc_p90']:.1f}x | {within} of {k} | {within2} of {k} "
                   f"| {max(r['ratio_bound'] for r in draws):.2f} | {cert} of {k} "
                   f"| {_gaps(draws)} |")
    every = [r for d in runs for r in d["draws"]]
    k = len(every)
    within, within2, cert = _tally(every)
    out += ["", f"Over the {count(len(runs), 'run')} ({count(k, 'draw')}): DANK / SVC median "
            f"{statistics.median(r['ratio_svc'] for r in every):.1f}x; "
            f"{100 * within / k:.0f}% within the bound, {100 * within2 / k:.0f}% within twice "
            f"the bound; {cert} of {k} solves certified. "
            "Each run repeats with its command:", ""]
    out += [f"* seed {d['meta']['seed']}: `{d['meta']['repeat_with']}`" for d in runs]
    return "\n".join(out)


def _gaps(draws: list) -> str:
    """The medians of SVC's relative gap (its dual as a plain SVM, ``svc_rel_gap``) and of
    DANK's certified one; - for a run whose draws lack the first."""
    if not all("svc_rel_gap" in r for r in draws):
        return "-"
    return (f"{statistics.median(r['svc_rel_gap'] for r in draws):.1e}, "
            f"{statistics.median(r['rel_gap'] for r in draws):.1e}")


#: the bands of SVM fit time (seconds) of :func:`distribution_bands_table`: 1-3-10 steps
BANDS = (0.0, 0.003, 0.01, 0.03, float("inf"))


def distribution_bands_table(runs: list[dict] | None = None) -> str:
    """performance.md: the draws of every committed run by the time of their SVM fit (the bands
    of :data:`BANDS`): how many are within the bound, and the medians of DANK / SVC, of the cost
    model's time / SVC and of DANK / the cost model's time."""
    every = [r for d in (_runs() if runs is None else runs) for r in d["draws"]]
    out = ["| SVM fit | draws | within the bound | DANK / SVC, median "
           "| cost model / SVC, median | DANK / cost model, median |",
           "|---|---|---|---|---|---|"]
    for lo, hi in zip(BANDS, BANDS[1:], strict=False):
        rs = [r for r in every if lo <= r["svc_s"] < hi]
        if not rs:
            continue
        band = (f"under {1000 * hi:g} ms" if lo == 0.0 else f"{1000 * lo:g} ms and more"
                if hi == BANDS[-1] else f"{1000 * lo:g}-{1000 * hi:g} ms")
        model = "- | -"  # a run whose draws lack the cost model's time (`model_s`)
        if all("model_s" in r for r in rs):
            model = (f"{statistics.median(r['model_s'] / r['svc_s'] for r in rs):.1f}x "
                     f"| {statistics.median(r['ratio_model'] for r in rs):.2f}")
        out.append(f"| {band} | {len(rs)} | {_tally(rs)[0]} of {len(rs)} "
                   f"| {statistics.median(r['ratio_svc'] for r in rs):.1f}x | {model} |")
    return "\n".join(out)


def svr_distribution_table(runs: tuple[dict, dict] | None = None) -> str:
    """performance.md: ``bench_svr_distribution.py``'s two committed runs on the same draws,
    ``solve_svr``'s default call (Newton from the plain SVR's dual) and Newton from zero, a row
    each, and the paired time of the first over the second."""
    if runs is None:
        runs = (load_results("svr_distribution.json"),
                load_results("svr_distribution_newton.json"))
    out = ["| start | draws | DANK / SVR, median | DANK / SVR, 90th percentile "
           "| within the bound | within twice the bound | slowest, DANK / SVR "
           "| Newton steps, median | handed over to the accelerated method | certified |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    names = {"auto": "the plain SVR's dual (`\"auto\"`, the default)",
             "newton": "zero (`\"newton\"`)"}
    for d in runs:
        s, draws = d["summary"], d["draws"]
        k = len(draws)
        within, within2, cert = _tally(draws)
        out.append(f"| {names[draws[0]['method']]} | {k} | {s['ratio_svr_median']:.1f}x "
                   f"| {s['ratio_svr_p90']:.1f}x | {within} of {k} | {within2} of {k} "
                   f"| {max(r['ratio_svr'] for r in draws):,.1f}x "
                   f"| {s['newton_iter_median']:.0f} | {s['fallback_draws']} of {k} "
                   f"| {cert} of {k} |")
    first, second = (d["draws"] for d in runs)
    if [r["n"] for r in first] != [r["n"] for r in second] or len({d["meta"]["seed"]
                                                                     for d in runs}) != 1:
        raise ValueError("svr_distribution.json and svr_distribution_newton.json are not runs "
                         "of the same draws (same --seed, --draws and --max-n)")
    paired = [a["dank_s"] / b["dank_s"] for a, b in zip(first, second, strict=True)]
    geo = statistics.geometric_mean(paired)
    slower = sum(q > 1.25 for q in paired)
    metas = [d["meta"] for d in runs]
    out += ["", f"On the same draws the default call takes {geo:.2f} of the time of Newton "
            f"from zero (geometric mean; median {statistics.median(paired):.2f}, "
            f"range {span(paired, '{:.2f}')}; {count(slower, 'draw')} more than 1.25 times as "
            f"long). Measured {metas[0]['date'][:10]} on {metas[0]['cpu_count']} cores, "
            f"{threads(metas[0])}, seed {metas[0]['seed']}:", ""]
    out += [f"* `{m['repeat_with']}`" for m in metas]
    return "\n".join(out)
