"""The oracle on arrays in memory: :func:`verification.certify_arrays` (no files, no subprocess).

The arrays are validated by dank_ref's rule (:mod:`dank_ref.validation`,
:doc:`docs/validity.md </validity>`, the rule the file format applies too) with the argument named
in every error: a ``TypeError`` for the wrong kind of object (a string, a boolean or complex array,
a missing required argument), a ``ValueError`` for a wrong value (shape, NaN, labels other than
-1 / +1, outside the representable range). Then :func:`verification.oracle.certify` runs on the
validated copies.
"""

from __future__ import annotations

import numbers

import numpy as np

from dank_ref import validation as V
from dank_ref.kernels import kernel_from_X

from .formats import KERNELS, MAX_ARRAY_BYTES, TASKS
from .formats.spec import KERNEL_PARAMS
from .formats.values import check_meta, check_range
from .oracle import CERT_TOL, certify, feature_kernel

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


def _features(X) -> np.ndarray:
    """``X`` as a finite float64 ``n x d`` array (``n, d >= 1``); a non-finite entry is named by
    its index, as the file route names it."""
    if isinstance(X, (str, bytes)):
        raise TypeError(f"X must be a real numeric array, got {type(X).__name__}")
    a = np.asarray(X)
    if a.dtype.kind not in "iuf":
        raise TypeError(f"X must be a real numeric array, got dtype {a.dtype}")
    if a.ndim != 2:
        raise ValueError(f"X must be a 2-D array (n points x d features), got shape {a.shape}")
    if a.shape[0] == 0:
        raise ValueError("X has no rows (n = 0)")
    if a.shape[1] == 0:
        raise ValueError("X has no columns (d = 0)")
    with np.errstate(over="ignore"):
        a = np.ascontiguousarray(a, dtype=np.float64)
    ok = np.isfinite(a).all(axis=1)
    if not ok.all():
        i = int(np.argmin(ok))
        j = int(np.argmin(np.isfinite(a[i])))
        raise ValueError(f"X contains NaN or infinity (at index ({i}, {j}): row {i} of "
                         f"{a.shape[0]})")
    return a


def _kernel_params(kernel, sigma, gamma, degree, coef0) -> dict:
    """The kernel's parameters by the file format's rule (:doc:`docs/FORMATS.md </FORMATS>`): the
    kernel's own parameters only, each valid."""
    if not isinstance(kernel, str):
        raise TypeError(f"kernel must be a string, one of {KERNELS} (required with X), got "
                        f"{type(kernel).__name__}")
    if kernel not in KERNELS:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    given = {k: v for k, v in dict(sigma=sigma, gamma=gamma, degree=degree,
                                   coef0=coef0).items() if v is not None}
    extra = sorted(set(given) - set(KERNEL_PARAMS[kernel]))
    if extra:
        raise ValueError(f"{', '.join(extra)} not used by the {kernel} kernel")
    if kernel == "gaussian":
        if len(given) != 1:
            raise ValueError("the gaussian kernel needs exactly one of sigma or gamma")
        (name, v), = given.items()
        return {name: V.check_positive(v, name)}
    if kernel == "linear":
        return {}
    missing = [k for k in ("degree", "gamma", "coef0") if k not in given]
    if missing:
        raise TypeError(f"{', '.join(missing)} required by the polynomial kernel")
    if isinstance(degree, (bool, np.bool_)) or not isinstance(degree, numbers.Integral):
        raise TypeError(f"degree must be an integer, got {type(degree).__name__}")
    if int(degree) < 1:
        raise ValueError(f"degree must be >= 1, got {int(degree)}")
    return dict(degree=int(degree), gamma=V.check_positive(gamma, "gamma"),
                coef0=V.check_nonnegative(coef0, "coef0"))


def instance_from_arrays(K=None, y=None, *, C, eta, tau=None, task="svm", epsilon=None,
                         labels=None, X=None, kernel=None, sigma=None, gamma=None, degree=None,
                         coef0=None, max_dense_bytes=None) -> dict:
    """A validated instance dict (the keys of :func:`verification.formats.load_instance`).

    The kernel is given as ``K`` or by features: ``X`` with ``kernel`` and its parameters
    (exactly one of the two; parameters as in :func:`verification.certify_arrays`).  Everything
    else is checked before the kernel is validated or formed.

    Costs: ``K``: one ``eigvalsh`` (``O(n^3)`` time, ``O(n^2)`` memory: the PSD test).
    ``X`` with ``8 n^2 <= max_dense_bytes``: the dense kernel is formed as the file route forms
    it (``O(n^2 d)`` time, ``O(n^2)`` memory, no PSD test: PSD by construction).  Beyond:
    ``K`` stays ``None`` (the oracle's blockwise route), ``O(n d)`` time and memory.
    """
    inst, finish = _instance(K, y, C=C, eta=eta, tau=tau, task=task, epsilon=epsilon,
                             labels=labels, X=X, kernel=kernel, sigma=sigma, gamma=gamma,
                             degree=degree, coef0=coef0, max_dense_bytes=max_dense_bytes)
    finish()
    return inst


