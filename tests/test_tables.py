"""The measured paragraphs of the performance pages say what the committed results say
(docs/scripts/tables.py): the shares of the profiled family rows, the accelerated column, the
grid's profiles."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _load_script():
    """docs/scripts/tables.py is repository tooling, not an installed module."""
    spec = importlib.util.spec_from_file_location("tables", ROOT / "docs" / "scripts" / "tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tables = _load_script()


def _row(family, C, time_s, shares=None, acc=None, steps=5):
    r = {"kind": "dense", "family": family, "n": 2000, "C": C, "eta_rule": "||a_SVC||^2",
         "dank_time_s": time_s, "newton_iter": steps}
    if shares is not None:
        r["profile"] = {"total_s": 1.0, **shares}
    if acc is not None:
        r["accelerated"] = acc
    return r


def test_family_shares_give_the_range_of_each_part_and_the_largest_psd_test():
    keys = ("svc_start", "validation", "eigen", "direction")
    rows = [_row("blobs", 1.0, 1.0, dict(zip(keys, (0.1, 0.5, 0.2, 0.05), strict=True))),
            _row("classif", 1.0, 1.0, dict(zip(keys, (0.3, 0.1, 0.4, 0.05), strict=True))),
            _row("moons0.2", 32.0, 1.0, dict(zip(keys, (0.1, 0.1, 0.2, 0.45), strict=True)),
                 steps=12),
            _row("heart", 32.0, 1.0, steps=3)]  # not profiled: its steps still count
    text = " ".join(tables._families_shares(rows))
    assert "the SVC start takes 10-30% of a solve" in text
    assert "PSD test of the README's call 10-50% (most on the blobs at n = 2,000)" in text
    assert "`F(a)` 20-40%" in text and "Newton systems take 45%" in text
    assert "take 3-12 Newton steps" in text


def test_accelerated_paragraph_separates_certified_and_unfinished_solves():
    done = {"finished": True, "certified": True, "dank_time_s": 3.0, "n_iter": 1500}
    late = {"finished": False, "certified": False, "time_limit_s": 30.0}
    rows = [_row("moons0.3", 1.0, 0.1, acc=done), _row("blobs", 1.0, 0.1, acc=late),
            _row("heart", 32.0, 0.5, acc=done)]
    text = " ".join(tables._families_accelerated_text(rows))
    assert ("at `C = 1` it certifies make_moons in 30 times Newton's time (1,500 iterations) "
            "and does not finish in 30 s on the blobs") in text
    assert "at `C = 32` it certifies heart in 6 times Newton's time" in text
    assert tables._families_accelerated_text([_row("blobs", 1.0, 0.1)]) == []


def test_grid_profiles_are_shares_of_the_profiled_time_and_counts_per_fit():
    prof = {"total_s": 2.0, "fits": 100, "svc_start": 0.1, "validation": 0.2, "kernel": 0.1,
            "eigen": 0.6, "dense_eigh_s": 0.4, "direction": 0.4, "final_certificate": 0.1,
            "evaluations": 350, "calls": 500_000}
    s = {"dataset": "heart", "points": 100, "dank_total_s": 1.0, "svc_total_s": 0.2,
         "profile": prof}
    out = tables._grid_profiles([s, {"dataset": "none"}])
    row = next(line for line in out if line.startswith("| heart"))
    assert row == ("| heart | 10.0 (20.0) | 5% | 10% | 5% | 30% (20%) | 20% | 5% | 25% | 3.5 "
                   "| 5,000 | 3.0 |")
    assert "take 3.0 times an SVC fit, and a fit makes 5,000 Python-level" in out[-1]
    assert tables._grid_profiles([{"dataset": "none"}]) == []
