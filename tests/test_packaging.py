"""The wheel contains every subpackage and the golden vectors (a missing one broke dank-verify)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_contains_all_packages_and_data(tmp_path):
    # build from a clean copy (setuptools reuses an in-tree build/ directory), isolated as
    # `pip install .` builds (the build backend comes from PyPI)
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", "build", "*.egg-info", "__pycache__", ".hypothesis", ".pytest_cache"))
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q", "-w", str(tmp_path)],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    (wheel,) = tmp_path.glob("dank-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for pkg in ("dank_fast", "dank_ref", "verification"):
        for init in (ROOT / pkg).rglob("__init__.py"):
            rel = init.relative_to(ROOT).as_posix()
            assert rel in names, f"{rel} missing from the wheel"
    golden = {p.relative_to(ROOT).as_posix() for p in (ROOT / "verification/golden").iterdir()
              if p.suffix in (".npz", ".json")}
    assert golden and golden <= names, sorted(golden - names)
