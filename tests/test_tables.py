"""The measured paragraphs of the performance pages say what the committed results say
(docs/scripts/tables.py): the shares of the profiled family rows, the accelerated column, the
grid's profiles."""

from __future__ import annotations

import pytest
from _scripts import load_script

# docs/scripts/tables.py is repository tooling, not an installed module
tables = load_script("docs/scripts/tables.py")


def _row(family, C, time_s, shares=None, acc=None, steps=5):
    r = {"kind": "dense", "family": family, "n": 2000, "C": C, "eta_rule": "||a_SVC||^2",
         "dank_time_s": time_s, "newton_iter": steps}
    if shares is not None:
        r["profile"] = {"total_s": 1.0, **shares}
    if acc is not None:
        r["accelerated"] = acc
    return r


def test_family_shares_give_the_range_of_each_part():
    keys = ("svc_start", "validation", "eigen", "direction")
    rows = [_row("blobs", 1.0, 1.0, dict(zip(keys, (0.1, 0.5, 0.2, 0.05), strict=True))),
            _row("classif", 1.0, 1.0, dict(zip(keys, (0.3, 0.1, 0.4, 0.05), strict=True))),
            _row("moons0.2", 32.0, 1.0, dict(zip(keys, (0.1, 0.1, 0.2, 0.45), strict=True)),
                 steps=12),
            _row("heart", 32.0, 1.0, steps=3)]  # not profiled: its steps still count
    text = " ".join(tables._families_shares(rows))
    assert "the SVC start takes 10-30% of a solve" in text
    assert "the check of `K` 10-50%" in text
    assert "`F(a)` 20-40%" in text and "Newton systems take 45%" in text
    assert "take 3-12 Newton steps" in text


def test_accelerated_paragraph_separates_certified_and_unfinished_solves():
    done = {"finished": True, "certified": True, "dank_time_s": 3.0, "n_iter": 1500}
    late = {"finished": False, "certified": False, "time_limit_s": 30.0}
    rows = [_row("moons0.3", 1.0, 0.1, acc=done), _row("blobs", 1.0, 0.1, acc=late),
            _row("heart", 32.0, 0.5, acc=done)]
    text = " ".join(tables._families_accelerated_text(rows))
    assert ("at `C = 1` it certifies make_moons in 30 times Newton's time (1,500 iterations) "
            "and does not finish in 30 s on the blobs") in text
    assert "at `C = 32` it certifies heart in 6 times Newton's time" in text
    assert tables._families_accelerated_text([_row("blobs", 1.0, 0.1)]) == []


def test_grid_profiles_are_shares_of_the_profiled_time_and_counts_per_fit():
    prof = {"total_s": 2.0, "fits": 100, "svc_start": 0.1, "validation": 0.2, "kernel": 0.1,
            "eigen": 0.6, "dense_eigh_s": 0.4, "direction": 0.4, "final_certificate": 0.1,
            "evaluations": 350, "calls": 500_000}
    s = {"dataset": "heart", "points": 100, "dank_total_s": 1.0, "svc_total_s": 0.2,
         "profile": prof}
    out = tables._grid_profiles([s, {"dataset": "none"}])
    row = next(line for line in out if line.startswith("| heart"))
    assert row == ("| heart | 10.0 (20.0) | 5% | 10% | 5% | 30% (20%) | 20% | 5% | 25% | 3.5 "
                   "| 5,000 | 3.0 |")
    assert "take 3.0 times an SVC fit, and a fit makes 5,000 Python-level" in out[-1]
    assert tables._grid_profiles([{"dataset": "none"}]) == []


