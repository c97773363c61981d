"""Controllers that sync on events: the definition's hooks and their refusals, the
millisecond world (reconsim.model.events) against its rules, Go's sort, and the
replicaset controller on random cells."""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconsim import Cell, run_reference
from reconsim.model.controllers import Controller, ControllerError, RunawayError, registry
from reconsim.model.gosort import go_sort
from reconsim.model.params import cell_text
from reconsim.model.simulate import cells_frame, simulate
from reconsim.model.trace import metrics_of, trace_cell
from reconsim.testing import check_controller, event_cells


def _decide(v: Any, p: Any, m: Any) -> int:
    return v.desired - v.seen  # type: ignore[no-any-return]


def _settle(o: Any, p: Any, m: Any) -> int:
    return 0


def _rs(**fields: Any) -> Cell:
    values: dict[str, Any] = {"G": 1, "B": 1, "U": 10_000, "duration": 60, "deaths": (),
                              "trigger": "watch", "observe": "created", "slow_start": True,
                              "max_per_round": 500, "ledger_base": 0} | fields
    return Cell(controller="replicaset", **values)


@pytest.mark.parametrize(("fields", "message"), [
    ({"observe": _settle}, "observe and less are hooks of a controller that syncs on events"),
    ({"settle": _settle, "compiled": False, "rank": lambda e, p: 0}, "takes no rank"),
    ({"settle": 3, "compiled": False}, "settle must be a function settle(o, p, m) -> int"),
])
def test_bad_event_definitions_are_one_line(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ControllerError, match="controller 'sync'") as info:
        Controller("sync", _decide, "a test", **fields)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_a_hook_that_misbehaves_is_named_in_one_line() -> None:
    def settle(o: Any, p: Any, m: Any) -> int:
        return -1

    def observe(e: Any, p: Any, m: Any) -> None:
        raise KeyError("boom")

    with registry.scope():
        registry.register(Controller("badsettle", _decide, "a test", settle=settle,
                                     compiled=False))
        registry.register(Controller("badobserve", _decide, "a test", settle=_settle,
                                     observe=observe, compiled=False))
        with pytest.raises(ControllerError, match=r"settle returned -1 at t = 0, not 0 or"):
            run_reference(Cell(controller="badsettle", deaths=()))
        with pytest.raises(ControllerError, match="observe raised KeyError: 'boom'"):
            run_reference(Cell(controller="badobserve", G=1, deaths=()))


def test_a_sync_observes_its_own_events_before_the_next_one() -> None:
    # G = 0, B = 0: the creates of the first sync reach the cache at its own instant, and
    # the status write and the add events queue one sync each while the queue is free.
    frame = trace_cell(_rs(desired=3, G=0, B=0))
    assert frame["created"].to_list()[:2] == [3, 0]
    assert int(frame["live"][0]) == 3
    assert metrics_of(frame, _rs(desired=3, G=0, B=0))["created"] == 3


def test_a_failed_create_is_retried_within_the_second() -> None:
    # The first create fails: the sync returns an error and is retried 5 ms later.
    cell = _rs(desired=3, create_faults=((0, 1, "fail"),))
    frame = trace_cell(cell)
    assert frame["create_commands"][0] == 4
    assert frame["created"][0] == 3
    assert run_reference(cell)["failed_creates"] == 1


def test_a_lost_reply_is_written_off_and_its_surplus_deleted() -> None:
    cell = _rs(desired=2, create_faults=((0, 1, "lost"),), G=2)
    m = run_reference(cell)
    assert m["created"] == 3  # the lost pod exists: it shows up 2 s later
    assert m["delete_commands"] == m["deleted"] == 1


def test_an_instant_whose_syncs_never_end_is_refused_alike() -> None:
    # G = 0 and watch triggers: each sync's creates reach the cache and queue the key at
    # its own instant; the stale read never shows them, so each sync creates 6 more. The
    # instant's bound: 100 + 2 x (6 desired + 0 copies) = 112 syncs.
    cell = Cell(controller="replicaset", G=0, trigger="watch", lag=((0, 26, 48),))
    line = ("controller 'replicaset': the key was still queued after 112 syncs at instant "
            "0 ms (t = 0), the most one instant may run")
    with pytest.raises(RunawayError, match=f"^{re.escape(line)}") as reference:
        run_reference(cell)
    with pytest.raises(RunawayError) as kernel:
        simulate(cells_frame([Cell(G=20), dataclasses.replace(cell, G=1), cell]))
    # simulate's line names the frame's row and, as reconsim run's flags, the cell
    assert (kernel.value.reason, kernel.value.row) == (str(reference.value), 2)
    assert str(kernel.value) == f"{reference.value}; the cell: reconsim run {cell_text(cell)}"
    # The periodic trigger: the writes of an unchanged status queue nothing, time passes.
    periodic = dataclasses.replace(cell, trigger="periodic")
    assert simulate(cells_frame([periodic])).row(0, named=True)["created"] == (
        run_reference(periodic)["created"])


