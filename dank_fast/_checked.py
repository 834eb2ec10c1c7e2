"""A validated kernel as the solvers' :class:`dank_fast.inner.KernelData`.

Above both the validation (:mod:`dank_fast._kernel_validation`) and the numerics
(:mod:`dank_fast.inner`), so that neither imports the other.
"""

from __future__ import annotations

from ._kernel_data import KernelData
from ._kernel_validation import validate_kernel_matrix

__all__ = ["checked_kernel_data"]


def checked_kernel_data(K, *, check_psd: bool = True) -> KernelData:
    """:class:`dank_fast.inner.KernelData` of the kernel
    :func:`dank_fast._kernel_validation.validate_kernel_matrix` accepts, with the extremes its
    scan found (no further pass over ``K``)."""
    A, kmin, kmax = validate_kernel_matrix(K, check_psd=check_psd)
    return KernelData(A, extremes=(kmin, kmax))
