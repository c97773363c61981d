"""The random streams: SplitMix64 exactly as published, counter form, compiled form."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from reconsim.model import rng
from reconsim.model.kernels.rules import splitmix64_u64, uniform_u64


def stateful_splitmix64(state: int, n: int) -> list[int]:
    """Vigna's splitmix64.c, transcribed: ``next()`` adds the increment, then mixes."""
    out = []
    for _ in range(n):
        state = (state + 0x9E3779B97F4A7C15) & rng.MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & rng.MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & rng.MASK64
        out.append(z ^ (z >> 31))
    return out


#: The reference sequence for seed 1234567 published with splitmix64.c.
PUBLISHED_1234567 = [6457827717110365317, 3203168211198807973, 9817491932198370423,
                     4593380528125082431, 16408922859458223821]


def test_stateful_generator_gives_the_published_sequence() -> None:
    assert stateful_splitmix64(1234567, 5) == PUBLISHED_1234567


def test_counter_form_gives_the_published_sequence() -> None:
    # After k steps the state is x + k * increment; the counter form adds the last one itself.
    assert [rng.splitmix64(1234567 + k * rng.INCREMENT) for k in range(5)] == PUBLISHED_1234567


@settings(max_examples=200)
@given(st.integers(0, rng.MASK64), st.integers(1, 40))
def test_counter_form_equals_the_stateful_generator(state: int, n: int) -> None:
    want = stateful_splitmix64(state, n)
    assert [rng.splitmix64((state + k * rng.INCREMENT) & rng.MASK64) for k in range(n)] == want


@settings(max_examples=300, deadline=None)
@given(st.integers(0, rng.MASK64))
def test_compiled_splitmix64_equals_python(x: int) -> None:
    assert int(splitmix64_u64(np.uint64(x))) == rng.splitmix64(x)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, rng.MAX_SEED), st.integers(0, 4), st.integers(0, (1 << 28) - 1),
       st.integers(1, 10**9))
def test_compiled_uniform_equals_python(seed: int, stream: int, k: int, n: int) -> None:
    got = rng.uniform(seed, stream, k, n)
    assert 0 <= got < n
    assert uniform_u64(seed, stream, k, n) == got


def test_counter_layout() -> None:
    assert rng.counter(1, 0, 0) == 1 << 32
    assert rng.counter(0, 4, 5) == (4 << 28) + 5
    assert rng.counter(rng.MAX_SEED, 4, (1 << 28) - 1) < 1 << 63


def test_streams_are_distinct_and_roughly_uniform() -> None:
    draws = [rng.uniform(3, s, k, 10) for s in range(5) for k in range(2000)]
    assert len({tuple(draws[i * 2000:(i + 1) * 2000]) for i in range(5)}) == 5
    counts = np.bincount(draws, minlength=10)
    assert counts.min() > 850  # 10,000 draws, 1,000 expected each
    assert counts.max() < 1150


#: Random death schedules' seconds, computed once by rng.death_seconds: (schedule seed,
#: rate, first, last, cell seed) -> the seconds with a death. The first is the default
#: sweep's ``chaos`` schedule; those of cell seed 0 are the deaths every cell had before the
#: cell's seed entered the draw (model version 2), kept.
DEATH_SECONDS = {
    (2026, 0.0066667, 0, 900, 0): [48, 586, 660, 733, 800, 830],
    (9, 0.05, 0, 200, 0): [9, 75, 82, 83, 89, 106, 121, 122, 124, 197],
    (2**63 - 1, 0.05, 0, 200, 0): [0, 31, 60, 87, 88, 104, 150, 159, 199],
    (0, 0.5, 10, 30, 0): [10, 11, 12, 14, 16, 21, 28, 30],
    (1, 1.0, 3, 7, 0): [3, 4, 5, 6, 7],
    (7, 5e-324, 0, 10**6, 0): [],
    (2026, 0.0066667, 0, 900, 1): [135, 333, 420, 464, 486, 714],
    (2026, 0.0066667, 0, 900, rng.MAX_SEED): [39, 95, 106, 200, 457, 499, 843],
    (1, 1.0, 3, 7, 5): [3, 4, 5, 6, 7],
}


