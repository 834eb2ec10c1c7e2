"""``dank-reproduce``: re-run the paper's experiments and give each empirical claim a verdict.

    dank-reproduce [--quick | --full] [--out DIR] [--data-dir DIR] [--seed N] [--jobs N] ...

``--quick`` (default): 3 classification sets (heart, sonar, wine) and 2 regression sets
(pyrim, bodyfat), 3 splits, every other power of the grid (6 x 6), Figure 4 with
``t_max = 500``. ``--full``: the 10 classification and 8 regression sets of Tables 1 and
6, 10 splits, the paper's 11 x 11 grid, ``t_max = 2000``. Both write ``report.md``,
``results.json`` and PNG figures to ``--out``; finished cells are cached in ``<out>/cache`` and
a rerun of the same command resumes (``--no-cache`` turns it off). Exit status: 0 done, 1 some
cells failed (listed in the report), 2 bad input (e.g. no data directory).
"""

from __future__ import annotations

import json
import platform
import shlex
import signal
import sys
import time
from pathlib import Path

from threadpoolctl import threadpool_limits

from ..._stdout import Parser
from .data import (
    CLASSIFICATION,
    REGRESSION,
    DataDirError,
    load_dataset,
    repo_root,
    resolve_data_dir,
)

__all__ = ["main", "run_reproduction"]

#: identification of results.json (docs/FORMATS.md; files written before 2026-11-25 have neither)
RESULTS_FORMAT = "dank-reproduce-results"
RESULTS_VERSION = 1

QUICK_CLS = ("heart", "sonar", "wine")
QUICK_REG = ("pyrim", "bodyfat")


def _log(msg: str) -> None:
    print(f"[dank-reproduce] {msg}", file=sys.stderr, flush=True)


def _versions() -> dict:
    # start-up: the versions report imports the libraries only when written
    import joblib
    import numpy
    import scipy
    import sklearn

    # start-up: dank_fast imports scikit-learn (seconds); only this function needs it
    import dank_fast

    v = {"python": platform.python_version(), "numpy": numpy.__version__,
         "scipy": scipy.__version__, "scikit-learn": sklearn.__version__,
         "joblib": joblib.__version__, "dank_fast": dank_fast.__version__}
    try:
        # start-up: matplotlib (optional dependency, the report extra) only for figures
        import matplotlib

        v["matplotlib"] = matplotlib.__version__
    except ImportError:
        pass
    return v


