"""The documentation: the Sphinx site builds with warnings as errors and every internal reference
resolved (``-W -n``), every link and ``#anchor`` of the built HTML resolves
(``docs/scripts/check_links.py``), its generated tables are current, and the project's version,
citation and CI command agree with what the docs say.

The site build needs the ``docs`` extra (``pip install ".[docs]"``, part of the README's test
command); it is skipped without Sphinx, except in CI (``CI=true``), where it must run. It runs
the gallery unless ``DANK_DOCS_GALLERY=off`` (then the examples' pages are built without running
them); the full build takes about 1-2 minutes on 2 cores.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _require(name: str) -> None:
    if os.environ.get("CI") == "true":  # CI installs the docs extra: the build must run there
        importlib.import_module(name)
    else:
        pytest.importorskip(name)


def test_site_builds_with_warnings_as_errors(tmp_path):
    for name in ("sphinx", "numpydoc", "sphinx_gallery", "myst_parser", "pydata_sphinx_theme",
                 "latex2mathml"):
        _require(name)
    env = dict(os.environ, PYTHONPATH=str(ROOT), MPLBACKEND="agg")
    out = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "-n", "--keep-going", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), "docs", str(tmp_path / "html")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200, check=False)
    assert out.returncode == 0, out.stderr[-5000:]
    html = tmp_path / "html"
    for page in ("index", "getting_started", "user_guide/checking", "api/dank_fast",
                 "api/generated/dank_fast.solve_svm", "api/generated/dank_ref.solve_svm",
                 "api/generated/verification.certify_arrays",
                 "api/generated/verification.oracle.certify", "api/modules/dank_ref.svm",
                 "MATH", "FORMATS", "validity", "ARCHITECTURE", "conventions", "conformance",
                 "changelog"):
        assert (html / f"{page}.html").is_file(), page
    solve_svm = (html / "api/generated/dank_fast.solve_svm.html").read_text()
    assert "Parameters" in solve_svm and "Returns" in solve_svm
    # every page is checked by the link check below; these links in particular must be there
    certify_arrays = (html / "api/generated/verification.certify_arrays.html").read_text()
    assert 'href="verification.oracle.certify.html#verification.oracle.certify"' in certify_arrays
    ref_svm = (html / "api/generated/dank_ref.solve_svm.html").read_text()
    for target in ("../../MATH.html", "../../validity.html", "../modules/dank_ref.svm.html"):
        assert f'href="{target}' in ref_svm, target
    for package in ("dank_ref", "dank_fast", "verification"):  # the targets of :mod:`package`
        assert f'id="module-{package}"' in (html / f"api/{package}.html").read_text(), package
    # no sg_execution_times pages: they load jQuery and DataTables from CDNs
    assert not list(html.rglob("sg_execution_times.html"))

    # every relative link and #anchor of the built HTML resolves, nothing loads from a CDN
    # (about a second for the whole site)
    broken = _check_links()(html)
    assert not broken, "broken links in the built site:\n" + "\n".join(broken)
    if os.environ.get("DANK_DOCS_GALLERY", "on") != "off":
        example = (html / "auto_examples/plot_01_exact_reference.html").read_text()
        assert "rel_gap=" in example  # the script ran and its output is on the page
        # the oracle's commands as a user types them, with their output and exit codes
        files = (html / "auto_examples/plot_07a_certify_files.html").read_text()
        for shown in ("$ dank-verify certify moons.json moons_solution.json",
                      "verdict: CERTIFIED", "verdict: NOT CERTIFIED", "$ echo $?"):
            assert shown in files, shown
        kit = (html / "auto_examples/plot_07_check_your_solver.html").read_text()
        assert "$ dank-verify conformance --impl my_solver:solve" in kit
        assert "PYTHONPATH" not in kit and "dank-rendered-md" in kit  # report.md rendered


def _check_links():
    sys.path.insert(0, str(ROOT / "docs" / "scripts"))
    try:
        from check_links import check
    finally:
        sys.path.pop(0)
    return check


def test_link_check_finds_each_kind_of_broken_link(tmp_path):
    (tmp_path / "_static").mkdir()
    (tmp_path / "a.html").write_text(
        '<p id="top">x</p><a href="b.html#there">ok</a> <a href="#top">ok</a>\n'
        '<a href="b.html#gone">anchor</a> <a href="c.html">file</a>\n'
        '<script src="https://cdn.example.org/x.js"></script>\n'
        '<span class="problematic">|y_i|</span> <a href="https://example.org/">outside</a>')
    (tmp_path / "b.html").write_text('<section id="there"></section>')
    (tmp_path / "_static" / "s.css").write_text("a { background: url(//cdn.example.org/i.png) }")
    broken = _check_links()(tmp_path)
    assert len(broken) == 5, broken
    for what in ("no id 'gone' in b.html", "no file c.html", "cdn.example.org/x.js",
                 "problematic", "_static/s.css:1"):
        assert any(what in line for line in broken), what
    (tmp_path / "a.html").write_text('<a href="b.html#there">ok</a>')
    (tmp_path / "_static" / "s.css").write_text("a { color: red }")
    assert _check_links()(tmp_path) == []


def test_generated_tables_are_current():
    out = subprocess.run([sys.executable, "docs/scripts/tables.py", "--check"], cwd=ROOT,
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("damage", ["malformed", "missing"])
def test_tables_name_a_results_file_they_cannot_read(tmp_path, damage):
    """A committed results file that is not JSON, or is gone: exit 2 and one line naming it."""
    for rel in ("docs/scripts", "benchmarks/results"):
        shutil.copytree(ROOT / rel, tmp_path / rel)
    shutil.copy(ROOT / "benchmarks" / "_args.py", tmp_path / "benchmarks" / "_args.py")
    for rel in ("README.md", "docs/conformance.md", "docs/ARCHITECTURE.md",
                "benchmarks/README.md", "docs/user_guide/performance.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, tmp_path / rel)
    bad = tmp_path / "benchmarks" / "results" / "ablation_tau05.json"
    if damage == "malformed":
        bad.write_text("{not json")
    else:
        bad.unlink()
    out = subprocess.run([sys.executable, "docs/scripts/tables.py", "--check"], cwd=tmp_path,
                         capture_output=True, text=True, check=False)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "benchmarks/results/ablation_tau05.json" in lines[0], lines


def test_version_is_written_once():
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    init = (ROOT / "dank_fast" / "__init__.py").read_text()
    assert f'"{version}"' not in init  # read from the installed metadata
    cff = (ROOT / "CITATION.cff").read_text()
    assert re.search(rf"^version: {re.escape(version)}$", cff, flags=re.M)


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    bash = re.findall(r"```bash\n(.*?)```", readme, flags=re.S)
    command = next(b.strip() for b in bash if "pytest" in b)
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == command


def test_every_page_is_in_a_toctree_or_the_api():
    docs = ROOT / "docs"
    pages = {p.relative_to(docs).with_suffix("").as_posix()
             for p in [*docs.glob("*.md"), *docs.glob("user_guide/*.md")]}
    listed = set()
    for p in [docs / "index.md", docs / "reference.md", docs / "user_guide" / "index.md"]:
        prefix = "user_guide/" if p.parent.name == "user_guide" else ""
        for block in re.findall(r"```\{toctree\}\n(.*?)```", p.read_text(), flags=re.S):
            listed |= {prefix + line.strip() for line in block.splitlines()
                       if line.strip() and not line.startswith(":")}
    assert pages - {"index"} <= listed
