"""The world kernel (numba): every rule of issue 8, one copy a record, event to event.

(The design is described here once the kernel lands; for now the module holds the
random streams in machine integers.)
"""

from __future__ import annotations

import numba
import numpy as np

from reconsim import rng

#: :func:`reconsim.rng.splitmix64`, compiled: the same source on unsigned 64-bit integers.
splitmix64_u64 = numba.njit(cache=True, nogil=True)(rng.splitmix64)


@numba.njit(cache=True, nogil=True)
def uniform_u64(seed: int, stream: int, k: int, n: int) -> np.int64:
    """:func:`reconsim.rng.uniform` in machine integers: draw ``k`` of ``stream`` mod ``n``."""
    x = (np.uint64(seed) << np.uint64(32)) | (np.uint64(stream) << np.uint64(28)) \
        | np.uint64(k)
    return np.int64(splitmix64_u64(x) % np.uint64(n))  # type: ignore[arg-type]
