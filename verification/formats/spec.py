"""The format's constants: version, tasks, kernels, size limits, the fields of each task.

Readers and writers of :mod:`verification.formats` take every limit from here; a reader takes a
lower (or higher) limit for one call as a keyword (``load_instance(path, max_array_bytes=...)``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["FORMAT_VERSION", "READ_VERSIONS", "BOX_VECTOR_VERSION", "TASKS", "KERNELS",
           "MAX_ARRAY_BYTES", "MAX_JSON_BYTES", "MAX_META_CHARS", "FormatError"]

#: The newest version of the instance and solution formats, which this package reads and
#: writes.  Version 2 is a compatible step from version 1: an instance's ``C`` may be a vector
#: of ``n`` per-sample boxes; every version-1 file is read as version 1 specifies.  A writer writes
#: the lowest version that holds its content (version 1 unless ``C`` is a vector), so a
#: version-1 reader still reads every file without a vector ``C``.
FORMAT_VERSION = 2
#: The versions this reader reads.
READ_VERSIONS = (1, 2)
#: The first version in which an instance's ``C`` may be a vector of per-sample boxes.
BOX_VECTOR_VERSION = 2
#: The values of the ``task`` field: P1 (``"svm"``), P2 (``"svr"``), P3 (``"decomposed"``).
TASKS = ("svm", "svr", "decomposed")
#: The values of the ``kernel`` field of an instance that gives ``X`` instead of ``K``.
KERNELS = ("gaussian", "linear", "polynomial")
#: The largest array a file may declare (2 GiB), checked from the ``.npy`` header before
#: anything is allocated; a kernel computed from ``X`` must fit too (``n <= 16384``).
MAX_ARRAY_BYTES = 2 * 1024**3
#: The largest JSON file (64 MiB); larger arrays go in ``.npz``.
MAX_JSON_BYTES = 64 * 1024**2
MAX_META_CHARS = 65536
MAX_MEMBERS = 64
F64_EPS = float(np.finfo(np.float64).eps)

KERNEL_PARAMS = {"gaussian": ("sigma", "gamma"), "linear": (),
                 "polynomial": ("degree", "gamma", "coef0")}
KERNEL_FIELDS = frozenset({"K", "X", "kernel", "sigma", "gamma", "degree", "coef0"})
INSTANCE_FIELDS = {
    "svm": frozenset({"format", "version", "task", "y", "C", "eta", "tau"}),
    "svr": frozenset({"format", "version", "task", "y", "C", "eta", "tau", "epsilon"}),
    "decomposed": frozenset({"format", "version", "task", "y", "C", "eta", "tau", "labels"}),
}
SOLUTION_FIELDS = {
    "svm": frozenset({"format", "version", "task", "alpha", "bias", "F", "meta"}),
    "svr": frozenset({"format", "version", "task", "alpha_hat", "alpha_check", "bias", "F",
                      "meta"}),
    "decomposed": frozenset({"format", "version", "task", "alpha", "F", "meta"}),
}
ALL_INSTANCE = frozenset().union(*INSTANCE_FIELDS.values()) | KERNEL_FIELDS | {"epsilon"}
ALL_SOLUTION = frozenset().union(*SOLUTION_FIELDS.values())


class FormatError(ValueError):
    """Malformed instance or solution file (the message names the file, field and problem)."""


def available_memory() -> int | None:
    """Bytes of memory this machine can still give (Linux: ``MemAvailable`` of /proc/meminfo,
    capped by a cgroup v2 ``memory.max``); ``None`` where it cannot be known."""
    avail = None
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        return None
    try:
        with open("/sys/fs/cgroup/memory.max", encoding="ascii") as fh:
            cap = fh.read().strip()
        with open("/sys/fs/cgroup/memory.current", encoding="ascii") as fh:
            used = int(fh.read().strip())
        if cap.isdigit():
            free = max(int(cap) - used, 0)
            avail = free if avail is None else min(avail, free)
    except (OSError, ValueError):
        pass
    return avail


def gib(nbytes) -> str:
    """``nbytes`` in GiB, 3 significant digits (for messages)."""
    return f"{nbytes / 2**30:.3g} GiB"


def one_line(exc) -> str:
    """The message of ``exc`` on one line (its type name if empty)."""
    msg = " ".join(str(exc).split())
    return msg or type(exc).__name__
