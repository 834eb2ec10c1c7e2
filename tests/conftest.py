"""Hypothesis profiles of the test suite.

The default run (what `.ci/run` executes) is **derandomized**: every property test draws the
same examples on every run and machine, so a CI result can be reproduced and a failure is never
a coin toss. Exploration is a separate, explicit run that draws fresh random examples::

    DANK_HYPOTHESIS_PROFILE=explore python -m pytest tests/test_properties.py

(the fuzz tests have their own profiles: ``tests/_fuzz_run.py``). A failure found while
exploring becomes a regression test (``@example`` or a plain test), as in
tests/test_ref_certificate.py and tests/test_ref_svr.py.
"""

from __future__ import annotations

import os

from hypothesis import settings

settings.register_profile("dank-default", derandomize=True)
settings.register_profile("explore", derandomize=False)
_PROFILE = os.environ.get("DANK_HYPOTHESIS_PROFILE", "dank-default")
if _PROFILE not in ("dank-default", "explore"):
    raise ValueError(
        f"DANK_HYPOTHESIS_PROFILE must be 'dank-default' or 'explore', got {_PROFILE!r}")
settings.load_profile(_PROFILE)
