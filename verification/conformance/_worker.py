"""The worker process of :class:`~verification.conformance.runners.ImplRunner`: imports the
implementation once, then answers one instance at a time over a pipe.

Kept apart from the kit and importing only numpy, so that starting a worker (a fresh
interpreter) costs little.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
import traceback

import numpy as np

__all__ = ["worker_main", "plain_solution", "text_tail", "TAIL_LINES", "TAIL_CHARS"]

TAIL_LINES = 20  # the tail of a failing implementation's stderr or traceback kept in the report
TAIL_CHARS = 2000


def text_tail(text: str, lines: int = TAIL_LINES, chars: int = TAIL_CHARS) -> str | None:
    """The last ``lines`` lines of ``text`` (trailing blank lines dropped) in at most ``chars``
    characters: whole lines from the end, or the end of one longer line marked ``...``; None
    when ``text`` is blank."""
    kept = text.rstrip().splitlines()[-lines:]
    while len(kept) > 1 and sum(len(x) + 1 for x in kept) - 1 > chars:
        kept.pop(0)
    out = "\n".join(kept)
    if len(out) > chars:
        out = "..." + out[-(chars - 3):]
    return out if out.strip() else None


def _describe(exc: BaseException) -> str:
    """``Type: message (at file:line)`` of the innermost frame, on one line."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {os.path.basename(tb[-1].filename)}:{tb[-1].lineno})" if tb else ""
    msg = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {msg}{where}" if msg else f"{type(exc).__name__}{where}"


def plain_solution(out) -> dict:
    """The implementation's answer with plain values (numpy arrays, floats, str/dict meta)."""
    if not isinstance(out, dict):
        raise TypeError(f"the function returned {type(out).__name__}, not a dict")
    res = {}
    for k, v in out.items():
        if k in ("meta", "task") or v is None or isinstance(v, str):
            res[k] = v
        elif k == "bias":
            res[k] = v if isinstance(v, (int, float, bool)) else np.asarray(v).tolist()
        else:
            res[k] = np.asarray(v)
    return res


def worker_main(conn, target: str, cwd: str) -> None:
    """Import ``target`` (``MODULE:FUNCTION``) with ``cwd`` first on the path, send
    ``("ready", None)`` or ``("import_error", message)``, then answer each instance dict with
    ``("ok", solution, seconds, None)`` or ``("error", message, seconds, traceback tail)`` until
    ``None`` arrives."""
    sys.path.insert(0, cwd)
    try:
        _serve(conn, target)
    except (BrokenPipeError, EOFError, ConnectionResetError):
        return  # the kit closed the pipe (timeout, interrupt, end of run): nothing to report


def _serve(conn, target: str) -> None:
    """The body of :func:`worker_main` (import, then the request loop)."""
    try:
        mod, _, name = target.partition(":")
        fn = getattr(importlib.import_module(mod), name)
        if not callable(fn):
            raise TypeError(f"{target} is not callable")
    except BaseException as exc:  # noqa: BLE001 - reported to the kit as a usage error
        conn.send(("import_error", _describe(exc)))
        return
    conn.send(("ready", None))
    while True:
        req = conn.recv()
        if req is None:
            return
        t0 = time.perf_counter()
        try:
            msg = ("ok", plain_solution(fn(req)), time.perf_counter() - t0, None)
        except BaseException as exc:  # noqa: BLE001 - the implementation's failure is a row
            frames = exc.__traceback__.tb_next if exc.__traceback__ else None  # not _serve's
            tb = "".join(traceback.format_exception(type(exc), exc, frames))
            msg = ("error", _describe(exc), time.perf_counter() - t0, text_tail(tb))
        try:
            conn.send(msg)
        except Exception as exc:  # noqa: BLE001 - e.g. an unpicklable answer
            conn.send(("error", f"the answer cannot be sent back: {_describe(exc)}", msg[2],
                       None))
