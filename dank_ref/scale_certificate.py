r"""Certificates of P1, P2 and P3 from features, in bounded memory (:doc:`docs/MATH.md </MATH>`
section 12).

dank_ref's own code for instances too large for a dense ``n x n`` kernel: the kernel is a
:class:`~dank_ref.features.FeatureKernel` (``X`` plus a kernel function), evaluated in row
blocks. The certified quantities are exactly those of :mod:`dank_ref.certificate` (lower bound
``h(a)``, upper bound = primal of the fixed kernel at its exact best bias or the hard-margin
point, feasibility to ``1e-9 C sqrt(n)``, the same numerical frame, a scalar ``C`` or a
vector of per-sample boxes ``C_i`` with the hinge weighted by ``C_i`` and ``max C`` in the
tolerance); only the way they are computed differs (:mod:`dank_ref.reduced`,
:doc:`docs/MATH.md </MATH>` section 12). A candidate is certified as given: an infeasible one is a
``ValueError``, raised before any kernel evaluation.

Routes (``S = {i : d_i != 0}``, ``s = |S|``, ``d = a o y`` for P1/P3, ``d = ah - ac`` for P2;
``k`` the Ritz block of the Krylov route; time counts kernel entries times ``d`` features):

* ``tau = 0`` (P3 always; P1/P2 with ``tau = 0``): ``F = 11' + Gamma`` needs no eigenvalues,
  and ``(F o K) d = K d + d o ((K o K) d^2) / (4 eta)``; one pass over ``K[:, S]``.
  Time ``O(n s d)``, memory one block (``block_rows x s``) plus ``O(n)``.
* ``"dense"`` (``tau > 0``, ``s <= dense_max``): the reduced ``(s+1) x (s+1)`` matrix ``B`` of
  the support reduction, dense ``eigh``; rows of ``F`` off the support from one column of
  ``J(B)``. Time ``O(s^3 + n s d)``, memory about ``5 s^2`` floats plus one block.
* ``"krylov"`` (``tau > 0``, ``s > dense_max``): the top ``k`` eigenpairs of ``B`` by Lanczos
  (ARPACK), bounded rigorously (section 12: the bound holds for any orthonormal block); ``k``
  doubles until the bound's excess is below ``excess_rtol * 1'a`` (``"auto"``: back to the
  exact dense route when ``k`` outgrows ``s / 16`` and it fits in ``DENSE_BYTES``, 2 GiB).
  ``K[S, S]`` is held when it fits in ``support_bytes`` (time ``O(s^2 d + s^2 k x (Lanczos
  steps))``), otherwise recomputed blockwise for every product (``O(s^2 d)`` per product,
  memory one block). Plus ``O(s k)``.

Every public function runs with one BLAS thread (``_one_blas_thread``; on shared cores a
single thread is the faster one: an ``eigh`` of ``345 x 345`` took 4.6 s with OpenBLAS's two
threads and 0.06 s with one, at load average 9 on 2 cores).

P3 runs cluster by cluster: only ``K[I_c][:, S_c]`` of one cluster ``c`` (in row blocks), time
``O(sum_c n_c s_c d)``, memory one block plus ``O(n)``.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass

import numpy as np
from threadpoolctl import threadpool_limits

from .certificate import (
    _scaled_primal_gap,
    frame_scale,
    hard_margin_gap,
    svm_primal_gap,
    svr_gap_scale,
    weighted_bias,
)
from .features import FeatureKernel
from .projection import stack_box
from .reduced import DENSE_MAX, SUPPORT_BYTES, fixed_kernel_g, tau0_pass
from .validation import (
    box_max,
    check_box,
    check_nonnegative,
    check_partition,
    check_positive,
    check_range,
    feasibility_tolerance,
)

__all__ = [
    "ScaleCertificate",
    "svm_certificate_features",
    "svr_certificate_features",
    "decomposed_certificate_features",
    "DENSE_MAX",
    "SUPPORT_BYTES",
]

TINY = np.finfo(float).tiny


@dataclass
class ScaleCertificate:
    """Certified bracket ``lower <= v* <= upper`` at the point ``alpha`` (original units).

    The fields mean what :class:`dank_ref.certificate.Certificate`'s do; ``F`` (``n x n``) is
    not formed.

    Attributes
    ----------
    lower, upper, gap, gap_raw, rel_gap, scale : float
        As in :mod:`dank_ref.certificate`; ``gap`` includes ``eta * excess``.
    bias : float or None
        Exact best bias of the fixed kernel (``None`` for P3).
    alpha : ndarray
        The certified point (P2: ``b = ah - ac``).
    alpha_hat, alpha_check : ndarray or None
        P2's pair, as given.
    infeasibility : float
        Measured violation of the point (``<= 1e-9 C sqrt(n)``).
    route : str
        ``"tau0"``, ``"dense"``, ``"krylov"`` or ``"clusters"`` (P3).
    support : int
        ``s = |{i : d_i != 0}|``.
    rank : int
        Eigenvalues of ``11' + Gamma`` above ``tau / 2`` found (``-1`` for ``tau = 0``).
    excess : float
        Krylov route: ``eta * (phi(F^) - lower bound of min phi)`` in original units, already
        inside ``gap`` (0 for the exact routes).
    gap_at_bias, rel_gap_at_bias : float or None
        With a submitted ``bias`` (P1, P2): the gap of the primal point ``(w, bias)`` (P1: or
        of ``(s w, s bias)`` with no margin violated, whichever is smaller), plus ``excess``;
        ``None`` otherwise.
    """

    lower: float
    upper: float
    gap: float
    gap_raw: float
    rel_gap: float
    scale: float
    bias: float | None
    alpha: np.ndarray
    infeasibility: float
    route: str
    support: int
    rank: int = -1
    excess: float = 0.0
    gap_at_bias: float | None = None
    rel_gap_at_bias: float | None = None
    alpha_hat: np.ndarray | None = None
    alpha_check: np.ndarray | None = None

    @property
    def value(self) -> float:
        """Midpoint ``(lower + upper) / 2`` of the certified bracket."""
        return 0.5 * self.lower + 0.5 * self.upper


# ---------------------------------------------------------------------------------------------
# validation (before any kernel evaluation)
# ---------------------------------------------------------------------------------------------
def _one_blas_thread(fn):
    """Run ``fn`` with every BLAS library loaded *at call time* limited to one thread."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with threadpool_limits(limits=1, user_api="blas"):
            return fn(*args, **kwargs)
    return wrapper


