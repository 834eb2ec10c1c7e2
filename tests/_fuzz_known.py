"""Bugs the fuzz tests found in files the fuzz work does not own, with minimal reproducers.

Each entry's ``reproduce()`` returns True while the bug is present. The fuzz tests skip (and
count as ``known-bug``) only the inputs an entry's bug covers, and only while
:func:`present` says it still reproduces: once the bug is fixed, the fuzz tests check those
inputs strictly again. ``tests/test_fuzz_findings.py`` runs every reproducer under
``xfail(strict=True)``, so a fix shows up there as an XPASS failure: delete the entry then.
"""

from __future__ import annotations

import math
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


def _ref_no_range():
    import dank_ref

    # eta / (C^2 max|K|) = 1e-180: outside the range, must be a ValueError naming C
    return _raises_unnamed(lambda: dank_ref.solve_svm(np.eye(2), np.array([1.0, -1.0]),
                                                      C=1e60, eta=1e-60, tau=0.0), "C")


def _ref_cluster_labels():
    import dank_ref

    return _accepts(lambda: dank_ref.solve_decomposed(np.eye(2), np.array([1.0, -1.0]),
                                                      [0, None], C=1.0, eta=1.0))


def _svm_cert(**kw):
    from dank_fast import svm_certificate

    args = dict(K=np.eye(2), y=np.array([1.0, -1.0]), alpha=np.array([0.5, 0.5]), C=1.0,
                eta=1.0, tau=0.0)
    args.update(kw)
    return lambda: svm_certificate(args.pop("K"), args.pop("y"), args.pop("alpha"), **args)


def _ref_cert(task="svm", **kw):
    from dank_ref import certificate as rc

    if task == "svm":
        args = dict(K=np.eye(2), y=np.array([1.0, -1.0]), alpha=np.array([0.5, 0.5]), C=1.0,
                    eta=1.0, tau=0.0)
        args.update(kw)
        return lambda: rc.svm_certificate(args.pop("K"), args.pop("y"), args.pop("alpha"),
                                          **args)
    args = dict(K=np.eye(1), y=np.array([0.5]), alpha_hat=np.zeros(1), alpha_check=np.zeros(1),
                C=1.0, epsilon=0.0, eta=1.0, tau=0.0)
    args.update(kw)
    return lambda: rc.svr_certificate(args.pop("K"), args.pop("y"), args.pop("alpha_hat"),
                                      args.pop("alpha_check"), **args)


def _ref_dtype_tolerance():
    # float32: asymmetry 5e-7 max|K| <= 10 u = 1.2e-6 (valid by docs/validity.md), refused
    K = np.eye(2, dtype=np.float32)
    K[0, 1] = np.float32(5e-7)
    return not _accepts(_ref_cert(K=K))


def _project_A_unvalidated():
    from dank_fast import project_A

    return _accepts(lambda: project_A(np.array([np.nan, 1.0]), np.array([1.0, -1.0]), 1.0))


def _ref_feasibility_absolute():
    # C = 1e-20: a violation of 1e-15 is 7e13 times the tolerance 1e-9 C sqrt(2), accepted
    return _accepts(_ref_cert(alpha=np.array([1e-20 + 1e-15, 1e-20]), C=1e-20, project=False))


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
    with mock.patch("sklearn.svm.SVC", Recorder):
        svc_dual(np.outer(x, x), y, 10.0)
    return bool(seen) and seen[0] > 10**6


