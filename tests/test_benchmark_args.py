"""The benchmark scripts refuse bad arguments before a run of minutes, with exit code 2; the
family benchmark's rows are paired, certified and time-limited."""

from __future__ import annotations

import pytest
from _scripts import ROOT, load_script


def _script(name: str):
    return load_script(f"benchmarks/{name}.py")


@pytest.mark.parametrize("script, argv, message", [
    ("bench_svm", ["--C", "-1"], "--C must be positive"),
    ("bench_svm", ["--C", "1", "0"], "--C must be positive"),
    ("bench_svm", ["--sigma", "0"], "--sigma must be positive"),
    ("bench_svm", ["--tol", "nan"], "--tol must be positive"),
    ("bench_svm", ["--tau", "-0.5"], "--tau must be >= 0"),
    ("bench_svm", ["--max-time", "-1"], "--max-time must be >= 0"),
    ("bench_svm", ["--blas-threads", "0"], "--blas-threads must be at least 1"),
    ("bench_svm", ["--repeat", "0"], "--repeat must be at least 1"),
    ("bench_svm", ["--json", "/nonexistent-dir/x.json"], "does not exist"),
    ("bench_families", ["--C", "0"], "must be positive"),
    ("bench_families", ["--ws-eta", "-1"], "must be positive"),
    ("bench_families", ["--max-time", "-1"], "time limits >= 0"),
    ("bench_families", ["--accelerated-max-time", "nan"], "time limits >= 0"),
    ("bench_families", ["--sizes", "5"], "sizes must be at least 10"),
    ("bench_families", ["--ovo-jobs", "0"], "--ovo-jobs at least 1"),
    ("bench_families", ["--json", "/nonexistent-dir/x.json"], "does not exist"),
    ("bench_grid", ["--tau", "-1"], "--tau must be >= 0"),
    ("bench_grid", ["--tau", "nan"], "--tau must be >= 0"),
    ("bench_grid", ["--datasets", "nope"], "unknown nope"),
    ("bench_load", ["--cases", "nope"], "invalid choice: 'nope'"),
    ("bench_load", ["--conditions", "loaded"], "invalid choice: 'loaded'"),
    ("bench_load", ["--json", "/nonexistent-dir/x.json"], "does not exist"),
    *[(script, argv, message)
      for script in ("bench_distribution", "bench_ablation", "bench_svr_distribution")
      for argv, message in [  # the arguments of every seeded run (seeded_parser)
          (["--draws", "0"], "--draws must be at least 1"),
          (["--draws", "many"], "invalid int value"),
          (["--repeat", "0"], "--repeat must be at least 1"),
          (["--max-n", "5"], "--max-n must be at least 20"),
          (["--seed", "-1"], "--seed must be in"),
          (["--out", "/nonexistent-dir/x.json"], "does not exist"),
          (["--bogus"], "unrecognized arguments")]],
    ("bench_distribution", ["--blas-threads", "-1"], "--blas-threads must be >= 0"),
    ("bench_ablation", ["--tau", "-1"], "--tau must be finite and >= 0"),
    ("bench_ablation", ["--tau", "nan"], "--tau must be finite and >= 0"),
    ("bench_ablation", ["--routes", "bogus"], "invalid choice"),
    ("bench_svr_distribution", ["--method", "paper"], "invalid choice: 'paper'"),
])
def test_benchmark_scripts_refuse_bad_arguments(script, argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        _script(script).parse_args(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err
    assert len(err.strip().splitlines()) == 1, err


#: every command-line script of benchmarks/ (each parses with benchmarks/_args.py)
SCRIPTS = sorted(p.stem for p in (ROOT / "benchmarks").glob("*.py") if not p.stem.startswith("_"))


def _run(script: str, *argv: str):
    import subprocess
    import sys

    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / f"{script}.py"), *argv],
                          capture_output=True, text=True, timeout=120, cwd="/")


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_benchmark_script_refuses_an_unknown_option_in_one_line(script):
    out = _run(script, "--no-such-option")
    err = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(err) == 1 and "error:" in err[0], out.stderr


@pytest.mark.parametrize("script, argv, message", [
    ("bench_ref", ["--json", "/nonexistent-dir/x.json"], "does not exist"),
    ("bench_ref", ["--render", "/nonexistent.json"], "is not a file"),
    ("bench_scale", ["--out", "/nonexistent-dir/x.json"], "does not exist"),
    ("bench_baselines", ["--json", "/nonexistent-dir/x.json"], "does not exist"),
    ("bench_distribution", ["--out", "/tmp"], "is a directory"),
    ("bench_families", ["--json", "/tmp"], "is a directory"),
    ("bench_large", ["--json", "/tmp"], "is a directory"),
    ("bench_large", ["--json", "/nonexistent-dir/x.json"], "does not exist"),
    ("bench_readings", ["--results", "/nonexistent.json"], "is not a file"),
    ("bench_readings", ["--splits", "x"], "split indices expected"),
    ("memory_probe", ["--repo", "/nonexistent"], "holds no dank_fast package"),
])
def test_benchmark_scripts_refuse_bad_files_before_running(script, argv, message):
    """A file a run would read or write is checked first: exit 2, one line (from any
    directory: a default path is the checkout's)."""
    out = _run(script, *argv)
    err = out.stderr.strip().splitlines()
    assert out.returncode == 2 and len(err) == 1 and message in err[0], out.stderr


