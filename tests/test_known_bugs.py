"""Regression tests for the bugs the fuzz and mutation work found (tests/_fuzz_known.py and the
former xfail tests of tests/test_mutation_*.py), where the former xfail test does not already
check the fix strictly. Each test failed before its fix."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dank_fast import solve_svm, solve_svr
from dank_ref import certificate as ref_cert
from dank_ref.validation import check_partition


# --------------------------------------------------------------------------- dank_ref labels
def test_ref_labels_that_differ_only_in_type_are_different_clusters():
    # np.asarray([1, "1"]) is the strings "1", "1": the two clusters were merged
    Kb = ref_cert.block_kernel(np.ones((3, 3)), [1, "1", 1.0])
    np.testing.assert_array_equal(Kb, [[1, 0, 1], [0, 1, 0], [1, 0, 1]])


@pytest.mark.parametrize("labels, codes", [
    ([(0, "x"), (1, "x"), (0, "x")], [0, 1, 0]),  # was: "got shape (3, 2)"
    ([np.inf, 1.0, np.inf], [0, 1, 0]),  # was: "labels contain NaN or inf"
    (np.array([-np.inf, np.inf, -np.inf]), [0, 1, 0]),
    (["b", "a", "b"], [0, 1, 0]),
    (iter([3, 3, 2]), [0, 0, 1]),
])
def test_ref_partition_accepts_any_self_equal_labels(labels, codes):
    out = check_partition(labels, 3)
    np.testing.assert_array_equal(out, codes)


def test_ref_partition_agrees_with_dank_fast_on_which_samples_share_a_cluster():
    from dank_fast._validation import check_cluster_labels

    labels = [1, "1", 1.0, (0, "x"), np.inf, (0, "x"), "1"]
    fast = check_cluster_labels(labels, len(labels))
    same_fast = np.array([[a == b for b in fast] for a in fast])
    ref = check_partition(labels, len(labels))
    np.testing.assert_array_equal(ref[:, None] == ref[None, :], same_fast)


@pytest.mark.parametrize("labels, exc, match", [
    ([np.nan, 1.0], ValueError, "not equal to itself"),
    ([None, 1], ValueError, "None"),
    ("ab", TypeError, "labels must be a 1-D array"),
    ({0, 1}, TypeError, "labels must be a 1-D array"),
    ([[0], [1]], TypeError, "not hashable"),
    (np.zeros((2, 1)), ValueError, "got shape"),
    ([0, 1, 2], ValueError, "length 2"),
])
def test_ref_partition_refuses_unusable_labels(labels, exc, match):
    with pytest.raises(exc, match=match):
        check_partition(labels, 2)


# --------------------------------------------------------------------------- dank_ref scalars
@pytest.mark.parametrize("kw, match", [
    (dict(C=10**400), "C must be a finite number > 0"),
    (dict(eta=10**400), "eta must be a finite number > 0"),
    (dict(tau=10**400), "tau must be a finite number >= 0"),
    (dict(C=-10**400), "C must be a finite number > 0"),
    (dict(C=10**5000), "C must be a finite number > 0"),  # its repr alone raises ValueError
])
def test_ref_integers_beyond_the_float_range_are_named_value_errors(kw, match):
    args = dict(C=1.0, eta=1.0, tau=0.0)
    args.update(kw)
    with pytest.raises(ValueError, match=match):  # was: OverflowError
        ref_cert.svm_certificate(np.eye(2), np.array([1.0, -1.0]), np.array([0.5, 0.5]), **args)


# --------------------------------------------------------------------------- dank_fast PSD test
def test_huge_non_psd_kernel_is_refused_with_a_finite_threshold():
    from dank_fast._validation import check_kernel_matrix

    with pytest.raises(ValueError, match="not positive semi-definite"):  # was: OverflowError
        check_kernel_matrix(np.array([[1.7e308, 0.0], [0.0, -1.7e308]]))


# --------------------------------------------------------------------------- DANKClassifier
@pytest.mark.parametrize("K", [np.eye(3, dtype=bool), np.eye(3).astype(str),
                               np.eye(3).astype(bytes)])
def test_classifier_refuses_boolean_and_string_precomputed_kernels(K):
    from dank_fast import DANKClassifier

    # was: validate_data cast them to float (True -> 1.0, "1.0" -> 1.0) and the fit went ahead
    with pytest.raises(TypeError, match=r"X \(the precomputed kernel\) must be a real numeric"):
        DANKClassifier(kernel="precomputed").fit(K, [0, 1, 1])
    clf = DANKClassifier(kernel="precomputed", eta=1.0).fit(np.eye(3), [0, 1, 1])
    assert clf.results_[0].lower <= clf.results_[0].upper


# --------------------------------------------------------------------------- project_A
def _exact_projection(z, y, C, target=0.0):
    """The nearest point of ``{y'a = target, 0 <= a <= C}`` in rational arithmetic (the root
    of ``phi(lam) = y' clip(z - lam y, 0, C) - target`` on its linear piece)."""
    from fractions import Fraction

    zf = [Fraction(float(v)) for v in z]
    Cf, tf, ys = Fraction(float(C)), Fraction(float(target)), [int(v) for v in y]

    def p_of(lam):
        return [min(max(zi - lam * yi, Fraction(0)), Cf) for zi, yi in zip(zf, ys, strict=True)]

    def phi(lam):
        return sum(yi * pi for yi, pi in zip(ys, p_of(lam), strict=True)) - tf

    br = sorted({zi * yi for zi, yi in zip(zf, ys, strict=True)}
                | {(zi - Cf) * yi for zi, yi in zip(zf, ys, strict=True)})
    if phi(br[0]) <= 0:
        return p_of(br[0])
    if phi(br[-1]) >= 0:
        return p_of(br[-1])
    for a, b in zip(br[:-1], br[1:], strict=True):
        fa, fb = phi(a), phi(b)
        if fa > 0 >= fb:
            return p_of(a + (b - a) * fa / (fa - fb))
    raise AssertionError("no sign change")


@pytest.mark.parametrize("seed", range(3))
def test_project_A_is_exact_with_ties_at_every_scale(seed):
    """Coordinates drawn from a few values (ties within and across classes), up to 1e20 C
    from the box: every coordinate within 1e-12 C of the exact projection (the tied ones used
    to be moved one after another, off by up to C)."""
    from dank_fast import project_A

    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(2, 9))
        y = rng.choice([-1.0, 1.0], size=n)
        C = float(10.0 ** rng.choice([-95, -3, 0, 4]))
        vals = C * 10.0 ** rng.uniform(-1, 20, size=3) * rng.choice([-1.0, 1.0], size=3)
        z = rng.choice(vals, size=n)
        lo, hi = -C * np.sum(y < 0), C * np.sum(y > 0)
        target = float(rng.choice([0.0, lo, hi, rng.uniform(lo, hi)]))
        if target == 0.0 and (lo == 0.0 or hi == 0.0):
            target = 0.0
        p = project_A(z, y, C, target=target)
        q = np.array([float(v) for v in _exact_projection(z, y, C, target)])
        assert p.min() >= 0.0 and p.max() <= C
        np.testing.assert_allclose(p / C, q / C, rtol=0, atol=1e-12,
                                   err_msg=f"z={z!r}, y={y!r}, C={C!r}, target={target!r}")


