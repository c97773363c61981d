"""The one percentile: nearest rank, the value at 1-based rank ⌈p·n⌉ of the n non-null
values sorted, pinned against figures counted by hand; its polars expression read the same
way over random inputs; and the report's sections and ``compare`` showing it."""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconsim.compare.cells import _summarized
from reconsim.model.metrics import nearest_rank, percentile, percentile_expr
from reconsim.report.build import summarize
from reconsim.report.load import load_sweep
from reconsim.report.query import stats
from reconsim.report.sections.answers import quantiles
from tests.helpers.tables import hand_table, write_table


def by_hand(values: list[Any], percent: int) -> Any:
    """The ``percent``-th percentile counted by hand: the non-null values sorted, the one at
    1-based rank ⌈percent·n / 100⌉ (the ceiling of an exact fraction); None for none."""
    kept = sorted(v for v in values if v is not None)
    return kept[math.ceil(Fraction(percent * len(kept), 100)) - 1] if kept else None


def of_expr(values: list[Any], p: float | Fraction, dtype: pl.DataType) -> Any:
    """:func:`percentile_expr` over ``values`` as one column, read back as a Python value."""
    frame = pl.DataFrame({"v": values}, schema={"v": dtype})
    return frame.select(percentile_expr(pl.col("v"), p)).item()


@pytest.mark.parametrize(("values", "p", "want"), [
    (range(1, 13), 0.95, 12),      # ⌈11.4⌉ = 12; polars' "nearest" gives 11
    (range(1, 21), 0.95, 19),      # ⌈19⌉ = 19: the 19th, not the 20th
    (range(1, 21), 0.9, 18),
    (range(1, 21), 0.99, 20),      # ⌈19.8⌉ = 20
    (range(1, 101), 0.95, 95),
    (range(1, 101), 0.99, 99),
    (range(1, 101), 0.07, 7),      # 0.07 * 100 is 7.000000000000001 in floating point
    (range(1, 26), 0.28, 7),       # 0.28 * 25 likewise
    (range(1, 11), 0.9, 9),
    (range(1, 11), 0.95, 10),
    ([5, 1, 5, 3, 2], 0.5, 3),     # unsorted, repeated: 1 2 3 5 5, rank 3
    ([5, 1, 5, 3, 2], 0.95, 5),
    ([40, 10, 30, 20], 0.5, 20),   # rank 2 of 4: no mean of the two middle values
    ([7], 0.5, 7), ([7], 0.95, 7), ([7], 0.99, 7), ([7], 1, 7),
    ([None, 3, None, 1, 2], 0.5, 2),   # nulls left out: n = 3, rank 2
    ([None, 3, None, 1, 2], 0.95, 3),
    ([2.5, -1.0, 0.5], 0.9, 2.5),
    (range(1, 13), Fraction(19, 20), 12),
])
def test_nearest_rank_by_hand(values: Any, p: float | Fraction, want: Any) -> None:
    values = list(values)
    assert percentile(values, p) == want
    dtype = pl.Float64() if any(isinstance(v, float) for v in values) else pl.Int64()
    assert of_expr(values, p, dtype) == want


def test_polars_nearest_is_not_nearest_rank() -> None:
    # Why the report does not use polars' own "nearest": it differs on 1 … 12 at 0.95.
    assert pl.Series(range(1, 13)).quantile(0.95, "nearest") == 11
    assert percentile(range(1, 13), 0.95) == 12


