"""The world kernel and the dispatch agree with the reference model on every metric."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from reconsim import METRIC_NAMES, Cell, run_reference
from reconsim.model import rng
from reconsim.model.kernels.world import (
    PARALLEL_MIN_CELLS,
    WORLD_OUT_COLUMNS,
    running_order,
    simulate_world_arrays,
)
from reconsim.model.metrics import OUTPUT_NAMES, RESPONSES
from reconsim.model.params import FAULT_KINDS
from reconsim.model.simulate import cells_frame, kernel_inputs, simulate, world_rows
from tests.strategies import cells, world_cells


def metrics(batch: list[Cell]) -> list[dict[str, object]]:
    """What ``simulate`` returns for each cell (each row on the kernel it dispatches to)."""
    return simulate(cells_frame(batch)).select(*METRIC_NAMES, RESPONSES).to_dicts()


def world_kernel(batch: list[Cell], *, parallel: bool | None = None) -> np.ndarray:
    """The world kernel's raw matrix for the batch, whatever world the cells are in."""
    return simulate_world_arrays(**kernel_inputs(cells_frame(batch)),
                                 parallel=parallel)


def raw(m: dict[str, Any], cell: Cell) -> list[object]:
    """A reference result for ``cell`` in the order of :data:`WORLD_OUT_COLUMNS`."""
    changes = [d for at, d in cell.scale if at <= cell.duration]
    values = {**m, "deaths_total": sum(count for _, count in cell.deaths),
              "raised": sum(max(0, b - a)
                            for a, b in zip([cell.desired, *changes], changes, strict=False)),
              "responses": len(m[RESPONSES]),
              "last_drift": cell.duration if m["stable_at"] is None else m["stable_at"] - 1,
              **{name: -1 if m[name] is None else m[name]  # a kernel's null
                 for name in ("overshoot_after", "missing_after", "settle_after")}}
    return [values[c] for c in WORLD_OUT_COLUMNS]


EDGES = [
    # spreads with B = 0 or G = 0
    Cell(B=0, B_spread=4, G=0, G_spread=0, U=1, duration=60, seed=1),
    Cell(B=0, B_spread=0, G=0, G_spread=9, U=3, duration=90, seed=2, controller="intent"),
    Cell(B=0, B_spread=7, G=0, G_spread=7, U=2, duration=120, seed=3,
         controller="expectations", observe="created"),
    # jitter larger than U: intervals clip at 1 s
    Cell(U=3, U_jitter=20, duration=200, seed=4, G=10),
    Cell(U=1, U_jitter=1, duration=100, seed=5, G=4, B=0),
    # lag windows over the start and past the end, overlapping each other
    Cell(G=5, lag=((0, 50, 30), (20, 2000, 7)), duration=300, controller="intent"),
    Cell(G=5, lag=((250, 10_000, 100),), duration=300, delete_order="newest"),
    # a fault schedule longer than the run
    Cell(G=20, create_faults=((0, 10_000, "fail"),), duration=200),
    Cell(G=20, create_faults=((0, 500, "lost"), (5, 3, "fail")), duration=200,
         controller="expectations", slow_start=True),
    # watch triggers with zero delays
    Cell(G=0, B=0, trigger="watch", duration=120, deaths=((10, 3), (50, 1))),
    Cell(G=0, B=0, trigger="watch", duration=120, grace=5, delete_order="newest",
         observe="created", controller="intent", deaths=((10, 3),)),
    Cell(G=0, B=0, trigger="watch", U=50, duration=200, lag=((20, 60, 3),),
         deaths=((30, 2), (31, 2))),
]


@pytest.mark.parametrize("cell", EDGES)
def test_edge_cases_match_reference(cell: Cell) -> None:
    assert metrics([cell]) == [run_reference(cell)]


@settings(max_examples=200, deadline=None)
@given(world_cells())
def test_world_cell_matches_reference(cell: Cell) -> None:
    assert metrics([cell]) == [run_reference(cell)]


@settings(max_examples=25, deadline=None)
@given(st.lists(world_cells(max_duration=120) | cells(max_duration=120), min_size=2,
                max_size=12))
def test_mixed_batch_matches_reference_cell_by_cell(batch: list[Cell]) -> None:
    # Rows of both worlds in one frame: dispatch, scratch reuse and reassembly in order.
    assert metrics(batch) == [run_reference(c) for c in batch]


@settings(max_examples=40, deadline=None)
@given(st.lists(world_cells(max_duration=60) | cells(max_duration=60), min_size=1,
                max_size=30), st.data())
