#!/usr/bin/env python
"""The oracle at scale: certify time and memory beside dank_fast's solve, on the kit's large set.

Each row is one instance of the conformance kit's large set (``dank-verify conformance --set
large``, :mod:`verification.conformance.large`; generated here by the same code and checked
against its sha256 manifest). Every step runs in a fresh spawned process, so its peak RSS
(``VmHWM`` of ``/proc/self/status``) is its own; ``data_gb`` is the RSS after reading the
instance file with :func:`verification.formats.load_instance`.

1. dank_fast (``fast_*``): P1 ``solve_svm(FeatureKernel(X, sigma), ...)`` (working sets);
   P2 ``solve_svr`` on the dense kernel computed from ``X`` (dank_fast's P2 solver has no
   feature route: ``8 n^2`` bytes, 3.2 GB at n = 20,000; the kernel's time is in ``fast_s``
   and also ``kernel_s``), started from the plain SVR's dual (scikit-learn's ``SVR`` on
   ``X``, in ``fast_s``; the kit's adapter does the same); P3
   ``solve_decomposed(FeatureKernel(X, gamma), ..., labels, certify_full=False, n_jobs=1)``;
   each at ``tol = 1e-6`` (its default), with the
   instance's ``C``, ``eta``, ``tau``, ``epsilon``.
2. The oracle (``ref_*``): :func:`verification.oracle.certify` (``reference=False``, tol 1e-6,
   the route of ``dank-verify certify``: dank_ref's certificates from features in row blocks)
   of dank_fast's solution with its bias. ``ref_children_peak_gb`` is the largest peak RSS of
   any process the certify step waited for (``getrusage(RUSAGE_CHILDREN)``; 0: none).
3. With ``--broken``: the oracle on broken solutions, each row's verdict and reasons: a
   coordinate above ``C`` by ``1e-6 C`` (P1, P3: ``alpha``; P2: ``alpha_hat``); the equality
   off by ``1e-6 C`` (P1 ``y'a``, P2 ``1'(ah - ac)``: one free coordinate moved; P3 has
   none); a wrong bias (best bias + 0.1; P3 has none); and dank_fast stopped at
   ``tol = 1e-3`` (solved in step 1 after the timed solve; P2: the accelerated method from
   the same start, at most 20 iterations, ``early_rel_gap`` says where it stopped).

The brackets of the two packages are compared: ``d_lower = |lower_ref - lower_fast| / scale``
and the same for ``upper``. Times are wall clock on whatever the machine is doing (the load
average is in each row).

Usage::

    python benchmarks/bench_scale.py --case large1_svm_n20000 large1_svm_n50000 --broken
    python benchmarks/bench_scale.py --case large1_decomposed_n464810 --broken
    python benchmarks/bench_scale.py --certify-only --p1 100000 --p3 1000000:430

``--certify-only`` certifies a seeded random feasible point (about 5% support) of the large
set's recipes at other sizes, without any solve. Results: one JSON line per row on stdout
(and ``--out FILE``, a list of the rows).
"""

from __future__ import annotations

import concurrent.futures as cf
import json
import multiprocessing as mp
import os
import resource
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the sibling _args.py
from _args import OneLineParser  # noqa: E402


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


def _load(path: str) -> tuple[dict, float]:
    from verification.formats import load_instance

    t = time.perf_counter()
    inst = load_instance(path)
    return inst, time.perf_counter() - t


def _solve(inst: dict, tol: float, early: bool = False):
    """dank_fast's solve of an instance given by features; returns (result, kernel seconds).
    ``early`` (P2): the accelerated method for at most 20 iterations from the same start."""
    import dank_fast

    kern = inst["kernel"]
    params = {k: kern[k] for k in ("sigma", "gamma") if k in kern}
    y, C, eta = inst["y"], inst["C"], inst["eta"]
    if inst["task"] == "svm":
        fk = dank_fast.FeatureKernel(inst["X"], sigma=params["sigma"])
        return dank_fast.solve_svm(fk, y, C=C, eta=eta, tau=inst["tau"], tol=tol), 0.0
    if inst["task"] == "svr":
        from verification.conformance.adapters import plain_svr_dual

        t = time.perf_counter()
        K = dank_fast.compute_kernel(inst["X"], sigma=params["sigma"])
        tk = time.perf_counter() - t
        kw = dict(method="accelerated", max_iter=20) if early else {}
        start = plain_svr_dual(dict(kernel="gaussian", sigma=params["sigma"], X=inst["X"], y=y,
                                    C=C, epsilon=inst["epsilon"]))
        return dank_fast.solve_svr(K, y, C=C, epsilon=inst["epsilon"], eta=eta, tau=inst["tau"],
                                   tol=tol, check_psd=False, alpha0=start, **kw), tk
    fk = dank_fast.FeatureKernel(inst["X"], gamma=params["gamma"])
    return dank_fast.solve_decomposed(fk, y, C=C, eta=eta, labels=inst["labels"], tol=tol,
                                      certify_full=False, n_jobs=1), 0.0


