"""Cells, the resumable cache of finished cells, and (parallel) execution with progress.

A *cell* is one method on one split of one data set (:class:`.protocol.Cell`). Every finished
cell is written atomically to ``<cache>/<protocol fingerprint>/<data set>/<split>_<method>.json``
as soon as it completes, so an interrupted run picks up where it stopped: a rerun with the same
settings loads the finished cells and runs only the rest. Changing any setting of
:class:`.protocol.Protocol` changes the fingerprint (a separate cache). Cells that raised are
recorded in the results but not cached (a rerun retries them).

Cells run split by split, so an interrupted run leaves whole splits finished (``--splits k``
then reports the first ``k`` from the cache). A cell that needs another cell's result
(``dank-svm`` uses ``svm-cv``'s sigma and C, ``dank-svr-svm`` uses ``svr-cv``'s) starts when
that cell has finished.

Every cell runs in a fresh worker process (``forkserver``, one task per child). Besides
isolating failures, this keeps a cell's numbers independent of which cells ran before it in
the same process (``dank_fast``'s eigensolvers now start from fixed vectors and fall back to
another method instead of raising, but a fresh process guards any other global state).
"""

from __future__ import annotations

import functools
import json
import multiprocessing
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from . import readings
from .baselines.cells import BASELINE_COST
from .data import CLASSIFICATION, REGRESSION, Dataset, load_dataset
from .protocol import CLS_BASELINES, DEPENDS, REG_BASELINES, Cell, Protocol, run_cell

__all__ = ["Cache", "Progress", "plan_cells", "run_cells"]


class Cache:
    """Finished cells on disk, keyed by the protocol's fingerprint.

    Parameters
    ----------
    root : path-like
        Cache directory (the CLI uses ``<out>/cache``).
    proto : Protocol
    """

    def __init__(self, root: str | os.PathLike, proto: Protocol):
        self.dir = Path(root) / proto.fingerprint()
        self.dir.mkdir(parents=True, exist_ok=True)
        meta = self.dir / "protocol.json"
        if not meta.exists():
            _atomic_write(meta, json.dumps(proto.to_dict(), indent=1, default=str))

    def path(self, cell: Cell) -> Path:
        return self.dir / cell.dataset / f"{cell.split:02d}_{cell.method}.json"

    def get(self, cell: Cell) -> dict | None:
        """The cached record of ``cell``, or None (missing, unreadable or not a match)."""
        p = self.path(cell)
        try:
            rec = json.loads(p.read_text())
        except (OSError, ValueError):
            return None
        if (rec.get("dataset"), rec.get("split"), rec.get("method"), rec.get("status")) != (
                cell.dataset, cell.split, cell.method, "ok"):
            return None
        rec["_cached"] = True  # in memory only (never written back)
        return rec

    def put(self, cell: Cell, rec: dict) -> None:
        """Store a finished record (only ``status == "ok"`` records are cached)."""
        if rec.get("status") != "ok":
            return
        p = self.path(cell)
        p.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(p, json.dumps(rec, default=_json_default))


def _json_default(x):

    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    return str(x)


def _atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temporary file in the same directory + rename)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def plan_cells(proto: Protocol, cls_sets: Iterable[str], reg_sets: Iterable[str]
               ) -> tuple[list[Cell], list[Cell]]:
    """The cells of a run: ``(phase 1, phase 2)``; phase 2 depends on phase 1.

    Classification: ``svm-cv``, ``mkl-uniform``, ``dank-cv`` (reading "cv") and ``dank-svm``
    (reading "svm"); with reading "cv", the sensitivity readings of :mod:`.readings`
    (they reuse ``dank-cv``'s ``(sigma, C)``). Regression: ``svr-cv``, ``dank-svr-cv``
    (reading "cv") and always ``dank-svr-svm`` (the fallback where DANK-SVR's own CV is too
    expensive).
    """
    p1, p2 = [], []
    for name in cls_sets:
        if name not in CLASSIFICATION:
            raise ValueError(f"{name!r} is not a classification set of Table 1")
        for s in range(proto.n_splits):
            p1 += [Cell(name, s, "svm-cv"), Cell(name, s, "mkl-uniform")]
            if "cv" in proto.readings:
                p1.append(Cell(name, s, "dank-cv"))
            if "svm" in proto.readings:
                p2.append(Cell(name, s, "dank-svm"))
            if "cv" in proto.readings:
                p2 += [Cell(name, s, m) for m in readings.METHODS]
            for m in CLS_BASELINES:
                (p2 if m in DEPENDS else p1).append(Cell(name, s, m))
    for name in reg_sets:
        if name not in REGRESSION:
            raise ValueError(f"{name!r} is not a regression set of Table 6")
        for s in range(proto.n_splits):
            p1.append(Cell(name, s, "svr-cv"))
            if "cv" in proto.readings:
                p1.append(Cell(name, s, "dank-svr-cv"))
            p2.append(Cell(name, s, "dank-svr-svm"))
            for m in REG_BASELINES:
                (p2 if m in DEPENDS else p1).append(Cell(name, s, m))
    return p1, p2


