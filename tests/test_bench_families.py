"""benchmarks/bench_families.py: the measure of a large solve against its support's dense
decomposition (the paper's scale; the support matrix of benchmarks/_support.py) and the dense
rows the ablation shares (their bad arguments: tests/test_benchmark_args.py). No timing is
asserted."""

from __future__ import annotations

import types

import numpy as np
import pytest
from _scripts import load_script

from dank_fast import compute_kernel

bench = load_script("benchmarks/bench_families.py")
support = load_script("benchmarks/_support.py")


def test_support_bound_decomposes_the_support_matrix_of_the_features():
    rng = np.random.default_rng(1)
    n, sigma, eta = 40, 0.8, 0.5
    X = rng.standard_normal((n, 3))
    y = np.where(rng.standard_normal(n) > 0, 1.0, -1.0)
    alpha = np.where(rng.random(n) < 0.5, rng.random(n), 0.0)
    S = np.flatnonzero(alpha)
    out = bench.support_bound(X, y, alpha, sigma, eta, svc_s=0.5, dank_s=2.0)
    assert out["eigh_size"] == S.size + 1 and out["eigh_s"] > 0
    assert out["ratio_support_bound"] == pytest.approx(2.0 / (0.5 + 3 * out["eigh_s"]))
    # the matrix it decomposes has the nonzero spectrum of 11' + Gamma on all n points
    d = alpha * y
    K = compute_kernel(X, sigma=sigma)
    full = np.ones((n, n)) + d[:, None] * K * d[None, :] / (4 * eta)
    M = support.support_matrix(compute_kernel(X[S], sigma=sigma), d[S], n, eta)
    top = np.sort(np.linalg.eigvalsh(full))[::-1][: S.size + 1]
    assert np.allclose(np.sort(np.linalg.eigvalsh(M))[::-1], top)


def test_dense_problems_set_eta_by_each_rows_rule():
    args = bench.parse_args(["--families", "moons0.2", "--sizes", "120", "--small-eta-sizes",
                             "120", "--C", "1"])
    rows = list(bench.dense_problems(args))
    assert [r.rule for r in rows] == ["svm", "small"]
    svm, small = rows
    assert svm.family == "moons0.2" and svm.C == 1.0 and svm.K.shape == (120, 120)
    assert svm.eta == pytest.approx(float(np.sum(svm.svc.dual_coef_ ** 2)))
    assert small.eta == pytest.approx(svm.eta / args.small_eta_divisor)
    assert bench.eta_label("small", types.SimpleNamespace(small_eta_divisor=100.0)) == (
        "||a_SVC||^2/100")
