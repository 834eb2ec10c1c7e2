"""Sphinx configuration of the dank documentation site.

Build: ``python -m sphinx -W -n -b html docs docs/_build/html`` (warnings are errors, ``-n``
reports every internal reference that does not resolve).  ``DANK_DOCS_GALLERY=off`` skips
running the gallery's scripts (their pages are still built, without outputs).
"""

from __future__ import annotations

import os
import re
import sys
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # document the packages of this checkout
sys.path.insert(0, str(Path(__file__).parent / "_ext"))  # dank_mathml

project = "dank"
author = "the dank authors"
copyright = "the dank authors, BSD-3-Clause"
try:
    release = metadata.version("dank-kernels")
except metadata.PackageNotFoundError:  # a checkout that was never installed
    import tomllib

    release = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.intersphinx",
    "dank_mathml",  # math as MathML at build time: no MathJax from a CDN (the site works offline)
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "scripts", "examples/*.py", "examples/GALLERY_HEADER.rst",
                    "**.ipynb_checkpoints", "auto_examples/*.ipynb", "auto_examples/*.py",
                    "auto_examples/*.zip", "auto_examples/*.json",
                    # left by builds before write_computation_times=False (see below)
                    "sg_execution_times.rst", "auto_examples/sg_execution_times.rst"]
templates_path = ["_templates"]

# --- myst (the Markdown pages) -------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "colon_fence", "deflist"]
myst_heading_anchors = 4

# --- API reference -------------------------------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
# members only where a directive asks (the class template, the module pages)
autodoc_default_options: dict = {}
autodoc_typehints = "none"  # the numpydoc Parameters sections carry the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable", None),
    "scipy": ("https://docs.scipy.org/doc/scipy", None),
    "sklearn": ("https://scikit-learn.org/stable", None),
}
# the site is built offline (CI, tests/test_docs.py): references into other projects' sites
# are plain text unless DANK_DOCS_INTERSPHINX=1
if os.environ.get("DANK_DOCS_INTERSPHINX") != "1":
    intersphinx_mapping = {}

# --- gallery -------------------------------------------------------------------------------
_gallery = os.environ.get("DANK_DOCS_GALLERY", "on")
sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_" if _gallery != "off" else r"^$",
    "plot_gallery": "True" if _gallery != "off" else "False",
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "reset_modules": ("matplotlib",),
    "abort_on_example_error": True,
    "show_memory": False,
    "min_reported_time": 1,
    # no sg_execution_times pages: their table loads jQuery and DataTables from CDNs, and
    # the site must work offline
    "write_computation_times": False,
    # a script's last expression is shown as output, except matplotlib's return values
    # (``ax.set_title(...)``, ``ax.legend()``: "<matplotlib.legend.Legend object at 0x...>")
    "ignore_repr_types": r"matplotlib\.",
}

# --- HTML ----------------------------------------------------------------------------------
html_math_renderer = "dank_mathml"
html_theme = "pydata_sphinx_theme"
html_title = f"dank {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 4,
    "secondary_sidebar_items": ["page-toc"],
}
html_show_sourcelink = False
# pages outside any section have nothing to show in the left sidebar: give them its width
html_sidebars = {"index": [], "getting_started": [], "changelog": []}
html_static_path = ["_static"]
html_css_files = ["custom.css"]


# --- API pages, generated from the packages' __all__ ----------------------------------------
# (package, one-line description, public sub-modules listed when they exist and have __all__)
API = [
    ("dank_ref", "The exact reference: each problem as one SDP in CVXPY, certified by its "
     "own code; it never imports ``dank_fast``.",
     ["dank_ref.projection", "dank_ref.kernels", "dank_ref.validation"]),
    ("dank_fast", "Fast certified solvers, certificates and scikit-learn estimators.", []),
    ("verification", "The oracle for other implementations, the conformance kit, the golden "
     "vectors, and the study of the paper's claims and experiments.",
     ["verification.formats", "verification.golden", "verification.conformance",
      "verification.oracle", "verification.study", "verification.study.claims",
      "verification.study.experiments"]),
]


def _public_names(modname: str) -> list[str] | None:
    import importlib

    try:
        mod = importlib.import_module(modname)
    except ImportError:
        return None
    names = getattr(mod, "__all__", None)
    return None if names is None else list(names)


