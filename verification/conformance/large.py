"""The large test set (version 1): the paper's scale, given by features, generated on demand.

Five seeded instances at the sizes of the paper's headline experiments (ijcnn1 exact, covtype
decomposed), each given by features ``X`` and a Gaussian kernel, so that the oracle certifies
them in row blocks (:mod:`dank_ref.scale_certificate`) without an ``n x n`` kernel. They are
not stored in the repository: :func:`write_large` generates them (numpy only: elementwise
operations on one ``numpy.random.Generator`` stream, no BLAS, so the bytes do not depend on the
machine) into a work directory. Each instance's sha256, taken over its fields in memory
(:func:`content_sha256`, before its file is written; the file is then written once and read
once), is compared with ``large.json`` beside this module; any change of an instance is a new
:data:`LARGE_VERSION`.

=================================  ========  ===  ========  =======  ==========  ======
id                                 task      d    clusters  file     generation  limit
=================================  ========  ===  ========  =======  ==========  ======
``large1_svm_n20000``              svm       22   -         3.7 MB   0.2 s       600 s
``large1_svm_n50000``              svm       22   -         9.2 MB   0.4 s       1800 s
``large1_svr_n20000``              svr       6    -         1.1 MB   0.1 s       1800 s
``large1_decomposed_n200000``      P3        54   100       90 MB    6 s         1800 s
``large1_decomposed_n464810``      P3        54   200       208 MB   17 s        3600 s
=================================  ========  ===  ========  =======  ==========  ======

(file: the ``.npz`` written; generation: the arrays, their sha256 and the file, on 2 cores
shared with other jobs at load 6 to 10, ``benchmarks/results/scale.json``; limit: the
instance's own time limit in the kit, see :data:`TIME_LIMITS`.)

Data (``rng = numpy.random.default_rng(seed)``, one seed per instance):

* ``svm`` (P1, ijcnn1-like): 22 features, exactly ``n // 10`` points of class +1 (class ratio
  1:9). Ten informative features: each class has two clusters at vertices of
  ``{-1, +1}^10`` (``x = vertex + N(0, I)``), 2% of the points drawn at a cluster of the other
  class (label noise); four redundant features (fixed random combinations of the informative
  ones); eight noise features ``N(0, 1)``; every column standardised. Gaussian kernel
  ``sigma = 4``, ``C = 1``, ``tau = 0.01``, ``eta`` near the paper's rule ``||a_SVM||^2`` (a
  plain SVM on the same data at that size).
* ``svr`` (P2): ``x`` uniform on ``[-1, 1]^6``, ``y = sin(pi x_1) + x_2^2 / 2 + 0.3 x_3 x_4 +
  0.02 N(0, 1)``; Gaussian ``sigma = 1``, ``C = 10``, ``epsilon = 0.1``, ``tau = 0.01``,
  ``eta`` near ``||ah - ac||^2`` of the plain SVR.
* ``decomposed`` (P3, covtype-like): ``k`` clusters (each point's cluster uniform at random;
  ``labels`` is the cluster), centres uniform on ``[0.2, 0.8]^54``; in cluster ``c`` the
  points lie near a 3-dimensional plane, ``x = centre_c + A_c' z + 0.02 N(0, I_54)`` with
  ``z ~ N(0, I_3)`` and ``A_c`` a random ``3 x 54`` matrix of entries ``N(0, 0.15^2 / 3)``;
  ``y = sign(v_c'z + t_c)`` (random ``v_c``, offset ``t_c ~ N(0, 0.3^2)``), 3% of the labels
  flipped. Gaussian ``gamma = 0.5``, ``C = 32``, ``eta`` near the paper's rule
  (``solve_decomposed(eta="svm")``).

``shrink`` (:func:`specs`, :func:`write_large`) divides every ``n`` by an integer, keeping the
recipe, the features and the cluster counts: the same generator at a small size (ids then name
the smaller ``n``; the manifest's checksums hold for ``shrink = 1`` only).
"""

