"""Conformance tests of an implementation (run by :mod:`verification.conformance.plugin`):

    python -m pytest --dank-impl MODULE:FUNCTION --pyargs verification.conformance

One test per instance of the set; a failure shows the status, the diagnosis and every failed
check's reason.
"""

import pytest


def test_instance(dank_row):
    if dank_row["status"] != "certified":
        lines = [f"{dank_row['status']}: {dank_row['diagnosis']}"] + dank_row["reasons"]
        pytest.fail("\n".join(lines), pytrace=False)
