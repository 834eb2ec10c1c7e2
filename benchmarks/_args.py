"""The benchmark scripts' argument parser: a refused argument is one line on stderr, exit 2."""

from __future__ import annotations

import argparse


class OneLineParser(argparse.ArgumentParser):
    """:class:`argparse.ArgumentParser` whose errors are argparse's own line without the usage
    block (``--help`` shows the usage)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")