from __future__ import annotations

import functools
import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..formats import save_instance
from ._manifest import manifest_problems, read_manifest, write_manifest

__all__ = ["LARGE_VERSION", "MANIFEST", "TIME_LIMITS", "LargeSpec", "LargeSetError", "specs",
           "recipe", "content_sha256", "write_large", "load_manifest", "large_problems"]

LARGE_VERSION = 1
MANIFEST = os.path.join(os.path.dirname(__file__), "large.json")

#: each instance's time limit in the kit, seconds (5 to 16 x dank_fast's time in the kit on 2
#: shared cores, benchmarks/results/scale.json); ``--timeout`` replaces them all
TIME_LIMITS = {"svm_n20000": 600.0, "svm_n50000": 1800.0, "svr_n20000": 1800.0,
               "decomposed_n200000": 1800.0, "decomposed_n464810": 3600.0}


class LargeSetError(RuntimeError):
    """The generated large set differs from its manifest (a changed generator or random
    stream): the message lists the differences."""


@dataclass(frozen=True)
class LargeSpec:
    """One instance of the large set: ``id``, ``family`` (``p1``, ``p2``, ``p3``), a one-line
    ``description``, ``task``, ``n``, ``d``, ``time_limit`` (seconds) and ``make``, which
    returns the instance's fields (keyword arguments of
    :func:`verification.formats.save_instance`)."""

    id: str
    family: str
    description: str
    task: str
    n: int
    d: int
    time_limit: float
    make: Callable[[], dict]


# ---------------------------------------------------------------------------------------------
# data (elementwise numpy only: the same bytes on every machine)
# ---------------------------------------------------------------------------------------------
_VERTICES = np.array([[1, 1, 1, 1, 1, -1, -1, -1, -1, -1], [1, -1, 1, -1, 1, -1, 1, -1, 1, -1],
                      [-1, -1, 1, 1, -1, -1, 1, 1, -1, 1], [1, 1, -1, -1, -1, 1, 1, -1, -1, 1]],
                     dtype=np.float64)


def _standardise(X: np.ndarray) -> np.ndarray:
    for j in range(X.shape[1]):
        col = X[:, j]
        mean = col.sum() / col.size
        col -= mean
        col /= np.sqrt((col * col).sum() / col.size)
    return X


