"""Oracle file formats (version 1) for DANK instances and solutions.

Files are ``.npz`` (read with ``allow_pickle=False``: object arrays are rejected) or ``.json``
(arrays as nested lists).  Every field is validated; errors raise :class:`FormatError` naming the
field.

Instance (``format = "dank-instance"``, ``version = 1``)
--------------------------------------------------------
=============  ==========================================================================
field          meaning
=============  ==========================================================================
format         the string ``"dank-instance"``
version        integer 1
task           ``"svm"`` (P1, eq. mainrank), ``"svr"`` (P2, eq. mainsvr, constraint
               ``1'(ah - ac) = 0``) or ``"decomposed"`` (P3, eq. mainls on
               ``Kbar = K o [labels_i = labels_j]``: box only, no bias, tau = 0)
K              (n, n) symmetric PSD kernel matrix -- or, instead of K:
X, kernel      (n, d) data and ``"gaussian"`` (needs ``sigma`` or ``gamma``:
               ``k = exp(-gamma ||x - x'||^2)``, ``gamma = 1 / (2 sigma^2)``) or ``"linear"``
y              (n,) labels in {-1, +1} (svm, decomposed) or real targets (svr)
C, eta         positive floats
tau            float >= 0 (must be 0 for decomposed; default 0 there)
epsilon        float >= 0 (svr only)
labels         (n,) integer partition (decomposed only)
=============  ==========================================================================

Solution (``format = "dank-solution"``, ``version = 1``)
--------------------------------------------------------
=============  ==========================================================================
format         the string ``"dank-solution"``
version        integer 1
task           as in the instance
alpha          (n,) dual vector (svm, decomposed)
alpha_hat,     (n,) each (svr)
alpha_check
bias           optional float (svm, svr): decision ``f = (F o K)(alpha * y) + bias``
F              optional (n, n): the claimed inner minimiser F(alpha)
=============  ==========================================================================
"""

from __future__ import annotations

import json
import os

import numpy as np

FORMAT_VERSION = 1
TASKS = ("svm", "svr", "decomposed")


class FormatError(ValueError):
    """Malformed instance or solution file."""


def _load_raw(path) -> dict:
    if not os.path.isfile(path):
        raise FormatError(f"{path}: no such file")
    if str(path).endswith(".json"):
        try:
            with open(path) as fh:
                raw = json.load(fh)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise FormatError(f"{path}: not valid JSON ({exc})") from exc
        if not isinstance(raw, dict):
            raise FormatError(f"{path}: top level must be a JSON object")
        return raw
    try:
        z = np.load(path, allow_pickle=False)
    except ValueError as exc:
        raise FormatError(f"{path}: contains pickled/object data, refused ({exc})") from exc
    except Exception as exc:  # noqa: BLE001 - any unreadable file is bad input
        raise FormatError(f"{path}: not a readable .npz ({exc})") from exc
    if not isinstance(z, np.lib.npyio.NpzFile):
        raise FormatError(f"{path}: a bare .npy array, expected an .npz archive of fields")
    out = {}
    with z:
        for k in z.files:
            try:
                v = z[k]
            except ValueError as exc:
                raise FormatError(f"{path}: field {k!r} is a pickled object array, "
                                  f"refused") from exc
            out[k] = v.item() if v.ndim == 0 else v
    return out


def _str(raw, name, path):
    if name not in raw:
        raise FormatError(f"{path}: missing field {name!r}")
    v = raw[name]
    if isinstance(v, np.ndarray):
        v = v.item() if v.size == 1 else v
    if not isinstance(v, str):
        raise FormatError(f"{path}: field {name!r} must be a string, got {type(v).__name__}")
    return v


def _float(raw, name, path, *, positive=False, nonneg=False, default=None):
    if name not in raw:
        if default is not None:
            return default
        raise FormatError(f"{path}: missing field {name!r}")
    v = raw[name]
    try:
        f = float(v)
    except (TypeError, ValueError) as exc:
        raise FormatError(f"{path}: field {name!r} must be a number, got {v!r}") from exc
    if not np.isfinite(f):
        raise FormatError(f"{path}: field {name!r} must be finite, got {f}")
    if positive and f <= 0:
        raise FormatError(f"{path}: field {name!r} must be > 0, got {f}")
    if nonneg and f < 0:
        raise FormatError(f"{path}: field {name!r} must be >= 0, got {f}")
    return f