@pytest.mark.parametrize("script, argv", [
    ("bench_large", ["--rows", "nope"]), ("bench_large", ["--datasets", "nope"]),
    ("bench_distribution", ["--draws", "0"]), ("bench_distribution", ["--seed", "-1"]),
])
def test_benchmark_refusals_are_one_line(script, argv, capsys):
    mod = _script(script)
    with pytest.raises(SystemExit) as exc:
        (mod.parse_args if hasattr(mod, "parse_args") else mod.main)(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1 and "error:" in err[0]


def test_bench_svm_accepts_its_defaults():
    args = _script("bench_svm").parse_args([])
    assert args.C == [1.0, 32.0] and args.tau == 0.01


def test_bench_families_rows_are_paired_certified_and_time_limited(tmp_path):
    import json

    out = tmp_path / "rows.json"
    bench = _script("bench_families")
    common = ["--families", "blobs", "--C", "1", "--small-eta-sizes", "80", "--ovo-sizes", "100",
              "--ovo-jobs", "1", "--repeat", "2", "--json", str(out)]
    assert bench.main(["--sizes", "80", "--accelerated-sizes", "80", *common]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert [(r["kind"], r["eta_rule"]) for r in rows] == [
        ("dense", "||a_SVC||^2"), ("dense", "||a_SVC||^2/100"), ("ovo", "||a_SVC||^2")]
    for r in rows:
        assert r["finished"] and r["certified"] and r["status"] == "converged"
        assert len(r["ratios"]) == 2 and r["ratio"] > 0
    assert rows[0]["eta"] == pytest.approx(100 * rows[1]["eta"])
    assert rows[0]["accelerated"]["finished"] and rows[0]["accelerated"]["certified"]
    # a solve stopped at its time limit is reported as not finished, with a lower bound
    assert bench.main(["--sizes", "80", "--accelerated-sizes", "--max-time", "1e-4",
                       *common]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert all(not r["finished"] and r["ratio"] is None and r["ratio_above"] > 0 for r in rows)
    assert all(r["status"] == "not finished in 0.0001 s" for r in rows)


def _data_dir():
    from verification.study.experiments.data import DataDirError, resolve_data_dir

    try:
        return resolve_data_dir()
    except DataDirError:
        return None


@pytest.mark.skipif(_data_dir() is None, reason="data sets not present")
def test_bench_grid_profile_adds_the_parts_of_a_fit(tmp_path, capsys):
    import json

    out = tmp_path / "grid.json"
    bench = _script("bench_grid")
    assert bench.main(["--datasets", "fertility", "--grid", "-1", "1", "--repeat", "1",
                       "--no-warm", "--profile", "--json", str(out)]) is None
    s = json.loads(out.read_text())["summaries"][0]
    p = s["profile"]
    assert p["fits"] == 4 == s["points"] and s["uncertified"] == 0
    parts = ("svc_start", "validation", "kernel", "eigen", "direction", "final_certificate")
    assert all(p[k] > 0 for k in parts) and sum(p[k] for k in parts) < p["total_s"]
    assert p["dense_eigh_s"] <= p["eigen"] and p["evaluations"] >= 2 * p["fits"]
    assert p["calls"] > 100 * p["fits"]
    assert "#   profile: " in capsys.readouterr().out


@pytest.mark.parametrize("content, message", [
    (None, "cannot be read as JSON"), ("{", "cannot be read as JSON"),
    ("{}", "not a bench_large.py results file"), ("[1]", "not a bench_large.py results file"),
])
def test_bench_large_readme_only_refuses_a_file_that_is_not_its_results(
        tmp_path, capsys, content, message):
    """``--readme-only`` rewrites benchmarks/README.md from a results file: anything else exits
    2 with one line, before the README is touched."""
    path = tmp_path / "large.json"
    if content is not None:
        path.write_text(content)
    readme = (ROOT / "benchmarks" / "README.md").read_text()
    with pytest.raises(SystemExit) as exc:
        _script("bench_large").main(["--readme-only", "--json", str(path)])
    err = capsys.readouterr().err.strip().splitlines()
    assert exc.value.code == 2 and len(err) == 1
    assert message in err[0] and "error: --json" in err[0]
    assert (ROOT / "benchmarks" / "README.md").read_text() == readme