def _attr_doc(modname: str, name: str, value) -> list[str]:
    """The ``#:`` comment of a constant, read where it is defined (a package re-exports it)."""
    from sphinx.pycode import ModuleAnalyzer

    package = modname.split(".")[0]
    others = sorted(m for m in sys.modules if m.startswith(package + ".") and m != modname)
    for candidate in [modname, *others]:
        mod = sys.modules.get(candidate)
        if mod is None or vars(mod).get(name, None) is not value:
            continue
        try:
            docs = ModuleAnalyzer.for_module(candidate).find_attr_docs()
        except Exception:  # a module without readable source
            continue
        lines = [line for line in docs.get(("", name), []) if line.strip()]
        if lines:
            return lines
    return []


def _data_lines(modname: str, names: list[str]) -> list[str]:
    """``py:data`` entries for constants (autosummary would show their type's docstring),
    each with the ``#:`` comment above its definition."""
    import importlib

    mod = importlib.import_module(modname)
    lines = ["Constants:", ""]
    for n in names:
        value = getattr(mod, n)
        shown = repr(value)
        lines += [f".. py:data:: {n}"]
        local = isinstance(value, str) and value.startswith(str(ROOT))  # a path: not shown
        if isinstance(value, (int, float, str, tuple, frozenset)) and len(shown) <= 90 \
                and not local:
            lines += [f"   :value: {shown}"]
        else:
            lines += [f"   :type: {type(value).__name__}"]
        doc = _attr_doc(modname, n, value)
        lines += ["", *[f"   {line}" for line in doc]] if doc else []
        lines += [""]
    return lines


def _is_data(modname: str, name: str) -> bool:
    import importlib
    import inspect

    obj = getattr(importlib.import_module(modname), name)
    return not (inspect.isclass(obj) or inspect.isfunction(obj) or inspect.ismodule(obj)
                or callable(obj))


#: packages whose docstring is not shown on their page: dank_fast's is a plain-text list of the
#: names that the page's table gives (not reStructuredText); its page shows the one-line blurb
DOCSTRING_NOT_SHOWN = {"dank_fast"}


def _section(modname: str, names: list[str], level: str | None,
             blurb: str | None = None) -> list[str]:
    title = f"``{modname}``" if level else modname
    underline = level or "="
    data = [n for n in names if _is_data(modname, n)]
    code = [n for n in names if n not in data]
    if modname in DOCSTRING_NOT_SHOWN:
        # the target before the title: its id goes to the section (``#module-<name>``)
        lines = [f".. py:module:: {modname}", "", title, underline * len(title), "",
                 blurb or "", ""]
    else:
        # the module's docstring, under its ``#module-<name>`` anchor (the target of :mod:)
        lines = [title, underline * len(title), "", f".. automodule:: {modname}", ""]
    lines += [f".. currentmodule:: {modname}", ""]
    if code or data:
        lines += [".. rubric:: Public names", ""]
    if code:
        lines += [".. autosummary::", "   :toctree: generated", "   :nosignatures:", "",
                  *[f"   {n}" for n in code], ""]
    if data:
        lines += _data_lines(modname, data)
    return lines


def write_api_pages() -> None:
    """Write ``api/<package>.rst`` from each package's ``__all__`` (only when it changed)."""
    here = Path(__file__).parent / "api"
    for package, blurb, subs in API:
        names = _public_names(package) or []
        lines = [f".. Generated by docs/conf.py from {package}.__all__; do not edit.", "",
                 *_section(package, sorted(names, key=str.lower), None, blurb)]
        for sub in subs:
            sub_names = _public_names(sub)
            if sub_names:
                lines += _section(sub, sorted(sub_names, key=str.lower), "-")
        text = "\n".join(lines)
        path = here / f"{package}.rst"
        if not path.exists() or path.read_text() != text:
            path.write_text(text)


def _first_line(path: Path) -> str:
    import ast

    doc = ast.get_docstring(ast.parse(path.read_text())) or ""
    line = doc.strip().split("\n\n")[0].replace("\n", " ")
    # cross-references as literals (the title of ":doc:`title <target>`")
    line = re.sub(r":[a-z:]+:`~?\.?([^`<]+?)(\s*<[^`>]*>)?`", r"``\1``", line)
    return line.replace("\\", "\\\\").replace("*", "\\*")


