"""stdout of the command lines when its reader goes away early (``dank-verify ... | head``).

Python ignores ``SIGPIPE``, so a write to a pipe whose reader has exited raises
:class:`BrokenPipeError`. The command lines then do what the Python documentation recommends
(https://docs.python.org/3/library/signal.html#note-on-sigpipe): the rest of the output is
dropped (stdout is pointed at ``os.devnull``, so that the interpreter's last flush at exit does
not fail again) and the command exits with the code of its run, never with a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["Parser", "flush_stdout", "write_stdout"]


def _stdout_to_devnull() -> None:
    """Point file descriptor 1 (``sys.stdout``'s) at ``os.devnull``."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (stdout captured in-process)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def flush_stdout() -> None:
    """Flush ``sys.stdout``; if the reader has gone, drop what is left (no error)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _stdout_to_devnull()


def write_stdout(text: str) -> None:
    """Print ``text`` and a newline on stdout and flush; if the reader has gone, drop the
    rest of the output (no error: the caller's exit code stays the one of its run)."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        _stdout_to_devnull()


class Parser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose ``--help`` into a closed pipe still exits 0,
    and whose refusal of an argument is argparse's own line without the usage block (one
    line on stderr, exit 2; ``--help`` shows the usage)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")

    def print_help(self, file=None):
        try:
            super().print_help(file)
            if file is None:
                sys.stdout.flush()
        except BrokenPipeError:
            _stdout_to_devnull()