def _draw(i, family, n, ratio_svc, ratio_bound, status="converged", profile=None):
    r = {"index": i, "family": family, "n": n, "sigma": 1.5, "sigma_factor": 0.8, "C": 2.0,
         "eta": 30.0, "eta_factor": 0.5, "svc_s": 0.01, "dank_s": 0.01 * ratio_svc,
         "bound_s": 0.01 * ratio_svc / ratio_bound, "eigh_s": 0.02, "eigh_size": 101,
         "support": 100, "rank_F": 4, "rel_gap": 1e-7, "status": status,
         "ratio_svc": ratio_svc, "ratio_bound": ratio_bound, "noise": 0.2}
    if profile:
        r["profile"] = profile
    return r


def test_distribution_section_summarises_by_family_and_names_the_worst_draw():
    prof = {"total_s": 2.0, "svc_start": 0.2, "validation": 0.4, "eigen": 0.6, "direction": 0.2,
            "evaluations": 7, "top": {"tottime": [
                {"function": "dank_fast/_x.py:1(f)", "tottime": 1.0},
                {"function": "linalg/_decomp.py:2(eigh)", "tottime": 0.5},
                {"function": "g", "tottime": 0.1}, {"function": "h", "tottime": 0.05}]}}
    draws = [_draw(0, "moons", 500, 4.0, 0.8), _draw(1, "moons", 1200, 10.0, 1.5),
             _draw(2, "blobs", 3000, 30.0, 6.0, "max_iter", prof)]
    data = {"meta": {"date": "2026-11-29T00:00:00", "code": {"git_head": "abc1234"},
                     "cpu_count": 2, "blas": "openblas 0.3 threads=1; openmp None threads=2",
                     "loadavg_start": [1.0, 1, 1], "loadavg_end": [2.0, 2, 2],
                     "command": "python benchmarks/bench_distribution.py --draws 3",
                     "seed": 42},
            "summary": {"draws": 3, "ratio_svc_median": 10.0, "ratio_svc_p90": 26.0,
                        "within_bound": 1 / 3, "within_2x_bound": 2 / 3, "all_certified": False,
                        "uncertified": 1, "worst": {"index": 2}, "model_ratio_svc_median": 4.0,
                        "model_within_bound": 2 / 3, "ratio_model_median": 2.5}}
    data["draws"] = draws
    text = tables.distribution_table(data)
    lines = text.splitlines()
    assert "Measured 2026-11-29 on 2 cores, one BLAS thread" in lines[0] and "seed 42" in lines[0]
    assert "git" not in lines[0]
    assert "| blobs | 1 | 3,000 | 30.0x | 30.0x | 0 of 1 | 0 of 1 | - | 0 of 1 |" in lines
    assert "| moons | 2 | 500-1,200 | 7.0x | 9.4x | 1 of 2 | 2 of 2 | - | 2 of 2 |" in lines
    assert "| all | 3 | 500-3,000 | 10.0x | 26.0x | 1 of 3 | 2 of 3 | - | 2 of 3 |" in lines
    assert ("median 10.0x, 90th percentile 26.0x; 33% within the bound, 67% within twice the "
            "bound; 1 of 3 solves NOT certified") in text
    assert ("is a median 4.0x SVC and within the bound for 67% of the draws; DANK takes a "
            "median 2.5 times it.") in text
    assert "worst draw by DANK / bound (draw 2): blobs (noise = 0.2), n = 3,000" in text
    assert "(30.0x SVC, 6.0x its bound of 50.0 ms)" in text and "07. Its profile (one more" in text
    assert ("SVC start 10%, validation of `K` (PSD test) 20%, evaluations of `F(a)` 30%, "
            "Newton systems 10%, rest 30%; 7 evaluations") in text
    assert "most own time in `dank_fast/_x.py:1(f)` 50%, `linalg/_decomp.py:2(eigh)` 25%, `g` 5%" \
        in text and "`h`" not in text


