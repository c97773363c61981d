"""The world's rules of a copy's life and a round's times: each as the reference models call
it (Python) and as the kernels call it (compiled), the same numbers; and what each decides."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reconsim.model import rng, rules
from reconsim.model.copies import Copy
from reconsim.model.kernels import rules as compiled

_SECONDS = st.integers(-10, 400)
_TIMES = st.one_of(st.just(rules.NEVER), _SECONDS)
_TABLES = st.lists(st.tuples(st.integers(0, 50), st.integers(1, 9)), max_size=4)
_WINDOWS = st.lists(st.tuples(st.integers(0, 50), st.integers(1, 50), st.integers(1, 9)).map(
    lambda w: (w[0], w[0] + w[1], w[2])), max_size=4)


@settings(max_examples=150, deadline=None)
@given(t=st.integers(0, 400), base=st.integers(0, 60), seed=st.integers(0, 2**31),
       k=st.integers(0, 1000), spread=st.integers(0, 30), entries=_TABLES)
def test_a_copys_delays_are_its_base_plus_its_draw_compiled_alike(  # noqa: PLR0917
        t: int, base: int, seed: int, k: int, spread: int,
        entries: list[tuple[int, int]]) -> None:
    table, n = rules.delay_table(entries), len(entries)
    ready = rules.ready_at(t, base, seed, k, spread, table, 0, n)
    g = rules.ledger_delay(base, seed, k, spread, table, 0, n)
    assert ready == t + base + rules.extra_delay(seed, rng.STARTUP, k, spread, table, 0, n)
    assert g == base + rules.extra_delay(seed, rng.LEDGER_DELAY, k, spread, table, 0, n)
    assert compiled.ready_at(t, base, seed, k, spread, table, 0, n) == ready
    assert compiled.ledger_delay(base, seed, k, spread, table, 0, n) == g


@settings(max_examples=200, deadline=None)
@given(ready=_SECONDS, death=_TIMES, t=_SECONDS, grace=st.integers(0, 60))
def test_a_copy_runs_from_ready_until_it_dies_grace_after_its_delete(
        ready: int, death: int, t: int, grace: int) -> None:
    running = rules.runs(ready, death, t)
    assert running == (ready <= t < death)
    assert compiled.runs(ready, death, t) == running
    assert not rules.runs(ready, rules.NEVER, ready - 1)
    assert rules.runs(ready, rules.NEVER, ready)
    # Deleted at t (ready by then): it runs through the grace period, not at its end.
    death = rules.dies_at(t, grace)
    assert compiled.dies_at(t, grace) == death == t + grace
    assert all(rules.runs(min(ready, t), death, u) for u in range(t, death))
    assert not rules.runs(min(ready, t), death, death)


@settings(max_examples=200, deadline=None)
@given(listed=_SECONDS, removed=st.one_of(st.none(), _SECONDS), g=st.integers(0, 40),
       r=_SECONDS)
def test_the_ledger_lists_a_copy_as_the_reference_copy_says(
        listed: int, removed: int | None, g: int, r: int) -> None:
    # listed from its listing second; gone from the ledger g seconds after its removal
    want = listed <= r and (removed is None or r < removed + g)
    when = rules.NEVER if removed is None else removed
    assert rules.on_ledger(listed, when, g, r) == want
    assert compiled.on_ledger(listed, when, g, r) == want
    copy = Copy(birth=listed - g, ready=listed - g, g=g, listed=listed, removed=removed)
    assert copy.on_ledger(r) == want


@settings(max_examples=200, deadline=None)
@given(listed=_SECONDS, removed=st.one_of(st.none(), _SECONDS), r=_SECONDS)
def test_a_remembered_creation_is_pending_until_listed_or_removed(
        listed: int, removed: int | None, r: int) -> None:
    when = rules.NEVER if removed is None else removed
    want = listed > r and not (removed is not None and removed <= r)
    assert rules.pending_at(listed, when, r) == want
    assert compiled.pending_at(listed, when, r) == want


@settings(max_examples=200, deadline=None)
@given(t=st.integers(0, 10_000), U=st.integers(1, 60), jitter=st.integers(0, 20),
       seed=st.integers(0, 2**31), i=st.integers(0, 5000))
def test_the_next_round_is_u_later_jittered_and_never_at_once(
        t: int, U: int, jitter: int, seed: int, i: int) -> None:
    nxt = rules.next_round(t, U, jitter, seed, i)
    assert compiled.next_round(t, U, jitter, seed, i) == nxt
    assert max(t + 1, t + U - jitter) <= nxt <= t + U + jitter
    if jitter == 0:
        assert nxt == t + U
    else:
        assert nxt == t + max(1, U - jitter + rng.uniform(seed, rng.INTERVAL, i, 2 * jitter + 1))


def test_jittered_rounds_spread_over_the_whole_range() -> None:
    steps = {rules.next_round(0, 10, 3, 7, i) for i in range(200)}
    assert steps == set(range(7, 14))


@settings(max_examples=200, deadline=None)
@given(windows=_WINDOWS, t=st.integers(-5, 120))
def test_a_read_is_as_stale_as_the_first_listed_window_holding_it(
        windows: list[tuple[int, int, int]], t: int) -> None:
    lag = rules.lag_table(windows)
    want = next((extra for lo, hi, extra in windows if lo <= t < hi), 0)
    assert rules.stale_by(t, lag, 0, len(windows)) == want
    assert compiled.stale_by(t, lag, 0, len(windows)) == want


def test_overlapping_windows_and_a_cells_own_columns() -> None:
    lag = rules.lag_table(((0, 10, 3), (5, 20, 7), (0, 100, 1)))
    assert [rules.stale_by(t, lag, 0, 2) for t in (4, 5, 10, 19, 20)] == [3, 3, 7, 7, 0]
    # A cell reads its own columns only: the third window belongs to another.
    assert rules.stale_by(50, lag, 0, 2) == 0
    assert rules.stale_by(50, lag, 2, 3) == 1
    assert rules.lag_table(()).shape == (3, 1)


@settings(max_examples=200, deadline=None)
@given(diff=st.integers(-1000, 1000), cap=st.integers(0, 50))
def test_a_cap_bounds_a_correction_either_way_and_0_is_none(diff: int, cap: int) -> None:
    got = rules.capped(diff, cap)
    assert compiled.capped(diff, cap) == got
    if cap == 0:
        assert got == diff
    else:
        assert abs(got) == min(abs(diff), cap)
        assert got * diff >= 0  # the sign is kept


def test_an_instants_syncs_are_bounded_by_desired_and_the_copies_made() -> None:
    assert rules.most_syncs(0, 0) == rules.SYNCS_AT_ONCE
    assert rules.most_syncs(3, 5) == compiled.most_syncs(3, 5) == rules.SYNCS_AT_ONCE + 16
