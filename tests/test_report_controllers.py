"""Controllers compared: each variant's figures against a table worked out by hand."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from reconsim.report import build_report
from reconsim.report.build import summarize
from reconsim.report.load import load_sweep
from reconsim.report.query import variant_label, variant_order, variant_params
from tests.helpers.tables import hand_table, write_table


def cell(controller: str, G: int, restart: list[int] | None, **figures: Any) -> dict[str, Any]:
    """One cell at U = 15, B = 5 (G = 0: above the boundary; G = 30: below it)."""
    return {"controller": controller, "G": G, "restart": restart, **figures}


#: Three variants: ledger; intent restarting at 340; intent never restarting.
ROWS = [
    cell("ledger", 0, None, missing_copy_seconds=30, stable_at=305),
    cell("ledger", 30, None, unneeded=16, overshoot=12, delete_commands=32, deleted=16,
         excess_copy_seconds=300, missing_copy_seconds=60, stable_at=405),
    cell("intent", 0, [], missing_copy_seconds=30, stable_at=305),
    cell("intent", 30, [], delete_commands=2, deleted=0, missing_copy_seconds=90,
         stable_at=None),
    cell("intent", 0, [340], missing_copy_seconds=30, stable_at=305),
    cell("intent", 30, [340], unneeded=6, overshoot=6, delete_commands=6, deleted=6,
         excess_copy_seconds=120, missing_copy_seconds=90, stable_at=700),
]

LEDGER, I340, INONE = "ledger", "intent \u00b7 restart_at=340", "intent \u00b7 restart_at=none"


def table() -> pl.DataFrame:
    frame = hand_table([{k: v for k, v in r.items() if k != "restart"} for r in ROWS])
    return frame.with_columns(restart_at=pl.Series([r["restart"] for r in ROWS],
                                                   dtype=pl.List(pl.Int64)))


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sweep = write_table(tmp_path_factory.mktemp("c") / "c", table())
    return summarize(load_sweep(sweep))["controllers"]  # type: ignore[no-any-return]


def test_variants_are_labelled_by_the_parameters_that_vary(tmp_path: Path) -> None:
    sweep = load_sweep(write_table(tmp_path / "v", table()))
    assert variant_params(sweep.table) == ["restart_at"]   # observe, cap, ttl are constant
    assert variant_order(sweep.table, ["restart_at"]) == [LEDGER, I340, INONE]
    labels = sweep.table.select(variant_label(["restart_at"])).collect()["variant"].to_list()
    assert labels == [LEDGER, LEDGER, INONE, INONE, I340, I340]


def test_each_variant_s_figures(compared: dict[str, Any]) -> None:
    assert compared["compared"] is True
    assert compared["varying"] == ["restart_at"]
    ledger, i340, inone = compared["variants"]
    assert [v["variant"] for v in compared["variants"]] == [LEDGER, I340, INONE]
    assert ledger["params"] == {"restart_at": None}
    assert (ledger["cells"], ledger["overshoot"]["cells_positive"], ledger["overshoot"]["mean"],
            ledger["overshoot"]["max"]) == (2, 1, 6.0, 12)
    above, below = ledger["overshoot"]["above_boundary"], ledger["overshoot"]["below_boundary"]
    assert (above["claim"], above["cells"], above["counterexamples"], above["verdict"]) == (
        "U ≥ G + B implies zero overshoot", 1, 0, "holds")
    assert (below["claim"], below["cells"], below["holds"], below["verdict"]) == (
        "U < G + B implies overshoot", 1, 1, "holds")
    assert ledger["unneeded"] == {"cells_positive": 1, "mean": 8.0, "max": 16}
    # wasted: (0 - 0) + (32 - 16)
    assert ledger["wasted_delete_commands"] == {"cells_positive": 1, "total": 16, "max": 16,
                                                "of_delete_commands": 32, "mean": 8.0}
    assert ledger["excess_copy_seconds"] == {"mean": 150.0, "max": 300}
    assert ledger["missing_copy_seconds"] == {"mean": 45.0, "max": 60}
    assert (ledger["stable_at"]["mean"], ledger["stable_at"]["max"],
            ledger["stable_at"]["unsettled"]) == (355.0, 405, 0)
    assert (i340["wasted_delete_commands"]["total"], i340["stable_at"]["mean"],
            i340["stable_at"]["max"]) == (0, 502.5, 700)
    assert i340["stable_at"]["latest"]["G"] == 30
    assert (inone["overshoot"]["cells_positive"], inone["unneeded"]["cells_positive"]) == (0, 0)
    assert inone["wasted_delete_commands"] == {"cells_positive": 1, "total": 2, "max": 2,
                                               "of_delete_commands": 2, "mean": 1.0}
    # stable_at: the settled cell only (G = 0); the other never settles.
    assert (inone["stable_at"]["mean"], inone["stable_at"]["max"],
            inone["stable_at"]["unsettled"]) == (305.0, 305, 1)


def test_which_variant_does_best_and_worst(compared: dict[str, Any]) -> None:
    facts = compared["facts"]
    assert facts["no_unneeded"] == [INONE]
    assert facts["never_overshoot"] == [INONE]
    assert facts["no_wasted_deletes"] == [I340]
    assert facts["always_settle"] == [LEDGER, I340]
    assert facts["least_missing_mean"] == {"variant": LEDGER, "value": 45.0}
    assert facts["most_missing_mean"] == {"variant": I340, "value": 60.0}  # tie: first listed
    assert facts["least_excess_mean"] == {"variant": INONE, "value": 0.0}
    assert facts["most_excess_mean"] == {"variant": LEDGER, "value": 150.0}
    assert facts["latest_stable"] == {"variant": I340, "value": 700}
    assert facts["most_unsettled"] == {"variant": INONE, "value": 1}


def test_figures_per_g_for_the_chart(compared: dict[str, Any]) -> None:
    by = {(r["variant"], r["G"]): r for r in compared["by_G"]}
    assert len(by) == 6
    assert (by[(LEDGER, 30)]["wasted_delete_commands__mean"],
            by[(LEDGER, 30)]["overshoot__max"]) == (16.0, 12)
    assert by[(INONE, 30)]["stable_at__mean"] is None
    assert by[(INONE, 30)]["unsettled"] == 1
    assert by[(I340, 0)]["missing_copy_seconds__mean"] == 30.0


def test_page_and_chart_compare_the_variants(tmp_path: Path) -> None:
    report = build_report(write_table(tmp_path / "c", table()))
    page = report.html.read_text(encoding="utf-8")
    assert ("<strong>No unneeded copy in any cell</strong>: "
            "<strong>intent · restart_at=none</strong>.") in page
    assert "ledger creates unneeded copies in 1 of 2 cells (up to 16 in one)" in page
    assert "intent · restart_at=none: 2 of its 2 delete commands, in 1 cell (up to 2" in page
    assert "missing copy-seconds from 45 (ledger) to 60 (intent · restart_at=340)" in page
    assert "the latest stable_at is second 700 (intent · restart_at=340, at G = 30" in page
    assert report.data["figures"]["controllers"]["svg"] == "figures/controllers.svg"
    data = pl.read_csv(io.StringIO(_spec(page, "controllers")["data"]["values"]))
    # 3 variants x 2 G x 6 figures x (mean, max)
    assert data.height == 72
    assert set(data["variant"].unique().to_list()) == {LEDGER, I340, INONE}


def test_a_single_controller_is_not_compared(tmp_path: Path) -> None:
    rows = [r for r in ROWS if r["controller"] == "ledger"]
    frame = hand_table([{k: v for k, v in r.items() if k != "restart"} for r in rows])
    report = build_report(write_table(tmp_path / "one", frame))
    assert report.data["controllers"]["compared"] is False
    assert "controllers" not in report.data["figures"]
    assert "holds one controller only (ledger)" in report.html.read_text(encoding="utf-8")


def _spec(page: str, name: str) -> dict[str, Any]:
    """A chart's Vega-Lite spec as the page embeds it."""
    start = page.index(f'<script type="application/json" id="spec-{name}">')
    body = page[page.index(">", start) + 1:page.index("</script>", start)]
    return json.loads(body)  # type: ignore[no-any-return]


