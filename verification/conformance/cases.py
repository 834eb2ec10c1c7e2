"""Test sets of the conformance kit: ``golden`` (the shipped vectors), ``families`` (generated,
:mod:`.families`) and ``all`` (both), as :class:`Case` objects read by the strict reader.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..formats import load_instance
from ..golden import GOLDEN_DIR, load_manifest
from .families import family_problems, write_families

__all__ = ["SETS", "Case", "KitError", "load_cases", "impl_instance"]

SETS = ("golden", "families", "all")


class KitError(RuntimeError):
    """A failure of the kit itself (exit code 2), never of the implementation under test."""


@dataclass
class Case:
    """One instance of a test set: ``id``, the set and family it belongs to, its file and the
    instance as the oracle reads it (:func:`verification.formats.load_instance`)."""

    id: str
    set: str
    family: str
    description: str
    path: str
    inst: dict

    @property
    def task(self) -> str:
        return self.inst["task"]

    @property
    def n(self) -> int:
        return int(self.inst["n"])


def _golden(tasks) -> list[Case]:
    man = load_manifest(GOLDEN_DIR)
    out = []
    for name, e in man["vectors"].items():
        if e["params"]["task"] not in tasks:
            continue
        path = os.path.join(GOLDEN_DIR, e["instance"])
        out.append(Case(name, "golden", "golden", e["corner"], path, load_instance(path)))
    return out


def _families(tasks, workdir: str) -> list[Case]:
    entries = write_families(workdir)
    problems = family_problems(entries)
    if problems:
        raise KitError("the generated families differ from their manifest: "
                       + "; ".join(problems[:3]))
    out = []
    for ident, e in entries.items():
        if e["task"] in tasks:
            path = os.path.join(workdir, f"{ident}.npz")
            out.append(Case(ident, "families", e["family"], e["description"], path,
                            load_instance(path)))
    return out


def load_cases(set_name: str, tasks=None, workdir: str | None = None) -> list[Case]:
    """The cases of ``set_name`` (``golden``, ``families`` or ``all``) for ``tasks`` (default:
    every task).  ``families`` are written into ``workdir`` (required for them) and checked
    against their sha256 manifest (:class:`KitError` on a difference).  Reading computes every
    kernel: ``O(n^2 d)`` time and ``8 n^2`` bytes per instance (n <= 1000: 8 MB)."""
    if set_name not in SETS:
        raise ValueError(f"set must be one of {SETS}, got {set_name!r}")
    tasks = tuple(tasks) if tasks else ("svm", "svr", "decomposed")
    out = []
    if set_name in ("golden", "all"):
        out += _golden(tasks)
    if set_name in ("families", "all"):
        if workdir is None:
            raise ValueError("workdir is required for the families")
        out += _families(tasks, workdir)
    return out


def impl_instance(case: Case) -> dict:
    """The dict an ``--impl`` function receives: ``task``, ``y``, ``C``, ``eta``, ``tau``,
    ``K`` (dense float64 ``n x n``); ``X`` and the kernel fields when the instance is given by
    features; ``epsilon`` (svr) and ``labels`` (decomposed)."""
    inst = case.inst
    out = {k: inst[k] for k in ("task", "y", "C", "eta", "tau", "K")}
    if inst.get("X") is not None:
        out["X"] = inst["X"]
        out.update({k: v for k, v in inst["kernel"].items() if k != "source"})
    if inst["task"] == "svr":
        out["epsilon"] = inst["epsilon"]
    if inst["task"] == "decomposed":
        out["labels"] = inst["labels"]
    return out
