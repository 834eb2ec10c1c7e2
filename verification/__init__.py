"""verification: the oracle for other implementations (file formats, schemas, ``certify``,
golden vectors, the in-memory API, the conformance kit) and, in :mod:`verification.study`, the
study of the paper (its claims as checks, its experiments re-run).  The oracle side's verdicts
depend on :mod:`dank_ref` alone; it never imports the study.

``verification.certify_arrays`` (:mod:`verification.inmemory`) certifies a solution given as
arrays in memory.
"""

__all__ = ["certify_arrays"]


def __getattr__(name):
    # imported on first use, for start-up time: `import verification.formats` (and the pytest
    # plugin) must not load the oracle or dank_fast (dank_ref's rule and kernels: numpy only)
    if name == "certify_arrays":
        from .inmemory import certify_arrays  # start-up: see above

        return certify_arrays
    raise AttributeError(f"module 'verification' has no attribute {name!r}")
