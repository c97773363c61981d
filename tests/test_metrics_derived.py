"""The figures derived from a cell's metrics, each defined once in the model: wasted deletes
and reads per second (:data:`reconsim.model.metrics.DERIVED`), the trade-off's quality and
cost figures and its frontier (:mod:`reconsim.model.metrics`), and a row's side of the
boundary and the counts on each side (:mod:`reconsim.model.laws`), each against a recount by
hand: on hand-made rows, on the reference model's own numbers, and by brute force."""

from __future__ import annotations

import itertools
from typing import Any

import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from reconsim.model.laws import (
    above_its_boundary,
    delay_tables,
    delays_vary,
    drawn_from_table,
    law_columns,
    side_counts,
)
from reconsim.model.metrics import (
    COST_FIGURES,
    DERIVED,
    QUALITY_FIGURES,
    TRADEOFF,
    derived,
    frontier,
    tradeoff_figure,
)
from reconsim.model.params import Cell
from reconsim.model.reference import run_reference
from reconsim.model.simulate import cells_frame, simulate
from reconsim.model.trace import trace_cell

#: A few cells with fixed delays: some waste deletes (a short period under delay), some
#: do not; a ledger base and a death schedule vary the reads.
CELLS = [Cell(G=G, U=U, B=5, duration=300, desired=d, ledger_base=base, deaths=deaths)
         for G, U, d, base, deaths in itertools.product(
             (0, 30), (5, 40), (3, 6), (0, 20), ((), ((100, 2),)))]


def test_wasted_deletes_and_reads_per_second_over_a_simulated_frame_equal_a_recount() -> None:
    out = simulate(cells_frame(CELLS)).select(derived("wasted_deletes"),
                                              derived("reads_per_second"))
    recount = [run_reference(c) for c in CELLS]
    assert out["wasted_deletes"].to_list() == [
        m["delete_commands"] - m["deleted"] for m in recount]
    assert out["reads_per_second"].to_list() == [
        m["reads"] / (c.duration + 1) for m, c in zip(recount, CELLS, strict=True)]
    # The cells tell the figures apart: some waste deletes and some do not.
    assert {w > 0 for w in out["wasted_deletes"]} == {True, False}


def test_derived_figures_on_hand_made_rows() -> None:
    rows = pl.DataFrame({"delete_commands": [0, 7, 12], "deleted": [0, 7, 4],
                         "reads": [0, 61, 1000], "duration": [0, 60, 999]})
    got = rows.select(*(derived(name) for name in DERIVED))
    assert got.columns == list(DERIVED)
    assert got.rows() == [(0, 0.0), (0, 1.0), (8, 1.0)]


def test_a_trace_s_wasted_deletes_are_each_second_s_and_sum_to_the_cell_s() -> None:
    cell = Cell(G=30, U=5, B=5, duration=200, grace=3, deaths=((60, 2),))
    frame = trace_cell(cell)
    by_hand = [d - k for d, k in zip(frame["delete_commands"], frame["deleted"], strict=True)]
    assert frame["wasted_deletes"].to_list() == by_hand
    m = run_reference(cell)
    assert sum(by_hand) == m["delete_commands"] - m["deleted"] > 0


def test_the_trade_off_s_figures_are_named_once_in_order() -> None:
    assert QUALITY_FIGURES == ("excess_copy_seconds", "wasted_delete_commands")
    assert COST_FIGURES == ("missing_copy_seconds", "reads")
    assert tuple(TRADEOFF) == (*QUALITY_FIGURES, *COST_FIGURES)
    rows = pl.DataFrame({"excess_copy_seconds": [4], "delete_commands": [9], "deleted": [2],
                         "missing_copy_seconds": [11], "reads": [130]})
    got = rows.select(*(tradeoff_figure(f) for f in TRADEOFF)).row(0, named=True)
    assert got == {"excess_copy_seconds": 4, "wasted_delete_commands": 7,
                   "missing_copy_seconds": 11, "reads": 130}


figure_values = st.one_of(st.none(), st.integers(0, 6).map(float))


@given(st.dictionaries(st.sampled_from("abcde"),
                       st.fixed_dictionaries(dict.fromkeys(TRADEOFF, figure_values)),
                       min_size=1))
