"""BLAS threads for dank_ref's dense work: one thread (dank_ref's own copy of the rule).

dank_ref's dense linear algebra (``eigh`` of the certificate and the polisher, at most a few
hundred rows) is fastest single-threaded, and immune there to the busy-waiting of OpenBLAS
threads when the cores are shared: measured on 2 shared cores (load average 6), an ``eigh`` of
a 100 x 100 matrix takes 196 ms with two BLAS threads and 3.9 ms with one (200: 74 vs 13 ms;
500: 405 vs 101 ms).  The conic solvers are not affected (SCS ships its own single-threaded
BLAS; Clarabel does not use the process's BLAS).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextlib import AbstractContextManager

import numpy  # noqa: F401  (loads numpy's BLAS before the controller looks for it)
import scipy.linalg  # noqa: F401  (and scipy's own BLAS, which a controller made before misses)
from threadpoolctl import ThreadpoolController

__all__ = ["single_blas_thread", "single_blas_threaded"]

_CONTROLLER = ThreadpoolController()


def single_blas_thread() -> AbstractContextManager:
    """Context manager limiting every loaded BLAS library to one thread (restored on exit)."""
    return _CONTROLLER.limit(limits=1, user_api="blas")


def single_blas_threaded(fn: Callable) -> Callable:
    """Decorator: run ``fn`` under :func:`single_blas_thread` (validation, solve, certificate)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with single_blas_thread():
            return fn(*args, **kwargs)
    return wrapper
