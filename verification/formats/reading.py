"""Reading an instance or a solution file: every field checked, shapes matched, ``K`` validated.
"""

from __future__ import annotations

import numpy as np

from . import spec
from .containers import Fields, open_fields
from .fields import array, box, header, int_array, integer, meta, number, string
from .kernels import check_representable, kernel_from_X, validate_kernel
from .spec import (
    ALL_INSTANCE,
    ALL_SOLUTION,
    INSTANCE_FIELDS,
    KERNEL_FIELDS,
    KERNEL_PARAMS,
    KERNELS,
    SOLUTION_FIELDS,
    FormatError,
)
from .values import check_labels

__all__ = ["load_instance", "load_solution"]


def _kernel_of(f: Fields, max_array_bytes: int):
    """``(n, finish)``: the kernel's fields read and checked, the heavy part deferred:
    ``finish()`` returns ``(K, kinfo, X)`` (the PSD test of ``K``, or the dense kernel of
    ``X`` when ``8 n^2 <= max_array_bytes``)."""
    has_K, has_X = "K" in f, "X" in f
    if has_K == has_X:
        raise FormatError(f"{f.path}: needs exactly one of field 'K' or fields 'X' and 'kernel' "
                          f"(got {'both' if has_K else 'neither'})")
    if has_K:
        extra = sorted(set(f.names) & (KERNEL_FIELDS - {"K"}))
        if extra:
            raise FormatError(f"{f.path}: field(s) {', '.join(map(repr, extra))} need 'X'; "
                              "this instance gives 'K'")
        K, eps = array(f, "K", 2)

        def finish_K():
            try:
                return validate_kernel(K, eps), dict(source="K"), None
            except ValueError as exc:
                raise FormatError(f"{f.path}: field 'K': {exc}") from exc

        if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] == 0:
            finish_K()  # the shape error, named by the validity rule
        return K.shape[0], finish_K
    kernel = string(f, "kernel")
    if kernel not in KERNELS:
        raise FormatError(f"{f.path}: field 'kernel' must be one of {KERNELS}, got {kernel!r}")
    wanted = KERNEL_PARAMS[kernel]
    extra = sorted(set(f.names) & {"sigma", "gamma", "degree", "coef0"} - set(wanted))
    if extra:
        raise FormatError(f"{f.path}: field(s) {', '.join(map(repr, extra))} not used by the "
                          f"{kernel} kernel")
    params = {}
    if kernel == "gaussian":
        if ("sigma" in f) == ("gamma" in f):
            raise FormatError(f"{f.path}: the gaussian kernel needs exactly one of 'sigma' or "
                              "'gamma'")
        name = "sigma" if "sigma" in f else "gamma"
        params[name] = number(f, name, positive=True)
    elif kernel == "polynomial":
        params["degree"] = integer(f, "degree")
        if params["degree"] < 1:
            raise FormatError(f"{f.path}: field 'degree' must be >= 1, got {params['degree']}")
        params["gamma"] = number(f, "gamma", positive=True)
        params["coef0"] = number(f, "coef0", nonneg=True)
    X, _ = array(f, "X", 2)
    n, d = X.shape
    if n == 0:
        raise FormatError(f"{f.path}: field 'X' has no rows (n = 0)")
    if d == 0:
        raise FormatError(f"{f.path}: field 'X' has no columns (d = 0)")

    def finish_X():
        if 8 * n * n > max_array_bytes:
            # too large for a dense K: K stays None and the oracle certifies from X in row
            # blocks (dank_ref.scale_certificate); the limit is then on X itself (read above)
            return None, dict(source="X", kernel=kernel, blockwise=True, **params), X
        try:
            K = kernel_from_X(X, kernel, **params)
        except ValueError as exc:
            raise FormatError(f"{f.path}: {exc}") from exc
        return K, dict(source="X", kernel=kernel, **params), X

    return n, finish_X


def _kernel_scale(K, X, kinfo) -> float:
    """``max |K_ij|``; for a blockwise (``K = None``) kernel ``max_i K_ii`` (PSD kernels)."""
    if K is not None:
        return float(np.max(np.abs(K)))
    sq = np.einsum("ij,ij->i", X, X)
    if kinfo["kernel"] == "gaussian":
        return 1.0
    if kinfo["kernel"] == "linear":
        return float(np.max(sq))
    return float(np.max((kinfo["gamma"] * sq + kinfo["coef0"]) ** kinfo["degree"]))


