"""The BLAS thread policy of dank_fast: every solve runs its BLAS on one thread.

A solve's dense work (products with blocks of ``K``, factorisations, eigendecompositions) runs
on one BLAS thread, as libsvm's SVM fit does. Two reasons. Most of that work is small or
memory-bound, where parallel overhead outweighs the work. And busy-waiting BLAS threads on
cores shared with other processes slow a solve down many times over, where one thread gets
its share of the cores. Parallelism comes from solving problems side by side: the
estimators' binary problems, the decomposition's clusters (joblib or dask). The policy never
raises a limit the user set, and a one-thread region inside another costs nothing.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy  # noqa: F401  (loads numpy's BLAS before the controller looks for it)
import scipy.linalg  # noqa: F401  (and scipy's own BLAS, which a controller made before misses)
from threadpoolctl import ThreadpoolController

__all__ = ["blas_threads"]

_controller = ThreadpoolController()
_depth = threading.local()


@contextmanager
def blas_threads():
    """Context manager: one BLAS thread in every BLAS library (module docstring), unless this
    thread is already inside such a region. The solvers enter it once per solve
    (:func:`dank_fast._methods.run_method`, a working-set round)."""
    if getattr(_depth, "single", False):
        yield
        return
    with _controller.limit(limits=1, user_api="blas"):
        _depth.single = True
        try:
            yield
        finally:
            _depth.single = False
