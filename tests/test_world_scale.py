"""The world kernel with a scale schedule: changes of desired up and down, several, at the
second of a death event, at second 1, past the end, in settled cells (``initial =
"desired"``) that skip their idle rounds (periodic and watch-triggered, with lag windows
and jitter), beside restarts and deaths — every metric and every response the reference
model's, for cells run on the world kernel itself."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconsim import Cell, run_reference
from reconsim.model import metrics
from reconsim.model.kernels import world
from reconsim.model.kernels.arrays import response_buffers
from reconsim.model.simulate import cells_frame, kernel_inputs, simulate, simulate_cell
from tests.strategies import world_cells


@st.composite
def scale_world_cells(draw: st.DrawFn, max_duration: int = 200) -> Cell:
    """A :func:`world_cells` cell with a scale schedule: changes at second 1, at a death
    event's second, within the run or past its end, up and down (to 0 too)."""
    base = draw(world_cells(max_duration=max_duration))
    end = base.duration
    candidates = st.one_of(st.integers(1, end + 30), st.just(1),
                           st.sampled_from([at for at, _ in base.deaths] or [1]),
                           st.sampled_from((end - 1, end, end + 1))).map(lambda s: max(1, s))
    seconds = sorted(set(draw(st.lists(candidates, max_size=5))))
    return dataclasses.replace(
        base, scale=tuple((at, draw(st.integers(0, 14))) for at in seconds))


@st.composite
def long_scale_world_cells(draw: st.DrawFn) -> Cell:
    """A :func:`scale_world_cells` cell stretched long, its events late: it settles and
    idles, and each change must stop the skip of idle rounds and of watch checks."""
    base = draw(scale_world_cells(max_duration=60))
    duration = draw(st.integers(600, 3000))
    late = st.one_of(st.integers(duration - 3, duration + 2), st.integers(1, duration),
                     st.sampled_from((duration - 1, duration)))
    seconds = sorted(set(draw(st.lists(late, min_size=1, max_size=4))))
    scale = tuple((at, draw(st.integers(0, 14))) for at in seconds)
    deaths = draw(st.lists(st.tuples(st.sampled_from(seconds), st.integers(0, 12)),
                           max_size=2))
    restarts = draw(st.lists(late, max_size=2))
    return dataclasses.replace(
        base, duration=duration, scale=scale, deaths=tuple(deaths), restart_at=tuple(restarts),
        initial=draw(st.sampled_from(("desired", base.initial))),
        # faults and rates keep a cell from settling: fewer of them here
        fail_rate=0.0, lost_rate=draw(st.sampled_from((0.0, base.lost_rate))))


def on_world_kernel(batch: list[Cell], *, parallel: bool | None = None,
                    ) -> list[dict[str, Any]]:
    """Each cell's metrics and responses from the world kernel, whatever its world."""
    arrays = kernel_inputs(cells_frame(batch))
    base, responses = response_buffers(arrays)
    out = world.simulate_world_arrays(**arrays, parallel=parallel, responses=responses,
                                      response_base=base)
    got = []
    for i, cell in enumerate(batch):
        raw = dict(zip(world.WORLD_OUT_COLUMNS, out[i].tolist(), strict=True))
        got.append(metrics.of_run(raw, cell, metrics.responses_of(
            responses, int(base[i]), raw[metrics.RESPONSES])))
    return got


def check(cell: Cell) -> None:
    want = run_reference(cell)
    assert on_world_kernel([cell]) == [want]
    assert simulate_cell(cell) == want
    frame = cells_frame([cell])
    assert simulate(frame).drop(frame.columns).to_dicts() == [want]


EXAMPLES = (
    Cell(G=20, grace=5, duration=600, scale=((100, 10), (300, 2), (550, 6)),
         deaths=((300, 2),)),
    Cell(G=20, G_spread=3, seed=4, scale=((1, 0),), duration=200),
    Cell(G=0, B=0, U=1, U_jitter=1, seed=2, duration=30, deaths=((1, 2),),
         scale=((1, 0), (2, 7))),
    Cell(G=10, grace=3, duration=100, scale=((100, 9), (101, 1))),  # the last second, after
    Cell(G=5, grace=5, initial="desired", duration=3000, scale=((1000, 8), (2900, 3)),
         controller="intent"),
    Cell(G=5, U_jitter=2, seed=3, initial="desired", duration=3000,
         scale=((50, 8), (1400, 3)), controller="expectations", restart_at=(60, 1420),
         deaths=((1420, 3), (10, 0))),
    # watch-triggered, settled: the change is seen at the next periodic round
    Cell(G=10, trigger="watch", U=60, initial="desired", duration=2000,
         scale=((700, 9), (1500, 2))),
    Cell(G=10, trigger="watch", U=60, initial="desired", duration=2000,
         lag=((100, 1200, 15),), scale=((700, 9), (1500, 2))),
    Cell(initial="desired", desired=0, grace=1, duration=2000, scale=((1500, 3),)),
    Cell(controller="intent", initial="desired", G=30, U=15, duration=3000, delete_order="newest",
         scale=((1000, 2), (1003, 9)), restart_at=(999, 1003, 2500)),
)


