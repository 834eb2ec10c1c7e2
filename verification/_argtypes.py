"""argparse types and help links shared by the command lines (``dank-verify certify``,
``... conformance``)."""

from __future__ import annotations

import argparse
import math

__all__ = ["DOCS_URL", "positive"]

# the documentation site (pyproject's Documentation URL, latest version): the help texts link
# its pages, since the docs/ sources are not installed with the package
DOCS_URL = "https://dank-kernels.readthedocs.io/en/latest"


def positive(kind=float):
    """An argparse ``type``: a finite number ``> 0`` of ``kind`` (``float`` or ``int``)."""
    def parse(text: str):
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number, got {text!r}") from None
        if not math.isfinite(v) or v <= 0:
            raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text!r}")
        return v

    return parse
