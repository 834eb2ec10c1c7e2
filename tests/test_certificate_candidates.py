"""What a certificate accepts as a candidate, in both packages.

A candidate must be a finite real array of the right shape, feasible to ``1e-9 C sqrt(n)``
(docs/validity.md; dank_ref projects it first unless ``project=False``); each kind of
infeasibility is reported in its field, errors name the parameter, and the two packages'
brackets at the same point must overlap (fuzz tests over malformed and extreme input).
References are computed here from the definitions (dense ``numpy.linalg.eigh``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _fuzz_inputs import (
    bad_params,
    kernels,
    nonneg_scalars,
    pm1_labels,
    positive_scalars,
    real_targets,
)
from _fuzz_rule import (
    EITHER,
    VALUE,
    Verdict,
    kernel_rule,
    labels_rule,
    range_rule,
    real_array_rule,
    scalar_rule,
    targets_rule,
)
from _fuzz_run import assert_bracket, assert_overlap, call, fuzz, ref_bracket
from hypothesis import given
from hypothesis import strategies as st

from dank_fast import compute_kernel, svm_certificate, svr_certificate
from dank_fast.certificate import certify_box, certify_svm, certify_svr
from dank_fast.inner import KernelData, inner_minimiser
from dank_ref import certificate as refcert


def blob_kernel(n, seed, shift=1.0):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, 2)) + shift * y[:, None]
    return compute_kernel(X, sigma=1.0), y


def _pairs(n, C):
    """``a = 0.4 C``, labels alternating (n even): y'a = 0 exactly."""
    return np.full(n, 0.4 * C), np.where(np.arange(n) % 2 == 0, 1.0, -1.0)


def _violations(a, C, e):
    """One candidate per constraint of A, each violated by exactly ``e`` (pairs keep y'a)."""
    out = {}
    b = a.copy()
    b[0] += e
    out["equality"] = b
    b = a.copy()
    b[0] = b[1] = -e
    out["negative"] = b
    b = a.copy()
    b[0] = b[1] = C + e
    out["above C"] = b
    return out


@pytest.mark.parametrize("C", [1e-3, 1.0, 7.0])
def test_certificate_reports_each_kind_of_infeasibility(C):
    """``Certificate.infeasibility = max(|y'a|, -min a, max a - C)`` of the certified point."""
    n = 8
    K, _ = blob_kernel(n, 0)
    a, y = _pairs(n, C)
    delta = 0.25 * 1e-9 * C * math.sqrt(n)
    kd = KernelData(K)
    for what, b in _violations(a, C, delta).items():
        cert = svm_certificate(K, y, b, C=C, eta=1.0, tau=0.01)
        assert cert.infeasibility == pytest.approx(delta, rel=1e-6), what
        inner = inner_minimiser(kd, b * y, 1.0, 0.01)
        direct = certify_svm(kd, y, b, C, 1.0, 0.01, inner)
        assert direct.infeasibility == pytest.approx(delta, rel=1e-6), what
    assert svm_certificate(K, y, a, C=C, eta=1.0, tau=0.01).infeasibility == 0.0


@pytest.mark.parametrize("C", [1e-3, 1.0, 7.0])
def test_svr_and_box_certificates_report_infeasibility(C):
    n = 6
    K, _ = blob_kernel(n, 2)
    y = np.linspace(-1.0, 1.0, n)
    kd = KernelData(K)
    ah = np.full(n, 0.2 * C)
    e = 1e-11 * C
    cases = {
        "sum": (ah + np.r_[e, np.zeros(n - 1)], ah.copy()),
        "negative": (np.r_[-e, ah[1:]], np.r_[-e, ah[1:]]),
        "above C": (np.r_[C + e, ah[1:]], np.r_[C + e, ah[1:]]),
    }
    for what, (h, c) in cases.items():
        z = np.concatenate([h, c])
        inner = inner_minimiser(kd, h - c, 2.0, 0.01)
        cert = certify_svr(kd, y, z, C, 2.0, 0.01, 0.1, inner)
        assert cert.infeasibility == pytest.approx(e, rel=1e-6), what
    # P3: box only (y'a is not a constraint)
    ys = np.where(np.arange(n) % 3 == 0, 1.0, -1.0)
    for b, expected in [(ah, 0.0), (np.r_[-e, ah[1:]], e), (np.r_[C + e, ah[1:]], e)]:
        inner = inner_minimiser(kd, b * ys, 2.0, 0.0)
        cert = certify_box(kd, ys, b, C, 2.0, inner)
        assert cert.infeasibility == pytest.approx(expected, rel=1e-6)
        assert math.isnan(cert.bias) and cert.bias_interval == (0.0, 0.0)


