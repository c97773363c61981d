"""The kernel agrees with the reference model on every metric, for every cell tried."""

from __future__ import annotations

import numpy as np
import polars as pl
from hypothesis import example, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from reconsim import CONTROLLERS, Cell, run_reference
from reconsim.model.kernel import _BLOCK, PARALLEL_MIN_CELLS, simulate_arrays
from reconsim.model.params import OBSERVE
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


def large_batch() -> list[Cell]:
    """Every controller and variant, enough cells for the threaded compilation: many blocks
    stitched together, the last one partial."""
    n = PARALLEL_MIN_CELLS + 1000
    return [Cell(controller=CONTROLLER_NAMES[g % 3], G=g % 61, U=1 + g % 37, B=g % 11,
                 desired=g % 9, duration=120 + g % 7, observe=OBSERVE[g // 3 % 2],
                 restart_at=(g % 101,), ttl=g % 50, max_per_round=(None, 1, 3)[g // 7 % 3],
                 gain=(1.0, 0.5, 0.333)[g // 5 % 3], deaths=((g % 89, 1 + g % 4), (60, 2)))
            for g in range(n)]


CONTROLLER_NAMES = list(CONTROLLERS)


def test_large_batch_matches_reference_in_every_cell() -> None:
    batch = large_batch()
    assert len(batch) >= PARALLEL_MIN_CELLS
    assert len(batch) % _BLOCK  # the last block is partial
    frame = cells_frame(batch)
    got = simulate(frame).drop(frame.columns)
    want = pl.DataFrame([run_reference(c) for c in batch], schema=got.schema)
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