def _solution(task: str, r) -> dict:
    if task == "svr":
        return dict(alpha_hat=np.asarray(r.extra["alpha_hat"]),
                    alpha_check=np.asarray(r.extra["alpha_check"]), bias=float(r.bias))
    if task == "svm":
        return dict(alpha=np.asarray(r.alpha), bias=float(r.bias))
    return dict(alpha=np.asarray(r.alpha))


def fast_step(path: str, out: str, early_out: str | None, tol: float = 1e-6) -> dict:
    """dank_fast's solve (``tol``), timed; then, if asked, the early stop at tol 1e-3."""
    inst, load_s = _load(path)
    data = _mem()["VmRSS"]
    t = time.perf_counter()
    r, kernel_s = _solve(inst, tol)
    dt = time.perf_counter() - t
    row = {"fast_s": dt, "fast_tol": tol, "kernel_s": kernel_s, "fast_peak_gb": _mem()["VmHWM"],
           "data_gb": data, "load_s": load_s, "fast_status": r.status,
           "fast_rel_gap": float(r.rel_gap), "fast_lower": float(r.lower),
           "fast_upper": float(r.upper), "fast_support": int(np.count_nonzero(r.alpha))}
    np.savez(out, **_solution(inst["task"], r))
    if early_out is not None:
        t = time.perf_counter()
        del r
        e, _ = _solve(inst, 1e-3, early=True)
        row.update(early_s=time.perf_counter() - t, early_rel_gap=float(e.rel_gap))
        np.savez(early_out, **_solution(inst["task"], e))
    return row


def _verdict(rep: dict) -> dict:
    return {"certified": bool(rep["certified"]), "failed": list(rep["failed"]),
            "reasons": list(rep["reasons"]), "rel_gap": rep.get("rel_gap")}


def _broken(inst: dict, sol: dict, best_bias, early: dict | None) -> dict:
    """The oracle's verdict on each broken solution of this task."""
    from verification.oracle import certify

    task, y, C = inst["task"], inst["y"], inst["C"]
    key = "alpha_hat" if task == "svr" else "alpha"
    out = {}
    box = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in sol.items()}
    box[key][int(np.argmax(box[key]))] = C + 1e-6 * C
    out["outside_box"] = _verdict(certify(inst, box))
    if task != "decomposed":
        off = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in sol.items()}
        a = off[key]
        free = (a > 0) & (a < C) & ((y > 0) if task == "svm" else True)
        off[key][int(np.flatnonzero(free)[0])] += 1e-6 * C
        out["equality_off_1e-6C"] = _verdict(certify(inst, off))
        out["wrong_bias"] = _verdict(certify(inst, dict(sol, bias=float(best_bias) + 0.1)))
    if early is not None:
        out["early_stop_tol_1e-3"] = _verdict(certify(inst, early))
    return out


def ref_step(path: str, sol_path: str, early_path: str | None, broken: bool) -> dict:
    """The oracle's certificate of dank_fast's solution, timed; then the broken solutions."""
    from verification.oracle import certify

    inst, load_s = _load(path)
    z = np.load(sol_path)
    sol = {k: (z[k] if z[k].ndim else float(z[k])) for k in z.files}
    data = _mem()["VmRSS"]
    t = time.perf_counter()
    rep = certify(inst, sol, tol=1e-6)
    dt = time.perf_counter() - t
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 2**20
    row = {"ref_s": dt, "ref_peak_gb": _mem()["VmHWM"], "ref_data_gb": data,
           "ref_load_s": load_s, "ref_children_peak_gb": kids,
           "certified": bool(rep["certified"]), "failed": list(rep["failed"]),
           "ref_lower": rep["lower"], "ref_upper": rep["upper"], "ref_rel_gap": rep["rel_gap"],
           "route": rep.get("route"), "scale": rep["scale"], "ref_bias": rep["best_bias"]}
    if broken:
        early = None
        if early_path is not None:
            ze = np.load(early_path)
            early = {k: (ze[k] if ze[k].ndim else float(ze[k])) for k in ze.files}
        row["broken"] = _broken(inst, sol, rep["best_bias"], early)
    return row