@pytest.mark.parametrize("C, n", [(4.0, 16), (0.01, 10)])
def test_feasibility_tolerance_is_1e9_C_sqrt_n_inclusive(C, n):
    """docs/validity.md: accepted iff max violation <= 1e-9 C sqrt(n) (each constraint)."""
    K, _ = blob_kernel(n, 4)
    a, y = _pairs(n, C)
    tol = 1e-9 * C * math.sqrt(n)
    for scale, ok in [(0.9, True), (1.1, False)]:
        for b in _violations(a, C, scale * tol).values():
            if ok:
                svm_certificate(K, y, b, C=C, eta=1.0, tau=0.0)
            else:
                with pytest.raises(ValueError, match="not feasible"):
                    svm_certificate(K, y, b, C=C, eta=1.0, tau=0.0)


def test_feasibility_boundary_exactly_at_the_tolerance_is_accepted():
    K, y = blob_kernel(4, 6)
    tol = 1e-9 * 1.0 * math.sqrt(4)  # 2e-9, exactly representable as twice 1e-9
    a = np.array([0.5, 0.5, 0.0, -tol])  # y = (+, -, +, -): y'a = tol, min a = -tol
    cert = svm_certificate(K, y, a, C=1.0, eta=1.0, tau=0.0)
    assert cert.infeasibility == tol


def test_float32_candidate_is_checked_in_double_precision():
    """float32(0.1) exceeds C = 0.1 by 1.5e-9 > 1e-9 C sqrt(2)."""
    K = np.eye(2)
    y = np.array([1.0, -1.0])
    a = np.array([0.1, 0.1], dtype=np.float32)
    with pytest.raises(ValueError, match="not feasible"):
        svm_certificate(K, y, a, C=0.1, eta=1.0, tau=0.0)


@pytest.mark.parametrize("C, n", [(4.0, 16), (0.01, 9)])
def test_svr_feasibility_tolerance_each_constraint(C, n):
    K, _ = blob_kernel(n, 7)
    y = np.linspace(-1.0, 2.0, n)
    ah = np.full(n, 0.3 * C)
    tol = 1e-9 * C * math.sqrt(n)
    kw = dict(C=C, epsilon=0.1, eta=1.0, tau=0.0)
    for scale, ok in [(0.9, True), (1.1, False)]:
        e = scale * tol
        variants = [
            (ah + np.r_[e, np.zeros(n - 1)], ah),  # 1'(ah - ac) = e
            (np.r_[-e, ah[1:]], np.r_[-e, ah[1:]]),  # negative entries, sum kept
            (np.r_[C + e, ah[1:]], np.r_[C + e, ah[1:]]),  # above C, sum kept
        ]
        for h, c in variants:
            if ok:
                svr_certificate(K, y, h, c, **kw)
            else:
                with pytest.raises(ValueError, match="not feasible"):
                    svr_certificate(K, y, h, c, **kw)
    # exactly at the tolerance: accepted
    e = 1e-9 * 1.0 * math.sqrt(4)
    K4, _ = blob_kernel(4, 9)
    svr_certificate(K4, np.ones(4), np.array([e, 0, 0, 0]), np.zeros(4), C=1.0, epsilon=0.0,
                    eta=1.0, tau=0.0)


@pytest.mark.parametrize("kwargs, name", [
    (dict(C=0.0), "C"), (dict(eta=-1.0), "eta"), (dict(tau=-0.1), "tau"),
])
def test_svm_certificate_errors_name_the_parameter(kwargs, name):
    K, y = blob_kernel(4, 0)
    kw = dict(C=1.0, eta=1.0, tau=0.0) | kwargs
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        svm_certificate(K, y, np.zeros(4), **kw)


