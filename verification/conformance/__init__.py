"""The conformance kit: run any DANK implementation over a test set, certify every answer.

``dank-verify conformance (--impl MODULE:FUNCTION | --cmd "...")`` (:mod:`.cli`) runs an
implementation on every instance of a test set (:mod:`.cases`: the golden vectors, the
generated :mod:`.families`, both, or the :mod:`.large` set at the paper's scale), each in a
worker process under a timeout (:mod:`.runners`; the worker process is :mod:`._worker`),
certifies every answer in-process with :func:`verification.oracle.certify` (:mod:`.kit`), gives
each row a status and a one-line diagnosis (:mod:`.diagnosis`) and writes ``report.md`` and
``results.json`` (:mod:`.report`). Success is decided by the certificate, never by the
implementation's own status. :mod:`.adapters` wraps every solver of this project as an
``--impl`` target and :mod:`.compare` runs them all into one table
(``reproduction/conformance/``); :mod:`.plugin` is the pytest plugin (``--dank-impl``) whose
test module is ``verification.conformance.test_implementation``.

This package's ``__init__`` imports nothing, so that loading the pytest plugin costs nothing.
"""

import importlib

#: where each public name lives, loaded on first use
#: (start-up: the pytest plugin imports this package)
_LAZY = {
    "load_cases": ".cases",
    "select_cases": ".cases",
    "export_cases": ".cases",
    "run_cases": ".kit",
    "ImplRunner": ".runners",
    "CmdRunner": ".runners",
}

__all__ = [
    "load_cases",
    "select_cases",
    "export_cases",
    "run_cases",
    "ImplRunner",
    "CmdRunner",
]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