def test_distribution_runs_give_a_line_per_seed_and_the_figures_over_all_draws():
    def run(seed, date, draws, median, p90):
        meta = {"seed": seed, "date": date,
                "repeat_with": f"python benchmarks/bench_distribution.py --seed {seed}"}
        return {"meta": meta, "draws": draws,
                "summary": {"ratio_svc_median": median, "ratio_svc_p90": p90}}
    later_draws = [_draw(0, "moons", 500, 4.0, 0.5), _draw(1, "blobs", 900, 30.0, 2.5, "max_iter")]
    for r, gap in zip(later_draws, (2e-6, 6e-6), strict=True):
        r["svc_rel_gap"] = gap  # SVC's relative gap: a run of the first kind lacks it
    later = run(7, "2026-11-30T10:00:00", later_draws, 17.0, 28.0)
    first = run(5, "2026-11-29T10:00:00", [_draw(0, "moons", 700, 6.0, 1.0)], 6.0, 6.0)
    text = tables.distribution_runs_table([first, later])
    lines = text.splitlines()
    assert lines[2] == ("| 5 | 2026-11-29 | 1 | 6.0x | 6.0x | 1 of 1 | 1 of 1 | 1.00 "
                        "| 1 of 1 | - |")
    assert lines[3] == ("| 7 | 2026-11-30 | 2 | 17.0x | 28.0x | 1 of 2 | 1 of 2 | 2.50 "
                        "| 1 of 2 | 4.0e-06, 1.0e-07 |")
    assert ("Over the 2 runs (3 draws): DANK / SVC median 6.0x; 67% within the bound, 67% "
            "within twice the bound; 2 of 3 solves certified.") in text
    assert lines[-1] == "* seed 7: `python benchmarks/bench_distribution.py --seed 7`"
    assert "Over the 1 run (1 draw)" in tables.distribution_runs_table([first])


def test_distribution_bands_group_every_run_by_the_svm_fit_time():
    def draw(svc_s, ratio_svc, ratio_bound, model_s):
        r = _draw(0, "moons", 500, ratio_svc, ratio_bound)
        r.update(svc_s=svc_s, model_s=model_s, ratio_model=svc_s * ratio_svc / model_s)
        return r
    runs = [{"draws": [draw(0.002, 12.0, 2.0, 0.008), draw(0.001, 6.0, 1.0, 0.004)]},
            {"draws": [draw(0.05, 10.0, 0.5, 0.25), draw(0.0029, 8.0, 1.5, 0.0058)]}]
    lines = tables.distribution_bands_table(runs).splitlines()
    assert lines[2] == "| under 3 ms | 3 | 1 of 3 | 8.0x | 4.0x | 3.00 |"
    assert lines[3] == "| 30 ms and more | 1 | 1 of 1 | 10.0x | 5.0x | 2.00 |"
    assert len(lines) == 4  # no row for a band without draws
    old = _draw(0, "moons", 500, 10.0, 0.5)  # a run that did not record the cost model's time
    old["svc_s"] = 0.05
    assert tables.distribution_bands_table([{"draws": [old]}]).splitlines()[2] == (
        "| 30 ms and more | 1 | 1 of 1 | 10.0x | - | - |")