def test_svm_certificate_label_length_must_match_the_kernel():
    K, y = blob_kernel(4, 0)
    with pytest.raises(ValueError, match="3 entries but K has 4 rows"):
        svm_certificate(K, y[:3], np.zeros(3), C=1.0, eta=1.0, tau=0.0)


@pytest.mark.parametrize("kwargs, name", [
    (dict(C=0.0), "C"), (dict(eta=-1.0), "eta"), (dict(tau=-0.1), "tau"),
    (dict(epsilon=-1.0), "epsilon"),
])
def test_svr_certificate_errors_name_the_parameter(kwargs, name):
    K, _ = blob_kernel(4, 0)
    kw = dict(C=1.0, eta=1.0, tau=0.0, epsilon=0.1) | kwargs
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        svr_certificate(K, np.ones(4), np.zeros(4), np.zeros(4), **kw)


def test_svr_certificate_array_errors_name_the_array():
    K, _ = blob_kernel(4, 0)
    kw = dict(C=1.0, eta=1.0, tau=0.0, epsilon=0.1)
    z = np.zeros(4)
    with pytest.raises(ValueError, match=r"^y must be 1-dimensional"):
        svr_certificate(K, np.ones((4, 1)), z, z, **kw)
    with pytest.raises(ValueError, match=r"^y contains NaN"):
        svr_certificate(K, np.r_[np.nan, 0, 0, 0], z, z, **kw)
    with pytest.raises(ValueError, match=r"^alpha_hat contains NaN"):
        svr_certificate(K, np.ones(4), np.r_[np.nan, 0, 0, 0], z, **kw)
    with pytest.raises(ValueError, match=r"^alpha_check contains NaN"):
        svr_certificate(K, np.ones(4), z, np.r_[np.nan, 0, 0, 0], **kw)
    with pytest.raises(ValueError, match=r"^alpha_hat must be 1-dimensional"):
        svr_certificate(K, np.ones(4), np.zeros((4, 1)), z, **kw)
    with pytest.raises(ValueError, match=r"^alpha_check must be 1-dimensional"):
        svr_certificate(K, np.ones(4), z, np.zeros((4, 1)), **kw)
    with pytest.raises(ValueError, match="shape of y"):
        svr_certificate(K, np.ones(4), np.zeros(3), z, **kw)
    with pytest.raises(ValueError, match="shape of y"):
        svr_certificate(K, np.ones(4), z, np.zeros(3), **kw)


# fuzz: both packages on malformed and extreme candidates


FEAS = 1e-9


@st.composite
def candidates(draw, n: int, C: float, e, *, good: bool = True, box_only: bool = False):
    """A candidate dual vector of length ``n`` for the constraint normal ``e``.

    ``good``: exactly feasible (dank_ref's projection of a random vector: independent code),
    or feasible up to a violation well inside the tolerance; otherwise violations far outside
    it, NaN, wrong shapes and dtypes.
    """
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    z = rng.normal(size=n) * C * float(10.0 ** draw(st.floats(-1, 1)))
    if box_only:
        a = np.clip(z, 0.0, C)
    else:
        a, _ = refcert.project_box_hyperplane(z, np.asarray(e, dtype=float), C)
    tol = FEAS * C * math.sqrt(n)
    if good:
        if draw(st.booleans()):
            a = a.copy()
            i = draw(st.integers(0, n - 1))
            a[i] = a[i] + draw(st.sampled_from([-0.1, 0.1])) * tol if 0 < a[i] < C else a[i]
        return a
    kind = draw(st.sampled_from(["negative", "above", "equality", "nan", "inf", "short",
                                 "2d", "complex", "bool", "str", "object", "none"]))
    a = a.copy()
    if kind == "negative":
        a[draw(st.integers(0, n - 1))] = -100 * tol
    elif kind == "above":
        a[draw(st.integers(0, n - 1))] = C + 100 * tol
    elif kind == "equality":
        if box_only:
            a[0] = -C
        else:
            a = a + 100 * tol * np.sign(np.asarray(e, dtype=float)) / max(1, n)
            a = np.clip(a, 0.0, C)
            if abs(float(np.asarray(e, dtype=float) @ a)) <= 10 * tol:
                a[0] = C + 100 * tol
    elif kind in ("nan", "inf"):
        a[draw(st.integers(0, n - 1))] = np.nan if kind == "nan" else np.inf
    elif kind == "short":
        a = a[:-1]
    elif kind == "2d":
        a = a[:, None]
    elif kind == "complex":
        a = a + 0j
    elif kind == "bool":
        a = a > 0
    elif kind == "str":
        a = a.astype(str)
    elif kind == "object":
        a = a.astype(object)
    else:
        a = None
    return a


