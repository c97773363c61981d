"""The laws as columns: their values, and the rows they speak of (the richer world included)."""

from __future__ import annotations

import polars as pl
import pytest

from reconsim import Cell
from reconsim.model.laws import law_columns
from reconsim.model.params import WORLD_PARAMS
from reconsim.model.simulate import cells_frame, simulate


def laws(cells: list[Cell]) -> list[dict[str, object]]:
    frame = simulate(cells_frame(cells)).with_columns(law_columns())
    return frame.select("law_overshoot", "law_holds", "above_boundary", "law_overshoot_worst",
                        "above_boundary_worst").to_dicts()


def test_worst_case_law_reads_the_longest_delays_and_the_shortest_interval() -> None:
    # desired x (ceil((G + G_spread + B + B_spread) / max(1, U - U_jitter)) - 1), by hand:
    # 6 x (ceil((0 + 27 + 5 + 0) / 15) - 1) = 6 x (3 - 1) = 12;
    # 6 x (ceil((10 + 5 + 5 + 3) / (15 - 4)) - 1) = 6 x (3 - 1) = 12;
    # 6 x (ceil((10 + 5 + 5 + 3) / max(1, 15 - 20)) - 1) = 6 x 22 = 132;
    # observe = created: 6 x (ceil((10 + 5) / 15) - 1) = 0.
    got = laws([Cell(G=0, G_spread=27, B=5, U=15),
                Cell(G=10, G_spread=5, B=5, B_spread=3, U=15, U_jitter=4),
                Cell(G=10, G_spread=5, B=5, B_spread=3, U=15, U_jitter=20),
                Cell(G=10, G_spread=5, B=5, B_spread=3, U=15, observe="created")])
    assert [r["law_overshoot_worst"] for r in got] == [12, 12, 132, 0]
    assert [r["above_boundary_worst"] for r in got] == [False, False, False, False]
    # The law itself keeps its domain: fixed delays only.
    assert [r["law_overshoot"] for r in got] == [None] * 4
    assert [r["above_boundary"] for r in got] == [True, True, True, True]


def test_in_seed_001s_world_the_worst_case_is_the_law() -> None:
    got = laws([Cell(G=30, U=15), Cell(G=30, U=40), Cell(G=0, U=1)])
    for r in got:
        assert r["law_overshoot_worst"] == r["law_overshoot"] is not None
        assert r["above_boundary_worst"] == r["above_boundary"]
    assert got[1]["above_boundary_worst"] is True


@pytest.mark.parametrize("change", [
    {"trigger": "watch"}, {"delete_order": "newest"}, {"grace": 30}, {"fail_rate": 0.1},
    {"lost_rate": 0.1}, {"lag": ((10, 20, 5),)}, {"create_faults": ((0, 1, "fail"),)},
    {"controller": "intent"}, {"max_per_round": 2}, {"gain": 0.5},
])
def test_laws_are_null_outside_their_rows(change: dict[str, object]) -> None:
    (r,) = laws([Cell(G=30, U=15, G_spread=5, **change)])  # type: ignore[arg-type]
    assert (r["law_overshoot"], r["law_holds"], r["law_overshoot_worst"]) == (None, None, None)


def test_the_seed_alone_keeps_a_row_in_the_laws_domain() -> None:
    (r,) = laws([Cell(G=30, U=15, seed=7)])
    assert (r["law_overshoot"], r["law_holds"]) == (12, True)  # 6 x (ceil(35 / 15) - 1)


def test_a_frame_without_the_richer_world_s_columns_takes_their_defaults() -> None:
    cells = [Cell(G=g, U=u) for g in (0, 30) for u in (5, 40)]
    full = simulate(cells_frame(cells))
    bare = full.drop(WORLD_PARAMS)
    want = full.select(law_columns())
    assert bare.select(law_columns(bare.columns)).equals(want)
    with pytest.raises(pl.exceptions.ColumnNotFoundError):
        bare.select(law_columns())


def _readings(cells: list[Cell]) -> pl.DataFrame:
    from reconsim.model.laws import law_readings

    return simulate(cells_frame(cells)).with_columns(law_columns()).with_columns(
        law_readings())


def test_a_delay_table_is_read_at_its_lowest_mean_percentile_and_worst() -> None:
    from math import ceil

    from reconsim.model import delays

    table = delays.from_samples([5, 7, 12, 12, 40])  # mean 76/5 = 15.2 s
    row = _readings([Cell(G=1, G_delays=table, B=5, U=10, desired=6)]).row(0, named=True)
    assert row["law_overshoot"] is None  # delays vary: off the fixed-delay law
    assert row["law_lowest"] == 6 * (ceil((1 + 5 + 5) / 10) - 1)
    assert row["law_mean"] == 6 * (ceil((1 + delays.mean(table) + 5) / 10) - 1)  # 21.2 s
    assert row["law_p99"] == row["law_worst"] == row["law_overshoot_worst"] == 6 * (5 - 1)
    assert row["above_boundary_worst"] is False
    # A table of one second is read at that second everywhere; the boundary sees it.
    one = _readings([Cell(G_delays=((3, 7),), B=5, U=8)]).row(0, named=True)
    assert (one["law_lowest"], one["law_mean"], one["law_worst"]) == (0, 0, 0)
    assert one["above_boundary_worst"] is True


def test_a_spread_and_its_table_read_alike() -> None:
    from reconsim.model import delays

    spread = Cell(G=2, G_spread=27, B=5, B_spread=3, U=9, U_jitter=4, desired=6)
    table = Cell(G=2, G_delays=delays.spread_table(27), B=5, B_delays=delays.spread_table(3),
                 U=9, U_jitter=4, desired=6)
    got = _readings([spread, table])
    for column in ("law_overshoot_worst", "above_boundary_worst", "law_lowest", "law_mean",
                   "law_p99", "law_worst", "overshoot"):
        assert got[column][0] == got[column][1], column


def test_the_percentile_reading_is_the_tables_quantile() -> None:
    from reconsim.model import delays

    table = delays.from_quantiles({"p50": 12, "p90": 25, "p99": 40, "max": 60})
    assert delays.quantile(table, 990_000) == 40
    row = _readings([Cell(G_delays=table, B=0, U=10, desired=1)]).row(0, named=True)
    assert (row["law_p99"], row["law_worst"]) == (4 - 1, 6 - 1)
