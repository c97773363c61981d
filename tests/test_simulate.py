"""``simulate`` and ``run_cell``: the frame contract and the checks at the door."""

from __future__ import annotations

import gc
import re
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconsim import METRIC_NAMES, Cell, run_cell, run_reference, simulate
from reconsim.controllers import Controller, Int, Param, RunawayError
from reconsim.model.controllers import registry
from reconsim.model.metrics import OUTPUT_NAMES, RESPONSE_FIELDS, RESPONSES, RESPONSES_DTYPE
from reconsim.model.params import PARAM_DTYPES, all_params
from reconsim.model.simulate import (
    DEATHS_DTYPE,
    cell_arrays,
    cells_frame,
    kernel_inputs,
    responses_column,
    simulate_cell,
)
from reconsim.testing import cells, world_cells


def frame(**overrides: object) -> pl.DataFrame:
    base = cells_frame([Cell(G=20), Cell(controller="intent", G=60, U=5)])
    return base.with_columns(**{k: pl.Series(v) if isinstance(v, list) else v
                                for k, v in overrides.items()})


def test_returns_input_columns_then_metrics_in_row_order() -> None:
    cells = frame().with_columns(tag=pl.Series(["a", "b"]))
    out = simulate(cells)
    assert out.columns == [*cells.columns, *OUTPUT_NAMES]
    assert out["tag"].to_list() == ["a", "b"]
    assert out.select(OUTPUT_NAMES).row(1, named=True) == run_reference(
        Cell(controller="intent", G=60, U=5))
    assert out.schema["stable_at"] == pl.Int64
    assert out.schema["work_per_round"] == pl.Float64


def test_ledger_base_is_optional_and_defaults_to_20() -> None:
    cells = frame().drop("ledger_base")
    assert simulate(cells)["reads"].to_list() == simulate(frame())["reads"].to_list()
    wider = simulate(frame(ledger_base=pl.lit(30)))
    assert (wider["reads"] - simulate(frame())["reads"]).to_list() == [61 * 10, 181 * 10]


def test_empty_frame_and_empty_schedules() -> None:
    empty = simulate(frame().head(0))
    assert empty.height == 0
    assert set(METRIC_NAMES) <= set(empty.columns)
    none = frame(deaths=pl.Series([[], []], dtype=DEATHS_DTYPE))
    assert simulate(none)["unneeded"].to_list() == [
        run_reference(Cell(G=20, deaths=()))["unneeded"],
        run_reference(Cell(controller="intent", G=60, U=5, deaths=()))["unneeded"],
    ]


def test_narrower_integer_dtypes_are_accepted() -> None:
    cells = frame().with_columns(pl.col("G", "U", "B", "desired", "duration").cast(pl.Int16))
    assert simulate(cells).select(OUTPUT_NAMES).equals(simulate(frame()).select(OUTPUT_NAMES))


def test_unneeded_counts_every_scheduled_death_even_those_that_never_land() -> None:
    # Defined as created + initial - desired - the schedule's total count: an event after the end
    # still counts, so unneeded goes negative. Documented, not hidden.
    m = run_cell(G=0, deaths=((300, 2), (5000, 3)))
    assert (m["created"], m["unneeded"]) == (8, -3)