# relative cost of a cell (only for ordering and the ETA): CV methods fit |grid| x folds models
_COST = {"svm-cv": 1.0, "mkl-uniform": 0.3, "dank-cv": 6.0, "dank-svm": 0.3, "svr-cv": 1.0,
         "dank-svr-cv": 6.0, "dank-svr-svm": 0.3, **BASELINE_COST, **readings.COST}
_DEPENDS = {**DEPENDS, **readings.DEPENDS}


def cell_cost(cell: Cell, n_train: int, n_candidates: int, proto: Protocol | None = None
              ) -> float:
    """Rough relative cost of a cell (for ordering the work and for the ETA only)."""
    if cell.method == "dank-svr-cv" and proto is not None and n_train > proto.dank_cv_max_n:
        return 0.0  # skipped (DANK-SVR's own CV not run on large sets)
    cv = cell.method in ("svm-cv", "dank-cv", "svr-cv", "dank-svr-cv")
    return _COST[cell.method] * (n_candidates if cv else 8) * (n_train / 100.0) ** 2


class Progress:
    """A progress line on stderr: cells done, elapsed time and an ETA weighted by cell cost."""

    def __init__(self, total: int, total_cost: float, label: str, stream=None):
        self.total, self.total_cost, self.label = total, max(total_cost, 1e-12), label
        self.done, self.cost = 0, 0.0
        self.t0 = time.perf_counter()
        self.stream = stream or sys.stderr

    def update(self, cell: Cell, rec: dict, cost: float, cached: bool = False) -> None:
        self.done += 1
        self.cost += cost
        el = time.perf_counter() - self.t0
        frac = self.cost / self.total_cost
        eta = el * (1 - frac) / frac if frac > 0 and not cached else float("nan")
        bar = "#" * int(20 * self.done / max(self.total, 1))
        what = "cached" if cached else f"{rec.get('seconds', 0):.1f}s"
        if rec.get("status") == "error":
            what += " ERROR " + rec.get("error", "")[:80]
        eta_s = "" if eta != eta else f", ETA ~{_hms(eta)}"
        print(f"[dank-reproduce] {self.label} [{bar:<20}] {self.done}/{self.total} "
              f"{cell.key} {what} | elapsed {_hms(el)}{eta_s}", file=self.stream, flush=True)