def _instance(K, y, *, C, eta, tau, task, epsilon, labels, X, kernel, sigma, gamma, degree,
              coef0, max_dense_bytes):
    """The cheap checks of :func:`instance_from_arrays`; returns the instance and the function
    that does the heavy part (the PSD test of ``K`` or the dense kernel of ``X``) in place."""
    if task not in TASKS:
        raise ValueError(f"task must be one of {TASKS}, got {task!r}")
    if (K is None) == (X is None):
        raise (TypeError("K or X is required (the kernel matrix, or the features with kernel)")
               if K is None else ValueError("give exactly one of K or X, not both"))
    if max_dense_bytes is None:
        max_dense_bytes = MAX_ARRAY_BYTES
    if isinstance(max_dense_bytes, (bool, np.bool_)) or \
            not isinstance(max_dense_bytes, numbers.Integral) or max_dense_bytes < 0:
        raise ValueError(f"max_dense_bytes must be an integer >= 0, got {max_dense_bytes!r}")
    if K is not None:
        kinfo = dict(source="K")
        unused = [k for k, v in dict(kernel=kernel, sigma=sigma, gamma=gamma, degree=degree,
                                     coef0=coef0).items() if v is not None]
        if unused:
            raise ValueError(f"{', '.join(unused)} need X; this instance gives K")
        Ka = None if isinstance(K, (str, bytes)) else np.asarray(K)
        if Ka is None or Ka.dtype.kind not in "iuf" or Ka.ndim != 2 \
                or Ka.shape[0] != Ka.shape[1]:
            V.check_kernel(K)  # raises the message of the file route's rule
        n = Ka.shape[0]
    else:
        params = _kernel_params(kernel, sigma, gamma, degree, coef0)
        Xa = _features(X)
        n = Xa.shape[0]
        kinfo = dict(source="X", kernel=kernel, **params)
    if y is None:
        raise TypeError("y is required")
    y = _shape("y", y, n)
    ya = (V.check_targets(y, n) if task == "svr" else
          V.check_binary_labels(y, n, require_both=task == "svm"))
    C, eta = V.check_box(C, n), V.check_positive(eta, "eta")
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
    inst = dict(task=task, n=n, K=None, y=ya, C=C, eta=eta, tau=tau, epsilon=None, labels=None,
                kernel=kinfo, X=None)
    if task == "svr":
        inst["epsilon"] = V.check_nonnegative(epsilon, "epsilon")
    if task == "decomposed":
        inst["labels"] = V.check_partition(labels, n)

    def finish() -> None:  # the heavy part: the PSD test of K, or the dense kernel of X
        if K is not None:
            inst["K"] = V.check_kernel(K)
            scale = V.kernel_scale(inst["K"])
        else:
            inst["X"] = Xa
            if 8 * n * n <= max_dense_bytes:
                inst["K"] = kernel_from_X(Xa, kernel, **params)
                scale = V.kernel_scale(inst["K"])
            else:
                kinfo["blockwise"] = True
                scale = feature_kernel(inst).scale()
        V.check_range(C, eta, scale, n)

    return inst, finish


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


