"""benchmarks/bench_svr_distribution.py: the draws follow the stated distribution and repeat
from their seed, the data are standardised, a tiny run writes the documented fields for both
methods (its bad arguments: tests/test_benchmark_args.py). No timing is asserted."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _scripts import load_script

bench = load_script("benchmarks/bench_svr_distribution.py")
DRAW_FIELDS = {"index", "family", "n", "n_features", "noise", "sigma_factor", "C", "epsilon",
               "eta_factor", "data_seed", "method", "sigma", "eta", "svr_s", "dank_s",
               "status", "certified", "rel_gap", "support", "rank_F", "newton_iter",
               "accelerated_iter", "eigh_s", "eigh_size", "bound_s", "ratio_svr",
               "ratio_bound"}
SUMMARY_FIELDS = {"draws", "ratio_svr_median", "ratio_svr_p90", "within_bound",
                  "within_2x_bound", "newton_iter_median", "fallback_draws", "all_certified",
                  "uncertified", "worst"}


def test_a_draw_depends_only_on_the_seed_and_its_index():
    first = [bench.draw(7, i) for i in range(5)]
    assert first == [bench.draw(7, i) for i in range(5)]
    assert first != [bench.draw(8, i) for i in range(5)]
    capped = bench.draw(7, 3, max_n=50)
    assert capped["n"] == 50 and dict(capped, n=first[3]["n"]) == first[3]


def test_draws_respect_the_stated_ranges():
    draws = [bench.draw(seed, i) for seed in (0, 1) for i in range(200)]
    assert {d["family"] for d in draws} == set(bench.FAMILIES)
    for d in draws:
        assert isinstance(d["n"], int) and 200 <= d["n"] <= 2000
        assert 10**-0.5 <= d["sigma_factor"] <= 10**0.3
        assert 0.1 <= d["C"] <= 100 and 0.01 <= d["epsilon"] <= 10**-0.5
        assert 0.01 <= d["eta_factor"] <= 10**0.5
        if d["family"] == "sinc":
            assert 1 <= d["n_features"] <= 5 and 0.05 <= d["noise"] <= 0.3
        else:
            assert 5 <= d["n_features"] <= 10 and 0.2 <= d["noise"] <= 2.0
    below = np.mean([d["n"] < np.sqrt(200 * 2000) for d in draws])
    assert 0.4 < below < 0.6


@pytest.mark.parametrize("family", bench.FAMILIES)
def test_data_are_standardised(family):
    d = next(bench.draw(3, i, max_n=80) for i in range(100)
             if bench.draw(3, i)["family"] == family)
    X, y = bench.make_data(d)
    assert X.shape == (80, d["n_features"]) and y.shape == (80,)
    np.testing.assert_allclose(X.mean(0), 0.0, atol=1e-12)
    np.testing.assert_allclose([X.std(0).min(), y.std()], 1.0)
    assert abs(y.mean()) < 1e-12


@pytest.mark.parametrize("method", ["auto", "newton"])
def test_tiny_run_writes_the_documented_fields(method, tmp_path, capsys):
    out = tmp_path / "s.json"
    assert bench.main(["--draws", "2", "--max-n", "60", "--seed", "5", "--method", method,
                       "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["meta"]["seed"] == 5 and f"--method {method}" in res["meta"]["repeat_with"]
    assert SUMMARY_FIELDS <= set(res["summary"]) and res["summary"]["draws"] == 2
    for r, d in zip(res["draws"], (bench.draw(5, 0, 60), bench.draw(5, 1, 60)), strict=True):
        assert DRAW_FIELDS <= set(r) and all(r[k] == v for k, v in d.items())
        assert r["method"] == method and r["status"] == "converged" and r["certified"]
        assert len(r["svr_times_s"]) == 3 and len(r["dank_times_s"]) == 1
        assert r["eigh_size"] == r["support"] + (r["support"] < r["n"])
        assert r["bound_s"] == pytest.approx(max(5 * r["svr_s"], r["svr_s"] + 3 * r["eigh_s"]))
        assert r["ratio_svr"] == pytest.approx(r["dank_s"] / r["svr_s"])
    printed = capsys.readouterr()
    assert "# seed 5" in printed.out and "DANK/SVR median" in printed.out
    assert len(printed.err.strip().splitlines()) == 2
