"""Validation of a precomputed kernel matrix ``K``: rules 1-4 of ``docs/validity.md``.

``K`` is a real numeric array (dtype kind ``f``, ``i`` or ``u``; bool, complex, string and
object arrays are a ``TypeError``, checked *before* any conversion), square, ``n >= 1``, finite;
with ``s = max|K_ij|`` and ``u`` the machine epsilon of the input dtype, symmetric up to
``max(1e-10, 10 u) s`` (then replaced by ``(K + K')/2``) and PSD up to
``lambda_min >= -max(1e-8, u) n s``. All tolerances are relative: ``K`` is valid iff ``cK`` is
(``c > 0``); ``K = 0`` is valid. Scalars, labels, the representable range and feasibility are
in :mod:`dank_fast._validation`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.linalg import eigh
from scipy.linalg.lapack import dpotrf

from ._kernel_proof import proof_of
from ._psd import lowrank_gershgorin_psd
from ._threads import blas_threads
from ._validation import _real_array, kernel_scale, psd_tolerance, symmetry_tolerance

__all__ = [
    "check_kernel_matrix",
    "check_kernel_psd",
    "max_asymmetry",
    "refuse_non_numeric_kernel",
    "symmetry_scan",
    "validate_kernel_matrix",
]


def max_asymmetry(A: np.ndarray, block: int = 128) -> float:
    """``max |A_ij - A_ji|`` of a finite square ``A`` (:func:`symmetry_scan`)."""
    return symmetry_scan(A, block)[0]


def symmetry_scan(A: np.ndarray, block: int = 128) -> tuple[float, float, float]:
    """``(max |A_ij - A_ji|, max A, min A)`` of a square ``A`` in one pass over it.

    By ``block x block`` tiles of the upper triangle against their mirror tiles (one ``block x
    block`` buffer; each pair of tiles in cache while it is compared and reduced). The extremes
    propagate NaN (each tile's, then all of them, are reduced by numpy); the asymmetry is
    meaningful only when both are finite. An overflowing difference is ``inf``, which every
    tolerance rejects. The asymmetry alone: 8.0 ms at n = 2,000 on an AVX-512 Xeon, where
    strips of ``block`` rows against the transposed column strips took 12.8 ms; the extremes
    in the same pass spare the two passes of ``A.max()`` and ``A.min()``.
    """
    n = A.shape[0]
    worst = 0.0
    buf = np.empty((min(block, n), min(block, n)))
    tops, bottoms = [], []
    with np.errstate(over="ignore", invalid="ignore"):
        for lo in range(0, n, block):
            hi = min(lo + block, n)
            for lo2 in range(lo, n, block):
                hi2 = min(lo2 + block, n)
                T, M = A[lo:hi, lo2:hi2], A[lo2:hi2, lo:hi]
                tops.append(T.max())
                bottoms.append(T.min())
                if lo2 != lo:
                    tops.append(M.max())
                    bottoms.append(M.min())
                D = np.subtract(T, M.T, out=buf[: hi - lo, : hi2 - lo2])
                worst = max(worst, float(D.max()), -float(D.min()))
    if not tops:
        return 0.0, 0.0, 0.0
    return worst, float(np.max(tops)), float(np.min(bottoms))


def check_kernel_matrix(K, *, check_psd: bool = True, name: str = "K") -> np.ndarray:
    """Validate a precomputed kernel matrix by the rule of docs/validity.md.

    The matrix of :func:`validate_kernel_matrix` (which also returns its extremes).

    Parameters
    ----------
    K : array_like of shape (n, n)
        Real numeric (dtype kind ``f``, ``i`` or ``u``). ``K = 0`` is valid.
    check_psd : bool, default True
        Skip the ``O(n^3)`` PSD test when False (the caller vouches for it, e.g. a kernel
        computed here by a PSD kernel function). The symmetry test is always made.
    name : str, default "K"
        Name used in the error messages.

    Returns
    -------
    ndarray of float64, shape (n, n)
        ``(K + K')/2`` when ``K`` was not symmetric; a float64 ``K`` whose asymmetry is at
        rounding level (``<= 100 u s``, e.g. a kernel computed in floating point) is returned
        as it is, without an ``n x n`` copy.

    Raises
    ------
    TypeError
        Bool, complex (even with zero imaginary part), string or object arrays.
    ValueError
        Not 2-D, not square, empty, not finite, not symmetric or not PSD, with
        ``s = max|K_ij|`` and ``u`` the epsilon of the input dtype (:func:`dtype_epsilon`):
        ``max|K - K'| > max(1e-10, 10 u) s`` or ``lambda_min < -max(1e-8, u) n s``.

    Notes
    -----
    The tolerances are relative, so ``K`` is valid iff ``c K`` is for every ``c > 0``. The PSD
    test is a Cholesky factorisation (LAPACK ``potrf``, about ``n^3/3`` flops, multi-threaded
    BLAS) of ``K/p + eps_psd n (s/p) I``, where ``p`` is the power of two nearest ``s`` (exact
    scaling: no overflow or underflow whatever the scale of ``K``). Success proves
    ``lambda_min(K) >= -eps_psd n s`` up to rounding far below the threshold. For
    ``n >= 1000`` a cheaper sufficient test is tried first
    (:func:`dank_fast._psd.lowrank_gershgorin_psd`: pivoted Cholesky to rank ``r <= n/16``,
    then Gershgorin on the residual, ``O(n^2 r)``; rigorous, rounding included): a smooth
    kernel (make_moons, Gaussian, ``sigma = 0.5``, ``n = 2000``: ``r = 46``) is accepted for
    about a seventh of the Cholesky's time. Only when the Cholesky fails
    is the smallest eigenvalue computed (``O(n^3)`` again); ``K`` is rejected, with that
    eigenvalue in the message, iff it is below the threshold, so that the decision agrees with
    the eigenvalue route of ``dank_ref`` except within rounding of the threshold.

    A matrix that :func:`dank_fast.compute_kernel` returned (read-only, exactly symmetric,
    finite, and PSD within the tolerance by a rounding analysis of its arithmetic,
    :mod:`dank_fast._kernel_proof`) is accepted as it is, without a pass over it.
    """
    return validate_kernel_matrix(K, check_psd=check_psd, name=name)[0]


def validate_kernel_matrix(K, *, check_psd: bool = True, name: str = "K"
                           ) -> tuple[np.ndarray, float, float]:
    """:func:`check_kernel_matrix`, returning ``(A, min A, max A)`` for the validated ``A``
    (:class:`dank_fast.inner.KernelData` takes them instead of two more passes over ``A``).

    A float64 input is scanned once for its extremes and its asymmetry together
    (:func:`symmetry_scan`); other dtypes are converted first.
    """
    proof = proof_of(K)
    if proof is not None:  # computed by compute_kernel: finite, symmetric and PSD, proved
        return K, proof[0], proof[1]
    raw = _real_array(K, name)
    if raw.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional, got shape {raw.shape}")
    n = raw.shape[0]
    if raw.shape != (n, n):
        raise ValueError(f"{name} must be a square matrix, got shape {raw.shape}")
    if n == 0:
        raise ValueError(f"{name} is empty (shape {raw.shape})")
    eps_sym = symmetry_tolerance(raw.dtype)
    eps_psd = psd_tolerance(raw.dtype)
    if raw.dtype == np.float64:
        A = raw
        # finite extremes prove every entry finite (NaN propagates through both)
        asym, kmax, kmin = symmetry_scan(A)
        if not (math.isfinite(kmax) and math.isfinite(kmin)):
            raise ValueError(f"{name} contains NaN or infinity")
    else:
        # the elementwise test (an n x n temporary) only when the extremes are not finite
        s_raw = kernel_scale(raw) if raw.dtype.kind == "f" else None
        if s_raw is not None and not math.isfinite(s_raw) and not np.all(np.isfinite(raw)):
            raise ValueError(f"{name} contains NaN or infinity")
        with np.errstate(over="ignore"):
            A = np.asarray(raw, dtype=np.float64)
        kmax, kmin = float(A.max()), float(A.min())
        if not (math.isfinite(kmax) and math.isfinite(kmin)):
            raise ValueError(f"{name} has entries beyond the float64 range (about 1.8e308)")
        asym = max_asymmetry(A)
    s = max(kmax, -kmin, 0.0)
    if asym > 0.0:
        if not asym <= eps_sym * s:
            raise ValueError(
                f"{name} must be symmetric: max |K_ij - K_ji| = {asym:.3g} > "
                f"{eps_sym:.1e} * max|K| = {eps_sym * s:.3g} (relative tolerance "
                f"max(1e-10, 10 u) for dtype {raw.dtype})"
            )
        # asymmetry at rounding level (<= 100 u s, as left by computing a kernel in floating
        # point) is kept as it is: symmetrising would copy K (8 n^2 bytes) for no measurable
        # effect; the PSD test allows for it (lowrank_gershgorin_psd's default ``asym``)
        if asym > 100 * 2.0**-52 * s or A is not raw:
            A = 0.5 * A + 0.5 * A.T  # exactly symmetric (addition commutes), cannot overflow
            kmax, kmin = float(A.max()), float(A.min())
    if check_psd and s > 0.0:
        _check_psd(A, s, eps_psd, name)
    return A, kmin, kmax


def check_kernel_psd(A: np.ndarray, kmin: float, kmax: float, name: str = "K") -> None:
    """The PSD test of :func:`check_kernel_matrix` alone, for a float64 ``A`` that
    ``validate_kernel_matrix(..., check_psd=False)`` returned with its extremes."""
    s = max(kmax, -kmin, 0.0)
    if s > 0.0:
        _check_psd(A, s, psd_tolerance(np.dtype(np.float64)), name)


def refuse_non_numeric_kernel(X, name: str = "X (the precomputed kernel)") -> None:
    """A precomputed kernel of booleans or strings is a ``TypeError`` (docs/validity.md, rule 1).

    The estimators call this before scikit-learn's ``validate_data``, which would silently
    cast such a kernel to float (``True -> 1.0``, ``"0.5" -> 0.5``). Object arrays of numbers
    (e.g. from pandas) are left to ``validate_data``; ragged input too (it reports it).
    """
    dtype = getattr(X, "dtype", None)
    if dtype is None:
        try:
            dtype = np.asarray(X).dtype
        except (TypeError, ValueError):
            return  # ragged or odd input: validate_data reports it
    if isinstance(dtype, np.dtype) and dtype.kind in "bUS":
        what = "booleans" if dtype.kind == "b" else "strings"
        raise TypeError(
            f"{name} must be a real numeric array (dtype kind f, i or u), got {what} "
            f"(dtype {dtype})"
        )


def _check_psd(A: np.ndarray, s: float, eps_psd: float, name: str) -> None:
    """PSD test of the symmetric ``A`` (see :func:`check_kernel_matrix`)."""
    n = A.shape[0]
    # a smooth kernel of large n: low-rank deflation and Gershgorin prove the bound for a
    # fraction of the Cholesky's cost (dank_fast._psd); on A itself where n s and the squares
    # of its entries are far from overflow and underflow; single-threaded (small products)
    if 1e-100 <= s <= 1e100:
        with blas_threads():
            if lowrank_gershgorin_psd(A, s, eps_psd):
                return
    # scale by the power of two p = 2^e with s/p in [0.5, 1), exactly (no rounding). p itself
    # overflows for s >= 2^1023 (e = 1024), so divide by 2^(e-1) and halve: both finite
    e = math.frexp(s)[1]
    half_p = math.ldexp(1.0, e - 1)
    scaled = (A / half_p) * 0.5
    s_scaled = (s / half_p) * 0.5
    # Fortran order (the transpose of the symmetric matrix): LAPACK works in place, no copy
    B = scaled.T
    shift = eps_psd * n * s_scaled
    B[np.diag_indices(n)] += shift
    with blas_threads():  # one BLAS thread (dank_fast._threads)
        _, info = dpotrf(B, lower=1, clean=0, overwrite_a=1)
        if info == 0:
            return
        lmin_scaled = float(eigh((A / half_p) * 0.5, eigvals_only=True, subset_by_index=[0, 0],
                                 driver="evr")[0])
    if lmin_scaled >= -eps_psd * n * s_scaled:
        return  # Cholesky failed within rounding of the threshold
    with np.errstate(over="ignore"):
        lmin = float(np.float64(lmin_scaled * 2.0) * np.float64(half_p))  # for the message
    raise ValueError(
        f"{name} is not positive semi-definite: smallest eigenvalue {lmin:.3g} < "
        f"-eps_psd * n * max|K| = {-eps_psd * n * s:.3g} (eps_psd = {eps_psd:.1e}, n = {n}); "
        "DANK needs a PSD kernel so that F o K stays PSD (Schur product theorem) and the "
        "saddle problem is convex-concave"
    )