@pytest.mark.parametrize(("column", "value", "message"), [
    ("U", 0, "U must be an integer in [1, 1000000], got 0"),
    ("G", -1, "G must be an integer in [0, 1000000], got -1"),
    ("B", -2, "B must be an integer in [0, 1000000], got -2"),
    ("desired", -1, "desired must be an integer in [0, 1000000], got -1"),
    ("duration", -5, "duration must be an integer in [0, 1000000], got -5"),
    ("ledger_base", -3, "ledger_base must be an integer in [0, 1000000], got -3"),
    ("controller", "pid",
     "controller 'pid': not a built-in (ledger, intent, expectations, replicaset, deployment)"),
    ("gain", 0.0, "gain must be a multiple of 0.001 in (0, 1], got 0.0"),
])
def test_out_of_range_values_are_named(column: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        simulate(frame(**{column: [value, value]}))
    with pytest.raises(ValueError, match=re.escape(message)):
        run_cell(**{column: value})


@pytest.mark.parametrize(("events", "message"), [
    ([{"at": -1, "count": 2}], "deaths event at must be an integer in [0, 1000000], got -1"),
    ([{"at": 3, "count": -2}], "deaths event count must be an integer in [0, 1000000], got -2"),
    ([{"at": None, "count": 2}], "deaths event at: null value"),
    ([None], "deaths: null event in row 0"),
])
def test_bad_death_events_are_named(events: list[object], message: str) -> None:
    deaths = pl.Series([events, []], dtype=DEATHS_DTYPE)
    with pytest.raises(ValueError, match=re.escape(message)):
        simulate(frame(deaths=deaths))


def test_bad_death_events_in_run_cell() -> None:
    with pytest.raises(ValueError, match=re.escape(
            "deaths event at must be an integer in [0, 1000000], got -1")):
        run_cell(deaths=((-1, 2),))
    with pytest.raises(ValueError, match=r"deaths event must be an \(at, count\) pair"):
        run_cell(deaths=((1, 2, 3),))


@pytest.mark.parametrize(("change", "message"), [
    (lambda f: f.drop("U"), "cells: missing column 'U'"),
    (lambda f: f.with_columns(pl.col("G").cast(pl.Float64)), "G: column must hold integers"),
    (lambda f: f.with_columns(G=pl.Series([1, None])), "G: null value in row 1"),
    (lambda f: f.with_columns(controller=pl.lit(1)), "controller: column must be strings"),
    (lambda f: f.with_columns(controller=pl.Series(["ledger", None])),
     "controller: null value in row 1"),
    (lambda f: f.with_columns(deaths=pl.lit(3)), "deaths: column must be list"),
    (lambda f: f.with_columns(overshoot=pl.lit(0)), "'overshoot' is a metric name"),
    (lambda f: f.with_columns(deaths=pl.Series([None, []], dtype=DEATHS_DTYPE)),
     "deaths: null schedule in row 0"),
])
def test_malformed_frames_are_named(change, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=message):
        simulate(change(frame()))


def test_booleans_are_not_integers() -> None:
    with pytest.raises(ValueError, match=re.escape(
            "G must be an integer in [0, 1000000], got True")):
        run_cell(G=True)


def test_run_cell_rejects_unknown_parameters() -> None:
    with pytest.raises(TypeError, match="Gg"):
        run_cell(Gg=3)


@pytest.mark.parametrize(("column", "series", "message"), [
    ("seed", pl.Series([0, 2**31]), "seed must be an integer in [0, 2147483647], got 2147483648"),
    ("G_spread", pl.Series([0, -1]), "G_spread must be an integer in [0, 1000000], got -1"),
    ("fail_rate", pl.Series([0.0, 0.0005]), "fail_rate must be a multiple of 0.001 in [0, 1]"),
    ("slow_start", pl.Series([0, 1]), "slow_start: column must hold booleans"),
    ("trigger", pl.Series(["periodic", "event"]), "trigger must be one of periodic, watch"),
    ("lag", pl.Series([[], [{"from": 5, "to": 3, "extra": 1}]]),
     "lag window must have from < to, got (5, 3)"),
    ("lag", pl.Series([[], [{"from": 1, "to": 3, "extra": None}]], dtype=pl.List(pl.Struct(
        {"from": pl.Int64, "to": pl.Int64, "extra": pl.Int64}))),
     "lag window extra must be an integer in [1, 1000000], got None"),
    ("lag", pl.Series([[], [None]], dtype=pl.List(pl.Struct(
        {"from": pl.Int64, "to": pl.Int64, "extra": pl.Int64}))), "lag: null window in row 1"),
    ("lag", pl.Series([[1], [2]]), "lag: column must be list[struct{from, to, extra}]"),
    ("create_faults", pl.Series([[], [{"at": 1, "count": 3, "kind": "crash"}]]),
     "create_faults event kind must be one of fail, lost; got 'crash'"),
    ("create_faults", pl.Series([[], None], dtype=pl.List(pl.Struct(
        {"at": pl.Int64, "count": pl.Int64, "kind": pl.String}))),
     "create_faults: null schedule in row 1"),
])
def test_bad_world_columns_are_named(column: str, series: pl.Series, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        simulate(frame().with_columns(series.alias(column)))


@pytest.mark.parametrize(("rows", "threads"), [(2, True), (10_002, True), (10_002, False)],
                         ids=["small", "threaded", "one-thread"])
def test_a_bad_frame_raises_the_checks_line_alone(rows: int, threads: bool,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # The values are checked while the columns are encoded (or before, where polars has one
    # thread): a choice outside its list makes the encoding fail too, and only the check's
    # line surfaces, with nothing chained.
    from reconsim.model import simulate as module

    if not threads:
        monkeypatch.setattr(module, "_checker", lambda: None)
        monkeypatch.setattr(module, "_threads", lambda: None)
    good = pl.concat([frame()] * (rows // 2))
    assert simulate(good).select(OUTPUT_NAMES).head(2).to_dicts() == [
        run_reference(Cell(G=20)), run_reference(Cell(controller="intent", G=60, U=5))]
    bad = good.with_columns(trigger=pl.Series(["periodic"] * (rows - 1) + ["event"]))
    with pytest.raises(ValueError, match=re.escape("trigger must be one of periodic, watch")
                       ) as info:
        simulate(bad)
    assert info.value.__cause__ is None
    assert info.value.__context__ is None or info.value.__suppress_context__


def test_world_columns_round_trip_through_cells_frame() -> None:
    cells = [Cell(G=20, lag=((10, 50, 5),), create_faults=((0, 2, "lost"),), slow_start=True,
                  fail_rate=0.1, seed=4, trigger="watch", grace=3, delete_order="newest"),
             Cell(controller="intent", G=60, U=5)]
    out = simulate(cells_frame(cells))
    assert out.select(OUTPUT_NAMES).to_dicts() == [run_reference(c) for c in cells]
    assert out["lag"].to_list()[0] == [{"from": 10, "to": 50, "extra": 5}]



def _deadband(v, p, m):  # type: ignore[no-untyped-def]
    gap = v.desired - v.seen
    return 0 if -p.band <= gap <= p.band else gap


#: A user's controller beside reconsim's own: one with a parameter of its own.
DEADBAND = Controller("deadband_cells", _deadband, "no correction within band",
                      params={"band": Param(Int(0, 1000), 1, "the gap it leaves alone")})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_one_cell_goes_the_frames_way(data: st.DataObject) -> None:
    """run_cell builds the kernel's arrays from the cell, not through a one-row frame:
    the arrays are a frame's, and so are the metrics (their types and nulls included)."""
    with registry.scope():
        registry.register(DEADBAND)
        names = (*(c.name for c in registry.built_in() if c.world is None), DEADBAND.name)
        cell = data.draw(st.one_of(cells(controllers=names), world_cells(controllers=names)))
        frame = cells_frame([cell])
        params = tuple(p for p in all_params()
                       if p.name in PARAM_DTYPES or p.applies_to(cell.controller))
        want = kernel_inputs(frame, params=params)
        got = cell_arrays(cell)
        assert got.keys() == want.keys()
        for key, array in want.items():
            assert got[key].dtype == np.int64, key
            assert got[key].tolist() == array.tolist(), key
        try:
            slow = simulate(frame).select(OUTPUT_NAMES).row(0, named=True)
        except RunawayError as refused:  # e.g. an instant whose syncs never end
            with pytest.raises(RunawayError, match=f"^{re.escape(refused.reason)}$"):
                simulate_cell(cell)  # the same line (simulate's adds the cell)
            return
        fast = simulate_cell(cell)
        assert fast == slow
        assert [type(v) for v in fast.values()] == [type(v) for v in slow.values()]


def test_a_large_frames_columns_are_encoded_on_threads_alike(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # From THREADED_FROM rows on, the columns are encoded side by side on threads: the same
    # arrays, in the same order, as one column after another.
    from reconsim.model import simulate as module

    batch = [Cell(), Cell(controller="intent", G_spread=5, lag=((10, 20, 5),), seed=3),
             Cell(controller="expectations", deaths=((5, 1), (1, 2)), restart_at=(7,),
                  B_delays=((1, 2), (4, 1)), create_faults=((3, 1, "lost"),))]
    frame = pl.concat([cells_frame(batch)] * (module.THREADED_FROM // len(batch) + 1))
    mapped = []

    class Counted:
        def map(self, fn, items):  # type: ignore[no-untyped-def]
            mapped.append(len(items))
            return threads.map(fn, items)

    with ThreadPoolExecutor(2) as threads:
        monkeypatch.setattr(module, "_threads", Counted)
        threaded = kernel_inputs(frame)
    monkeypatch.setattr(module, "THREADED_FROM", frame.height + 1)
    serial = kernel_inputs(frame)
    assert len(mapped) == 1
    assert list(threaded) == list(serial)
    for key, array in serial.items():
        np.testing.assert_array_equal(threaded[key], array, err_msg=key)


def test_a_parameter_is_null_only_where_it_does_not_apply() -> None:
    # ttl applies to expectations and replicaset: null for ledger is its absence, for
    # expectations a gap in the frame.
    cells = cells_frame([Cell(controller="ledger"), Cell(controller="expectations", ttl=5),
                         Cell(controller="replicaset")])
    assert simulate(cells.with_columns(ttl=pl.Series([None, 5, 300])))["ttl"].null_count() == 1
    with pytest.raises(ValueError, match="ttl: null value in row 1"):
        simulate(cells.with_columns(ttl=pl.Series([1, None, 300])))
    with pytest.raises(ValueError, match="log_scale_down: null value in row 2"):
        simulate(cells.with_columns(log_scale_down=pl.Series([None, None, None],
                                                             dtype=pl.Boolean)))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), max_size=12), st.data())
def test_the_responses_column_holds_each_rows_written_responses(
        rooms: list[tuple[int, int]], data: st.DataObject) -> None:
    # Each row has `room` columns of the matrix (response_buffers' layout) and wrote the
    # first `count` of them: all (the column is made around the matrix's rows) or fewer
    # (an event past the end: gathered first).
    room = np.array([r for r, _ in rooms], np.int64)
    count = np.minimum(room, [c for _, c in rooms])
    base = np.cumsum(room) - room
    matrix = np.array(data.draw(st.lists(st.lists(st.integers(-1, 9), min_size=5, max_size=5),
                                         min_size=max(1, int(room.sum())),
                                         max_size=max(1, int(room.sum())))), np.int64).T.copy()
    want = [[dict(zip(RESPONSE_FIELDS, (*(int(v) for v in matrix[:4, b + k]),
                                        None if matrix[4, b + k] < 0 else int(matrix[4, b + k])),
                      strict=True)) for k in range(c)]
            for b, c in zip(base.tolist(), count.tolist(), strict=True)]
    column = responses_column(matrix, base, count)
    assert column.dtype == RESPONSES_DTYPE
    assert column.to_list() == want
    assert column.list.len().to_list() == count.tolist()


def test_the_responses_column_outlives_the_kernels_matrix_and_lets_go_of_it() -> None:
    matrix = np.arange(5 * 6, dtype=np.int64).reshape(5, 6).copy()  # owns its memory
    alive = weakref.ref(matrix)
    column = responses_column(matrix, np.array([0, 2, 2]), np.array([2, 0, 4]))
    del matrix
    gc.collect()
    assert alive() is not None  # the column is made around it
    frame = column.to_frame().with_columns(n=pl.col(RESPONSES).list.len())
    assert frame["n"].to_list() == [2, 0, 4]
    assert column[2].struct.field("settle").to_list() == [26, 27, 28, 29]
    del column, frame
    gc.collect()
    assert alive() is None  # released with the column
