"""Generated test families (version 1): seeded instances beyond the golden vectors.

Every instance is given by features (``X`` and a kernel), so that its file is the same bytes on
every platform: its sha256 (of the deterministic ``.npz`` written by
:func:`verification.formats.save_instance`) is recorded in ``families.json`` beside this module
and checked each time the families are generated.  A change of any instance is a new
:data:`FAMILIES_VERSION`.

Families (``n`` from 10 to 1,000; every task unless said otherwise; Gaussian kernel, sigma 0.5,
on two overlapping Gaussian blobs (svm, decomposed) or a noisy sine (svr), C = 1, eta = 10,
tau = 0.01, epsilon = 0.05, clusters by position along the first coordinate):

=============  ==========================================================================
family         what it catches
=============  ==========================================================================
``size``       n = 10, 100, 1000: an implementation right only on tiny inputs
``kscale``     a linear kernel scaled by s = 1e-6 and 1e6 (max|K| about 4e-6 and 4e6):
               absolute thresholds (docs/validity.md: ``a*(sK, C, eta) = a*(K, sC, s eta)/s``)
``cscale``     C = 1e-4 and 1e4 (``v*(K, C, eta) = C v*(CK, 1, eta/C)``): tolerances not
               relative to C
``eta``        eta = 1e-3 (F dominated by Gamma) and 1e5 (F close to 11')
``tau``        svm, svr: tau = 0 (F = 11' + Gamma) and tau so large that F = 0
``corner``     svm: one positive among 100, duplicated points with opposite labels;
               svr: epsilon = 0, epsilon above every |y| (a* = 0); decomposed: singleton
               clusters, one class per cluster
``weights``    per-sample boxes (a vector C, format version 2): C_i = 2^k, k uniform in
               -2..2; svm also class weights "balanced" (n / (2 n_class)) on a 1:9 set:
               a box, a hinge or a bias not weighted per sample
=============  ==========================================================================

Adding instances keeps :data:`FAMILIES_VERSION` (the ids and bytes of the others do not
change; the ``weights`` family was added so); changing one is a new version.
"""

from __future__ import annotations

import hashlib
import os
import tempfile

import numpy as np

from ..formats import save_instance
from ._manifest import manifest_problems, write_manifest

__all__ = ["FAMILIES_VERSION", "MANIFEST", "specs", "write_families", "family_problems"]

FAMILIES_VERSION = 1
MANIFEST = os.path.join(os.path.dirname(__file__), "families.json")
_BASE = dict(C=1.0, eta=10.0)


