"""verification: the paper's claims as checks, the oracle for other implementations, golden
vectors, the conformance kit and the paper's experiments.

``verification.certify_arrays`` (:mod:`verification.inmemory`) certifies a solution given as
arrays in memory.
"""

__all__ = ["certify_arrays"]


def __getattr__(name):
    # imported on first use, for start-up time: `import verification.formats` (and the pytest
    # plugin) must not load the oracle, dank_ref and dank_fast
    if name == "certify_arrays":
        from .inmemory import certify_arrays  # start-up: see above

        return certify_arrays
    raise AttributeError(f"module 'verification' has no attribute {name!r}")
