"""Working sets (dank_fast/working_set.py): contracts that mutation testing found unchecked.

The bookkeeping of :func:`solve_svm_working_set` (the warm start it reports, rounds numbered
from 1, ``n_iter`` the total of every round's Newton steps) and the seeding of the first
working set when the start has no support (benchmarks/MUTATION.md).
"""

from __future__ import annotations

import numpy as np
import pytest

from dank_fast import FeatureKernel
from dank_fast.working_set import solve_svm_working_set


def _moons(n, seed):
    from sklearn.datasets import make_moons

    X, y01 = make_moons(n, noise=0.3, random_state=seed)
    X = (X - X.min(0)) / (X.max(0) - X.min(0))
    return X, 2.0 * y01 - 1.0


@pytest.fixture(scope="module")
def problem():
    X, y = _moons(120, seed=5)
    return FeatureKernel(X, sigma=0.3), y


def test_bookkeeping_of_rounds_and_warm_start(problem):
    """Without ``alpha0`` the start is scikit-learn's SVC ("svc"); rounds are numbered 1, 2, ...
    and ``n_iter`` is the sum of the Newton steps of every round."""
    kernel, y = problem
    res = solve_svm_working_set(kernel, y, C=1.0, eta=5.0, tau=0.01, tol=1e-8)
    assert res.status == "converged" and res.rel_gap <= 1e-8
    assert res.extra["warm_start"] == "svc"
    assert [r["round"] for r in res.rounds] == list(range(1, len(res.rounds) + 1))
    assert res.n_iter == sum(r["newton"] for r in res.rounds)
    assert res.n_iter >= len(res.rounds)
    last = res.rounds[-1]
    assert last["rel_gap"] == res.rel_gap and last["W"] >= last["support"] >= 2
    # the certificate's own fields: feasible point, the bias inside its optimal interval
    cert = res.certificate
    assert 0.0 <= cert.infeasibility <= 1e-9
    lo, hi = cert.bias_interval
    assert lo <= res.bias <= hi
    assert 0.0 < res.time < 600.0


def test_uncertified_result_warns(problem):
    """One round cannot reach a relative gap of 1e-15: the result says so and a
    ConvergenceWarning names the tolerance."""
    from dank_fast._accelerated import ConvergenceWarning

    kernel, y = problem
    with pytest.warns(ConvergenceWarning, match="did not certify tol=1e-15"):
        res = solve_svm_working_set(kernel, y, C=1.0, eta=5.0, tau=0.01, tol=1e-15,
                                    max_rounds=1, max_iter=2)
    assert res.status != "converged" and len(res.rounds) == 1


def test_start_without_support_seeds_both_classes(problem):
    """``alpha0 = 0`` (no support vector): the first working set is seeded with points of both
    classes and the problem is still solved and certified; the warm start is "given"."""
    kernel, y = problem
    res = solve_svm_working_set(kernel, y, C=1.0, eta=5.0, tau=0.01, tol=1e-8,
                                alpha0=np.zeros(y.size))
    assert res.extra["warm_start"] == "given"
    assert res.status == "converged" and res.rel_gap <= 1e-8
    assert res.rounds[0]["W"] >= 2
    ref = solve_svm_working_set(kernel, y, C=1.0, eta=5.0, tau=0.01, tol=1e-8)
    assert res.lower <= ref.upper + 1e-9 * abs(ref.upper)
    assert ref.lower <= res.upper + 1e-9 * abs(ref.upper)
