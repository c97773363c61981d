"""The count kernel with a scale schedule: changes of desired up and down, several, at the
second of a death event, at second 1, past the end, in a settled cell (``initial =
"desired"``), beside restarts and deaths — every metric and every response the reference
model's."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconsim import Cell, run_reference
from reconsim.model.kernels import count as kernel
from reconsim.model.kernels.arrays import largest_desired, response_buffers
from reconsim.model.simulate import cells_frame, kernel_inputs, simulate, simulate_cell
from tests.strategies import cells


@st.composite
def scale_cells(draw: st.DrawFn, max_duration: int = 240) -> Cell:
    """A :func:`cells` cell with a scale schedule: changes at second 1, at a death event's
    second, within the run or past its end, up and down (to 0 too), in increasing seconds."""
    base = draw(cells(max_duration=max_duration))
    end = base.duration
    candidates = st.one_of(st.integers(1, end + 30), st.just(1),
                           st.sampled_from([at for at, _ in base.deaths] or [1]),
                           st.sampled_from((end - 1, end, end + 1))).map(lambda s: max(1, s))
    seconds = sorted(set(draw(st.lists(candidates, max_size=5))))
    changes = tuple((at, draw(st.integers(0, 14))) for at in seconds)
    return dataclasses.replace(base, scale=changes)


@st.composite
def long_scale_cells(draw: st.DrawFn) -> Cell:
    """A :func:`scale_cells` cell stretched long, its events moved late: it settles and
    idles, and each change must stop the skip of idle rounds."""
    base = draw(scale_cells(max_duration=60))
    duration = draw(st.integers(600, 4000))
    late = st.one_of(st.integers(duration - 3, duration + 2), st.integers(1, duration),
                     st.sampled_from((duration - 1, duration)))
    seconds = sorted(set(draw(st.lists(late, max_size=4))))
    scale = tuple((at, draw(st.integers(0, 14))) for at in seconds)
    deaths = draw(st.lists(st.tuples(st.sampled_from(seconds) if seconds else late,
                                     st.integers(0, 12)), max_size=3))
    restarts = draw(st.lists(late, max_size=2))
    return dataclasses.replace(base, duration=duration, scale=scale, deaths=tuple(deaths),
                               restart_at=tuple(restarts))


def frame_metrics(batch: list[Cell]) -> list[dict[str, object]]:
    frame = cells_frame(batch)
    return simulate(frame).drop(frame.columns).to_dicts()


def check(cell: Cell) -> None:
    want = run_reference(cell)
    assert simulate_cell(cell) == want
    assert frame_metrics([cell]) == [want]


EXAMPLES = (
    Cell(G=20, duration=600, scale=((100, 9), (400, 2))),
    Cell(G=20, duration=600, deaths=((300, 2),), scale=((300, 1),)),  # one event, one second
    Cell(G=0, B=0, U=1, duration=30, deaths=((1, 2),), scale=((1, 0), (2, 7))),
    Cell(G=10, duration=100, scale=((101, 9), (500, 1))),  # past the end: no event
    Cell(G=10, duration=100, scale=((100, 9),)),  # at the last second
    Cell(initial="desired", G=30, U=15, duration=3000, scale=((1000, 8), (2000, 4))),
    Cell(controller="intent", initial="desired", G=30, U=15, duration=3000,
         scale=((1000, 2), (1003, 9)), restart_at=(999, 1003, 2500)),
    Cell(controller="expectations", ttl=7, initial="desired", G=45, U=5, duration=3000,
         deaths=((1500, 6),), scale=((1500, 12), (2800, 0))),
    Cell(initial="desired", desired=0, duration=2000, scale=((1500, 3),)),
)


@pytest.mark.parametrize("cell", EXAMPLES)
def test_examples_match_reference(cell: Cell) -> None:
    check(cell)


@settings(max_examples=300, deadline=None)
@given(scale_cells())
def test_scale_cells_match_reference(cell: Cell) -> None:
    check(cell)


@settings(max_examples=60, deadline=None)
@given(long_scale_cells())
def test_long_runs_with_late_changes_match_reference(cell: Cell) -> None:
    check(cell)


@settings(max_examples=40, deadline=None)
@given(st.lists(scale_cells(max_duration=120), min_size=2, max_size=12))
def test_batch_matches_reference_cell_by_cell(batch: list[Cell]) -> None:
    # Cells of different schedules share one block's scratch and one responses matrix.
    assert frame_metrics(batch) == [run_reference(c) for c in batch]


@settings(max_examples=10, deadline=None)
@given(st.lists(scale_cells(max_duration=300), min_size=1, max_size=30))
def test_threaded_and_serial_compilations_agree(batch: list[Cell]) -> None:
    tiled = cells_frame(batch)[np.arange(3 * kernel._BLOCK + 101) % len(batch)]
    arrays = kernel_inputs(tiled, count=True)
    results = []
    for parallel in (True, False):
        base, responses = response_buffers(arrays)
        out = kernel.simulate_arrays(**arrays, parallel=parallel, responses=responses,
                                     response_base=base)
        results.append((out, responses))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_largest_desired_reads_each_cell_s_changes() -> None:
    desired = np.array([3, 5, 7, 2], np.int64)
    offsets = np.array([0, 2, 2, 3, 5], np.int64)
    values = np.array([1, 9, 4, 1, 2], np.int64)
    assert largest_desired({"desired": desired, "scale_offsets": offsets,
                            "scale_desired": values}).tolist() == [9, 5, 7, 2]
    assert largest_desired({"desired": desired, "scale_offsets": np.zeros(5, np.int64),
                            "scale_desired": np.zeros(0, np.int64)}).tolist() == [3, 5, 7, 2]


def test_the_refusal_bounds_read_the_largest_desired() -> None:
    # (beyond a checked cell's bounds: simulate(checked=True) hands over such values)
    arrays = kernel_inputs(cells_frame([Cell(U=1, duration=10**6, scale=((5, 2),))]),
                           count=True)
    arrays["scale_desired"] = np.array([2**40], np.int64)
    with pytest.raises(ValueError, match="past int64"):
        kernel.simulate_arrays(**arrays)


def test_too_small_a_responses_matrix_is_refused() -> None:
    arrays = kernel_inputs(cells_frame([Cell(deaths=((3, 1),), scale=((5, 2), (9, 1)))]),
                           count=True)
    base, responses = response_buffers(arrays)
    with pytest.raises(ValueError, match="a column for each death event"):
        kernel.simulate_arrays(**arrays, responses=responses[:, :2].copy(), response_base=base)
    with pytest.raises(TypeError, match="give both or neither"):
        kernel.simulate_arrays(**arrays, responses=responses)
