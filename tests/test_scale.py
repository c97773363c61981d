"""Desired that moves: the scale schedule's checks, its rules in the reference model, each
event's response, and the law per step derived for it (docs/model.md, "Desired that
moves")."""

from __future__ import annotations

import dataclasses

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconsim.model.laws import STEP_EXCLUSIONS, STEP_PREFIX, step_columns
from reconsim.model.metrics import METRICS, RESPONSES, RESPONSES_DTYPE
from reconsim.model.params import Cell
from reconsim.model.reference import run_reference
from reconsim.model.simulate import cells_frame, simulate
from reconsim.model.trace import trace_cell
from tests.strategies import cells


def test_a_scale_schedule_must_be_in_increasing_seconds_from_one() -> None:
    with pytest.raises(ValueError,
                       match=r"scale change at must be an integer in \[1, 1000000\], got 0"):
        Cell(scale=((0, 3),))
    with pytest.raises(ValueError, match="changes must be listed in increasing at, got 300 "
                                         "then 200"):
        Cell(scale=((300, 5), (200, 3)))
    with pytest.raises(ValueError, match="changes must be listed in increasing at, got 300 "
                                         "then 300"):
        Cell(scale=((300, 5), (300, 3)))
    assert Cell(scale=[(200, 3), (300, 5)]).scale == ((200, 3), (300, 5))


def test_a_frame_with_unordered_changes_is_refused_naming_the_row() -> None:
    frame = cells_frame([Cell(), Cell(scale=((100, 3),))]).with_columns(
        pl.Series("scale", [[], [{"at": 300, "desired": 5}, {"at": 200, "desired": 3}]],
                  dtype=pl.List(pl.Struct({"at": pl.Int64, "desired": pl.Int64}))))
    with pytest.raises(ValueError, match=r"scale \(row 1\) change at: changes must be listed"):
        simulate(frame)


def test_desired_follows_the_schedule_second_by_second() -> None:
    cell = Cell(G=20, desired=6, scale=((400, 12), (700, 3)), duration=800)
    frame = trace_cell(cell)
    assert frame.filter(pl.col("t") == 399)["desired"].item() == 6
    assert frame.filter(pl.col("t") == 400)["desired"].item() == 12
    assert frame.filter(pl.col("t") == 700)["desired"].item() == 3
    assert [cell.desired_at(t) for t in (0, 399, 400, 699, 700, 800)] == [6, 6, 12, 12, 3, 3]


def test_each_event_has_its_response_and_a_lone_death_is_the_disturbance() -> None:
    got = run_reference(Cell(G=20, deaths=((300, 2), (600, 1)), scale=((600, 8),)))
    assert [r["at"] for r in got[RESPONSES]] == [300, 600]  # one event a second
    lone = run_reference(Cell(G=20))
    (response,) = lone[RESPONSES]
    assert (response["overshoot"], response["missing"], response["settle"]) == (
        lone["overshoot_after"], lone["missing_after"], lone["settle_after"])


def test_a_cell_without_events_has_no_responses() -> None:
    assert run_reference(Cell(deaths=()))[RESPONSES] == []
    assert run_reference(Cell(deaths=((901, 2),), scale=((950, 3),)))[RESPONSES] == []


@settings(max_examples=60, deadline=None)
@given(cells())
def test_the_trace_gives_the_reference_model_s_responses(cell: Cell) -> None:
    # The trace's responses are counted by filters on its rows, not by the model's rules.
    from reconsim.model.trace import responses_of

    assert responses_of(trace_cell(cell), cell) == run_reference(cell)[RESPONSES]


@settings(max_examples=60, deadline=None)
@given(cells())
def test_unneeded_subtracts_each_increase_of_desired(cell: Cell) -> None:
    got = run_reference(cell)
    changes = [d for at, d in cell.scale if at <= cell.duration]
    raised = sum(max(0, b - a) for a, b in zip([cell.desired, *changes], changes, strict=False))
    assert got["unneeded"] == (got["created"] + cell.initial_copies() - cell.desired - raised
                               - sum(c for _, c in cell.deaths))


def test_a_follower_that_meets_each_step_has_no_unneeded_copies() -> None:
    # intent from a settled start: it creates the step up and deletes the step down
    got = run_reference(Cell(controller="intent", G=20, desired=6, initial="desired",
                             deaths=(), scale=((300, 12), (600, 4), (800, 9))))
    assert got["unneeded"] == 0
    assert got["created"] == 6 + 5


