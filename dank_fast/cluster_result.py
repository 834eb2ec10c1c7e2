"""One solved cluster of the decomposition kept in ``O(n_c)`` memory (Section 4).

A cluster's solve (eq. (19)) needs its ``n_c x n_c`` kernel; its result does not. With
``tau = 0`` the learned matrix is ``F_c = 11' + Gamma_c``, ``Gamma_c = d d' o K_c / (4 eta)``
(Lemma 1): it is given exactly by ``d = a o y``, ``eta`` and the kernel, and the kernel is
given by the problem's data (the features of a :class:`dank_fast.FeatureKernel`, or the caller's
dense ``K``). So a per-cluster :class:`dank_fast.DANKResult` keeps

* :class:`SubKernel`: the cluster's rows of the problem's kernel, a view (indices into the
  parent kernel, ``8 n_c`` bytes), never a copy of ``K_c``;
* :class:`ClusterF`: ``F_c`` as ``(d, eta)`` plus that view (``16 n_c`` bytes); its entries,
  columns and ``(F_c o K_c) x`` are computed on demand in row blocks of at most the parent's
  ``block_bytes`` (64 MiB by default).

:func:`compact_result` strips a freshly solved result of its kernel (the ``KernelData`` with
``K_c``, its cached blocks and ``K_c o K_c``: ``8 n_c^2`` to ``24 n_c^2`` bytes) where it was
solved (a joblib or dask worker), so only ``O(n_c)`` travels back; :func:`attach_kernel` then
points it at the parent's kernel in the calling process.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ._cost import BLOCK_BYTES
from ._result import DANKResult
from .feature_kernel import FeatureKernel
from .inner import CenteredF

__all__ = ["SubKernel", "ClusterF", "compact_result", "attach_kernel"]


class SubKernel:
    """``K[idx][:, idx]`` of a parent kernel, evaluated on demand (never stored).

    Parameters
    ----------
    parent : FeatureKernel or ndarray of shape (n, n)
        The problem's kernel (already validated: not checked again).
    idx : ndarray of int, shape (n_c,)
        The cluster's rows of the parent.

    Notes
    -----
    Memory: ``idx`` only (``8 n_c`` bytes) plus a reference to the parent. A block
    ``K_c[rows][:, cols]`` costs ``8 len(rows) len(cols)`` bytes while it is used.
    """

    def __init__(self, parent, idx: np.ndarray):
        self.parent = parent
        self.idx = np.asarray(idx, dtype=np.intp)
        self.n = self.idx.size
        self.block_bytes = getattr(parent, "block_bytes", BLOCK_BYTES)

    def block(self, rows, cols) -> np.ndarray:
        """``K_c[rows][:, cols]`` (positions within the cluster)."""
        r, c = self.idx[np.asarray(rows)], self.idx[np.asarray(cols)]
        if isinstance(self.parent, FeatureKernel):
            return self.parent.block(r, c)
        return np.asarray(self.parent)[np.ix_(r, c)]

    def dense(self) -> np.ndarray:
        """The cluster's whole kernel ``K_c`` (``8 n_c^2`` bytes)."""
        everything = np.arange(self.n)
        return self.block(everything, everything)

    def rows_per_block(self, ncols: int) -> int:
        """Rows of a ``rows x ncols`` temporary within ``block_bytes``."""
        return max(1, self.block_bytes // (8 * max(ncols, 1)))

    def __repr__(self) -> str:
        return f"SubKernel(n={self.n}, parent={type(self.parent).__name__})"


@dataclasses.dataclass
class ClusterF:
    """``F_c = 11' + d d' o K_c / (4 eta)`` (tau = 0, Lemma 1) without ``K_c``.

    The interface of :class:`dank_fast.inner.CenteredF` (``rank``, ``dense``, ``column``,
    ``hadamard_matvec``), with the kernel a :class:`SubKernel` (``None`` between
    :func:`compact_result` and :func:`attach_kernel`). Memory ``O(n_c)``.
    """

    d: np.ndarray
    eta: float
    kernel: SubKernel | None = dataclasses.field(default=None, repr=False)

    @property
    def rank(self) -> int:  # as CenteredF: support size + 1 (not computed)
        return int(np.count_nonzero(self.d)) + 1

    def _kern(self, kern=None) -> SubKernel:
        kern = self.kernel if kern is None else kern
        if kern is None:
            raise ValueError("this cluster's F has no kernel attached (attach_kernel)")
        return kern

    def dense(self) -> np.ndarray:
        """``F_c`` as an ``n_c x n_c`` array (``8 n_c^2`` bytes)."""
        return 1.0 + np.outer(self.d, self.d) * self._kern().dense() / (4 * self.eta)

    def column(self, j) -> np.ndarray:
        """Columns ``F_c[:, j]``: shape ``(n_c, len(j))``, ``O(n_c len(j))`` memory."""
        j = np.atleast_1d(j)
        kern = self._kern()
        Kj = kern.block(np.arange(kern.n), j)
        return 1.0 + self.d[:, None] * self.d[j][None, :] * Kj / (4 * self.eta)

    def hadamard_matvec(self, kern, x: np.ndarray) -> np.ndarray:
        """``(F_c o K_c) x = K_c x + d o ((K_c o K_c)(d o x)) / (4 eta)`` in row blocks.

        ``O(n_c |S|)`` kernel entries for ``S`` the support of ``x``, at most
        ``block_bytes`` of them at a time.
        """
        kern = self._kern(kern)
        x = np.asarray(x, dtype=np.float64)
        out = np.zeros(kern.n)
        S = np.flatnonzero(x)
        if S.size == 0:
            return out
        xs, dxs = x[S], self.d[S] * x[S]
        step = kern.rows_per_block(S.size)
        for lo in range(0, kern.n, step):
            rows = np.arange(lo, min(lo + step, kern.n))
            B = kern.block(rows, S)
            out[rows] = B @ xs + self.d[rows] * ((B * B) @ dxs) / (4 * self.eta)
        return out


def compact_result(res: DANKResult) -> DANKResult:
    """``res`` without its kernel: ``F`` as :class:`ClusterF` (``d``, ``eta``), no ``K_c``.

    For a tau = 0 result (``F`` a :class:`dank_fast.inner.CenteredF`), as every P3 result is;
    the result's ``kernel`` is ``None`` until :func:`attach_kernel`.
    """
    F = res.inner.F
    if not isinstance(F, CenteredF):
        raise TypeError(f"expected the tau = 0 form 11' + Gamma, got {type(F).__name__}")
    res.inner = dataclasses.replace(res.inner, F=ClusterF(d=F.d, eta=F.eta))
    res.kernel = None
    return res


def attach_kernel(res: DANKResult, kern: SubKernel) -> DANKResult:
    """Point a compacted result (and its ``F``) at the cluster's rows of the parent kernel."""
    res.kernel = kern
    res.inner.F.kernel = kern
    return res
