"""benchmarks/bench_distribution.py: the draws follow the stated distribution and repeat from
their seed, the reduced matrix behind the bound is the support reduction of ``11' + Gamma``, a
tiny run writes the documented fields (its bad arguments: tests/test_benchmark_args.py).
No timing is asserted."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _scripts import load_script

bench = load_script("benchmarks/bench_distribution.py")
FAMILY_KEYS = {"moons": {"noise"}, "circles": {"noise", "factor"}, "blobs": {"s"},
               "classification": {"n_features", "n_informative", "flip_y", "class_sep"}}


def test_a_draw_depends_only_on_the_seed_and_its_index():
    first = [bench.draw(7, i) for i in range(5)]
    assert first == [bench.draw(7, i) for i in range(5)]
    assert bench.draw(7, 3) == first[3]  # whatever the number of draws
    assert first != [bench.draw(8, i) for i in range(5)]
    assert len({json.dumps(d, sort_keys=True) for d in first}) == 5


def test_draws_respect_the_stated_ranges():
    draws = [bench.draw(seed, i) for seed in (0, 1) for i in range(200)]
    assert {d["family"] for d in draws} == set(bench.FAMILIES)
    for d in draws:
        fam = d["family"]
        assert set(d) & set().union(*FAMILY_KEYS.values()) == FAMILY_KEYS[fam]
        assert isinstance(d["n"], int) and 500 <= d["n"] == d["n_drawn"] <= 4000
        assert 10**-0.5 <= d["sigma_factor"] <= 10**0.3
        assert 0.1 <= d["C"] <= 100
        assert 0.01 <= d["eta_factor"] <= 10**0.5
        if fam == "moons":
            assert 0.1 <= d["noise"] <= 0.4
        elif fam == "circles":
            assert 0.05 <= d["noise"] <= 0.2 and 0.3 <= d["factor"] <= 0.8
        elif fam == "blobs":
            assert 0.2 <= d["s"] <= 1.0
        else:
            assert 5 <= d["n_features"] <= 30
            assert 2 <= d["n_informative"] <= min(10, d["n_features"])
            assert 0 <= d["flip_y"] <= 0.2 and 0.5 <= d["class_sep"] <= 1.5
    # log-uniform n: about half the draws below the geometric mean of 500 and 4000
    below = np.mean([d["n"] < np.sqrt(500 * 4000) for d in draws])
    assert 0.4 < below < 0.6
    # the cap changes n and nothing else
    capped = bench.draw(0, 3, max_n=300)
    assert capped["n"] == 300 and dict(capped, n=bench.draw(0, 3)["n"]) == bench.draw(0, 3)


@pytest.mark.parametrize("family", bench.FAMILIES)
def test_data_are_standardised_with_labels_plus_minus_one(family):
    d = next(bench.draw(3, i, max_n=120) for i in range(100)
             if bench.draw(3, i)["family"] == family)
    X, y = bench.make_data(d)
    assert X.shape[0] == y.size == 120 and set(np.unique(y)) == {-1.0, 1.0}
    if family == "classification":
        assert X.shape[1] == d["n_features"]
    assert np.allclose(X.mean(axis=0), 0, atol=1e-12) and np.allclose(X.std(axis=0), 1)
    X2, y2 = bench.make_data(d)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    K, sigma = bench.kernel(X, d["sigma_factor"])
    assert K.shape == (120, 120) and sigma > 0 and np.allclose(np.diag(K), 1)


def test_reduced_matrix_has_the_nonzero_spectrum_of_11_plus_gamma():
    rng = np.random.default_rng(0)
    n, eta = 30, 0.7
    X = rng.standard_normal((n, 2))
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 2)
    y = np.where(rng.standard_normal(n) > 0, 1.0, -1.0)
    alpha = np.where(rng.random(n) < 0.4, rng.random(n), 0.0)
    d = alpha * y
    full = np.ones((n, n)) + d[:, None] * K * d[None, :] / (4 * eta)
    M = bench.reduced_matrix(K, y, alpha, eta)
    S = np.count_nonzero(alpha)
    assert M.shape == (S + 1, S + 1)
    top = np.sort(np.linalg.eigvalsh(full))[::-1][: S + 1]
    assert np.allclose(np.sort(np.linalg.eigvalsh(M))[::-1], top)
    # every point in the support: no extra direction
    alpha = rng.random(n)
    d = alpha * y
    assert np.allclose(bench.reduced_matrix(K, y, alpha, eta),
                       np.ones((n, n)) + d[:, None] * K * d[None, :] / (4 * eta))


def test_bound_and_summary():
    assert bench.bound(0.1, 0.01) == pytest.approx(0.5)
    assert bench.bound(0.1, 0.5) == pytest.approx(1.6)
    recs = [{"index": i, "family": "blobs", "s": 0.5, "n": 500, "ratio_svc": r, "ratio_bound": b,
             "ratio_svc_own": 2 * r, "ratio_bound_own": 2 * b, "svc_s": 1.0, "eigh_s": 1.0,
             "bound_s": r / b, "model_s": r / 4, "ratio_model": 4.0,
             "svc_rel_gap": 1e-5 * (i + 1), "rel_gap": 1e-7 * (i + 1),
             "status": st} for i, (r, b, st) in enumerate(
                 [(2.0, 0.5, "converged"), (4.0, 1.5, "converged"), (10.0, 3.0, "max_iter"),
                  (6.0, 0.9, "converged")])]
    s = bench.summarise(recs)
    assert s["draws"] == 4 and s["ratio_svc_median"] == pytest.approx(5.0)
    assert s["ratio_svc_p90"] == pytest.approx(np.percentile([2, 4, 10, 6], 90))
    assert s["within_bound"] == 0.5 and s["within_2x_bound"] == 0.75
    assert s["all_certified"] is False and s["uncertified"] == 1
    assert s["worst"]["index"] == 2 and s["worst"]["s"] == 0.5
    assert s["own_ratio_svc_median"] == pytest.approx(10.0) and s["own_within_bound"] == 0.25
    assert s["over_bound"]["draws"] == 2 and s["over_bound"]["bound_5_svc"] == 2
    # the cost model's time: a quarter of DANK's, so b / 4 of the bound (within it for all)
    assert s["model_ratio_svc_median"] == pytest.approx(5.0 / 4)
    assert s["model_within_bound"] == 1.0 and s["ratio_model_median"] == pytest.approx(4.0)
    # the medians of SVC's relative gap and of DANK's certified one
    assert s["svc_rel_gap_median"] == pytest.approx(2.5e-5)
    assert s["rel_gap_median"] == pytest.approx(2.5e-7)


def test_svc_gap_is_the_plain_svm_duality_gap_at_the_best_bias():
    """``svc_gap`` against the gap computed another way: the primal at every breakpoint ``b =
    y_i - g_i`` of the hinge (a convex piecewise-linear function of ``b`` has its minimum at
    one), minus the dual; about 0 for libsvm's dual at a tight tolerance, larger for a
    perturbed feasible point."""
    from sklearn.svm import SVC
    d = bench.draw(3, 2, 120)
    X, y = bench.make_data(d)
    K, _ = bench.kernel(X, d["sigma_factor"])
    C = 2.0
    svc = SVC(kernel="precomputed", C=C, tol=1e-10).fit(K, y)
    a = np.zeros(y.size)
    a[svc.support_] = np.abs(svc.dual_coef_.ravel())

    def brute(a):
        g = K @ (a * y)
        q = float((a * y) @ g)
        hinge = min(float(np.sum(np.maximum(0.0, 1.0 - y * (g + b)))) for b in y - g)
        return (q + C * hinge - a.sum()) / a.sum()

    assert bench.svc_gap(K, y, C, a) == pytest.approx(brute(a), rel=1e-9, abs=1e-12)
    assert abs(bench.svc_gap(K, y, C, a)) < 1e-6
    # move weight between two free points of the same class: feasible and not optimal
    free = np.flatnonzero((a > 1e-3) & (a < C - 1e-3))
    i, j = [k for k in free if y[k] == y[free[0]]][:2]
    b = a.copy()
    b[i] += 0.1 * min(C - a[i], a[j])
    b[j] -= 0.1 * min(C - a[i], a[j])
    assert bench.svc_gap(K, y, C, b) == pytest.approx(brute(b), rel=1e-9)
    assert bench.svc_gap(K, y, C, b) > 10 * abs(bench.svc_gap(K, y, C, a))


def test_draws_over_the_bound_by_the_term_that_binds_and_their_largest_part():
    def rec(ratio_bound, svc_s, eigh_s, parts=None):
        r = {"ratio_bound": ratio_bound, "svc_s": svc_s, "eigh_s": eigh_s}
        if parts is not None:
            ev, nw, rest = parts
            r["profile"] = {"eigen": ev, "direction": nw, "total_s": ev + nw + rest}
        return r
    recs = [rec(0.9, 1.0, 10.0, (5, 1, 1)),       # within its bound: not counted
            rec(1.5, 1.0, 1.0, (1, 3, 1)),        # 3 T_eigh < 4 SVC: judged by 5 SVC
            rec(1.2, 1.0, 10.0, (8, 1, 1)),       # SVC + 3 T_eigh binds
            rec(2.5, 1.0, 4.0 / 3.0, (1, 1, 9)),  # 3 T_eigh = 4 SVC: both terms equal
            rec(1.1, 1.0, 10.0)]                  # over, not profiled
    o = bench.over_bound(recs)
    assert o == {"draws": 4, "bound_5_svc": 2, "bound_svc_3_eigh": 2, "profiled": 3,
                 "largest_part": {"evaluations": 1, "newton_systems": 1, "rest": 1}}
    line = bench._over_line(o)
    assert "4 draws, 2 judged by 5 x SVC, 2 by SVC + 3 T_eigh" in line
    assert "evaluations of F(a) 1, Newton systems 1, the rest 1" in line


def test_cost_model_time_has_no_newton_system_without_free_coordinates():
    d = bench.draw(5, 0, 200)
    X, y = bench.make_data(d)
    K, _ = bench.kernel(X, d["sigma_factor"])
    C = 2.0
    alpha = np.where(np.arange(y.size) % 3 == 0, C, 0.0)  # every coordinate at a bound
    parts = bench.model_time(K, y, alpha, C, 3, 1.0)
    assert parts["evaluation_s"] > 0.0 and parts["newton_system_s"] == 0.0
    alpha[:6] = 0.5 * C  # six inside the box: a Newton system on them
    assert bench.model_time(K, y, alpha, C, 3, 1.0)["newton_system_s"] > 0.0
    assert bench.model_time(K, y, np.zeros(y.size), C, 0, 1.0) == {
        "evaluation_s": 0.0, "newton_system_s": 0.0}


DRAW_FIELDS = {"family", "n", "n_drawn", "sigma", "sigma_factor", "C", "eta", "eta_factor",
               "tau", "data_seed", "svc_s", "svc_times_s", "dank_s", "dank_times_s", "status",
               "rel_gap", "support", "rank_F", "eigh_s", "eigh_size", "bound_s", "ratio_svc",
               "ratio_bound", "check_s", "ratio_svc_own", "ratio_bound_own", "loadavg",
               "model_s", "evaluation_s", "newton_system_s", "ratio_model", "svc_rel_gap"}
SUMMARY_FIELDS = {"draws", "over_bound", "ratio_svc_median", "ratio_svc_p90", "within_bound",
                  "within_2x_bound", "all_certified", "worst", "own_ratio_svc_median",
                  "own_within_bound", "model_ratio_svc_median", "model_within_bound",
                  "ratio_model_median", "svc_rel_gap_median", "rel_gap_median"}
META_FIELDS = {"command", "seed", "date", "machine", "cpu_count", "numpy", "scipy", "code",
               "blas", "loadavg_start", "loadavg_end"}


def test_tiny_run_writes_the_documented_fields(tmp_path, capsys):
    out = tmp_path / "d.json"
    assert bench.main(["--draws", "2", "--max-n", "300", "--seed", "11", "--profile",
                       "--out", str(out)]) == 0
    res = json.loads(out.read_text())
    assert META_FIELDS <= set(res["meta"]) and res["meta"]["seed"] == 11
    assert res["meta"]["code"]["git_head"] != "?" and "--max-n 300" in res["meta"]["command"]
    assert SUMMARY_FIELDS <= set(res["summary"]) and res["summary"]["draws"] == 2
    assert [r["index"] for r in res["draws"]] == [0, 1]
    for r, d in zip(res["draws"], (bench.draw(11, 0, 300), bench.draw(11, 1, 300)),
                    strict=True):
        assert DRAW_FIELDS <= set(r) and all(r[k] == v for k, v in d.items())
        assert r["n"] == 300 and r["tau"] == 0.01 and r["status"] == "converged"
        assert len(r["svc_times_s"]) == 3 and len(r["dank_times_s"]) == 1
        assert r["eigh_size"] == r["support"] + (r["support"] < r["n"])
        assert r["rank_F"] is None or r["rank_F"] >= 1
        assert r["bound_s"] == pytest.approx(bench.bound(r["svc_s"], r["eigh_s"]))
        # the cost model's time: the SVM start, k + 1 evaluations and k Newton systems
        k = r["newton_iter"]
        assert r["evaluation_s"] > 0 and r["newton_system_s"] >= 0
        assert r["model_s"] == pytest.approx(r["svc_s"] + (k + 1) * r["evaluation_s"]
                                             + k * r["newton_system_s"])
        assert r["ratio_model"] == pytest.approx(r["dank_s"] / r["model_s"])
        # profiled exactly when above the bound, with both orderings of the top functions
        assert ("profile" in r) == (r["dank_s"] > r["bound_s"])
        if "profile" in r:
            top = r["profile"]["top"]
            assert len(top["cumulative"]) == bench.TOP_K == len(top["tottime"])
            assert any("solve_svm" in t["function"] for t in top["cumulative"])
    err = capsys.readouterr()
    assert "# seed 11" in err.out and len(err.err.strip().splitlines()) == 2


def test_a_run_without_seed_draws_a_fresh_one_and_prints_it(tmp_path, capsys):
    seeds = []
    for k in range(2):
        out = tmp_path / f"{k}.json"
        assert bench.main(["--draws", "1", "--max-n", "40", "--out", str(out)]) == 0
        seeds.append(json.loads(out.read_text())["meta"]["seed"])
        assert f"# seed {seeds[-1]}" in capsys.readouterr().out
    assert seeds[0] != seeds[1]


@pytest.mark.parametrize("bound_s, profiled", [(1e9, False), (1e-9, True)])
def test_profile_only_for_draws_above_their_bound(monkeypatch, bound_s, profiled):
    monkeypatch.setattr(bench, "bound", lambda svc_s, eigh_s: bound_s)
    rec = bench.run_draw(bench.draw(2, 0, max_n=80), 1, True)
    assert rec["bound_s"] == bound_s and ("profile" in rec) is profiled
    if profiled:
        assert rec["profile"]["total_s"] > 0 and rec["profile"]["svc_start"] > 0
    assert "profile" not in bench.run_draw(bench.draw(2, 0, max_n=80), 1, False)
