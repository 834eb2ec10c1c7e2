"""
Checking a solver of your own with the kit
==========================================

The :mod:`verification` package is an oracle for *other* implementations of DANK: it
recomputes the certificate of a proposed solution with :mod:`dank_ref` (code independent of
:mod:`dank_fast`) and says which check failed and why.  Success is decided by the certificate,
never by the solver's own status.

Three ways in: :func:`verification.certify_arrays` (arrays in memory, below), the
conformance kit ``dank-verify conformance`` (a whole test set, below), and the pytest plugin
(``python -m pytest --dank-impl mypackage.solver:solve --pyargs verification.conformance``).
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
# a worker process under a timeout, and writes ``report.md`` and ``results.json``.  Any
# program in any language can be checked with ``--cmd "prog {instance} {solution}"``
# (file formats: :doc:`/FORMATS`).  Here a solver module is written to a temporary directory
# and run on the golden vectors of the SVM task.
import os
import subprocess
import sys
import tempfile
from pathlib import Path

solver_code = '''
import numpy as np
from dank_fast import solve_svm

def solve(instance):
    res = solve_svm(np.asarray(instance["K"]), instance["y"], C=instance["C"],
                    eta=instance["eta"], tau=instance["tau"], tol=1e-9)
    return {"alpha": res.alpha, "bias": res.bias, "meta": "dank_fast " + res.method}
'''
with tempfile.TemporaryDirectory() as tmp:
    Path(tmp, "my_solver.py").write_text(solver_code)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([tmp, *sys.path]))
    out = subprocess.run(
        [sys.executable, "-m", "verification.cli", "conformance", "--impl", "my_solver:solve",
         "--set", "golden", "--task", "svm", "--out", str(Path(tmp, "report"))],
        cwd=tmp, env=env, capture_output=True, text=True, check=False)
    print(out.stdout.replace(tmp, "<tmp>"))
    print(Path(tmp, "report", "report.md").read_text()[:1200])
