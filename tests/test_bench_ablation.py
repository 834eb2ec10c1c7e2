"""benchmarks/bench_ablation.py: every route it switches off names a function of dank_fast that
exists (a renamed one would otherwise measure nothing), a switch is undone after its solves, a
tiny run writes the documented fields (its bad arguments: tests/test_benchmark_args.py).
No timing is asserted."""

from __future__ import annotations

import importlib
import json

import pytest
from _scripts import ROOT, load_script

bench = load_script("benchmarks/bench_ablation.py")
ROUTE_FIELDS = {"ratio_geomean", "ratio_median", "ratio_p90", "ratio_worst", "worst_index",
                "slower_25pct", "ratio_svc_median", "newton_iter_median", "all_certified"}


@pytest.mark.parametrize("route", sorted(bench.ROUTES))
def test_each_route_names_a_function_of_the_core_and_is_restored(route):
    module_name, name, replacement = bench.ROUTES[route]
    module = importlib.import_module(module_name)
    original = getattr(module, name)
    assert callable(original) and original is not replacement
    with bench.switched_off(route):
        assert getattr(module, name) is replacement
    assert getattr(module, name) is original
    with pytest.raises(RuntimeError), bench.switched_off(route):
        raise RuntimeError("a failed solve")
    assert getattr(module, name) is original


def test_the_routes_are_the_ones_the_architecture_page_lists():
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    for module_name, name, _ in bench.ROUTES.values():
        assert f"`{module_name.split('.')[-1]}.{name}`" in text


def test_tiny_run_writes_the_documented_fields(tmp_path, capsys):
    out = tmp_path / "a.json"
    assert bench.main(["--draws", "2", "--max-n", "120", "--tau", "1", "--seed", "5",
                       "--routes", "secant", "exact_hessian", "--repeat", "1",
                       "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert res["meta"]["seed"] == 5 and "--tau 1" in res["meta"]["command"]
    s = res["summary"]
    assert s["draws"] == 2 and s["full"]["all_certified"]
    for route in ("secant", "exact_hessian"):
        assert ROUTE_FIELDS <= set(s[route]) and s[route]["all_certified"]
        assert s[route]["ratio_worst"] >= s[route]["ratio_median"] > 0
    assert "woodbury" not in s
    for r, i in zip(res["draws"], (0, 1), strict=True):
        assert r["index"] == i and r["n"] == 120 and r["tau"] == 1.0
        assert r["full"]["status"] == "converged" and r["full"]["rel_gap"] <= 1e-6
        assert set(r["without"]) == {"secant", "exact_hessian"}
    printed = capsys.readouterr()
    assert "# seed 5" in printed.out and "| exact_hessian |" in printed.out
    assert len(printed.err.strip().splitlines()) == 2


def test_family_rows_are_bench_families_dense_rows(tmp_path, capsys):
    """``--families``: the table's dense rows up to ``--max-n``, each with its ``eta`` rule."""
    out = tmp_path / "f.json"
    assert bench.main(["--families", "--max-n", "1000", "--routes", "secant", "--repeat", "1",
                       "--seed", "3", "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    rows = res["draws"]
    synthetic = [r for r in rows if r["n"] == 1000]
    assert {r["family"] for r in synthetic} == {"moons0.2", "moons0.3", "blobs", "classif"}
    assert {r["C"] for r in synthetic} == {1.0, 32.0}
    assert all(r["eta_rule"] == "||a_SVC||^2" and r["n"] <= 1000 for r in rows)
    assert [r["index"] for r in rows] == list(range(len(rows)))
    assert res["summary"]["draws"] == len(rows) and res["summary"]["secant"]["all_certified"]
    assert "--families" in res["meta"]["command"]
    err = capsys.readouterr().err.splitlines()
    assert len([line for line in err if line.startswith("row ")]) == len(rows)


def test_family_rows_below_every_size_are_refused_in_one_line(tmp_path, capsys):
    """The smallest row of the family table has 135 points (heart)."""
    assert bench.main(["--families", "--max-n", "100", "--out", str(tmp_path / "f.json")]) == 2
    err = capsys.readouterr().err
    assert "error: no family row has n <= 100" in err
    assert not (tmp_path / "f.json").exists()
