"""The paper's numbering of the claims, and how it was derived from the LaTeX source.

The checks name the claims by the paper's LaTeX labels (Lemma 1, eq. (17)), which a
reader of the published PDF cannot see.  :data:`CLAIMS` gives each claim id its printed number
and a one-line description; :func:`derive_numbering` recomputes the numbers from the LaTeX
(``tests/test_claims_paper.py`` checks that the two agree when the source is available).

How the numbers are derived
---------------------------
The paper uses ``\\usepackage{jmlr2e}``.  ``jmlr2e.sty`` declares::

    \\newtheorem{example}{Example}
    \\newtheorem{theorem}{Theorem}
    \\newtheorem{lemma}[theorem]{Lemma}
    \\newtheorem{proposition}[theorem]{Proposition}
    \\newtheorem{remark}[theorem]{Remark}  (also corollary, definition, conjecture, axiom)

so lemmas, propositions and theorems share one counter, never reset by sections (no
``[section]`` argument), and the paper defines no theorem environments of its own.  Counting
the theorem-like environments in order of appearance gives Lemma 1 (fbound), Proposition 2
(prokernelmap, cited from Balcan et al.), Lemma 3 (gammabound), Theorem 4 (theor), Lemma 5
(lemmalink), Theorem 6 (theorappf), Theorem 7 (theorsv), Lemma 8 (gammaboundsvr),
Proposition 9 (theorgradsvr), Theorem 10 (theorsvr).  Equations: ``article``'s single
``equation`` counter (``equation`` and each line of ``align``; starred forms unnumbered).
Sections: ``\\section``/``\\subsection``/``\\subsubsection``, letters after ``\\appendices``.
Algorithms (``algorithm2e``), figures and tables have their own counters.
"""

from __future__ import annotations

import re

#: The paper's claims by id: the LaTeX label the checks cite, the printed number, where it
#: is stated and a one-line description.
CLAIMS: dict[str, dict[str, str]] = {
    "L1": dict(label="Lemma fbound", number="Lemma 1", section="2.2.1",
               description="spectral upper bound on the inner minimiser F(a)"),
    "HW": dict(label="section ana", number="Section 2.2.2", section="2.2.2",
               description="Hoffman-Wielandt: the eigenvalues of F stay near those of 11'"),
    "L2": dict(label="Lemma gammabound", number="Lemma 3", section="3.1",
               description="F(a) is locally Lipschitz in a (SVM)"),
    "T1": dict(label="Theorem theor", number="Theorem 4", section="3.1",
               description="grad h is Lipschitz with L = kappa (n + 3 n C^2 ||K||_F / (4 eta))"),
    "PG": dict(label="eq. pgm", number="Eq. (17)", section="3.2",
               description="projected-gradient step 1/L with L = n - tau/2 + n C^2 "
                           "lambda_max(K) / (4 eta)"),
    "L3": dict(label="Lemma gammaboundsvr", number="Lemma 8", section="5",
               description="F is locally Lipschitz in ah - ac (SVR)"),
    "T2": dict(label="Theorem theorsvr", number="Theorem 10", section="5",
               description="the SVR objective's gradient is Lipschitz"),
    "NR": dict(label="section nest", number="Section 3.2, Algorithm 1", section="3.2",
               description="O(1/t^2) rate of Nesterov's method (Algorithm 1, ascent sign)"),
    "NR[printed]": dict(label="section nest", number="Section 3.2, Algorithm 1 (line 7 as "
                        "printed)", section="3.2",
                        description="the same rate with Algorithm 1's beta step as printed"),
    "SD": dict(label="eq. mainrank", number="Eq. (4)", section="2.1",
               description="strong duality: max-min equals min-max"),
    "T3": dict(label="Theorem theorappf", number="Theorem 6", section="4",
               description="decomposition: the objective moves by at most 1/2 B C^2 Q(pi)"),
    "T4": dict(label="Theorem theorsv", number="Theorem 7", section="4",
               description="screening: a sub-problem non-SV below a threshold is a non-SV"),
    "EMP": dict(label="figures flexiF, thm4bound", number="Figures 2 and 5 (Section 6.2.4)",
                section="6.2",
                description="empirical: F* near 1, low rank, screening finds > 40% of non-SVs"),
}

# the LaTeX labels behind each claim's number (used by the consistency test)
LABEL_OF: dict[str, str] = {
    "L1": "fbound", "HW": "sec:ana", "L2": "gammabound", "T1": "theor", "PG": "pgm",
    "L3": "gammaboundsvr", "T2": "theorsvr", "NR": "sec:nest", "SD": "mainrank",
    "T3": "theorappf", "T4": "theorsv",
}


