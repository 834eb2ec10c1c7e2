"""The data sets of the paper's UCI experiments, and their train/test splits.

Files and conventions are those of ``shared/datasets/MANIFEST.md``: CSV with one header row,
features first and the label/response in the last column ``target``; monks1-3 and spect ship
with official train/test files.

Where the data come from
------------------------
``--data-dir`` (:func:`resolve_data_dir`), else the environment variable ``DANK_DATASETS``,
else ``../shared/datasets`` relative to the repository root. A missing directory or file is a
:class:`DataDirError` (the CLI exits with status 2).

Splits (paper, Section 6.1.1: "we randomly pick half of the data for training and the rest
for test except for monks1, monks2, and monks3")
------------------------------------------------
* Random-split sets: 10 random halves, **stratified** by class by default (``stratify=False``
  gives plain random halves). Stratification keeps every class on both sides -- glass has a
  class of 9 points, fertility 12 "altered" of 100 -- and lowers the split-to-split variance
  without favouring any method (all methods of a split see the same halves, and the t-test is
  paired). Regression halves are plain random. Odd ``n``: ``floor(n / 2)`` training points.
* monks1-3: the official split; the 10 repetitions differ only in the CV fold assignment.
* spect: the paper's ``(d, n) = (21, 80)`` lists the size of the official *training* file
  (80 rows), just as its monks rows list their official training sizes, so the official split
  (80 train / 187 test) is the default; ``spect_split="random"`` pools the 267 rows and draws
  random halves like the other sets. The files have 22 features (the paper says 21); all 22
  are used.
"""

from __future__ import annotations

import csv
import gzip
import os
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

__all__ = [
    "CLASSIFICATION",
    "REGRESSION",
    "DataDirError",
    "Dataset",
    "derive_seed",
    "load_dataset",
    "make_split",
    "repo_root",
    "resolve_data_dir",
    "shared_dir",
]

#: classification sets of Table 1, in the paper's row order: name -> (files, official split)
CLASSIFICATION: dict[str, tuple[tuple[str, ...], bool]] = {
    "diabetic": (("diabetic.csv",), False),
    "heart": (("heart.csv",), False),
    "monks1": (("monks1_train.csv", "monks1_test.csv"), True),
    "monks2": (("monks2_train.csv", "monks2_test.csv"), True),
    "monks3": (("monks3_train.csv", "monks3_test.csv"), True),
    "sonar": (("sonar.csv",), False),
    "spect": (("spect_train.csv", "spect_test.csv"), True),
    "glass": (("glass.csv",), False),
    "fertility": (("fertility.csv",), False),
    "wine": (("wine.csv",), False),
}

#: regression sets of Table 6 (LIBSVM ``*_scale`` files), in the paper's row order
REGRESSION: dict[str, str] = {
    "bodyfat": "bodyfat_scale.csv",
    "pyrim": "pyrim_scale.csv",
    "space": "space_ga_scale.csv",
    "triazines": "triazines_scale.csv",
    "cpusmall": "cpusmall_scale.csv",
    "housing": "housing_scale.csv",
    "mg": "mg_scale.csv",
    "mpg": "mpg_scale.csv",
}

#: known differences between the files and the paper (MANIFEST.md)
NOTES: dict[str, str] = {
    "spect": "22 features in the files, the paper says 21; all 22 used",
    "cpusmall": "n = 8192 in the file; the paper prints 8912 (a typo for 8192)",
    "bodyfat": "LIBSVM target is body density; x1 is % body fat",
    "monks1": "official split; repetitions differ in the CV folds only",
    "monks2": "official split; repetitions differ in the CV folds only",
    "monks3": "official split (5% label noise by design); repetitions differ in the CV folds",
}


class DataDirError(FileNotFoundError):
    """The data directory or one of its files is missing (the CLI exits with status 2)."""


def repo_root() -> Path:
    """The repository root (the directory holding the ``verification`` package)."""
    return Path(__file__).resolve().parents[3]


def shared_dir() -> Path:
    """The project's ``shared/`` directory: the parent of ``$DANK_DATASETS`` when that is set,
    else ``../shared`` next to the repository (it also holds ``seeds/``, the paper's LaTeX)."""
    if os.environ.get("DANK_DATASETS"):
        return Path(os.environ["DANK_DATASETS"]).resolve().parent
    return repo_root().parent / "shared"


def resolve_data_dir(data_dir: str | os.PathLike | None = None) -> Path:
    """The data directory: ``data_dir``, else ``$DANK_DATASETS``, else ``../shared/datasets``.

    Parameters
    ----------
    data_dir : path-like, optional
        Explicit directory (the CLI's ``--data-dir``).

    Returns
    -------
    Path
        An existing directory.

    Raises
    ------
    DataDirError
        If the chosen directory does not exist; the message says where it looked and how to
        point elsewhere.
    """
    if data_dir is not None:
        p, how = Path(data_dir), "--data-dir"
    elif os.environ.get("DANK_DATASETS"):
        p, how = Path(os.environ["DANK_DATASETS"]), "$DANK_DATASETS"
    else:
        p, how = repo_root().parent / "shared" / "datasets", "the default ../shared/datasets"
    if not p.is_dir():
        raise DataDirError(
            f"data directory {str(p)!r} ({how}) does not exist; pass --data-dir DIR or set "
            "DANK_DATASETS to the directory holding the data sets of shared/datasets/MANIFEST.md"
        )
    return p


def derive_seed(seed: int, *keys: str | int) -> int:
    """A 32-bit seed determined by ``seed`` and ``keys`` (strings hashed by CRC-32)."""
    ints = [int(seed)] + [zlib.crc32(k.encode()) if isinstance(k, str) else int(k) for k in keys]
    return int(np.random.SeedSequence(ints).generate_state(1)[0])


