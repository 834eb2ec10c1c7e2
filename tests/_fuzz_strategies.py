"""The fuzz tests' shared machinery, by subject: :mod:`_fuzz_run` (profiles, statistics, time
limit, assertions), :mod:`_fuzz_rule` (docs/validity.md written independently of dank_fast)
and :mod:`_fuzz_inputs` (hypothesis strategies). This module re-exports their public names
for the fuzz tests that import them from here."""

from __future__ import annotations

from _fuzz_inputs import *  # noqa: F403
from _fuzz_rule import *  # noqa: F403
from _fuzz_run import *  # noqa: F403