def _vector(v, n: int, name: str) -> np.ndarray:
    arr = np.asarray(v)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of n = {n} numbers, got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"{name} has length {arr.shape[0]} but X has n = {n} rows")
    arr = np.array(arr, dtype=np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"{name}[{int(np.argmax(bad))}] is NaN or inf")
    return arr


def _labels(y, n: int, both: bool) -> np.ndarray:
    y = _vector(y, n, "y")
    if not np.all((y == 1.0) | (y == -1.0)):
        raise ValueError("labels y must take values in {-1, +1}")
    if both and (np.all(y == 1.0) or np.all(y == -1.0)):
        raise ValueError("labels y must contain both classes (the bias constraint y'a = 0 "
                         "needs it)")
    return y


def _kernel(fk) -> FeatureKernel:
    if not isinstance(fk, FeatureKernel):
        raise TypeError(f"the kernel must be a dank_ref.features.FeatureKernel, got "
                        f"{type(fk).__name__}")
    return fk


def _feasible(viols: dict, C: float, n: int, what: str) -> float:
    """The largest violation; ``ValueError`` naming every constraint violated beyond
    ``1e-9 C sqrt(n)``."""
    tol = feasibility_tolerance(C, n)
    bad = [f"{k} violated by {v:.3e}" for k, v in viols.items() if not v <= tol]
    if bad:
        raise ValueError(f"{what} is infeasible: {'; '.join(bad)} > 1e-9 * C * sqrt(n) = "
                         f"{tol:.3e}")
    return max(0.0, *viols.values())