@dataclass
class Dataset:
    """One data set: features ``X`` and labels/targets ``y``.

    For sets with an official split, ``X``/``y`` are the training file and ``X_test``/``y_test``
    the test file; otherwise ``X_test`` is None.
    """

    name: str
    task: str  # "classification" | "regression"
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    note: str = ""
    files: tuple[str, ...] = field(default_factory=tuple)

    @property
    def official(self) -> bool:
        return self.X_test is not None

    @property
    def n(self) -> int:
        return int(self.y.size + (0 if self.y_test is None else self.y_test.size))

    @property
    def d(self) -> int:
        return int(self.X.shape[1])


def _read_csv(path: Path, numeric_target: bool) -> tuple[np.ndarray, np.ndarray]:
    """Read a MANIFEST-format CSV: header row, numeric features, target in the last column."""
    if not path.is_file():
        raise DataDirError(f"data file {str(path)!r} is missing (see shared/datasets/MANIFEST.md)")
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", newline="") as fh:
        rows = list(csv.reader(fh))
    if len(rows) < 2:
        raise ValueError(f"{path.name}: no data rows")
    header = rows[0]
    if header[-1].strip() != "target":
        raise ValueError(f"{path.name}: the last column must be named 'target', got {header[-1]!r}")
    width = len(header)
    X = np.empty((len(rows) - 1, width - 1))
    y = []
    for i, row in enumerate(rows[1:], start=2):
        if len(row) != width:
            raise ValueError(f"{path.name}, line {i}: {len(row)} fields, expected {width}")
        try:
            X[i - 2] = [float(v) for v in row[:-1]]
        except ValueError as exc:
            raise ValueError(f"{path.name}, line {i}: non-numeric feature ({exc})") from None
        y.append(row[-1].strip())
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{path.name}: non-finite feature values")
    if numeric_target:
        try:
            yv = np.asarray([float(v) for v in y])
        except ValueError as exc:
            raise ValueError(f"{path.name}: non-numeric regression target ({exc})") from None
        if not np.all(np.isfinite(yv)):
            raise ValueError(f"{path.name}: non-finite regression target")
        return X, yv
    return X, np.asarray(y)


def load_dataset(name: str, data_dir: str | os.PathLike, *, spect_split: str = "official"
                 ) -> Dataset:
    """Load one data set of Table 1 or Table 6.

    Parameters
    ----------
    name : str
        A key of ``CLASSIFICATION`` or ``REGRESSION`` (:mod:`verification.study.experiments.data`).
    data_dir : path-like
        Directory with the files of ``MANIFEST.md``.
    spect_split : {"official", "random"}
        spect only: keep the official 80/187 split, or pool the 267 rows (random halves).

    Returns
    -------
    Dataset
        Features ``X`` and labels or targets ``y``; for a set with an official split, the
        training file in ``X``/``y`` and the test file in ``X_test``/``y_test``.

    Raises
    ------
    DataDirError
        If a data file is missing.
    ValueError
        If ``name`` or ``spect_split`` is unknown, or a file is malformed (named, with its
        line: wrong field count, non-numeric or non-finite feature, bad header or target).

    Notes
    -----
    Reads the CSV file(s) in Python, ``O(n d)`` time and memory (the largest set has a few
    thousand rows).
    """
    if spect_split not in ("official", "random"):
        raise ValueError(f"spect_split must be 'official' or 'random', got {spect_split!r}")
    d = Path(data_dir)
    if name in CLASSIFICATION:
        files, official = CLASSIFICATION[name]
        X, y = _read_csv(d / files[0], numeric_target=False)
        note = NOTES.get(name, "")
        if official:
            Xt, yt = _read_csv(d / files[1], numeric_target=False)
            if Xt.shape[1] != X.shape[1]:
                raise ValueError(f"{name}: train and test files have different feature counts")
            if name == "spect" and spect_split == "random":
                X, y = np.vstack([X, Xt]), np.concatenate([y, yt])
                note += "; official files pooled (267 rows), random halves"
                return Dataset(name, "classification", X, y, note=note, files=files)
            return Dataset(name, "classification", X, y, Xt, yt, note=note, files=files)
        return Dataset(name, "classification", X, y, note=note, files=files)
    if name in REGRESSION:
        X, y = _read_csv(d / REGRESSION[name], numeric_target=True)
        return Dataset(name, "regression", X, y, note=NOTES.get(name, ""),
                       files=(REGRESSION[name],))
    raise ValueError(
        f"unknown data set {name!r}; known: {', '.join([*CLASSIFICATION, *REGRESSION])}"
    )


def make_split(ds: Dataset, split: int, seed: int, *, stratify: bool = True):
    """Training and test part of repetition ``split``.

    Parameters
    ----------
    ds : Dataset
    split : int
        Repetition index (0-based).
    seed : int
        Global seed; the split's seed is ``derive_seed(seed, name, "split", split)``.
    stratify : bool
        Stratify the random halves by class (classification only).

    Returns
    -------
    Xtr, ytr, Xte, yte : ndarray
        Official sets return their fixed files for every ``split``.
    """
    if ds.official:
        return ds.X, ds.y, ds.X_test, ds.y_test
    idx = np.arange(ds.y.size)
    strat = ds.y if (stratify and ds.task == "classification") else None
    tr, te = train_test_split(
        idx, train_size=ds.y.size // 2, stratify=strat,
        random_state=derive_seed(seed, ds.name, "split", split),
    )
    tr, te = np.sort(tr), np.sort(te)
    return ds.X[tr], ds.y[tr], ds.X[te], ds.y[te]
