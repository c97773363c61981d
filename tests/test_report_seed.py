"""Seed 001's tables: the model's figures beside the published ones, mismatches marked."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from reconsim.model.laws import law_columns
from reconsim.model.simulate import cells_frame, simulate
from reconsim.model.studies.seed001 import cells as seed_cells
from reconsim.report import build_report
from reconsim.report.build import summarize
from reconsim.report.load import load_sweep
from tests.helpers.tables import write_table


@pytest.fixture(scope="module")
def seed_frame() -> pl.DataFrame:
    """Every cell seed 001 publishes, simulated, schedule ``seed``; and the same cells with a
    cap on corrections (other cells: never compared)."""
    cells = list(dict.fromkeys(c for _, c in seed_cells()))
    frame = simulate(cells_frame(cells)).with_columns(schedule=pl.lit("seed")).with_columns(
        law_columns())
    capped = frame.with_columns(max_per_round=pl.lit(1, pl.Int64), schedule=pl.lit("capped"))
    return pl.concat([frame, capped.with_columns(law_columns())])


def broken(frame: pl.DataFrame) -> pl.DataFrame:
    """The table with the ledger's overshoot at G = 60, U = 15 set to 23 (published: 24)."""
    return frame.with_columns(overshoot=pl.when(
        (pl.col("controller") == "ledger") & (pl.col("G") == 60) & (pl.col("U") == 15)
        & (pl.col("schedule") == "seed")).then(23).otherwise(pl.col("overshoot")))


def test_model_sweep_matches_seed_001_published_figures(tmp_path: Path,
                                                        seed_frame: pl.DataFrame) -> None:
    seed = summarize(load_sweep(write_table(tmp_path / "ok", seed_frame)))["seed001"]
    assert seed["schedules"] == ["seed"]
    assert (seed["published"], seed["found"], seed["compared"]) == (12 + 7 + 56,) * 3
    assert (seed["agree"], seed["disagree"]) == (75, 0)
    g_scan, u_scan, grid = seed["tables"]
    assert (g_scan["found"], u_scan["found"], grid["found"]) == (12, 7, 56)
    assert all(r["model"] == r["published"] and r["mismatched"] == [] for t in seed["tables"]
               for r in t["rows"])


def test_a_wrong_figure_is_marked_in_the_tables(tmp_path: Path,
                                                seed_frame: pl.DataFrame) -> None:
    report = build_report(write_table(tmp_path / "broken", broken(seed_frame)))
    seed = report.data["seed001"]
    assert seed["disagree"] == 2  # the G scan's row and the table's cell
    assert {(d["experiment"], d["G"], d["U"]) for d in seed["disagreements"]} == {
        ("G scan", 60, 15), ("overshoot table", 60, 15)}
    assert all(d["figures"]["overshoot"] == {"published": 24, "measured": 23}
               for d in seed["disagreements"])
    g_scan, _, grid = seed["tables"]
    [row] = [r for r in g_scan["rows"] if r["controller"] == "ledger" and r["G"] == 60]
    assert (row["published"]["overshoot"], row["model"]["overshoot"], row["mismatched"]) == (
        24, 23, ["overshoot"])
    [cell] = [r for r in grid["rows"] if (r["G"], r["U"]) == (60, 15)]
    assert cell["mismatched"] == ["overshoot"]
    page = report.html.read_text(encoding="utf-8")
    # Published and model side by side; the model's wrong figure highlighted, twice.
    assert page.count('<td class="bad num">23</td>') == 2
    assert "<h4>published</h4>" in page
    assert "<h4>model (this sweep)</h4>" in page
    assert "<strong>2 disagree</strong>" in page


def test_rows_the_sweep_lacks_are_shown_absent_and_several_values_listed(
        tmp_path: Path, seed_frame: pl.DataFrame) -> None:
    frame = seed_frame.filter(pl.col("schedule") == "seed")
    # A second schedule with seed 001's deaths, whose ledger overshoot at G 60, U 15 differs;
    # and no intent cell at G 60.
    twin = broken(frame).filter(pl.col("controller") == "ledger").with_columns(
        schedule=pl.lit("twin"))
    lacking = frame.filter(~((pl.col("controller") == "intent") & (pl.col("G") == 60)))
    frame = pl.concat([lacking, twin])
    report = build_report(write_table(tmp_path / "partial", frame))
    g_scan = report.data["seed001"]["tables"][0]
    [absent] = [r for r in g_scan["rows"] if r["controller"] == "intent" and r["G"] == 60]
    assert (absent["cells"], absent["model"]["overshoot"]) == (0, None)
    assert g_scan["found"] == 11
    [both] = [r for r in g_scan["rows"] if r["controller"] == "ledger" and r["G"] == 60]
    assert (both["cells"], both["model"]["overshoot"], both["mismatched"]) == (
        2, [23, 24], ["overshoot"])
    page = report.html.read_text(encoding="utf-8")
    assert "— (not in the sweep)" in page
    assert '<td class="bad">23 / 24</td>' in page