def test_rows_of_a_batch_run_in_place(batch: list[Cell], data: st.DataObject) -> None:
    # simulate hands the world kernel a split batch's world rows as indices into the whole
    # batch: their metrics are those of a batch of just those cells, written into their
    # columns, and the other columns are left as they were.
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, len(batch) - 1)))), np.int64)
    out = np.full((len(WORLD_OUT_COLUMNS), len(batch)), -7, np.int64)
    got = simulate_world_arrays(**kernel_inputs(cells_frame(batch)), rows=rows[::-1], out=out)
    assert got.base is out
    want = (world_kernel([batch[i] for i in rows]) if len(rows)
            else np.empty((0, len(WORLD_OUT_COLUMNS))))
    np.testing.assert_array_equal(out[:, rows].T, want)
    assert (np.delete(out, rows, axis=1) == -7).all()


@settings(max_examples=25, deadline=None)
@given(st.lists(world_cells(max_duration=60) | cells(max_duration=60), min_size=2,
                max_size=30))
def test_running_order_groups_the_rows_by_controller_stably(batch: list[Cell]) -> None:
    # Each controller's cells run side by side (on its own kernel), in the batch's order;
    # a part of a batch is ordered as the whole is.
    a = kernel_inputs(cells_frame(batch))
    whole = running_order(a).tolist()
    assert whole == sorted(range(len(batch)), key=lambda i: int(a["controller"][i]))
    rows = np.arange(len(batch), dtype=np.int64)[::2]
    assert running_order(a, rows).tolist() == [i for i in whole if i % 2 == 0]


@settings(max_examples=100, deadline=None)
@given(cells())
@example(Cell(B=0, G=0, U=1, desired=0, duration=0, deaths=()))
@example(Cell(controller="intent", G=12, B=3, U=2, duration=90, deaths=((10, 2), (11, 2))))
def test_world_kernel_is_exact_in_seed_001s_world_too(cell: Cell) -> None:
    # Forced onto the world kernel, a cell the count kernel would take gives the same.
    m = run_reference(cell)
    want = raw(m, cell)
    assert world_kernel([cell]).tolist() == [want]


def test_defaults_reproduce_todays_model() -> None:
    m = metrics([Cell(G=60)])[0]
    assert m == run_reference(Cell(G=60))
    assert (m["created"], m["unneeded"], m["delete_commands"], m["overshoot"]) == (40, 32, 128, 24)
    assert (m["create_commands"], m["failed_creates"], m["work"]) == (40, 0, 168)


def test_only_rows_off_the_defaults_leave_seed_001s_world() -> None:
    frame = cells_frame([Cell(), Cell(seed=9), Cell(grace=1), Cell(lag=((0, 1, 1),))])
    assert world_rows(frame).tolist() == [False, False, True, True]  # type: ignore[union-attr]
    assert world_rows(cells_frame([Cell(), Cell(seed=3)])) is None
    assert world_rows(frame.select("controller", "G", "U", "B", "desired", "duration",
                                   "deaths")) is None


def test_failed_and_lost_creates() -> None:
    # Every create fails: nothing is ever created, yet every round commands six creates.
    m = metrics([Cell(fail_rate=1.0, duration=90)])[0]
    assert (m["created"], m["create_commands"], m["failed_creates"], m["rounds"]) == (0, 42, 42, 7)
    assert m["work"] == 42
    # Lost replies: the copies exist; intent does not remember them, so it creates again.
    lost = metrics([Cell(controller="intent", G=30, lost_rate=1.0, duration=90)])[0]
    sure = metrics([Cell(controller="intent", G=30, duration=90)])[0]
    assert lost["failed_creates"] == 0
    assert lost["created"] > sure["created"] == 6


def test_slow_start_stops_after_a_batch_with_an_error() -> None:
    # Batch 1 loses its reply: an error, so batches 2 and 4 never go.
    cell = Cell(slow_start=True, desired=7, duration=0, create_faults=((0, 1, "lost"),))
    assert [metrics([cell])[0][k] for k in ("create_commands", "created", "failed_creates")] \
        == [1, 1, 0]
    # A seed whose command 0 succeeds and command 1 fails at rate 0.5: batch 2 (commands 1
    # and 2) is issued whole, batch 4 is not.
    seed = next(s for s in range(1000) if rng.uniform(s, rng.FAIL, 0, 1000) >= 500
                and rng.uniform(s, rng.FAIL, 1, 1000) < 500)
    cell = Cell(slow_start=True, desired=7, duration=0, fail_rate=0.5, seed=seed)
    m = metrics([cell])[0]
    assert m["create_commands"] == 3
    assert m == run_reference(cell)
    assert metrics([Cell(slow_start=True, desired=7, duration=0)])[0]["created"] == 7