def _tradeoffs(tmp_path: Path, frame: pl.DataFrame) -> dict[str, dict[str, Any]]:
    saved = summarize(load_sweep(write_table(tmp_path / "t", frame)))["controllers"]
    return {t["variant"]: t for t in saved["tradeoffs"]}


def test_quality_against_cost_per_variant(tmp_path: Path) -> None:
    """Means per cell worked out by hand from ROWS (wasted = delete_commands - deleted);
    every variant is on the frontier: the ledger has the least missing copy-seconds, the
    two intent variants each win one quality figure over the other."""
    frame = table().with_columns(reads=pl.Series([100, 200, 100, 100, 100, 100]))
    by = _tradeoffs(tmp_path, frame)
    figures = ("excess_copy_seconds", "wasted_delete_commands", "missing_copy_seconds",
               "reads")
    assert {v: tuple(t[f] for f in figures) for v, t in by.items()} == {
        LEDGER: (150.0, 8.0, 45.0, 150.0), I340: (60.0, 0.0, 60.0, 100.0),
        INONE: (0.0, 1.0, 60.0, 100.0)}
    assert all(t["on_frontier"] and t["beaten_by"] == [] for t in by.values())


def test_a_variant_no_better_on_any_figure_is_off_the_frontier(tmp_path: Path) -> None:
    # I340's last cell now wastes 2 of its 6 delete commands: as many per cell as INONE,
    # which has less excess and the same missing copy-seconds and reads.
    frame = table().with_columns(reads=pl.lit(100), deleted=pl.Series([0, 16, 0, 0, 0, 4]))
    by = _tradeoffs(tmp_path, frame)
    assert by[I340]["beaten_by"] == [INONE]
    assert not by[I340]["on_frontier"]
    assert by[INONE]["on_frontier"]
    assert by[LEDGER]["on_frontier"]


def test_the_page_draws_quality_against_cost(tmp_path: Path) -> None:
    sweep = write_table(tmp_path / "p", table())
    report = build_report(sweep)
    assert "tradeoff" in report.data["figures"]
    page = (sweep / "report.html").read_text(encoding="utf-8")
    assert "Quality against cost" in page
    assert "On the frontier" in page


def test_each_variant_s_boundary_claims_as_polars_counts_them(tmp_path: Path) -> None:
    sweep = load_sweep(write_table(tmp_path / "b", table()))
    frame = sweep.table.select(variant_label(["restart_at"]), "G", "U", "B",
                               "overshoot").collect()
    variants = summarize(sweep)["controllers"]["variants"]
    assert len(variants) == 3
    for v in variants:
        mine = frame.filter(pl.col("variant") == v["variant"])
        above = mine.filter(pl.col("U") >= pl.col("G") + pl.col("B"))
        below = mine.filter(pl.col("U") < pl.col("G") + pl.col("B"))
        overshoot = v["overshoot"]
        claim_above, claim_below = overshoot["above_boundary"], overshoot["below_boundary"]
        assert (claim_above["cells"], claim_above["counterexamples"]) == (
            above.height, (above["overshoot"] > 0).sum())
        assert (claim_below["cells"], claim_below["counterexamples"]) == (
            below.height, (below["overshoot"] == 0).sum())
        assert claim_below["verdict"] == ("fails" if claim_below["counterexamples"] else "holds")
