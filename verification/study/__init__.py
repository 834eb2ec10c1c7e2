"""The study of the DANK paper: its claims checked (``dank-verify``, :mod:`.claims`,
:mod:`.runner`), its experiments re-run (``dank-reproduce``, :mod:`.experiments`) and its
synthetic cases (:mod:`.synthetic`).

Built on the oracle side of :mod:`verification` (formats, oracle, golden vectors), which never
imports this package.
"""
