"""Fuzz tests of the certificate functions of both packages, ``project_A`` and
``compute_kernel``.

* ``dank_fast.svm_certificate`` / ``svr_certificate`` and ``dank_ref.certificate.*``: a
  candidate must be a finite real array of shape (n,), feasible to ``1e-9 C sqrt(n)``
  (docs/validity.md; dank_ref projects it first unless ``project=False``); the two packages'
  brackets at the same point must overlap.
* ``project_A``: the result lies in ``{y'a = target, 0 <= a <= C}`` and is no farther from
  ``z`` than dank_ref's own projection, or the call is refused by name.
* ``compute_kernel``: a finite ``n x m`` array (a valid kernel by the rule when ``Z`` is
  omitted), or a named error.
"""

from __future__ import annotations

import math

import numpy as np
from _fuzz_inputs import (
    bad_params,
    features,
    kernel_specs,
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
    features_rule,
    kernel_rule,
    kernel_spec_rule,
    labels_rule,
    range_rule,
    real_array_rule,
    scalar_rule,
    targets_rule,
)
from _fuzz_run import assert_bracket, assert_overlap, call, fuzz, ref_bracket
from hypothesis import given
from hypothesis import strategies as st

from dank_fast import compute_kernel, project_A, svm_certificate, svr_certificate
from dank_fast.certificate import certify_box
from dank_fast.inner import KernelData, inner_minimiser
from dank_ref import certificate as refcert

FEAS = 1e-9


# --------------------------------------------------------------------------- candidates
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


# --------------------------------------------------------------------------- P1
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


# --------------------------------------------------------------------------- P2
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


# --------------------------------------------------------------------------- dank_ref
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


# --------------------------------------------------------------------------- project_A
@fuzz(80)
@given(data=st.data())
def test_fuzz_project_A(data):
    """project_A(z, y, C, target): the nearest point of {y'a = target, 0 <= a <= C}."""
    bad = data.draw(bad_params("z", "y", "C", "target"))
    n = data.draw(st.integers(1, 8))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    C = data.draw(positive_scalars(lo=-6, hi=6, good="C" not in bad), label="C")
    Cf = float(C) if scalar_rule(C, "C", "pos").valid else 1.0
    z = rng.normal(size=n) * Cf * float(10.0 ** data.draw(st.integers(-3, 12)))
    if "z" in bad:
        z = data.draw(st.sampled_from([np.full(n, np.nan), np.append(z, 1.0), z[:, None],
                                       z + 0j, z.astype(str), np.zeros(0)]), label="z")
    y = data.draw(pm1_labels(n, good="y" not in bad), label="y")
    yv = np.asarray(y, dtype=float) if labels_rule(y, n, require_both=False).valid else None
    if "target" in bad:
        target = data.draw(st.sampled_from([float("nan"), "0", 10.0 * (n + 1), None]))
    else:  # attainable: y'a for some a in the box
        target = 0.0 if yv is None else float(yv @ (rng.random(n) * Cf))
    v = Verdict()
    vz = Verdict()
    fz = real_array_rule(z, "z", 1, vz)
    if fz is not None and fz.size == 0:
        vz.add("z", VALUE)
    v.merge(vz).merge(labels_rule(y, fz.size if fz is not None else None, require_both=False))
    v.merge(scalar_rule(C, "C", "pos"))
    if not isinstance(target, int | float) or isinstance(target, bool) or not math.isfinite(
            target):
        v.add("target", EITHER)
    elif yv is not None and v.valid:
        lo, hi = float(np.minimum(yv * Cf, 0).sum()), float(np.maximum(yv * Cf, 0).sum())
        if not lo - 1e-9 * Cf * n <= target <= hi + 1e-9 * Cf * n:
            v.add("target", VALUE)  # unattainable
    p, _ = call("project_A", v, lambda: project_A(z, y, C, target=target))
    if p is None:
        return
    yv = np.asarray(y, dtype=float)
    p = np.asarray(p)
    n = fz.size  # a "bad" z and a "bad" y of the same other size make a valid pair
    assert p.shape == (n,) and np.all(np.isfinite(p))
    tol = FEAS * Cf * math.sqrt(n)
    assert float(-p.min()) <= tol and float(p.max() - Cf) <= tol, "project_A left the box"
    assert abs(float(yv @ p) - target) <= tol * max(1.0, float(np.abs(fz).max()) / Cf) * 10, (
        f"project_A misses y'a = target: {float(yv @ p)} vs {target}")
    if target == 0.0:  # nearest point: no farther than dank_ref's projection (own code)
        q, _ = refcert.project_box_hyperplane(fz, yv, Cf)
        dz = float(np.linalg.norm(p - fz))
        dq = float(np.linalg.norm(q - fz))
        assert dz <= dq + 1e-9 * (dq + Cf * n), (dz, dq)


# --------------------------------------------------------------------------- compute_kernel
@fuzz(80)
@given(data=st.data())
def test_fuzz_compute_kernel(data):
    """compute_kernel(X, Z, kernel, sigma, gamma, degree, coef0)."""
    bad = data.draw(bad_params("X", "Z", "kernel"))
    X = data.draw(features(good="X" not in bad), label="X")
    kw = data.draw(kernel_specs(good="kernel" not in bad, precomputed=True), label="kernel")
    use_Z = data.draw(st.booleans()) or "Z" in bad
    Z = None
    if use_Z:
        Z = data.draw(features(good="Z" not in bad), label="Z")
    v = features_rule(X)
    if Z is not None:
        vz = features_rule(Z, "Z")
        if vz.valid and v.valid and kw.get("kernel") != "precomputed" and (
                np.shape(np.asarray(Z))[1] != np.shape(np.asarray(X))[1]):
            vz.add("Z", VALUE)
        vz.violations += [("alpha_check", t) for _, t in vz.violations]
        vz.maybe += [("alpha_check", t) for _, t in vz.maybe]
        v.merge(vz)
    v.merge(kernel_spec_rule(kw, precomputed_ok=True))
    if v.valid and kw.get("kernel") == "poly":  # a high degree may overflow: named kernel error
        v.unsure("kernel")
    if v.valid and kw.get("kernel") == "precomputed":
        # the identity on X (resp. Z): nothing to compute, any real 2-D array passes through
        pass
    K, _ = call("compute_kernel", v, lambda: compute_kernel(X, Z, **kw))
    if K is None:
        return
    X = np.asarray(X)
    m = X.shape[0] if Z is None else np.asarray(Z).shape[0]
    if kw.get("kernel") == "precomputed":
        return
    assert K.shape == (X.shape[0], m) and K.dtype == np.float64
    assert np.all(np.isfinite(K))
    if Z is None:
        vK, _ = kernel_rule(K)
        assert vK.valid or vK.ambiguous, f"compute_kernel returned an invalid kernel: {vK}"