def test_the_exact_frontier_is_the_brute_force_one(figures: dict[str, dict[str, Any]]) -> None:
    # A figure some variant lacks is left out; b beats a when no worse on every figure
    # left and better on one.
    kept = [f for f in TRADEOFF if all(v[f] is not None for v in figures.values())]

    def beats(b: dict[str, Any], a: dict[str, Any]) -> bool:
        return (bool(kept) and all(b[f] <= a[f] for f in kept)
                and any(b[f] < a[f] for f in kept))

    rows = frontier(figures, ties=0.0)
    assert [t.name for t in rows] == list(figures)
    for t in rows:
        assert t.beaten_by == tuple(n for n in figures
                                    if n != t.name and beats(figures[n], figures[t.name]))
        assert t.on_frontier == (not t.beaten_by)
        assert t.ties == ()


def test_a_tie_within_one_percent_keeps_a_variant_on_the_frontier() -> None:
    close = {"a": {"excess_copy_seconds": 0, "wasted_delete_commands": 0,
                   "missing_copy_seconds": 1000, "reads": 500},
             "b": {"excess_copy_seconds": 0, "wasted_delete_commands": 0,
                   "missing_copy_seconds": 995, "reads": 400}}
    assert [t.beaten_by for t in frontier(close, ties=0.0)] == [("b",), ()]
    # Within 1 %, b's fewer missing copy-seconds are no better: b still beats a on reads.
    rows = frontier(close)
    assert [t.beaten_by for t in rows] == [("b",), ()]
    close["a"]["reads"] = 300  # now a is better on reads, b's edge on missing is a tie
    rows = frontier(close)
    assert [t.beaten_by for t in rows] == [(), ("a",)]
    assert [(x.other, x.figure) for x in rows[1].ties] == [("a", "missing_copy_seconds")]


#: Hand-made rows with the law's columns: fixed delays, a spread, a jitter and a table.
SIDES = pl.DataFrame({
    "G": [10, 10, 10, 10, 30], "B": [5, 5, 5, 5, 5], "U": [15, 20, 20, 25, 5],
    "G_spread": [0, 8, 0, 0, 0], "B_spread": [0, 0, 0, 0, 0], "U_jitter": [0, 0, 6, 0, 0],
    "G_delays": [[], [], [], [{"value": 9, "weight": 1}], []],
    "overshoot": [0, 3, 0, 2, 12],
}, schema_overrides={"G_delays": pl.List(pl.Struct({"value": pl.Int64, "weight": pl.Int64}))})


def _side_by_hand(r: dict[str, Any]) -> bool:
    """A row's side of its boundary, recounted: U >= G + B where its delays are fixed,
    max(1, U - U_jitter) >= G + G's longest extra + B + B's where they vary."""
    extra = max([d["value"] for d in r["G_delays"]], default=r["G_spread"])
    varies = bool(r["G_spread"] or r["B_spread"] or r["U_jitter"] or r["G_delays"])
    if not varies:
        return r["U"] >= r["G"] + r["B"]
    return max(1, r["U"] - r["U_jitter"]) >= r["G"] + extra + r["B"] + r["B_spread"]


def _with_laws(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with seed 001's world around it, the law's columns and the table flags."""
    cells = cells_frame([Cell()] * frame.height).drop(frame.columns, strict=False)
    full = pl.concat([cells, frame], how="horizontal")
    return full.with_columns(law_columns(full.columns)).with_columns(delay_tables())


def test_a_row_s_side_of_its_boundary_equals_a_recount() -> None:
    t = _with_laws(SIDES)
    want = [_side_by_hand(r) for r in SIDES.iter_rows(named=True)]
    assert want == [True, False, False, True, False]  # each kind of row, both sides
    for stored in (False, True):
        assert t.select(above_its_boundary(stored))[:, 0].to_list() == want
        assert t.select(delays_vary(stored))[:, 0].to_list() == [False, True, True, True,
                                                                 False]
        assert t.select(drawn_from_table("G", stored))[:, 0].to_list() == [
            False, False, False, True, False]


def test_the_side_counts_equal_a_recount() -> None:
    t = _with_laws(SIDES)
    rows = [(_side_by_hand(r), r["overshoot"] > 0) for r in SIDES.iter_rows(named=True)]
    got = t.select(side_counts(above_its_boundary())).row(0, named=True)
    assert got == {"above_cells": sum(a for a, _ in rows),
                   "above_positive": sum(a and p for a, p in rows),
                   "below_cells": sum(not a for a, _ in rows),
                   "below_positive": sum(not a and p for a, p in rows)}
    assert got == {"above_cells": 2, "above_positive": 1, "below_cells": 3,
                   "below_positive": 2}
