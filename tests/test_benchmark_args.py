"""The benchmark scripts refuse bad arguments before a run of minutes, with exit code 2."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("argv, message", [
    (["--C", "-1"], "--C must be positive"),
    (["--C", "1", "0"], "--C must be positive"),
    (["--sigma", "0"], "--sigma must be positive"),
    (["--tol", "nan"], "--tol must be positive"),
    (["--tau", "-0.5"], "--tau must be >= 0"),
    (["--max-time", "-1"], "--max-time must be >= 0"),
    (["--blas-threads", "0"], "--blas-threads must be at least 1"),
    (["--repeat", "0"], "--repeat must be at least 1"),
    (["--json", "/nonexistent-dir/x.json"], "does not exist"),
])
def test_bench_svm_refuses_bad_arguments(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        _script("bench_svm").parse_args(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_bench_svm_accepts_its_defaults():
    args = _script("bench_svm").parse_args([])
    assert args.C == [1.0, 32.0] and args.tau == 0.01
