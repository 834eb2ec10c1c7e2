#!/usr/bin/env python
"""dank_ref's certificates from features at scale, beside dank_fast's solve of the same instance.

Rows (every step in a fresh spawned process, so its peak RSS, ``VmHWM`` of
``/proc/self/status``, is its own; ``data_gb`` is the RSS after loading the instance):

* ``p1``: ijcnn1-like P1 (``make_classification``: 22 features, 10 informative, 4 redundant,
  class ratio 1:9, ``class_sep = 2`` and no label noise unless ``--class-sep`` / ``--flip-y``
  say otherwise, seeded, standardised), Gaussian kernel ``sigma = 4``,
  ``C = 1``, ``tau = 0.01``, ``eta = ||a_SVM||^2`` (the paper's rule; scikit-learn's ``SVC``
  on the same kernel, run once when the data are made). ``dank_fast.solve_svm(FeatureKernel(X,
  sigma=4), ...)`` (tol 1e-6), then ``dank_ref.scale_certificate.svm_certificate_features``
  of its ``alpha``. At ``--broken`` sizes, the same certificate is asked about four broken
  solutions: a coordinate above ``C`` (by ``1e-6 C``), ``y'a`` off by ``1e-6 C``, a wrong bias
  (best bias + 0.1) and dank_fast stopped at ``tol = 1e-3``.
* ``p3``: P3 (``make_classification``: 54 features, seeded, min-max scaled), k-means labels
  (``MiniBatchKMeans``, seeded, made with the data), Gaussian ``gamma = 0.5``, ``C = 32``,
  ``dank_fast.solve_decomposed(FeatureKernel(X, gamma=0.5), y, labels=..., eta="svm",
  certify_full=False, n_jobs=1)``, then ``decomposed_certificate_features`` with its ``eta``.

Both packages' brackets are compared: ``d_lower = |lower_ref - lower_fast| / scale`` and the
same for ``upper`` (``scale = 1'a``). Times are wall clock on whatever the machine is doing
(print ``os.getloadavg()`` beside them).

Usage::

    python benchmarks/bench_scale.py --p1 20000 50000 --broken 20000 --p3 200000:100
    python benchmarks/bench_scale.py --p3 464810:200
    python benchmarks/bench_scale.py --certify-only --p1 100000 --p3 1000000:430

Results: one JSON line per row on stdout (and ``--out FILE``).
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time

import numpy as np


def _mem() -> dict:
    out = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(("VmHWM", "VmRSS")):
                key, val = line.split(":")
                out[key] = int(val.split()[0]) / 2**20  # kB -> GB
    return out


def _in_child(fn, *args):
    with cf.ProcessPoolExecutor(1, mp_context=mp.get_context("spawn")) as ex:
        return ex.submit(fn, *args).result()


# ---------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------
def make_p1(n: int, path: str, seed: int = 0, sep: float = 2.0, flip: float = 0.0,
            svc: bool = True) -> dict:
    from sklearn.datasets import make_classification
    from sklearn.svm import SVC

    X, y = make_classification(n_samples=n, n_features=22, n_informative=10, n_redundant=4,
                               weights=[0.9], flip_y=flip, class_sep=sep, random_state=seed)
    X = (X - X.mean(0)) / X.std(0)
    y = np.where(y == 1, 1.0, -1.0)
    if not svc:
        np.savez(path, X=X, y=y)
        return {}
    t = time.perf_counter()
    svc = SVC(C=1.0, gamma=1.0 / 32.0, tol=1e-4).fit(X, y)
    eta = float(np.sum(svc.dual_coef_ ** 2))
    np.savez(path, X=X, y=y)
    return {"eta": eta, "svc_s": time.perf_counter() - t, "n_sv_svc": int(svc.n_support_.sum())}


def make_p3(n: int, k: int, path: str, seed: int = 0) -> dict:
    from sklearn.cluster import MiniBatchKMeans
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n, n_features=54, n_informative=20, n_redundant=10,
                               flip_y=0.05, random_state=seed)
    X -= X.min(0)
    X /= X.max(0)
    y = np.where(y == 1, 1.0, -1.0)
    t = time.perf_counter()
    km = MiniBatchKMeans(n_clusters=k, random_state=seed, n_init=1, batch_size=4096).fit(X)
    np.savez(path, X=X, y=y, labels=km.labels_.astype(np.int64))
    return {"kmeans_s": time.perf_counter() - t,
            "largest_cluster": int(np.bincount(km.labels_).max())}


# ---------------------------------------------------------------------------------------------
# the steps (run in fresh processes)
# ---------------------------------------------------------------------------------------------
def fast_p1(path: str, eta: float, tol: float, out: str) -> dict:
    import dank_fast

    z = np.load(path)
    X, y = z["X"], z["y"]
    data = _mem()["VmRSS"]
    t = time.perf_counter()
    r = dank_fast.solve_svm(dank_fast.FeatureKernel(X, sigma=4.0), y, C=1.0, eta=eta, tau=0.01,
                            tol=tol)
    dt = time.perf_counter() - t
    np.save(out, r.alpha)
    return {"fast_s": dt, "fast_peak_gb": _mem()["VmHWM"], "data_gb": data,
            "fast_status": r.status, "fast_rel_gap": float(r.rel_gap),
            "fast_lower": float(r.lower), "fast_upper": float(r.upper),
            "fast_bias": float(r.bias)}


def ref_p1(path: str, eta: float, alpha_path: str, broken: bool, early_path: str | None,
           fast_bias: float) -> dict:
    from dank_ref.features import FeatureKernel
    from dank_ref.scale_certificate import svm_certificate_features

    z = np.load(path)
    X, y = z["X"], z["y"]
    a = np.load(alpha_path)
    fk = FeatureKernel(X, sigma=4.0)
    data = _mem()["VmRSS"]
    t = time.perf_counter()
    c = svm_certificate_features(fk, y, a, C=1.0, eta=eta, tau=0.01, bias=fast_bias)
    dt = time.perf_counter() - t
    row = {"ref_s": dt, "ref_peak_gb": _mem()["VmHWM"], "ref_data_gb": data,
           "ref_lower": c.lower, "ref_upper": c.upper, "ref_rel_gap": c.rel_gap,
           "ref_rel_gap_at_fast_bias": c.rel_gap_at_bias, "route": c.route,
           "support": c.support, "rank": c.rank, "excess": c.excess, "scale": c.scale,
           "ref_bias": c.bias}
    if not broken:
        return row
    checks = {}
    C = 1.0
    out = a.copy()
    out[int(np.argmax(a))] = C + 1e-6 * C
    off = a.copy()
    i = int(np.flatnonzero((a > 0) & (a < C) & (y > 0))[0])
    off[i] += 1e-6 * C
    for name, cand in (("outside_box", out), ("y'a_off_1e-6C", off)):
        try:
            svm_certificate_features(fk, y, cand, C=C, eta=eta, tau=0.01)
            checks[name] = "ACCEPTED"
        except ValueError as exc:
            checks[name] = f"rejected: {exc}"
    wb = svm_certificate_features(fk, y, a, C=C, eta=eta, tau=0.01, bias=c.bias + 0.1)
    checks["wrong_bias"] = (f"rel gap at bias {c.bias + 0.1:.6g}: {wb.rel_gap_at_bias:.3g} "
                            f"({'rejected' if wb.rel_gap_at_bias > 1e-6 else 'ACCEPTED'} at tol "
                            f"1e-6)")
    if early_path is not None:
        ce = svm_certificate_features(fk, y, np.load(early_path), C=C, eta=eta, tau=0.01)
        checks["early_stop_tol_1e-3"] = (f"rel gap {ce.rel_gap:.3g} ("
                                         f"{'rejected' if ce.rel_gap > 1e-6 else 'ACCEPTED'} "
                                         "at tol 1e-6)")
    row["broken"] = checks
    return row


def fast_p3(path: str, out: str) -> dict:
    import dank_fast

    z = np.load(path)
    X, y, labels = z["X"], z["y"], z["labels"]
    data = _mem()["VmRSS"]
    t = time.perf_counter()
    r = dank_fast.solve_decomposed(dank_fast.FeatureKernel(X, gamma=0.5), y, C=32.0, eta="svm",
                                   labels=labels, certify_full=False, n_jobs=1)
    dt = time.perf_counter() - t
    np.save(out, r.alpha)
    return {"fast_s": dt, "fast_peak_gb": _mem()["VmHWM"], "data_gb": data, "eta": float(r.eta),
            "fast_status": r.status, "fast_rel_gap": float(r.rel_gap),
            "fast_lower": float(r.lower), "fast_upper": float(r.upper)}


def ref_p3(path: str, eta: float, alpha_path: str) -> dict:
    from dank_ref.features import FeatureKernel
    from dank_ref.scale_certificate import decomposed_certificate_features

    z = np.load(path)
    X, y, labels = z["X"], z["y"], z["labels"]
    a = np.load(alpha_path)
    fk = FeatureKernel(X, gamma=0.5)
    data = _mem()["VmRSS"]
    t = time.perf_counter()
    c = decomposed_certificate_features(fk, y, a, labels, C=32.0, eta=eta)
    dt = time.perf_counter() - t
    return {"ref_s": dt, "ref_peak_gb": _mem()["VmHWM"], "ref_data_gb": data,
            "ref_lower": c.lower, "ref_upper": c.upper, "ref_rel_gap": c.rel_gap,
            "support": c.support, "scale": c.scale}


def only_ref(path: str, problem: str, eta: float) -> dict:
    """Certify a seeded random feasible point (about 5% support) without any solve: time and
    memory of the certificate alone at sizes where no solve is run here."""
    from dank_ref.features import FeatureKernel
    from dank_ref.scale_certificate import (
        decomposed_certificate_features,
        svm_certificate_features,
    )

    z = np.load(path)
    X, y = z["X"], z["y"]
    rng = np.random.default_rng(1)
    C = 1.0 if problem == "P1" else 32.0
    a = np.where(rng.random(y.size) < 0.05, C * rng.random(y.size), 0.0)
    if problem == "P1":  # y'a = 0 exactly enough: rescale the larger class's sum
        p, m = float(a[y > 0].sum()), float(a[y < 0].sum())
        a[y > 0 if p > m else y < 0] *= min(p, m) / max(p, m)
    data = _mem()["VmRSS"]
    t = time.perf_counter()
    if problem == "P1":
        c = svm_certificate_features(FeatureKernel(X, sigma=4.0), y, a, C=C, eta=eta, tau=0.01)
    else:
        c = decomposed_certificate_features(FeatureKernel(X, gamma=0.5), y, a, z["labels"],
                                            C=C, eta=eta)
    return {"ref_s": time.perf_counter() - t, "ref_peak_gb": _mem()["VmHWM"],
            "ref_data_gb": data, "route": c.route, "support": c.support, "rank": c.rank,
            "ref_rel_gap": c.rel_gap, "excess": c.excess}


def _agree(row: dict) -> dict:
    s = row["scale"]
    row["d_lower"] = abs(row["ref_lower"] - row["fast_lower"]) / s
    row["d_upper"] = abs(row["ref_upper"] - row["fast_upper"]) / s
    return row


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--p1", type=int, nargs="*", default=[])
    ap.add_argument("--broken", type=int, nargs="*", default=[])
    ap.add_argument("--p3", nargs="*", default=[], help="n:clusters")
    ap.add_argument("--class-sep", type=float, default=2.0, help="P1 data (default 2)")
    ap.add_argument("--flip-y", type=float, default=0.0, help="P1 label noise (default 0)")
    ap.add_argument("--certify-only", action="store_true",
                    help="no solves: certify a seeded random feasible point (eta = 1000 for "
                         "P1, 1e7 for P3)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="bench_scale_")
    rows = []

    def emit(row):
        row["load"] = os.getloadavg()
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.out:
            with open(args.out, "w") as fh:
                json.dump(rows, fh, indent=1)

    for n in args.p1:
        path = os.path.join(tmp, f"p1_{n}.npz")
        if args.certify_only:
            make_p1(n, path, sep=args.class_sep, flip=args.flip_y, svc=False)
            emit({"problem": "P1", "n": n, "certify_only": True,
                  **_in_child(only_ref, path, "P1", 1000.0)})
            continue
        row = {"problem": "P1", "n": n, "class_sep": args.class_sep, "flip_y": args.flip_y,
               **make_p1(n, path, sep=args.class_sep, flip=args.flip_y)}
        print(f"P1 n={n}: data made, eta={row['eta']:.6g}", file=sys.stderr, flush=True)
        a_path = os.path.join(tmp, f"p1_{n}_alpha.npy")
        row.update(_in_child(fast_p1, path, row["eta"], 1e-6, a_path))
        print(f"P1 n={n}: dank_fast {row['fast_s']:.1f} s", file=sys.stderr, flush=True)
        early = None
        if n in args.broken:
            early = os.path.join(tmp, f"p1_{n}_early.npy")
            row["early"] = _in_child(fast_p1, path, row["eta"], 1e-3, early)["fast_rel_gap"]
        row.update(_in_child(ref_p1, path, row["eta"], a_path, n in args.broken, early,
                             row["fast_bias"]))
        emit(_agree(row))
    for spec in args.p3:
        n, k = (int(v) for v in spec.split(":"))
        path = os.path.join(tmp, f"p3_{n}.npz")
        row = {"problem": "P3", "n": n, "clusters": k, **make_p3(n, k, path)}
        if args.certify_only:
            emit({**row, "certify_only": True, **_in_child(only_ref, path, "P3", 1e7)})
            continue
        print(f"P3 n={n}: data made", file=sys.stderr, flush=True)
        a_path = os.path.join(tmp, f"p3_{n}_alpha.npy")
        row.update(_in_child(fast_p3, path, a_path))
        print(f"P3 n={n}: dank_fast {row['fast_s']:.1f} s", file=sys.stderr, flush=True)
        row.update(_in_child(ref_p3, path, row["eta"], a_path))
        emit(_agree(row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