def test_svr_distribution_table_pairs_the_two_runs_of_one_seed():
    def run(method, seed, times, ratios, steps, acc):
        draws = [{"method": method, "n": 300 + i, "dank_s": t, "ratio_svr": q,
                  "ratio_bound": q / 5, "status": "converged", "newton_iter": k,
                  "accelerated_iter": a}
                 for i, (t, q, k, a) in enumerate(zip(times, ratios, steps, acc, strict=True))]
        summary = {"ratio_svr_median": sorted(ratios)[1], "ratio_svr_p90": max(ratios),
                   "newton_iter_median": sorted(steps)[1],
                   "fallback_draws": sum(a > 0 for a in acc)}
        meta = {"seed": seed, "date": "2026-11-30T10:00:00", "cpu_count": 2,
                "blas": "openblas threads=1",
                "repeat_with": f"python benchmarks/bench_svr_distribution.py --seed {seed}"}
        return {"meta": meta, "summary": summary, "draws": draws}
    auto = run("auto", 3, [0.1, 0.2, 0.4], [5.0, 8.0, 6.0], [4, 5, 6], [0, 0, 0])
    zero = run("newton", 3, [0.2, 0.1, 1.6], [10.0, 4.0, 24.0], [9, 12, 8], [0, 0, 50])
    lines = tables.svr_distribution_table((auto, zero)).splitlines()
    assert lines[2] == ("| the plain SVR's dual (`\"auto\"`, the default) | 3 | 6.0x | 8.0x "
                        "| 1 of 3 | 3 of 3 | 8.0x | 5 | 0 of 3 | 3 of 3 |")
    assert lines[3].startswith("| zero (`\"newton\"`) | 3 | 10.0x | 24.0x |")
    # paired times 0.5, 2.0, 0.25: geometric mean 0.25^(1/3) = 0.63, one draw over 1.25
    assert "takes 0.63 of the time of Newton from zero (geometric mean; median 0.50" in lines[5]
    assert "range 0.25-2.00; 1 draw more than 1.25 times as long" in lines[5]
    other = run("newton", 4, [0.2, 0.1, 1.6], [10.0, 4.0, 24.0], [9, 12, 8], [0, 0, 50])
    with pytest.raises(ValueError, match="not runs of the same draws"):
        tables.svr_distribution_table((auto, other))


def test_load_table_gives_each_condition_and_says_which_run_failed():
    meta = {"date": "2026-11-29", "cpus": 2, "command": "python benchmarks/bench_load.py"}
    ok = {"case": "eeg", "n": 7490, "svc_s": 2.0, "dank_s": 9.0, "dank_cpu_s": 8.9,
          "ratio": 4.5, "status": "converged", "rel_gap": 6.5e-08}
    rows = [dict(ok, condition="idle"), dict(ok, condition="nice", ratio=4.6),
            {"case": "ijcnn1", "condition": "busy", "error": "MemoryError"}]
    text = tables.load_table({"meta": meta, "rows": rows})
    assert "(`python benchmarks/bench_load.py`, `benchmarks/results/load.json`)" in text
    assert "| eeg | 7,490 | alone | 2.0 s | 9.0 s (8.9 s) | 4.5x | 6.5e-08 |" in text
    assert ("| eeg | 7,490 | beside a busy process at nice 19 | 2.0 s | 9.0 s (8.9 s) | 4.6x |"
            in text)
    assert ("| ijcnn1 | - | beside a busy process at normal priority | - | failed: MemoryError |"
            in text)
    assert text.endswith("DANK / SVM over its value alone, by solve: beside a busy process at "
                         "nice 19 1.02.")


def test_working_set_rows_are_set_against_their_support_bound():
    rows = [{"kind": "working-set", "n": 20000, "svc_time_s": 2.0, "eigh_s": 13.0,
             "eigh_size": 5029, "ratio_support_bound": 3.25},
            {"kind": "working-set", "n": 30000, "svc_time_s": 4.5},  # not finished: no bound
            _row("blobs", 1.0, 0.1)]
    assert tables._families_support_bound(rows) == [
        "Working sets at n = 20,000: `SVC + 3 T_eigh` of the final support is 41.0 s (`T_eigh` "
        "of its 5,029-point decomposition on one BLAS thread, as the solve makes its own: 13.0 "
        "s), and the certified solve takes 3.25 times that."]


def test_a_working_set_row_counts_the_newton_steps_of_its_rounds():
    """A working-set row's Newton steps are the sum over its rounds (a row may record 0 in
    ``newton_iter``); a dense row's are its own."""
    ws = dict(_row("quadratic", 4.0, 100.0, steps=0), kind="working-set",
              rounds=[{"newton": 1}, {"newton": 1}, {"newton": 3}])
    assert tables._newton_steps(ws) == "5"
    assert tables._newton_steps(_row("blobs", 1.0, 1.0, steps=7)) == "7"
    assert tables._newton_steps(dict(_row("blobs", 1.0, 1.0), newton_iter=None)) == "-"
