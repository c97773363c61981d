"""The facts a chunk's footer states (reconsim.sweep.facts) say what the table says: a report
opened from them equals one opened by reading every row, and footers it cannot trust are
not used."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_series_equal

from reconsim.report import load, query
from reconsim.report.build import summarize
from reconsim.report.load import Sweep, load_sweep
from reconsim.report.source import SweepSource
from reconsim.sweep import facts
from reconsim.sweep.facts import FACTS_KEY, merge
from tests.helpers.sweeps import run_spec

#: Every kind of parameter column: lists of records (lag, create_faults), a list of times
#: (restart_at), a nullable one (max_per_round), floats, a seed axis, two schedules (one
#: of them depending on the duration).
SPEC = """
name = "facts"
chunk_size = 500
[lag.stale]
windows = [[100, 160, 30]]
[faults.burst]
events = [[50, 2, "lost"]]
[grid]
controller = ["ledger", "intent"]
G = [0, 20]
U = [5, 30]
B = 5
desired = 2
duration = [200, 300]
max_per_round = ["unlimited", 1]
gain = [1.0, 0.5]
restart_at = [[], [120]]
lag = ["none", "stale"]
create_faults = ["none", "burst"]
seed = { from = 0, to = 4 }
schedule = ["seed", "tail"]
[schedule.seed]
events = [[100, 1]]
[schedule.tail]
every = 50
count = 1
"""


def _sweep(tmp: Path) -> Path:
    return run_spec(tmp, SPEC)


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _sweep(tmp_path_factory.mktemp("facts"))


def _read_every_row(where: Path, monkeypatch: pytest.MonkeyPatch) -> Sweep:
    with monkeypatch.context() as m:
        m.setattr(load, "_footer_facts", lambda *_: None)
        return load_sweep(where)


def _same(a: Sweep, b: Sweep) -> None:
    for field in ("axes", "schedules", "stale_law_cells", "cells", "axis_facts"):
        assert getattr(a, field) == getattr(b, field), field
    assert a.table.collect_schema() == b.table.collect_schema()


def _table_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The plans of the queries that scan the Parquet files, from now on."""
    plans: list[str] = []
    collect = query.collect

    def spy(q: Any) -> pl.DataFrame:
        plan = q.explain() if isinstance(q, pl.LazyFrame) else ""
        if "parquet" in plan.lower():
            plans.append(plan)
        return collect(q)

    monkeypatch.setattr(query, "collect", spy)  # collect_all and the queries' own reads
    monkeypatch.setattr(load, "collect", spy)  # load_sweep's
    return plans


def test_a_sweeps_footers_open_the_table_without_reading_it(
        swept: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    slow = _read_every_row(swept, monkeypatch)
    plans = _table_reads(monkeypatch)
    fast = load_sweep(swept)
    assert plans == []
    _same(fast, slow)
    assert len(list((swept / "data").glob("*.parquet"))) > 1
    assert {"lag", "create_faults", "restart_at", "max_per_round", "gain", "seed",
            "schedule"} <= set(fast.axes)
    assert summarize(fast) == summarize(slow)
    # Which variant parameters vary within a controller: from the footers, no read.
    assert fast.variants is not None
    assert slow.variants is None
    plans.clear()
    varying = query.variant_params(fast.table, fast.sizes, fast.variants)
    assert plans == []
    assert varying == query.variant_params(slow.table, slow.sizes)
    assert {"max_per_round", "gain", "restart_at"} <= set(varying)


def test_columns_past_the_footers_limit_are_read_from_the_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(facts, "MAX_VALUES", 3)  # seed has 5 values, schedules 4 rows
    out = _sweep(tmp_path)
    plans = _table_reads(monkeypatch)
    fast = load_sweep(out)
    # seed's values and whether it leaves its default, and the schedules: asked of the
    # table; every other column's values come from the footers.
    assert plans
    assert all("seed" in p or "schedule" in p for p in plans)
    monkeypatch.undo()
    _same(fast, _read_every_row(out, monkeypatch))


def _rewrite(part: Path, change: Any = None, metadata: dict[str, str] | None = None) -> None:
    frame = pl.read_parquet(part)
    (change(frame) if change else frame).write_parquet(part, metadata=metadata)


def test_footers_of_other_laws_are_not_trusted(tmp_path: Path) -> None:
    out = _sweep(tmp_path)
    part = sorted((out / "data").glob("*.parquet"))[0]
    footer = json.loads(pl.read_parquet_metadata(part)[FACTS_KEY])
    footer["law"] = "0" * 16  # the laws of another reconsim
    # ... whose law column disagrees with today's law on every row of the chunk.
    _rewrite(part, lambda f: f.with_columns(above_boundary=~pl.col("above_boundary")),
             {FACTS_KEY: json.dumps(footer)})
    sweep = load_sweep(out)
    assert sweep.stale_law_cells == pl.read_parquet(part).height


def test_one_chunk_without_footer_facts_means_reading_the_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = _sweep(tmp_path)
    _rewrite(sorted((out / "data").glob("*.parquet"))[-1])  # no metadata
    source = SweepSource.parse(out)
    assert load._footer_facts(source, pl.read_parquet_schema(source.part_files()[0]),
                              ["G"]) is None
    plans = _table_reads(monkeypatch)
    sweep = load_sweep(out)
    assert plans
    monkeypatch.undo()
    _same(sweep, _read_every_row(out, monkeypatch))


@pytest.mark.parametrize("footer", [
    "not json", "[]", '{"law": "x", "columns": {}}',
    '{"law": "%s", "columns": {}}',  # no facts about G
    '{"law": "%s", "rows": 1, "columns": {"G": {"nulls": 0, "values": ["a"]}}}',  # not Int64
    '{"law": "%s", "rows": 1, "columns": {"G": {"nulls": 0}}}',
])
def test_footers_that_do_not_fit_are_not_used(footer: str) -> None:
    text = footer.replace("%s", facts.law_digest()) if "%s" in footer else footer
    assert merge([text], pl.Schema({"G": pl.Int64}), ["G"]) is None


def test_merged_footers_add_rows_and_nulls_and_unite_values() -> None:
    one = {"law": facts.law_digest(), "rows": 3,
           "columns": {"G": {"nulls": 1, "values": [None, 5]}}, "schedules": None}
    two = one | {"rows": 2, "columns": {"G": {"nulls": 0, "values": [7, 5]}}}
    merged = merge([json.dumps(one), json.dumps(two)], pl.Schema({"G": pl.Int64}), ["G"])
    assert merged is not None
    assert (merged.rows, merged.nulls, merged.schedules) == (5, {"G": 1}, None)
    values = merged.values["G"]
    assert values is not None
    assert sorted(values["G"].to_list(), key=lambda v: (v is not None, v)) == [None, 5, 7]


@pytest.mark.parametrize("series", [
    pl.Series([3, 3, 3]), pl.Series([3, 1, 3, 2]), pl.Series([None, 3, 3]),
    pl.Series([1.0, float("nan"), 1.0]), pl.Series(["a", "a"]), pl.Series([True, False]),
    pl.Series([[], []], dtype=pl.List(pl.Int64)), pl.Series([[], [1], []]),
    pl.Series([None, None], dtype=pl.Int64), pl.Series([], dtype=pl.Int64),
])
def test_a_columns_distinct_values_are_those_unique_gives(series: pl.Series) -> None:
    assert_series_equal(facts._distinct(series), series.unique(maintain_order=True))
