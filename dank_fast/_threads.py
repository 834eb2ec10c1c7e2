"""The BLAS thread policy of dank_fast: one thread for small dense work, the user's otherwise.

Small dense products, factorisations and eigendecompositions run on one BLAS thread: their
parallel overhead outweighs their work, and where cores are shared, busy-waiting BLAS threads
slow them down many times over. Work of dimension ``PARALLEL_MIN`` or more runs with the BLAS
threads the user configured (``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS`` or an enclosing
:func:`threadpoolctl.threadpool_limits`), also inside a one-thread region (a solve is one:
the counts the user had when it was entered are restored for the large work); nothing here
raises a limit the user set.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy  # noqa: F401  (loads numpy's BLAS before the controller looks for it)
import scipy.linalg  # noqa: F401  (and scipy's own BLAS, which a controller made before misses)
from threadpoolctl import ThreadpoolController

__all__ = ["blas_threads", "PARALLEL_MIN"]

#: dimension from which dense work uses the user's BLAS threads rather than one (family
#: benchmark on 2 cores, in process: every dense call on the user's 2 threads makes moons0.2
#: n = 2,000 4.1x (C = 1) and 3.7x (C = 32) slower, moons0.3 n = 5,000, C = 1 1.5x)
PARALLEL_MIN = 1500

_controller = ThreadpoolController()
#: per thread: whether a one-thread limit of :func:`blas_threads` is open (a nested request then
#: costs nothing; a threadpoolctl limit costs ~50 us and a small fit asks hundreds of times),
#: and the user's BLAS thread counts when the outermost one was entered
_depth = threading.local()


def blas_threads(size: int):
    """Context manager: one BLAS thread for dense work of dimension ``size < PARALLEL_MIN``,
    the user's configuration otherwise (restored inside an enclosing one-thread region)."""
    return _one_thread() if size < PARALLEL_MIN else _user_threads()


@contextmanager
def _one_thread():
    """One BLAS thread, unless a limit of this thread already holds it at one."""
    if getattr(_depth, "single", False):
        yield
        return
    if getattr(_depth, "user", None) is None:  # outermost: remember the user's counts
        _depth.user = max((c.num_threads for c in _controller.lib_controllers
                           if c.user_api == "blas"), default=1)
        outermost = True
    else:
        outermost = False
    try:
        with _controller.limit(limits=1, user_api="blas"):
            _depth.single = True
            try:
                yield
            finally:
                _depth.single = False
    finally:
        if outermost:
            _depth.user = None


@contextmanager
def _user_threads():
    """The user's BLAS thread counts: as they are outside any one-thread region, restored to
    what they were when the enclosing one was entered inside it."""
    if not getattr(_depth, "single", False) or _depth.user <= 1:  # nothing to restore
        yield
        return
    _depth.single = False
    try:
        with _controller.limit(limits=_depth.user, user_api="blas"):
            yield
    finally:
        _depth.single = True
