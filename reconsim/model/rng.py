"""Counter-based random streams: the k-th number of stream s of a cell, specified exactly.

The number is ``splitmix64((seed << 32) | (s << 28) | k)``: Vigna's SplitMix64
finaliser with its increment ``0x9E3779B97F4A7C15`` added first, so that
``splitmix64(x + n * increment)`` is the (n+1)-th output of the stateful
generator seeded with ``x``. Nothing is carried from one draw to the next, so any
implementation, chunking or backend gives a cell the same numbers. "Uniform
integer in ``0 … n-1``" is that number mod n (the bias is below n / 2⁶⁴).

Streams (``k`` < 2²⁸ counts from 0 within the cell):

* :data:`STARTUP` — copy k's extra startup ``0 … B_spread``;
* :data:`LEDGER_DELAY` — copy k's extra ledger delay ``0 … G_spread``;
* :data:`INTERVAL` — the jitter of the interval after periodic round k;
* :data:`FAIL` — does create command k fail;
* :data:`LOST` — does create command k lose its reply.

The kernels use :func:`reconsim.model.kernels.world.splitmix64_u64`, the same
arithmetic on unsigned 64-bit machine integers; the tests check both agree.
"""

from __future__ import annotations

from typing import Final

#: SplitMix64's increment (the golden ratio in 64 bits), added before the finaliser.
INCREMENT: Final = 0x9E3779B97F4A7C15
MASK64: Final = (1 << 64) - 1
#: Exclusive upper bound of a cell's seed.
SEED_LIMIT: Final = 1 << 31

STARTUP, LEDGER_DELAY, INTERVAL, FAIL, LOST = 0, 1, 2, 3, 4


def splitmix64(x: int) -> int:
    """SplitMix64's output for state ``x`` (the increment is added first).

    >>> splitmix64(1234567)
    6457827717110365317
    """
    z = (x + INCREMENT) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


def counter(seed: int, stream: int, k: int) -> int:
    """The counter that numbers draw ``k`` of ``stream`` in the cell with ``seed``."""
    return (seed << 32) | (stream << 28) | k


def uniform(seed: int, stream: int, k: int, n: int) -> int:
    """Draw ``k`` of ``stream`` as a uniform integer in ``0 … n-1``.

    >>> [uniform(7, STARTUP, k, 6) for k in range(8)]
    [1, 0, 5, 4, 4, 2, 0, 4]
    """
    return splitmix64(counter(seed, stream, k)) % n