def load_instance(path, *, max_array_bytes: int | None = None,
                  max_json_bytes: int | None = None, check_n=None) -> dict:
    """Read and validate an instance file.

    The format is in :mod:`verification.formats` and :doc:`docs/FORMATS.md </FORMATS>`. Every limit
    is checked before allocating; every field is read and checked before the heavy part: a kernel
    ``K`` is then checked by :func:`validate_kernel` (O(n^3) time, O(n^2) memory); a kernel given by
    ``X`` is computed (O(n^2 d)) when ``8 n^2 <= max_array_bytes``.

    Parameters
    ----------
    path : str or path-like
        An ``.npz`` archive or a JSON file (decided by content, not by extension).
    max_array_bytes, max_json_bytes : int, optional
        The limits of this read: the largest array a field may declare (and the largest dense
        ``n x n`` kernel computed from ``X``), the largest JSON file. Default
        :data:`~verification.formats.MAX_ARRAY_BYTES` (2 GiB) and
        :data:`~verification.formats.MAX_JSON_BYTES` (64 MiB).
    check_n : callable, optional
        Called as ``check_n(n)`` as soon as the number of points is known from the kernel's
        shape, before any other field is checked and before the heavy part (e.g. to refuse a
        solution of the wrong length first); what it raises propagates.

    Returns
    -------
    dict
        ``task``, ``n``, ``K`` (float64, symmetrised; ``None`` when ``X`` is given and the
        ``n x n`` kernel would exceed ``MAX_ARRAY_BYTES``: the oracle then works blockwise),
        ``y``, ``C`` (a float, or from version 2 on a float64 vector of ``n`` per-sample
        boxes), ``eta``, ``tau``,
        ``epsilon`` (svr, else None), ``labels`` (decomposed, else None), ``kernel`` (how K
        was given: ``source`` and the kernel's parameters), ``X`` (float64, or None when the
        file gives ``K``).

    Raises
    ------
    FormatError
        The file breaks the format; the message names the file, the field and the problem.

    Examples
    --------
    >>> import os, tempfile
    >>> from verification.formats import load_instance, save_instance
    >>> path = os.path.join(tempfile.mkdtemp(), "inst.json")
    >>> save_instance(path, task="svm", K=[[1.0, 0.0], [0.0, 1.0]], y=[1, -1], C=1.0,
    ...               eta=1.0, tau=0.0)
    >>> inst = load_instance(path)
    >>> inst["task"], inst["n"], inst["C"]
    ('svm', 2, 1.0)
    """
    if max_array_bytes is None:
        max_array_bytes = spec.MAX_ARRAY_BYTES
    f = open_fields(path, max_array_bytes, max_json_bytes)
    try:
        task = header(f, "dank-instance", INSTANCE_FIELDS, ALL_INSTANCE)
        n, finish = _kernel_of(f, max_array_bytes)
        if check_n is not None:
            check_n(n)
        y, _ = array(f, "y", 1)
        if y.shape != (n,):
            raise FormatError(f"{f.path}: field 'y' has {y.size} entries but the kernel is "
                              f"{n} x {n}")
        try:
            check_labels(y, task)
        except ValueError as exc:
            raise FormatError(f"{f.path}: {exc}") from exc
        C = box(f, n, integer(f, "version"))
        eta = number(f, "eta", positive=True)
        if task == "decomposed":
            tau = number(f, "tau", nonneg=True) if "tau" in f else 0.0
            if tau != 0.0:
                raise FormatError(f"{f.path}: field 'tau' must be 0 for task 'decomposed' "
                                  f"(P3 has no nuclear norm), got {tau!r}")
        else:
            tau = number(f, "tau", nonneg=True)
        inst = dict(task=task, n=n, y=y, C=C, eta=eta, tau=tau, epsilon=None, labels=None)
        if task == "svr":
            inst["epsilon"] = number(f, "epsilon", nonneg=True)
        if task == "decomposed":
            labels = int_array(f, "labels")
            if labels.shape != (n,):
                raise FormatError(f"{f.path}: field 'labels' has {labels.size} entries but the "
                                  f"kernel is {n} x {n}")
            inst["labels"] = labels
        K, kinfo, X = finish()  # the heavy part, once every other field is known good
        inst.update(K=K, kernel=kinfo, X=X)
        try:
            check_representable(C, eta, _kernel_scale(K, X, kinfo), n)
        except ValueError as exc:
            raise FormatError(f"{f.path}: {exc}") from exc
        return inst
    finally:
        f.close()


def load_solution(path, n: int | None = None, *, max_array_bytes: int | None = None,
                  max_json_bytes: int | None = None) -> dict:
    """Read and validate a solution file.

    The format is in :mod:`verification.formats` and :doc:`docs/FORMATS.md </FORMATS>`. Whether the
    solution fits its instance (the task, the feasibility) is checked by the certifier, not here.

    Parameters
    ----------
    path : str or path-like
        An ``.npz`` archive or a JSON file (decided by content, not by extension).
    n : int, optional
        The instance's size; when given, every array must have that length (``F``: n x n).
    max_array_bytes, max_json_bytes : int, optional
        The limits of this read, as in :func:`load_instance`.

    Returns
    -------
    dict
        ``task``, ``alpha`` (svm, decomposed) or ``alpha_hat`` and ``alpha_check`` (svr),
        ``bias``, ``F`` and ``meta`` (None when absent).

    Raises
    ------
    FormatError
        The file breaks the format; the message names the file, the field and the problem.

    Examples
    --------
    >>> import os, tempfile
    >>> from verification.formats import load_solution, save_solution
    >>> path = os.path.join(tempfile.mkdtemp(), "sol.npz")
    >>> save_solution(path, task="svm", alpha=[0.5, 0.5], bias=0.0)
    >>> sol = load_solution(path, n=2)
    >>> sol["alpha"].tolist(), sol["F"] is None
    ([0.5, 0.5], True)
    """
    f = open_fields(path, max_array_bytes, max_json_bytes)
    try:
        task = header(f, "dank-solution", SOLUTION_FIELDS, ALL_SOLUTION)
        sol = dict(task=task, bias=None, F=None, meta=None)
        names = ("alpha_hat", "alpha_check") if task == "svr" else ("alpha",)
        given = n is not None
        for name in names:
            v, _ = array(f, name, 1)
            if given and v.shape != (n,):
                raise FormatError(f"{f.path}: field {name!r} has {v.size} entries but the "
                                  f"instance has n = {n}")
            if n is None:
                n = v.size
            elif v.size != n:
                raise FormatError(f"{f.path}: field {name!r} has {v.size} entries, "
                                  f"{names[0]!r} has {n}")
            sol[name] = v
        if "bias" in f:
            sol["bias"] = number(f, "bias")
        if "F" in f:
            F, _ = array(f, "F", 2)
            if F.shape != (n, n):
                raise FormatError(f"{f.path}: field 'F' has shape {F.shape}, expected "
                                  f"({n}, {n})")
            sol["F"] = F
        if "meta" in f:
            sol["meta"] = meta(f)
        return sol
    finally:
        f.close()
