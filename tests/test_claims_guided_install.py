"""The guided search does not depend on how dank is installed (editable or site-packages)."""

from __future__ import annotations

import pytest

hypothesis = pytest.importorskip("hypothesis")


def test_no_local_constants_during_a_search():
    """Hypothesis harvests numeric constants from "local" modules (dank's own sources when it is
    installed in editable mode, none from site-packages); the claims' search switches that off,
    so one seed gives one search everywhere (it gave PG ratios 4.6 and 8.9 before)."""
    providers = pytest.importorskip("hypothesis.internal.conjecture.providers")
    from verification.study.claims.guided import _no_local_constants

    with _no_local_constants():
        c = providers._get_local_constants()
        assert not (c.integers or c.floats or c.bytes or c.strings)
        assert providers.CONSTANTS_CACHE == {}