@pytest.mark.parametrize("args, exc, match", [
    ((np.array([np.nan, 1.0]), [1.0, -1.0], 1.0), ValueError, "z contains NaN"),
    ((np.array([np.inf, 1.0]), [1.0, -1.0], 1.0), ValueError, "z contains NaN"),
    ((np.zeros(0), np.zeros(0), 1.0), ValueError, "z must have at least one entry"),
    ((np.ones((2, 2)), [1.0, -1.0], 1.0), ValueError, "z must be 1-dimensional"),
    ((["1", "2"], [1.0, -1.0], 1.0), TypeError, "z must be"),
    ((np.ones(2), [1.0, 2.0], 1.0), ValueError, "y must contain only -1 and \\+1"),
    ((np.ones(2), [1.0, -1.0, 1.0], 1.0), ValueError, "y has 3 entries but z has 2"),
    ((np.ones(2), [True, False], 1.0), TypeError, "y must be"),
    ((np.ones(2), [1.0, -1.0], -1.0), ValueError, "C must be a finite number > 0"),
    ((np.ones(2), [1.0, -1.0], 0.0), ValueError, "C must be a finite number > 0"),
    ((np.ones(2), [1.0, -1.0], "1"), TypeError, "C must be a real number"),
    ((np.ones(2), [1.0, -1.0], np.nan), ValueError, "C must be a finite number > 0"),
])
def test_project_A_validates_its_input(args, exc, match):
    from dank_fast import project_A

    with pytest.raises(exc, match=match):  # was: NaN / infeasible output, IndexError, ...
        project_A(*args)


