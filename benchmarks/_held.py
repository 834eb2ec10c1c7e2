"""Bytes of the numpy arrays an object keeps alive (what a result or a fitted model holds)."""

from __future__ import annotations

import numpy as np


def held_bytes(obj, skip: tuple = ()) -> int:
    """Bytes of the distinct numpy buffers reachable from ``obj`` through attributes, dataclass
    fields and containers, not descending into the objects in ``skip`` (e.g. shared data)."""
    seen: set[int] = set()
    stack, total = [obj], 0
    while stack:
        o = stack.pop()
        if id(o) in seen or any(o is s for s in skip):
            continue
        seen.add(id(o))
        if isinstance(o, np.ndarray):
            base = o.base if isinstance(o.base, np.ndarray) else o
            if base is o or id(base) not in seen:
                seen.add(id(base))
                total += base.nbytes
        elif isinstance(o, dict):
            stack.extend(o.values())
        elif isinstance(o, list | tuple | set):
            stack.extend(o)
        elif hasattr(o, "__dict__"):
            stack.extend(vars(o).values())
    return total
