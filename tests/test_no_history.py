"""The product describes what it does, not how it was developed.

No docstring or comment of the packages, the benchmark scripts, the tests and the
documentation's scripts (docs/scripts), and no documentation page, cites an issue or pull
request number ("issue 15", "#15" in prose, "the issue's row"), a git commit hash, or a
development anecdote ("before/after", "was 2.3x", "Fixed in issue", "no longer"); no docstring
or comment cites a tuning figure ("1.17-1.31x the time"). Where a number was measured belongs
to a benchmark's results file (benchmarks/results/*.json may name the commit) and to the
commit that changed it; what a user gets in each release belongs to CHANGELOG.md (included by
docs/changelog.md, which is not scanned). A test says what it checks, not which report or
change it came from; only its docstrings and comments are read, not its string literals
(expected messages and other data), and this file is left out: its strings are examples of
the patterns.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

PATTERNS = {
    "an issue or pull request number": re.compile(
        r"\b(?:issues?|pull requests?|PR)\s+#?\d+\b|\bthe\s+issue's\b", re.I),
    "a '#N' reference": re.compile(r"(?:^|(?<=[\s(\[,;]))#\d+(?![\w-])"),
    "a git commit hash": re.compile(
        r"\b(?:git|commit|revision|rev)\b[^\n`]*?[\s`][0-9a-f]{7,40}\b"
        r"|(?<![\w./#-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}(?![\w-])"),
    "a development anecdote": re.compile(
        r"before/after|\bwas\s+\d+(?:\.\d+)?\s*x\b|\bfixed in\b|\bno longer\b"
        r"|\bused to (?:be|take|cost|write|fail|print|raise|crash)\b", re.I),
}

# in a Python docstring or comment only (a results page may give measured ratios): a tuning
# figure belongs in a benchmark's results and the commit that changed the constant
PY_PATTERNS = {
    "a tuning figure": re.compile(
        r"(?<![\w.])\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?x"
        r"(?= the time| faster| slower|[\s,;)]|\.(?!\w)|$)"),
}

# a hexadecimal-looking word that is not a commit (names in the code, hex constants)
ALLOWED = re.compile(r"^(?:0x[0-9a-f]+|[0-9]+e[0-9]+|deadbeef)$", re.I)


def _files(*patterns: str) -> list[Path]:
    out = []
    for pattern in patterns:
        out += [p for p in sorted(ROOT.glob(pattern)) if "_build" not in p.parts]
    return out


PRODUCT = [p for p in _files("dank_ref/**/*.py", "verification/**/*.py", "benchmarks/*.py",
                             "docs/**/*.md", "README.md")
           if p.relative_to(ROOT).as_posix() != "docs/changelog.md"]
DANK_FAST = _files("dank_fast/**/*.py")
# the tests and the documentation's scripts, read like the packages (docstrings and comments)
TESTS = [p for p in _files("tests/**/*.py", "docs/scripts/*.py")
         if p.relative_to(ROOT).as_posix() != "tests/test_no_history.py"]
PENDING: dict[str, str] = {}


def _param(path: Path):
    name = path.relative_to(ROOT).as_posix()
    marks = [pytest.mark.xfail(strict=False, reason=PENDING[name])] if name in PENDING else []
    return pytest.param(path, id=name, marks=marks)


def _texts(path: Path):
    """``(first line, text)`` of what is read as prose: a page's whole text; a Python file's
    docstrings (any string statement) and comments."""
    text = path.read_text()
    if path.suffix != ".py":
        yield 1, text
        return
    strings = {(n.value.lineno, n.value.col_offset) for n in ast.walk(ast.parse(text))
               if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
               and isinstance(n.value.value, str)}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string.lstrip("#")
        elif tok.type == tokenize.STRING and tok.start in strings:
            yield tok.start[0], tok.string


def offences(path: Path) -> list[str]:
    out = []
    for first, text in _texts(path):
        lines = text.splitlines()
        patterns = {**PATTERNS, **(PY_PATTERNS if path.suffix == ".py" else {})}
        for what, pattern in patterns.items():
            for m in pattern.finditer(text):  # the whole text: a phrase may span two lines
                if ALLOWED.match(m.group(0)):
                    continue
                k = text.count("\n", 0, m.start())
                out.append(f"{path.relative_to(ROOT)}:{first + k}: {what} "
                           f"({' '.join(m.group(0).split())!r}): {lines[k].strip()[:120]}")
    return out


def test_the_patterns_find_what_they_are_for():
    for text in ("see issue 15", "Fixed in issue 15.", "(#15)", "at git a237040",
                 "commit 5977344", "git worktree add /tmp/x 5977344", "the\n  issue's row",
                 "the before/after rows", "it was 2.3x slower", "this no longer happens",
                 "the issue's budget"):
        assert any(p.search(text) for p in PATTERNS.values()), text
    tuning = PY_PATTERNS["a tuning figure"]
    for text in ("blobs n = 2,000, C = 32 1.17-1.31x the time", "4x faster than K[:, S]",
                 "C = 1 1.30x, blobs", "C = 1 2.01x. At a quarter"):
        assert tuning.search(text), text
    for text in ("Hypothesis 6.13 and later", "an n x n array", "0x1f", "x86"):
        assert not tuning.search(text), text
    for text in ("see [section 13](#13-the-papers-numbering)", "sha256 checksums",
                 "`#` comments", "a 1e-12 tolerance", "issues a warning", "the seed 12345678",
                 "time_limit", "the face 0xdeadbeef"):
        assert not any(p.search(text) and not ALLOWED.match(p.search(text).group(0))
                       for p in PATTERNS.values()), text


@pytest.mark.parametrize("path", [_param(p) for p in PRODUCT])
def test_no_development_history(path):
    bad = offences(path)
    assert not bad, "\n".join(bad)


def test_no_development_history_in_dank_fast():
    bad = [line for path in DANK_FAST for line in offences(path)]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("path", [_param(p) for p in TESTS])
def test_no_development_history_in_tests_and_doc_scripts(path):
    bad = offences(path)
    assert not bad, "\n".join(bad)
