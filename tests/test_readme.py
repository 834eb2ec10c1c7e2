"""The README: its Python examples run as a person runs them (each block saved to a file and
run with ``python file.py`` in a fresh interpreter: their asserts hold, they print something),
each is taken verbatim from a gallery script (one source), and it stays a short page without a
development narrative.

Running the blocks with ``exec`` inside pytest would hide a real failure, such as a dask example
that starts worker processes without the ``if __name__ == "__main__":`` guard.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
GALLERY = [p.read_text() for p in sorted((ROOT / "docs" / "examples").glob("plot_*.py"))]
# words of a development log, which belongs in git and CHANGELOG.md
NARRATIVE = re.compile(r"before/after|target (?:10x|5x)?:? ?met|tried and dropped|session|"
                       r"\bwas tried\b|starting code|run alternately", flags=re.I)


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs_as_a_script(code, tmp_path):
    if "distributed" in code:
        pytest.importorskip("distributed")
    script = tmp_path / "example.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300, check=False)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip()


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_is_a_gallery_cell(code):
    assert any(code in script for script in GALLERY), \
        "copy the block from docs/examples/plot_*.py (the gallery is the one source)"


@pytest.mark.parametrize("path", ["README.md", "benchmarks/README.md", "reproduction/README.md",
                                  *sorted(str(p.relative_to(ROOT))
                                          for p in (ROOT / "docs").rglob("*.md")
                                          if "_build" not in p.parts)])
def test_no_development_narrative(path):
    hits = NARRATIVE.findall((ROOT / path).read_text())
    assert not hits, f"{path}: {hits}"


def test_readme_is_short():
    assert len(README.read_text().splitlines()) <= 150
