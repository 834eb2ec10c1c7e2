"""Repository tooling (benchmark and docs scripts, the core-type runner) loaded by its path:
scripts, not installed modules."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_script(relpath: str) -> ModuleType:
    """The module of the script at ``relpath`` (from the repository root), executed afresh and
    named after its file."""
    path = ROOT / relpath
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
