"""The paper's numbering of the claims: the scanner on a synthetic source, and the shipped
table against the real LaTeX when it is available (skipped otherwise)."""

import os

import pytest

from verification.study.claims import CLAIM_IDS, CLAIMS, display_name
from verification.study.claims.paper import LABEL_OF, PRINTED, derive_numbering, printed

PAPER = os.environ.get("DANK_PAPER_TEX", "/work/shared/seeds/000_2f0603e8376763c2.txt")

SYNTHETIC = r"""
\section{Intro}\label{s1}
\begin{lemma}\label{lemA} x \end{lemma}
\begin{equation}\label{e1} a \end{equation}
\begin{equation*}\label{estar} b \end{equation*}
% \begin{theorem}\label{commented} commented out \end{theorem}
\begin{proposition}\label{propB} y \end{proposition}
\subsection{Sub}\label{s11}
\begin{align}
 a \nonumber \\
 b \label{e2} \\
 c \label{e3}
\end{align}
\begin{theorem}\label{thmC}
  \begin{equation}\label{e4}\begin{split} x \\ y \end{split}\end{equation}
\end{theorem}
\begin{figure}\subfigure[a]{\label{fa}} \subfigure[b]{\label{fb}} \caption{c}\label{fig}
\end{figure}
\begin{algorithm}\caption{x}\label{alg}\end{algorithm}
\appendices
\section{Proofs}
\subsection{Proof of C}\label{pc}
\begin{equation}\label{e5} z \end{equation}
"""


def test_scanner_on_synthetic_source():
    d = derive_numbering(SYNTHETIC)
    # jmlr2e: lemma, proposition, theorem share one counter
    assert (d["lemA"], d["propB"], d["thmC"]) == ("Lemma 1", "Proposition 2", "Theorem 3")
    assert "commented" not in d
    assert d["e1"] == "Eq. (1)" and d["estar"] == "unnumbered"
    assert (d["e2"], d["e3"]) == ("Eq. (2)", "Eq. (3)")       # the \nonumber line is skipped
    assert d["e4"] == "Eq. (4)"                                # split: one number
    assert d["e5"] == "Eq. (5)"                                # not reset in the appendix
    assert (d["s1"], d["s11"], d["pc"]) == ("Section 1", "Section 1.1", "Section A.1")
    assert (d["fa"], d["fb"], d["fig"]) == ("Figure 1(a)", "Figure 1(b)", "Figure 1")
    assert d["alg"] == "Algorithm 1"


def test_every_claim_has_a_number_and_description():
    for cid in CLAIM_IDS + ("NR[printed]",):
        info = CLAIMS[cid]
        assert info["number"] and info["description"]
        name = display_name(cid)
        assert info["number"] in name and "[" in name and info["description"] in name
    assert display_name("L1").startswith("Lemma 1 [fbound]")
    assert display_name("unknown") == "unknown"


@pytest.mark.skipif(not os.path.exists(PAPER), reason="paper's LaTeX source not available")
def test_table_matches_the_papers_latex():
    with open(PAPER, encoding="utf-8") as fh:
        d = derive_numbering(fh.read())
    for cid, label in LABEL_OF.items():
        assert CLAIMS[cid]["number"].startswith(d[label]), (cid, label, d[label])
    # a few anchors a reader can check in the PDF
    assert d["ago3"] == "Algorithm 1" and d["flexiF"] == "Figure 2" and d["thm4bound"] == \
        "Figure 5" and d["gradsvc"] == "Eq. (21)" and d["prokernelmap"] == "Proposition 2"


@pytest.mark.skipif(not os.path.exists(PAPER), reason="paper's LaTeX source not available")
def test_printed_numbers_match_the_papers_latex():
    with open(PAPER, encoding="utf-8") as fh:
        d = derive_numbering(fh.read())
    assert {label: d[label] for label in PRINTED} == PRINTED


@pytest.mark.parametrize("text, expected", [
    ("Algorithm ago3 as printed", "Algorithm 1 as printed"),
    ("by eq. pgm (Table SOCMKL)", "by eq. (17) (Table 1)"),
    ("Tables SOCMKL, UCIres, UCIrank and UCIreg", "Tables 1, 2, 5 and 6"),
    ("Figures flexiF / thm4bound", "Figures 2 / 5"),
    ("Section nest, section `knplapp`", "Section 3.2, section 4"),
    ("Lemma fbound's bound", "Lemma 1's bound"),
    ("(b) ago3 as printed; h: PG 4.2, ago3 3.1", "(b) Algorithm 1 as printed; h: PG 4.2, "
     "Algorithm 1 3.1"),
    ("ago3svr", "Algorithm 2"),
    # a label inside a name, or without a keyword, is not a citation
    ("method dank-ago3, ago3_betas, `ago3`, tables/socmkl.py, an upper bound", None),
])
def test_printed_replaces_cited_labels_only(text, expected):
    assert printed(text) == (text if expected is None else expected)


def test_printed_maps_every_label_the_citation_test_refuses():
    from test_paper_numbers import LABELS
    refused = {label for labels in LABELS.values() for label in labels}
    assert refused == {label.removeprefix("sec:") for label in PRINTED}


def test_printed_map_covers_the_labels_math_md_lists():
    math = open(os.path.join(os.path.dirname(__file__), "..", "docs", "MATH.md"),
                encoding="utf-8").read().split("## 13. The paper's numbering")[1]
    rows = {line.rsplit("| `", 1)[1].split("`")[0]: line.split("|")[1].strip()
            for line in math.splitlines() if line.startswith("| ") and line.endswith("` |")}
    assert rows and all(PRINTED[label] == number for label, number in rows.items()), rows
