"""The per-second trace (reconsim.trace) against the metrics: its sums and extremes are
run_cell's figures (the kernels) and run_reference's, for random cells of both worlds."""

from __future__ import annotations

import dataclasses

import polars as pl
import pytest
from hypothesis import example, given, settings

import reconsim
from reconsim import Cell
from reconsim.model.reference import Second, run_reference
from reconsim.model.trace import SCHEMA, metrics_of, trace_cell
from tests.strategies import cells, world_cells


def kernel_metrics(cell: Cell) -> dict[str, object]:
    """run_cell's figures for a Cell (the kernel each row is sent to)."""
    return reconsim.run_cell(**dataclasses.asdict(cell))


def check_invariants(frame: pl.DataFrame, cell: Cell) -> None:
    """What every trace holds, whatever the cell: one row a second, in order; counts never
    negative; terminating copies are live ones, and none without grace; a read only in a
    round; wasted deletes are the commands that removed nothing."""
    assert frame.schema == pl.Schema(SCHEMA)
    assert frame["t"].to_list() == list(range(cell.duration + 1))
    counts = [c for c, t in SCHEMA.items() if t == pl.Int64() and c != "read"]
    assert frame.select(pl.min_horizontal(counts).min()).item() >= 0
    assert (frame["terminating"] <= frame["live"]).all()
    if cell.grace == 0:
        assert frame["terminating"].sum() == 0
    assert (frame["read"].is_null() == ~frame["round"]).all()
    assert (frame["wasted_deletes"] == frame["delete_commands"] - frame["deleted"]).all()
    assert frame.filter(~pl.col("round")).select(
        pl.sum_horizontal("create_commands", "delete_commands").sum()).item() == 0
    assert (frame["created"] + frame["failed_creates"] <= frame["create_commands"]).all()
    assert frame["round"][0]  # second 0 always holds a round


@settings(max_examples=100, deadline=None)
@given(cells())
@example(Cell(duration=0))
@example(Cell(desired=0, duration=1))
@example(Cell(G=60, deaths=((300, 2), (300, 9), (950, 1))))
def test_trace_agrees_with_metrics_seed_world(cell: Cell) -> None:
    frame = trace_cell(cell)
    check_invariants(frame, cell)
    derived = metrics_of(frame, cell)
    assert derived == kernel_metrics(cell)
    assert derived == run_reference(cell)


@settings(max_examples=100, deadline=None)
@given(world_cells())
@example(Cell(G=20, grace=30, delete_order="newest", trigger="watch", B_spread=4,
              G_spread=9, U_jitter=20, lag=((100, 200, 30),), create_faults=((0, 3, "lost"),),
              fail_rate=0.05, slow_start=True, observe="created", seed=7))
def test_trace_agrees_with_metrics_world(cell: Cell) -> None:
    frame = trace_cell(cell)
    check_invariants(frame, cell)
    derived = metrics_of(frame, cell)
    assert derived == kernel_metrics(cell)
    assert derived == run_reference(cell)


@settings(max_examples=40, deadline=None)
@given(world_cells(max_duration=120))
def test_observer_changes_nothing(cell: Cell) -> None:
    seconds: list[int] = []

    def observe(s: Second) -> None:
        seconds.append(s.t)

    assert run_reference(cell, on_second=observe) == run_reference(cell)
    assert seconds == list(range(cell.duration + 1))


def test_terminating_copies_run_out_their_grace() -> None:
    # G = 20: the loop overshoots by six, deletes six, and with grace 30 they keep running.
    cell = Cell(G=20, grace=30, duration=120, deaths=())
    frame = trace_cell(cell)
    deleting = frame.filter(pl.col("deleted") > 0)
    assert deleting.height > 0
    first = int(deleting["t"][0])
    at = frame.filter(pl.col("t").is_between(first, first + 29))
    assert (at["terminating"] >= deleting["deleted"][0]).all()
    assert frame.filter(pl.col("t") == first + 30)["terminating"].item() < \
        at["terminating"].min()


def test_deaths_are_the_copies_killed() -> None:
    # Nine deaths scheduled at 300 with six live: six die; one after the end kills nobody.
    cell = Cell(deaths=((300, 9), (950, 1)))
    frame = trace_cell(cell)
    assert frame.filter(pl.col("deaths") > 0).select("t", "deaths").rows() == [(300, 6)]
    assert metrics_of(frame, cell)["unneeded"] == reconsim.run_cell(
        deaths=((300, 9), (950, 1)))["unneeded"]


def test_pending_is_what_the_ledger_does_not_show_yet() -> None:
    # B = 5, G = 20: a copy created at 0 is pending until it is listed at 25.
    frame = trace_cell(Cell(G=20, duration=40, deaths=()))
    at = {t: (p, led) for t, p, led in frame.select("t", "pending", "ledger").iter_rows()}
    assert at[0] == (6, 0)
    assert at[24][1] == 0
    assert at[25][1] == 6


def test_public_trace_takes_cell_keywords() -> None:
    frame = reconsim.trace(controller="intent", G=30, duration=100)
    assert frame.height == 101
    assert metrics_of(frame, Cell(controller="intent", G=30, duration=100)) == \
        reconsim.run_cell(controller="intent", G=30, duration=100)
    with pytest.raises(ValueError, match="U must be"):
        reconsim.trace(U=0)


def test_lag_window_read_differs_from_the_ledger() -> None:
    # Inside the window the round reads the ledger of 30 s before: at its start, nothing.
    cell = dataclasses.replace(Cell(duration=60, deaths=()), lag=((15, 16, 30),))
    frame = trace_cell(cell)
    row = frame.filter(pl.col("t") == 15)
    assert row["round"].item()
    assert row["read"].item() == 0
    assert row["ledger"].item() == 6
