"""The kernel agrees with the reference model on every metric, for every cell tried."""

from __future__ import annotations

import dataclasses
import functools

import numba
import numpy as np
import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from reconsim import CONTROLLERS, Cell, run_reference
from reconsim.model.controllers import registry
from reconsim.model.kernels.count import _BLOCK, PARALLEL_MIN_CELLS, borrowed, simulate_arrays
from reconsim.model.params import MAX_SECONDS, OBSERVE
from reconsim.model.simulate import cells_frame, kernel_inputs, simulate
from tests.strategies import cells


def kernel_metrics(batch: list[Cell]) -> list[dict[str, object]]:
    cells = cells_frame(batch)
    return simulate(cells).drop(cells.columns).to_dicts()


@settings(max_examples=400, deadline=None)
@given(cells())
@example(Cell(B=0, G=0, U=1, desired=0, duration=0, deaths=()))
@example(Cell(B=0, G=0, U=1, desired=3, duration=1, deaths=((0, 5), (1, 1))))
@example(Cell(B=0, G=7, U=1, desired=4, duration=60, deaths=((20, 2), (20, 9), (20, 1))))
@example(Cell(controller="intent", B=0, G=0, U=1, desired=5, duration=30, deaths=((3, 50),)))
@example(Cell(G=30, U=5, duration=120, deaths=((40, 3), (500, 2))))
@example(Cell(controller="intent", G=12, B=3, U=2, duration=90, deaths=((10, 2), (11, 2))))
def test_kernel_matches_reference(cell: Cell) -> None:
    assert kernel_metrics([cell]) == [run_reference(cell)]


@settings(max_examples=60, deadline=None)
@given(st.lists(cells(max_duration=120), min_size=2, max_size=12))
def test_batch_matches_reference_cell_by_cell(batch: list[Cell]) -> None:
    # Cells of different sizes share one block's scratch buffers: no state may leak between them.
    assert kernel_metrics(batch) == [run_reference(c) for c in batch]


def test_deaths_in_any_order_give_the_same_result() -> None:
    listed = Cell(G=20, duration=400, deaths=((300, 2), (100, 1), (200, 3)))
    ordered = Cell(G=20, duration=400, deaths=((100, 1), (200, 3), (300, 2)))
    assert kernel_metrics([listed]) == kernel_metrics([ordered]) == [run_reference(ordered)]


#: How many distinct cells :func:`large_batch` repeats: a prime a little below a block's
#: size, so that each block holds them in another rotation, every one beside other
#: neighbours; the reference model runs each once.
DISTINCT = 2039


