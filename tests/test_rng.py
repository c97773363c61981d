"""The random streams: SplitMix64 exactly as published, counter form, compiled form."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from reconsim.model import rng
from reconsim.model.kernels.world import splitmix64_u64, uniform_u64


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
@given(st.integers(0, rng.SEED_LIMIT - 1), st.integers(0, 4), st.integers(0, (1 << 28) - 1),
       st.integers(1, 10**9))
def test_compiled_uniform_equals_python(seed: int, stream: int, k: int, n: int) -> None:
    got = rng.uniform(seed, stream, k, n)
    assert 0 <= got < n
    assert uniform_u64(seed, stream, k, n) == got


def test_counter_layout() -> None:
    assert rng.counter(1, 0, 0) == 1 << 32
    assert rng.counter(0, 4, 5) == (4 << 28) + 5
    assert rng.counter(rng.SEED_LIMIT - 1, 4, (1 << 28) - 1) < 1 << 63


def test_streams_are_distinct_and_roughly_uniform() -> None:
    draws = [rng.uniform(3, s, k, 10) for s in range(5) for k in range(2000)]
    assert len({tuple(draws[i * 2000:(i + 1) * 2000]) for i in range(5)}) == 5
    counts = np.bincount(draws, minlength=10)
    assert counts.min() > 850  # 10,000 draws, 1,000 expected each
    assert counts.max() < 1150