def alpha_rule(alpha, name: str, n: int, C: float | None, e=None) -> Verdict:
    """docs/validity.md: a real finite 1-D array of length n, feasible to 1e-9 C sqrt(n)
    (within a factor 2 of the tolerance: either outcome). ``C = None``: the instance itself is
    invalid, only the kind and shape of ``alpha`` are judged."""
    v = Verdict()
    f = real_array_rule(alpha, name, 1, v)
    if f is None:
        return v
    if f.shape != (n,):
        v.add(name, VALUE)
        return v
    if C is None:
        return v
    viol = max(float(-f.min()), float(f.max() - C), 0.0) if n else 0.0
    if e is not None:
        viol = max(viol, abs(float(np.asarray(e, dtype=float) @ f)))
    tol = FEAS * C * math.sqrt(n)
    if viol > 2 * tol:
        v.add(name, VALUE)
    elif viol > 0.5 * tol:
        v.unsure(name)
    return v


def _ok_scalars(C, eta):
    return scalar_rule(C, "C", "pos").valid and scalar_rule(eta, "eta", "pos").valid


def _range_verdict(Ks, C, eta, n) -> Verdict:
    """The representable range, when ``K``, ``C`` and ``eta`` are each valid."""
    if Ks is None or not _ok_scalars(C, eta):
        return Verdict()
    return range_rule(float(C), float(eta), float(np.max(np.abs(Ks))), n)


@fuzz(60)
@given(data=st.data())
def test_fuzz_svm_certificate(data):
    """dank_fast.svm_certificate, cross-checked with dank_ref's certificate at the same point."""
    bad = data.draw(bad_params("K", "y", "C", "eta", "tau", "alpha", "route"))
    K = data.draw(kernels(good="K" not in bad), label="K")
    vK, Ks = kernel_rule(K)
    n = Ks.shape[0] if Ks is not None else data.draw(st.integers(2, 6))
    y = data.draw(pm1_labels(n, good="y" not in bad), label="y")
    C = data.draw(positive_scalars(good="C" not in bad), label="C")
    eta = data.draw(positive_scalars(good="eta" not in bad), label="eta")
    tau = data.draw(nonneg_scalars(good="tau" not in bad), label="tau")
    route = data.draw(st.sampled_from(["Dense", "x", None]) if "route" in bad else
                      st.sampled_from(["auto", "dense", "lanczos"]), label="route")
    vy = labels_rule(y, n if Ks is not None else None, require_both=True)
    Cf = float(C) if scalar_rule(C, "C", "pos").valid else 1.0
    yv = np.asarray(y, dtype=float) if vy.valid and Ks is not None else np.where(
        np.arange(n) % 2, 1.0, -1.0)
    alpha = data.draw(candidates(n, Cf, yv, good="alpha" not in bad), label="alpha")

    v = Verdict().merge(vK).merge(vy)
    v.merge(scalar_rule(C, "C", "pos")).merge(scalar_rule(eta, "eta", "pos"))
    v.merge(scalar_rule(tau, "tau", "nonneg"))
    if route not in ("auto", "dense", "lanczos"):
        v.add("route", EITHER)
    v.merge(alpha_rule(alpha, "alpha", n, Cf if v.valid else None, yv))
    v.merge(_range_verdict(Ks, C, eta, n))
    cert, _ = call("svm_certificate", v, lambda: svm_certificate(
        K, y, alpha, C=C, eta=eta, tau=tau, route=route))
    if cert is None:
        return
    assert_bracket(cert.lower, cert.upper, "svm_certificate")
    assert cert.gap >= 0
    ref, scale = ref_bracket("svm", Ks, yv, np.asarray(alpha, dtype=float), C=Cf,
                             eta=float(eta), tau=float(tau))
    assert_bracket(*ref, "dank_ref.svm_certificate")
    assert_overlap((cert.lower, cert.upper), ref, scale, "svm_certificate vs dank_ref")