def _rel(gap: float, scale: float) -> float:
    if scale > 0.0:
        return gap / scale
    return 0.0 if gap == 0.0 else math.inf


def _in_caller_units(c: float, lower_f: float, gap_raw_f: float, scale_f: float,
                     gb: float | None = None, **fields) -> ScaleCertificate:
    """The certificate in the caller's units from the bracket in the frame of scale ``c``
    (:func:`dank_ref.certificate.frame_scale`): the gap clipped at 0, the relative gaps
    against ``scale_f``, the gap at a submitted bias ``gb`` where there is one; ``fields``
    are the rest of :class:`ScaleCertificate`'s."""
    gap_f = max(gap_raw_f, 0.0)
    return ScaleCertificate(lower=c * lower_f, upper=c * lower_f + c * gap_f, gap=c * gap_f,
                            gap_raw=c * gap_raw_f, rel_gap=_rel(gap_f, scale_f),
                            scale=max(c * scale_f, TINY),
                            gap_at_bias=None if gb is None else c * gb,
                            rel_gap_at_bias=None if gb is None else _rel(gb, scale_f), **fields)


def _weighted(C, v: np.ndarray) -> float:
    """``sum_i C_i v_i`` (a vector box), or ``C sum_i v_i`` (a scalar box)."""
    return float(C @ v) if isinstance(C, np.ndarray) else C * float(np.sum(v))


def _bias_gap(bias, q, lin, C, g, y, eps):
    """Gap of the primal point at a submitted bias (frame units); ``eps`` is None for P1."""
    if eps is not None:
        return q + _weighted(C, np.maximum(0.0, np.abs(y - g - bias) - eps)) - lin
    margins = y * (g + bias)
    gap = q + _weighted(C, np.maximum(0.0, 1.0 - margins)) - lin
    return min(gap, hard_margin_gap(q, lin, margins)[0])


def _check_bias(bias) -> float | None:
    if bias is None:
        return None
    if isinstance(bias, (bool, np.bool_)) or not isinstance(bias, numbers.Real):
        raise TypeError(f"bias must be a real number or None, got {type(bias).__name__}")
    if not math.isfinite(float(bias)):
        raise ValueError(f"bias must be finite, got {bias!r}")
    return float(bias)


def _check_progress(progress):
    if progress is not None and not callable(progress):
        raise TypeError(f"progress must be a callable or None, got {type(progress).__name__}")
    return progress


