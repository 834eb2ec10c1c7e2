"""argparse types shared by the command lines (``dank-verify certify``, ``... conformance``)."""

from __future__ import annotations

import argparse
import math

__all__ = ["positive"]


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
