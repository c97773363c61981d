"""Delay tables: the compiled forms, the exact draw, and that a uniform spread is the table
of weight 1 each, on the reference model and on every kernel."""

from __future__ import annotations

import bisect
import itertools
import re
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconsim import run_cell
from reconsim.model import delays, rng
from reconsim.model.params import Cell
from reconsim.model.reference import run_reference

CHAIN = {"p50": 12, "p90": 25, "p99": 40, "max": 60}


def by_bisection(table: delays.Table, r: int) -> int:
    """The inverse CDF read another way: the first cumulative weight above ``r``."""
    sums = list(itertools.accumulate(w for _, w in table))
    return table[bisect.bisect_right(sums, r)][0]


def test_quantiles_compile_to_fixed_parts_per_million() -> None:
    table = delays.from_quantiles(CHAIN)
    assert delays.total(table) == delays.PPM
    assert (delays.lowest(table), delays.worst(table)) == (0, 60)
    # min 0 .. p50 12: 13 seconds share 500000 ppm, floor(m i / n) differences
    assert table[:3] == ((0, 38461), (1, 38462), (2, 38461))
    assert sum(w for v, w in table if v <= 12) == 500_000
    assert sum(w for v, w in table if v <= 25) == 900_000
    assert sum(w for v, w in table if v <= 40) == 990_000
    # p99 40 .. max 60: 20 seconds of 500 ppm each
    assert table[-20:] == tuple((v, 500) for v in range(41, 61))
    # piecewise uniform: 0.5 x 6 + 0.4 x 19 + 0.09 x 33 + 0.01 x 50.5 = 14.075, up to the
    # floors' rounding within segments
    assert delays.mean(table) == Fraction(3_518_753, 250_000)
    assert abs(delays.mean(table) - Fraction(14_075, 1000)) < Fraction(1, 10**4)


def test_quantiles_take_min_and_atoms() -> None:
    assert delays.from_quantiles({"min": 5, "p50": 5, "max": 7}) == (
        (5, 500_000), (6, 250_000), (7, 250_000))
    assert delays.from_quantiles({"max": 0}) == ((0, 10**6),)
    # a segment of fewer parts than seconds leaves some seconds out
    assert delays.from_quantiles({"p99.9999": 0, "max": 3}) == ((0, 999_999), (3, 1))
    assert delays.level_ppm("p99.99") == 999_900


def test_samples_and_histograms() -> None:
    assert delays.from_samples([40, 5, 12, 12, 7]) == ((5, 1), (7, 1), (12, 2), (40, 1))
    assert delays.from_histogram([[30, 2], [0, 1]]) == ((0, 1), (30, 2))
    assert delays.mean(delays.from_samples([5, 7, 12, 12])) == 9


def test_csv_of_samples(tmp_path: Path) -> None:
    (tmp_path / "m.csv").write_text("seconds\n12\n5\n\n12\n")
    assert delays.from_spec_table({"csv": "m.csv"}, "delays.m", tmp_path) == ((5, 1), (12, 2))


