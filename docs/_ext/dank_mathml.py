"""Math as MathML, converted when the site is built (``latex2mathml``): the pages need no
JavaScript and no CDN for their formulas, so the site works offline (MathJax, Sphinx's default,
is loaded from a CDN).  Browsers render MathML natively."""

from __future__ import annotations

from docutils import nodes
from latex2mathml.converter import convert
from sphinx.util.math import get_node_equation_number


def _mathml(latex: str, display: str) -> str:
    return convert(latex.strip(), display=display)


def visit_math(self, node: nodes.math) -> None:
    self.body.append(self.starttag(node, "span", "", CLASS="math notranslate"))
    self.body.append(_mathml(node.astext(), "inline"))
    self.body.append("</span>")
    raise nodes.SkipNode


def visit_math_block(self, node: nodes.math_block) -> None:
    self.body.append(self.starttag(node, "div", CLASS="math notranslate"))
    if node["number"]:
        self.body.append(f'<span class="eqno">({get_node_equation_number(self, node)})</span>')
    # several equations separated by blank lines: one block each
    for part in (p for p in node.astext().split("\n\n") if p.strip()):
        self.body.append(_mathml(part, "block"))
    self.body.append("</div>\n")
    raise nodes.SkipNode


def setup(app):
    app.add_html_math_renderer("dank_mathml", (visit_math, None), (visit_math_block, None))
    return {"parallel_read_safe": True, "parallel_write_safe": True}