@pytest.mark.parametrize("target", [2.5, -1.5, np.nan, "0"])
def test_project_A_refuses_an_unattainable_target(target):
    from dank_fast import project_A

    y = np.array([1.0, 1.0, -1.0])  # y'a ranges over [-1, 2] for C = 1
    with pytest.raises((ValueError, TypeError), match="target"):
        project_A(np.zeros(3), y, 1.0, target=target)
    # the ends are attainable (the extreme points), also within the feasibility tolerance
    np.testing.assert_array_equal(project_A(np.zeros(3), y, 1.0, target=2.0), [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(project_A(np.zeros(3), y, 1.0, target=-1.0 - 1e-12),
                                  [0.0, 0.0, 1.0])


# --------------------------------------------------------------------------- paper(alpha0)
@pytest.mark.parametrize("method", ["paper", "paper-monotone", "pgm"])
def test_paper_methods_start_from_the_feasible_repair_of_alpha0(method):
    """The paper's methods evaluate h first at the warm start made feasible (repair_start),
    not at the raw alpha0: h there is the certified value of that point (was: h at the raw,
    infeasible alpha0; 1e200 entries gave IndexError / LinAlgError)."""
    from dank_fast import solve_svm, svm_certificate
    from dank_fast.projection import repair_start

    rng = np.random.default_rng(3)
    X = rng.normal(size=(8, 2))
    K = np.exp(-0.5 * np.sum((X[:, None] - X[None]) ** 2, axis=-1))
    y = np.array([1.0, -1.0] * 4)
    C = 1.0
    alpha0 = np.array([3.0, -2.0, 0.5, 0.0, 1e200, 0.2, 0.0, 0.7])
    res = solve_svm(K, y, C=C, eta=2.0, tau=0.0, method=method, alpha0=alpha0, max_iter=3)
    start = repair_start(alpha0, y, C)
    h_start = svm_certificate(K, y, start, C=C, eta=2.0, tau=0.0).lower  # tau = 0: exact h
    assert res.history["h"][0] == pytest.approx(h_start, rel=1e-12)
    assert np.isfinite(res.lower) and res.lower <= res.upper


@pytest.mark.parametrize("method", ["paper", "paper-monotone", "pgm"])
def test_paper_methods_accept_a_huge_svr_warm_start(method):
    from dank_fast import solve_svr

    res = solve_svr(np.eye(3), np.array([1.0, -1.0, 1.0]), C=1.0, eta=1.0, tau=0.5,
                    epsilon=0.1, method=method, alpha0=np.array([1e200, -1e200, 1e200]),
                    max_iter=5)
    assert np.isfinite(res.lower) and np.isfinite(res.upper) and res.lower <= res.upper


# --------------------------------------------------------------------------- SVR, K = 0
@pytest.mark.parametrize("method", ["paper", "paper-monotone"])
@pytest.mark.parametrize("C", [1.0, 1e-3, 1e4])
def test_svr_paper_methods_solve_a_zero_kernel(method, C):
    """K = 0: Theorem theorsvr's L is 0 and the printed step 1/(2L) was inf (LinAlgError,
    IndexError, NaN). h is then affine (F does not depend on d), so any L > 0 is valid; with
    the exact projection and the ascent sign the optimum (here y'd = C, ah_3 = C) is certified
    within a few iterations, and the printed variant still returns a finite bracket."""
    import warnings

    from dank_fast import solve_svr

    K, y = np.zeros((3, 3)), np.array([0.0, 0.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve_svr(K, y, C=C, eta=1.0, tau=1.0, epsilon=0.0, method=method, max_iter=20,
                      projection="exact", beta_sign="ascent")
        printed = solve_svr(K, y, C=C, eta=1.0, tau=1.0, epsilon=0.0, method=method,
                            max_iter=20)
    assert r.extra["L"] > 0 and np.isfinite(r.extra["L"])
    # v* = max y'd + eta (n^2 - ||J_{1/2}(11')||^2) = C + (9 - (3 - 1/2)^2)
    v_star = C + 9.0 - 2.5**2
    assert r.lower <= v_star * (1 + 1e-12) and r.upper >= v_star * (1 - 1e-12)
    assert r.gap <= 1e-9 * v_star
    assert np.isfinite(printed.lower) and printed.lower <= printed.upper


# --------------------------------------------------------------------------- K = 0, huge C
_ZERO_K_SCALARS = [(1e155, 1.0), (1e155, 1e-169), (1e300, 1e-300), (1e-300, 1e300),
                   (1e-200, 1e200), (1.0, 1.0)]


def _zero_k_value(C, eta, tau, a, y):
    """h(a) for K = 0 by hand (tau/2 < n): F = J_{tau/2}(11') = (1 - tau/(2n)) 11', so
    ||F - 11'||^2 = tau^2/4, tr F = n - tau/2 and h = 1'a + eta (tau n - tau^2/4)."""
    n = y.size
    return float(np.sum(a)) + eta * (tau * n - tau * tau / 4.0)


@pytest.mark.parametrize("C, eta", _ZERO_K_SCALARS)
@pytest.mark.parametrize("tau", [0.0, 1.0])
def test_zero_kernel_certificates_are_finite_brackets_at_any_scale(C, eta, tau):
    """K = 0 with C = 1e155 (valid: K = 0 is always in range): d_i d_j overflowed, inf * 0 =
    NaN (IndexError / LinAlgError / (nan, nan)). Both packages now bracket h(a), which for
    K = 0 is known in closed form, and the points given are certified, not moved."""
    from dank_fast import svm_certificate, svr_certificate

    y = np.array([-1.0, 1.0, 1.0])
    a = np.array([0.383076436, 0.0, 0.383076436]) * C
    h = _zero_k_value(C, eta, tau, a, y)
    for lo, up in [
        (lambda c: (c.lower, c.upper))(svm_certificate(np.zeros((3, 3)), y, a, C=C, eta=eta,
                                                       tau=tau)),
        (lambda c: (c.lower, c.upper))(ref_cert.svm_certificate(np.zeros((3, 3)), y, a, C=C,
                                                                eta=eta, tau=tau)),
    ]:
        assert np.isfinite(lo) and np.isfinite(up) and lo <= up
        assert lo == pytest.approx(h, rel=1e-12)  # tau = 0 or 1: the lower bound is h(a)
    p3 = ref_cert.decomposed_certificate(np.zeros((3, 3)), y, a, C=C, eta=eta)
    assert np.isfinite(p3.upper) and p3.lower == pytest.approx(float(np.sum(a)), rel=1e-12)
    ah, ac = np.array([C / 2, 0.0, 0.0]), np.array([0.0, C / 2, 0.0])
    yt = np.array([1.0, -1.0, 0.0])
    h2 = C + eta * (tau * 3 - tau * tau / 4.0) - 0.1 * C  # y'd - eps 1'(ah + ac) + inner
    for c in (svr_certificate(np.zeros((3, 3)), yt, ah, ac, C=C, epsilon=0.1, eta=eta, tau=tau),
              ref_cert.svr_certificate(np.zeros((3, 3)), yt, ah, ac, C=C, epsilon=0.1, eta=eta,
                                       tau=tau)):
        assert np.isfinite(c.lower) and np.isfinite(c.upper) and c.lower <= c.upper
        assert c.lower == pytest.approx(h2, rel=1e-12)


# --------------------------------------------------------------------------- plain SVM limit
_X7 = np.array([310.71254466, 1860.75246417, -22.67144402, -309.10095833, -1413.24878229,
                -513.01608223, 2178.7127426])
_Y7 = np.array([1.0, -1.0, -1.0, 1.0, 1.0, 1.0, -1.0])


def test_svc_iteration_limit_scales_with_n():
    from dank_fast.svm import svc_iteration_limit

    assert svc_iteration_limit(7) == 10**6
    assert svc_iteration_limit(10**5) == 10**7


@pytest.mark.parametrize("C", [1e4, 1e6])
def test_auto_is_certified_when_the_plain_svm_hits_its_iteration_limit(C):
    """7 points, linear kernel of scale 4.7e6: libsvm ran for 300 s at C = 1e4 (no limit). Now
    it stops at svc_iteration_limit(7) = 1e6 iterations (well under a second) with a
    ConvergenceWarning, and Newton from its repaired approximate dual is certified."""
    import warnings
    from unittest import mock

    from sklearn.svm import _libsvm as sk_libsvm

    from dank_fast import ConvergenceWarning, solve_svm

    seen = []

    class Recorder:  # scikit-learn's libsvm binding, counting libsvm's iterations
        set_verbosity_wrap = staticmethod(sk_libsvm.set_verbosity_wrap)

        @staticmethod
        def fit(*args, **kwargs):
            out = sk_libsvm.fit(*args, **kwargs)
            seen.append(int(np.max(out[8])))
            return out

    with warnings.catch_warnings(record=True) as caught, \
            mock.patch("dank_fast._libsvm._sk_libsvm", Recorder):
        warnings.simplefilter("always")
        res = solve_svm(np.outer(_X7, _X7), _Y7, C=C, eta=1.0, tau=0.01, tol=1e-6)
    assert seen == [10**6]
    msgs = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert any("iteration limit (1000000" in m for m in msgs), msgs
    assert res.status == "converged" and res.extra["warm_start"] == "svc"
    assert res.lower <= res.upper and res.rel_gap <= 1e-6


def test_well_conditioned_plain_svm_gives_no_warning():
    import warnings

    from dank_fast.svm import svc_dual

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    K = np.exp(-0.5 * np.sum((X[:, None] - X[None]) ** 2, axis=-1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = svc_dual(K, y, 1.0)
    assert abs(float(y @ a)) <= 1e-6 and a.min() >= 0 and a.max() <= 1.0


# --------------------------------------------------------------------------- the reproducers
@pytest.mark.parametrize("key", sorted(__import__("_fuzz_known").FIXED_BUGS))
def test_fixed_fuzz_reproducer_stays_fixed(key):
    """Each minimal reproducer of tests/_fuzz_known.py (formerly xfail(strict=True) in
    tests/test_fuzz_findings.py) must not reproduce its bug."""
    import warnings

    from _fuzz_known import FIXED_BUGS

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # e.g. the plain SVM's iteration-limit warning
        reproduced = FIXED_BUGS[key].reproduce()
    assert not reproduced, FIXED_BUGS[key].summary


# --------------------------------------------------------------------------- P2 relative gap
def _svr_point(n=9, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 1))
    K = np.exp(-0.5 * (X - X.T) ** 2)
    y = np.sin(2 * X[:, 0]) + 0.3
    ah = rng.uniform(0, 1, size=n) * (y > 0.3)
    ac = rng.uniform(0, 1, size=n) * (y <= 0.3)
    ac *= ah.sum() / ac.sum()
    return K, y, ah, ac


@pytest.mark.parametrize("c", [1e-4, 3.0, 1e5])
def test_svr_relative_gap_is_unit_independent_in_both_packages(c):
    """y, C, eps -> c y, c C, c eps and eta -> c^2 eta is the same problem (d -> c d, values
    times c^2): the relative gap must not change (it changed by up to 1/c with the scale
    max(|d'y|, 1'(ah + ac), C), whose terms are not all in the units of the objective)."""
    from dank_fast import svr_certificate

    K, y, ah, ac = _svr_point()
    kw = dict(C=1.0, epsilon=0.05, eta=2.0, tau=0.01)
    kc = dict(C=c, epsilon=0.05 * c, eta=2.0 * c * c, tau=0.01)
    for fn in (svr_certificate, ref_cert.svr_certificate):
        r1 = fn(K, y, ah, ac, **kw)
        rc = fn(K, c * y, c * ah, c * ac, **kc)
        assert r1.gap > 0
        assert rc.gap == pytest.approx(c * c * r1.gap, rel=1e-6)
        assert rc.rel_gap == pytest.approx(r1.rel_gap, rel=1e-6)


def test_svr_relative_gap_scale_is_the_documented_rule():
    """rel_gap = gap / max(|d'y| + eps 1'(ah + ac) + d'(F o K)d, C (max y - min y) / 2) in
    dank_fast, dank_ref and the oracle (docs/MATH.md section 5)."""
    from dank_fast import svr_certificate
    from verification.oracle import certify

    K, y, ah, ac = _svr_point()
    kw = dict(C=1.0, epsilon=0.05, eta=2.0, tau=0.01)
    ref = ref_cert.svr_certificate(K, y, ah, ac, **kw)
    d = ah - ac
    q = float(d @ ((np.asarray(ref.F) * K) @ d))
    scale = max(abs(d @ y) + 0.05 * (ah.sum() + ac.sum()) + q, 0.5 * (y.max() - y.min()))
    assert scale > 0.5 * (y.max() - y.min())  # the sum, not the floor, is tested here
    assert ref.rel_gap == pytest.approx(ref.gap / scale, rel=1e-10)
    assert svr_certificate(K, y, ah, ac, **kw).rel_gap == pytest.approx(ref.gap / scale,
                                                                        rel=1e-8)
    inst = dict(task="svr", K=K, y=y, n=y.size, C=1.0, eta=2.0, tau=0.01, epsilon=0.05)
    rep = certify(inst, dict(task="svr", alpha_hat=ah, alpha_check=ac), tol=1e-6,
                  reference=False)
    assert rep["scale"] == pytest.approx(scale, rel=1e-10)
    # a* = 0 (every target inside the tube): the floor C (max y - min y) / 2
    yt = np.linspace(-0.02, 0.03, y.size)
    z = np.zeros(y.size)
    for cert in (svr_certificate(K, yt, z, z, **kw), ref_cert.svr_certificate(K, yt, z, z, **kw)):
        assert cert.gap == 0.0 and cert.rel_gap == 0.0
    rep = certify(dict(inst, y=yt), dict(task="svr", alpha_hat=z, alpha_check=z), tol=1e-6,
                  reference=False)
    assert rep["scale"] == pytest.approx(0.025, rel=1e-12)


def test_svr_relative_gap_with_a_zero_scale():
    """Constant targets, d = 0 and eps = 0: the P2 scale is 0 (no floor C any more), and so is
    the gap; every package reports rel_gap 0 (the oracle divided by 0: ZeroDivisionError)."""
    from dank_fast import svr_certificate
    from verification.oracle import certify

    K, y = np.array([[0.0158]]), np.array([-0.13])
    ah = ac = np.array([0.0288])
    kw = dict(C=1.0, epsilon=0.0, eta=1.0, tau=0.0)
    for cert in (svr_certificate(K, y, ah, ac, **kw), ref_cert.svr_certificate(K, y, ah, ac, **kw)):
        assert cert.gap == 0.0 and cert.rel_gap == 0.0
    inst = dict(task="svr", K=K, y=y, n=1, C=1.0, eta=1.0, tau=0.0, epsilon=0.0)
    rep = certify(inst, dict(task="svr", alpha_hat=ah, alpha_check=ac), tol=1e-9,
                  reference=False)
    assert rep["certified"] and rep["rel_gap"] == 0.0


# --------------------------------------------------------------- K = 0 with extreme C / eta
# With K = 0, F(a) = J_{tau/2}(11') for every a: a* does not depend on eta, and the solvers work
# at eta' = C, then certify at the true eta (dank_fast._scaling.recertify_zero_kernel). Before,
# C = 1e155 with eta = 1e-169 gave max_iter with rel. gap 1e137 (auto) or LinAlgError (paper).
_ZERO_K_SCALES = [(1e155, 1e-169), (1e-300, 1e300), (1e300, 1e-300), (1e140, 1e-140), (1.0, 1e-300)]


@pytest.mark.parametrize("C, eta", _ZERO_K_SCALES)
@pytest.mark.parametrize("method", ["auto", "newton", "accelerated"])
def test_zero_kernel_svm_extreme_scales_are_certified(C, eta, method):
    from dank_ref import certificate as rc

    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    K = np.zeros((5, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve_svm(K, y, C=C, eta=eta, tau=0.01, method=method)
    assert r.status == "converged" and r.rel_gap <= 1e-6
    assert np.isfinite(r.lower) and r.lower <= r.upper
    # max 1'a over A with K = 0: the minority class (2 points) at C, the majority matching it
    assert r.alpha.sum() == pytest.approx(4 * C, rel=1e-9)
    ref = rc.svm_certificate(K, y, r.alpha, C=C, eta=eta, tau=0.01)
    assert ref.lower == pytest.approx(r.lower, rel=1e-9)


@pytest.mark.parametrize("C, eta", _ZERO_K_SCALES)
@pytest.mark.parametrize("method", ["newton", "accelerated"])
def test_zero_kernel_svr_extreme_scales_are_certified(C, eta, method):
    y = np.array([0.0, 1.0, 2.0, 3.0, 5.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve_svr(np.zeros((5, 5)), y, C=C, epsilon=0.1, eta=eta, method=method)
    assert r.status == "converged" and r.rel_gap <= 1e-6
    assert np.isfinite(r.lower) and r.lower <= r.upper
    # K = 0: the LP max d'y - eps 1'|d|, 1'd = 0, |d| <= C pairs the largest and smallest
    # targets: d = C (-1, -1, 0, 1, 1) gives (3 + 5 - 0 - 1) C - 4 eps C
    d = r.extra["alpha_hat"] - r.extra["alpha_check"]
    assert d @ y - 0.1 * np.abs(d).sum() == pytest.approx(6.6 * C, rel=1e-9)


@pytest.mark.parametrize("C, eta", _ZERO_K_SCALES)
def test_zero_kernel_decomposed_extreme_scales_are_certified(C, eta):
    """P3 with K = 0 (tau = 0): h(a) = 1'a, whatever eta; the box optimum is a = C."""
    from dank_fast import solve_decomposed

    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve_decomposed(np.zeros((5, 5)), y, C=C, eta=eta, labels=[0, 0, 1, 1, 1])
    assert r.status == "converged" and r.eta == eta
    np.testing.assert_allclose(r.alpha, C, rtol=1e-9)
    assert r.certificate.lower == pytest.approx(5 * C, rel=1e-9)
    assert r.certificate.lower <= r.certificate.upper


def test_feature_svc_warm_start_is_iteration_limited():
    """The SVC warm start on features (working-set route, DANKClassifier above 1 GiB of kernel)
    goes through svc_dual's iteration limit: libsvm stops and warns instead of running on."""
    from unittest import mock

    from dank_fast import ConvergenceWarning, FeatureKernel
    from dank_fast.svm import svc_dual

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=60) > 0, 1.0, -1.0)
    with mock.patch("dank_fast._libsvm.svc_iteration_limit", lambda n: 3):
        with pytest.warns(ConvergenceWarning, match="iteration limit"):
            a = svc_dual(FeatureKernel(X, kernel="linear"), y, 1e4)
        with pytest.warns(ConvergenceWarning, match="iteration limit"):
            r = solve_svm(FeatureKernel(X, kernel="linear"), y, C=1.0, eta=1.0)
    assert a.shape == (60,) and np.all((a >= 0) & (a <= 1e4))
    assert r.status == "converged" and r.lower <= r.upper