def protocol_notes(proto) -> list[str]:
    """The protocol's choices, for the report (see :mod:`.protocol` and :mod:`.data`)."""
    primary = proto.readings[0]
    other = {"cv": "svm", "svm": "cv"}[primary]
    return [
        "Inputs min-max scaled to [0, 1]^d with the scaler fitted on the training part only "
        "(refitted inside every CV fold); the paper scales before splitting.",
        f"Splits: {proto.n_splits} random halves, "
        + ("stratified by class" if proto.stratify else "plain random")
        + " (regression: plain random); monks1-3 official train/test files; spect: "
        + ("official 80/187 split (the paper's n = 80 is the official training file)"
           if proto.spect_split == "official" else "the 267 rows pooled, random halves")
        + ". Repetitions on an official split differ only in the CV fold assignment.",
        f"{proto.n_folds}-fold CV (stratified for classification), shuffled with a seed derived "
        "from (seed, set, split); every method of a split uses the same folds. Score: accuracy "
        "/ mean squared error. Ties go to the smallest C, then the largest sigma.",
        f"Grid: sigma in {{{', '.join(f'{s:g}' for s in sorted(proto.sigma_grid))}}}, "
        f"C in {{{', '.join(f'{c:g}' for c in sorted(proto.C_grid))}}}; Gaussian kernel "
        "exp(-||x - x'||^2 / (2 sigma^2)).",
        f"DANK: tau = {proto.tau:g}, eta = ||a_SVM||^2 of the plain SVM with the same kernel "
        "and C (per one-vs-one pair), dank_fast.DANKClassifier(method='newton', warm-started at "
        f"the SVM), certified relative duality gap tol = {proto.dank_tol:g}; out-of-sample "
        "extension as in the paper (reciprocal nearest neighbours inside the test half).",
        f"Default reading ({READING[primary]}) used by the verdicts; other reading "
        f"({READING[other]})"
        + (" also run and shown." if other in proto.readings else " available with "
           f"--dank-params {other} or both."),
        "The paper: 'To avoid additional cross validation, we manually set the penalty "
        "parameter tau to 0.01' -- i.e. sigma and C *are* cross-validated for DANK; hence "
        "DANK's own CV is the default reading.",
        "Table 5: the (sigma, C) chosen for tau = 0.01 is kept for every tau (sensitivity "
        "to tau alone); rank(F) = MATLAB's default numerical rank of F (singular values above "
        "n eps(sigma_max)), mean over splits and over one-vs-one problems.",
        "Multi-class (glass 6 classes, wine 3): one-vs-one with majority vote for SVM-CV, "
        "MKL-uniform (sklearn SVC) and DANK (DANKClassifier multi_class='ovo').",
        f"MKL-uniform: mean of the {len(proto.mkl_sigmas)} Gaussian kernels sigma in "
        f"{{{', '.join(f'{s:g}' for s in proto.mkl_sigmas)}}} (weights 1/m), C by CV.",
        f"Regression: targets standardised with the training part's mean and std (per fit), "
        f"epsilon = {proto.epsilon:g} in those units (LIBSVM's default for a unit-variance "
        "target; the paper gives none); errors on the original scale. DANK-SVR: "
        "DANKRegressor, eta = ||ah - ac||^2 of the plain SVR, tau = 0.01; its own CV only when "
        f"the training part has <= {proto.dank_cv_max_n} points, else SVR-CV's (sigma, C) (‡) "
        "and a solver budget of max_iter = 100 (Newton steps, then at most 100 accelerated "
        "iterations; a solve that does not certify within it is marked †).",
        "Baselines re-run on the same splits and folds (verification/study/experiments/baselines): "
        "LogDet = kernel learning with the LogDet divergence (Jain et al. 2012, implemented "
        "here), an SVM on the learned kernel with SVM-CV's sigma and C, slack gamma in "
        "{0.01, 0.1, 1} by CV, ITML's 20 c^2 constraints (at most 200), u, l = 5th, 95th "
        "percentiles of the K0 distances; RF = scikit-learn's random forest (100 trees, "
        "min_samples_leaf in {5, 1} x max_features in {sqrt, all} by CV; the paper's RF is "
        "Sinha and Duchi's random-feature kernel learning, a different method); NW-ML = "
        "Nadaraya-Watson with an MLKR metric (Weinberger and Tesauro 2007; a substitute for "
        "Noh et al. 2017's generative local metric), learned on at most 1000 training points "
        "from NW-CV's bandwidth; NW-CV = plain NW, bandwidth by CV. BMKL and KNPL are not "
        "re-run (paper's numbers shown).",
        "Paired t-tests: scipy.stats.ttest_rel, two-sided, 5%, on the per-split test values "
        "of the same splits.",
    ]


READING = {"cv": "DANK's own 5-fold CV of sigma and C",
           "svm": "DANK takes SVM-CV's sigma and C"}


