"""Kernel matrices of the format: dank_ref's validity rule (:doc:`docs/validity.md </validity>`)
and kernel constructor, with the format's shape errors and the machine epsilon of the stored dtype.

The rule itself lives in :mod:`dank_ref.validation` (``check_kernel``, ``check_range``) and
the kernels computed from ``X`` in :mod:`dank_ref.kernels` (``kernel_from_X``); this module
only adapts them to arrays read from a file (already float64, with the epsilon of the dtype
they were stored in).
"""

from __future__ import annotations

import numpy as np

from dank_ref.kernels import kernel_from_X
from dank_ref.validation import check_kernel, check_range

from .spec import F64_EPS

__all__ = ["validate_kernel", "kernel_from_X", "check_representable"]

# the stored dtypes whose own machine epsilon the rule uses (docs/validity.md)
_SHORT_FLOATS = {float(np.finfo(t).eps): t for t in (np.float16, np.float32)}


def validate_kernel(K: np.ndarray, eps: float = F64_EPS, *, what: str = "K") -> np.ndarray:
    """Check a kernel read from a file by the rule of :doc:`docs/validity.md </validity>`; return it
    symmetrised.

    The rule is :func:`dank_ref.validation.check_kernel`'s.  ``K`` is a finite float64
    ``n x n`` array (``n >= 1``); ``eps`` the machine epsilon of the
    dtype it was stored in (float16 / float32: their own; otherwise float64's).  With
    ``s = max|K_ij|``: symmetric iff ``max|K - K'| <= max(1e-10, 10 eps) s``; PSD iff
    ``lambda_min((K + K')/2) >= -max(1e-8, eps) n s`` (dense ``eigvalsh``: O(n^3) time,
    O(n^2) memory).  ``K = 0`` is valid.

    Parameters
    ----------
    K : ndarray of shape (n, n)
        The kernel as read, float64.
    eps : float, default float64's machine epsilon
        The machine epsilon of the dtype the kernel was stored in.
    what : str, default "K"
        The name used in error messages.

    Returns
    -------
    ndarray of shape (n, n)
        ``(K + K') / 2``.

    Raises
    ------
    ValueError
        ``K`` not square, empty, not finite, not symmetric or not PSD (naming the rule).

    Examples
    --------
    >>> import numpy as np
    >>> from verification.formats import validate_kernel
    >>> validate_kernel(np.array([[1.0, 0.5], [0.5, 1.0]])).tolist()
    [[1.0, 0.5], [0.5, 1.0]]
    """
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"{what} must be square, got shape {K.shape}")
    if K.shape[0] == 0:
        raise ValueError(f"{what} is empty (n = 0); an instance needs n >= 1 points")
    short = _SHORT_FLOATS.get(float(eps))
    # values read from a float16 / float32 field are exact in that dtype: cast back so that
    # dank_ref applies that dtype's epsilon
    return check_kernel(K if short is None else K.astype(short), name=what)


def check_representable(C: float, eta: float, s: float, n: int) -> None:
    """Refuse an instance outside the representable range of :doc:`docs/validity.md </validity>`.

    The range is ``1e-100 <= C s n <= 1e100`` and ``1e-100 <= eta / (C^2 s) <= 1e100`` with
    ``s = max|K|`` (``s = 0`` is always representable), as
    :func:`dank_ref.validation.check_range`.  Evaluated in logarithms, so it cannot overflow
    itself.

    Parameters
    ----------
    C : float
        The box bound, ``> 0``.
    eta : float
        The regulariser weight, ``> 0``.
    s : float
        ``max|K_ij|``, ``>= 0``.
    n : int
        The number of points.

    Raises
    ------
    ValueError
        The instance is outside the range (the message gives the offending quantity).

    Examples
    --------
    >>> from verification.formats import check_representable
    >>> check_representable(1.0, 1.0, 1.0, 10)
    >>> check_representable(1e-200, 1.0, 1.0, 10)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: instance outside the representable range ...
    """
    check_range(C, eta, s, n)