def simple_death_seconds(schedule_seed: int, rate: float, first: int, last: int,
                         seed: int) -> list[int]:
    """The specification, done the plain way: per second t, the schedule's draw t in the
    cell with ``seed`` (the first output of Vigna's stateful generator seeded with key XOR
    (seed << 32 | 5 << 28 | t), where key is its first output seeded with the schedule's
    seed) is a death when draw / 2^64 < rate, compared in exact integers."""
    key = stateful_splitmix64(schedule_seed, 1)[0]
    numerator, denominator = rate.as_integer_ratio()
    out = []
    for t in range(first, last + 1):
        draw = stateful_splitmix64(key ^ (seed << 32 | 5 << 28 | t), 1)[0]
        if draw * denominator < numerator * 2**64:
            out.append(t)
    return out


def one_cell(schedule_seed: int, rate: float, first: int, last: int, seed: int) -> list[int]:
    cells, seconds = rng.death_seconds(schedule_seed, rate, first, last, [seed])
    assert set(cells.tolist()) <= {0}
    return [int(t) for t in seconds]


def test_death_seconds_are_the_fixed_values() -> None:
    for args, want in DEATH_SECONDS.items():
        assert one_cell(*args) == want, args


def test_death_seconds_fixed_values_meet_the_simple_specification() -> None:
    for args, want in DEATH_SECONDS.items():
        if args[3] - args[2] <= 1000:  # the plain way is slow
            assert simple_death_seconds(*args) == want, args


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**63 - 1), st.sampled_from([1e-3, 0.0066667, 0.05, 0.5, 0.999, 1.0]),
       st.integers(0, 500), st.integers(0, 300), st.integers(0, rng.MAX_SEED))
def test_death_seconds_meet_the_simple_specification(schedule_seed: int, rate: float,
                                                     first: int, span: int, seed: int) -> None:
    got = one_cell(schedule_seed, rate, first, first + span, seed)
    assert got == simple_death_seconds(schedule_seed, rate, first, first + span, seed)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**63 - 1), st.sampled_from([0.01, 0.3, 1.0]),
       st.lists(st.integers(0, rng.MAX_SEED), max_size=6), st.integers(0, 1200))
def test_many_cells_are_each_cell_alone_in_order(schedule_seed: int, rate: float,
                                                 seeds: list[int], last: int) -> None:
    """Cells are drawn in blocks (rng.DRAW_BLOCK trials): ordered by cell, then second,
    each cell's seconds its own, whatever the block holds."""
    cells, seconds = rng.death_seconds(schedule_seed, rate, 0, last, seeds)
    assert cells.tolist() == sorted(cells.tolist())
    for i, seed in enumerate(seeds):
        assert seconds[cells == i].tolist() == one_cell(schedule_seed, rate, 0, last, seed)


def test_a_block_boundary_splits_no_cell() -> None:
    seeds = list(range(5))
    span = rng.DRAW_BLOCK // 2 + 1  # one cell a block
    cells, seconds = rng.death_seconds(3, 0.001, 0, span - 1, seeds)
    assert [seconds[cells == i].tolist() for i in range(5)] == [
        one_cell(3, 0.001, 0, span - 1, s) for s in seeds]


def test_the_deaths_depend_on_the_cell_seed_and_the_schedule_seed() -> None:
    draws = {(s, c): one_cell(s, 0.05, 0, 2000, c) for s in (1, 2) for c in (0, 1, 2)}
    assert len({tuple(v) for v in draws.values()}) == 6


def test_the_death_stream_is_new() -> None:
    """The cells' streams keep their numbers; the schedules' is the next one."""
    assert (rng.STARTUP, rng.LEDGER_DELAY, rng.INTERVAL, rng.FAIL, rng.LOST,
            rng.DEATHS) == (0, 1, 2, 3, 4, 5)


def test_death_threshold_is_exact() -> None:
    assert rng.death_threshold(0.0066667) == -(-(0.0066667).as_integer_ratio()[0] * 2**64
                                               // (0.0066667).as_integer_ratio()[1])
    assert rng.death_threshold(1.0) == 2**64  # every second