def certify_arrays(K=None, y=None, *, C, eta, tau=None, alpha=None, alpha_hat=None,
                   alpha_check=None, bias=None, F=None, task="svm", epsilon=None, labels=None,
                   tol=CERT_TOL, meta=None, reference=False, X=None, kernel=None, sigma=None,
                   gamma=None, degree=None, coef0=None, max_dense_bytes=None, block_rows=None,
                   progress=None) -> dict:
    """Certify a candidate solution given as arrays in memory.

    The problems are P1 (eq. (4)), P2 (eq. (22)) and P3 (eq. (18));
    the checks are those of :func:`verification.oracle.certify` on files.  The kernel is given
    as ``K`` or by features (``X``, ``kernel`` and its parameters), exactly one of the two;
    an instance given by ``X`` is certified as the file route certifies the same instance
    (the same report): with its dense kernel when ``8 n^2 <= max_dense_bytes``, else blockwise
    from ``X`` (:mod:`dank_ref.scale_certificate`).

    Parameters
    ----------
    K : array_like of shape (n, n), optional
        Kernel (validity rule of :doc:`docs/validity.md </validity>`).
    y : array_like of shape (n,)
        Labels (-1 / +1) or targets (svr).
    C, eta, tau, epsilon : float
        The instance's parameters (``epsilon`` for ``task="svr"`` only).  ``C`` may also be
        a vector of ``n`` per-sample boxes (``0 <= alpha_i <= C_i``; svr: both of
        ``alpha_hat_i, alpha_check_i``), as in format version 2.  ``tau=None`` means
        0.01 for svm and svr (the paper's value, every other entry point's default) and 0 for
        P3 (``task="decomposed"``, no nuclear norm; any other value is refused).
    alpha, alpha_hat, alpha_check : array_like
        The point: ``alpha`` (svm, decomposed) or ``alpha_hat`` and ``alpha_check`` (svr).
    bias, F : optional
        The claimed bias (svm, svr) and inner minimiser ``F(alpha)`` (Lemma 1; not
        evaluated by the blockwise route, where its check is "not evaluated").
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
        verdict; see :func:`verification.oracle.certify`; dense route only).
    X : array_like of shape (n, d), optional
        Features, finite; the kernel is then ``kernel`` applied to the rows of ``X``.
    kernel : {"gaussian", "linear", "polynomial"}
        Required with ``X``: the kernels of the file format (:doc:`docs/FORMATS.md </FORMATS>`).
    sigma, gamma, degree, coef0 : optional
        The kernel's parameters, by the file format's rule: gaussian exactly one of ``sigma``
        or ``gamma`` (``> 0``; ``gamma = 1 / (2 sigma^2)``); linear none; polynomial all of
        ``degree`` (integer ``>= 1``), ``gamma > 0`` and ``coef0 >= 0``.  A parameter the
        kernel does not use is refused.
    max_dense_bytes : int, optional
        The largest dense ``n x n`` kernel formed from ``X`` (default
        :data:`verification.formats.MAX_ARRAY_BYTES`, 2 GiB, the file route's limit); beyond
        it the blockwise route runs.
    block_rows : int, optional
        Blockwise route: rows per kernel block (default: blocks of at most 32 MiB).
    progress : callable, optional
        ``progress(phase, done, total)`` during the certificate
        (:func:`~verification.oracle.certify`);
        default: nothing is reported.

    Returns
    -------
    dict
        The report of :func:`~verification.oracle.certify`: ``certified``, ``failed``,
        ``reasons``, ``checks``, ``lower``, ``upper``, ``gap``, ``rel_gap``, ...

    Raises
    ------
    TypeError, ValueError
        Bad or missing input, naming the argument; all raised before the kernel is validated,
        formed or evaluated (except what the kernel's own validation finds).

    Notes
    -----
    Cost of each route (``n`` points, ``d`` features, ``s`` the support of the point):

    * ``K`` given: the PSD test of ``K`` (one ``eigvalsh``) and the certificate (one dense
      ``eigh``): ``O(n^3)`` time, a few ``n x n`` arrays.
    * ``X`` given, ``8 n^2 <= max_dense_bytes``: the kernel is formed (``O(n^2 d)``, no PSD
      test), then as above without the PSD test.
    * ``X`` given beyond: never an ``n x n`` array.  ``tau = 0`` and P3: time ``O(n s d)``
      (P3: ``O(sum_c n_c s_c d)``), memory one block plus ``O(n d)``; ``tau > 0``: also
      ``O(s^3)`` time and about ``5 s^2`` floats (a support up to 1,500), or a Krylov method
      on ``K[S, S]`` (``s^2`` floats up to 1 GiB, else recomputed by blocks); see
      :mod:`dank_ref.scale_certificate`.

    Examples
    --------
    >>> import numpy as np
    >>> from verification import certify_arrays
    >>> rep = certify_arrays(np.eye(2), np.array([1.0, -1.0]), C=1.0, eta=1e6, tau=0.0,
    ...                      alpha=np.array([1.0, 1.0]))
    >>> rep["certified"], bool(rep["rel_gap"] <= 1e-6)
    (True, True)
    >>> rep = certify_arrays(X=np.array([[0.0], [1.0]]), kernel="linear",
    ...                      y=np.array([1.0, -1.0]), C=1.0, eta=1e6, tau=0.0,
    ...                      alpha=np.array([1.0, 1.0]), max_dense_bytes=0)
    >>> rep["route"], rep["certified"]
    ('tau0', True)
    """
    inst, finish = _instance(K, y, C=C, eta=eta, tau=tau, task=task, epsilon=epsilon,
                             labels=labels, X=X, kernel=kernel, sigma=sigma, gamma=gamma,
                             degree=degree, coef0=coef0, max_dense_bytes=max_dense_bytes)
    sol = solution_from_arrays(task, inst["n"], alpha=alpha, alpha_hat=alpha_hat,
                               alpha_check=alpha_check, bias=bias, F=F, meta=meta)
    finish()  # the kernel's validation or formation, once everything else is known good
    return certify(inst, sol, tol=tol, reference=reference, block_rows=block_rows,
                   progress=progress)
