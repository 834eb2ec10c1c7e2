"""Resume logic of dank-reproduce: the cache of finished cells, interruption, parallel jobs.

Uses a fake worker (no solving), so it runs in well under a second (plus one loky start-up).
"""

from __future__ import annotations

import io
import json
import os
from concurrent.futures.process import BrokenProcessPool

import pytest

from verification.study.experiments import readings
from verification.study.experiments.protocol import DEPENDS, Cell, Protocol
from verification.study.experiments.runner import Cache, plan_cells, run_cells

PROTO = Protocol(sigma_grid=(1.0,), C_grid=(1.0,), n_splits=3)


def fake_worker(cell, data_dir, proto, dep):
    """Deterministic stand-in for a cell: a number from the cell's identity (and its dep)."""
    val = (len(cell.dataset) * 100 + cell.split * 10 + len(cell.method)) / 1000
    rec = dict(dataset=cell.dataset, split=cell.split, method=cell.method, status="ok",
               value=val, seconds=0.0)
    if dep is not None:
        rec["dep_value"] = dep["value"]
    if cell.method == "svm-cv" and cell.dataset == "bad":
        rec = dict(rec, status="error", error="boom")
    return rec


def _cells():
    return [Cell(d, s, m) for d in ("heart", "wine") for s in range(3)
            for m in ("svm-cv", "mkl-uniform")]


def _run(cells, cache, worker=fake_worker, jobs=1, deps=None, isolate=False):
    return run_cells(cells, proto=PROTO, data_dir="unused", cache=cache, jobs=jobs,
                     worker=worker, deps=deps, stream=io.StringIO(), isolate=isolate)


def _strip(recs):
    return {k: {kk: vv for kk, vv in r.items() if kk != "_cached"} for k, r in recs.items()}


def test_interrupted_run_resumes_where_it_stopped(tmp_path):
    cells = _cells()
    calls = []

    def interrupted(cell, *a):
        if len(calls) == 5:
            raise KeyboardInterrupt
        calls.append(cell.key)
        return fake_worker(cell, *a)

    cache = Cache(tmp_path, PROTO)
    with pytest.raises(KeyboardInterrupt):
        _run(cells, cache, interrupted)
    assert len(calls) == 5
    stored = sorted(p.name for p in cache.dir.rglob("*.json") if p.name != "protocol.json")
    assert len(stored) == 5
    assert not list(cache.dir.rglob(".tmp-*"))  # atomic writes leave no partial files

    second = []

    def counting(cell, *a):
        second.append(cell.key)
        return fake_worker(cell, *a)

    recs = _run(cells, Cache(tmp_path, PROTO), counting)
    assert sorted(second) == sorted(set(c.key for c in cells) - set(calls))
    assert sum(r.get("_cached", False) for r in recs.values()) == 5
    fresh = _run(cells, None)
    assert _strip(recs) == _strip(fresh)

    third = []
    _run(cells, Cache(tmp_path, PROTO), lambda c, *a: third.append(c) or fake_worker(c, *a))
    assert third == []  # everything finished: nothing re-run


def test_split_major_order_and_fingerprint_ignores_n_splits(tmp_path):
    order = []
    cells = _cells()
    _run(cells, None, lambda c, *a: order.append(c) or fake_worker(c, *a))
    assert [c.split for c in order] == sorted(c.split for c in order)
    assert Protocol(n_splits=3).fingerprint() == Protocol(n_splits=10).fingerprint()
    assert Protocol(readings=("svm",)).fingerprint() == Protocol().fingerprint()


def test_cache_is_keyed_by_the_protocol(tmp_path):
    cells = _cells()[:2]
    _run(cells, Cache(tmp_path, PROTO))
    other = Protocol(sigma_grid=(1.0,), C_grid=(1.0,), n_splits=3, seed=7)
    calls = []
    run_cells(cells, proto=other, data_dir="", cache=Cache(tmp_path, other), isolate=False,
              worker=lambda c, *a: calls.append(c) or fake_worker(c, *a), stream=io.StringIO())
    assert len(calls) == 2
    meta = json.loads((Cache(tmp_path, other).dir / "protocol.json").read_text())
    assert meta["seed"] == 7


def test_errors_and_corrupt_entries_are_rerun(tmp_path):
    cache = Cache(tmp_path, PROTO)
    bad = [Cell("bad", 0, "svm-cv")]
    rec = _run(bad, cache)[bad[0].key]
    assert rec["status"] == "error"
    assert not cache.path(bad[0]).exists()  # failures are not cached
    good = [Cell("heart", 0, "svm-cv")]
    _run(good, cache)
    cache.path(good[0]).write_text("{ truncated")
    calls = []
    _run(good, cache, lambda c, *a: calls.append(c) or fake_worker(c, *a))
    assert calls == good
    # a cached record of another cell (e.g. a renamed file) is not accepted
    cache.path(good[0]).write_text(json.dumps(fake_worker(Cell("wine", 0, "svm-cv"), 0, 0, None)))
    assert cache.get(good[0]) is None


def test_isolated_parallel_jobs_give_the_same_records(tmp_path):
    cells = _cells()
    seq = _run(cells, None, jobs=1)
    par = _run(cells, Cache(tmp_path, PROTO), jobs=2, isolate=True)
    assert _strip(par) == _strip(seq)
    assert len(list(Cache(tmp_path, PROTO).dir.rglob("*_*.json"))) == len(cells)
    one = _run(cells[:2], None, jobs=1, isolate=True)  # isolated, one worker
    assert _strip(one) == {k: v for k, v in _strip(seq).items() if k in one}


def dying_worker(cell, data_dir, proto, dep):
    """A worker process that dies (as if killed or out of memory) on heart's first cell."""
    if cell.dataset == "heart" and cell.split == 0:
        os._exit(3)
    return fake_worker(cell, data_dir, proto, dep)


def test_a_dead_worker_fails_the_run_cleanly(tmp_path):
    """A worker that dies breaks the pool: the run stops with the pool's own error (not an
    AttributeError from the broken pool's process table, which is None), and the cells that
    finished are cached."""
    try:
        recs = _run(_cells(), Cache(tmp_path, PROTO), worker=dying_worker, jobs=2, isolate=True)
    except BrokenProcessPool:
        pass
    else:  # every other cell was submitted before the pool broke: the dead one is recorded
        assert recs["heart/00_svm-cv"]["status"] == "error"
        assert "worker process failed" in recs["heart/00_svm-cv"]["error"]


def test_phase_two_gets_its_dependency():
    p1, p2 = plan_cells(PROTO, ["heart"], ["pyrim"])
    assert {c.method for c in p1} == {"svm-cv", "mkl-uniform", "dank-cv", "svr-cv",
                                      "dank-svr-cv", "rf-cv", "nw-cv"}
    assert {c.method for c in p2} == {"dank-svm", "dank-svr-svm", "logdet", "nw-ml",
                                      *readings.METHODS}
    assert len(p1) == 7 * PROTO.n_splits
    assert len(p2) == (4 + len(readings.METHODS)) * PROTO.n_splits
    recs = _run(p1, None)
    out = _run(p2, None, deps=recs)
    both = _run(p2 + p1, None)  # one run: the dependent cells wait for their dependencies
    assert _strip(both) == _strip({**recs, **out})
    for c in p2:
        dep = Cell(c.dataset, c.split, {**DEPENDS, **readings.DEPENDS}[c.method])
        assert out[c.key]["dep_value"] == recs[dep.key]["value"]
    with pytest.raises(ValueError, match="not a classification set"):
        plan_cells(PROTO, ["pyrim"], [])
