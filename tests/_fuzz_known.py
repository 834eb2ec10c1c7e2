"""Bugs the fuzz tests found in files the fuzz work does not own, with minimal reproducers.

Each entry's ``reproduce()`` returns True while the bug is present. The fuzz tests skip (and
count as ``known-bug``) only the inputs an entry's bug covers, and only while
:func:`present` says it still reproduces: once the bug is fixed, the fuzz tests check those
inputs strictly again. ``tests/test_fuzz_findings.py`` runs every reproducer under
``xfail(strict=True)``, so a fix shows up there as an XPASS failure: delete the entry then.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from functools import cache

import numpy as np


@dataclass(frozen=True)
class Bug:
    where: str  # file and function to fix
    summary: str  # one line: what goes wrong
    reproduce: object  # () -> bool, True while the bug is present


def _raises_unnamed(fn, *names) -> bool:
    """True if ``fn()`` raises anything but a ValueError/TypeError naming one of ``names``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except (ValueError, TypeError) as exc:
        return not any(nm in str(exc) for nm in names)
    except Exception:
        return True
    return False


def _accepts(fn) -> bool:
    """True if ``fn()`` returns without raising ValueError/TypeError (invalid input accepted)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except (ValueError, TypeError):
        return False
    return True


# --------------------------------------------------------------------------- reproducers
def _paper_alpha0():
    from dank_fast import solve_svm

    def run():
        res = solve_svm(np.eye(3), np.array([1.0, -1.0, 1.0]), C=1.0, eta=1.0, tau=0.0,
                        method="paper", alpha0=np.array([1e200, -1e200, 1e200]), max_iter=5)
        assert res.lower <= res.upper

    return _raises_unnamed(run, "alpha0")


KNOWN_BUGS: dict[str, Bug] = {
    "paper-alpha0-unprojected": Bug(
        "dank_fast/_paper.py: paper()",
        "method='paper'/'paper-monotone'/'pgm' evaluate h at the raw alpha0 (documented as "
        "'projected onto A'): a large warm start overflows to IndexError / LinAlgError",
        _paper_alpha0,
    ),
}


@cache
def present(key: str) -> bool:
    """Whether the bug ``key`` still reproduces (evaluated once per process)."""
    return bool(KNOWN_BUGS[key].reproduce())


def finite(x) -> bool:
    return isinstance(x, float) and math.isfinite(x)
