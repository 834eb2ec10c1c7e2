#!/usr/bin/env python
"""The paper's large-scale table (tablarges) re-run with its settings (table tablarge).

For EEG, ijcnn1 and covtype it measures, in one run, three rows:

* ``SVM-SMO``: scikit-learn's ``SVC`` (libsvm's SMO), exact, on the same kernel;
* ``DANK exact``: ``DANKClassifier`` (eq. (4), ``tau = 0.01``, ``eta = ||a_SVM||^2``) on all
  training points: the dense route up to 1 GiB of kernel, working sets above (no ``n x n``
  kernel; ``dank_fast.working_set``); certified relative gap ``<= 1e-6``;
* ``DANK scalable``: ``DANKClassifier(decomposition=v)`` (section 4, P3 per k-means
  cluster, ``eta`` by the rule of ``dank_fast.decomposed``);

with test accuracy, training time, rank(F), certified gap and peak RSS, printed beside the
paper's numbers. Every row runs in a fresh process (spawned), so its peak RSS
(``ru_maxrss``) is its own; data loading is excluded from the times. Progress goes to stderr.

Settings (table tablarge; what the paper leaves open is chosen here and printed):

* EEG: UCI EEG Eye State, 7,490 random training points (seeded), the other 7,490 for test;
  features clipped to the training 0.5/99.5 percentiles (the raw data holds outliers up to
  715,897) and min-max scaled on the training set; C = 32, 1/(2 sigma^2) = 100, v = 5.
* ijcnn1: LIBSVM's official split (49,990 / 91,701; already scaled to [-1, 1]); C = 32,
  1/(2 sigma^2) = 2, v = 50.
* covtype: the 15,000-row subset of ../shared/datasets (the paper uses all 581,012 rows, which
  are not available here), class 2 vs the rest (covtype.binary), a seeded 80/20 split
  (12,000 / 3,000, the paper's proportion), min-max scaled; C = 32, 1/(2 sigma^2) = 32;
  v = round(12,000 / 2,324) = 5 clusters, keeping the paper's points per cluster
  (464,810 / 200 = 2,324).
* ``ijcnn1-20k``: a seeded 20,000-point sample of ijcnn1's training set, DANK exact only (an
  exact solve at n = 20,000).

Memory rows (synthetic data, since the full covtype is not available here):

* ``covtype-synthetic``: ``make_classification(581,012 x 54, random_state=seed)``, the first
  464,810 rows for training (covtype's size and split), min-max scaled on them;
  ``DANKClassifier(C=32, gamma=0.5, decomposition=200, extension="nearest")``, in one process
  (joblib's default backend). Beside it, the paper's covtype row (7,534 s).
* ``synthetic-1m``: ``make_classification(1,000,000 x 54)``, min-max scaled; k-means (430
  clusters, ~2,325 points each as in the paper's covtype run) in the calling process, fitted
  on a seeded 10% sample with one start to bound its time on 2 cores, every point then
  assigned to its nearest centre; then
  ``solve_decomposed(FeatureKernel(X, gamma=0.5), y, C=32, eta="svm", labels=..., client=...)``
  on a ``LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="2GiB")``.

Both report the peak RSS of the process *and its workers* (``benchmarks/_peak.py``, sampled every
50 ms), the RSS before the fit (the data), fit and predict times, the certificate (every
cluster's status and the largest cluster relative gap) and, for dask, each worker process's
own sampled peak. Run them alone with ``--datasets covtype-synthetic synthetic-1m``: rows of
other data sets already in the JSON file are kept.

Extension (section 2.3): ``--extension paper`` (default) matches test points by the paper's
reciprocal nearest neighbours in batches of at most 1 GiB of distances (EEG: one batch; ijcnn1
exact: batches of a few thousand test points, the scheme being batch-dependent by definition).

The rows import ``dank_fast`` as Python finds it: the installed package, or a checkout with
``PYTHONPATH=/path/to/checkout`` (the spawned row processes inherit it).

Usage::

    python benchmarks/bench_large.py                       # everything (about an hour)
    python benchmarks/bench_large.py --datasets eeg --rows exact
    python benchmarks/bench_large.py --quick               # subsamples, a smoke run (~1 min)
    python benchmarks/bench_large.py --update-readme       # rewrite the table in README.md
    python benchmarks/bench_large.py --readme-only         # the same from results/large.json
    python benchmarks/bench_large.py --datasets covtype-synthetic synthetic-1m --update-readme

Results: ``benchmarks/results/large.json`` (one row per dataset and method) and, with
``--update-readme``, the section between the ``bench_large`` markers of benchmarks/README.md.
"""

