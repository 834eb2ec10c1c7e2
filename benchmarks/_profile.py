"""Where a DANK solve's time goes: cProfile's cumulative time of named parts (shared by
``bench_families.py --profile``, ``bench_grid.py --profile`` and
``bench_distribution.py --profile``), and the top functions by cumulative and by own time.

A part is ``(name, file, function)``: the cumulative time of every call of ``function`` in a
file whose path ends with ``file`` (several entries may add to one name). cProfile charges
each Python-level call a fraction of a microsecond, so the parts made of a few large calls
(LAPACK, libsvm) are measured nearly as they run, and a profiled run of many small calls is
slower than an unprofiled one: compare ``total_s`` with the run's unprofiled time.
"""

from __future__ import annotations

import cProfile
import pstats
import signal
import time

#: parts of a solve: cumulative time of every call; the eigen part is every evaluation of
#: ``F(a)`` (the line search's included), ``evaluate`` every evaluation of ``h`` and its
#: gradient (eigen included), ``direction`` the Newton systems (curvature included),
#: ``curvature`` part of ``direction``
PARTS = (("svc_start", "_libsvm.py", "svc_dual"),
         ("validation", "_kernel_validation.py", "validate_kernel_matrix"),
         ("validation", "_kernel_validation.py", "check_kernel_psd"),
         ("eigen", "inner.py", "inner_minimiser"),
         ("evaluate", "_problem.py", "evaluate"),
         ("direction", "_newton.py", "_direction"),
         ("curvature", "_curvature.py", "curvature"),
         ("final_certificate", "_problem.py", "certify"))
#: call counts: evaluations of ``F(a)`` and the eigensolvers' calls
COUNTS = (("evaluations", "inner.py", "inner_minimiser"),
          ("krylov", "_eigen.py", "_krylov_round"),
          ("matvecs", "_eigen.py", "gamma"), ("dense_eigh", "_eigen.py", "_dense"))


class _Alarm(Exception):
    pass


def _raise_alarm(signum, frame):
    raise _Alarm


def measure(stats: pstats.Stats, parts=PARTS, counts=COUNTS) -> dict:
    """Seconds per part (:data:`PARTS`), calls per count (:data:`COUNTS`) and ``calls``, the
    number of Python-level function calls, of a profile."""
    out = dict.fromkeys((name for name, _, _ in parts), 0.0)
    out.update({name: 0 for name, _, _ in counts})
    for (path, _, func), (_, ncalls, _, cum, _) in stats.stats.items():
        for name, file, f in parts:
            if func == f and path.endswith(file):
                out[name] += cum
        for name, file, f in counts:
            if func == f and path.endswith(file):
                out[name] += ncalls
    out["calls"] = stats.total_calls
    return out


def _where(path: str, line: int, func: str) -> str:
    """``package/file.py:line(function)`` (the last two parts of the path), or the built-in's
    name."""
    if path == "~":
        return func
    short = "/".join(path.replace("\\", "/").split("/")[-2:])
    return f"{short}:{line}({func})"


def top(stats: pstats.Stats, k: int) -> dict:
    """The ``k`` functions of a profile with the largest cumulative time (``cumulative``) and
    the largest own time, callees excluded (``tottime``): each ``{"function", "ncalls",
    "tottime", "cumtime"}``, largest first."""
    rows = [{"function": _where(*key), "ncalls": int(nc), "tottime": float(tt),
             "cumtime": float(ct)} for key, (_, nc, tt, ct, _) in stats.stats.items()]
    return {name: sorted(rows, key=lambda r: r[key], reverse=True)[:k]
            for name, key in (("cumulative", "cumtime"), ("tottime", "tottime"))}


def profiled(fn, limit: float, parts=PARTS, counts=COUNTS, warm: bool = False, top_k: int = 0):
    """``fn`` run under cProfile: a function returning ``fn()``'s dict with ``profile``
    added: :func:`measure`'s parts and counts, ``total_s`` and ``stopped`` (the run was
    stopped after ``limit`` seconds, 0 for none: the profile of what ran); with ``top_k``,
    also ``top``: :func:`top`'s ``top_k`` functions by cumulative and by own time.

    ``warm``: run ``fn`` once, unprofiled, before the profiled run. In a freshly forked
    process a first solve pays the BLAS threads' start-up and copy-on-write page faults (make_moons
    n = 2,000: 170 ms against 81-86 ms for the next ones), which would land in whatever part
    touches memory first."""
    def run():
        if warm:
            fn()
        prof = cProfile.Profile()
        old = signal.signal(signal.SIGALRM, _raise_alarm)
        if limit:
            signal.setitimer(signal.ITIMER_REAL, limit)
        t0 = time.perf_counter()
        stopped, out = False, {}
        prof.enable()
        try:
            out = fn()
        except _Alarm:
            stopped = True
        finally:
            prof.disable()
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        total = time.perf_counter() - t0
        stats = pstats.Stats(prof)
        found = measure(stats, parts, counts)
        if top_k:
            found["top"] = top(stats, top_k)
        return dict(out or {}, profile={"total_s": total, "stopped": stopped, **found})
    return run