def large_batch() -> list[Cell]:
    """Every controller and variant, enough cells for the threaded compilation: many blocks
    stitched together, the last one partial (:data:`DISTINCT` cells, over and over)."""
    n = PARALLEL_MIN_CELLS + 1000
    return [Cell(controller=CONTROLLER_NAMES[g % 3], G=g % 61, U=1 + g % 37, B=g % 11,
                 desired=g % 9, duration=120 + g % 7, observe=OBSERVE[g // 3 % 2],
                 restart_at=(g % 101,), ttl=g % 50, max_per_round=(None, 1, 3)[g // 7 % 3],
                 gain=(1.0, 0.5, 0.333)[g // 5 % 3], deaths=((g % 89, 1 + g % 4), (60, 2)))
            for g in (g % DISTINCT for g in range(n))]


#: The controllers the kernels run: those that decide in rounds (replicaset syncs on
#: events, on the reference model: tests/test_events.py).
CONTROLLER_NAMES = [name for name in CONTROLLERS if registry.get(name).compiled]


def test_large_batch_matches_reference_in_every_cell() -> None:
    batch = large_batch()
    assert len(batch) >= PARALLEL_MIN_CELLS
    assert len(batch) % _BLOCK  # the last block is partial
    frame = cells_frame(batch)
    got = simulate(frame).drop(frame.columns)
    assert len(set(batch)) == DISTINCT
    reference = functools.cache(run_reference)  # each distinct cell once
    want = pl.DataFrame([reference(c) for c in batch], schema=got.schema)
    assert_frame_equal(got, want)


def test_threaded_and_serial_compilations_agree_over_many_blocks() -> None:
    arrays = kernel_inputs(cells_frame(large_batch()), count=True)
    np.testing.assert_array_equal(simulate_arrays(**arrays, parallel=True),
                                  simulate_arrays(**arrays, parallel=False))


@settings(max_examples=20, deadline=None)
@given(st.lists(cells(max_duration=300), min_size=1, max_size=50))
def test_threaded_and_serial_compilations_agree(batch: list[Cell]) -> None:
    # The drawn cells, repeated over three full blocks and a partial fourth.
    tiled = cells_frame(batch)[np.arange(3 * _BLOCK + 101) % len(batch)]
    arrays = kernel_inputs(tiled, count=True)
    np.testing.assert_array_equal(simulate_arrays(**arrays, parallel=True),
                                  simulate_arrays(**arrays, parallel=False))


@st.composite
def long_cells(draw: st.DrawFn) -> Cell:
    """A :func:`cells` cell stretched long (so it settles early and idles for most of its
    rounds), its deaths and restarts moved late: near or at the last second, just past it,
    or spread far apart, where a skip of idle rounds must stop and step again."""
    base = draw(cells(max_duration=60))
    duration = draw(st.integers(600, 4000))
    late = st.one_of(st.integers(duration - 3, duration + 2), st.integers(0, duration),
                     st.sampled_from((duration - 1, duration)))
    deaths = draw(st.lists(st.tuples(late, st.integers(0, 12)), max_size=4))
    restarts = draw(st.lists(late, max_size=3))
    return dataclasses.replace(base, duration=duration, deaths=tuple(deaths),
                               restart_at=tuple(restarts))


@settings(max_examples=80, deadline=None)
@given(long_cells())
@example(Cell(desired=0, duration=4000, deaths=()))  # settled from the first round
@example(Cell(G=0, B=0, U=1, duration=3000, deaths=((2999, 3), (3000, 1))))
@example(Cell(G=60, U=15, duration=4000, deaths=((300, 2), (3600, 4))))  # oscillates, settles
@example(Cell(controller="intent", G=60, U=15, duration=3000, deaths=((2990, 2),),
              restart_at=(1000, 2995)))
@example(Cell(controller="expectations", G=45, U=5, ttl=7, duration=3000,
              deaths=((1500, 6), (1505, 6))))
@example(Cell(G=30, U=7, gain=0.333, max_per_round=2, duration=3000, deaths=((900, 5),)))
def test_long_runs_with_late_events_match_reference(cell: Cell) -> None:
    # Most rounds of these cells are idle: the kernel adds them up in closed form.
    assert kernel_metrics([cell]) == [run_reference(cell)]


@pytest.mark.parametrize("controller", CONTROLLER_NAMES)
def test_a_settled_run_s_tail_adds_one_idle_round_after_another(controller: str) -> None:
    # The longest run a cell may have, against the reference model's 20,000 seconds: after
    # it settles, every round reads `desired` copies plus the ledger's base and does nothing.
    short = Cell(controller=controller, G=60, U=15, ledger_base=26, duration=20_000)
    long = dataclasses.replace(short, duration=MAX_SECONDS)
    want = run_reference(short)
    got = kernel_metrics([long])[0]
    idle = MAX_SECONDS // 15 + 1 - want["rounds"]
    assert got["rounds"] == want["rounds"] + idle
    assert got["reads"] == want["reads"] + idle * (short.desired + 26)
    same = ("created", "delete_commands", "deleted", "overshoot", "stable_at",
            "excess_copy_seconds", "missing_copy_seconds")
    assert {k: got[k] for k in same} == {k: want[k] for k in same}


@numba.njit(cache=False)
def _write_through_borrowed_views(owner: np.ndarray) -> tuple[int, int, int]:
    view = borrowed(owner)
    view[1, 2] = 7  # writes land in the owner
    row = view[1]  # and a slice of a borrowed view reads it, at its place
    return view.shape[0], view.shape[1], row[2] + borrowed(owner[0])[3]


def test_a_borrowed_view_is_its_owner_s_data_in_place() -> None:
    owner = np.zeros((3, 5), np.int64)
    owner[0, 3] = 4
    assert _write_through_borrowed_views(owner) == (3, 5, 11)
    assert owner[1, 2] == 7
    assert owner.sum() == 11  # nothing else written