@fuzz(50)
@given(data=st.data())
def test_fuzz_svr_certificate(data):
    """dank_fast.svr_certificate, cross-checked with dank_ref's certificate."""
    bad = data.draw(bad_params("K", "y", "C", "eta", "tau", "epsilon", "alpha_hat"))
    K = data.draw(kernels(good="K" not in bad), label="K")
    vK, Ks = kernel_rule(K)
    n = Ks.shape[0] if Ks is not None else data.draw(st.integers(1, 6))
    y = data.draw(real_targets(n, good="y" not in bad), label="y")
    C = data.draw(positive_scalars(good="C" not in bad), label="C")
    eta = data.draw(positive_scalars(good="eta" not in bad), label="eta")
    tau = data.draw(nonneg_scalars(good="tau" not in bad), label="tau")
    eps = data.draw(nonneg_scalars(good="epsilon" not in bad), label="epsilon")
    Cf = float(C) if scalar_rule(C, "C", "pos").valid else 1.0
    e = np.concatenate([np.ones(n), -np.ones(n)])
    z = data.draw(candidates(2 * n, Cf, e, good="alpha_hat" not in bad), label="z")
    if z is not None and np.ndim(z) == 1 and np.shape(z)[0] == 2 * n:
        ah, ac = z[:n], z[n:]
    else:
        ah, ac = z, np.zeros(n)

    v = Verdict().merge(vK).merge(targets_rule(y, n if Ks is not None else None))
    v.merge(scalar_rule(C, "C", "pos")).merge(scalar_rule(eta, "eta", "pos"))
    v.merge(scalar_rule(tau, "tau", "nonneg")).merge(scalar_rule(eps, "epsilon", "nonneg"))
    # the messages name either vector, or both ("(alpha_hat, alpha_check) is not feasible")
    vz = Verdict()
    fh = real_array_rule(ah, "alpha_hat", 1, vz)
    fc = real_array_rule(ac, "alpha_check", 1, vz)
    if fh is not None and fc is not None:
        if fh.shape != (n,) or fc.shape != (n,):
            vz.add("alpha_hat")
        elif v.valid:  # 1e-9 C sqrt(n), n points (not 2n coordinates)
            zz = np.concatenate([fh, fc])
            viol = max(float(-zz.min()), float(zz.max() - Cf), abs(float(e @ zz)))
            tol = FEAS * Cf * math.sqrt(n)
            if viol > 2 * tol:
                vz.add("alpha_hat")
            elif viol > 0.5 * tol:
                vz.unsure("alpha_hat")
    vz.violations += [("alpha_check" if nm == "alpha_hat" else "alpha_hat", t)
                      for nm, t in vz.violations]
    vz.maybe += [("alpha_check", t) for _, t in vz.maybe]
    v.merge(vz)
    v.merge(_range_verdict(Ks, C, eta, n))
    cert, _ = call("svr_certificate", v, lambda: svr_certificate(
        K, y, ah, ac, C=C, epsilon=eps, eta=eta, tau=tau))
    if cert is None:
        return
    assert_bracket(cert.lower, cert.upper, "svr_certificate")
    zz = np.concatenate([np.asarray(ah, float), np.asarray(ac, float)])
    # dank_ref certifies the normalised point (min(ah, ac) removed): its lower bound is higher
    # by 2 eps overlap; both brackets contain v*
    ref, scale = ref_bracket("svr", Ks, y, zz, C=Cf, eta=float(eta), tau=float(tau),
                             epsilon=float(eps))
    assert_overlap((cert.lower, cert.upper), ref, scale, "svr_certificate vs dank_ref")


