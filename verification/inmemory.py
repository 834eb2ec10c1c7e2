"""The oracle on arrays in memory: :func:`certify_arrays` (no files, no subprocess).

The arrays are validated by dank_ref's rule (:mod:`dank_ref.validation`, docs/validity.md,
the rule the file format applies too) with the argument named in every error: a ``TypeError``
for the wrong kind of object (a string, a boolean or complex array, a missing required
argument), a ``ValueError`` for a wrong value (shape, NaN, labels other than -1 / +1, outside
the representable range).  Then
:func:`verification.oracle.certify` runs on the validated copies.
"""

from __future__ import annotations

import numbers

import numpy as np

from dank_ref import validation as V

from .formats import TASKS
from .formats.values import check_meta, check_range
from .oracle import CERT_TOL, certify

__all__ = ["certify_arrays", "instance_from_arrays", "solution_from_arrays", "TAU_DEFAULT"]

TAU_DEFAULT = 0.01


def _bias(v) -> float:
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise TypeError(f"bias must be a real number, got {type(v).__name__}")
    return check_range(float(v), "bias")


def _shape(name: str, v, n: int):
    """``v`` as an array; a real one must have shape ``(n,)`` (the kit's messages name it)."""
    if v is None:
        raise TypeError(f"{name} is required")
    a = np.asarray(v) if not isinstance(v, (str, bytes)) else v
    if isinstance(a, np.ndarray) and a.dtype.kind in "iuf" and a.shape != (n,):
        raise ValueError(f"{name} must be shape {(n,)}, got shape {a.shape}")
    return a


def _vector(name: str, v, n: int) -> np.ndarray:
    return V.check_alpha(_shape(name, v, n), n, name)


def _matrix(name: str, v, n: int) -> np.ndarray:
    """A finite real ``n x n`` array as float64 (the claimed ``F``)."""
    a = np.asarray(v)
    if a.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be a real numeric array, got dtype {a.dtype}")
    if a.shape != (n, n):
        raise ValueError(f"{name} must be shape {(n, n)}, got shape {a.shape}")
    with np.errstate(over="ignore"):
        a = np.array(a, dtype=np.float64)
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinity")
    return a


def instance_from_arrays(K, y, *, C, eta, tau=None, task="svm", epsilon=None,
                         labels=None) -> dict:
    """A validated instance dict (the keys of :func:`verification.formats.load_instance`).

    Costs one ``eigvalsh`` of ``K`` (``O(n^3)`` time, ``O(n^2)`` memory: the PSD test).
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if K is None:
        raise TypeError("K is required")
    Ks = V.check_kernel(K)
    n = Ks.shape[0]
    y = _shape("y", y, n)
    ya = (V.check_targets(y, n) if task == "svr" else
          V.check_binary_labels(y, n, require_both=task == "svm"))
    C, eta = V.check_positive(C, "C"), V.check_positive(eta, "eta")
    if tau is None:  # the paper's 0.01, as every entry point; P3 has no nuclear norm
        tau = 0.0 if task == "decomposed" else TAU_DEFAULT
    tau = V.check_nonnegative(tau, "tau")
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
        inst["epsilon"] = V.check_nonnegative(epsilon, "epsilon")
    if task == "decomposed":
        inst["labels"] = V.check_partition(labels, n)
    V.check_range(C, eta, V.kernel_scale(Ks), n)
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
        sol[k] = _vector(k, given[k], n)
    if bias is not None:
        if task == "decomposed":
            raise ValueError("bias is not used by task 'decomposed' (P3 has no bias)")
        sol["bias"] = _bias(bias)
    if F is not None:
        sol["F"] = _matrix("F", F, n)
    if meta is not None:
        sol["meta"] = check_meta(meta, what="meta")
    return sol


def certify_arrays(K, y, *, C, eta, tau=None, alpha=None, alpha_hat=None, alpha_check=None,
                   bias=None, F=None, task="svm", epsilon=None, labels=None, tol=CERT_TOL,
                   meta=None, reference=False) -> dict:
    """Certify a candidate solution given as arrays in memory.

    The problems are P1 (``eq. mainrank``), P2 (``eq. mainsvr``) and P3 (``eq. mainls``);
    the checks are those of :func:`verification.oracle.certify` on files.

    Parameters
    ----------
    K, y : array_like
        Kernel ``n x n`` (validity rule of docs/validity.md) and labels (-1 / +1) or targets.
    C, eta, tau, epsilon : float
        The instance's parameters (``epsilon`` for ``task="svr"`` only).  ``tau=None`` means
        0.01 for svm and svr (the paper's value, every other entry point's default) and 0 for
        P3 (``task="decomposed"``, no nuclear norm; any other value is refused).
    alpha, alpha_hat, alpha_check : array_like
        The point: ``alpha`` (svm, decomposed) or ``alpha_hat`` and ``alpha_check`` (svr).
    bias, F : optional
        The claimed bias (svm, svr) and inner minimiser ``F(alpha)`` (Lemma fbound).
    task : {"svm", "svr", "decomposed"}, default "svm"
        The problem.
    labels : array_like, optional
        Cluster of each point (decomposed only).
    tol : float
        Required certified relative gap.
    meta : str or dict, optional
        Free-form description of the solution, echoed in the report.
    reference : bool
        Also run the optional cross-check by dank_fast (informative only, never part of the
        verdict; see :func:`verification.oracle.certify`).

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
    Cost: two dense symmetric eigendecompositions, the PSD test of ``K`` (once) and the
    certificate's (``O(n^3)`` time, a few ``n x n`` arrays).

    Examples
    --------
    >>> import numpy as np
    >>> from verification import certify_arrays
    >>> rep = certify_arrays(np.eye(2), np.array([1.0, -1.0]), C=1.0, eta=1e6, tau=0.0,
    ...                      alpha=np.array([1.0, 1.0]))
    >>> rep["certified"], bool(rep["rel_gap"] <= 1e-6)
    (True, True)
    """
    inst = instance_from_arrays(K, y, C=C, eta=eta, tau=tau, task=task, epsilon=epsilon,
                                labels=labels)
    sol = solution_from_arrays(task, inst["n"], alpha=alpha, alpha_hat=alpha_hat,
                               alpha_check=alpha_check, bias=bias, F=F, meta=meta)
    return certify(inst, sol, tol=tol, reference=reference)
