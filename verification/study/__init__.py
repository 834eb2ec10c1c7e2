"""The study of the DANK paper: its claims checked (``dank-verify``, :mod:`.claims`,
:mod:`.runner`), its experiments re-run (``dank-reproduce``, :mod:`.experiments`) and its
synthetic cases (:mod:`.synthetic`).

Built on the oracle side of :mod:`verification` (formats, oracle, golden vectors), which never
imports this package.
"""

import importlib

#: where each public name lives, loaded on first use
#: (start-up: dank-verify's other commands import nothing of the study)
_LAZY = {
    "run_all": ".runner",
}

__all__ = [
    "run_all",
]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