#: The printed number of every label the project has cited (docs/MATH.md, section 13, lists
#: those still named in scripts and file names): the map :func:`printed` applies, checked
#: against :func:`derive_numbering` when the source is there.
PRINTED: dict[str, str] = {
    "mainrank": "Eq. (4)", "falpha": "Eq. (5)", "falphab": "Eq. (6)", "gammadef": "Eq. (7)",
    "mBBPdef": "Eq. (11)", "hopt": "Eq. (15)", "nest1": "Eq. (16)", "pgm": "Eq. (17)",
    "mainls": "Eq. (18)", "mainlssub": "Eq. (19)", "mainlslemma": "Eq. (20)",
    "gradsvc": "Eq. (21)", "mainsvr": "Eq. (22)", "falphasvr": "Eq. (23)",
    "svrfa": "Eq. (24)", "gradfsvr": "Eq. (25)", "gradf": "Eq. (26)",
    "gradsvrsub": "Eq. (29)", "hbarstar": "Eq. (30)",
    "fbound": "Lemma 1", "prokernelmap": "Proposition 2", "gammabound": "Lemma 3",
    "theor": "Theorem 4", "lemmalink": "Lemma 5", "theorappf": "Theorem 6",
    "theorsv": "Theorem 7", "gammaboundsvr": "Lemma 8", "theorgradsvr": "Proposition 9",
    "theorsvr": "Theorem 10", "ago3": "Algorithm 1", "ago3svr": "Algorithm 2",
    "sec:knplsvm": "Section 2", "sec:modelfor": "Section 2.1", "sec:benefits": "Section 2.2",
    "sec:ana": "Section 2.2.2", "sec:ose": "Section 2.3", "sec:knplopt": "Section 3",
    "sec:gradl": "Section 3.1", "sec:nest": "Section 3.2", "sec:knplapp": "Section 4",
    "sec:knplsvr": "Section 5", "sec:experiment": "Section 6", "sec:classUCI": "Section 6.1.1",
    "sec:explowrank": "Section 6.2.2", "sec:paramana": "Section 6.2.3",
    "sec:bound": "Section 6.2.4", "SOCMKL": "Table 1", "UCIres": "Table 2",
    "tablarge": "Table 3", "tablarges": "Table 4", "UCIrank": "Table 5", "UCIreg": "Table 6",
    "flexi": "Figure 1", "flexiF": "Figure 2", "cifar10": "Figure 3", "conv": "Figure 4",
    "thm4bound": "Figure 5", "figtoy": "Figure 6",
}

_KEYWORDS = (r"(?:eqs?\.|Eqs?\.|[Ee]quations?|Lemmas?|Theorems?|Propositions?|[Ss]ections?"
             r"|Algorithms?|Tables?|Figures?)")
_LABELS = "|".join(sorted((k.removeprefix("sec:") for k in PRINTED), key=len, reverse=True))
_ONE = rf"`{{0,2}}(?:sec:)?(?:{_LABELS})`{{0,2}}(?![\w-])"
_CITED = re.compile(rf"\b({_KEYWORDS})(\s+)({_ONE}(?:(?:,\s*|\s*/\s*|\s+and\s+){_ONE})*)")
_LABEL_IN = re.compile(rf"`{{0,2}}(?:sec:)?({_LABELS})`{{0,2}}(?![\w-])")
# the algorithms' labels alone name them in the experiments' texts ("ago3 as printed"); not
# inside a name (the method dank-ago3, the function ago3_betas)
_ALGORITHM = re.compile(r"(?<![\w`-])(ago3svr|ago3)(?![\w`-])")


def printed(text: str) -> str:
    """``text`` with the paper cited by its printed numbers where it names a LaTeX label.

    A keyword and the labels after it (``"Lemma fbound"``, ``"eq. pgm"``, ``"Tables SOCMKL,
    UCIres"``, ``"Figures flexiF / thm4bound"``) become the keyword and the printed numbers
    (``"Lemma 1"``, ``"eq. (17)"``, ``"Tables 1, 2"``, ``"Figures 2 / 5"``), and an
    algorithm's label standing alone (``"ago3 as printed"``) becomes its name (``"Algorithm 1
    as printed"``); the rest of the text, and a label inside a name (the method
    ``dank-ago3``), is left as it is.
    The reports apply it to what they render, so that results written before their texts
    cited the numbers read as the paper prints them.

    Examples
    --------
    >>> printed("Algorithm ago3 as printed, by eq. pgm (Table SOCMKL)")
    'Algorithm 1 as printed, by eq. (17) (Table 1)'
    """
    def number(label: str) -> str:
        key = label if label in PRINTED else f"sec:{label}"
        return PRINTED[key].split(" ", 1)[1]

    def cite(m: re.Match) -> str:
        labels = _LABEL_IN.sub(lambda k: number(k.group(1)), m.group(3))
        return m.group(1) + m.group(2) + labels

    return _ALGORITHM.sub(lambda m: PRINTED[m.group(1)], _CITED.sub(cite, text))


