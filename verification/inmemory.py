"""The oracle on arrays in memory: :func:`certify_arrays` (no files, no subprocess).

The arrays are validated by the rules of the file format (:mod:`verification.formats`,
docs/validity.md) with the argument named in every error: a ``TypeError`` for the wrong kind of
object (a string, a boolean or complex array, a missing required argument), a ``ValueError`` for
a wrong value (shape, NaN, labels other than -1 / +1, outside the representable range).  Then
:func:`verification.oracle.certify` runs on the validated copies.
"""

from __future__ import annotations

import numbers

import numpy as np

from .formats import TASKS, check_representable, validate_kernel
from .formats.spec import F64_EPS
from .formats.values import check_labels, check_meta, check_range
from .oracle import CERT_TOL, certify

__all__ = ["certify_arrays", "instance_from_arrays", "solution_from_arrays"]


def _real(name: str, v, *, positive=False, nonneg=False) -> float:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(v).__name__}")
    return check_range(float(v), name, positive=positive, nonneg=nonneg)


def _array(name: str, v, ndim: int, shape=None) -> tuple[np.ndarray, float]:
    """A finite real array as float64 and the machine epsilon of its dtype (validity.md)."""
    if v is None:
        raise TypeError(f"{name} is required")
    a = np.asarray(v)
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real numeric array, got dtype {a.dtype}")
    if a.ndim != ndim or (shape is not None and a.shape != shape):
        want = f"shape {shape}" if shape is not None else f"{ndim}-D"
        raise ValueError(f"{name} must be {want}, got shape {a.shape}")
    eps = float(np.finfo(a.dtype).eps) if a.dtype.kind == "f" and a.itemsize < 8 else F64_EPS
    with np.errstate(over="ignore"):
        a = np.array(a, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinity")
    return a, eps


def _cluster_ids(labels, n: int) -> np.ndarray:
    lab = np.asarray(labels)
    if lab.ndim != 1 or lab.shape != (n,):
        raise ValueError(f"labels must be 1-D of length n = {n}, got shape {lab.shape}")
    if lab.dtype.kind == "O" or (lab.dtype.kind in "fc" and np.any(lab != lab)):
        raise ValueError("labels must not contain NaN or None (they are not equal to "
                         "themselves)")
    return np.unique(lab, return_inverse=True)[1].astype(np.int64).reshape(n)


def instance_from_arrays(K, y, *, C, eta, tau=0.0, task="svm", epsilon=None,
                         labels=None) -> dict:
    """A validated instance dict (the keys of :func:`verification.formats.load_instance`).

    Costs one ``eigvalsh`` of ``K`` (``O(n^3)`` time, ``O(n^2)`` memory: the PSD test).
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    Ka, eps = _array("K", K, 2)
    if Ka.shape[0] != Ka.shape[1]:
        raise ValueError(f"K must be square, got shape {Ka.shape}")
    Ks = validate_kernel(Ka, eps)
    n = Ks.shape[0]
    ya, _ = _array("y", y, 1, (n,))
    check_labels(ya, task, what="y")
    C, eta = _real("C", C, positive=True), _real("eta", eta, positive=True)
    tau = _real("tau", 0.0 if tau is None else tau, nonneg=True)
    if task == "decomposed" and tau != 0.0:
        raise ValueError(f"tau must be 0 for task 'decomposed' (P3 has no nuclear norm), got "
                         f"{tau!r}")
    if (epsilon is None) == (task == "svr"):
        raise (TypeError("epsilon is required for task 'svr'") if task == "svr" else
               ValueError(f"epsilon is only used by task 'svr', not {task!r}"))
    if (labels is None) == (task == "decomposed"):
        raise (TypeError("labels is required for task 'decomposed'") if task == "decomposed"
               else ValueError(f"labels is only used by task 'decomposed', not {task!r}"))
    inst = dict(task=task, n=n, K=Ks, y=ya, C=C, eta=eta, tau=tau, epsilon=None, labels=None,
                kernel=dict(source="K"), X=None)
    if task == "svr":
        inst["epsilon"] = _real("epsilon", epsilon, nonneg=True)
    if task == "decomposed":
        inst["labels"] = _cluster_ids(labels, n)
    check_representable(C, eta, float(np.max(np.abs(Ks))), n)
    return inst


def solution_from_arrays(task: str, n: int, *, alpha=None, alpha_hat=None, alpha_check=None,
                         bias=None, F=None, meta=None) -> dict:
    """A validated solution dict for an instance of ``task`` with ``n`` points (O(n^2))."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    given = dict(alpha=alpha, alpha_hat=alpha_hat, alpha_check=alpha_check)
    wanted = ("alpha_hat", "alpha_check") if task == "svr" else ("alpha",)
    extra = [k for k, v in given.items() if v is not None and k not in wanted]
    if extra:
        raise ValueError(f"{', '.join(extra)} not used by task {task!r} (give "
                         f"{' and '.join(wanted)})")
    sol = dict(task=task, bias=None, F=None, meta=None)
    for k in wanted:
        sol[k] = _array(k, given[k], 1, (n,))[0]
    if bias is not None:
        if task == "decomposed":
            raise ValueError("bias is not used by task 'decomposed' (P3 has no bias)")
        sol["bias"] = _real("bias", bias)
    if F is not None:
        sol["F"] = _array("F", F, 2, (n, n))[0]
    if meta is not None:
        sol["meta"] = check_meta(meta, what="meta")
    return sol


def certify_arrays(K, y, *, C, eta, tau=0.0, alpha=None, alpha_hat=None, alpha_check=None,
                   bias=None, F=None, task="svm", epsilon=None, labels=None, tol=CERT_TOL,
                   meta=None, reference=False) -> dict:
    """Certify a candidate solution given as arrays (P1 eq. mainrank, P2 eq. mainsvr, P3 eq.
    mainls), with the checks of :func:`verification.oracle.certify`.

    Parameters
    ----------
    K, y : array_like
        Kernel ``n x n`` (validity rule of docs/validity.md) and labels (-1 / +1) or targets.
    C, eta, tau, epsilon : float
        The instance's parameters (``epsilon`` for ``task="svr"`` only; ``tau = 0`` for P3).
    alpha, alpha_hat, alpha_check : array_like
        The point: ``alpha`` (svm, decomposed) or ``alpha_hat`` and ``alpha_check`` (svr).
    bias, F : optional
        The claimed bias (svm, svr) and inner minimiser ``F(alpha)`` (Lemma fbound).
    task : {"svm", "svr", "decomposed"}
    labels : array_like, optional
        Cluster of each point (decomposed only).
    tol : float
        Required certified relative gap.
    meta : str or dict, optional
        Free-form description of the solution, echoed in the report.
    reference : bool
        Also compute the informative distance to a reference solution (one more solve).

    Returns
    -------
    dict
        The report of :func:`~verification.oracle.certify`: ``certified``, ``failed``,
        ``reasons``, ``checks``, ``lower``, ``upper``, ``gap``, ``rel_gap``, ...

    Raises
    ------
    TypeError, ValueError
        Bad or missing input, naming the argument.

    Notes
    -----
    Cost: two dense symmetric eigendecompositions (``O(n^3)`` time, a few ``n x n`` arrays).
    """
    inst = instance_from_arrays(K, y, C=C, eta=eta, tau=tau, task=task, epsilon=epsilon,
                                labels=labels)
    sol = solution_from_arrays(task, inst["n"], alpha=alpha, alpha_hat=alpha_hat,
                               alpha_check=alpha_check, bias=bias, F=F, meta=meta)
    return certify(inst, sol, tol=tol, reference=reference)
