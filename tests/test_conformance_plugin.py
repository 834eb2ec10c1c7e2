"""The pytest plugin: inert without --dank-impl, one test per instance with it,
each failure carrying the oracle's diagnosis and reasons."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pytest(tmp_path, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests")]))
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "verification.conformance.plugin",
                           "-p", "no:cacheprovider", "-q", "--pyargs", "verification.conformance",
                           *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)


def test_one_test_per_instance_failing_with_the_reasons(tmp_path):
    r = _pytest(tmp_path, "--dank-impl", "_conformance_impls:wrong_bias", "--dank-task", "svm",
                "-k", "p1_n2")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 failed, 21 deselected" in r.stdout and "test_instance[p1_n2]" in r.stdout
    assert "not certified: alpha is certified but the bias is not" in r.stdout
    assert "bias: with the submitted bias 1 the relative gap is" in r.stdout


def test_inert_without_dank_impl(tmp_path):
    r = _pytest(tmp_path, "-rs")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 skipped" in r.stdout and "give --dank-impl MODULE:FUNCTION" in r.stdout


def test_loading_the_plugin_imports_nothing_heavy():
    code = ("import sys, verification.conformance.plugin; "
            "print(sorted(m for m in ('numpy', 'scipy', 'verification.oracle', 'dank_fast') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
