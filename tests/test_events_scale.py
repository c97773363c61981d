"""A scale schedule on the event kernel (reconsim.model.kernels.events): each change of
desired takes effect at its second's first instant, queues the key where it changes the
count, opens an event's window and is counted in the samples of its seconds, as the
reference model (reconsim.model.events) does: metrics and responses alike."""

from __future__ import annotations

import dataclasses
import sys
import textwrap
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconsim import Cell, run_reference
from reconsim.model import rules
from reconsim.model.controllers import registry
from reconsim.model.kernels.arrays import response_buffers
from reconsim.model.kernels.events import simulate_event_arrays
from reconsim.model.kernels.world import WORLD_OUT_COLUMNS
from reconsim.model.simulate import cells_frame, kernel_inputs, simulate, simulate_cell
from reconsim.model.trace import trace_cell
from reconsim.testing import event_cells
from tests.helpers.controllers import SOURCES


def _rs(**fields: Any) -> Cell:
    values: dict[str, Any] = {"G": 1, "B": 2, "U": 10_000, "duration": 80, "deaths": (),
                              "trigger": "watch", "slow_start": True, "max_per_round": 500,
                              "ledger_base": 0} | fields
    return Cell(controller="replicaset", **values)


def _same(cells: list[Cell]) -> None:
    """Each cell's metrics and responses: the reference model's, from a frame of them all
    and from each cell alone."""
    frame = simulate(cells_frame(cells))
    for cell, row in zip(cells, frame.iter_rows(named=True), strict=True):
        want = run_reference(cell)
        assert {k: row[k] for k in want} == want, cell
        assert simulate_cell(cell) == want, cell


CELLS = {
    "up": _rs(desired=3, scale=((10, 6),)),
    "down": _rs(desired=6, scale=((10, 2),)),
    "several": _rs(desired=3, scale=((5, 8), (20, 1), (30, 4), (31, 0), (60, 5))),
    "with deaths": _rs(desired=4, deaths=((15, 2), (40, 1)), scale=((15, 7), (30, 3))),
    "at the death's second": _rs(desired=4, initial="desired", deaths=((20, 2),),
                                 scale=((20, 6),)),
    "after the end": _rs(desired=3, duration=30, scale=((20, 5), (30, 2), (31, 9), (90, 1))),
    "at second 1": _rs(desired=3, scale=((1, 5),)),
    "settled": _rs(desired=5, initial="desired", scale=((12, 9), (50, 5))),
    "to the same count": _rs(desired=5, initial="desired", scale=((12, 5),)),
    "with restarts": _rs(desired=4, restart_at=(10, 25), scale=((10, 2), (24, 6))),
    "grace": _rs(desired=6, grace=15, initial="desired", scale=((10, 2), (18, 7))),
    "periodic": _rs(desired=3, trigger="periodic", U=7, scale=((10, 6), (25, 1))),
    "to zero": _rs(desired=4, initial="desired", scale=((5, 0), (40, 2))),
    "long idle": _rs(desired=3, duration=5000, initial="desired",
                     deaths=((900, 1),), scale=((1200, 5), (4000, 2))),
}


@pytest.mark.parametrize("name", list(CELLS))
def test_a_scale_schedule_runs_as_the_reference_does(name: str) -> None:
    _same([CELLS[name]])


def test_a_batch_of_scaled_cells_runs_as_the_reference_does() -> None:
    _same([*CELLS.values(), _rs(desired=3)])


def test_a_change_of_desired_queues_the_key_and_opens_an_event() -> None:
    # Settled, no pod events, no resync: only the change of desired queues the key at 12,
    # and the sync acting on it writes a status with the new desired (a second sync).
    cell = CELLS["settled"]
    frame = trace_cell(cell)
    assert frame["created"].to_list()[12] == 4
    assert frame["desired"].to_list()[11:13] == [5, 9]
    got = simulate_cell(cell)
    assert got == run_reference(cell)
    assert [r["at"] for r in got["responses"]] == [12, 50]
    # A change to the same count queues nothing, but is an event all the same.
    same = simulate_cell(CELLS["to the same count"])
    assert same["rounds"] == simulate_cell(dataclasses.replace(
        CELLS["to the same count"], scale=()))["rounds"]
    assert same["responses"] == [{"at": 12, "overshoot": 0, "undershoot": 0, "missing": 0,
                                  "settle": 1}]


