"""The paper's numbers in verification.study.experiments.paper, checked against the LaTeX source.

Every row of Tables 1, 2, 5, 6 and 4 is parsed from the paper's
LaTeX (``shared/seeds/000_2f0603e8376763c2.txt``, see ``data.shared_dir``) and compared with
the typed-in module, entry by entry. Skipped when the source is absent.
"""

from __future__ import annotations

import re

import pytest

from verification.study.experiments import paper
from verification.study.experiments.data import shared_dir

TEX_PATH = shared_dir() / "seeds" / "000_2f0603e8376763c2.txt"

pytestmark = pytest.mark.skipif(not TEX_PATH.is_file(), reason=f"{TEX_PATH} not present")

PM = re.compile(r"([\d.]+)\s*\$\\pm\$\s*([\d.]+)")
ROW_END = re.compile(r"\\\\|\\cr\b")  # LaTeX row ends: \\ and \cr


@pytest.fixture(scope="module")
def tex() -> str:
    return TEX_PATH.read_text()


def _rows(tex: str, label: str, after: bool = False) -> dict[str, list[str]]:
    """Cells of every data row of the tabular before (or ``after``) ``\\label{label}``."""
    pos = tex.index(f"\\label{{{label}}}")
    if after:
        start = tex.index("\\begin{tabular}", pos)
        body = tex[start:tex.index("\\end{tabular}", start)]
    else:
        body = tex[tex.rfind("\\begin{tabular}", 0, pos):pos]
    rows = {}
    for line in ROW_END.split(body):
        cells = [c.strip() for c in line.split("&")]
        if len(cells) < 3:
            continue
        m = re.search(r"([A-Za-z0-9]+)\s*$", _clean(cells[0]))
        if m:
            rows[m.group(1)] = cells[1:]
    return rows


def _clean(cell: str) -> str:
    return re.sub(r"\\emph|\\bf|[{}]", "", cell)


def _pm(cell: str) -> tuple[float, float]:
    m = PM.search(_clean(cell))
    assert m, cell
    return float(m.group(1)), float(m.group(2))


def test_socmkl(tex):
    rows = _rows(tex, "SOCMKL")
    assert set(paper.SOCMKL) <= set(rows)
    for name, row in paper.SOCMKL.items():
        cells = rows[name]
        d, n = map(int, re.findall(r"\d+", cells[0]))
        assert paper.SOCMKL_DN[name] == (d, n)
        vals = [_pm(c) for c in cells[1:7]]
        assert row["MKL-uniform"] == (vals[0], vals[1]), name
        assert row["SVM-CV"] == (vals[2], vals[3]), name
        assert row["DANK"] == (vals[4], vals[5]), name
        assert row["bullet"] == ("\\bullet" in cells[6]), name
        assert not any("\\bullet" in c for c in cells[1:6]), name


def test_ucires(tex):
    rows = _rows(tex, "UCIres")
    for name, row in paper.UCIRES.items():
        cells = rows[name]
        for meth, cell in zip(paper.UCIRES_METHODS, cells, strict=True):
            assert row[meth] == (*_pm(cell), "\\bullet" in cell), (name, meth)


def test_ucirank(tex):
    rows = _rows(tex, "UCIrank")
    for name, row in paper.UCIRANK.items():
        cells = rows[name]
        assert len(cells) == len(paper.TAUS)
        for entry, cell in zip(row, cells, strict=True):
            rank = int(re.search(r"\(\s*(\d+)\s*\)", _clean(cell)).group(1))
            assert entry == (*_pm(cell), rank, "\\bullet" in cell), (name, cell)


def test_ucireg(tex):
    rows = _rows(tex, "UCIreg")
    cols = ("BMKL", "NW", "SVR-CV train", "SVR-CV test", "DANK train", "DANK test")
    for name, row in paper.UCIREG.items():
        cells = rows[name]
        assert paper.UCIREG_DN[name] == tuple(map(int, re.findall(r"\d+", cells[0])))
        for col, cell in zip(cols, cells[1:7], strict=True):
            assert row[col] == (*_pm(cell), "\\bullet" in cell), (name, col)


def test_large(tex):
    end = tex.index("\\label{tablarges}")
    body = tex[end:tex.index("\\end{tabular}", end)]
    order = ("SVM-SMO", "LogDet exact", "LogDet scalable", "BMKL exact", "BMKL scalable", "RF",
             "DANK exact", "DANK scalable")
    accs = [ln for ln in ROW_END.split(body) if "acc.(" in ln]
    times = [ln for ln in ROW_END.split(body) if "time(sec.)" in ln]
    assert len(accs) == len(times) == 3
    for ds, acc_line, time_line in zip(("EEG", "ijcnn1", "covtype"), accs, times, strict=True):
        assert ds in acc_line
        acells = [_clean(c).strip() for c in acc_line.split("&")[2:]]
        tcells = [c.strip() for c in time_line.split("&")[2:]]
        for meth, a, t in zip(order, acells, tcells, strict=True):
            entry = paper.LARGE[ds][meth]
            if "times" in a:
                assert entry is None, (ds, meth)
                continue
            m = re.match(r"([\d.]+)\s*(?:\(\s*(\d+)\s*\))?", a)
            assert entry == (float(m.group(1)), float(t),
                             int(m.group(2)) if m.group(2) else None), (ds, meth)


def test_large_settings(tex):
    rows = _rows(tex, "tablarge", after=True)
    for ds, s in paper.LARGE_SETTINGS.items():
        cells = [_clean(c).replace(",", "") for c in rows[ds]]
        assert s == (int(cells[0]), int(cells[1]), int(cells[2]), float(cells[3]),
                     float(cells[4]), int(cells[5])), ds