def test_same_seed_same_numbers_other_seed_other_numbers() -> None:
    cell = Cell(G=10, G_spread=27, B_spread=5, U_jitter=4, duration=600)
    again = metrics([cell, cell, dataclasses.replace(cell, seed=1)])
    assert again[0] == again[1] == run_reference(cell)
    assert again[2] != again[0]


def test_cells_that_hold_many_copies_grow_the_scratch() -> None:
    # Hundreds of copies at once: past the first capacity, the cell is rerun wider.
    batch = [Cell(desired=300, G=40, G_spread=20, duration=200, delete_order="newest"),
             Cell(desired=2, grace=3, duration=100)]
    assert metrics(batch) == [run_reference(c) for c in batch]


@pytest.mark.parametrize("controller", ["ledger", "intent", "expectations"])
def test_large_batch_runs_in_parallel_blocks(controller: str) -> None:
    n = PARALLEL_MIN_CELLS + 100
    batch = [Cell(controller=controller, G=g % 31, G_spread=g % 7, U=1 + g % 23, B=g % 6,
                  B_spread=g % 3, desired=g % 7, duration=150, seed=g, grace=g % 4,
                  delete_order=("oldest", "newest")[g % 2],
                  trigger=("periodic", "watch")[g % 3 == 0], fail_rate=(g % 5) / 20)
             for g in range(n)]
    got = metrics(batch)
    for i in range(0, n, 397):
        assert got[i] == run_reference(batch[i])


@settings(max_examples=8, deadline=None)
@given(st.lists(world_cells(max_duration=200), min_size=1, max_size=40))
def test_threaded_and_serial_compilations_agree(batch: list[Cell]) -> None:
    np.testing.assert_array_equal(world_kernel(batch, parallel=True),
                                  world_kernel(batch, parallel=False))


def test_new_columns_are_optional_and_checked() -> None:
    base = cells_frame([Cell(G=20)])
    assert simulate(base.select("controller", "G", "U", "B", "desired", "duration",
                                "deaths"))["overshoot"].to_list() == [6]
    with pytest.raises(ValueError, match=r"lag window must have from < to, got \(5, 5\)"):
        simulate(base.with_columns(lag=pl.Series([[{"from": 5, "to": 5, "extra": 1}]])))


@pytest.mark.parametrize(("change", "message"), [
    # A watch trigger may run a round every second: the bound reads U = 1, not U = 900
    # (the same cell with periodic rounds passes: below).
    ({"desired": 10**6, "U": 900, "trigger": "watch"}, "may create 9.01e+08 copies"),
    ({"desired": 2**61, "U": 900, "grace": 1}, "could count up to"),
    ({"duration": 10**10, "U": 900, "U_jitter": 1}, "GiB of scratch"),
])
def test_the_world_kernel_refuses_what_it_cannot_count(change: dict[str, object],
                                                       message: str) -> None:
    cells = cells_frame([Cell(), Cell()]).with_columns(
        **{k: pl.Series([getattr(Cell(), k), v]) for k, v in change.items()})
    with pytest.raises(ValueError, match=re.escape("kernel: cell 1 (")) as info:
        simulate(cells, checked=True)
    assert message in str(info.value)


def test_the_guard_passes_what_the_world_kernel_can_hold() -> None:
    from reconsim.model.kernels.world import _refuse_copies

    def cell(trigger: bool) -> dict[str, np.ndarray]:
        return {"desired": np.array([10**6]), "U": np.array([900]), "duration": np.array([900]),
                "U_jitter": np.array([0]), "trigger": np.array([trigger]),
                "initial": np.array([0])}

    _refuse_copies(cell(trigger=False))  # two rounds of a million copies: 0.24 GiB
    with pytest.raises(ValueError, match=re.escape("may create 9.01e+08 copies")):
        _refuse_copies(cell(trigger=True))


