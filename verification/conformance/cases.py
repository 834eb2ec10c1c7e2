"""Test sets of the conformance kit: ``golden`` (the shipped vectors), ``families`` (generated,
:mod:`.families`), ``all`` (both) and ``large`` (generated at the paper's scale, :mod:`.large`;
not part of ``all``), as :class:`Case` objects read by the strict reader.
"""

from __future__ import annotations

import difflib
import json
import os
import shutil
from dataclasses import dataclass

from ..formats import load_instance, save_instance, spec
from ..golden import GOLDEN_DIR, load_manifest
from .families import FAMILIES_VERSION, family_problems, write_families
from .large import LARGE_VERSION, LargeSetError, specs, write_large

__all__ = ["SETS", "EXPORT_FORMAT", "Case", "KitError", "load_cases", "select_cases",
           "impl_instance", "write_instance", "export_cases", "json_size"]

EXPORT_FORMAT = "dank-conformance-export"

SETS = ("golden", "families", "all", "large")


class KitError(RuntimeError):
    """A failure of the kit itself (exit code 2), never of the implementation under test."""


@dataclass
class Case:
    """One instance of a test set: ``id``, the set and family it belongs to, its file, the
    instance as the oracle reads it (:func:`verification.formats.load_instance`) and its own
    time limit in seconds (the large set's; ``None``: the kit's ``S + T (n/1000)^2``)."""

    id: str
    set: str
    family: str
    description: str
    path: str
    inst: dict
    time_limit: float | None = None

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


def _large(tasks, workdir: str, ids, shrink: int) -> list[Case]:
    """The large set's instances of these tasks (and ids), generated and checked."""
    ids = [s.id for s in specs(shrink) if s.task in tasks and (ids is None or s.id in ids)]
    try:
        entries = write_large(workdir, ids=ids, shrink=shrink)
    except LargeSetError as exc:
        raise KitError(f"the generated large set differs from its manifest: {exc}") from None
    return [Case(ident, "large", e["family"], e["description"],
                 os.path.join(workdir, f"{ident}.npz"),
                 load_instance(os.path.join(workdir, f"{ident}.npz")), e["time_limit"])
            for ident, e in entries.items() if e["task"] in tasks]


def load_cases(set_name: str, tasks=None, workdir: str | None = None, ids=None,
               shrink: int = 1) -> list[Case]:
    """Load the instances of a test set as ``Case`` objects.

    Parameters
    ----------
    set_name : {"golden", "families", "all", "large"}
        The shipped golden vectors, the generated families, both, or the large set.
    tasks : iterable of str, optional
        Tasks to keep among ``"svm"``, ``"svr"`` and ``"decomposed"`` (default: every task).
    workdir : str, optional
        Directory the generated instances are written into (required for every set but
        ``"golden"``).
    ids : iterable of str, optional
        The large set only: generate just these instances (an unknown id is a
        ``ValueError`` naming the closest ones); the other sets load everything and
        :func:`select_cases` picks.
    shrink : int, optional
        The large set only: divide every ``n`` by this integer
        (``verification.conformance.large.specs``; no manifest then). Default 1.

    Returns
    -------
    list of Case
        Golden vectors first (manifest order), then the families; or the large set.

    Raises
    ------
    ValueError
        If ``set_name`` is not a set, ``workdir`` is missing for a generated set, or an id
        is not in the large set.
    KitError
        If the generated instances differ from their sha256 manifest.

    Notes
    -----
    Reading computes every kernel up to the format's dense limit: ``O(n^2 d)`` time and
    ``8 n^2`` bytes per instance, all held in memory (n <= 1000: 8 MB each). The large set's
    kernels are never formed (``K`` is None: the oracle works from ``X`` in row blocks); its
    instances' ``X`` stay in memory, 0.31 GB for all five, and generating them writes 0.31 GB
    into ``workdir`` in about 20 s (on 2 busy cores).
    """
    if set_name not in SETS:
        raise ValueError(f"set must be one of {SETS}, got {set_name!r}")
    tasks = tuple(tasks) if tasks else ("svm", "svr", "decomposed")
    if set_name != "golden" and workdir is None:
        raise ValueError(f"workdir is required for the set {set_name!r}")
    if set_name == "large":
        if ids is not None:
            known = [s.id for s in specs(shrink)]
            select_cases([Case(i, "large", "", "", "", {}) for i in known], ids)
        return _large(tasks, workdir, None if ids is None else list(ids), shrink)
    out = []
    if set_name in ("golden", "all"):
        out += _golden(tasks)
    if set_name in ("families", "all"):
        out += _families(tasks, workdir)
    return out


