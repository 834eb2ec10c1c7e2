"""Planted cases: each claim check reports VIOLATED for a false bound, HOLDS for the true one."""

import numpy as np
import pytest

from verification.study.claims import reproduce
from verification.study.claims._common import gaussian_kernel, grad_svr, h_svr, structured_instances
from verification.study.claims.bounds import check_bound
from verification.study.claims.decomposition import check_decomposition, decomposition_instance
from verification.study.claims.nesterov import check_NR, check_SD


def _gauss_instance(seed=0, n=10, tau=0.01, eta=5.0, C=1.0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 1, (n, 2))
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    return dict(X=X, K=gaussian_kernel(X, 0.5), y=y, C=C, eta=eta, tau=tau, epsilon=0.05,
                kernel="gaussian", sigma=0.5, kernel_scale=1.0)


@pytest.mark.parametrize("claim,false_scale", [("L1", 0.05), ("HW", 0.5), ("L2", 1e-3),
                                               ("T1", 1e-3), ("PG", 1e-3), ("L3", 1e-3),
                                               ("T2", 1e-3)])
def test_bound_planted(claim, false_scale, tmp_path):
    inst = [_gauss_instance(1)]
    ok = check_bound(claim, np.random.default_rng(0), budget=1, scale=1.0, instances=inst)
    assert ok.status == "HOLDS", ok
    bad = check_bound(claim, np.random.default_rng(0), budget=1, scale=false_scale,
                      instances=inst, out_dir=str(tmp_path))
    assert bad.status == "VIOLATED"
    assert bad.counterexample_path is not None
    c, lhs, rhs, still = reproduce(bad.counterexample_path)
    assert c == claim and still and lhs > rhs


def test_pg_violated_by_non_normalised_kernel():
    """PG's constant misses kappa: a kernel scaled by 10 breaks it (a finding)."""
    rng = np.random.default_rng(0)
    insts = [i for i in structured_instances(rng) if i["kernel_scale"] == 10.0]
    v = check_bound("PG", rng, budget=1, instances=insts)
    assert v.status == "VIOLATED" and v.worst_ratio > 1.5


def test_svr_gradient_finite_difference():
    inst = _gauss_instance(2, n=6, tau=0.3)
    rng = np.random.default_rng(3)
    K, y = inst["K"], rng.normal(size=6)
    ah, ac = rng.uniform(0, 1, 6), rng.uniform(0, 1, 6)
    g = grad_svr(K, y, ah, ac, 0.1, 2.0, 0.3)
    e = 1e-6
    for i in range(12):
        d = np.zeros(12)
        d[i] = e
        hp = h_svr(K, y, ah + d[:6], ac + d[6:], 0.1, 2.0, 0.3)
        hm = h_svr(K, y, ah - d[:6], ac - d[6:], 0.1, 2.0, 0.3)
        assert abs((hp - hm) / (2 * e) - g[i]) < 1e-5 * max(1, abs(g[i]))


def test_decomposition_planted():
    rng = np.random.default_rng(5)
    inst = decomposition_instance(rng, n=12)
    inst["v"] = 2
    t3, t4 = check_decomposition(rng, instances=[inst], scale_T3=1e6, scale_T4=1.0)
    assert t3.status == "HOLDS"
    # the rule as printed never screens anything: nothing tested, and said so
    assert t4.status == "VACUOUS" and t4.n_premise_met == 0 and "never" in t4.vacuity
    t3b, t4b = check_decomposition(rng, instances=[inst], scale_T3=1e-6, scale_T4=0.0)
    assert t3b.status == "VIOLATED"
    # scale 0: the rule reduces to "abar_i = 0 and grad_i <= 0", i.e. every sub-problem
    # non-support vector; some of these are support vectors of the full problem here (seed 5)
    assert t4b.status == "VIOLATED"


def test_nr_planted():
    inst = [_gauss_instance(4, n=8)]
    ok, printed = check_NR(np.random.default_rng(0), budget=1, instances=inst)
    assert ok.status == "HOLDS"
    bad, _ = check_NR(np.random.default_rng(0), budget=1, instances=inst, scale=1e-6)
    assert bad.status == "VIOLATED"


def test_sd_planted():
    inst = [_gauss_instance(6, n=6)]
    (ok,) = check_SD(np.random.default_rng(0), instances=inst)
    assert ok.status == "HOLDS"
    (bad,) = check_SD(np.random.default_rng(0), instances=inst, scale=-1.0)
    # a negative planted bound fails, but only as a degenerate (rhs <= 0) violation
    assert bad.status == "VIOLATED-DEGENERATE" and bad.n_degenerate == 1
    assert bad.n_violations == 0 and bad.degenerate_counterexample_path is None  # no out_dir
