"""The memory budget of blockwise temporaries, shared by every pass that works in blocks."""

from __future__ import annotations

__all__ = ["BLOCK_BYTES"]

#: bytes of the temporaries a blockwise pass holds at a time: a block of ``K`` copied whatever
#: its fraction of ``K`` (:class:`dank_fast._kernel_data.KernelData`), the dense inner
#: eigensolver's matrix (``8 N^2 <= BLOCK_BYTES``, ``N <= 2,896``), a pass over a cluster
#: kernel (:mod:`dank_fast.cluster_result`), the ranking blocks of the paper's matching
#: (:mod:`dank_fast.extension`) and the kernel and ``F`` blocks of a prediction
#: (:mod:`dank_fast.estimators`). 64 MiB keeps a block in a fraction of a laptop's memory;
#: a prediction of 20,000 test points on 2,000 training points sums its decision values in the
#: same CPU time with 64 MiB chunks as with 256 MiB ones (no row of the family benchmarks
#: depends on it).
BLOCK_BYTES = 64 << 20
