"""One result contract for dank_fast and dank_ref (docs/conventions.md).

Every result class has every field of the one table with one meaning, every status is a word
of the one set, both packages warn with a subclass of scikit-learn's ``ConvergenceWarning``
exactly when the answer is not certified, ``max_iter`` and ``n_iter`` count the same thing,
unknown options are refused with the valid ones listed, and the previous names still work for
one release with a ``DeprecationWarning``.
"""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning

import dank_fast
import dank_ref
from dank_fast import FeatureKernel, compute_kernel, solve_decomposed, solve_svm, solve_svr
from dank_fast import _result as fast_result
from dank_fast._methods import METHODS, OPTIONS
from dank_fast.decomposed import DecomposedResult, aggregate_status
from dank_fast.working_set import WorkingSetResult
from dank_ref import _result as ref_result

CONVENTIONS = Path(__file__).resolve().parent.parent / "docs" / "conventions.md"
CLASSES = {"DANKResult": dank_fast.DANKResult, "WorkingSetResult": WorkingSetResult,
           "DecomposedResult": DecomposedResult, "RefResult": dank_ref.RefResult}


def _data(n=24, seed=0):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(-1.5, 1.0, (n // 2, 2)), rng.normal(1.5, 1.0, (n - n // 2, 2))])
    y = np.where(np.arange(n) < n // 2, -1.0, 1.0)
    return X, compute_kernel(X, sigma=1.0), y


def _quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SklearnConvergenceWarning)
        return fn(*args, **kw)


@pytest.fixture(scope="module")
def results():
    """One result of every class and problem shape, named ``class/problem``."""
    X, K, y = _data()
    t = np.sin(X[:, 0])
    idx = np.r_[0:5, 12:17]  # ten points, both classes, for the conic solves
    Ks, ys = K[np.ix_(idx, idx)], y[idx]
    return {
        "DANKResult/P1": _quiet(solve_svm, K, y, C=1.0, eta=5.0),
        "DANKResult/P2": _quiet(solve_svr, K, t, C=1.0, epsilon=0.05, eta=5.0),
        "DANKResult/P1-accelerated-uncertified": _quiet(
            solve_svm, K, y, C=1.0, eta=5.0, method="accelerated", max_iter=2, tol=1e-12),
        "WorkingSetResult/P1": _quiet(solve_svm, FeatureKernel(X, sigma=1.0), y, C=1.0,
                                      eta=5.0),
        "DecomposedResult/P3": _quiet(solve_decomposed, K, y, C=1.0, eta=5.0, n_clusters=2,
                                      X=X, random_state=0, n_jobs=1),
        "RefResult/P1": _quiet(dank_ref.solve_svm, Ks, ys, C=1.0, eta=5.0),
        "RefResult/P2": _quiet(dank_ref.solve_svr, Ks, np.sin(X[idx, 0]), C=1.0, epsilon=0.05,
                               eta=5.0),
        "RefResult/P3": _quiet(dank_ref.solve_decomposed, Ks, ys, np.arange(10) % 2, C=1.0,
                               eta=5.0, method="blocks"),
    }


# ------------------------------------------------------------------------ the one table
def _table(heading: str) -> dict[str, list[str]]:
    """``{first cell: the other cells}`` of the first table after ``heading`` in
    docs/conventions.md, backticks removed."""
    text = CONVENTIONS.read_text(encoding="utf-8")
    rows = {}
    for line in text[text.index(heading):].splitlines()[1:]:
        if rows and not line.startswith("|"):
            break
        if not line.startswith("|") or line.startswith("|---"):
            continue
        cells = [c.strip().replace("`", "") for c in line.strip().strip("|").split("|")]
        rows[cells[0].strip('"')] = cells[1:]
    return rows


def test_both_packages_define_the_same_fields_and_status_words():
    assert fast_result.RESULT_FIELDS == ref_result.RESULT_FIELDS
    assert fast_result.STATUSES == ref_result.STATUSES == dank_ref.STATUSES
    assert fast_result.RENAMED_STATUSES == ref_result.RENAMED_STATUSES
    assert not set(fast_result.RENAMED_STATUSES) & set(fast_result.STATUSES)


def test_conventions_table_is_the_field_list_with_its_meanings():
    table = _table("## Result contract")
    header = table.pop("field")
    assert header[1:] == ["DANKResult / WorkingSetResult", "DecomposedResult", "RefResult"]
    assert list(table) == list(fast_result.RESULT_FIELDS)
    for name, cells in table.items():
        assert cells[0] == fast_result.RESULT_FIELDS[name], name
        assert all(cells[1:]), f"{name}: every class says what it holds"


def test_conventions_status_table_is_the_one_set():
    table = _table("## Status words")
    table.pop("status")
    assert {k: v[0] for k, v in table.items()} == fast_result.STATUSES


@pytest.mark.parametrize("name", list(CLASSES))
def test_every_result_class_derives_from_its_contract_and_has_every_field(name):
    cls = CLASSES[name]
    base = ref_result.SolverResult if name == "RefResult" else fast_result.SolverResult
    assert issubclass(cls, base)
    fields = {f.name for f in dataclasses.fields(cls)}
    missing = [f for f in fast_result.RESULT_FIELDS if f not in fields and not hasattr(cls, f)]
    assert not missing, f"{name} lacks {missing}"


def test_every_result_has_every_field_with_its_meaning(results):
    for key, res in results.items():
        cls, problem = key.split("/", 1)
        assert type(res).__name__ == cls, key
        for f in fast_result.RESULT_FIELDS:
            getattr(res, f)  # present (None where the table says so)
        assert res.status in fast_result.STATUSES, key
        assert res.success == (res.status == "converged"), key
        assert res.value == res.lower <= res.upper, key
        assert res.gap >= 0 and res.rel_gap >= 0 and res.time > 0, key
        assert isinstance(res.message, str) and res.message, key
        assert res.projection_distance >= 0, key
        assert res.certificate is not None, key
        assert res.certificate.lower == res.lower and res.certificate.rel_gap == res.rel_gap
        n = res.alpha.size
        assert np.shape(res.F) == (n, n), key
        if problem.startswith("P2"):
            np.testing.assert_allclose(res.alpha, res.alpha_hat - res.alpha_check)
        else:
            assert res.alpha_hat is None and res.alpha_check is None, key
        assert (res.bias is None) == problem.startswith("P3"), key


def test_method_is_the_method_that_ran_or_none(results):
    assert results["DANKResult/P1"].method == "auto"
    assert results["WorkingSetResult/P1"].method == "working-set"
    assert results["DecomposedResult/P3"].method == "newton"  # "auto": Newton per cluster
    assert results["RefResult/P3"].method == "blocks"
    assert results["RefResult/P1"].method is None  # P1 has no method argument in dank_ref


def test_decomposed_fields_are_the_clusters_combined(results):
    res = results["DecomposedResult/P3"]
    assert list(res.n_iter) == [r.n_iter for r in res.results]
    assert res.projection_distance == pytest.approx(
        np.sqrt(sum(r.projection_distance ** 2 for r in res.results)))
    assert res.certificate.rel_gap == res.rel_gap and "Kbar" in res.message


# ------------------------------------------------------------------------ status words
class _R:
    def __init__(self, status):
        self.status = status


@pytest.mark.parametrize("statuses, rel_gap, expected", [
    (["converged", "converged"], 1e-9, "converged"),
    (["converged", "converged"], 1e-3, "stalled"),  # each certified, the sum not
    (["converged", "stalled", "max_iter"], 1e-3, "max_iter"),
    (["stopped", "stalled"], 1e-3, "stopped"),
    (["converged", "stalled"], 1e-9, "stalled"),
])
def test_decomposed_status_is_a_word_of_the_one_set(statuses, rel_gap, expected):
    got = aggregate_status([_R(s) for s in statuses], rel_gap, 1e-6)
    assert got == expected and got in fast_result.STATUSES


def test_paper_methods_report_the_rule_that_ended_them_and_warn_only_if_uncertified():
    _, K, y = _data(seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SklearnConvergenceWarning)
        res = solve_svm(K, y, C=1.0, eta=1.0, method="paper", eps=1e-2, tol=1e9)
    assert res.status == "stopped" and res.rel_gap <= 1e9 and "<= tol" in res.message
    with pytest.warns(dank_fast.ConvergenceWarning, match="did not certify"):
        res = solve_svm(K, y, C=1.0, eta=1.0, method="pgm", max_iter=3, eps=0.0)
    assert res.status == "max_iter" and res.n_iter == 3 and not res.success


# ------------------------------------------------------------------------ warnings
def test_both_packages_warn_with_a_subclass_of_sklearns_convergence_warning():
    assert issubclass(dank_fast.ConvergenceWarning, SklearnConvergenceWarning)
    assert issubclass(dank_ref.ConvergenceWarning, SklearnConvergenceWarning)
    assert dank_ref.ConvergenceWarning is ref_result.ConvergenceWarning


def test_the_old_warning_name_is_the_new_class_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match="InaccurateSolutionWarning is deprecated"):
        old = dank_ref.InaccurateSolutionWarning
    assert old is dank_ref.ConvergenceWarning
    with pytest.warns(DeprecationWarning, match="use dank_ref.ConvergenceWarning"):
        from dank_ref import InaccurateSolutionWarning  # noqa: F401
    with pytest.warns(DeprecationWarning):
        from dank_ref._result import InaccurateSolutionWarning as old2
    assert old2 is old


def test_importing_dank_ref_does_not_import_sklearn():
    """dank_ref's warning class extends scikit-learn's but is created on first use: the
    oracle's building blocks stay light."""
    code = ("import sys, dank_ref, dank_ref.certificate\n"
            "assert 'sklearn' not in sys.modules, 'sklearn imported'\n"
            "W = dank_ref.ConvergenceWarning\n"
            "import sklearn.exceptions as e\n"
            "assert issubclass(W, e.ConvergenceWarning)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr


def test_an_uncertified_answer_warns_in_every_dank_fast_route():
    X, K, y = _data(seed=2)
    cases = [
        lambda: solve_svm(K, y, C=1.0, eta=5.0, method="accelerated", max_iter=2, tol=1e-14),
        lambda: solve_svm(K, y, C=1.0, eta=5.0, method="newton", max_iter=1, fallback_iter=2,
                          tol=1e-14),
        lambda: solve_svm(K, y, C=1.0, eta=5.0, method="paper", max_iter=3, tol=1e-14),
        lambda: solve_decomposed(K, y, C=1.0, eta=5.0, n_clusters=2, X=X, random_state=0,
                                 method="accelerated", max_iter=2, tol=1e-14, n_jobs=1),
    ]
    for case in cases:
        with pytest.warns(dank_fast.ConvergenceWarning) as rec:
            res = case()
        assert not res.success and res.status in fast_result.STATUSES
        assert all(issubclass(w.category, SklearnConvergenceWarning)
                   for w in rec if "did not certify" in str(w.message))


# ------------------------------------------------------------------------ max_iter, n_iter
def test_newton_max_iter_counts_newton_steps_and_the_fallback_has_its_own_budget():
    _, K, y = _data(seed=3)
    with pytest.warns(dank_fast.ConvergenceWarning):
        res = solve_svm(K, y, C=10.0, eta=1.0, method="newton", max_iter=1, fallback_iter=4,
                        tol=1e-14)
    assert res.n_iter == res.extra["newton_iter"] <= 1
    assert res.extra["accelerated_iter"] <= 4
    assert res.status in ("max_iter", "stalled")
    assert "fallback_iter 4" in res.message
    ok = solve_svm(K, y, C=1.0, eta=5.0, method="newton")
    assert ok.success and ok.n_iter == ok.extra["newton_iter"] <= 100


def test_accelerated_and_paper_n_iter_are_their_iterations():
    _, K, y = _data(seed=4)
    with pytest.warns(dank_fast.ConvergenceWarning):
        acc = solve_svm(K, y, C=1.0, eta=5.0, method="accelerated", max_iter=3, tol=1e-14)
    assert acc.n_iter == 3 and acc.status == "max_iter"
    with pytest.warns(dank_fast.ConvergenceWarning):
        pap = solve_svm(K, y, C=1.0, eta=5.0, method="paper-monotone", max_iter=4, eps=0.0,
                        tol=1e-14)
    assert pap.n_iter == 4 and pap.status == "max_iter"


# ------------------------------------------------------------------------ unknown options
def _listed(message: str) -> list[str]:
    return re.search(r"valid options: ([^;]*)", message).group(1).split(", ")


@pytest.mark.parametrize("method", METHODS)
def test_unknown_options_are_refused_with_the_valid_ones_listed(method):
    _, K, y = _data(n=10, seed=5)
    with pytest.raises(TypeError, match="Unknown solver options") as exc:
        solve_svm(K, y, C=1.0, eta=5.0, method=method, not_an_option=1, maxiter=3)
    msg = str(exc.value)
    assert "maxiter, not_an_option" in msg and f"method={method!r}" in msg
    assert _listed(msg) == list(OPTIONS[method])


def test_svr_and_decomposed_refuse_unknown_options_too():
    X, K, y = _data(n=12, seed=6)
    with pytest.raises(TypeError, match="Unknown solver options for method='accelerated': "
                                        "fallback_iter"):
        solve_svr(K, np.sin(X[:, 0]), C=1.0, epsilon=0.1, eta=5.0, method="accelerated",
                  fallback_iter=3)
    with pytest.raises(TypeError, match="Unknown solver options.*valid options: burst_iter"):
        _quiet(solve_decomposed, K, y, C=1.0, eta=5.0, labels=np.arange(12) % 2, n_jobs=1,
               check_every=2)


def test_the_papers_t_max_points_to_max_iter():
    _, K, y = _data(n=10, seed=7)
    with pytest.raises(TypeError, match="t_max is max_iter"):
        solve_svm(K, y, C=1.0, eta=5.0, method="paper", t_max=5)


def test_every_listed_option_is_accepted():
    _, K, y = _data(n=12, seed=8)
    kw = dict(C=1.0, eta=5.0)
    solve_svm(K, y, method="newton", fallback_iter=50, burst_iter=5, record_history=False, **kw)
    seen = []
    solve_svm(K, y, method="accelerated", check_every=2, record_history=False,
              callback=lambda z, ev: seen.append(z.size), **kw)
    assert seen and set(seen) == {12}
    _quiet(solve_svm, K, y, method="pgm", eps=1e-3, L=None, projection="exact",
           beta_sign="ascent", certify_every=5, record_history=True, **kw)


@pytest.mark.parametrize("method, options", [
    ("accelerated", {"max_iter": 10, "check_every": 7}),
    ("accelerated", {"max_iter": 9, "check_every": 4}),
    ("newton", {"max_iter": 1, "fallback_iter": 0}),
    ("newton", {"max_iter": 2, "fallback_iter": 0}),
])
def test_the_certificate_is_of_the_returned_alpha(method, options):
    """A run stopped between two certificates reports the certificate of the point it
    returns, not of an earlier iterate: the bracket recomputed from scratch at ``alpha``
    is the one reported."""
    _, K, y = _data(40, seed=3)
    kw = dict(C=10.0, eta=2.0, tau=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SklearnConvergenceWarning)
        res = solve_svm(K, y, method=method, tol=1e-14, **kw, **options)
    cert = dank_fast.svm_certificate(K, y, res.alpha, route="dense", **kw)
    assert res.rel_gap > 1e-14  # stopped early, so the last iterate is not certified
    np.testing.assert_allclose([res.lower, res.upper], [cert.lower, cert.upper], rtol=1e-9)
    np.testing.assert_allclose(res.rel_gap, cert.rel_gap, rtol=1e-6)
