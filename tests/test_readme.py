"""The README's Python examples run as written (and their asserts hold)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
GUARD = 'if __name__ == "__main__":'
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("code", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_readme_example_runs(code, capsys, tmp_path):
    if GUARD in code:  # starts worker processes: run it as the script a user would save
        script = tmp_path / "readme_block.py"
        script.write_text(code)
        env = {**os.environ, "PYTHONPATH": str(README.parent)}
        done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                              env=env, cwd=tmp_path, timeout=300, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.strip()
        return
    exec(compile(code, str(README), "exec"), {"__name__": "__readme__"})
    assert capsys.readouterr().out.strip()


def test_blocks_that_start_a_cluster_are_guarded():
    """Worker processes import the script: a cluster started at import time would recurse."""
    for code in BLOCKS:
        if "LocalCluster(" in code:
            assert GUARD in code and code.index(GUARD) < code.index("LocalCluster(n_workers")
