"""
Checking a solver of your own with the kit
==========================================

The :mod:`verification` package is an oracle for *other* implementations of DANK: it
recomputes the certificate of a proposed solution with :mod:`dank_ref` (code independent of
:mod:`dank_fast`) and says which check failed and why.  Success is decided by the certificate,
never by the solver's own status.

Three ways in: :func:`verification.certify_arrays` (arrays in memory, below), the
conformance kit ``dank-verify conformance`` (a whole test set, from the shell, below), and the
pytest plugin (``python -m pytest --dank-impl mypackage.solver:solve --pyargs
verification.conformance``).  One solution file at a time, from any language:
``dank-verify certify`` (:ref:`sphx_glr_auto_examples_plot_07a_certify_files.py`).
"""

# %%
# One answer, in memory
# ---------------------
import numpy as np

import verification

K = np.array([[1.0, 0.0820849986238988], [0.0820849986238988, 1.0]])
rep = verification.certify_arrays(K, [1.0, -1.0], C=1.0, eta=1.0, tau=0.01,
                                  alpha=[0.89664868, 0.89664868], meta="my solver 0.3")
print(rep["certified"], f"{rep['rel_gap']:.1e}", rep["meta"])
assert rep["certified"]

# %%
# A wrong answer is named
# -----------------------
# A plain SVM's dual solution (the limit ``F = 11'``, ``eta -> inf``) is feasible but is not
# DANK's optimum at finite ``eta``: the oracle reports the failed check and its reason.
from sklearn.datasets import make_moons
from sklearn.svm import SVC

X, y01 = make_moons(60, noise=0.2, random_state=0)
y = 2.0 * y01 - 1.0
sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
K = np.exp(-sq / (2 * 0.5**2))
svc = SVC(C=1.0, kernel="precomputed", tol=1e-10).fit(K, y)
alpha = np.zeros(len(y))
alpha[svc.support_] = np.abs(svc.dual_coef_[0])
rep = verification.certify_arrays(K, y, C=1.0, eta=5.0, tau=0.01, alpha=alpha,
                                  meta="plain SVM")
print("certified:", rep["certified"])
for reason in rep["reasons"]:
    print("  failed:", reason)

# %%
# A whole test set: the conformance kit
# -------------------------------------
# ``dank-verify conformance --impl MODULE:FUNCTION`` runs ``FUNCTION(instance) -> dict`` on
# every instance of a test set (the golden vectors, 37 generated families, or both), each in
# a worker process under a timeout, certifies every answer, and writes ``report.md`` and
# ``results.json``.  ``MODULE`` is imported from the current directory or the Python path.
# Any program in any language can be checked with ``--cmd "prog {instance} {solution}"``
# (file formats: :doc:`/FORMATS`; one file pair by hand:
# :ref:`sphx_glr_auto_examples_plot_07a_certify_files.py`).
#
# The solver, saved as ``my_solver.py`` in an empty directory ``work`` (``dank_fast`` and
# ``dank_ref`` play your solver; the instance's keys are listed by
# ``dank-verify conformance --help``):

# sphinx_gallery_start_ignore
# run the shell commands as a user types them (dank-verify on the PATH), in the directory
# `work` (sphinx-gallery runs every block in the examples' directory: no os.chdir here)
import atexit
import os
import shlex
import shutil
import subprocess
import sys

_NS = globals()
atexit.register(lambda: shutil.rmtree(_NS["work"], ignore_errors=True))  # the files written
_EXE = shutil.which("dank-verify")
_CMD = [_EXE] if _EXE else [sys.executable, "-m", "verification.cli"]


def shell(line: str) -> int:
    """Print ``$ line``, run it (a dank-verify command), print its output; its exit code."""
    args = shlex.split(line)
    assert args[0] == "dank-verify"
    out = subprocess.run([*_CMD, *args[1:]], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, env=dict(os.environ, PYTHONUNBUFFERED="1"), cwd=work,
                         check=False)
    print(f"$ {line}\n{out.stdout.rstrip()}\n$ echo $?\n{out.returncode}\n")
    return out.returncode


# sphinx_gallery_end_ignore
import tempfile
from pathlib import Path

work = Path(tempfile.mkdtemp())
(work / "my_solver.py").write_text('''
import numpy as np
import dank_fast
import dank_ref

def solve(instance):
    K, y, C = np.asarray(instance["K"]), instance["y"], instance["C"]
    # dank_fast takes one box C; per-sample boxes (a vector C) go to dank_ref
    name, solver = (("dank_fast", dank_fast.solve_svm) if np.ndim(C) == 0
                    else ("dank_ref", dank_ref.solve_svm))
    res = solver(K, y, C=C, eta=instance["eta"], tau=instance["tau"], tol=1e-9)
    return {"alpha": res.alpha, "bias": res.bias, "meta": name}
''')
# sphinx_gallery_capture_repr_block = ()

# %%
# Then, in a shell in ``work``, on the golden vectors of P1 (exit code 0: every instance
# certified):
code = shell("dank-verify conformance --impl my_solver:solve --set golden --task svm "
             "--out report --quiet")
assert code == 0

# %%
# A solver that solves another problem
# ------------------------------------
# The plain SVM of the second section, as a solver module, on four of those instances
# (``--case``, repeatable): every instance it does not solve is a row with the failed check
# and a one-line diagnosis, on the terminal and in ``report.md``; exit code 1.
(work / "plain_svm.py").write_text('''
import numpy as np
from sklearn.svm import SVC

def solve(instance):
    # a plain SVM on K: the limit F = 11' of DANK (eta -> infinity), not DANK's optimum
    K, y = np.asarray(instance["K"]), np.asarray(instance["y"])
    svc = SVC(C=instance["C"], kernel="precomputed", tol=1e-10).fit(K, y)
    alpha = np.zeros(len(y))
    alpha[svc.support_] = np.abs(svc.dual_coef_[0])
    return {"alpha": alpha, "bias": float(svc.intercept_[0]), "meta": "plain SVM"}
''')
code = shell("dank-verify conformance --impl plain_svm:solve --set golden --case p1_basic "
             "--case p1_eta_1e6 --case p1_linear --case p1_n2 --out report --quiet")
assert code == 1

# %%
# ``report/report.md`` of that run, as Markdown renders it (``report/results.json`` holds the
# same rows for a program to read):

# sphinx_gallery_start_ignore
from markdown_it import MarkdownIt


class _Rendered:
    """Markdown shown as HTML in the example's output (sphinx-gallery's ``_repr_html_``)."""

    def __init__(self, text: str):
        self.html = MarkdownIt("commonmark").enable("table").render(text)

    def _repr_html_(self) -> str:
        return f'<div class="dank-rendered-md">{self.html}</div>'


def show_markdown(path: Path) -> _Rendered:
    return _Rendered(Path(path).read_text())


# sphinx_gallery_end_ignore
show_markdown(work / "report" / "report.md")

# %%
# The same test sets run as one pytest test per instance in your own CI:
# ``python -m pytest --dank-impl my_solver:solve --pyargs verification.conformance``.
