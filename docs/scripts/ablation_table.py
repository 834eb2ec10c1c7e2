"""The ablation table of docs/ARCHITECTURE.md ("What each route is for"), from the committed
runs of ``benchmarks/bench_ablation.py``; rendered by ``docs/scripts/tables.py``."""

from __future__ import annotations

from _results import load_results

#: the committed runs, in the table's column order: file and the distribution it draws from
RUNS = (("ablation.json", "`bench_distribution.py`'s, `tau = 0.01`"),
        ("ablation_tau05.json", "the same at `tau = 0.5`, `n <= 1,000`"),
        ("ablation_small_tau1.json", "the same with `n <= 150`, `tau = 1`"),
        ("ablation_families.json", "`bench_families.py`'s dense rows"))
#: route -> what the table calls it, with the function the benchmark replaces
ROUTES = {"woodbury": "Woodbury factor (`_factor.lowrank_solve`)",
          "exact_hessian": "exact Hessian (`_curvature.exact_curvature_pays`)",
          "tail_test": "the tail's factorisation test (`_eigen._tail_below`)",
          "ray_start": "ray start (`_newton._ray_start`)",
          "relaxed_start": "relaxed phase at `tau = 0` (`_newton._relaxed_start`)",
          "predictor": "the relaxed phase's predictor (`_newton._tau_predictor`)",
          "exact_rate": "the exact Hessian at the model's rate (`_newton._exact_pays`)",
          "secant": "secant's first trial (`_newton._next_scale`)",
          "model_limit": "the model's limit of twice the support (`_newton.model_limit`)"}


def _cell(summary: dict, route: str, rows: bool = False) -> str:
    """Geometric mean and worst; for named rows also how many are more than 25% slower (the
    second rule of docs/ARCHITECTURE.md)."""
    r = summary.get(route)
    if r is None:
        return "-"
    slower = (f"; {round(r['slower_25pct'] * summary['draws'])} of {summary['draws']} rows "
              "> 1.25" if rows else "")
    return f"{r['ratio_geomean']:.2f} (worst {r['ratio_worst']:.2f}{slower})"


def ablation_table(runs=RUNS) -> str:
    """Per route and run: the geometric mean over the draws (or rows) of (time without the
    route) / (time with it), and the worst one; then each run's command, seed and whole-core
    figures."""
    data = [load_results(name) for name, _ in runs]
    head = " | ".join(f"{label}" for _, label in runs)
    out = [f"| switched off | {head} |", "|---" * (len(runs) + 1) + "|"]
    for route, label in ROUTES.items():
        out.append(f"| {label} | " + " | ".join(
            _cell(d["summary"], route, "--families" in d["meta"]["command"]) for d in data)
                   + " |")
    out.append("")
    for (_, label), d in zip(runs, data, strict=True):
        m, s = d["meta"], d["summary"]
        full = s["full"]
        certified = "every solve certified" if full["all_certified"] and all(
            s[r]["all_certified"] for r in ROUTES if r in s) else "NOT every solve certified"
        rows = "--families" in m["command"]  # named rows: no seed to repeat them with
        out.append(f"* {label}: `{m['command'] if rows else m['repeat_with']}` "
                   f"({s['draws']} {'rows' if rows else 'draws'}, "
                   f"{m['date'][:10]}); whole core: median DANK / SVC "
                   f"{full['ratio_svc_median']:.1f}x, median {full['newton_iter_median']:g} "
                   f"Newton steps; {certified}.")
    return "\n".join(out)
