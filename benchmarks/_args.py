"""The benchmark scripts' argument parser: a refused argument is one line on stderr, exit 2."""

from __future__ import annotations

import argparse
import os


class OneLineParser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` whose errors are argparse's own line without the usage
    block (``--help`` shows the usage), with the checks of the files a run reads and writes,
    made before a run of minutes."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")

    def output(self, flag: str, path: str | None) -> None:
        """Refuse ``path`` (the value of ``flag``) when it is a directory or its directory
        does not exist."""
        if path is None:
            return
        if os.path.isdir(path):
            self.error(f"{flag}: {path!r} is a directory, not a file")
        if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            self.error(f"{flag}: directory of {path!r} does not exist")

    def input(self, flag: str, path: str | None) -> None:
        """Refuse ``path`` (the value of ``flag``) when it is not a file."""
        if path is not None and not os.path.isfile(path):
            self.error(f"{flag}: {path!r} is not a file")