@pytest.mark.parametrize("cell", EXAMPLES)
def test_examples_match_reference(cell: Cell) -> None:
    check(cell)


@settings(max_examples=300, deadline=None)
@given(scale_world_cells())
def test_scale_cells_match_reference(cell: Cell) -> None:
    check(cell)


@settings(max_examples=60, deadline=None)
@given(long_scale_world_cells())
def test_long_runs_with_late_changes_match_reference(cell: Cell) -> None:
    check(cell)


@settings(max_examples=30, deadline=None)
@given(st.lists(scale_world_cells(max_duration=120), min_size=2, max_size=12))
def test_batch_matches_reference_cell_by_cell(batch: list[Cell]) -> None:
    # Cells of different schedules share one block's scratch and one responses matrix.
    assert on_world_kernel(batch) == [run_reference(c) for c in batch]


@settings(max_examples=20, deadline=None)
@given(st.lists(scale_world_cells(max_duration=60), min_size=1, max_size=20), st.data())
def test_rows_of_a_batch_write_their_own_responses(batch: list[Cell],
                                                   data: st.DataObject) -> None:
    # A part of a batch, read in place: each cell's responses land from its own column of
    # the whole batch's matrix on, and the other cells' columns are left as they were.
    arrays = kernel_inputs(cells_frame(batch))
    base, responses = response_buffers(arrays)
    responses[:] = -7
    rows = np.array(sorted(data.draw(st.sets(st.integers(0, len(batch) - 1)))), np.int64)
    out = np.zeros((len(world.WORLD_OUT_COLUMNS), len(batch)), np.int64)
    world.simulate_world_arrays(**arrays, rows=rows[::-1], out=out, responses=responses,
                                response_base=base)
    counts = out[world.WORLD_OUT_COLUMNS.index(metrics.RESPONSES)]
    for i, cell in enumerate(batch):
        if i in rows:
            assert metrics.responses_of(responses, int(base[i]), int(counts[i])) == \
                run_reference(cell)[metrics.RESPONSES]
        else:
            assert (responses[:, base[i]:base[i] + len(cell.deaths) + len(cell.scale)]
                    == -7).all()


@settings(max_examples=5, deadline=None)
@given(st.lists(scale_world_cells(max_duration=200), min_size=1, max_size=20))
def test_threaded_and_serial_compilations_agree(batch: list[Cell]) -> None:
    tiled = cells_frame(batch)[np.arange(2 * world._BLOCK + 101) % len(batch)]
    arrays = kernel_inputs(tiled)
    results = []
    for parallel in (True, False):
        base, responses = response_buffers(arrays)
        out = world.simulate_world_arrays(**arrays, parallel=parallel, responses=responses,
                                          response_base=base)
        results.append((out, responses))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_the_refusal_bounds_read_the_largest_desired() -> None:
    # (beyond a checked cell's bounds: simulate(checked=True) hands over such values)
    arrays = kernel_inputs(cells_frame([Cell(U=1, grace=1, duration=10**5,
                                             scale=((5, 2),))]))
    world.simulate_world_arrays(**arrays)
    arrays["scale_desired"] = np.array([2**40], np.int64)
    with pytest.raises(ValueError, match=r"past int64|GiB"):
        world.simulate_world_arrays(**arrays)


def test_too_small_a_responses_matrix_is_refused() -> None:
    arrays = kernel_inputs(cells_frame([Cell(grace=1, deaths=((3, 1),),
                                             scale=((5, 2), (9, 1)))]))
    base, responses = response_buffers(arrays)
    with pytest.raises(ValueError, match="a column for each death event"):
        world.simulate_world_arrays(**arrays, responses=responses[:, :2].copy(),
                                    response_base=base)
    with pytest.raises(TypeError, match="go together"):
        world.simulate_world_arrays(**arrays, responses=responses)