def impl_instance(case: Case) -> dict:
    """The dict an ``--impl`` function receives: ``task``, ``y``, ``C``, ``eta``, ``tau``,
    ``K`` (dense float64 ``n x n``; None when that would exceed the format's 2 GiB limit, as in
    the large set); ``X`` and the kernel fields when the instance is given by features;
    ``epsilon`` (svr) and ``labels`` (decomposed)."""
    inst = case.inst
    out = {k: inst[k] for k in ("task", "y", "C", "eta", "tau", "K")}
    if inst.get("X") is not None:
        out["X"] = inst["X"]
        out.update({k: v for k, v in inst["kernel"].items()
                    if k not in ("source", "blockwise")})
    if inst["task"] == "svr":
        out["epsilon"] = inst["epsilon"]
    if inst["task"] == "decomposed":
        out["labels"] = inst["labels"]
    return out


def select_cases(cases: list[Case], names) -> list[Case]:
    """Keep the cases whose id is in ``names``.

    Parameters
    ----------
    cases : list of Case
        The loaded set (:func:`load_cases`).
    names : iterable of str
        Case ids to keep.

    Returns
    -------
    list of Case
        The selected cases, in the order of ``cases``.

    Raises
    ------
    ValueError
        Naming an id that is not in ``cases``, with the closest ids.
    """
    ids = [c.id for c in cases]
    for name in names:
        if name not in ids:
            near = difflib.get_close_matches(name, ids, n=3, cutoff=0.5)
            hint = f"; closest: {', '.join(near)}" if near else ""
            if name.startswith("fam") and not any(c.set == "families" for c in cases):
                hint = "; family ids are in --set families (the default set is golden)"
            if name.startswith("large") and not any(c.set == "large" for c in cases):
                hint = "; large ids are in --set large (not part of --set all)"
            raise ValueError(f"no instance {name!r} in the selected set and tasks{hint} "
                             "(--export DIR writes index.json, which lists every id)")
    wanted = set(names)
    return [c for c in cases if c.id in wanted]


def json_size(case: Case) -> int:
    """An upper estimate of the bytes of ``case`` written as JSON (26 characters a number)."""
    inst = case.inst
    numbers = inst["n"] * (3 + (inst["X"].shape[1] if inst.get("X") is not None else inst["n"]))
    return 26 * numbers


def write_instance(case: Case, path: str) -> None:
    """Write the instance file a ``--cmd`` program receives (docs/FORMATS.md; JSON when
    ``path`` ends in ``.json``): the instance's own fields, by features when it has them
    (a large-set instance as ``.npz``: its generated file, copied).

    Raises
    ------
    ValueError
        JSON for an instance above the readers' JSON limit (64 MiB).
    """
    if path.endswith(".json") and json_size(case) > spec.MAX_JSON_BYTES:
        raise ValueError(f"instance {case.id}: as JSON it would take up to "
                         f"{json_size(case) / 2**20:.0f} MiB, more than the "
                         f"{spec.MAX_JSON_BYTES / 2**20:.0f} MiB a reader accepts; "
                         "use --format npz")
    if case.set == "large" and not path.endswith(".json"):
        shutil.copyfile(case.path, path)
        return
    inst = impl_instance(case)
    if "X" in inst:
        inst.pop("K")
    save_instance(path, **inst)


def export_cases(cases: list[Case], directory: str, fmt: str, limits: dict[str, float],
                 set_name: str) -> str:
    """Write every case's instance file and an ``index.json`` listing them into a directory.

    The files are those a ``--cmd`` program receives (docs/FORMATS.md); the index (format
    ``dank-conformance-export``) gives the id, set, family, description, task, n, file and
    time limit of each.

    Parameters
    ----------
    cases : list of Case
        The instances to write.
    directory : str
        Output directory (created if missing; existing files of the same names are replaced).
    fmt : {"npz", "json"}
        Instance file format; each file is ``<id>.<fmt>``.
    limits : dict of str to float
        Time limit in seconds of every case id (as the runner's ``limit(case)`` gives it).
    set_name : str
        Name of the set, recorded in the index.

    Returns
    -------
    str
        Path of ``index.json``.

    Raises
    ------
    KeyError
        If a case has no entry in ``limits``.
    OSError
        If the directory or a file cannot be written.

    Notes
    -----
    Time ``O(sum n d)`` plus the file writes (an instance given by features is written
    without its kernel); memory one instance file at a time.
    """
    os.makedirs(directory, exist_ok=True)
    rows = []
    for c in cases:
        name = f"{c.id}.{fmt}"
        write_instance(c, os.path.join(directory, name))
        rows.append(dict(id=c.id, set=c.set, family=c.family, description=c.description,
                         task=c.task, n=c.n, file=name, time_limit=limits[c.id]))
    doc = dict(format=EXPORT_FORMAT, version=1, set=set_name, families_version=FAMILIES_VERSION,
               instance_format=fmt, instances=rows)
    if set_name == "large":
        doc["large_version"] = LARGE_VERSION
    path = os.path.join(directory, "index.json")
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(doc, fh, indent=1)
        fh.write("\n")
    return path
