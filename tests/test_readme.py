"""The README's Python examples run as a person runs them: each block saved to a file and run
with ``python file.py`` in a fresh interpreter (their asserts hold, they print something).

Running them with ``exec`` inside pytest hid a real failure: the dask example started worker
processes without the ``if __name__ == "__main__":`` guard, which fails as a script
(``RuntimeError: Nanny failed to start``; issue 15).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


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