@pytest.mark.parametrize(("table", "message"), [
    ({"samples": [5, 7.5]}, "delays.x.samples: sample 7.5 is not a whole number of seconds"),
    ({"samples": [5, -1]}, "delays.x.samples: sample -1 is not in [0, 1000000] seconds"),
    ({"samples": []}, "delays.x.samples: empty list"),
    ({"histogram": []}, "delays.x.histogram: empty list"),
    ({"histogram": [[5, 0]]}, "delays.x.histogram: weight 0 of second 5 is not a positive"),
    ({"histogram": [[5, 1.5]]}, "delays.x.histogram: weight 1.5 of second 5 is not a"),
    ({"histogram": [[5, 1], [5, 2]]}, "delays.x.histogram: second 5 is listed twice"),
    ({"quantiles": {"p50": 30, "p90": 20, "max": 60}},
     "delays.x.quantiles: quantiles must not decrease, got p50 = 30 above p90 = 20"),
    ({"quantiles": {"min": 3}}, "delays.x.quantiles: no level and no max"),
    ({"quantiles": {"p50": 12, "max": 20_000}},
     "delays.x.quantiles: 20,001 distinct seconds, more than the 10,000 a delay table may "
     "hold: quantiles weigh every second between their points, and p50 = 12 … max = 20000 "
     "alone weighs 19,988; give a histogram"),
    ({"quantiles": {"p50": 3.5, "max": 9}}, "delays.x.quantiles.p50: quantile 3.5 is not a"),
    ({"quantiles": {"median": 3, "max": 9}}, "delays.x.quantiles.median: unknown key"),
    ({"quantiles": {"min": 10, "max": 9}},
     "delays.x.quantiles: quantiles must not decrease, got min = 10 above max = 9"),
    ({"csv": "absent.csv"}, "delays.x.csv: no such file"),
    ({"samples": [1], "csv": "a.csv"}, "delays.x needs exactly one of"),
    ({"sample": [1]}, "delays.x.sample: unknown key"),
])
def test_bad_tables_name_the_field_and_value(table: dict[str, object], message: str,
                                             tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        delays.from_spec_table(table, "delays.x", tmp_path)


def test_bad_csv_lines(tmp_path: Path) -> None:
    (tmp_path / "m.csv").write_text("12\n12.5\n")
    with pytest.raises(ValueError, match=r"^delays\.x\.csv: m\.csv line 2: '12\.5' is not a"):
        delays.from_spec_table({"csv": "m.csv"}, "delays.x", tmp_path)


def test_fixed_draws() -> None:
    table = delays.from_quantiles(CHAIN)
    assert [delays.draw(table, 7, rng.LEDGER_DELAY, k) for k in range(8)] == [
        9, 0, 12, 1, 9, 0, 25, 3]
    assert [delays.draw(((2, 1), (5, 3)), 1, rng.STARTUP, k) for k in range(8)] == [
        by_bisection(((2, 1), (5, 3)), rng.uniform(1, rng.STARTUP, k, 4)) for k in range(8)]


@given(st.lists(st.tuples(st.integers(0, 50), st.integers(1, 10**6)), min_size=1,
                max_size=8).map(lambda es: tuple(sorted(dict(es).items()))),
       st.integers(0, rng.MAX_SEED), st.integers(0, 1000))
def test_a_draw_is_the_inverse_cdf_of_the_uniform_draw(table: delays.Table, seed: int,
                                                        k: int) -> None:
    r = rng.uniform(seed, rng.LEDGER_DELAY, k, delays.total(table))
    assert delays.draw(table, seed, rng.LEDGER_DELAY, k) == by_bisection(table, r)


@given(st.integers(0, 60), st.integers(0, rng.MAX_SEED), st.integers(0, 1000))
def test_a_spread_is_the_table_of_weight_one(spread: int, seed: int, k: int) -> None:
    assert delays.draw(delays.spread_table(spread), seed, rng.STARTUP, k) == rng.uniform(
        seed, rng.STARTUP, k, spread + 1)


def test_quantile_readings() -> None:
    table = delays.from_samples([5, 7, 12, 12, 40])
    assert [delays.quantile(table, p) for p in (1, 200_000, 200_001, 600_000, 800_001,
                                                10**6)] == [5, 5, 7, 12, 40, 40]


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(["ledger", "intent", "expectations", "replicaset"]),
       st.integers(0, 30), st.integers(0, 8), st.integers(0, 2**20))
def test_a_spread_and_its_table_give_the_same_cell(controller: str, g_spread: int,
                                                    b_spread: int, seed: int) -> None:
    spread = run_cell(controller=controller, G=4, G_spread=g_spread, B_spread=b_spread,
                      seed=seed, duration=400)
    table = run_cell(controller=controller, G=4, G_delays=delays.spread_table(g_spread),
                     B_delays=delays.spread_table(b_spread), seed=seed, duration=400)
    assert spread == table


def test_a_measured_table_on_the_kernels_and_the_reference() -> None:
    table = delays.from_quantiles(CHAIN)
    for controller in ("ledger", "intent", "replicaset"):
        cell = Cell(controller=controller, G_delays=table, B_delays=((0, 3), (9, 1)),
                    seed=11, U=15)
        assert run_cell(**{f: getattr(cell, f) for f in (
            "controller", "G_delays", "B_delays", "seed", "U")}) == run_reference(cell)


def test_a_cell_gives_a_table_or_a_spread() -> None:
    with pytest.raises(ValueError, match=r"^G_delays: a delay table and G_spread 3 both given"):
        Cell(G_spread=3, G_delays=((1, 1),))
    with pytest.raises(ValueError, match=r"^B_delays values must increase, got 5 then 5"):
        Cell(B_delays=((5, 1), (5, 2)))


@pytest.mark.parametrize(("tables", "message"), [
    # a row that ends high beside one that starts low is no disorder: each row on its own
    ([[], [(1, 2), (9, 1)], [], [(1, 1)], [(4, 1), (7, 1), (7, 1)]],
     "B_delays (row 4) values must increase, got 7 then 7"),
    ([[(5, 1), (6, 1)], [(9, 1), (3, 1)], [(2, 1), (1, 1)]],
     "B_delays (row 1) values must increase, got 9 then 3"),
    ([[(1, 600_000_000)], [(1, 600_000_000), (2, 500_000_000)], []],
     "B_delays total weight must be at most 1,000,000,000, got 1,100,000,000"),
])
def test_a_frames_delay_tables_are_checked_row_by_row(tables: list[list[tuple[int, int]]],
                                                       message: str) -> None:
    import polars as pl

    from reconsim import simulate
    from reconsim.model.params import BY_NAME
    from reconsim.model.simulate import cells_frame

    column = pl.Series("B_delays", [[{"value": v, "weight": w} for v, w in t]
                                    for t in tables], dtype=BY_NAME["B_delays"].kind.dtype)
    frame = pl.concat([cells_frame([Cell()])] * len(tables)).with_columns(column)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        simulate(frame)
    good = frame.with_columns(pl.Series("B_delays", [[{"value": v, "weight": 1}
                                                      for v, _ in sorted(set(t))]
                                                     for t in tables],
                                        dtype=BY_NAME["B_delays"].kind.dtype))
    assert simulate(good).height == len(tables)
