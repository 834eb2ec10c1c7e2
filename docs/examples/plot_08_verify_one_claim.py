"""
Verifying one claim of the paper
================================

``dank-verify`` checks each theorem and lemma of the paper on seeded random instances, on
structured adversarial ones and with a Hypothesis search that maximises ``lhs / rhs``; the
verdict is HOLDS, VIOLATED (with the smallest counterexample saved to a file), VIOLATED-
DEGENERATE (fails only where the printed bound is ``<= 0``), VACUOUS (the premise never held)
or INCONCLUSIVE.  Here: the step size of the paper's projected gradient, eq. (17) ``pgm``
(claim ``PG``), which omits a factor ``kappa``.
"""

# %%
# Run one claim's search
# ----------------------
import tempfile

import numpy as np

try:
    from verification.study import claims
except ImportError:  # the study's module path of releases up to 0.1
    from verification import claims

with tempfile.TemporaryDirectory() as out:
    (verdict,) = claims.run_group("PG", np.random.default_rng(0), budget=1, out_dir=out)
    print(verdict.status)
    print(verdict.headline)
    # the counterexample file is checked again, from scratch, by `dank-verify reproduce FILE`
    report = claims.reproduce_report(verdict.counterexample_path)
    print(report["text"])
assert verdict.status == "VIOLATED" and report["kind"] == "violated"

# %%
# The counterexample, read back
# -----------------------------
# The instance of the worst ratio: its parameters and the two sides of the bound.
print({k: v for k, v in verdict.where.items() if k in ("n", "C", "eta", "tau", "lhs", "rhs")})

# %%
# All claims at once: ``dank-verify --quick --out dank-report`` (about half a minute) writes
# ``report.md``, ``results.json``, figures and every counterexample file.  The committed run's
# verdicts are on the page :doc:`/user_guide/claims`.
