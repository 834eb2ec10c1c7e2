"""Golden vectors: small P1 / P2 / P3 instances with certified reference solutions.

Each vector is ``golden/<name>_instance.npz`` + ``golden/<name>_solution.npz`` in the oracle
format (:mod:`verification.formats`; loadable with numpy alone) and an entry of
``golden/MANIFEST.json`` (sha256 of both files, certified gap, how it was produced).
P1 and P2 references: dank_fast ``newton`` (tol 1e-12) checked by dank_ref's independent
certificate;
P3: the verification FISTA + dank_ref polish.  ``dank-verify vectors`` regenerates every
vector and compares: checksums of the stored files, the stored solution re-certified, and the
regenerated solution within 1e-6 (relative) of the stored one in value.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import warnings

import numpy as np

from .claims._common import gaussian_kernel
from .formats import load_instance, load_solution, save_instance, save_solution

GOLDEN_DIR = os.path.join(os.path.dirname(__file__), "golden")


def _specs():
    rng = np.random.default_rng(20240501)
    X = rng.uniform(0, 1, (12, 2))
    y = np.where(X[:, 0] + X[:, 1] > 1, 1.0, -1.0)
    out = []
    out.append(("p1_basic", dict(task="svm", K=gaussian_kernel(X, 0.5), y=y, C=1.0, eta=10.0,
                                 tau=0.01)))
    # all points support vectors at the bound: tiny C
    out.append(("p1_all_at_C", dict(task="svm", K=gaussian_kernel(X, 0.5), y=y, C=1e-3, eta=1.0,
                                     tau=0.01)))
    # duplicate points
    Xd = np.concatenate([X[:6], X[:6]])
    yd = np.concatenate([y[:6], y[:6]])
    yd[0], yd[1] = 1.0, -1.0
    yd[6], yd[7] = 1.0, -1.0
    out.append(("p1_duplicates", dict(task="svm", K=gaussian_kernel(Xd, 0.5), y=yd, C=2.0,
                                      eta=1.0, tau=0.0)))
    # tau large enough that F is rank one (or zero)
    out.append(("p1_rank_one_F", dict(task="svm", K=gaussian_kernel(X, 0.5), y=y, C=1.0,
                                      eta=100.0, tau=2.0 * 12)))
    # large C: no point at the bound
    out.append(("p1_large_C", dict(task="svm", K=gaussian_kernel(X, 0.3), y=y, C=1e3, eta=5.0,
                                   tau=0.01)))
    # P2 (SVR): a smooth target, and one whose targets all fit in the tube (a* = 0)
    Xr = np.linspace(-1.0, 1.0, 12)[:, None]
    yr = np.sin(3.0 * Xr[:, 0])
    out.append(("p2_basic", dict(task="svr", K=gaussian_kernel(Xr, 0.5), y=yr, C=1.0,
                                 epsilon=0.05, eta=5.0, tau=0.01)))
    out.append(("p2_inside_tube", dict(task="svr", K=gaussian_kernel(Xr, 0.5),
                                       y=0.01 * yr + 0.3, C=1.0, epsilon=0.1, eta=1.0,
                                       tau=0.0)))
    out.append(("p3_two_clusters", dict(task="decomposed", K=gaussian_kernel(X, 0.5), y=y, C=1.0,
                                        eta=10.0, tau=0.0,
                                        labels=(X[:, 0] > 0.5).astype(int))))
    return out


def _solve(spec):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if spec["task"] == "svm":
            from dank_fast import solve_svm

            r = solve_svm(spec["K"], spec["y"], C=spec["C"], eta=spec["eta"], tau=spec["tau"],
                          method="newton", tol=1e-12)
            a = r.alpha
            import dank_ref.certificate as rc

            c = rc.svm_certificate(spec["K"], spec["y"], a, C=spec["C"], eta=spec["eta"],
                                   tau=spec["tau"])
            return dict(alpha=c.alpha, bias=c.bias, F=c.F), c, "dank_fast newton tol 1e-12"
        if spec["task"] == "svr":
            from dank_fast import solve_svr

            r = solve_svr(spec["K"], spec["y"], C=spec["C"], epsilon=spec["epsilon"],
                          eta=spec["eta"], tau=spec["tau"], method="newton", tol=1e-12)
            import dank_ref.certificate as rc

            c = rc.svr_certificate(spec["K"], spec["y"], r.extra["alpha_hat"],
                                   r.extra["alpha_check"], C=spec["C"], epsilon=spec["epsilon"],
                                   eta=spec["eta"], tau=spec["tau"])
            return (dict(alpha_hat=c.alpha_hat, alpha_check=c.alpha_check, bias=c.bias, F=c.F),
                    c, "dank_fast newton tol 1e-12")
        from .claims.decomposition import block_kernel, solve_p3

        Kb = block_kernel(spec["K"], spec["labels"])
        a = solve_p3(Kb, spec["y"], spec["C"], spec["eta"])[0]
        import dank_ref.certificate as rc

        c = rc.decomposed_certificate(Kb, spec["y"], a, C=spec["C"], eta=spec["eta"])
        return dict(alpha=c.alpha, F=c.F), c, "verification FISTA + dank_ref polish"


def sha256(path):
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def generate(directory=GOLDEN_DIR):
    os.makedirs(directory, exist_ok=True)
    manifest = {"format_version": 1, "vectors": {}}
    for name, spec in _specs():
        sol, c, how = _solve(spec)
        ip = os.path.join(directory, f"{name}_instance.npz")
        sp = os.path.join(directory, f"{name}_solution.npz")
        save_instance(ip, **spec)
        save_solution(sp, task=spec["task"], **sol)
        manifest["vectors"][name] = dict(
            instance=os.path.basename(ip), solution=os.path.basename(sp),
            sha256_instance=sha256(ip), sha256_solution=sha256(sp), task=spec["task"],
            lower=float(c.lower), upper=float(c.upper), gap=float(c.gap),
            rel_gap=float(c.rel_gap), reference=how)
    with open(os.path.join(directory, "MANIFEST.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
    return manifest


def load_manifest(directory=GOLDEN_DIR):
    with open(os.path.join(directory, "MANIFEST.json")) as fh:
        return json.load(fh)


def check_vectors(directory=None, regenerate=True):
    """Verify checksums, re-certify stored solutions, regenerate and compare values."""
    from .oracle import certify

    directory = directory or GOLDEN_DIR
    man = load_manifest(directory)
    ok, lines = True, []
    fresh = {}
    if regenerate:
        with tempfile.TemporaryDirectory() as tmp:
            fresh = generate(tmp)["vectors"]
    for name, e in man["vectors"].items():
        ip, sp = os.path.join(directory, e["instance"]), os.path.join(directory, e["solution"])
        good = sha256(ip) == e["sha256_instance"] and sha256(sp) == e["sha256_solution"]
        inst = load_instance(ip)
        rep = certify(inst, load_solution(sp, inst["y"].size), reference=False)
        same = True
        if name in fresh:
            scale = max(1.0, abs(e["lower"]))
            same = abs(fresh[name]["lower"] - e["lower"]) <= 1e-6 * scale
        st = good and rep["certified"] and same
        ok &= st
        lines.append(f"{name:18s} checksum {'ok' if good else 'MISMATCH'}  certified "
                     f"{rep['certified']} (rel_gap {rep['rel_gap']:.2e})  regenerated value "
                     f"{'agrees' if same else 'DIFFERS'}")
    return ok, lines
