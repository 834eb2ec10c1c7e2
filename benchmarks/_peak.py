"""Peak resident memory of this process and every process it started (workers), sampled.

``ru_maxrss`` sees one process; a joblib or dask run spreads the work over worker processes, so
:class:`TreePeak` samples the RSS of the process tree (``psutil``) every ``interval`` seconds in
a background thread: the sum over the tree (what the machine must hold) and each process's own
peak. A sampler misses spikes shorter than ``interval``; the workers' own ``ru_maxrss`` (dask:
``client.run``) complements it.
"""

from __future__ import annotations

import threading
import time

import psutil

GB = float(2**30)


class TreePeak:
    """``with TreePeak() as p: ...`` then ``p.peak_gb`` (tree total) and ``p.per_process_gb``."""

    def __init__(self, interval: float = 0.05):
        self.interval = interval
        self.peak = 0
        self.per_process: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.me = psutil.Process()

    def sample(self) -> int:
        """RSS of the tree now (bytes), updating the peaks."""
        total = 0
        for p in [self.me, *self.me.children(recursive=True)]:
            try:
                rss = p.memory_info().rss
            except psutil.Error:  # exited between listing and reading
                continue
            total += rss
            self.per_process[p.pid] = max(self.per_process.get(p.pid, 0), rss)
        self.peak = max(self.peak, total)
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            time.sleep(self.interval)

    def __enter__(self) -> TreePeak:
        self.start_bytes = self.sample()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.sample()

    @property
    def peak_gb(self) -> float:
        return self.peak / GB

    @property
    def start_gb(self) -> float:
        return self.start_bytes / GB