def display_name(claim: str) -> str:
    """Return the name of a claim as the paper numbers it, with its description.

    Parameters
    ----------
    claim : str
        A claim id (:data:`CLAIM_IDS`).

    Returns
    -------
    str
        For instance ``"Lemma 1 [fbound]: spectral upper bound ..."``; the id itself if
        unknown.

    Examples
    --------
    >>> from verification.study.claims import display_name
    >>> display_name("L1")
    'Lemma 1 [fbound]: spectral upper bound on the inner minimiser F(a)'
    """
    info = CLAIMS.get(claim)
    if info is None:
        return claim
    label = info["label"].split(" ", 1)[-1]
    return f"{info['number']} [{label}]: {info['description']}"


_THEOREM_LIKE = ("theorem", "lemma", "proposition", "remark", "corollary", "definition",
                 "conjecture", "axiom")  # jmlr2e: one shared counter
_TOKEN = re.compile(
    r"\\begin\{(?P<begin>[A-Za-z*]+)\}|\\end\{(?P<end>[A-Za-z*]+)\}|\\label\{(?P<label>[^}]*)\}"
    r"|\\(?P<sec>(?:sub)*section)\*?(?=[\s\[{])|\\(?P<app>appendix|appendices)\b"
    r"|(?P<newline>\\\\)|\\(?P<nonum>nonumber|notag)\b|\\(?P<subfig>subfigure)\b"
    r"|\\(?P<caption>caption)\b")


def _strip_comments(tex: str) -> str:
    return "\n".join(re.sub(r"(?<!\\)%.*", "", line) for line in tex.splitlines())


def derive_numbering(tex: str) -> dict[str, str]:
    """Map every ``\\label`` of a jmlr2e LaTeX source to its printed number.

    Returns e.g. ``{"fbound": "Lemma 1", "pgm": "Eq. (17)", "sec:ana": "Section 2.2.2",
    "ago3": "Algorithm 1", "flexiF": "Figure 2", ...}``; labels in unnumbered environments map
    to ``"unnumbered"``.  A small scanner, sufficient for this paper (theorem-like
    environments, ``equation``, ``align``, sections, ``algorithm``, figures, tables,
    ``\\subfigure``), not a LaTeX implementation.
    """
    out: dict[str, str] = {}
    thm = eq = alg = fig = tab = 0
    sec = [0, 0, 0]
    appendix = False
    stack: list[list] = []  # [env name, current number string, align line labelled/nonumber]
    last_section = ""
    subfig = 0
    pending_subfig = False

    def sec_str(level):
        head = chr(ord("A") + sec[0] - 1) if appendix else str(sec[0])
        return ".".join([head] + [str(s) for s in sec[1:level + 1]])

    for m in _TOKEN.finditer(_strip_comments(tex)):
        kind = m.lastgroup
        if kind == "begin":
            env = m.group("begin")
            num = None
            if env in _THEOREM_LIKE:
                thm += 1
                num = f"{env.capitalize()} {thm}"
            elif env == "equation":
                eq += 1
                num = f"Eq. ({eq})"
            elif env == "align":
                eq += 1
                num = f"Eq. ({eq})"
            elif env == "algorithm":
                alg += 1
                num = f"Algorithm {alg}"
            elif env in ("figure", "figure*"):
                fig += 1
                subfig = 0
                num = f"Figure {fig}"
            elif env in ("table", "table*"):
                tab += 1
                num = f"Table {tab}"
            elif env.endswith("*") or env in ("split", "array", "small", "proof"):
                num = "unnumbered" if env.endswith("*") else None
            stack.append([env, num, False])
        elif kind == "end":
            env = m.group("end")
            if stack and stack[-1][0] == env:
                top = stack.pop()
                if env == "align" and top[2]:  # last line carried \nonumber
                    eq -= 1
        elif kind == "newline":
            if stack and stack[-1][0] == "align":
                if stack[-1][2]:  # previous line was \nonumber: reuse its number
                    stack[-1][2] = False
                else:
                    eq += 1
                stack[-1][1] = f"Eq. ({eq})"
        elif kind == "nonum":
            if stack and stack[-1][0] == "align":
                stack[-1][2] = True
        elif kind == "sec":
            level = m.group("sec").count("sub")
            sec[level] += 1
            for k in range(level + 1, 3):
                sec[k] = 0
            last_section = f"Section {sec_str(level)}"
            if appendix and level == 0:
                last_section = f"Appendix {sec_str(0)}"
        elif kind == "app":
            appendix = True
            sec = [0, 0, 0]
        elif kind == "subfig":
            subfig += 1
            pending_subfig = True
        elif kind == "caption":
            pending_subfig = False
        elif kind == "label":
            label = m.group("label")
            num = None
            for env, n_str, _ in reversed(stack):
                if n_str is not None:
                    num = n_str
                    if env in ("figure", "figure*") and pending_subfig:
                        num = f"{n_str}({chr(ord('a') + subfig - 1)})"
                    break
            out[label] = num if num is not None else last_section
    return out