@st.composite
def long_world_cells(draw: st.DrawFn) -> Cell:
    """A :func:`world_cells` cell stretched long, so that it settles early and idles for
    most of its rounds, with its scripted events moved late (near or at the last second,
    just past it, or anywhere): deaths, restarts, fault events and lag windows, each of
    which a skip of idle rounds must stop at or look through."""
    base = draw(world_cells(max_duration=60))
    duration = draw(st.integers(600, 2000))
    late = st.one_of(st.integers(duration - 3, duration + 2), st.integers(0, duration))
    deaths = draw(st.lists(st.tuples(late, st.integers(0, 12)), max_size=3))
    windows = draw(st.lists(st.tuples(late, st.integers(1, 200), st.integers(1, 90))
                            .map(lambda w: (w[0], w[0] + w[1], w[2])), max_size=2))
    faults = draw(st.lists(st.tuples(late, st.integers(0, 5), st.sampled_from(FAULT_KINDS)),
                           max_size=2))
    return dataclasses.replace(
        base, duration=duration, deaths=tuple(deaths),
        restart_at=tuple(draw(st.lists(late, max_size=2))),
        lag=tuple(windows) if draw(st.booleans()) else base.lag,
        create_faults=tuple(faults) if draw(st.booleans()) else base.create_faults)


@settings(max_examples=40, deadline=None)
@given(long_world_cells())
@example(Cell(desired=0, duration=3000, trigger="watch", U_jitter=5, deaths=()))
@example(Cell(G=60, U=15, G_spread=20, duration=3000, deaths=((2999, 2),),
              lag=((2500, 2600, 90),), trigger="watch"))
@example(Cell(G=20, U=10, U_jitter=9, duration=3000, deaths=((300, 2), (2000, 3)),
              fail_rate=0.2, create_faults=((2000, 2, "lost"),), controller="intent"))
@example(Cell(G=5, U=30, duration=2000, grace=40, delete_order="newest", controller="expectations",
              ttl=10, deaths=((1990, 4),), lag=((100, 110, 60), (1995, 2100, 3))))
# A lag window after the cell settled again reads back into its replacement of the dead:
# the skip must see that the window's stale reads reach behind `quiet_from`.
@example(Cell(G=5, U=10, B=5, duration=600, deaths=((200, 2),), lag=((240, 300, 60),)))
@example(Cell(G=5, U=10, B=5, duration=600, deaths=((200, 2),), lag=((240, 300, 60),),
              trigger="watch"))
def test_long_world_runs_with_late_events_match_reference(cell: Cell) -> None:
    # Most rounds of these cells are idle: the kernel adds them up in closed form.
    assert metrics([cell]) == [run_reference(cell)]


@settings(max_examples=30, deadline=None)
@given(st.lists(world_cells(max_duration=50), min_size=1, max_size=12), st.data())
def test_split_arrays_are_those_of_the_split_frame(batch: list[Cell], data: st.DataObject) -> None:
    # The dispatch splits a frame's kernel arrays, lists included, rather than the frame.
    from reconsim.model.kernels.arrays import take_rows

    rows = np.array(sorted(data.draw(st.sets(st.integers(0, len(batch) - 1)))), np.int64)
    got = take_rows(kernel_inputs(cells_frame(batch)), rows)
    want = kernel_inputs(cells_frame([batch[i] for i in rows]))
    assert got.keys() == want.keys()
    for key, values in want.items():
        np.testing.assert_array_equal(got[key], values, err_msg=key)


@pytest.mark.parametrize(("column", "message"), [
    ("lag", "lag: null schedule in row 0"), ("create_faults", "create_faults: null schedule"),
    ("grace", "grace: null value in row 0"), ("trigger", "trigger: null value in row 0"),
])
def test_an_all_null_world_column_is_refused_by_name(column: str, message: str) -> None:
    frame = cells_frame([Cell(G=20), Cell()]).with_columns(pl.lit(None).alias(column))
    with pytest.raises(ValueError, match=re.escape(message)):
        simulate(frame)


def test_world_columns_at_their_defaults_are_skipped_only_where_all_rows_hold_them() -> None:
    # Columns at their defaults in every row need no check; one row off makes it checked.
    frame = cells_frame([Cell(G=20), Cell(G=30), Cell()])
    assert simulate(frame).select(OUTPUT_NAMES).to_dicts() == [
        run_reference(c) for c in (Cell(G=20), Cell(G=30), Cell())]
    bad = frame.with_columns(lag=pl.Series([[], [{"from": 9, "to": 3, "extra": 1}], []],
                                           dtype=frame.schema["lag"]))
    with pytest.raises(ValueError, match=re.escape("lag window must have from < to")):
        simulate(bad)