from __future__ import annotations

import datetime
import gzip
import json
import multiprocessing as mp
import os
import platform
import resource
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))  # the sibling modules: _args.py, _peak.py
from _args import OneLineParser  # noqa: E402

SETTINGS = {
    "eeg": {"C": 32.0, "gamma": 100.0, "v": 5},
    "ijcnn1": {"C": 32.0, "gamma": 2.0, "v": 50},
    "covtype": {"C": 32.0, "gamma": 32.0, "v": 5},
    "ijcnn1-20k": {"C": 32.0, "gamma": 2.0, "v": 9},
}
# Table 4 (accuracy %, time s, rank of F); None where the paper has no entry
PAPER = {
    ("eeg", "SVM-SMO"): (95.9, 8.6, None),
    ("eeg", "DANK exact"): (96.7, 473.6, 36),
    ("eeg", "DANK scalable"): (96.3, 39.8, 142),
    ("ijcnn1", "SVM-SMO"): (96.5, 112.4, None),
    ("ijcnn1", "DANK exact"): (98.9, 28548.0, 342),
    ("ijcnn1", "DANK scalable"): (98.4, 571.7, 1788),
    ("covtype", "SVM-SMO"): (96.1, 3972.5, None),
    ("covtype", "DANK exact"): (None, None, None),
    ("covtype", "DANK scalable"): (97.1, 7534.2, None),
}
ROW_NAMES = {"svm": "SVM-SMO", "exact": "DANK exact", "scalable": "DANK scalable"}