def only_ref(path: str) -> dict:
    """Certify a seeded random feasible point (about 5% support) without any solve."""
    from verification.oracle import certify

    inst, load_s = _load(path)
    y, C = inst["y"], inst["C"]
    rng = np.random.default_rng(1)
    a = np.where(rng.random(y.size) < 0.05, C * rng.random(y.size), 0.0)
    if inst["task"] == "svm":  # y'a = 0 exactly enough: rescale the larger class's sum
        p, m = float(a[y > 0].sum()), float(a[y < 0].sum())
        a[y > 0 if p > m else y < 0] *= min(p, m) / max(p, m)
    data = _mem()["VmRSS"]
    t = time.perf_counter()
    rep = certify(inst, {"alpha": a}, tol=1e-6)
    return {"ref_s": time.perf_counter() - t, "ref_peak_gb": _mem()["VmHWM"],
            "ref_data_gb": data, "ref_load_s": load_s, "route": rep.get("route"),
            "support": int(np.count_nonzero(a)), "ref_rel_gap": rep["rel_gap"]}


def _agree(row: dict) -> dict:
    s = row["scale"]
    row["d_lower"] = abs(row["ref_lower"] - row["fast_lower"]) / s
    row["d_upper"] = abs(row["ref_upper"] - row["fast_upper"]) / s
    return row


def main(argv=None) -> int:
    from verification.conformance.large import recipe, specs, write_large
    from verification.formats import save_instance

    ap = OneLineParser(description=__doc__.split("\n")[0])
    ap.add_argument("--case", nargs="*", default=[], help="large-set ids (default: none)")
    ap.add_argument("--broken", action="store_true", help="also the broken solutions")
    ap.add_argument("--tol", type=float, default=1e-6, help="dank_fast's tol (default 1e-6)")
    ap.add_argument("--certify-only", action="store_true",
                    help="no solves: --p1 N... and --p3 N:K... of the large set's recipes")
    ap.add_argument("--p1", type=int, nargs="*", default=[])
    ap.add_argument("--p3", nargs="*", default=[], help="n:clusters")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    ap.output("--out", args.out)
    tmp = tempfile.mkdtemp(prefix="bench_scale_")
    rows = []

    def emit(row):
        row["load"] = os.getloadavg()
        rows.append(row)
        print(json.dumps(row), flush=True)
        if args.out:
            with open(args.out, "w") as fh:
                json.dump(rows, fh, indent=1)

    if args.certify_only:
        todo = [("p1", n, None, 1000.0) for n in args.p1]
        todo += [("p3", int(s.split(":")[0]), int(s.split(":")[1]), 1e7) for s in args.p3]
        for fam, n, k, eta in todo:
            path = os.path.join(tmp, f"{fam}_{n}.npz")
            save_instance(path, **recipe(fam, n, seed=7, eta=eta, clusters=k))
            emit({"problem": fam.upper(), "n": n, "clusters": k, "certify_only": True,
                  **_in_child(only_ref, path)})
        return 0
    table = {s.id: s for s in specs()}
    for ident in args.case:
        s = table[ident]
        t = time.perf_counter()
        e = write_large(tmp, ids=[ident])[ident]
        row = {"problem": s.family.upper(), "id": ident, "task": s.task, "n": s.n, "d": s.d,
               "clusters": e["clusters"], "generate_s": time.perf_counter() - t,
               "file_mb": e["bytes"] / 1e6}
        path = os.path.join(tmp, f"{ident}.npz")
        sol = os.path.join(tmp, f"{ident}_fast.npz")
        early = os.path.join(tmp, f"{ident}_early.npz") if args.broken else None
        row.update(_in_child(fast_step, path, sol, early, args.tol))
        print(f"{ident}: dank_fast {row['fast_s']:.1f} s", file=sys.stderr, flush=True)
        row.update(_in_child(ref_step, path, sol, early, args.broken))
        emit(_agree(row))
        for f in (path, sol, early):
            if f is not None and os.path.exists(f):
                os.remove(f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