def _blobs(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.standard_normal((n, 2)) * 0.6 + y[:, None] * np.array([0.5, 0.5])
    return X, y


def _sine(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = np.sort(rng.random(n)) * 4.0 - 2.0
    return x[:, None], np.sin(2.0 * x) + 0.1 * rng.standard_normal(n)


def _clusters(X: np.ndarray, k: int) -> np.ndarray:
    """Cluster of each point: k bins of equal count along the first coordinate."""
    order = np.argsort(X[:, 0], kind="stable")
    labels = np.empty(X.shape[0], dtype=np.int64)
    labels[order] = np.arange(X.shape[0]) * k // X.shape[0]
    return labels


def _task_fields(task: str, n: int, seed: int, **kw) -> dict:
    """Instance fields of one task on the family's data (Gaussian kernel unless ``X`` given)."""
    X, y = _sine(n, seed) if task == "svr" else _blobs(n, seed)
    f = dict(task=task, X=X, kernel="gaussian", sigma=0.5, y=y, **_BASE)
    if task == "svr":
        f.update(tau=0.01, epsilon=0.05)
    elif task == "svm":
        f.update(tau=0.01)
    else:
        f.update(labels=_clusters(X, max(1, min(4, n // 25))))
    f.update(kw)
    return f


def _linear_scaled(task: str, n: int, seed: int, s: float) -> dict:
    f = _task_fields(task, n, seed)
    f.update(X=f["X"] * np.sqrt(s), kernel="linear")
    del f["sigma"]
    return f


def _tau_zero_F(task: str, n: int, seed: int) -> float:
    """A tau with F(a) = 0 for every feasible a: tau/2 > lambda_max(11' + Gamma) (Lemma 1
    bound: n + n C^2 max|K| / (4 eta); max|K| = 1 for the Gaussian kernel)."""
    return 3.0 * (n + n * _BASE["C"] ** 2 / (4.0 * _BASE["eta"]))


def _corners() -> list[tuple[str, str, dict]]:
    out = []
    X, y = _blobs(100, 7)
    y1 = -np.ones(100)
    y1[int(np.argmax(X[:, 0] + X[:, 1]))] = 1.0
    out.append(("svm_one_positive", "one point of class +1 among 100",
                _task_fields("svm", 100, 7, y=y1)))
    Xd = np.concatenate([X[:50], X[:50]])
    yd = np.concatenate([y[:50], -y[:50]])
    out.append(("svm_duplicates", "50 points, each twice with opposite labels",
                _task_fields("svm", 100, 7, X=Xd, y=yd)))
    out.append(("svr_eps_zero", "epsilon = 0", _task_fields("svr", 100, 8, epsilon=0.0)))
    out.append(("svr_eps_huge", "epsilon = 10 > every |y|: a* = 0",
                _task_fields("svr", 100, 8, epsilon=10.0)))
    out.append(("decomposed_singletons", "every point its own cluster (Kbar diagonal)",
                _task_fields("decomposed", 100, 9, labels=np.arange(100, dtype=np.int64))))
    Xc, yc = _blobs(100, 9)
    out.append(("decomposed_one_class_per_cluster", "one class per cluster",
                _task_fields("decomposed", 100, 9, labels=(yc > 0).astype(np.int64))))
    return out


def _weights() -> list[tuple[str, str, dict]]:
    """The ``weights`` family: per-sample boxes, powers of two (exact in binary)."""
    out = []
    for task, seed in (("svm", 600), ("svr", 601), ("decomposed", 602)):
        k = np.random.default_rng(seed + 1000).integers(-2, 3, 100)
        out.append((f"{task}_weights", "per-sample boxes C_i = 2^k, k uniform in -2..2",
                    _task_fields(task, 100, seed, C=2.0 ** k)))
    X, _ = _blobs(100, 603)
    y = -np.ones(100)
    y[np.argsort(X[:, 0] + X[:, 1])[-10:]] = 1.0  # 10 of class +1: 1:9, as large1_svm
    cw = np.where(y > 0, 100 / (2.0 * 10), 100 / (2.0 * 90))
    out.append(("svm_class_weights", "class weights 'balanced' (C_i = n / (2 n_class)) on a "
                "1:9 set", _task_fields("svm", 100, 603, y=y, C=cw)))
    return out


def specs() -> list[tuple[str, str, str, dict]]:
    """``(id, family, description, instance fields)`` of every instance, in order.

    The fields are keyword arguments of :func:`verification.formats.save_instance`.
    """
    out = []
    tasks = ("svm", "svr", "decomposed")
    for task in tasks:
        for i, n in enumerate((10, 100, 1000)):
            out.append((f"{task}_n{n}", "size", f"n = {n}", _task_fields(task, n, 100 + i)))
    for task in tasks:
        for s in (1e-6, 1e6):
            out.append((f"{task}_kscale_{s:g}", "kscale", f"linear kernel scaled by {s:g}",
                        _linear_scaled(task, 50, 200, s)))
    for task in tasks:
        for C in (1e-4, 1e4):
            out.append((f"{task}_C_{C:g}", "cscale", f"C = {C:g}",
                        _task_fields(task, 50, 300, C=C)))
    for task in tasks:
        for eta in (1e-3, 1e5):
            out.append((f"{task}_eta_{eta:g}", "eta", f"eta = {eta:g}",
                        _task_fields(task, 50, 400, eta=eta)))
    for task in ("svm", "svr"):
        out.append((f"{task}_tau0", "tau", "tau = 0", _task_fields(task, 100, 500, tau=0.0)))
        out.append((f"{task}_F_zero", "tau", "tau so large that F = 0",
                    _task_fields(task, 100, 500, tau=_tau_zero_F(task, 100, 500))))
    out += [(i, "corner", d, f) for i, d, f in _corners()]
    out += [(i, "weights", d, f) for i, d, f in _weights()]
    return [(f"fam{FAMILIES_VERSION}_{i}", fam, d, f) for i, fam, d, f in out]


def _sha256(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def write_families(directory: str) -> dict[str, dict]:
    """Write every instance as ``<id>.npz`` into ``directory``; return the manifest entries
    ``{id: {family, description, task, n, sha256}}`` (a few MB; about 0.1 s)."""
    entries = {}
    for ident, fam, what, fields in specs():
        path = os.path.join(directory, f"{ident}.npz")
        save_instance(path, **fields)
        entries[ident] = dict(family=fam, description=what, task=fields["task"],
                              n=int(np.asarray(fields["y"]).size), sha256=_sha256(path))
    return entries


def family_problems(entries: dict[str, dict], path: str = MANIFEST) -> list[str]:
    """How freshly generated ``entries`` differ from the committed manifest (empty: none)."""
    return manifest_problems(entries, path, "families_version", FAMILIES_VERSION)


def main() -> None:
    """Regenerate ``families.json`` (``python -m verification.conformance.families``)."""
    with tempfile.TemporaryDirectory() as tmp:
        entries = write_families(tmp)
    write_manifest(MANIFEST, "families_version", FAMILIES_VERSION, entries)


if __name__ == "__main__":
    main()