def _step_table(batch: list[Cell]) -> pl.DataFrame:
    """The cells with their metrics from the reference model, and their step columns."""
    frame = cells_frame(batch)
    rows = [run_reference(c) for c in batch]
    frame = frame.with_columns(
        *(pl.Series(m.name, [r[m.name] for r in rows]) for m in METRICS),
        pl.Series(RESPONSES, [r[RESPONSES] for r in rows], dtype=RESPONSES_DTYPE))
    return frame.with_columns(step_columns(frame.columns))


@st.composite
def steps(draw: st.DrawFn) -> Cell:
    """A cell of a built-in that decides in rounds with one change of desired, often from
    a settled start and in the law's world, sometimes not."""
    at = draw(st.integers(1, 200))
    return Cell(
        controller=draw(st.sampled_from(("ledger", "intent", "expectations"))),
        G=draw(st.sampled_from((0, 1, 3, 5, 10, 20, 30))), U=draw(st.integers(1, 40)),
        B=draw(st.sampled_from((0, 1, 5, 10, 20))), desired=draw(st.integers(1, 10)),
        initial=draw(st.sampled_from(("desired", "desired", 0))),
        observe=draw(st.sampled_from(("ready", "created"))),
        ttl=draw(st.sampled_from((300, 10))),
        deaths=draw(st.sampled_from(((), ((at + 100, 1),), ((at - 1, 1),)))),
        scale=((at, draw(st.integers(0, 16))),),
        duration=at + draw(st.sampled_from((20, 400))))


@settings(max_examples=300, deadline=None)
@given(st.lists(steps(), min_size=1, max_size=8))
def test_the_law_per_step_holds_wherever_its_conditions_do(batch: list[Cell]) -> None:
    table = _step_table(batch)
    assert table[f"{STEP_PREFIX}holds"].drop_nulls().all()
    excluded = set(table[f"{STEP_PREFIX}excluded"].drop_nulls())
    assert excluded <= set(STEP_EXCLUSIONS)


def test_the_law_per_step_reads_the_figures_it_names() -> None:
    up = Cell(G=20, U=15, B=5, desired=6, initial="desired", deaths=(), scale=((301, 12),))
    down = dataclasses.replace(up, scale=((301, 2),))
    slow = dataclasses.replace(up, U=2, B=10)  # B >= 2U with blind rounds: outside the law
    table = _step_table([up, down, slow])
    row = table.row(0, named=True)
    # phase 14 (first round at 315), ceil(25 / 15) - 1 = 1 blind round
    assert {k: row[STEP_PREFIX + k] for k in ("delta", "phase", "law", "measured",
                                               "missing_law", "missing", "holds")} == {
        "delta": 6, "phase": 14, "law": 6, "measured": 6, "missing_law": 6 * (14 + 5),
        "missing": 6 * 19, "holds": True}
    row = table.row(1, named=True)
    # ceil(20 / 15) - 1 = 1 stale round: 4 wasted deletes
    assert (row[f"{STEP_PREFIX}law"], row[f"{STEP_PREFIX}measured"],
            row[f"{STEP_PREFIX}undershoot"], row[f"{STEP_PREFIX}holds"]) == (4, 4, 0, True)
    assert table.row(2, named=True)[f"{STEP_PREFIX}excluded"] == "slow_start"
    assert table.row(2, named=True)[f"{STEP_PREFIX}holds"] is None


def test_run_prints_each_event_s_response(capsys: pytest.CaptureFixture[str]) -> None:
    from reconsim.cli import main

    assert main(["run", "--G", "20", "--scale", "400:12,700:3"]) == 0
    out = capsys.readouterr().out
    table = out[out.index("responses:"):].splitlines()
    assert table[1].split() == ["at", "overshoot", "undershoot", "missing", "settle"]
    assert [line.split()[0] for line in table[2:]] == ["300", "400", "700"]


def test_run_refuses_an_unordered_schedule_in_one_line(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    from reconsim.cli import main

    assert main(["run", "--scale", "400:12,300:3"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "scale change at: changes must be listed in increasing at, got 400 then 300" in err[0]
