"""A validated kernel as the solvers' :class:`dank_fast.inner.KernelData`.

Above both the validation (:mod:`dank_fast._kernel_validation`) and the numerics
(:mod:`dank_fast.inner`), so that neither imports the other.
"""

from __future__ import annotations

import warnings

from ._kernel_data import KernelData
from ._kernel_validation import validate_kernel_matrix

__all__ = ["CheckedKernel", "checked_kernel_data", "kernel_data_of"]


class CheckedKernel(KernelData):
    """Kernel data whose matrix passed :func:`validate_kernel_matrix` (made only here and by
    the estimators' routes, which validate once at ``fit``): the solvers take it unchecked."""


def checked_kernel_data(K, *, check_psd: bool = True) -> CheckedKernel:
    """:class:`CheckedKernel` of the kernel :func:`validate_kernel_matrix` accepts, with the
    extremes its scan found (no further pass over ``K``)."""
    A, kmin, kmax = validate_kernel_matrix(K, check_psd=check_psd)
    return CheckedKernel(A, extremes=(kmin, kmax))


def kernel_data_of(K, check_psd: bool) -> CheckedKernel:
    """The solvers' kernel data of the ``K`` a user passed: checked, unless it is already a
    :class:`CheckedKernel`. A public :class:`KernelData` is checked like an array, with a
    ``DeprecationWarning`` (pass the array itself)."""
    if isinstance(K, CheckedKernel):
        return K
    if isinstance(K, KernelData):
        warnings.warn("passing a KernelData as K is deprecated and will be an error in the next "
                      "release; pass the kernel matrix (its checks are no longer skipped)",
                      DeprecationWarning, stacklevel=3)
        K = K.K
    return checked_kernel_data(K, check_psd=check_psd)