def _write(path: Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


#: modules outside the package pages whose whole docstring and members are on the site
#: (``api/modules/``): those that public docstrings and pages send the reader to ("see the
#: module docstring", the helpers their docstrings name).
#: Every other module is listed in ``api/modules.rst`` with its first paragraph only.
WHOLE_DOCSTRING = {
    "dank_ref.svm", "dank_ref.svr", "dank_ref.decomposed", "dank_ref.certificate",
    "dank_ref.staged", "dank_ref.scale_certificate", "dank_ref.polish",
    "verification.inmemory",
}


def write_module_index() -> None:
    """``api/modules.rst``: every module of the three packages with its docstring's first
    paragraph, read from the source; the public sub-modules link to their package's page, those
    of :data:`WHOLE_DOCSTRING` to a page of their own with the whole docstring."""
    here = Path(__file__).parent / "api"
    lines = [".. Generated by docs/conf.py from the packages' sources; do not edit.", "",
             "All modules", "===========", "",
             "Every module of the three packages, private ones included, with the first "
             "paragraph of its docstring (:doc:`/ARCHITECTURE` explains the layout). Only the "
             "names on the package pages are public API.", "",
             ".. toctree::", "   :hidden:", "   :glob:", "", "   modules/*", ""]
    written = set()
    for package, _, _ in API:
        lines += [f"``{package}``", "-" * (len(package) + 4), ""]
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).with_suffix("")
            parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
            if any(p.startswith("test_") for p in parts):
                continue
            name = ".".join(parts)
            if name != package:
                documented = any(name in subs for _, _, subs in API)
                target = []
                if name in WHOLE_DOCSTRING:
                    title = f"``{name}``"
                    # its members, except those on the package's page (one page per object)
                    public = ", ".join(_public_names(package) or [])
                    _write(here / "modules" / f"{name}.rst",
                           "\n".join([".. Generated by docs/conf.py; do not edit.", "",
                                      title, "=" * len(title), "",
                                      f".. automodule:: {name}", "   :members:",
                                      f"   :exclude-members: {public}", ""]))
                    written.add(f"{name}.rst")
                elif not documented:
                    target = [f".. py:module:: {name}", ""]
                lines += [*target, f":mod:`{name}`", f"   {_first_line(path)}", ""]
    for old in (here / "modules").glob("*.rst"):  # a module that was removed or renamed
        if old.name not in written:
            old.unlink()
    _write(here / "modules.rst", "\n".join(lines))


write_api_pages()
write_module_index()

# References that cannot resolve: other projects' objects while the build is offline
# (intersphinx off), and, one by one, names that dank_fast's docstrings cite without their
# being documented (private helpers and attributes).  Each entry below is a dank_fast
# docstring to complete (link a public name or write the name as a literal), not a page to
# add; remove it when the docstring is fixed (``-n`` then resolves or reports it).
nitpick_ignore_regex = [
    (r"py:.*", r"(sklearn|distributed|dask|numpy|scipy|cvxpy|joblib)\..*"),
]
nitpick_ignore = [
    ("py:func", "svr_scale"),                                   # dank_fast.Certificate
    ("py:func", "dank_fast.certificate.svr_scale"),             # dank_fast.solve_svr
    ("py:func", "dank_fast.working_set.solve_svm_working_set"),  # solve_svm, DANKClassifier
    ("py:func", "dank_fast.inner.inner_minimiser"),             # dank_fast.solve_svm
    ("py:func", "dank_fast._validation.check_representable"),   # dank_fast.solve_svr
    ("py:func", "_canonical_factor"),                           # dank_fast.solve_svr
    ("py:func", "dank_fast._routes.choose_route"),              # DANKClassifier.fit
    ("py:class", "dank_fast._routes.SVRRoute"),                 # DANKRegressor.fit
    ("py:data", "STATUSES"),                                    # dank_fast.DANKResult
    ("py:class", "dank_fast.cluster_result.SubKernel"),         # DecomposedResult
    ("py:class", "dank_fast.cluster_result.ClusterF"),          # DecomposedResult
    ("py:attr", "kernel"),                                      # DecomposedResult
    ("py:func", "dank_fast._curvature.curvature"),              # KernelData.gamma_sums
    ("py:func", "kernel_params"),                               # dank_fast.compute_kernel
    ("py:func", "_project_core"),                               # dank_fast.project_A
]
if intersphinx_mapping:
    nitpick_ignore_regex.pop(0)


WIDE_PAGES = {"user_guide/performance"}


def _wide_pages(app, pagename, templatename, context, doctree):
    # the gallery's code cells and the API pages use the width of the right-hand sidebar
    if pagename.startswith(("auto_examples/", "api/generated/")) or pagename in WIDE_PAGES:
        context["theme_secondary_sidebar_items"] = []


def setup(app):
    app.connect("html-page-context", _wide_pages, priority=100)