def _hms(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


@functools.lru_cache(maxsize=32)
def _load(name: str, data_dir: str, spect_split: str) -> Dataset:
    return load_dataset(name, data_dir, spect_split=spect_split)


def _work(cell: Cell, data_dir: str, proto: Protocol, dep: dict | None) -> dict:
    """Run one cell in a worker with single-threaded BLAS (the jobs are the parallelism)."""

    with threadpool_limits(limits=1):
        ds = _load(cell.dataset, data_dir, proto.spect_split)
        run = readings.run_reading_cell if cell.method in readings.CELLS else run_cell
        return run(cell, ds, proto, dep)


def run_cells(cells: list[Cell], *, proto: Protocol, data_dir: str, cache: Cache | None,
              jobs: int = 1, deps: dict[str, dict] | None = None, label: str = "cells",
              n_train: Callable[[str], int] | None = None, stream=None,
              worker: Callable = _work, isolate: bool = True) -> dict[str, dict]:
    """Run every cell, or load its record from the cache, in parallel worker processes.

    Cells run split by split, the costliest first within a split; a cell that depends on
    another (same split) waits for it. Every finished record is written to the cache at
    once, so an interrupted run resumes where it stopped.

    Parameters
    ----------
    cells : list of Cell
        The cells to run.
    proto : Protocol
        Settings of the run (they key the cache).
    data_dir : str
        Directory of the data sets (``MANIFEST.md`` conventions).
    cache : Cache or None
        None: no caching (nothing is loaded or written).
    jobs : int
        Parallel worker processes.
    deps : dict, optional
        Records of finished cells by key that dependent cells may need (cells of ``cells``
        itself are found automatically).
    label : str, optional
        Name of this batch in the progress line.
    n_train : callable, optional
        Training size of a data set (for cost-ordering and the ETA).
    stream : file-like, optional
        Where the progress line goes (default ``sys.stderr``).
    worker : callable
        ``worker(cell, data_dir, proto, dep) -> record`` (replaceable in tests; must be
        importable by name when ``isolate``).
    isolate : bool
        Run every cell in a fresh process (see the module docstring). ``False`` with
        ``jobs = 1`` runs the cells in this process.

    Returns
    -------
    dict of str to dict
        ``{cell.key: record}`` for every cell (the records of
        :func:`verification.study.experiments.run_cell`); a worker process that died gives an
        ``"error"`` record.

    Raises
    ------
    KeyboardInterrupt
        Propagated after stopping the running cells (finished ones are already cached).

    Notes
    -----
    Time: the sum of the cells' own times (:func:`verification.study.experiments.run_cell`)
    divided over ``jobs`` processes; memory: up to ``jobs`` worker processes, each holding
    one data set and the kernels of one fit.
    """
    deps = deps or {}
    n_train = n_train or (lambda name: 100)
    ncand = len(proto.candidates())
    cost = {c.key: cell_cost(c, n_train(c.dataset), ncand, proto) for c in cells}
    prog = Progress(len(cells), sum(cost.values()), label, stream)
    out: dict[str, dict] = {}
    todo = []
    for c in cells:
        rec = cache.get(c) if cache is not None else None
        if rec is not None:
            out[c.key] = rec
            prog.total_cost -= cost[c.key]
            prog.total -= 1
        else:
            todo.append(c)
    if len(out):
        print(f"[dank-reproduce] {label}: {len(out)} cells loaded from the cache, "
              f"{len(todo)} to run", file=prog.stream, flush=True)
    # split by split (an interrupted run leaves whole splits done), longest cell first inside
    # a split (better packing on the workers); a dependent cell waits for its dependency
    todo.sort(key=lambda c: (c.split, -cost[c.key]))
    planned = {c.key for c in todo}

    def dep_key(c: Cell) -> str | None:
        return Cell(c.dataset, c.split, _DEPENDS[c.method]).key if c.method in _DEPENDS else None

    def dep_of(c: Cell):
        k = dep_key(c)
        return None if k is None else (out.get(k) or deps.get(k))

    def runnable(c: Cell) -> bool:
        k = dep_key(c)
        return k is None or k in out or k in deps or k not in planned

    def finish(c: Cell, rec: dict):
        out[c.key] = rec
        if cache is not None:
            cache.put(c, rec)
        prog.update(c, rec, cost[c.key])

    def take():
        for i, c in enumerate(todo):
            if runnable(c):
                return todo.pop(i)
        return None

    if not todo:
        return out
    if not isolate and jobs <= 1:
        while todo:
            c = take()
            finish(c, worker(c, data_dir, proto, dep_of(c)))
        return out

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["numpy", "scipy.linalg", "sklearn.svm", "dank_fast",
                                "verification.study.experiments.protocol"])
    ex = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, max_tasks_per_child=1)
    running: dict = {}
    try:
        while todo or running:
            while len(running) < jobs and (c := take()) is not None:
                running[ex.submit(worker, c, data_dir, proto, dep_of(c))] = c
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for f in done:
                c = running.pop(f)
                try:
                    rec = f.result()
                except Exception as exc:  # the worker process died (killed, out of memory)
                    rec = dict(dataset=c.dataset, split=c.split, method=c.method,
                               status="error", error=f"worker process failed: {exc!r}",
                               seconds=0.0, warnings={})
                finish(c, rec)
    except BaseException:  # interrupted: stop the running cells too (finished ones are cached)
        ex.shutdown(wait=False, cancel_futures=True)
        # a broken pool (a worker killed) has already dropped its process table (None)
        for proc in list((getattr(ex, "_processes", None) or {}).values()):
            proc.terminate()
        raise
    ex.shutdown(wait=True)
    return out
