"""Every Markdown table of the docs has as many cells in each row as in its header.

GFM and MyST split a table row on every ``|`` that is not escaped as ``\\|``, inside backticks
too: ```abs(x)`` written with bars` splits the cell, and the cells beyond the header's count
are dropped from the page. The check reads the tables as those parsers do (fenced code
blocks skipped) in docs/**/*.md, README.md and CONTRIBUTING.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted((ROOT / "docs").rglob("*.md")) + [ROOT / p for p in ("README.md", "CONTRIBUTING.md",
                                                                 "CHANGELOG.md")]
FILES = [p for p in FILES if "_build" not in p.parts]

_DELIMITER = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$")
_FENCE = re.compile(r"^(```+|~~~+)")


def cells(line: str) -> list[str]:
    """The cells of one table row: split on each ``|`` not escaped by a backslash (backticks
    do not protect it), the outer pipes removed."""
    row = line.strip()
    if row.startswith("|"):
        row = row[1:]
    if row.endswith("|") and not row.endswith("\\|"):
        row = row[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", row)]


def tables(text: str):
    """``(line number of the header, header cells, [(line number, row cells), ...])`` of each
    table outside fenced code."""
    lines = text.splitlines()
    fence = None
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        m = _FENCE.match(stripped)
        if fence is not None:
            if m and stripped.startswith(fence) and not stripped[len(m.group(1)):].strip():
                fence = None
            i += 1
            continue
        if m:
            fence = m.group(1)
            i += 1
            continue
        if ("|" in stripped and i + 1 < len(lines) and "|" in lines[i + 1]
                and _DELIMITER.match(lines[i + 1].strip())):
            header = cells(lines[i])
            rows = [(i + 2, cells(lines[i + 1]))]  # the delimiter row counts as well
            j = i + 2
            while j < len(lines) and lines[j].strip() and "|" in lines[j]:
                rows.append((j + 1, cells(lines[j])))
                j += 1
            yield i + 1, header, rows
            i = j
            continue
        i += 1


def test_the_parser_splits_as_gfm_does():
    assert cells("| `a|b` | c |") == ["`a", "b`", "c"]
    assert cells(r"| `a\|b` | c |") == [r"`a\|b`", "c"]
    text = ("x\n\n| h1 | h2 |\n|---|---|\n| `abs(x)` | ok |\n| `|x|` | lost |\n\n"
            "```\n| a |\n|-|\n```\n")
    (line, header, rows), = tables(text)
    assert line == 3 and header == ["h1", "h2"]
    assert [len(c) for _, c in rows] == [2, 2, 4]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_row_has_the_headers_cell_count(path):
    bad = []
    for line, header, rows in tables(path.read_text()):
        for n, row in rows:
            if len(row) != len(header):
                bad.append(f"{path.relative_to(ROOT)}:{n}: {len(row)} cells, the header (line "
                           f"{line}) has {len(header)}: {' | '.join(row)[:100]}")
    assert not bad, "a '|' in a cell must be written '\\|' (or rephrased):\n" + "\n".join(bad)
