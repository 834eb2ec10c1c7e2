"""Writing instance and solution files: JSON, or a deterministic ``.npz`` (same bytes each time).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import secrets
import zipfile

import numpy as np

from .spec import BOX_VECTOR_VERSION
from .values import check_finite, check_meta

__all__ = ["save_instance", "save_solution", "path_is_json"]


def _npz_value(v):
    if isinstance(v, str):
        return np.array(v)
    if isinstance(v, (bool, np.bool_)):
        raise TypeError("booleans are not part of the format")
    if isinstance(v, (int, np.integer)):
        return np.array(int(v), dtype=np.int64)
    return np.asarray(v)


def _json_value(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    return v


def path_is_json(path) -> bool:
    """The writers' rule: JSON when the path ends in ``.json``, else ``.npz``."""
    return os.fspath(path).endswith(".json")


def _write(path, fields: dict) -> None:
    """Write the file atomically: a temporary file beside ``path``, renamed over it once
    complete (an error or an interruption leaves no half-written ``path``)."""
    fields = {k: v for k, v in fields.items() if v is not None}
    path = os.fspath(path)
    tmp = f"{path}.{os.getpid()}.{secrets.token_hex(4)}.part"
    # created as open(path, "w") would create it (mode 0o666 less the umask), never reused
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as raw:
            if path_is_json(path):
                text = json.dumps({k: _json_value(v) for k, v in fields.items()},
                                  allow_nan=False)
                raw.write(text.encode("utf-8"))
            else:
                with zipfile.ZipFile(raw, "w", compression=zipfile.ZIP_STORED) as zf:
                    for k, v in fields.items():
                        buf = io.BytesIO()
                        np.lib.format.write_array(buf, _npz_value(v), allow_pickle=False)
                        info = zipfile.ZipInfo(f"{k}.npy", date_time=(1980, 1, 1, 0, 0, 0))
                        info.external_attr = 0o644 << 16
                        zf.writestr(info, buf.getvalue())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise



def save_instance(path, *, task, y, C, eta, tau=None, K=None, X=None, kernel=None, sigma=None,
                  gamma=None, degree=None, coef0=None, epsilon=None, labels=None) -> None:
    """Write an instance file, JSON if ``path`` ends in ``.json``, else a deterministic ``.npz``.

    Give exactly one of ``K`` or ``X`` (with ``kernel`` and its parameters).  ``labels`` is
    stored as an integer array.  ``X`` must be finite (the reader's rule, checked before
    anything is written); no other validation: read the file back with :func:`load_instance`
    to check it.  Fields left at None are omitted.  The ``.npz`` has fixed timestamps and
    stored (uncompressed) members, so the same fields give the same bytes.

    Parameters
    ----------
    path : str or path-like
        The file to write (overwritten).
    task : {"svm", "svr", "decomposed"}
        The problem (:data:`TASKS`).
    y : array_like of shape (n,)
        Labels -1 or +1 (svm, decomposed) or real targets (svr).
    C : float or array_like of shape (n,)
        The box bound, ``> 0``, or one box per point (written as format version 2; a
        scalar ``C`` writes version 1, byte for byte as version 1 specifies).
    eta : float
        The regulariser weight, ``> 0``.
    tau : float, optional
        The nuclear-norm weight (required for svm and svr; 0 or omitted for decomposed).
    K : array_like of shape (n, n), optional
        The kernel matrix.
    X : array_like of shape (n, d), optional
        Data from which the reader computes the kernel.
    kernel : {"gaussian", "linear", "polynomial"}, optional
        The kernel function applied to ``X`` (:data:`KERNELS`).
    sigma, gamma, degree, coef0 : float or int, optional
        The kernel's parameters (gaussian: one of ``sigma`` and ``gamma``; polynomial:
        ``degree``, ``gamma`` and ``coef0``).
    epsilon : float, optional
        The tube half-width (svr only).
    labels : array_like of int, shape (n,), optional
        The cluster of each point (decomposed only).

    Raises
    ------
    TypeError
        A boolean value written to ``.npz`` (not part of the format).
    ValueError
        Neither or both of ``K`` and ``X``; ``X`` with NaN or infinity (the message names the
        field and the first bad index, as :func:`load_instance` does).
    """
    if (K is None) == (X is None):
        raise ValueError("give exactly one of K or X")
    vector_C = np.ndim(C) > 0
    fields = dict(format="dank-instance", version=BOX_VECTOR_VERSION if vector_C else 1,
                  task=task)
    if K is not None:
        fields["K"] = np.asarray(K)
    else:
        with np.errstate(over="ignore"):  # as the reader converts it: overflow becomes inf
            X = np.asarray(X, dtype=np.float64)
        check_finite(X, "field 'X'")
        fields.update(X=X, kernel=kernel,
                      sigma=None if sigma is None else float(sigma),
                      gamma=None if gamma is None else float(gamma),
                      degree=None if degree is None else int(degree),
                      coef0=None if coef0 is None else float(coef0))
    fields.update(y=np.asarray(y, dtype=np.float64),
                  C=np.asarray(C, dtype=np.float64) if vector_C else float(C), eta=float(eta),
                  tau=None if tau is None else float(tau),
                  epsilon=None if epsilon is None else float(epsilon),
                  labels=None if labels is None else np.asarray(labels).astype(np.int64))
    _write(path, fields)


def save_solution(path, *, task, alpha=None, alpha_hat=None, alpha_check=None, bias=None,
                  F=None, meta=None) -> None:
    """Write a solution file, JSON if ``path`` ends in ``.json``, else a deterministic ``.npz``.

    Fields left at None are omitted; no validation beyond the container: read it back with
    :func:`load_solution` to check it.

    Parameters
    ----------
    path : str or path-like
        The file to write (overwritten).
    task : {"svm", "svr", "decomposed"}
        The problem (:data:`TASKS`).
    alpha : array_like of shape (n,), optional
        The dual vector (svm, decomposed).
    alpha_hat, alpha_check : array_like of shape (n,), optional
        The dual pair (svr).
    bias : float, optional
        The bias of the decision function (svm, svr).
    F : array_like of shape (n, n), optional
        The claimed inner minimiser ``F(alpha)``.
    meta : str or dict, optional
        Free-form description (which solver, its settings, ...); an ``.npz`` stores a dict
        as its JSON text.

    Raises
    ------
    TypeError
        A ``meta`` that is neither a string nor a JSON object (dict with string keys), or a
        boolean value written to ``.npz``.
    ValueError
        A ``meta`` longer than 65,536 characters of JSON text.
    """
    if meta is not None:
        meta = check_meta(meta, what="meta")
        if not path_is_json(path) and isinstance(meta, dict):
            meta = json.dumps(meta, sort_keys=True)
    def arr(v):
        return None if v is None else np.asarray(v, dtype=np.float64)

    # a solution's fields did not change in version 2: it is written as version 1
    _write(path, dict(format="dank-solution", version=1, task=task,
                      alpha=arr(alpha), alpha_hat=arr(alpha_hat), alpha_check=arr(alpha_check),
                      bias=None if bias is None else float(bias), F=arr(F), meta=meta))