def test_an_instant_runs_a_sync_for_each_copy_it_needs() -> None:
    # One create a sync, 150 copies at G = B = 0: 150 and more syncs at instant 0, past
    # the bound's 100 but within its 100 + 2 x 150.
    cell = _rs(desired=150, G=0, B=0, max_per_round=1, slow_start=False)
    frame = trace_cell(cell)
    assert int(frame["live"][0]) == 150
    assert frame["created"].to_list()[:2] == [150, 0]
    assert simulate(cells_frame([cell])).row(0, named=True)["created"] == 150


def test_cells_that_outgrow_the_kernel_s_scratch_arrays_run_as_the_reference_does() -> None:
    # The event kernel's arrays start with room for 256 copies and 4,096 due entries and
    # grow, running the cell again, when a cell needs more: 300 initial copies, 2,500
    # created at once, then cells of the same block in the arrays they left behind.
    cells = [_rs(desired=600, initial=300, duration=30), _rs(desired=2500, duration=20),
             _rs(desired=6, duration=30), _rs(desired=3, initial=8, duration=30)]
    frame = simulate(cells_frame(cells))
    for cell, row in zip(cells, frame.iter_rows(named=True), strict=True):
        want = run_reference(cell)
        assert {k: row[k] for k in want} == want
    assert frame["created"].to_list() == [300, 2500, 6, 0]


def test_the_kernel_refuses_a_copy_beyond_max_copies() -> None:
    # 10**5 copies a sync at one instant: the 11th sync would create the 1,000,001st copy
    # (the reference model refuses it with the same line, after ~15 s of Python: not here).
    cell = Cell(controller="replicaset", G=0, trigger="watch", lag=((0, 26, 48),),
                desired=10**5)
    line = "controller 'replicaset': the cell created 1,000,000 copies by t = 0, the most"
    with pytest.raises(RunawayError, match=f"^{re.escape(line)}"):
        simulate(cells_frame([cell]))


@given(st.lists(st.integers(0, 5), max_size=200))
def test_go_sort_sorts_and_keeps_every_element(keys: list[int]) -> None:
    data = list(enumerate(keys))
    go_sort(data, lambda a, b: a[1] < b[1])
    assert sorted(data) == list(enumerate(keys))
    assert [k for _, k in data] == sorted(keys)


def test_go_sort_is_unstable_where_go_s_is() -> None:
    # 60 equal keys but one: pdqsort's partitions move equal elements around.
    data = [(i, 0 if i != 30 else -1) for i in range(60)]
    go_sort(data, lambda a, b: a[1] < b[1])
    assert data[0] == (30, -1)
    assert [i for i, _ in data[1:]] != [i for i in range(60) if i != 30]


def _quick(cell: Cell) -> bool:
    """Cells the event reference model runs in well under a second: without random create
    faults and stale reads, whose retries and write-offs can make it run for minutes
    (check_controller's fixed examples and the 400 scenarios cover those)."""
    return cell.fail_rate == 0 and cell.lost_rate == 0 and not cell.lag


@functools.cache
def _checked() -> int:
    return check_controller("replicaset", examples=30)


def test_replicaset_passes_the_checker() -> None:
    assert _checked() == 30


@settings(max_examples=40, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(event_cells(max_duration=120).filter(_quick))
def test_the_trace_adds_up_to_the_metrics(cell: Cell) -> None:
    assert metrics_of(trace_cell(cell), cell) == run_reference(cell)


@settings(max_examples=20, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(event_cells(max_duration=120).filter(_quick))
def test_simulate_runs_event_cells_as_the_reference_does(cell: Cell) -> None:
    row = simulate(cells_frame([cell, Cell(G=20)])).row(0, named=True)
    want = run_reference(cell)
    assert {k: row[k] for k in want} == want


@pytest.mark.parametrize("delays", [{"G_spread": 5}, {"G_delays": ((0, 3), (4, 1), (9, 2))},
                                    {"G": 0, "G_spread": 3}])
def test_stale_reads_of_copies_made_in_the_window_run_as_the_reference_does(
        delays: dict[str, Any]) -> None:
    # A stale read stops at the first copy created too late to be seen: every later one
    # was created no earlier and waits G or more, whatever its own ledger delay.
    cell = Cell(**{"controller": "replicaset", "G": 2, "U": 30, "duration": 300,
                   "lag": ((20, 160, 30), (200, 230, 5)), "deaths": ((40, 3), (210, 2)),
                   "trigger": "watch", "seed": 3, "grace": 10, **delays})
    want = run_reference(cell)
    assert want["created"] > cell.desired  # the window's stale reads made duplicates
    row = simulate(cells_frame([cell])).row(0, named=True)
    assert {k: row[k] for k in want} == want