def log(msg: str) -> None:
    print(f"[bench_large {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------- data
def data_dir(arg: str | None) -> Path:
    cands = [arg, os.environ.get("DANK_DATASETS"), ROOT.parent / "shared" / "datasets"]
    for c in cands:
        if c and Path(c).is_dir():
            return Path(c)
    raise SystemExit("data directory not found: pass --data-dir or set DANK_DATASETS "
                     "(expected ../shared/datasets relative to the repository)")


def _csv(path: Path) -> tuple[np.ndarray, np.ndarray]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as f:
        A = np.loadtxt(f, delimiter=",", skiprows=1)
    return A[:, :-1], A[:, -1]


def load(name: str, ddir: Path, seed: int, quick: bool):
    """Training and test sets of a benchmark data set, preprocessed as documented above."""
    rng = np.random.default_rng(seed)
    if name == "eeg":
        X, y = _csv(ddir / "eeg_eye_state.csv.gz")
        perm = rng.permutation(y.size)
        tr, te = perm[:7490], perm[7490:14980]
        lo, hi = np.percentile(X[tr], [0.5, 99.5], axis=0)
        X = (np.clip(X, lo, hi) - lo) / (hi - lo)
        y = np.where(y == 1, 1.0, -1.0)
        Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
    elif name.startswith("ijcnn1"):
        from sklearn.datasets import load_svmlight_file

        Xtr, ytr = load_svmlight_file(str(ddir / "ijcnn1_train.libsvm.gz"), n_features=22)
        Xte, yte = load_svmlight_file(str(ddir / "ijcnn1_test.libsvm.gz"), n_features=22)
        Xtr, Xte = Xtr.toarray(), Xte.toarray()
        if name == "ijcnn1-20k":
            idx = rng.permutation(ytr.size)[:20000]
            Xtr, ytr = Xtr[idx], ytr[idx]
    elif name == "covtype":
        X, y = _csv(ddir / "covtype_subset15k.csv.gz")
        y = np.where(y == 2, 1.0, -1.0)
        perm = rng.permutation(y.size)
        tr, te = perm[:12000], perm[12000:]
        lo, hi = X[tr].min(axis=0), X[tr].max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        X = (X - lo) / span
        Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
    else:
        raise ValueError(name)
    if quick:  # smoke run: small subsamples, same code paths
        a = rng.permutation(ytr.size)[: min(ytr.size, 1500)]
        b = rng.permutation(yte.size)[: min(yte.size, 1500)]
        Xtr, ytr, Xte, yte = Xtr[a], ytr[a], Xte[b], yte[b]
    return Xtr, ytr, Xte, yte


# ------------------------------------------------------------------------------- rows
def _peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kB -> GiB


def run_row(name: str, row: str, ddir: str, seed: int, quick: bool, extension: str) -> dict:
    """One (data set, method) cell, in its own process."""
    from sklearn.svm import SVC

    from dank_fast import DANKClassifier, compute_kernel

    s = SETTINGS[name]
    Xtr, ytr, Xte, yte = load(name, Path(ddir), seed, quick)
    v = max(1, round(s["v"] * ytr.size / {"eeg": 7490, "ijcnn1": 49990, "covtype": 12000,
                                          "ijcnn1-20k": 20000}[name])) if quick else s["v"]
    base_rss = _peak_rss_gb()
    out = {"dataset": name, "method": ROW_NAMES[row], "n_train": int(ytr.size),
           "n_test": int(yte.size), "settings": {"C": s["C"], "gamma": s["gamma"]}}
    if row == "svm":
        precomputed = name == "eeg"  # EEG: the exact DANK row uses the same dense kernel
        if precomputed:
            t = time.perf_counter()
            K = compute_kernel(Xtr, gamma=s["gamma"])
            out["kernel_s"] = time.perf_counter() - t
            t = time.perf_counter()
            svc = SVC(kernel="precomputed", C=s["C"]).fit(K, ytr)
            out["time_s"] = time.perf_counter() - t
            out["fit_peak_rss_gb"] = _peak_rss_gb()
            pred = svc.predict(compute_kernel(Xte, Xtr, gamma=s["gamma"]))
        else:
            t = time.perf_counter()
            svc = SVC(kernel="rbf", gamma=s["gamma"], C=s["C"], cache_size=500).fit(Xtr, ytr)
            out["time_s"] = time.perf_counter() - t
            out["fit_peak_rss_gb"] = _peak_rss_gb()
            pred = svc.predict(Xte)
        out.update(accuracy=float(np.mean(pred == yte)), n_sv=int(svc.support_.size),
                   status="exact (libsvm)", rel_gap=None, rank_F=None,
                   kernel="precomputed" if precomputed else "rbf on features")
    else:
        kw = dict(C=s["C"], gamma=s["gamma"], tau=0.01, eta="svm", extension=extension,
                  verbose=False)
        if row == "scalable":
            kw.update(decomposition=v, random_state=seed)
            out["settings"]["v"] = v
        clf = DANKClassifier(**kw)
        t = time.perf_counter()
        clf.fit(Xtr, ytr)
        out["time_s"] = time.perf_counter() - t
        out["fit_peak_rss_gb"] = _peak_rss_gb()
        res = clf.results_[0]
        t = time.perf_counter()
        acc = float(clf.score(Xte, yte))
        out["predict_s"] = time.perf_counter() - t
        out.update(accuracy=acc, status=res.status, rel_gap=float(res.rel_gap),
                   eta=float(clf.eta_[0]), route=clf.models_[0].route,
                   n_sv=int(np.count_nonzero(res.alpha)))
        if row == "exact":
            out["solve_s"] = float(res.time)
            out["rank_F"] = int(res.inner.F.rank)
            out["rank_rule"] = "eigenvalues of 11' + Gamma above tau/2 (exact count)"
            if hasattr(res, "rounds"):
                out["working_set_rounds"] = res.rounds
        else:
            out["clusters"] = len(res.blocks)
            out["rank_F"] = _block_rank(res)
            out["rank_rule"] = ("sum over clusters of the numerical rank of 11' + Gamma_c "
                                "(eigenvalues above 1e-8 times the largest)")
            out["cluster_status"] = sorted({r.status for r in res.results})
    out["peak_rss_gb"] = _peak_rss_gb()
    out["rss_before_gb"] = base_rss
    return out


# ------------------------------------------------------------------- synthetic, memory
SYNTHETIC = {
    "covtype-synthetic": {"n": 581_012, "n_train": 464_810, "C": 32.0, "gamma": 0.5, "v": 200},
    "synthetic-1m": {"n": 1_000_000, "n_train": 1_000_000, "C": 32.0, "gamma": 0.5, "v": 430,
                     "memory_limit": "2GiB"},
}
SYNTHETIC_METHOD = {"covtype-synthetic": "DANK scalable", "synthetic-1m": "DANK scalable, dask"}


def synthetic_data(name: str, seed: int, quick: bool):
    """``make_classification(n x 54)``: training rows first, min-max scaled on them."""
    from sklearn.datasets import make_classification

    s = SYNTHETIC[name]
    n, n_train = (s["n"] // 50, s["n_train"] // 50) if quick else (s["n"], s["n_train"])
    X, y = make_classification(n_samples=n, n_features=54, random_state=seed)
    lo, hi = X[:n_train].min(axis=0), X[:n_train].max(axis=0)
    X = (X - lo) / np.where(hi > lo, hi - lo, 1.0)
    y = np.where(y == 1, 1.0, -1.0)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def _certificate_fields(res) -> dict:
    """The decomposition's certificate: on Kbar, and cluster by cluster."""
    return {"status": res.status, "rel_gap": float(res.rel_gap), "eta": float(res.eta),
            "clusters": len(res.blocks),
            "clusters_converged": int(sum(r.status == "converged" for r in res.results)),
            "max_cluster_rel_gap": float(max(r.rel_gap for r in res.results)),
            "n_sv": int(np.count_nonzero(res.alpha))}


def run_synthetic(name: str, seed: int, quick: bool) -> dict:
    """One memory row (module docstring), in its own process."""
    from _peak import TreePeak

    from dank_fast import DANKClassifier

    s = SYNTHETIC[name]
    Xtr, ytr, Xte, yte = synthetic_data(name, seed, quick)
    v = max(1, s["v"] // 50) if quick else s["v"]
    out = {"dataset": name, "method": SYNTHETIC_METHOD[name], "n_train": int(ytr.size),
           "n_test": int(yte.size), "data_gb": (Xtr.nbytes + Xte.nbytes) / 2**30,
           "settings": {"C": s["C"], "gamma": s["gamma"], "v": v}}
    if name == "synthetic-1m":
        return {**out, **_run_dask(Xtr, ytr, s, v, seed)}
    clf = DANKClassifier(C=s["C"], gamma=s["gamma"], decomposition=v, extension="nearest",
                         random_state=seed)
    with TreePeak() as fit:
        t = time.perf_counter()
        clf.fit(Xtr, ytr)
        out["time_s"] = time.perf_counter() - t
    with TreePeak() as pred:
        t = time.perf_counter()
        out["accuracy"] = float(clf.score(Xte, yte))
        out["predict_s"] = time.perf_counter() - t
    out["solve_s"] = float(clf.results_[0].time)  # solve_decomposed: the fit after k-means
    out.update(_certificate_fields(clf.results_[0]), rss_before_gb=fit.start_gb,
               fit_peak_tree_gb=fit.peak_gb, predict_peak_tree_gb=pred.peak_gb,
               engine="joblib (one process)")
    return out


def _run_dask(X, y, s: dict, v: int, seed: int) -> dict:
    """k-means here, the clusters on a LocalCluster with a memory limit per worker."""
    from _peak import TreePeak
    from distributed import Client, LocalCluster
    from sklearn.cluster import KMeans

    from dank_fast import FeatureKernel, solve_decomposed

    out: dict = {"engine": f"dask LocalCluster(n_workers=2, memory_limit={s['memory_limit']})"}
    with TreePeak() as peak, LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
            memory_limit=s["memory_limit"]) as cluster, Client(cluster) as client:
        out["rss_before_gb"] = peak.sample() / 2**30
        t0 = time.perf_counter()
        sample = np.random.default_rng(seed).permutation(y.size)[: max(v, y.size // 10)]
        labels = KMeans(n_clusters=v, random_state=seed, n_init=1).fit(X[sample]).predict(X)
        out["kmeans_s"] = time.perf_counter() - t0
        res = solve_decomposed(FeatureKernel(X, gamma=s["gamma"]), y, C=s["C"], eta="svm",
                               labels=labels, client=client, certify_full=False)
        out["time_s"] = time.perf_counter() - t0
        out["solve_s"] = float(res.time)
        pids = client.run(os.getpid).values()
    # sampled, not the workers' ru_maxrss: Linux keeps the high-water mark across the
    # fork + exec that starts a worker, so ru_maxrss reports the parent's RSS at that moment
    out["worker_peak_gb"] = sorted(peak.per_process.get(p, 0) / 2**30 for p in pids)
    out.update(_certificate_fields(res), fit_peak_tree_gb=peak.peak_gb,
               process_peak_gb=_peak_rss_gb(), accuracy=None)
    return out


def _block_rank(res) -> int:
    """Rank of the block-diagonal Fbar: the sum of the clusters' numerical ranks."""
    total = 0
    for r in res.results:
        lam = np.linalg.eigvalsh(r.inner.F.dense())
        total += int(np.count_nonzero(lam > 1e-8 * lam[-1]))
    return total


def _child(args, q):
    try:
        if args[0] in SYNTHETIC:
            q.put(run_synthetic(args[0], args[3], args[4]))
            return
        q.put(run_row(*args))
    except BaseException as exc:  # report, do not hang the parent
        method = SYNTHETIC_METHOD.get(args[0]) or ROW_NAMES[args[1]]
        q.put({"dataset": args[0], "method": method, "error": repr(exc)})


def run_isolated(args) -> dict:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(args, q))
    p.start()
    out = q.get()
    p.join()
    return out


# ------------------------------------------------------------------------------- report
def _fmt(v, spec):
    return "-" if v is None else format(v, spec)


def table(rows: list[dict]) -> str:
    lines = [
        "| data set | method | n train | accuracy % (paper) | time s (paper) | x SVC | "
        "rank F (paper) | certified rel. gap | status | peak RSS GB: fit / all |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    svc_time = {r["dataset"]: r.get("time_s") for r in rows if r["method"] == "SVM-SMO"}
    for r in rows:
        pa, pt, pr = PAPER.get((r["dataset"], r["method"]), (None, None, None))
        if "error" in r:
            lines.append(f"| {r['dataset']} | {r['method']} | | error: {r['error']} | | | | | | |")
            continue
        ratio = None
        base = svc_time.get(r["dataset"])
        if base and r["method"] != "SVM-SMO":
            ratio = r["time_s"] / base
        acc = f"{100 * r['accuracy']:.2f} ({_fmt(pa, '.1f')})"
        tim = f"{r['time_s']:.1f} ({_fmt(pt, '.1f')})"
        rank = f"{_fmt(r.get('rank_F'), 'd')} ({_fmt(pr, 'd')})"
        gap = _fmt(r.get("rel_gap"), ".1e")
        lines.append(
            f"| {r['dataset']} | {r['method']} | {r['n_train']} | {acc} | {tim} | "
            f"{_fmt(ratio, '.1f')} | {rank} | {gap} | {r['status']} | "
            f"{r['fit_peak_rss_gb']:.2f} / {r['peak_rss_gb']:.2f} |"
        )
    return "\n".join(lines)


def memory_table(rows: list[dict]) -> str:
    """The memory rows: peak of the process and its workers against the data, certificates."""
    lines = [
        "| data set | engine | n train | clusters | fit s (paper) | predict s | accuracy % "
        "(paper) | certified rel. gap (largest cluster's) | clusters certified | data GB | "
        "peak GB, process + workers (above the data) | each worker's peak GB |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    pa, pt, _ = PAPER[("covtype", "DANK scalable")]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['dataset']} | error: {r['error']} |" + " |" * 10)
            continue
        paper = r["dataset"] == "covtype-synthetic"
        acc = "-" if r.get("accuracy") is None else f"{100 * r['accuracy']:.2f}"
        workers = ", ".join(f"{w:.2f}" for w in r.get("worker_peak_gb", [])) or "-"
        lines.append(
            f"| {r['dataset']} | {r['engine']} | {r['n_train']} | {r['clusters']} | "
            f"{r['time_s']:.1f} ({_fmt(pt if paper else None, '.1f')}) | "
            f"{_fmt(r.get('predict_s'), '.1f')} | {acc} ({_fmt(pa if paper else None, '.1f')}) | "
            f"{r['rel_gap']:.1e} ({r['max_cluster_rel_gap']:.1e}) | "
            f"{r['clusters_converged']} / {r['clusters']} | {r['data_gb']:.2f} | "
            f"{r['fit_peak_tree_gb']:.2f} ({r['fit_peak_tree_gb'] - r['rss_before_gb']:.2f}) | "
            f"{workers} |"
        )
    return "\n".join(lines)


def merge_rows(path: Path, rows: list[dict]) -> list[dict]:
    """The rows of ``path`` with those re-run replaced (same data set and method)."""
    if not path.exists():
        return rows
    new = {(r["dataset"], r["method"]) for r in rows}
    old = [r for r in json.loads(path.read_text()).get("rows", [])
           if (r["dataset"], r["method"]) not in new]
    return old + rows


def environment() -> dict:
    import numpy
    import scipy
    import sklearn

    import dank_fast

    try:
        import subprocess

        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        commit = ""
    return {"date": datetime.date.today().isoformat(), "python": platform.python_version(),
            "numpy": numpy.__version__, "scipy": scipy.__version__,
            "scikit-learn": sklearn.__version__, "dank": dank_fast.__version__,
            "git": commit, "cpus": os.cpu_count(), "load_avg": os.getloadavg()}


def update_readme(md: str, env: dict, rows: list[dict], marker: str = "bench_large") -> None:
    """Rewrite the section ``marker`` of benchmarks/README.md with the table ``md`` of
    ``rows``; the header names the commits the rows were measured at (merged rows keep
    their own)."""
    path = HERE / "README.md"
    text = path.read_text()
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    gits = ", ".join(f"`{g}`" for g in sorted({r.get("git") or env["git"] for r in rows}))
    block = (f"{start}\nFrom `benchmarks/results/large.json` (written {env['date']}, "
             f"{env['cpus']} CPUs): rows measured at git {gits}, each row's commit and load "
             "average in the file; regenerate with `python benchmarks/bench_large.py "
             f"--update-readme`, or from the file with `--readme-only`.\n\n{md}\n{end}")
    if start in text:
        text = text[: text.index(start)] + block + text[text.index(end) + len(end):]
    else:
        text += "\n## `bench_large.py`: the paper's large-scale table\n\n" + block + "\n"
    path.write_text(text)


def main(argv=None) -> int:
    p = OneLineParser(
        description="Re-run the DANK paper's large-scale table (tablarges): SVC vs DANK exact "
        "vs DANK scalable on EEG, ijcnn1 and covtype, with accuracy, time, rank(F), certified "
        "gap and peak memory; each row in a fresh process.")
    p.add_argument("--datasets", nargs="+", default=["eeg", "ijcnn1", "covtype", "ijcnn1-20k"],
                   choices=[*SETTINGS, *SYNTHETIC],
                   help="data sets (default: the four real ones; the synthetic memory rows "
                   "covtype-synthetic and synthetic-1m only when named)")
    p.add_argument("--rows", nargs="+", default=["svm", "exact", "scalable"],
                   choices=list(ROW_NAMES), help="methods (default: all three)")
    p.add_argument("--data-dir", default=None,
                   help="data sets directory (default: $DANK_DATASETS or ../shared/datasets)")
    p.add_argument("--seed", type=int, default=0, help="seed of the splits and k-means")
    p.add_argument("--extension", choices=["paper", "nearest"], default="paper",
                   help="out-of-sample extension of the DANK rows (default: the paper's)")
    p.add_argument("--quick", action="store_true",
                   help="1,500-point subsamples: a smoke run of every code path")
    p.add_argument("--json", default=str(HERE / "results" / "large.json"),
                   help="where to write the rows (default: benchmarks/results/large.json)")
    p.add_argument("--update-readme", action="store_true",
                   help="rewrite the bench_large section of benchmarks/README.md")
    p.add_argument("--readme-only", "--memory-readme-only", action="store_true",
                   dest="readme_only",
                   help="rewrite both sections of benchmarks/README.md from the JSON file's "
                   "rows, without running anything")
    a = p.parse_args(argv)
    if a.readme_only:
        try:
            stored = json.loads(Path(a.json).read_text())
        except (OSError, ValueError) as exc:
            p.error(f"--json {a.json}: cannot be read as JSON ({exc})")
        if not isinstance(stored, dict) or not {"rows", "environment"} <= set(stored):
            p.error(f"--json {a.json}: not a bench_large.py results file (no rows and "
                    "environment)")
        real = [r for r in stored["rows"] if r["dataset"] not in SYNTHETIC]
        synth = [r for r in stored["rows"] if r["dataset"] in SYNTHETIC]
        update_readme(table(real), stored["environment"], real)
        update_readme(memory_table(synth), stored["environment"], synth,
                      marker="bench_large_memory")
        return 0
    p.output("--json", a.json)
    ddir = data_dir(a.data_dir)
    rows = []
    for name in a.datasets:
        for row in ["scalable"] if name in SYNTHETIC else a.rows:
            if name == "ijcnn1-20k" and row != "exact":
                continue
            log(f"{name}: {row} ...")
            r = run_isolated((name, row, str(ddir), a.seed, a.quick, a.extension))
            rows.append(r)
            if "error" in r:
                log(f"{name}: {row} FAILED: {r['error']}")
            else:
                log(f"{name}: {row}: {r['time_s']:.1f} s, status {r['status']}")
    env = environment()
    for r in rows:  # rows of earlier runs keep their own (merge_rows)
        r.setdefault("git", env["git"])
        r.setdefault("load_avg_end", env["load_avg"])
    out = Path(a.json)
    if not a.quick:
        rows = merge_rows(out, rows)
    real = [r for r in rows if r["dataset"] not in SYNTHETIC]
    synth = [r for r in rows if r["dataset"] in SYNTHETIC]
    md, md_mem = table(real), memory_table(synth)
    print(md, md_mem, sep="\n\n")
    out.write_text(json.dumps({"environment": env, "quick": a.quick, "seed": a.seed,
                               "extension": a.extension, "rows": rows}, indent=1))
    log(f"wrote {out}")
    if a.update_readme and not a.quick:  # only the sections whose rows were run now
        if any(name not in SYNTHETIC for name in a.datasets):
            update_readme(md, env, real)
        if any(name in SYNTHETIC for name in a.datasets):
            update_readme(md_mem, env, synth, marker="bench_large_memory")
        log("updated benchmarks/README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