def _parse(argv):
    p = Parser(
        prog="dank-reproduce",
        description="Re-run the DANK paper's experiments (Tables 1, 2, 5, "
                    "6, Figure 4) and give every empirical claim a verdict; writes "
                    "report.md, results.json and figures.")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true",
                   help="3 + 2 sets, 3 splits, 6 x 6 grid (default; a few minutes)")
    g.add_argument("--full", action="store_true",
                   help="all 10 + 8 sets, 10 splits, the paper's 11 x 11 grid (hours)")
    p.add_argument("--out", default="dank-reproduce-out", help="output directory")
    p.add_argument("--data-dir", default=None,
                   help="data sets directory (default: $DANK_DATASETS, else ../shared/datasets "
                        "next to the repository)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--jobs", type=int, default=1, help="cells run in parallel (processes)")
    p.add_argument("--sets", default=None,
                   help="comma-separated classification sets (overrides the preset; '' = none)")
    p.add_argument("--reg-sets", default=None,
                   help="comma-separated regression sets (overrides the preset; '' = none)")
    p.add_argument("--splits", type=int, default=None, help="number of repetitions")
    p.add_argument("--grid-exponents", default=None,
                   help="comma-separated k for the grid 2^k of sigma and C (e.g. '-1,1')")
    p.add_argument("--dank-params", choices=("cv", "svm", "both"), default="both",
                   help="DANK's sigma, C: its own CV, SVM-CV's, or both (verdicts use the "
                        "first; both = cv first)")
    p.add_argument("--split", choices=("stratified", "random"), default="stratified",
                   help="random halves stratified by class or plain")
    p.add_argument("--spect-split", choices=("official", "random"), default="official")
    p.add_argument("--epsilon", type=float, default=0.1,
                   help="SVR tube in standardised-target units")
    p.add_argument("--dank-cv-max-n", type=int, default=1000,
                   help="largest regression training part for DANK-SVR's own CV")
    p.add_argument("--conv-iters", type=int, default=None,
                   help="t_max of Figure 4 (0 = skip the figure)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    p.add_argument("--no-figures", action="store_true")
    p.add_argument("--large", default=None,
                   help="large-scale benchmark results (default benchmarks/results/large.json)")
    return p.parse_args(argv)


def _names(arg, default, known, what):
    if arg is None:
        return tuple(default)
    names = tuple(s.strip() for s in arg.split(",") if s.strip())
    bad = [n for n in names if n not in known]
    if bad:
        raise ValueError(f"unknown {what} set(s) {bad}; known: {', '.join(known)}")
    return names


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    a = _parse(argv)

    def _terminate(signum, frame):  # SIGTERM behaves like Ctrl-C: stop workers, keep the cache
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return run_reproduction(a, command="dank-reproduce " + shlex.join(argv))
    except (DataDirError, ValueError) as exc:
        print(f"dank-reproduce: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dank-reproduce: interrupted; finished cells are cached -- rerun the same "
              "command to resume", file=sys.stderr)
        return 130
    finally:
        signal.signal(signal.SIGTERM, previous)


def run_reproduction(a, command: str = "dank-reproduce") -> int:
    """Re-run the paper's experiments and write the reproduction report.

    Loads the data sets, runs (or loads from the cache under ``out/cache``) every cell,
    aggregates the tables, runs Figure 4, gives every claim a verdict and writes
    ``out/report.md``, ``out/results.json`` and the figures; prints one verdict per line.

    Parameters
    ----------
    a : argparse.Namespace
        The parsed arguments of ``dank-reproduce`` (every option of its parser: ``full``,
        ``sets``, ``reg_sets``, ``splits``, ``grid_exponents``, ``jobs``, ``data_dir``, ``out``,
        ``no_cache``, ``no_figures``, ``seed`` and the protocol options).
    command : str, optional
        The command line recorded in ``results.json``.

    Returns
    -------
    int
        Exit status: 0, or 1 when some cell ended in an error (recorded in the report).

    Raises
    ------
    ValueError
        On a bad option (unknown set, ``--grid-exponents`` not integers, ``--jobs < 1``), a
        malformed data file or benchmark file; raised before any long computation.
    DataDirError
        If the data directory or a data file is missing.

    Notes
    -----
    Time: the default (3 + 2 sets, 3 splits, 6 x 6 grid) takes a few minutes; ``--full``
    (all sets, 10 splits, 11 x 11 grid) takes hours, divided over ``--jobs`` processes.
    Memory: all selected data sets, plus per worker the dense kernels of one fit on a
    training half.
    """
    # start-up: each subcommand imports only what it runs (fast --help and errors)
    from .protocol import PAPER_GRID, Protocol
    from .runner import Cache, plan_cells, run_cells
    from .tables import (
        READING_LABEL,
        aggregate,
        normalisation_analysis,
        render_report,
        verdicts,
        write_json,
    )

    full = bool(a.full)
    cls_sets = _names(a.sets, CLASSIFICATION if full else QUICK_CLS, CLASSIFICATION,
                      "classification")
    reg_sets = _names(a.reg_sets, REGRESSION if full else QUICK_REG, REGRESSION, "regression")
    if a.grid_exponents is not None:
        try:
            grid = tuple(float(2.0 ** int(k)) for k in a.grid_exponents.split(","))
        except ValueError:
            raise ValueError(f"--grid-exponents must be comma-separated integers, "
                             f"got {a.grid_exponents!r}") from None
    else:
        grid = PAPER_GRID if full else PAPER_GRID[::2]
    if a.jobs < 1:
        raise ValueError(f"--jobs must be >= 1, got {a.jobs}")
    splits = a.splits if a.splits is not None else (10 if full else 3)
    readings = {"cv": ("cv",), "svm": ("svm",), "both": ("cv", "svm")}[a.dank_params]
    proto = Protocol(sigma_grid=grid, C_grid=grid, n_splits=splits, readings=readings,
                     stratify=a.split == "stratified", spect_split=a.spect_split,
                     epsilon=a.epsilon, dank_cv_max_n=a.dank_cv_max_n, seed=a.seed)
    t_conv = a.conv_iters if a.conv_iters is not None else (2000 if full else 500)
    data_dir = resolve_data_dir(a.data_dir)
    out = Path(a.out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"--out {a.out}: cannot be made a directory ({exc.strerror})") from None
    t0 = time.perf_counter()
    datasets = {}
    for name in (*cls_sets, *reg_sets):  # load everything first: a missing file fails early
        datasets[name] = load_dataset(name, data_dir, spect_split=proto.spect_split)
    ds_info = {}
    for name, ds in datasets.items():
        info = dict(n=ds.n, d=ds.d, note=ds.note, official_split=ds.official)
        if ds.task == "regression":
            allv = ds.y
            info["y_range"] = float(allv.max() - allv.min())
        ds_info[name] = info

    def n_train(name):
        ds = datasets[name]
        return ds.y.size if ds.official else ds.y.size // 2

    cache = None if a.no_cache else Cache(out / "cache", proto)
    p1, p2 = plan_cells(proto, cls_sets, reg_sets)
    _log(f"{len(p1) + len(p2)} cells ({len(cls_sets)} classification, {len(reg_sets)} "
         f"regression sets, {splits} splits, {len(grid)} x {len(grid)} grid, jobs {a.jobs}); "
         f"data {data_dir}; out {out}")
    # the benchmark's rows are read (and checked) before any long computation
    large_path = Path(a.large) if a.large else repo_root() / "benchmarks" / "results" / \
        "large.json"
    large = _read_large(large_path)
    recs = run_cells(p1 + p2, proto=proto, data_dir=str(data_dir), cache=cache, jobs=a.jobs,
                     label="cells", n_train=n_train)
    n_cached = sum(1 for r in recs.values() if r.get("_cached"))
    tables = aggregate(recs, proto, cls_sets, reg_sets, ds_info)
    # Figure 4 on heart (its own small experiment)
    conv = None
    if t_conv > 0:
        conv = _conv(recs, proto, data_dir, t_conv)
    V = verdicts(tables, proto, conv, large)
    figs = {}
    if not a.no_figures:
        try:
            # start-up: matplotlib (optional dependency, the report extra) only for figures
            import matplotlib  # noqa: F401
        except ImportError:
            _log("matplotlib is not installed: figures skipped (pip install 'dank[report]')")
        else:
            # start-up: the figures import matplotlib (optional dependency); only with figures
            from .figures import make_figures

            figs = make_figures(str(out), tables, conv, READING_LABEL[proto.readings[0]],
                                proto.taus)
    elapsed = time.perf_counter() - t0
    res = dict(format=RESULTS_FORMAT, version=RESULTS_VERSION, command=command, seed=proto.seed,
               versions=_versions(),
               protocol=proto.to_dict(), fingerprint=proto.fingerprint(),
               protocol_notes=protocol_notes(proto), data_dir=str(data_dir), datasets=ds_info,
               seconds=elapsed, jobs=a.jobs, n_cells=len(recs), n_cached=n_cached,
               tables=tables, normalisation=normalisation_analysis(tables["ucireg"]),
               verdicts=V, conv=conv, large=large, large_path=_shown(large_path), figures=figs,
               cells={k: {kk: vv for kk, vv in r.items() if kk not in ("traceback", "_cached")}
                      for k, r in sorted(recs.items())})
    write_json(out / "results.json", res)
    (out / "report.md").write_text(render_report(res))
    _log(f"done in {elapsed / 60:.1f} min: {out / 'report.md'}")
    for v in V:
        print(f"{v['verdict']:15s} {v['claim']}")
    return 1 if tables["errors"] else 0


def _conv(recs, proto, data_dir, t_max):
    """Figure 4 on heart with DANK's chosen (sigma, C) of split 0 if known, else SVM-CV's."""
    # start-up: figure conv only (figures imports scikit-learn's SVC and dank_fast)
    from .figures import conv_experiment
    from .protocol import Cell, _cell_svm_cv, split_context

    ds = load_dataset("heart", data_dir)
    src = None
    for m in ("dank-cv", "svm-cv"):
        r = recs.get(Cell("heart", 0, m).key)
        if r and r.get("status") == "ok":
            src = (r["C"], r["sigma"], f"chosen by {m} on this split")
            break
    if src is None:  # heart not in the run: choose by SVM-CV here
        with threadpool_limits(limits=1):
            r = _cell_svm_cv(split_context(ds, 0, proto), proto)
        src = (r["C"], r["sigma"], "chosen by svm-cv on this split")
    _log(f"Figure 4 on heart (C = {src[0]:g}, sigma = {src[1]:g}, t_max = {t_max}) ...")
    with threadpool_limits(limits=1):
        return conv_experiment(ds, C=src[0], sigma=src[1], tau=proto.tau, seed=proto.seed,
                               stratify=proto.stratify, t_max=t_max, params_from=src[2])


def _shown(path: Path) -> str:
    """``path`` relative to the repository when it lies inside it (no machine paths in reports)."""
    try:
        return str(path.resolve().relative_to(repo_root().resolve()))
    except ValueError:
        return str(path)


def _read_large(path: Path):
    """Rows of ``benchmarks/results/large.json``, or None when absent.

    The file written by ``benchmarks/bench_large.py`` is an object whose ``"rows"`` is the list
    of rows (a bare list of rows is accepted too); data-set names are matched case-insensitively
    to the paper's (``eeg`` -> ``EEG``).
    """
    if not path.is_file():
        return None
    try:
        doc = json.loads(path.read_text())
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc})") from None
    rows = doc.get("rows") if isinstance(doc, dict) else doc
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise ValueError(f"{path}: expected a list of row objects (or an object with 'rows')")
    names = {"eeg": "EEG", "ijcnn1": "ijcnn1", "covtype": "covtype"}
    return [dict(r, dataset=names.get(str(r.get("dataset", "")).lower(), r.get("dataset")))
            for r in rows]


if __name__ == "__main__":
    sys.exit(main())
