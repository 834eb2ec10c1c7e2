"""The paper is cited by its printed numbers, never by its LaTeX labels.

A reader of the published paper sees "eq. (4)", "Lemma 1", "Algorithm 1", "Table 1", not the
labels of its source ("eq. mainrank", "Lemma fbound", "Algorithm ago3", "Table SOCMKL").
The labels appear only in the table that maps them, docs/MATH.md section 13, and in
verification/study/claims/paper.py, which derives the numbers from the source. Checked: the
documentation pages, README.md, CHANGELOG.md, and the docstrings and comments of dank_ref and
verification (dank_fast and the gallery scripts in a test of their own); and what the reports
print: the whole text of verification's and the benchmarks' scripts (their strings become
reports and results), the benchmarks' pages and every committed report under reproduction/.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_no_history import _texts

ROOT = Path(__file__).resolve().parent.parent

# the LaTeX labels of the paper that the project cites, by kind (docs/MATH.md, section 13)
LABELS = {
    "eq": ("mainrank", "falpha", "falphab", "gammadef", "mBBPdef", "hopt", "nest1", "pgm",
           "mainls", "mainlssub", "mainlslemma", "gradsvc", "mainsvr", "falphasvr", "svrfa",
           "gradfsvr", "gradf", "gradsvrsub", "hbarstar"),
    "thm": ("fbound", "prokernelmap", "gammabound", "theor", "lemmalink", "theorappf", "theorsv",
            "gammaboundsvr", "theorgradsvr", "theorsvr"),
    "alg": ("ago3", "ago3svr"),
    "sec": ("knplsvm", "modelfor", "benefits", "ana", "ose", "knplopt", "gradl", "nest",
            "knplapp", "knplsvr", "experiment", "classUCI", "explowrank", "paramana", "bound"),
    "tab": ("SOCMKL", "UCIres", "tablarge", "tablarges", "UCIrank", "UCIreg"),
    "fig": ("flexi", "flexiF", "cifar10", "conv", "thm4bound", "figtoy"),
}
_ALL = sorted({label for labels in LABELS.values() for label in labels}, key=len, reverse=True)
_LABEL = r"`{0,2}(?:sec:)?(?:" + "|".join(_ALL) + r")`{0,2}(?![\w-])"
_KEYWORD = (r"\b(?:eqs?\.|Eqs?\.|[Ee]quations?|Lemmas?|Theorems?|Propositions?|[Ss]ections?"
            r"|Algorithms?|Tables?|Figures?)")
# "eq. mainrank", "Tables SOCMKL, UCIres", "section `knplapp`"; a label in backticks alone
CITATION = re.compile(_KEYWORD + r"\s+" + _LABEL
                      + r"|`(?:sec:)?(?:" + "|".join(l for l in _ALL if len(l) > 4 and l not in
                                                 ("bound", "benefits", "experiment")) + r")`")


def _files(*patterns):
    return [p for pattern in patterns for p in sorted(ROOT.glob(pattern))
            if "_build" not in p.parts]


PAGES = _files("docs/**/*.md", "README.md", "CHANGELOG.md")
CODE = [p for p in _files("dank_ref/**/*.py", "verification/**/*.py")
        if p.relative_to(ROOT).as_posix() != "verification/study/claims/paper.py"]
PENDING = _files("dank_fast/**/*.py", "docs/examples/*.py")


def citations(path: Path) -> list[str]:
    out = []
    for first, text in _texts(path):
        if path.name == "MATH.md":  # its section 13 maps the labels to the numbers
            text = text.split("## 13. The paper's numbering")[0]
        for m in CITATION.finditer(text):
            k = text.count("\n", 0, m.start())
            out.append(f"{path.relative_to(ROOT)}:{first + k}: {' '.join(m.group(0).split())!r}")
    return out


def test_the_pattern_finds_labels_and_spares_numbers():
    for text in ("P1 (eq. mainrank)", "Tables SOCMKL, UCIres", "section `knplapp`",
                 "Algorithm ago3 as printed", "the program (`mainlssub`)", "Lemma fbound's"):
        assert CITATION.search(text), text
    for text in ("P1 (eq. (4))", "Tables 1, 2, 5 and 6", "the paper's Section 4",
                 "``dank-ago3``", "method='pgm'", "the main program", "`conv.py`",
                 "an upper `bound`"):
        assert not CITATION.search(text), text


def test_math_md_maps_the_labels_that_code_and_scripts_still_use():
    """Labels live on in names (``dank-ago3``, ``tables/socmkl.py``) and in the paper's source:
    section 13 gives the number of each one the project has cited."""
    text = (ROOT / "docs" / "MATH.md").read_text().split("## 13. The paper's numbering")[1]
    for label in ("mainrank", "falpha", "gammadef", "mBBPdef", "pgm", "mainls", "mainlssub",
                  "mainlslemma", "gradsvc", "mainsvr", "gradf", "fbound", "gammabound", "theor",
                  "lemmalink", "theorappf", "theorsv", "gammaboundsvr", "theorgradsvr",
                  "theorsvr", "ago3", "sec:ana", "sec:ose", "sec:nest", "sec:knplapp",
                  "sec:classUCI", "sec:bound", "SOCMKL", "UCIres", "tablarge", "tablarges",
                  "UCIrank", "UCIreg", "flexiF", "conv", "thm4bound"):
        assert f"| `{label}` |" in text, label


@pytest.mark.parametrize("path", PAGES + CODE, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_paper_is_cited_by_its_printed_numbers(path):
    bad = citations(path)
    assert not bad, ("cite the paper's printed number (docs/MATH.md, section 13):\n"
                     + "\n".join(bad))


def test_dank_fast_and_the_gallery_cite_the_printed_numbers():
    bad = [line for path in PENDING for line in citations(path)]
    assert not bad, "\n".join(bad)


PRINTED_TEXT = [p for p in _files("verification/**/*.py", "benchmarks/**/*.py",
                                  "benchmarks/**/*.md", "reproduction/**/*.md")
                if p.relative_to(ROOT).as_posix() != "verification/study/claims/paper.py"]


@pytest.mark.parametrize("path", PRINTED_TEXT, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_what_the_reports_print_cites_the_printed_numbers(path):
    """Strings too: a claim's statement or a table's title in a script is what its report
    prints (``reproduction/*/report.md`` render stored texts through
    :func:`verification.study.claims.paper.printed`)."""
    text = path.read_text(encoding="utf-8")
    found = list(CITATION.finditer(text))
    if path.suffix == ".md":  # pages and reports: an algorithm's label alone too ("ago3 as ...")
        found += list(re.finditer(r"(?<![\w`-])ago3(?:svr)?(?![\w`-])", text))
    bad = [f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r}"
           for m in found]
    assert not bad, "cite the paper's printed number (docs/MATH.md, section 13):\n" + "\n".join(bad)
