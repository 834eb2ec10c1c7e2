"""
Certifying a solution file with ``dank-verify certify``
=======================================================

The oracle for a solver written in any language: the solver writes its answer to a file, and
``dank-verify certify INSTANCE SOLUTION`` checks it against the instance, prints a report and
exits 0 (certified), 1 (not certified) or 2 (bad input).  The files are ``.npz`` archives or
JSON objects of the documented, versioned format (:doc:`/FORMATS`, field by field).  Here, from
start to end: an instance file, a solution file, the certify command on a right answer, on a
wrong one and on a malformed one.  The packaged golden vectors (``dank-verify vectors``,
:mod:`verification.golden`) are more instances with their certified solutions.

The shell commands below are run while this page is built, in the directory ``work`` where
the files are written; what is shown under each ``$`` line is their output.
"""


# %%
# The instance file
# -----------------
# An instance of P1 (``task="svm"``): 40 points of two moons with the Gaussian kernel of
# width ``sigma = 0.5``, given by the features ``X`` (the reader computes ``K``), ``C = 1``,
# ``eta = 1`` and the nuclear-norm weight ``tau = 0.01``.
# :func:`verification.formats.save_instance` writes it (JSON here, because the file name ends
# in ``.json``; any other name gives an ``.npz``).  Any program that writes the same fields
# writes a valid file.

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
import json
import tempfile
from pathlib import Path

import numpy as np
from sklearn.datasets import make_moons

from verification.formats import load_instance, save_instance, save_solution

work = Path(tempfile.mkdtemp())  # an empty directory
X, y01 = make_moons(40, noise=0.2, random_state=0)
y = 2.0 * y01 - 1.0  # labels -1 / +1
save_instance(work / "moons.json", task="svm", X=X.round(4), kernel="gaussian", sigma=0.5, y=y,
              C=1.0, eta=1.0, tau=0.01)

# what the file holds (the arrays abbreviated)
for key, value in json.loads((work / "moons.json").read_text()).items():
    print(f"{key:8} {value if not isinstance(value, list) else str(value[:2])[:-1] + ', ...]'}")

# %%
# A solution file
# ---------------
# Your solver reads the instance and writes its ``alpha`` (and, optionally, its ``bias`` and
# ``F``).  Here ``dank_fast`` plays that solver; ``meta`` is free text echoed in the report.
from dank_fast import solve_svm

inst = load_instance(work / "moons.json")  # the dict the oracle reads: K computed from X
res = solve_svm(inst["K"], inst["y"], C=inst["C"], eta=inst["eta"], tau=inst["tau"], tol=1e-9)
save_solution(work / "moons_solution.json", task="svm", alpha=res.alpha, bias=res.bias,
              meta="dank_fast, tol 1e-9")

# %%
# Certify it
# ----------
# One line per check (feasibility of each constraint, the certified relative gap, the
# submitted bias and ``F``), then the numbers they come from: the bracket ``lower <= v* <=
# upper`` recomputed by ``dank_ref``.  Exit code 0: certified.
code = shell("dank-verify certify moons.json moons_solution.json")
assert code == 0

# %%
# A wrong answer: exit code 1
# ---------------------------
# A plain SVM's dual solution on the same kernel (the limit ``F = 11'`` of DANK) is feasible
# but is not DANK's optimum: the gap check fails, the report says by how much and, on an
# instance this small, which kind of wrong the evidence points to (``evidence``: the
# reference optimum ``v*`` from ``dank_ref`` and the point's gap on related problems; here
# the point solves the plain SVM, a different problem).  The exit code is 1; a script that
# runs the oracle tests the exit code.
from sklearn.svm import SVC

svc = SVC(C=1.0, kernel="precomputed", tol=1e-10).fit(inst["K"], y)
alpha = np.zeros(len(y))
alpha[svc.support_] = np.abs(svc.dual_coef_[0])
save_solution(work / "plain_svm_solution.json", task="svm", alpha=alpha,
              bias=float(svc.intercept_[0]), meta="a plain SVM")

code = shell("dank-verify certify moons.json plain_svm_solution.json")
assert code == 1

# %%
# Bad input: exit code 2
# ----------------------
# A file the reader refuses (here ``alpha`` one entry short) is one line on stderr naming the
# file and the field, and exit code 2; nothing is certified.  ``--debug`` shows the traceback.
save_solution(work / "short_solution.json", task="svm", alpha=res.alpha[:-1],
              meta="one entry short")
code = shell("dank-verify certify moons.json short_solution.json")
assert code == 2

# %%
# The same check in Python, on arrays in memory, is :func:`verification.certify_arrays`; whole
# test sets of instances are the conformance kit
# (:ref:`sphx_glr_auto_examples_plot_07_check_your_solver.py`).