@fuzz(60)
@given(data=st.data())
def test_fuzz_ref_certificates(data):
    """dank_ref.certificate.{svm,svr,decomposed}_certificate (validate=True): the same rule as
    dank_fast, and brackets overlapping dank_fast's certificate of the same point."""
    task = data.draw(st.sampled_from(["svm", "svr", "decomposed"]), label="task")
    bad = data.draw(bad_params("K", "y", "C", "eta", "tau", "alpha", "project"))
    K = data.draw(kernels(good="K" not in bad), label="K")
    vK, Ks = kernel_rule(K)
    n = Ks.shape[0] if Ks is not None else data.draw(st.integers(2, 6))
    if task == "svr":
        y = data.draw(real_targets(n, good="y" not in bad), label="y")
        vy = targets_rule(y, n if Ks is not None else None)
    else:
        y = data.draw(pm1_labels(n, good="y" not in bad), label="y")
        vy = labels_rule(y, n if Ks is not None else None, require_both=task == "svm")
    C = data.draw(positive_scalars(good="C" not in bad), label="C")
    eta = data.draw(positive_scalars(good="eta" not in bad), label="eta")
    tau = data.draw(nonneg_scalars(good="tau" not in bad), label="tau")
    eps = data.draw(nonneg_scalars(), label="epsilon")
    project = data.draw(st.booleans(), label="project")
    Cf = float(C) if scalar_rule(C, "C", "pos").valid else 1.0
    yv = np.asarray(y, dtype=float) if vy.valid and Ks is not None else np.where(
        np.arange(n) % 2, 1.0, -1.0)
    m = 2 * n if task == "svr" else n
    e = {"svm": yv, "svr": np.concatenate([np.ones(n), -np.ones(n)]), "decomposed": None}[task]
    z = data.draw(candidates(m, Cf, e if e is not None else np.ones(m),
                             good="alpha" not in bad, box_only=task == "decomposed"))

    v = Verdict().merge(vK).merge(vy)
    v.merge(scalar_rule(C, "C", "pos")).merge(scalar_rule(eta, "eta", "pos"))
    if task != "decomposed":
        v.merge(scalar_rule(tau, "tau", "nonneg"))
    if task == "svr":
        v.merge(scalar_rule(eps, "epsilon", "nonneg"))
    # projected onto the feasible set first (project=True): only the kind and shape count
    v.merge(alpha_rule(z, "alpha", m, Cf if v.valid and not project else None, e))
    v.merge(_range_verdict(Ks, C, eta, n))
    names = {"alpha": "alpha_hat" if task == "svr" else "alpha"}
    v.violations = [(names.get(nm, nm), t) for nm, t in v.violations]
    v.maybe = [(names.get(nm, nm), t) for nm, t in v.maybe]
    if task == "svr" and z is not None and np.shape(z) == (m,):
        ah, ac = z[:n], z[n:]
    else:
        ah, ac = z, np.zeros(n)

    def run():
        if task == "svm":
            return refcert.svm_certificate(K, y, z, C=C, eta=eta, tau=tau, project=project)
        if task == "svr":
            return refcert.svr_certificate(K, y, ah, ac, C=C, epsilon=eps, eta=eta, tau=tau,
                                           project=project)
        return refcert.decomposed_certificate(K, y, z, C=C, eta=eta, project=project)

    cert, _ = call(f"dank_ref.{task}_certificate", v, run)
    if cert is None:
        return
    assert_bracket(cert.lower, cert.upper, f"dank_ref.{task}_certificate")
    # dank_fast certifies dank_ref's (projected) point
    if task == "svm":
        fc = svm_certificate(K, yv, cert.alpha, C=Cf, eta=float(eta), tau=float(tau))
    elif task == "svr":
        fc = svr_certificate(K, yv, cert.alpha_hat, cert.alpha_check, C=Cf,
                             epsilon=float(eps), eta=float(eta), tau=float(tau))
    else:  # P3 has no public certificate in dank_fast: its building blocks
        kd = KernelData(Ks)
        inner = inner_minimiser(kd, cert.alpha * yv, float(eta), 0.0)
        fc = certify_box(kd, yv, cert.alpha, Cf, float(eta), inner)
        tau = 0.0
    point = (np.concatenate([cert.alpha_hat, cert.alpha_check]) if task == "svr"
             else cert.alpha)
    _, scale = ref_bracket(task, Ks, yv, point, C=Cf, eta=float(eta), tau=float(tau),
                           epsilon=float(eps))
    assert_overlap((fc.lower, fc.upper), (cert.lower, cert.upper), scale,
                   f"dank_ref.{task}_certificate vs dank_fast")
