"""What every table of ``docs/scripts/tables.py`` shares: the committed results directory, its
loader, and the formatters of spans, counts, times and BLAS threads."""

from __future__ import annotations

import json
from pathlib import Path

RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "results"


def load_results(name: str) -> dict:
    """The committed results file ``name``; a ValueError that names it where it is not a JSON
    results file."""
    path = RESULTS / name
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path.relative_to(RESULTS.parents[1])}: not a JSON results file "
                         f"({exc})") from None


def span(values, fmt: str = "{:.0f}") -> str:
    """``lo-hi`` of ``values`` in ``fmt``, one value where both format alike."""
    lo, hi = min(values), max(values)
    return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else (
        f"{fmt.format(lo)}-{fmt.format(hi)}")


def count(k: int, noun: str) -> str:
    """``k`` and ``noun``, plural unless ``k`` is 1."""
    return f"{k} {noun}" if k == 1 else f"{k} {noun}s"


def ms(t: float) -> str:
    """Seconds ``t`` in ms below a second, else in s."""
    return f"{1000 * t:.1f} ms" if t < 1 else f"{t:.2f} s"


def threads(meta: dict) -> str:
    """The BLAS threads of a run's ``meta`` (OpenMP's own entry left out)."""
    blas = [e for e in meta["blas"].split(";") if not e.strip().startswith("openmp")]
    one = all(e.strip().endswith("threads=1") for e in blas)
    return "one BLAS thread" if one else "the configured BLAS threads"