def _bad_bracket(fn) -> bool:
    """True if ``fn()`` raises anything, or returns a bracket that is not finite or ordered."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c = fn()
    except Exception:
        return True
    return not (math.isfinite(c.lower) and math.isfinite(c.upper) and c.lower <= c.upper)


# in the representable range: C max|K| n = 2e-50, eta / (C^2 max|K|) = 1e50
_EXTREME = dict(K=np.eye(2) * 1e-250, alpha=np.array([1e200, 1e200]), C=1e200, eta=1e100)


KNOWN_BUGS: dict[str, Bug] = {
    "paper-alpha0-unprojected": Bug(
        "dank_fast/_paper.py: paper()",
        "method='paper'/'paper-monotone'/'pgm' evaluate h at the raw alpha0 (documented as "
        "'projected onto A'): a large warm start overflows to IndexError / LinAlgError",
        _paper_alpha0,
    ),
    "svc-warm-start-unbounded": Bug(
        "dank_fast/svm.py: svc_dual() (used by solve_svm(method='auto'), solve_decomposed, "
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
    "certificate-alpha-dtype": Bug(
        "dank_fast/certificate.py: svm_certificate()",
        "alpha is converted with np.asarray(alpha, float64): complex (imaginary part dropped "
        "with a ComplexWarning), strings and booleans are accepted instead of a TypeError",
        lambda: _accepts(_svm_cert(alpha=np.array([0.5, 0.5]) + 1j)),
    ),
    "certificate-extreme-scales": Bug(
        "dank_fast/certificate.py: svm_certificate(), svr_certificate()",
        "computed at the caller's scale (no canonical rescaling as in the solvers, no "
        "representable-range check): d_i d_j overflows once C > ~1e154, giving IndexError or "
        "NaN brackets inside the range (C = 1e200, max|K| = 1e-250, eta = 1e100) and "
        "(-inf, nan) outside it",
        lambda: _bad_bracket(_svm_cert(**_EXTREME)),
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
    "ref-zero-kernel": Bug(
        "dank_ref/_validation.py: check_kernel()",
        "K = 0 is refused ('K is identically zero'); docs/validity.md: K = 0 is valid",
        lambda: not _accepts(_ref_cert(K=np.zeros((2, 2)))),
    ),
    "ref-one-point": Bug(
        "dank_ref/_validation.py: check_kernel()",
        "n = 1 is refused ('at least 2 x 2') for P2 and P3; docs/validity.md: n >= 1",
        lambda: not _accepts(_ref_cert(task="svr")),
    ),
    "ref-dtype-tolerance": Bug(
        "dank_ref/_validation.py: check_kernel()",
        "the symmetry (1e-10) and PSD (1e-8 max|K|, no factor n) tolerances ignore the input "
        "dtype and n: a float32 kernel with asymmetry 5e-7 max|K| (valid) is refused",
        _ref_dtype_tolerance,
    ),
    "ref-kernel-dtype": Bug(
        "dank_ref/_validation.py: check_kernel(), _vector()",
        "arrays are converted with np.asarray(x, float): complex K/y/alpha lose their "
        "imaginary part (ComplexWarning), string arrays are parsed, booleans accepted",
        lambda: _accepts(_ref_cert(K=np.eye(2) + 0j)),
    ),
    "ref-certificate-extreme-scales": Bug(
        "dank_ref/certificate.py: svm_certificate(), svr_certificate(), "
        "decomposed_certificate()",
        "computed at the caller's scale: NaN brackets for in-range instances with C > ~1e154 "
        "(the oracle avoids this by rescaling before calling them; direct callers do not)",
        lambda: _bad_bracket(_ref_cert(**_EXTREME)),
    ),
    "ref-no-range": Bug(
        "dank_ref/svm.py, svr.py, decomposed.py: solve_*() (no representable-range check)",
        "instances outside the representable range are not refused: SCS fails with "
        "SolverError (C = 1e60, eta = 1e-60) or returns status 'inaccurate' (C = 1e-200)",
        _ref_no_range,
    ),
    "ref-cluster-labels": Bug(
        "dank_ref/_validation.py: check_partition()",
        "None in the cluster labels is accepted as a cluster name (docs/validity.md: "
        "ValueError); sets, strings and unhashable values give ValueError/odd messages",
        _ref_cluster_labels,
    ),
    "ref-scalar-types": Bug(
        "dank_ref/_validation.py: check_positive(), check_nonnegative()",
        "float(value) accepts C=True and C='1' (docs/validity.md: not bool, not str)",
        lambda: _accepts(_ref_cert(C=True)),
    ),
    "ref-feasibility-absolute": Bug(
        "dank_ref/certificate.py: _feasibility_check()",
        "project=False tests distance <= 1e-9 max(1, max|alpha|): absolute, not 1e-9 C "
        "sqrt(n); at C = 1e-20 a violation of 1e-15 is accepted",
        _ref_feasibility_absolute,
    ),
}


@cache
def present(key: str) -> bool:
    """Whether the bug ``key`` still reproduces (evaluated once per process)."""
    return bool(KNOWN_BUGS[key].reproduce())


def finite(x) -> bool:
    return isinstance(x, float) and math.isfinite(x)
