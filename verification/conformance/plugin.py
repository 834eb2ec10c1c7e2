"""pytest plugin of the conformance kit (entry point ``pytest11``), inert unless asked.

    python -m pytest --dank-impl MODULE:FUNCTION --pyargs verification.conformance \\
        [--dank-set golden|families|all|large] [--dank-task svm|svr|decomposed]... \\
        [--dank-tol T] [--dank-timeout S]

runs :mod:`verification.conformance.test_implementation`: one test per instance of the set,
each failing with the oracle's diagnosis and reasons, so an implementer can keep the check in
their own CI.  Without ``--dank-impl`` the plugin only adds its options: it imports nothing
else and parametrizes nothing (the test module then reports one skipped test).
"""

from __future__ import annotations

import shutil
import tempfile

import pytest

_TASKS = ("svm", "svr", "decomposed")


def pytest_addoption(parser) -> None:
    g = parser.getgroup("dank", "DANK conformance kit (verification.conformance)")
    g.addoption("--dank-impl", default=None, metavar="MODULE:FUNCTION",
                help="run the conformance tests on this implementation")
    g.addoption("--dank-set", default="golden",
                choices=("golden", "families", "all", "large"),
                help="test set (default golden; large: each instance's own time limit)")
    g.addoption("--dank-task", action="append", default=None, choices=_TASKS,
                help="restrict to a task (repeatable)")
    g.addoption("--dank-tol", type=float, default=1e-6, metavar="T",
                help="required certified relative gap (default 1e-6)")
    g.addoption("--dank-timeout", type=float, default=60.0, metavar="S",
                help="seconds per instance (default 60)")


def _cases(config):
    if not hasattr(config, "_dank_cases"):
        # imported only when --dank-impl is given, for the start-up time of every other run
        from .cases import load_cases

        config._dank_tmp = tempfile.mkdtemp(prefix="dank-families-")
        config._dank_cases = load_cases(config.getoption("dank_set"),
                                        config.getoption("dank_task"), config._dank_tmp)
    return config._dank_cases


def pytest_unconfigure(config) -> None:
    if getattr(config, "_dank_tmp", None):
        shutil.rmtree(config._dank_tmp, ignore_errors=True)


def pytest_generate_tests(metafunc) -> None:
    if "dank_case" not in metafunc.fixturenames:
        return
    if not metafunc.config.getoption("dank_impl"):
        skip = pytest.mark.skip(reason="give --dank-impl MODULE:FUNCTION to run the DANK "
                                "conformance tests")
        metafunc.parametrize("dank_case", [pytest.param(None, marks=skip)], ids=["no-impl"])
        return
    cases = _cases(metafunc.config)
    metafunc.parametrize("dank_case", cases, ids=[c.id for c in cases])


@pytest.fixture(scope="session")
def dank_runner(pytestconfig):
    """One worker process for the whole session (restarted after a timeout or a crash)."""
    from .runners import ImplRunner  # only when the conformance tests run (start-up time)

    with ImplRunner(pytestconfig.getoption("dank_impl"),
                    pytestconfig.getoption("dank_timeout")) as runner:
        yield runner


@pytest.fixture
def dank_row(dank_case, dank_runner, pytestconfig) -> dict:
    """The kit's result row for this test's instance."""
    from .kit import run_cases  # only when the conformance tests run (start-up time)

    return run_cases([dank_case], dank_runner, tol=pytestconfig.getoption("dank_tol"))[0]
