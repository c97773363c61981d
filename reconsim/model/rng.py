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
* :data:`LOST` — does create command k lose its reply;
* :data:`DEATHS` — does a sweep's random death schedule kill in second k (not a cell's
  stream: a schedule's, keyed by the schedule's own seed, :func:`death_seconds`).

The kernels use :func:`reconsim.model.kernels.world.splitmix64_u64`, the same
arithmetic on unsigned 64-bit machine integers; the tests check both agree.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Final

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import NDArray

#: SplitMix64's increment (the golden ratio in 64 bits), added before the finaliser.
INCREMENT: Final = 0x9E3779B97F4A7C15
MASK64: Final = (1 << 64) - 1
#: The largest seed of a cell: its streams' counters take seeds below 2^31.
MAX_SEED: Final = (1 << 31) - 1

STARTUP, LEDGER_DELAY, INTERVAL, FAIL, LOST = 0, 1, 2, 3, 4
#: A random death schedule's stream (``[schedule.X] rate = ...``), after the cells' five.
DEATHS: Final = 5


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


def splitmix64_array(x: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """:func:`splitmix64` of each element: the same arithmetic, modulo 2^64 in unsigned
    64-bit integers (exact on every platform; NumPy wraps array arithmetic silently)."""
    z = x + np.uint64(INCREMENT)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def schedule_counter(seed: int, stream: int, k: int) -> int:
    """The counter of draw ``k`` of ``stream`` for a schedule with ``seed`` (0 ≤ seed <
    2⁶³, more bits than a cell's seed field holds): the cells' counter with seed 0, XORed
    with the key ``splitmix64(seed)``. SplitMix64 is a bijection of 64-bit integers, so two
    seeds have two keys, and their draws ``k`` are never the same number.

    >>> schedule_counter(0, DEATHS, 7) == splitmix64(0) ^ (5 << 28 | 7)
    True
    """
    return splitmix64(seed) ^ counter(0, stream, k)


def death_threshold(rate: float) -> int:
    """The draws below which a second has a death: ``x < rate * 2⁶⁴`` compared exactly, so
    ``ceil(rate * 2⁶⁴)`` from the rate's exact binary value (a float is a dyadic rational,
    converted by :class:`~fractions.Fraction` without rounding).

    >>> death_threshold(1.0) == 2**64, death_threshold(0.5) == 2**63, death_threshold(5e-324)
    (True, True, 1)
    """
    value = Fraction(rate) * 2**64
    return -(-value.numerator // value.denominator)


def death_seconds(seed: int, rate: float, first: int, last: int) -> NDArray[np.int64]:
    """The seconds ``first … last`` in which a random death schedule with ``seed`` and
    ``rate`` (deaths per second, 0 < rate ≤ 1) kills, ascending.

    Specified exactly, in integers: second t has a death when draw t of the schedule's
    :data:`DEATHS` stream, ``x = splitmix64(schedule_counter(seed, DEATHS, t))``, is below
    ``rate * 2⁶⁴`` (:func:`death_threshold`). Each second is a trial of probability
    ``ceil(rate * 2⁶⁴) / 2⁶⁴`` (within 2⁻⁶⁴ of the rate): a Bernoulli process, whose gaps
    between deaths are geometric in whole seconds — the discrete form of a Poisson process's
    exponential gaps, which a model stepping by seconds floors to seconds anyway. It
    needs neither a logarithm nor floating point (neither is specified to the last bit on
    every platform: ``-ln(u) / rate`` is not), it gives the same deaths on every platform
    and NumPy version, and second t's trial depends on (seed, t) alone: a shorter run, or a
    later ``start``, sees the same deaths in the seconds it shares with a longer one. (A
    second is at most 10⁶, the longest duration: within the counter's 28 bits of k.)

    >>> death_seconds(2026, 0.0066667, 0, 900).tolist()
    [48, 586, 660, 733, 800, 830]
    """
    if last < first:
        return np.zeros(0, dtype=np.int64)
    seconds = np.arange(first, last + 1, dtype=np.uint64)
    counters = np.uint64(splitmix64(seed)) ^ (np.uint64(DEATHS << 28) | seconds)
    draws = splitmix64_array(counters)
    threshold = death_threshold(rate)
    hit = (np.ones(len(draws), dtype=bool) if threshold > MASK64
           else draws < np.uint64(threshold))
    return seconds[hit].astype(np.int64)