def _options(route, dense_max, support_bytes, k0, k_max, excess_rtol) -> dict:
    if route not in ("auto", "dense", "krylov"):
        raise ValueError(f"route must be 'auto', 'dense' or 'krylov', got {route!r}")
    for name, v in (("dense_max", dense_max), ("support_bytes", support_bytes), ("k0", k0),
                    ("k_max", k_max)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    return {"route": route, "dense_max": int(dense_max), "support_bytes": int(support_bytes),
            "k0": int(k0), "k_max": int(k_max),
            "excess_rtol": check_positive(excess_rtol, "excess_rtol")}


def _route_arguments(fk: FeatureKernel, C: float, eta: float, tau, options: tuple, bias,
                     progress):
    """The checks P1 and P2 share after their arrays, ``C`` and ``eta`` (and P2's
    ``epsilon``), in this order: ``tau``, the route's ``options`` (:func:`_options`),
    ``bias``, ``progress``, then the range of ``C``, ``eta`` and the kernel's scale
    (:doc:`docs/validity.md </validity>`). Returns ``(tau, opts, bias, progress, s_k)``; ``O(n d)``
    (the scale)."""
    tau = check_nonnegative(tau, "tau")
    opts = _options(*options)
    bias = _check_bias(bias)
    progress = _check_progress(progress)
    s_k = fk.scale()
    check_range(C, eta, s_k, fk.n)
    return tau, opts, bias, progress, s_k


# ---------------------------------------------------------------------------------------------
# public certificates
# ---------------------------------------------------------------------------------------------
@_one_blas_thread
def svm_certificate_features(fk: FeatureKernel, y, alpha, *, C, eta, tau, route: str = "auto",
                             dense_max: int = DENSE_MAX, support_bytes: int = SUPPORT_BYTES,
                             k0: int = 16, k_max: int = 1024, excess_rtol: float = 1e-10,
                             bias=None, progress=None) -> ScaleCertificate:
    """Certificate of P1 (eq. (4)) at exactly ``alpha``, from features.

    Parameters
    ----------
    fk : FeatureKernel
        ``X`` and the kernel function; ``fk.block_rows`` bounds every kernel block.
    y : array_like of shape (n,)
        Labels in ``{-1, +1}``, both classes.
    alpha : array_like of shape (n,)
        Candidate, feasible (``max(|y'a|, -min a, max a - C) <= 1e-9 C sqrt(n)``) else
        ``ValueError``; never moved.
    C, eta, tau : float (``C``: or a vector of n per-sample boxes)
        As in eq. (4) (representable range of :doc:`docs/validity.md </validity>`).
    route : {"auto", "dense", "krylov"}
        For ``tau > 0``: ``"dense"`` (exact eigh of the reduced matrix) if ``|S| <= dense_max``,
        else ``"krylov"`` (:mod:`dank_ref.scale_certificate` for the costs). ``tau = 0`` needs
        neither.
    dense_max, support_bytes, k0, k_max, excess_rtol
        Krylov route: the largest support of the ``"auto"`` dense route, the most bytes of
        ``K[S, S]`` kept in memory, the first and largest Ritz block, and the stopping rule
        ``eta * excess <= excess_rtol * 1'a``.
    bias : float, optional
        A submitted bias: the result also holds the gap at it (``gap_at_bias``).
    progress : callable, optional
        Called as ``progress(phase, done, total)``: ``phase`` a short description (e.g.
        ``"rows off the support, row blocks"``), ``done`` of ``total`` units (row blocks; 0 of
        1 then 1 of 1 for a phase done in one piece, such as the eigenpairs), ``done = 0`` when
        a phase starts. Default: nothing is reported. It runs in the calling thread; what it
        raises propagates.

    Returns
    -------
    ScaleCertificate
        Agrees with :func:`dank_ref.certificate.svm_certificate` on the same instance up to
        rounding (exact routes; the Krylov route adds its ``excess`` to the gap).

    Raises
    ------
    TypeError
        If ``fk`` is not a ``FeatureKernel``, an array is not real numeric, or ``bias`` is not
        a real number.
    ValueError
        If ``y`` is not in ``{-1, +1}`` with both classes, an array has the wrong shape or a
        NaN/inf, ``alpha`` is infeasible, a parameter is out of range, or ``route`` or an
        option is invalid; all raised before any kernel evaluation.

    Notes
    -----
    Cost (``s = |S|``, ``d`` features, ``k`` the Ritz block): ``tau = 0``: time ``O(n s d)``,
    memory one block plus ``O(n)``; ``"dense"``: time ``O(s^3 + n s d)``, memory about
    ``5 s^2`` floats plus one block; ``"krylov"``: time ``O(s^2 d)`` plus the Lanczos products,
    memory ``K[S, S]`` if it fits in ``support_bytes`` (else one block) plus ``O(s k)``. An
    ``n x n`` matrix is never formed. Runs with one BLAS thread.
    """
    fk = _kernel(fk)
    n = fk.n
    y = _labels(y, n, both=True)
    a = _vector(alpha, n, "alpha")
    C, eta = check_box(C, n), check_positive(eta, "eta")
    tau, opts, bias, progress, s_k = _route_arguments(
        fk, C, eta, tau, (route, dense_max, support_bytes, k0, k_max, excess_rtol), bias,
        progress)
    infeas = _feasible({"y'alpha = 0": abs(float(y @ a)), "alpha >= 0": float(-np.min(a)),
                        "alpha <= C": float(np.max(a - C))}, C, n, "alpha")
    c = frame_scale(box_max(C), eta, s_k)
    af = a / c
    d = af * y
    scale_f = float(np.sum(af))
    g, inner, used, rank, excess = fixed_kernel_g(fk, c, d, eta / c, tau, scale=scale_f,
                                                   progress=progress, **opts)
    lower_f = scale_f + inner
    gap_raw_f, b = svm_primal_gap(g, d, y, C / c, scale_f)
    gap_raw_f += eta / c * excess
    gb = None if bias is None else (_bias_gap(bias, float(d @ g), scale_f, C / c, g, y, None)
                                    + eta / c * excess)
    return _in_caller_units(c, lower_f, gap_raw_f, scale_f, gb, bias=b, alpha=a,
                            infeasibility=infeas, route=used, support=int(np.count_nonzero(d)),
                            rank=rank, excess=eta * excess)


@_one_blas_thread
def svr_certificate_features(fk: FeatureKernel, y, alpha_hat, alpha_check, *, C, epsilon, eta,
                             tau, route: str = "auto", dense_max: int = DENSE_MAX,
                             support_bytes: int = SUPPORT_BYTES, k0: int = 16,
                             k_max: int = 1024, excess_rtol: float = 1e-10,
                             bias=None, progress=None) -> ScaleCertificate:
    """Certificate of P2 (eq. (22), bias constraint ``1'(ah - ac) = 0``) from features.

    The pair is certified as given (``h`` depends on ``ah + ac``); ``d = ah - ac``; routes,
    costs, options and ``bias`` as :func:`svm_certificate_features`.

    Parameters
    ----------
    fk : FeatureKernel
        ``X`` and the kernel function; ``fk.block_rows`` bounds every kernel block.
    y : array_like of shape (n,)
        Real targets.
    alpha_hat, alpha_check : array_like of shape (n,)
        The candidate pair, feasible
        (``max(|1'(ah - ac)|, -min(ah, ac), max(ah, ac) - C) <= 1e-9 C sqrt(n)``) else
        ``ValueError``; never moved.
    C, epsilon, eta, tau : float (``C``: or a vector of n per-sample boxes)
        As in eq. (22) (``epsilon, tau >= 0``; representable range of
        :doc:`docs/validity.md </validity>`).
    route : {"auto", "dense", "krylov"}
        For ``tau > 0``, as in :func:`svm_certificate_features`.
    dense_max, support_bytes, k0, k_max, excess_rtol
        Krylov route options, as in :func:`svm_certificate_features`; the stopping rule is
        ``eta * excess <= excess_rtol * (|y'd| + epsilon 1'(ah + ac))``.
    bias : float, optional
        A submitted bias: the result also holds the gap at it (``gap_at_bias``).
    progress : callable, optional
        ``progress(phase, done, total)``, as in :func:`svm_certificate_features`; default:
        nothing is reported.

    Returns
    -------
    ScaleCertificate
        ``alpha`` is ``ah - ac`` and ``alpha_hat``, ``alpha_check`` the pair as given; agrees
        with :func:`dank_ref.certificate.svr_certificate` up to rounding (exact routes).

    Raises
    ------
    TypeError
        As :func:`svm_certificate_features`.
    ValueError
        If an array has the wrong shape or a NaN/inf, the pair is infeasible, a parameter is
        out of range, or ``route`` or an option is invalid; all raised before any kernel
        evaluation.

    Notes
    -----
    Time and memory as :func:`svm_certificate_features` with ``s = |{i : ah_i != ac_i}|``;
    an ``n x n`` matrix is never formed. Runs with one BLAS thread.
    """
    fk = _kernel(fk)
    n = fk.n
    y = _vector(y, n, "y")
    ah = _vector(alpha_hat, n, "alpha_hat")
    ac = _vector(alpha_check, n, "alpha_check")
    C, eta = check_box(C, n), check_positive(eta, "eta")
    epsilon = check_nonnegative(epsilon, "epsilon")
    tau, opts, bias, progress, s_k = _route_arguments(
        fk, C, eta, tau, (route, dense_max, support_bytes, k0, k_max, excess_rtol), bias,
        progress)
    z = np.concatenate([ah, ac])
    infeas = _feasible({"1'(alpha_hat - alpha_check) = 0": abs(float(np.sum(ah) - np.sum(ac))),
                        "alpha_hat, alpha_check >= 0": float(-np.min(z)),
                        "alpha_hat, alpha_check <= C": float(np.max(z - stack_box(C)))}, C, n,
                       "(alpha_hat, alpha_check)")
    c = frame_scale(box_max(C), eta, s_k)
    bf = ah / c - ac / c
    by = float(bf @ y)
    l1 = float(np.sum(ah / c) + np.sum(ac / c))
    lin_f = by - epsilon * l1
    g, inner, used, rank, excess = fixed_kernel_g(fk, c, bf, eta / c, tau,
                                                   scale=abs(by) + epsilon * l1,
                                                   progress=progress, **opts)
    lower_f = lin_f + inner
    r = y - g
    beta, closs = weighted_bias(np.concatenate([r - epsilon, r + epsilon]),
                                np.concatenate([-np.ones(n), np.ones(n)]), stack_box(C / c))
    q = float(bf @ g)
    gap_raw_f = q + closs - lin_f + eta / c * excess
    scale_f = svr_gap_scale(by, epsilon * l1, q, box_max(C) / c, y)
    gb = None if bias is None else (_bias_gap(bias, q, lin_f, C / c, g, y, epsilon)
                                    + eta / c * excess)
    return _in_caller_units(c, lower_f, gap_raw_f, scale_f, gb, bias=beta, alpha=ah - ac,
                            infeasibility=infeas, route=used,
                            support=int(np.count_nonzero(bf)), rank=rank,
                            excess=eta * excess, alpha_hat=ah, alpha_check=ac)


@_one_blas_thread
def decomposed_certificate_features(fk: FeatureKernel, y, alpha, labels, *, C, eta,
                                    progress=None) -> ScaleCertificate:
    """Certificate of P3 on ``Kbar`` (eq. (18), Lemma 5) from features and ``labels``.

    Box ``0 <= a <= C`` only (``1e-9 C sqrt(n)``), no bias, ``tau = 0``: ``F = 11' + Gamma(Kbar)``
    and, cluster by cluster, ``(F o Kbar) d`` on cluster ``c`` is one pass over
    ``K[I_c][:, S_c]`` (:mod:`dank_ref.scale_certificate`). The bracket is the sum over clusters
    (the lower bound's terms and the hinge add up; the hard-margin point is taken globally, as in
    :func:`dank_ref.certificate.decomposed_certificate`, with which it agrees). A cluster of one
    point is valid: all of them are handled at once from the diagonal ``K_ii`` (``O(d)`` each).

    Parameters
    ----------
    fk : FeatureKernel
        ``X`` and the kernel function; ``fk.block_rows`` bounds every kernel block.
    y : array_like of shape (n,)
        Labels in ``{-1, +1}`` (one class is allowed: P3 has no bias).
    alpha : array_like of shape (n,)
        Candidate, feasible (``max(-min a, max a - C) <= 1e-9 C sqrt(n)``) else
        ``ValueError``; never moved.
    labels : array_like of shape (n,)
        Cluster label of every point (any hashable values); ``Kbar`` keeps ``K_ij`` for ``i``
        and ``j`` in the same cluster.
    C, eta : float (``C``: or a vector of n per-sample boxes)
        As in eq. (18) (representable range of :doc:`docs/validity.md </validity>`).
    progress : callable, optional
        Called as ``progress("clusters", done, total)`` before the first cluster and after each
        cluster of two or more points (the clusters of one point come in one step first);
        default: nothing is reported. It runs in the calling thread.

    Returns
    -------
    ScaleCertificate
        ``bias`` is ``None``, ``route`` is ``"clusters"`` and ``rank`` is ``-1``.

    Raises
    ------
    TypeError
        If ``fk`` is not a ``FeatureKernel``, an array is not real numeric, a label is
        unhashable (or ``labels`` is a string, set or mapping), or ``progress`` is not
        callable.
    ValueError
        If ``y`` is not in ``{-1, +1}``, an array has the wrong shape or a NaN/inf, ``labels``
        is not a partition of the ``n`` points, ``alpha`` is infeasible, or a parameter is out
        of range; all raised before any kernel evaluation.

    Notes
    -----
    Time ``O(sum_c n_c s_c d)``, memory one block plus ``O(n)``; the labels are factorised
    first (``O(n)`` Python objects). Runs with one BLAS thread.
    """
    fk = _kernel(fk)
    n = fk.n
    y = _labels(y, n, both=False)
    a = _vector(alpha, n, "alpha")
    C, eta = check_box(C, n), check_positive(eta, "eta")
    codes = check_partition(labels, n)
    progress = _check_progress(progress)
    s_k = fk.scale()
    check_range(C, eta, s_k, n)
    infeas = _feasible({"alpha >= 0": float(-np.min(a)), "alpha <= C": float(np.max(a - C))},
                       C, n, "alpha")
    c = frame_scale(box_max(C), eta, s_k)
    af = a / c
    d = af * y
    etaf = eta / c
    g = np.zeros(n)
    order = np.argsort(codes, kind="stable")
    starts = np.r_[0, np.flatnonzero(np.diff(codes[order])) + 1]
    sizes = np.diff(np.r_[starts, n])
    # clusters of one point: K_ii alone, all at once
    one = order[starts[sizes == 1]]
    kd = c * fk.subset(one).diag() * d[one]
    kkd = kd * kd
    g[one] = kd + d[one] * kkd / (4.0 * etaf)
    dkd = float(d[one] @ kd)
    g2 = float(d[one] @ (d[one] * kkd)) / (16.0 * etaf * etaf)
    # larger clusters with some d_i != 0, one pass each
    big = [order[lo:lo + m] for lo, m in zip(starts[sizes > 1], sizes[sizes > 1],
                                                            strict=True)]
    big = [idx for idx in big if np.any(d[idx] != 0.0)]
    total = len(big) + (1 if one.size else 0)
    if progress is not None:
        progress("clusters", 0, total)
        if one.size:
            progress("clusters", 1, total)
    for done, idx in enumerate(big, start=total - len(big) + 1):
        S = idx[d[idx] != 0.0]
        gc, dk, gg = tau0_pass(fk, c, S, d[S], idx, d[idx], etaf)
        g[idx] = gc
        dkd += dk
        g2 += gg
        if progress is not None:
            progress("clusters", done, total)
    scale_f = float(np.sum(af))
    lower_f = scale_f - 0.5 * dkd - etaf * g2
    chinge = _weighted(C / c, np.maximum(0.0, 1.0 - y * g))
    gap_raw_f = _scaled_primal_gap(float(d @ g), scale_f, g, y, chinge, None)[0]
    return _in_caller_units(c, lower_f, gap_raw_f, scale_f, bias=None, alpha=a,
                            infeasibility=infeas, route="clusters",
                            support=int(np.count_nonzero(d)))
