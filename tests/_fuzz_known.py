"""Open bugs the fuzz tests found, with minimal reproducers (none at present).

Each entry's ``reproduce()`` returns True while the bug is present (:func:`_raises_unnamed`
and :func:`_accepts` help write one). The fuzz tests skip (and count as ``known-bug``) only
the inputs an entry's bug covers, and only while :func:`present` says it still reproduces.
An entry comes with an ``xfail(strict=True)`` test of its reproducer in the module of its
subject, so that the fix shows up as an XPASS; the fix then deletes the entry and makes that
test a plain regression test (with a comment saying what it guards).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cache


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


KNOWN_BUGS: dict[str, Bug] = {
}


@cache
def present(key: str) -> bool:
    """Whether the bug ``key`` still reproduces (evaluated once per process); False once its
    entry is deleted (the bug is fixed: the fuzz tests check those inputs strictly again)."""
    bug = KNOWN_BUGS.get(key)
    return bug is not None and bool(bug.reproduce())