def test_the_rank_is_exact() -> None:
    assert math.ceil(0.07 * 100) == 8  # the floating-point ceiling is one too high
    assert nearest_rank(0.07, 100) == 7
    assert [nearest_rank(0.95, n) for n in (1, 12, 19, 20, 21, 40, 100)] == [
        1, 12, 19, 19, 20, 38, 95]
    assert nearest_rank(0.95, 0) == 0
    for n in range(1, 1001):
        for percent in (90, 95, 99):
            assert nearest_rank(percent / 100, n) == -(-percent * n // 100), (percent, n)


@pytest.mark.parametrize("values", [[], [None], [None, None]])
def test_no_value_gives_null(values: list[Any]) -> None:
    assert percentile(values, 0.95) is None
    assert of_expr(values, 0.95, pl.Int64()) is None


@pytest.mark.parametrize("p", [0, 0.0, -0.5, 1.01, 95])
def test_a_level_outside_0_to_1_is_refused(p: float) -> None:
    with pytest.raises(ValueError, match=r"percentile's level must be in \(0, 1\]"):
        percentile([1, 2, 3], p)


values_lists = st.lists(st.one_of(st.none(), st.integers(-1000, 1000)), max_size=60)
#: Levels in hundredths (as the float written, read exactly) and in thousandths.
levels = st.one_of(st.integers(1, 100).map(lambda k: (k / 100, Fraction(k, 100))),
                   st.integers(1, 1000).map(lambda k: (Fraction(k, 1000),) * 2))


@settings(deadline=None)  # polars' first calls are slow on a loaded machine
@given(values_lists, levels)
def test_python_and_polars_read_the_same_percentile(values: list[int | None],
                                                    level: tuple[Any, Fraction]) -> None:
    p, exact = level
    want = percentile(values, p)
    kept = sorted(v for v in values if v is not None)
    assert want == (kept[math.ceil(exact * len(kept)) - 1] if kept else None)
    assert of_expr(values, p, pl.Int64()) == want


@settings(deadline=None)  # polars' first calls are slow on a loaded machine
@given(st.lists(st.tuples(st.integers(0, 4), st.one_of(st.none(), st.integers(-50, 50))),
                max_size=80),
       st.sampled_from([0.5, 0.9, 0.95, 0.99]))
def test_a_group_by_reads_each_group_as_python_does(rows: list[tuple[int, int | None]],
                                                    p: float) -> None:
    frame = pl.DataFrame(rows, schema={"k": pl.Int64, "v": pl.Int64}, orient="row")
    got = dict(frame.group_by("k").agg(percentile_expr(pl.col("v"), p)).rows())
    want = {k: percentile([v for key, v in rows if key == k], p) for k, _ in rows}
    assert got == want


@settings(deadline=None)  # polars' first calls are slow on a loaded machine
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 6), st.integers(1, 30)),
                min_size=1, max_size=30))
def test_answers_read_from_counts_the_same_percentile(
        counts: list[tuple[int, int, int]]) -> None:
    # The Answers section reads its percentiles from cells counted per value (streaming):
    # the same figures as the cells themselves, one by one.
    frame = pl.DataFrame(counts, schema={"k": pl.Int64, "v": pl.Int64, "len": pl.UInt32},
                         orient="row").group_by("k", "v").agg(pl.col("len").sum())
    got = {r["k"]: (r["v__p95"], r["v__p99"]) for r in quantiles(frame, ["k"], "v").to_dicts()}
    cells = {k: [v for key, v, n in counts if key == k for _ in range(n)] for k, _, _ in counts}
    assert got == {k: (float(by_hand(c, 95)), float(by_hand(c, 99))) for k, c in cells.items()}


# ---------------------------------------------------------------- through the report


@pytest.mark.parametrize(("seeds", "want"), [(12, 12.0), (20, 19.0)])
def test_every_section_shows_the_nearest_rank_p95(tmp_path: Path, seeds: int,
                                                  want: float) -> None:
    # One (controller, U) over seeds 1 … n of overshoot: with G_spread (the delays
    # section), under the watch trigger (the faults section's resync table), seeds varying
    # (the read-cost chart's band); 12 seeds give 12 (polars' "nearest": 11), 20 give 19.
    assert want == by_hand(list(range(1, seeds + 1)), 95)
    rows = [{"seed": s, "trigger": "watch", "G_spread": 4, "overshoot": s + 1}
            for s in range(seeds)]
    summary = summarize(load_sweep(write_table(tmp_path / "s", hand_table(rows))))
    (answer,) = summary["answers"]["rows"]
    assert answer["overshoot"]["p95"] == want
    assert answer["overshoot_p99"] == float(seeds)
    (delay,) = summary["delays"]["rows"]
    assert (delay["groups"], delay["p95"]) == (1, want)
    (resync,) = summary["faults"]["resync"]
    assert resync["p95"] == want
    (point,) = summary["read_cost"]["chart"]["points"]
    assert point["overshoot_p95"] == want


def test_the_statistics_p90_is_the_nearest_rank() -> None:
    # 1 … 8 and a null: rank ⌈7.2⌉ = 8 (polars' "nearest": 7).
    got = stats(pl.Series([*range(1, 9), None]))
    assert (got["count"], got["p90"]) == (8, 8.0)
    assert stats(pl.Series([None], dtype=pl.Int64))["p90"] is None


def test_compare_pairs_take_the_nearest_rank_p95() -> None:
    # A side of a pair: 1 … 12 and a null; p95 the 12th (linear interpolation: 11.45).
    side = pl.LazyFrame({"G": [0] * 13, "reads__a": [*range(1, 13), None]})
    row = _summarized(side, ["G"], ["reads"], "a").collect().row(0, named=True)
    assert (row["reads__p95__a"], row["reads__max__a"]) == (12.0, 12.0)
    assert row["reads__nulls__a"] == pytest.approx(1 / 13)