def _p1(n: int, seed: int, eta: float) -> dict:
    """ijcnn1-like P1 (module docstring)."""
    rng = np.random.default_rng(seed)
    y = -np.ones(n)
    y[rng.permutation(n)[: n // 10]] = 1.0
    vert = _VERTICES * rng.choice([-1.0, 1.0], size=10)
    cls = (y > 0).astype(np.int64)
    cls = np.where(rng.random(n) < 0.02, 1 - cls, cls)
    Xi = rng.standard_normal((n, 10)) + vert[2 * cls + rng.integers(0, 2, n)]
    B = rng.uniform(-1.0, 1.0, (10, 4))
    Xr = np.zeros((n, 4))
    for i in range(10):
        Xr += Xi[:, i:i + 1] * B[i]
    X = _standardise(np.concatenate([Xi, Xr, rng.standard_normal((n, 8))], axis=1))
    return dict(task="svm", X=X, kernel="gaussian", sigma=4.0, y=y, C=1.0, eta=eta, tau=0.01)


def _p2(n: int, seed: int, eta: float) -> dict:
    """P2 on a smooth function of six features (module docstring)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1.0, 1.0, (n, 6))
    y = (np.sin(np.pi * X[:, 0]) + 0.5 * X[:, 1] ** 2 + 0.3 * X[:, 2] * X[:, 3]
         + 0.02 * rng.standard_normal(n))
    return dict(task="svr", X=X, kernel="gaussian", sigma=1.0, y=y, C=10.0, eta=eta, tau=0.01,
                epsilon=0.1)


def _p3(n: int, k: int, seed: int, eta: float) -> dict:
    """covtype-like P3 with its clusters (module docstring)."""
    rng = np.random.default_rng(seed)
    d, r = 54, 3
    labels = rng.integers(0, k, n)
    centre = rng.uniform(0.2, 0.8, (k, d))
    Z = rng.standard_normal((n, r))
    A = rng.standard_normal((k, r, d)) * (0.15 / np.sqrt(r))
    X = rng.standard_normal((n, d)) * 0.02
    for j in range(d):
        X[:, j] += centre[labels, j]
        for m in range(r):
            X[:, j] += A[labels, m, j] * Z[:, m]
    v = rng.standard_normal((k, r))
    t = 0.3 * rng.standard_normal(k)[labels]
    for m in range(r):
        t += v[labels, m] * Z[:, m]
    y = np.where(t > 0, 1.0, -1.0)
    flip = rng.random(n) < 0.03
    y[flip] = -y[flip]
    return dict(task="decomposed", X=X, kernel="gaussian", gamma=0.5, y=y, C=32.0, eta=eta,
                labels=labels.astype(np.int64))


def recipe(family: str, n: int, seed: int, eta: float, clusters: int | None = None) -> dict:
    """The fields of an instance made by a family's recipe at any size (module docstring):
    ``family`` ``"p1"``, ``"p2"`` or ``"p3"`` (with ``clusters``). The set's own instances are
    :func:`specs`; this serves benchmarks at other sizes (``benchmarks/bench_scale.py``)."""
    if family == "p1":
        return _p1(n, seed, eta)
    if family == "p2":
        return _p2(n, seed, eta)
    if family == "p3" and clusters:
        return _p3(n, clusters, seed, eta)
    raise ValueError(f"family must be p1, p2 or p3 (with clusters), got {family!r}")


def specs(shrink: int = 1) -> list[LargeSpec]:
    """The instances of the large set, in order (nothing is generated until ``make()``).

    Parameters
    ----------
    shrink : int, optional
        Divide every ``n`` by this integer (default 1: the set as published); the recipe,
        ``d``, the cluster counts, the parameters and the seeds stay. A small ``shrink`` set
        exercises the generator and the checksums in seconds (the manifest holds for 1 only).

    Returns
    -------
    list of LargeSpec

    Raises
    ------
    ValueError
        If ``shrink`` is not an integer from 1 to 1000.
    """
    if isinstance(shrink, bool) or not isinstance(shrink, (int, np.integer)) \
            or not 1 <= shrink <= 1000:
        raise ValueError(f"shrink must be an integer from 1 to 1000, got {shrink!r}")
    rows = [  # (key, family, description, task, n, d, seed, eta, clusters)
        ("svm_n20000", "p1", "P1 ijcnn1-like, 22 features, class ratio 1:9", "svm", 20000, 22,
         1020, 1500.0, None),
        ("svm_n50000", "p1", "P1 ijcnn1-like, 22 features, class ratio 1:9", "svm", 50000, 22,
         1050, 3700.0, None),
        ("svr_n20000", "p2", "P2 smooth function of 6 features", "svr", 20000, 6, 2020,
         5800.0, None),
        ("decomposed_n200000", "p3", "P3 54 features, 100 clusters", "decomposed", 200000,
         54, 3200, 3e7, 100),
        ("decomposed_n464810", "p3", "P3 covtype-sized, 54 features, 200 clusters",
         "decomposed", 464810, 54, 3464, 7e7, 200),
    ]
    out = []
    for key, fam, what, task, n, d, seed, eta, k in rows:
        m = n // int(shrink)
        if fam == "p1":
            make = functools.partial(_p1, m, seed, eta)
        elif fam == "p2":
            make = functools.partial(_p2, m, seed, eta)
        else:
            make = functools.partial(_p3, m, k, seed, eta)
        ident = f"large{LARGE_VERSION}_{task}_n{m}"
        out.append(LargeSpec(ident, fam, what, task, m, d, TIME_LIMITS[key], make))
    return out


def content_sha256(fields: dict) -> str:
    """sha256 of an instance's fields as generated: every field in name order, a scalar as its
    ``repr``, an array as its dtype, shape and little-endian C-order bytes (so generating an
    instance is checked without reading its file back; ``O(size)`` time, no copy for
    float64/int64 arrays)."""
    h = hashlib.sha256()
    for name in sorted(fields):
        v = fields[name]
        h.update(name.encode() + b"\0")
        if isinstance(v, np.ndarray):
            a = np.ascontiguousarray(v, dtype=v.dtype.newbyteorder("<"))
            h.update(f"{a.dtype.str}{a.shape}".encode() + b"\0")
            h.update(memoryview(a).cast("B"))
        else:
            h.update(repr(v).encode() + b"\0")
    return h.hexdigest()


def load_manifest(path: str = MANIFEST) -> dict:
    """The committed manifest: ``{"large_version": 1, "instances": {id: entry}}``."""
    return read_manifest(path)


def large_problems(entries: dict[str, dict], path: str = MANIFEST) -> list[str]:
    """How freshly generated ``entries`` differ from the manifest at ``path`` (empty: none);
    only the instances in ``entries`` are compared, by their sha256."""
    return manifest_problems(entries, path, "large_version", LARGE_VERSION, field="sha256",
                             complete=False)


def write_large(directory: str, ids=None, shrink: int = 1,
                manifest: str | None = MANIFEST) -> dict[str, dict]:
    """Generate instances of the large set, check each, write each as ``<id>.npz``.

    Parameters
    ----------
    directory : str
        Where the files go (existing; files of the same names are replaced).
    ids : iterable of str, optional
        Only these instances (default: all five); an unknown id is a ``ValueError``.
    shrink : int, optional
        As in :func:`specs` (a small set for tests; then no manifest applies).
    manifest : str or None, optional
        Compare each instance's sha256 with this manifest before writing its file (default
        ``large.json`` beside this module; ``None``: no comparison). Ignored when ``shrink``
        is not 1.

    Returns
    -------
    dict
        ``{id: {family, description, task, n, d, clusters, time_limit, sha256, bytes}}`` in
        set order (``bytes``: the file's size).

    Raises
    ------
    ValueError
        An unknown id or a bad ``shrink``.
    LargeSetError
        An instance differs from the manifest (nothing of it is written).

    Notes
    -----
    One instance in memory at a time: at most about 0.5 GB (the covtype-sized ``X``, 201 MB,
    and its temporaries), 6 to 20 s for all five; disk 0.31 GB for all five.
    """
    table = specs(shrink)
    known = [s.id for s in table]
    wanted = known if ids is None else list(ids)
    bad = [i for i in wanted if i not in known]
    if bad:
        raise ValueError(f"no large instance {bad[0]!r} (the large set has {', '.join(known)})")
    check = manifest is not None and shrink == 1
    entries = {}
    for s in table:
        if s.id not in wanted:
            continue
        fields = s.make()
        e = dict(family=s.family, description=s.description, task=s.task, n=s.n, d=s.d,
                 clusters=(int(fields["labels"].max()) + 1 if s.task == "decomposed"
                           else None), time_limit=s.time_limit, sha256=content_sha256(fields))
        if check:
            problems = large_problems({s.id: e}, manifest)
            if problems:
                raise LargeSetError("; ".join(problems))
        path = os.path.join(directory, f"{s.id}.npz")
        save_instance(path, **fields)
        e["bytes"] = os.path.getsize(path)
        entries[s.id] = e
        del fields
    return entries


def main() -> None:
    """Regenerate ``large.json`` (``python -m verification.conformance.large``; writes the
    five files into a temporary directory, 0.31 GB)."""
    with tempfile.TemporaryDirectory(prefix="dank-large-") as tmp:
        entries = write_large(tmp, manifest=None)
    write_manifest(MANIFEST, "large_version", LARGE_VERSION, entries)


if __name__ == "__main__":
    main()
