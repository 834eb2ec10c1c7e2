"""Bugs the fuzz tests found in files the fuzz work does not own, with minimal reproducers.

Each entry's ``reproduce()`` returns True while the bug is present. The fuzz tests skip (and
count as ``known-bug``) only the inputs an entry's bug covers, and only while
:func:`present` says it still reproduces: once the bug is fixed, the fuzz tests check those
inputs strictly again. ``tests/test_fuzz_findings.py`` runs every reproducer under
``xfail(strict=True)``, so a fix shows up there as an XPASS failure: move the entry to
:data:`FIXED_BUGS` then (``tests/test_known_bugs.py`` keeps its reproducer as a strict test).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from functools import cache

import numpy as np


@dataclass(frozen=True)
class Bug:
    where: str  # file and function to fix
    summary: str  # one line: what goes wrong
    reproduce: object  # () -> bool, True while the bug is present


def _raises_unnamed(fn, *names) -> bool:
    """True if ``fn()`` raises anything but a ValueError/TypeError naming one of ``names``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except (ValueError, TypeError) as exc:
        return not any(nm in str(exc) for nm in names)
    except Exception:
        return True
    return False


def _accepts(fn) -> bool:
    """True if ``fn()`` returns without raising ValueError/TypeError (invalid input accepted)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn()
    except (ValueError, TypeError):
        return False
    return True


# --------------------------------------------------------------------------- reproducers
def _paper_alpha0():
    from dank_fast import solve_svm

    def run():
        res = solve_svm(np.eye(3), np.array([1.0, -1.0, 1.0]), C=1.0, eta=1.0, tau=0.0,
                        method="paper", alpha0=np.array([1e200, -1e200, 1e200]), max_iter=5)
        assert res.lower <= res.upper

    return _raises_unnamed(run, "alpha0")


def solve_svr_zero():
    from dank_fast import solve_svr

    return solve_svr(np.zeros((3, 3)), np.array([0.0, 0.0, 1.0]), C=1.0, eta=1.0, tau=1.0,
                     epsilon=0.0, method="paper", max_iter=50)


def _svm_cert(**kw):
    from dank_fast import svm_certificate

    args = dict(K=np.eye(2), y=np.array([1.0, -1.0]), alpha=np.array([0.5, 0.5]), C=1.0,
                eta=1.0, tau=0.0)
    args.update(kw)
    return lambda: svm_certificate(args.pop("K"), args.pop("y"), args.pop("alpha"), **args)


def _project_A_unvalidated():
    from dank_fast import project_A

    return _accepts(lambda: project_A(np.array([np.nan, 1.0]), np.array([1.0, -1.0]), 1.0))


def _ref_cluster_labels():
    from dank_ref.certificate import block_kernel
    from dank_ref.validation import check_partition

    merged = block_kernel(np.ones((2, 2)), [1, "1"])[0, 1] != 0.0  # 1 != "1": two clusters
    tuples = not _accepts(lambda: check_partition([(0, "x"), (1, "x")], 2))
    inf = not _accepts(lambda: check_partition([np.inf, 1.0], 2))
    return bool(merged or tuples or inf)


def _classifier_kernel_dtype():
    from dank_fast import DANKClassifier

    return any(_accepts(lambda K=K: DANKClassifier(kernel="precomputed").fit(K, [0, 1]))
               for K in (np.eye(2, dtype=bool), np.eye(2).astype(str)))


def _ref_huge_int():
    from dank_ref import certificate as rc

    return _raises_unnamed(lambda: rc.svm_certificate(
        np.eye(2), np.array([1.0, -1.0]), np.array([0.5, 0.5]), C=10**400, eta=1.0, tau=0.0),
        "C")


def _zero_kernel_huge_C(package: str) -> bool:
    """K = 0 (valid, always representable) with C = 1e155: d_i d_j overflows to inf, inf * 0."""
    y = np.array([-1.0, 1.0, 1.0])
    a = np.array([3.83076436e154, 0.0, 3.83076436e154])
    if package == "fast":
        from dank_fast import svm_certificate

        fn = lambda: svm_certificate(np.zeros((3, 3)), y, a, C=1e155, eta=1.0, tau=0.0)  # noqa: E731
    else:
        from dank_ref import certificate as rc

        fn = lambda: rc.svm_certificate(np.zeros((3, 3)), y, a, C=1e155, eta=1e-169, tau=1.0)  # noqa: E731
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c = fn()
    except Exception:
        return True
    return not (np.isfinite(c.lower) and np.isfinite(c.upper) and c.lower <= c.upper)


def _svc_unbounded():
    """The plain SVM (libsvm) of the warm start has no iteration limit: 7 points need 6e6
    iterations at C max|K| = 4.7e7 (1 s); 300 s at C = 1e4."""
    from unittest import mock

    import sklearn.svm

    from dank_fast.svm import svc_dual

    seen = []

    class Recorder(sklearn.svm.SVC):
        def fit(self, X, y, sample_weight=None):
            out = super().fit(X, y, sample_weight)
            seen.append(int(np.max(self.n_iter_)))
            return out

    x = np.array([310.71254466, 1860.75246417, -22.67144402, -309.10095833, -1413.24878229,
                  -513.01608223, 2178.7127426])
    y = np.array([1.0, -1.0, -1.0, 1.0, 1.0, 1.0, -1.0])
    with mock.patch("dank_fast._libsvm.SVC", Recorder):
        svc_dual(np.outer(x, x), y, 10.0)
    return bool(seen) and seen[0] > 10**6


KNOWN_BUGS: dict[str, Bug] = {
}

# Fixed bugs, kept with their reproducers: tests/test_known_bugs.py asserts that none of them
# reproduces any more (a strict regression test per entry). When a bug in KNOWN_BUGS is
# fixed, move its entry here.
FIXED_BUGS: dict[str, Bug] = {
    "paper-alpha0-unprojected": Bug(
        "dank_fast/_paper.py: paper()",
        "method='paper'/'paper-monotone'/'pgm' evaluate h at the raw alpha0 (documented as "
        "'projected onto A'): a large warm start overflows to IndexError / LinAlgError",
        _paper_alpha0,
    ),
    "svc-warm-start-unbounded": Bug(
        "dank_fast/_libsvm.py: svc_dual() (used by solve_svm(method='auto'), solve_decomposed, "
        "DANKClassifier)",
        "libsvm runs without an iteration limit; its iterations grow with C max|K|: 7 points "
        "with a linear kernel take 1 s at C = 10, 300 s at C = 1e4 (a hang)",
        _svc_unbounded,
    ),
    "svr-paper-zero-kernel": Bug(
        "dank_fast/svr.py: SVRProblem.lipschitz_theorem() (via _paper.paper())",
        "K = 0 (valid) gives L = 2 kappa (...) = 0, so method='paper'/'paper-monotone' step "
        "by 1/(2L) = inf: LinAlgError, IndexError, or RuntimeError 'ended at an infeasible "
        "point (violation nan)'",
        lambda: _raises_unnamed(lambda: solve_svr_zero(), "K"),
    ),
    "ref-cluster-labels": Bug(
        "dank_ref/validation.py: check_partition()",
        "np.asarray(labels) turns [1, '1'] into the strings '1', '1' (two clusters merged into "
        "one: block_kernel(ones, [1, '1']) is all ones, dank_fast keeps two), refuses tuple "
        "labels ('got shape (2, 2)') and inf (docs/validity.md: any values equal to "
        "themselves; dank_fast accepts both)",
        _ref_cluster_labels,
    ),
    "classifier-kernel-dtype": Bug(
        "dank_fast/estimators.py: DANKClassifier.fit()",
        "a precomputed kernel of booleans or of numeric strings is cast to float by "
        "validate_data and accepted (docs/validity.md rule 1: TypeError; DANKRegressor "
        "refuses both before the cast: see dank_fast/regressor.py _refuse_boolean_kernel)",
        _classifier_kernel_dtype,
    ),
    "ref-huge-int": Bug(
        "dank_ref/validation.py: _real_scalar()",
        "float(value) raises OverflowError for an int beyond the float range (C = 10**400): "
        "should be the ValueError 'C must be a finite number > 0' (dank_fast maps it to inf)",
        _ref_huge_int,
    ),
    "certificate-zero-kernel-huge-C": Bug(
        "dank_fast/certificate.py: svm_certificate(), svr_certificate() (canonical_factor "
        "returns 1 for max|K| = 0)",
        "K = 0 (valid, always representable) with C = 1e155: IndexError (tau = 0) or "
        "LinAlgError (tau > 0); d_i d_j overflows to inf and inf * 0 = NaN. The solvers are "
        "not affected",
        lambda: _zero_kernel_huge_C("fast"),
    ),
    "ref-certificate-zero-kernel-huge-C": Bug(
        "dank_ref/certificate.py: svm_certificate(), decomposed_certificate() (frame_scale "
        "for max|K| = 0)",
        "K = 0 with C = 1e155 and eta = 1e-169 (valid): LinAlgError 'Eigenvalues did not "
        "converge' (P1) or a (nan, nan) bracket (P3)",
        lambda: _zero_kernel_huge_C("ref"),
    ),
    "certificate-route": Bug(
        "dank_fast/certificate.py: svm_certificate()",
        "route is not validated: route='x' is silently used as the Lanczos route",
        lambda: _accepts(_svm_cert(route="x")),
    ),
    "project_A-unvalidated": Bug(
        "dank_fast/projection.py: project_A()",
        "no input validation: NaN in z returns NaN, y = 2 or a negative C return points "
        "outside the set, an unattainable target returns an infeasible point, an empty z "
        "raises IndexError, C = '1' raises numpy's UFuncTypeError",
        _project_A_unvalidated,
    ),
}


@cache
def present(key: str) -> bool:
    """Whether the bug ``key`` still reproduces (evaluated once per process); False once its
    entry is deleted (the bug is fixed: the fuzz tests check those inputs strictly again)."""
    bug = KNOWN_BUGS.get(key)
    return bug is not None and bool(bug.reproduce())