def test_responses_go_to_the_columns_the_caller_gives() -> None:
    cells = [CELLS["several"], _rs(desired=2), CELLS["with deaths"]]
    arrays = kernel_inputs(cells_frame(cells))
    base, responses = response_buffers(arrays)
    wide = np.full((rules.RESPONSE_ROWS, responses.shape[1] + 3), -7, np.int64)
    out = simulate_event_arrays(controllers=registry.known(), responses=wide,
                                response_base=base + 3, **arrays)  # three columns left free
    assert (wide[:, :3] == -7).all()
    for i, cell in enumerate(cells):
        want = run_reference(cell)["responses"]
        n = int(out[i, WORLD_OUT_COLUMNS.index("responses")])
        assert n == len(want)
        got = wide[:, base[i] + 3: base[i] + 3 + n]
        assert [int(x) for x in got[rules.R_AT]] == [r["at"] for r in want]
    # Without them: a buffer of its own, the same metrics.
    alone = simulate_event_arrays(controllers=registry.known(), **arrays)
    assert (alone == out).all()


@settings(max_examples=30, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(event_cells(max_duration=120).filter(
    lambda c: c.fail_rate == 0 and c.lost_rate == 0 and not c.lag), st.data())
def test_random_scaled_event_cells_run_as_the_reference_does(cell: Cell,
                                                             data: st.DataObject) -> None:
    at = st.integers(1, cell.duration + 10)
    changes = data.draw(st.lists(st.tuples(at, st.integers(0, 12)), max_size=4,
                                 unique_by=lambda c: c[0]))
    if cell.deaths and cell.deaths[0][0] >= 1 and data.draw(st.booleans()):
        changes = [c for c in changes if c[0] != cell.deaths[0][0]]
        changes.append((cell.deaths[0][0], data.draw(st.integers(0, 12))))
    cell = dataclasses.replace(cell, scale=tuple(sorted(changes)))
    row = simulate(cells_frame([cell, Cell(G=20)])).row(0, named=True)
    want = run_reference(cell)
    assert {k: row[k] for k in want} == want


USER = SOURCES["userctl_events_scale"]


@pytest.fixture
def user(tmp_path_factory: pytest.TempPathFactory,
         monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    folder = tmp_path_factory.getbasetemp() / "events_scale"
    folder.mkdir(exist_ok=True)
    (folder / "userctl_events_scale.py").write_text(textwrap.dedent(USER), encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    with registry.scope():
        yield registry.resolve("userctl_events_scale:EAGER").name
    sys.modules.pop("userctl_events_scale", None)


def test_a_user_s_event_controller_scales_as_the_reference_does(user: str) -> None:
    # A batch of two controllers: each group's cells write their own responses' columns.
    cells = [dataclasses.replace(c, controller=user) if i % 2 else c
             for i, c in enumerate(CELLS.values())]
    _same([*cells, dataclasses.replace(CELLS["several"], controller=user, grace=5,
                                       create_faults=((5, 2, "fail"), (20, 1, "lost")))])


def test_responses_outside_the_matrix_are_refused() -> None:
    arrays = kernel_inputs(cells_frame([CELLS["several"], CELLS["up"]]))
    base, responses = response_buffers(arrays)
    with pytest.raises(ValueError, match="a column for each death event"):
        simulate_event_arrays(controllers=registry.known(), responses=responses,
                              response_base=base + responses.shape[1], **arrays)
    with pytest.raises(TypeError, match="together"):
        simulate_event_arrays(controllers=registry.known(), responses=responses, **arrays)