def _array(raw, name, path, shape=None, ndim=None):
    if name not in raw:
        raise FormatError(f"{path}: missing field {name!r}")
    try:
        a = np.asarray(raw[name], dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise FormatError(f"{path}: field {name!r} must be a numeric array ({exc})") from exc
    if ndim is not None and a.ndim != ndim:
        raise FormatError(f"{path}: field {name!r} must have {ndim} dimension(s), "
                          f"got shape {a.shape}")
    if shape is not None and a.shape != shape:
        raise FormatError(f"{path}: field {name!r} must have shape {shape}, got {a.shape}")
    if not np.all(np.isfinite(a)):
        raise FormatError(f"{path}: field {name!r} contains non-finite values")
    return a


def _header(raw, path, kind):
    fmt = _str(raw, "format", path)
    if fmt != kind:
        raise FormatError(f"{path}: field 'format' must be {kind!r}, got {fmt!r}")
    try:
        ver = int(raw.get("version"))
    except (TypeError, ValueError) as exc:
        raise FormatError(f"{path}: field 'version' must be the integer {FORMAT_VERSION}") from exc
    if ver != FORMAT_VERSION:
        raise FormatError(f"{path}: unsupported version {ver} (this reader: {FORMAT_VERSION})")
    task = _str(raw, "task", path)
    if task not in TASKS:
        raise FormatError(f"{path}: field 'task' must be one of {TASKS}, got {task!r}")
    return task


def kernel_from_X(X, kernel, sigma=None, gamma=None):
    if kernel == "linear":
        return X @ X.T
    if kernel == "gaussian":
        if gamma is None:
            gamma = 1.0 / (2.0 * sigma**2)
        sq = np.sum(X * X, 1)
        return np.exp(-gamma * np.maximum(sq[:, None] + sq[None, :] - 2 * X @ X.T, 0.0))
    raise FormatError(f"kernel must be 'gaussian' or 'linear', got {kernel!r}")


def load_instance(path) -> dict:
    """Validated instance dict with keys task, K, y, C, eta, tau, epsilon, labels (maybe None)."""
    raw = _load_raw(path)
    task = _header(raw, path, "dank-instance")
    if "K" in raw:
        K = _array(raw, "K", path, ndim=2)
        n = K.shape[0]
        if K.shape != (n, n):
            raise FormatError(f"{path}: field 'K' must be square, got {K.shape}")
        if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(K).max())):
            raise FormatError(f"{path}: field 'K' must be symmetric")
        lmin = np.linalg.eigvalsh(0.5 * (K + K.T))[0]
        if lmin < -1e-8 * max(1.0, np.abs(K).max()) * n:
            raise FormatError(f"{path}: field 'K' must be PSD (min eigenvalue {lmin:.3g})")
    elif "X" in raw:
        X = _array(raw, "X", path, ndim=2)
        kernel = _str(raw, "kernel", path)
        sigma = _float(raw, "sigma", path, positive=True) if "sigma" in raw else None
        gamma = _float(raw, "gamma", path, positive=True) if "gamma" in raw else None
        if kernel == "gaussian" and sigma is None and gamma is None:
            raise FormatError(f"{path}: gaussian kernel needs field 'sigma' or 'gamma'")
        K = kernel_from_X(X, kernel, sigma, gamma)
        n = X.shape[0]
    else:
        raise FormatError(f"{path}: needs field 'K' or fields 'X' and 'kernel'")
    y = _array(raw, "y", path, shape=(n,))
    if task in ("svm", "decomposed"):
        if not np.all(np.isin(y, (-1.0, 1.0))):
            raise FormatError(f"{path}: field 'y' must contain only -1 and +1 for task {task!r}")
        if task == "svm" and len(np.unique(y)) < 2:
            raise FormatError(f"{path}: field 'y' must contain both classes for task 'svm'")
    inst = dict(task=task, K=0.5 * (K + K.T), y=y, C=_float(raw, "C", path, positive=True),
                eta=_float(raw, "eta", path, positive=True),
                tau=_float(raw, "tau", path, nonneg=True, default=0.0),
                epsilon=None, labels=None)
    if task == "svr":
        inst["epsilon"] = _float(raw, "epsilon", path, nonneg=True)
    if task == "decomposed":
        if inst["tau"] != 0.0:
            raise FormatError(f"{path}: field 'tau' must be 0 for task 'decomposed'")
        lab = _array(raw, "labels", path, shape=(n,))
        if not np.all(lab == np.round(lab)):
            raise FormatError(f"{path}: field 'labels' must be integers")
        inst["labels"] = lab.astype(int)
    return inst


def load_solution(path, n=None) -> dict:
    raw = _load_raw(path)
    task = _header(raw, path, "dank-solution")
    sol = dict(task=task, bias=None, F=None)
    shape = None if n is None else (n,)
    if task == "svr":
        sol["alpha_hat"] = _array(raw, "alpha_hat", path, shape=shape, ndim=1)
        sol["alpha_check"] = _array(raw, "alpha_check", path, shape=sol["alpha_hat"].shape)
        m = sol["alpha_hat"].size
    else:
        sol["alpha"] = _array(raw, "alpha", path, shape=shape, ndim=1)
        m = sol["alpha"].size
    if "bias" in raw and raw["bias"] is not None:
        if task == "decomposed":
            raise FormatError(f"{path}: field 'bias' is not allowed for task 'decomposed'")
        sol["bias"] = _float(raw, "bias", path)
    if "F" in raw and raw["F"] is not None:
        sol["F"] = _array(raw, "F", path, shape=(m, m))
    return sol


def _dump(path, d):
    if str(path).endswith(".json"):
        with open(path, "w") as fh:
            json.dump({k: (v.tolist() if isinstance(v, np.ndarray) else v)
                       for k, v in d.items() if v is not None}, fh)
    else:
        np.savez(path, **{k: np.asarray(v) for k, v in d.items() if v is not None})


def save_instance(path, *, task, y, C, eta, tau=0.0, K=None, X=None, kernel=None, sigma=None,
                  gamma=None, epsilon=None, labels=None):
    d = dict(format="dank-instance", version=FORMAT_VERSION, task=task, K=K, X=X, kernel=kernel,
             sigma=sigma, gamma=gamma, y=y, C=float(C), eta=float(eta), tau=float(tau),
             epsilon=epsilon, labels=labels)
    _dump(path, d)


def save_solution(path, *, task, alpha=None, alpha_hat=None, alpha_check=None, bias=None,
                  F=None):
    d = dict(format="dank-solution", version=FORMAT_VERSION, task=task, alpha=alpha,
             alpha_hat=alpha_hat, alpha_check=alpha_check,
             bias=None if bias is None else float(bias), F=F)
    _dump(path, d)
