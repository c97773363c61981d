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
* :data:`DEATHS` — does a sweep's random death schedule kill in second k: the one stream
  keyed by something besides the cell, the schedule's own seed,
  ``splitmix64(splitmix64(schedule_seed) ^ counter(seed, DEATHS, k))``
  (:func:`death_seconds`). A sweep draws it when it builds a cell's ``deaths``; the model
  reads that list and draws nothing on it.

The kernels use :func:`reconsim.model.kernels.rules.splitmix64_u64`, the same
arithmetic on unsigned 64-bit machine integers; the tests check both agree.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Final

import numpy as np

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

#: SplitMix64's increment (the golden ratio in 64 bits), added before the finaliser.
INCREMENT: Final = 0x9E3779B97F4A7C15
MASK64: Final = (1 << 64) - 1
#: The largest seed of a cell: its streams' counters take seeds below 2^31.
MAX_SEED: Final = (1 << 31) - 1

STARTUP, LEDGER_DELAY, INTERVAL, FAIL, LOST = 0, 1, 2, 3, 4
#: A random death schedule's stream (``[schedule.X] rate = ...``), after the other five.
DEATHS: Final = 5
#: Trials :func:`death_seconds` makes at once, cells x seconds: a block's room for every
#: trial's death (two arrays of 8 MB, only the deaths' pages written) bounds its memory.
DRAW_BLOCK: Final = 1 << 20


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


def death_threshold(rate: float) -> int:
    """The draws below which a second has a death: ``x < rate * 2⁶⁴`` compared exactly, so
    ``ceil(rate * 2⁶⁴)`` from the rate's exact binary value (a float is a dyadic rational,
    converted by :class:`~fractions.Fraction` without rounding).

    >>> death_threshold(1.0) == 2**64, death_threshold(0.5) == 2**63, death_threshold(5e-324)
    (True, True, 1)
    """
    value = Fraction(rate) * 2**64
    return -(-value.numerator // value.denominator)


def death_seconds(schedule_seed: int, rate: float, first: int, last: int,
                  seeds: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The seconds ``first … last`` in which a random death schedule with ``schedule_seed``
    and ``rate`` (deaths per second, 0 < rate ≤ 1) kills, in the cells with ``seeds``: the
    deaths as two arrays, each one's cell (its index in ``seeds``) and its second, ordered
    by cell, then second.

    Specified exactly, in integers: second t of the cell with seed c has a death when draw
    t of its :data:`DEATHS` stream keyed by the schedule,
    ``x = splitmix64(splitmix64(schedule_seed) ^ counter(c, DEATHS, t))``, is below
    ``rate * 2⁶⁴`` (:func:`death_threshold`). The cell's seed and the second are the
    counter, as on every stream; the schedule's seed (0 ≤ seed < 2⁶³, more bits than a
    cell's seed field holds) enters as the key ``splitmix64(schedule_seed)``: SplitMix64 is
    a bijection of 64-bit integers, so two schedule seeds have two keys, and in one cell
    their draws t are never the same number. Two seeds of a cell, or two seconds, are two
    counters: their draws are never the same number either. With cell seed 0 the counter is
    ``counter(0, DEATHS, t)``, so a cell of seed 0 has the deaths every cell of the
    schedule had before its cell's seed entered the draw.

    Each second is a trial of probability ``ceil(rate * 2⁶⁴) / 2⁶⁴`` (within 2⁻⁶⁴ of the
    rate): a Bernoulli process, whose gaps between deaths are geometric in whole seconds —
    the discrete form of a Poisson process's exponential gaps, which a model stepping by
    seconds floors to seconds anyway. It needs neither a logarithm nor floating point
    (neither is specified to the last bit on every platform: ``-ln(u) / rate`` is not), it
    gives the same deaths on every platform and NumPy version, and second t's trial depends
    on (schedule seed, cell seed, t) alone: a shorter run, or a later ``start``, sees the
    same deaths in the seconds it shares with a longer one. (A second is at most 10⁶, the
    longest duration: within the counter's 28 bits of k.)

    >>> cells, seconds = death_seconds(2026, 0.0066667, 0, 900, [0, 1])
    >>> seconds[cells == 0].tolist(), seconds[cells == 1].tolist()
    ([48, 586, 660, 733, 800, 830], [135, 333, 420, 464, 486, 714])
    """
    seeds = np.asarray(seeds, dtype=np.uint64)
    if last < first or not len(seeds):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    span = last + 1 - first
    keys = np.uint64(splitmix64(schedule_seed)) ^ (
        (seeds << np.uint64(32)) | np.uint64(DEATHS << 28))
    threshold = death_threshold(rate)
    if threshold > MASK64:  # a death every second
        return (np.repeat(np.arange(len(seeds), dtype=np.int64), span),
                np.tile(np.arange(first, last + 1, dtype=np.int64), len(seeds)))
    rows = max(1, DRAW_BLOCK // span)
    cells, seconds = [], []
    for start in range(0, len(keys), rows):
        block = keys[start:start + rows]
        cell = np.empty(len(block) * span, dtype=np.int64)
        second = np.empty_like(cell)
        n = _compiled_trials()(block, first, last, np.uint64(threshold), cell, second)
        cells.append(cell[:n] + start)
        seconds.append(second[:n])
    return np.concatenate(cells), np.concatenate(seconds)


_INCREMENT_U64: Final = np.uint64(INCREMENT)
_MULTIPLIERS_U64: Final = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))
_SHIFTS_U64: Final = (np.uint64(30), np.uint64(27), np.uint64(31))


def _trials(  # noqa: PLR0913, PLR0917 — numba takes arguments positionally
        keys: NDArray[np.uint64], first: int, last: int, threshold: np.uint64,
        cells: NDArray[np.int64], seconds: NDArray[np.int64]) -> int:
    """The trials of :func:`death_seconds` for the cells with ``keys`` (the key XOR the
    counter's seed and stream fields): each death's cell and second written in order into
    ``cells`` and ``seconds``, their number returned. :func:`splitmix64`'s arithmetic on
    unsigned 64-bit integers (its masks are no-ops there), compiled by numba
    (:func:`_compiled_trials`); the tests check it against the specification."""
    m1, m2 = _MULTIPLIERS_U64
    s1, s2, s3 = _SHIFTS_U64
    n = 0
    for i in range(keys.shape[0]):
        for t in range(first, last + 1):
            z = (keys[i] ^ np.uint64(t)) + _INCREMENT_U64
            z = (z ^ (z >> s1)) * m1
            z = (z ^ (z >> s2)) * m2
            if (z ^ (z >> s3)) < threshold:
                cells[n] = i
                seconds[n] = t
                n += 1
    return n


@functools.cache
def _compiled_trials() -> Callable[..., Any]:
    """:func:`_trials` compiled by numba (cached on disk as the kernels are), on first use:
    importing this module brings in no numba."""
    import numba

    return numba.njit(cache=True, nogil=True)(_trials)
