"""A running service: ``initial`` copies at t = 0, and its response to a disturbance
(``overshoot_after``, ``missing_after``, ``settle_after``)."""

from __future__ import annotations

import re

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconsim import run_cell
from reconsim.model.kinds import NAMED
from reconsim.model.params import MAX_COPIES, Cell, make_cell
from reconsim.model.reference import run_reference
from reconsim.model.simulate import cells_frame, simulate
from reconsim.model.trace import metrics_of, trace_cell
from reconsim.sweep.spec import parse_spec
from reconsim.sweep.table import unflat

AFTER = ("overshoot_after", "missing_after", "settle_after")


@settings(deadline=None, max_examples=60)
@given(G=st.integers(0, 90), B=st.integers(0, 30), U=st.integers(1, 90),
       desired=st.integers(0, 12), duration=st.integers(1, 1200))
def test_a_settled_service_stays_settled(G: int, B: int, U: int, desired: int,
                                         duration: int) -> None:
    # The ledger loop reads every copy from second 0 on: nothing to correct, ever.
    cell = Cell(controller="ledger", G=G, B=B, U=U, desired=desired, duration=duration,
                deaths=(), initial="desired")
    for got in (run_cell(**{f: getattr(cell, f) for f in (
            "controller", "G", "B", "U", "desired", "duration", "deaths", "initial")}),
                run_reference(cell)):
        assert (got["overshoot"], got["created"], got["missing_copy_seconds"]) == (0, 0, 0)
        assert (got["work"], got["unneeded"], got["stable_at"]) == (0, 0, 1)
        assert all(got[m] is None for m in AFTER)  # no death event: no disturbance


def test_a_death_at_300_by_hand() -> None:
    # Six copies settled; U = 15, G = 20, B = 5; the two oldest die at 300. Rounds at 300 and
    # 315 still read them (a dead copy leaves the ledger G = 20 s later); the round at 330
    # reads 4 and creates 2 (ready 335, listed 355), the one at 345 reads 4 again and creates
    # 2 more (ready 350, listed 370); 360 reads 6; 375 reads 8 and deletes the 2 oldest.
    # Live: 4 over 300..334, 6 over 335..349, 8 over 350..374, 6 from 375 on.
    cell = {"controller": "ledger", "G": 20, "U": 15, "B": 5, "desired": 6,
            "deaths": ((300, 2),), "initial": "desired"}
    want = {"overshoot_after": 2, "missing_after": 2 * 35, "settle_after": 374 - 300 + 1,
            "overshoot": 2, "created": 4, "unneeded": 4 + 6 - 6 - 2, "deleted": 2,
            "missing_copy_seconds": 70, "excess_copy_seconds": 2 * 25, "stable_at": 375}
    for got in (run_cell(**cell), run_reference(make_cell(**cell))):
        assert {m: got[m] for m in want} == want
    # From a cold start the same loop overshoots by 6 on the way up; after the death, 2.
    cold = run_cell(**(cell | {"initial": 0}))
    assert (cold["overshoot"], cold["overshoot_after"]) == (6, 2)


@pytest.mark.parametrize("controller", ["ledger", "intent", "expectations", "replicaset"])
def test_more_copies_than_desired_are_deleted_oldest_first(controller: str) -> None:
    cell = Cell(controller=controller, G=3, U=10, B=2, desired=4, deaths=(), initial=9)
    got = run_reference(cell)
    assert got == run_cell(controller=controller, G=3, U=10, B=2, desired=4, deaths=(),
                           initial=9)
    assert (got["created"], got["deleted"], got["unneeded"]) == (0, 5, 5)
    # the round (sync) at 0 deletes the surplus before second 0's sample
    assert (got["overshoot"], got["stable_at"]) == (0, 1)


def test_the_disturbance_starts_at_the_schedules_first_event() -> None:
    # Events in any order: the earliest one starts the window; one past the end is none.
    cell = {"G": 10, "U": 10, "B": 5, "desired": 5, "initial": "desired", "duration": 600}
    first = run_cell(**cell, deaths=((450, 1), (200, 1)))
    assert first == run_reference(make_cell(**cell, deaths=((450, 1), (200, 1))))
    assert first["overshoot_after"] is not None
    assert first["settle_after"] is not None
    assert first["settle_after"] > 1
    late = run_cell(**cell, deaths=((601, 1),))
    assert all(late[m] is None for m in AFTER)
    # A death nobody notices (count 0) still opens the window: nothing drifts, 1 s to settle.
    quiet = run_cell(**cell, deaths=((300, 0),))
    assert [quiet[m] for m in AFTER] == [0, 0, 1]


def test_the_trace_gives_the_same_figures() -> None:
    cell = Cell(G=20, U=15, B=5, initial="desired", deaths=((300, 2),), G_spread=9, seed=4)
    assert metrics_of(trace_cell(cell), cell) == run_reference(cell) == run_cell(
        G=20, U=15, B=5, initial="desired", deaths=((300, 2),), G_spread=9, seed=4)


def test_desired_is_a_name_in_a_cell_and_minus_one_in_a_column() -> None:
    cell = Cell(desired=7, initial="desired")
    assert (cell.initial, cell.initial_copies()) == ("desired", 7)
    frame = cells_frame([cell, Cell(desired=7, initial=3)])
    assert frame["initial"].dtype == pl.Int64
    assert frame["initial"].to_list() == [NAMED, 3]
    kind = make_cell().__class__.__dataclass_fields__["initial"].metadata["param"].kind
    assert unflat(kind, NAMED) == "desired"
    assert unflat(kind, 3) == 3
    spec = parse_spec('name = "t"\n[grid]\ninitial = [0, "desired"]\ndesired = [2, 5]\n')
    assert spec.axes["initial"] == (0, "desired")


@pytest.mark.parametrize(("value", "shown"), [
    (-1, "-1"), (MAX_COPIES + 1, str(MAX_COPIES + 1)), ("settled", "'settled'"),
    (True, "True"), (2.5, "2.5")])
def test_bad_values_are_named(value: object, shown: str) -> None:
    message = f"initial must be an integer in [0, {MAX_COPIES}] or 'desired', got {shown}"
    with pytest.raises(ValueError, match=re.escape(message)):
        Cell(initial=value)  # type: ignore[arg-type]


def test_a_bad_column_is_named() -> None:
    frame = cells_frame([Cell()]).with_columns(initial=pl.lit(-2, dtype=pl.Int64))
    with pytest.raises(ValueError, match=re.escape(
            f"initial must be an integer in [0, {MAX_COPIES}] or 'desired' (-1 in a column), "
            "got -2")):
        simulate(frame)
    settled = simulate(cells_frame([Cell(deaths=())]).with_columns(
        initial=pl.lit(NAMED, dtype=pl.Int64)))
    assert settled["created"].to_list() == [0]
