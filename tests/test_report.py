"""The HTML report: the law and boundary verdicts against hand-computed tables, the files
it writes, escaping, self-containment, and the results index.

Tables here are written by hand (``hand_table``) or simulated (``model_frame``) and saved
as a sweep's output directory (``write_table``): ``tests/helpers/tables.py``, which the other
test_report_* modules use too.
"""

from __future__ import annotations

import html
import io
import itertools
import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconsim import Cell
from reconsim.report import Report, ReportError, build_report, query
from reconsim.report.build import summarize
from reconsim.report.charts import Figure
from reconsim.report.load import _FRESH, Sweep, load_sweep
from reconsim.report.query import (
    WHERE_KEYS,
    bin_columns,
    bins,
    groups,
    key_groups,
    representative,
    where,
)
from reconsim.report.section import Context
from reconsim.report.sections import law, read_cost
from reconsim.report.sections.law import (
    MAX_G_BINS,
    law_facets,
    law_figure,
    law_verdict,
)
from reconsim.report.sections.law import render as render_law
from reconsim.site import publish
from reconsim.web import bundle
from tests.helpers.tables import (
    HAND_FIXED,
    HAND_ROWS,
    SCHEDULES,
    hand_table,
    model_frame,
    write_table,
)


@pytest.fixture
def hand_sweep(tmp_path: Path) -> Path:
    return write_table(tmp_path / "hand", hand_table(HAND_ROWS), name="hand")


@pytest.fixture(scope="module")
def hand_report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """The report of :func:`hand_sweep`'s table, built once for the tests that only read it
    (none writes into its folder)."""
    return build_report(write_table(tmp_path_factory.mktemp("hand") / "hand",
                                    hand_table(HAND_ROWS), name="hand"))


def test_law_verdict_on_a_hand_computed_table(hand_sweep: Path) -> None:
    law = summarize(load_sweep(hand_sweep))["law"]
    assert (law["cells"], law["holds"], law["mismatches"]) == (7, 4, 3)
    assert (law["measured_above_law"], law["measured_below_law"]) == (2, 1)
    assert (law["difference_min"], law["difference_max"]) == (-3, 6)
    assert law["law_negative"] == 1
    # Causes: G + B = 0 (G 0, U 5, B 0); U < B (G 0, U 5, B 10); elsewhere (G 40, U 60).
    causes = law["causes"]
    assert [(c["cells"], c["counterexamples"], c["holds"], c["verdict"])
            for c in causes.values()] == [(1, 1, 0, "fails"), (1, 1, 0, "fails"),
                                          (5, 1, 4, "fails")]
    elsewhere = causes["elsewhere"]
    assert elsewhere["by"] == {"figure": "measured minus law", "min": 6, "max": 6}
    assert [(e["G"], e["U"]) for e in elsewhere["examples"]] == [(40, 60)]
    assert {w["axis"]: w["values"] for w in elsewhere["where"]}["G"] == [
        {"value": 40, "cells": 1, "of": 1}]
    where = {w["axis"]: w["values"] for w in law["where"]}
    assert where["G"] == [{"value": 0, "cells": 2, "of": 3}, {"value": 40, "cells": 1, "of": 1}]
    assert where["schedule"] == [{"value": "none", "cells": 3, "of": 3}]
    assert where["B"] == [{"value": 0, "cells": 1, "of": 1}, {"value": 5, "cells": 1, "of": 5},
                          {"value": 10, "cells": 1, "of": 1}]
    [group] = law["by_schedule"]
    assert group["key"] == {"schedule": "none"}
    assert (group["cells"], group["of"]) == (3, 3)
    assert group["ranges"]["G"] == {"min": 0, "max": 40, "distinct": 2}
    assert group["ranges"]["desired"] == {"min": 3, "max": 6, "distinct": 2}
    # Largest |measured - law| first, ties by G.
    assert [(e["G"], e["U"], e["B"], e["overshoot"], e["law_overshoot"])
            for e in law["examples"]] == [(0, 5, 0, 0, -6), (40, 60, 5, 6, 0), (0, 5, 10, 0, 3)]
    assert [(s["rows"].split(",")[0], s["cells"], s["mismatches"]) for s in law["scopes"]] == [
        ("ledger", 7, 3), ("intent", 2, None), ("oracle", 1, None)]


def test_law_covers_rows_listed_at_creation_with_the_ceil_g_over_u_analogue(
        tmp_path: Path) -> None:
    # observe = created: law = desired * (ceil(G / U) - 1).
    extra: list[dict[str, Any]] = [
        # 6 * (ceil(20 / 15) - 1) = 6: holds (the ready law would say 6 * (2 - 1) = 6 too)
        {"G": 20, "U": 15, "B": 5, "observe": "created", "overshoot": 6},
        # 6 * (ceil(0 / 5) - 1) = -6 against 0: a zero delay, although G + B = 5
        {"G": 0, "U": 5, "B": 5, "observe": "created", "overshoot": 0},
        # 6 * (ceil(10 / 5) - 1) = 6 against 3, with U < B
        {"G": 10, "U": 5, "B": 10, "observe": "created", "overshoot": 3},
        # 6 * (ceil(30 / 15) - 1) = 6 against 12: the ready law's 12 would hold; this fails
        {"G": 30, "U": 15, "B": 5, "observe": "created", "overshoot": 12},
        # capped: no law
        {"G": 20, "U": 15, "B": 5, "max_per_round": 2, "overshoot": 0},
    ]
    summary = summarize(load_sweep(write_table(tmp_path / "x", hand_table(HAND_ROWS + extra))))
    law = summary["law"]
    assert (law["cells"], law["mismatches"], law["not_applicable"]) == (11, 6, 1)
    assert [(c["cells"], c["counterexamples"]) for c in law["causes"].values()] == [
        (2, 2), (2, 2), (7, 2)]
    scopes = {s["rows"]: (s["law"], s["cells"], s["mismatches"]) for s in law["scopes"]}
    assert scopes["ledger, observe = created, no cap, undamped"] == (
        "desired \u00d7 (\u2308G / U\u2309 \u2212 1)", 4, 3)
    assert scopes["ledger, observe = ready, no cap, undamped"] == (
        "desired \u00d7 (\u2308(G + B) / U\u2309 \u2212 1)", 7, 3)
    assert scopes["ledger with a cap on corrections per round (max_per_round)"] == (
        None, 1, None)


def test_the_law_says_why_each_ledger_cell_it_leaves_unchecked(tmp_path: Path) -> None:
    # Each unchecked ledger cell counted once, under its first reason: a cap, damping, a
    # switch off seed 001's world, then delays that vary from copy to copy.
    world = {"trigger": "periodic", "G_spread": 0}
    extra: list[dict[str, Any]] = [
        {"G_spread": 3, "trigger": "periodic", "overshoot": 6},
        {"G_spread": 0, "trigger": "watch", "overshoot": 0},
        {"G_spread": 3, "trigger": "watch", "overshoot": 0},  # off the world first
        {"G_spread": 0, "trigger": "periodic", "gain": 0.5, "overshoot": 0},
    ]
    table = hand_table([world | r for r in HAND_ROWS] + extra)
    summary = summarize(load_sweep(write_table(tmp_path / "x", table)))
    law = summary["law"]
    assert (law["cells"], law["not_applicable"]) == (7, 4)
    scopes = {s["rows"]: s["cells"] for s in law["scopes"] if s["law"] is None}
    assert scopes == {
        "ledger with damping (gain below 1)": 1,
        "ledger with a switch off seed 001's world (watch-triggered rounds, create faults, "
        "stale reads, a grace period or newest-first deletes)": 2,
        "ledger with delays that vary from copy to copy (spreads or delay tables) or "
        "jittered rounds": 1,
        "intent": 2, "oracle": 1}
    part = render_law(law_verdict(table, ("controller", "G", "U", "B"), {}),
                      Context.of(load_sweep(tmp_path / "x")), {})
    words = html.unescape(re.search(r'<div class="verdict.*?</div>', part, re.S).group(0))
    assert ("4 further ledger cells are not checked, for the law says nothing of them: 1 with "
            "damping (gain below 1), 2 with a switch off seed 001's world") in words
    assert "cap" not in words


def test_boundary_four_counts_on_a_hand_computed_table(hand_sweep: Path) -> None:
    # The seven ledger rows, above = U >= G + B:
    #   G 20 U 15 B 5: below, 6 > 0     G 30 U 15 B 5: below, 12 > 0
    #   G 0 U 15 B 5: above, 0          G 0 U 5 B 0: above, 0
    #   G 0 U 5 B 10: below, 0 (desired 3; U < B)
    #   G 40 U 60 B 5: above, 6 > 0     G 30 U 5 B 5: below, 0 (desired 0)
    b = summarize(load_sweep(hand_sweep))["boundary"]
    assert (b["above_zero"], b["above_positive"], b["below_zero"], b["below_positive"]) == (
        2, 1, 2, 2)
    assert (b["cells"], b["above"]["cells"], b["below_cells"]) == (7, 3, 4)
    assert b["below_zero_desired_0"] == 1
    assert b["below_zero_desired_positive_U_below_B"] == 1
    assert b["below_implies_positive"] is False
    # Both claims: above, 1 of 3 overshoots; below with desired > 0, 1 of 3 does not.
    above, below = b["above"], b["below"]
    assert (above["cells"], above["holds"], above["counterexamples"], above["verdict"]) == (
        3, 2, 1, "fails")
    assert (below["cells"], below["holds"], below["counterexamples"], below["verdict"]) == (
        3, 2, 1, "fails")
    assert [(e["G"], e["U"]) for e in above["examples"]] == [(40, 60)]
    assert [(e["G"], e["U"], e["B"]) for e in below["examples"]] == [(0, 5, 10)]
    assert {w["axis"]: w["values"] for w in above["where"]}["G"] == [
        {"value": 40, "cells": 1, "of": 1}]
    assert b["by_variant"] == []


def test_boundary_counts_every_ledger_row_and_splits_them_by_variant(tmp_path: Path) -> None:
    extra: list[dict[str, Any]] = [
        # capped, G 20 U 15 B 5: below, 0
        {"G": 20, "U": 15, "B": 5, "max_per_round": 2, "overshoot": 0},
        # created, G 20 U 15 B 5: below, 6 > 0
        {"G": 20, "U": 15, "B": 5, "observe": "created", "overshoot": 6},
    ]
    b = summarize(load_sweep(write_table(tmp_path / "v", hand_table(HAND_ROWS + extra))))[
        "boundary"]
    assert (b["above_zero"], b["above_positive"], b["below_zero"], b["below_positive"]) == (
        2, 1, 3, 3)
    by = {v["variant"]: (v["cells"], v["above_zero"], v["above_positive"], v["below_zero"],
                         v["below_positive"]) for v in b["by_variant"]}
    assert by == {
        "ledger \u00b7 observe=created \u00b7 max_per_round=unlimited": (1, 0, 0, 0, 1),
        "ledger \u00b7 observe=ready \u00b7 max_per_round=2": (1, 0, 0, 1, 0),
        "ledger \u00b7 observe=ready \u00b7 max_per_round=unlimited": (7, 2, 1, 2, 2),
    }


def test_summary_json_has_every_sections_keys_and_the_page_the_same_numbers(
        hand_report: Report) -> None:
    report = hand_report
    saved = json.loads(report.summary.read_text(encoding="utf-8"))
    assert saved == json.loads(json.dumps(report.data, default=str))
    assert (saved["law"]["cells"], saved["law"]["mismatches"]) == (7, 3)
    assert {k: saved["boundary"][k] for k in ("above_zero", "above_positive", "below_zero",
                                              "below_positive")} == {
        "above_zero": 2, "above_positive": 1, "below_zero": 2, "below_positive": 2}
    assert {"flat", "inflation", "per_second", "by_GB"} <= set(saved["read_cost"])
    assert {"variants", "by_G", "facts"} <= set(saved["controllers"])
    page = report.html.read_text(encoding="utf-8")
    assert ("The overshoot law: fails</strong> on 3 of the 7 ledger cells it applies to "
            "(42.9%), measured minus law from -3 to 6; they lie at ") in page
    assert "It holds on the other 4." in page
    assert ("The law where the listing delay is zero: fails</strong> on every one of the 1 "
            "ledger cells with no delay at all.") in page
    assert ("The law where U &lt; B: fails</strong> on every one of the 1 ledger cells with "
            "U &lt; B and a positive delay.") in page
    assert ("The law where U ≥ B and the delay is positive: fails</strong> on 1 of the 5 "
            "ledger cells with U ≥ B and a positive delay (20.0%), measured minus law 6 on "
            "every one; they lie at G = 40") in page
    assert "0: 2 of 3, 40: 1 of 1" in page    # where, G row
    # The four counts, in the 2 x 2 table and in words.
    assert ('<td>U ≥ G + B (on or above the boundary)</td><td class="num">2</td>'
            '<td class="bad num">1</td><td class="num">3</td>') in page
    assert ('<td>U &lt; G + B (below it)</td><td class="bad num">2</td><td class="num">2</td>'
            '<td class="num">4</td>') in page
    assert ("U ≥ G + B implies zero overshoot: fails</strong> on 1 of the 3 ledger cells with "
            "U ≥ G + B (33.3%); they lie at G = 40") in page
    assert ("U &lt; G + B implies overshoot: fails</strong> on 1 of the 3 ledger cells with "
            "U &lt; G + B and desired &gt; 0 (33.3%)") in page
    assert ("1 more cell below it, with desired = 0, does not overshoot: there is nothing to "
            "overshoot. In all, 2 of the 4 ledger cells with U &lt; G + B overshoot.") in page
    # Every counterexample is listed, each under its claim: the law's, the law's elsewhere
    # and the boundary's both ways.
    assert page.count("<p>Every counterexample:</p>") == 4
    assert "(a user&#39;s controller; the sweep recorded no description)" in page  # oracle


def test_page_says_plainly_when_the_law_holds_everywhere(tmp_path: Path) -> None:
    rows = [r for r in HAND_ROWS if r["controller"] != "ledger" or r.get("schedule") != "none"]
    report = build_report(write_table(tmp_path / "ok", hand_table(rows)))
    assert (report.data["law"]["cells"], report.data["law"]["mismatches"]) == (4, 0)
    page = report.html.read_text(encoding="utf-8")
    assert ("The overshoot law: holds</strong> on all 4 ledger cells it applies to. On every "
            "one, the measured overshoot equals the law's.") in page
    assert ("U &lt; G + B implies overshoot: holds</strong> on all 2 ledger cells with "
            "U &lt; G + B and desired &gt; 0") in page
    assert "1 more cell below it, with desired = 0, does not overshoot" in page
    assert "In all, 2 of the 3 ledger cells with U &lt; G + B overshoot." in page


def test_tables_without_newer_parameter_columns_use_the_defaults(tmp_path: Path) -> None:
    frame = hand_table(HAND_ROWS).drop("observe", "max_per_round")
    sweep = load_sweep(write_table(tmp_path / "old", frame))
    assert "observe" not in sweep.axes
    assert summarize(sweep)["law"]["mismatches"] == 3


def test_representative_prefers_seed_values_then_the_most_common(tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [
        {"G": 10, "desired": 3}, {"G": 20, "desired": 3}, {"G": 20, "desired": 4},
        {"G": 10, "desired": 4}, {"G": 40, "desired": 6, "schedule": "none"}]
    sweep = load_sweep(write_table(tmp_path / "r", hand_table(rows)))
    # No G = 30: G 10 and 20 tie (2 cells each), the smaller wins; then desired 3 and 4
    # tie again among G = 10; the seed's schedule is present.
    fixed = representative(sweep.table, ("U", "B"), sweep.axes, sweep.schedules)
    assert fixed == {"controller": "ledger", "G": 10, "desired": 3, "schedule": "seed",
                     "duration": 900, "ledger_base": 20, "observe": "ready", "max_per_round": None,
                     "gain": 1.0}


def test_stored_law_columns_are_checked_not_trusted(tmp_path: Path) -> None:
    frame = hand_table(HAND_ROWS).with_columns(
        law_holds=pl.when(pl.col("G") == 40).then(pl.lit(True)).otherwise(pl.col("law_holds")))
    sweep = load_sweep(write_table(tmp_path / "stale", frame))
    assert sweep.stale_law_cells == 1
    assert summarize(sweep)["law"]["mismatches"] == 3


def test_stored_law_columns_proven_equal_are_read_not_derived(tmp_path: Path) -> None:
    """Stored law columns equal to the law's on every row are what later queries read (the
    law's expressions leave the plan); one stale row brings them back for every row."""
    fresh = load_sweep(write_table(tmp_path / "fresh", hand_table(HAND_ROWS)))
    assert fresh.stale_law_cells == 0
    assert _FRESH not in fresh.table.explain()
    stale = load_sweep(write_table(tmp_path / "stale", hand_table(HAND_ROWS).with_columns(
        above_boundary=~pl.col("above_boundary"))))
    assert stale.stale_law_cells == len(HAND_ROWS)
    assert _FRESH in stale.table.explain()
    # The same figures either way, but for the count of stale cells.
    ours, theirs = summarize(fresh), summarize(stale)
    assert theirs["sweep"].pop("stale_law_cells") == len(HAND_ROWS)
    assert ours["sweep"].pop("stale_law_cells") == 0
    assert ours == theirs


def test_model_sweep_law_breaks_where_the_model_says(tmp_path: Path) -> None:
    """On a model sweep, the verdict's count equals an independent cell-by-cell recount."""
    frame = model_frame(SCHEDULES)
    law = summarize(load_sweep(write_table(tmp_path / "m", frame)))["law"]
    ledger = [r for r in frame.iter_rows(named=True) if r["controller"] == "ledger"]
    recount = sum(r["overshoot"] != r["desired"] * (-(-(r["G"] + r["B"]) // r["U"]) - 1)
                  for r in ledger)
    assert law["cells"] == len(ledger)
    assert law["mismatches"] == recount > 0


def test_report_writes_every_figure_as_svg_and_png(hand_report: Report) -> None:
    report = hand_report
    hand_sweep = report.html.parent
    names = list(report.data["figures"])
    assert names == ["answers", "law", "boundary", "read_cost", "controllers", "tradeoff",
                     "timeline_law_mismatch"]
    for name in names:
        svg = hand_sweep / "figures" / f"{name}.svg"
        png = hand_sweep / "figures" / f"{name}.png"
        assert svg.read_text(encoding="utf-8").lstrip().startswith("<svg")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in (hand_sweep / "figures").iterdir()) == sorted(
        f"{n}.{ext}" for n in names for ext in ("svg", "png"))


def test_reference_lines_are_drawn_once_per_panel(tmp_path: Path) -> None:
    """The dashed line U = G + B is one mark per panel, not one per row of the panel's data
    (3,600 lines over each other took 1.3 s to rasterise at 10^6 cells)."""
    sweep = write_table(tmp_path / "m", model_frame(G=[10], B=[5]))
    report = build_report(sweep)

    def dashed(name: str) -> int:
        svg = (sweep / "figures" / f"{name}.svg").read_text(encoding="utf-8")
        return len(re.findall(r'<line [^>]*stroke-dasharray="5,3"', svg))

    # One panel (a single ledger variant), over several U and G + B.
    assert report.data["boundary"]["by_variant"] == []
    assert report.data["boundary"]["cells"] > 1
    assert dashed("boundary") == 1
    # Several rows in the read-cost slice, which fixes G and B: one line in each panel.
    chart = report.data["read_cost"]["chart"]
    assert (chart["fixed"]["G"], chart["fixed"]["B"]) == (10, 5)
    assert len(chart["points"]) > 1
    assert dashed("read_cost") == len(read_cost.READ_PANELS)


def test_stale_figures_of_an_earlier_report_are_removed(hand_sweep: Path) -> None:
    figures = hand_sweep / "figures"
    figures.mkdir()
    for name in ("overshoot.svg", "overshoot.png", "law.svg"):
        (figures / name).write_text("old", encoding="utf-8")
    (figures / "notes.txt").write_text("mine", encoding="utf-8")
    build_report(hand_sweep)
    names = sorted(p.name for p in figures.iterdir())
    assert "overshoot.svg" not in names
    assert "overshoot.png" not in names
    assert "notes.txt" in names  # not a file the report writes: left alone
    assert (figures / "law.svg").read_text(encoding="utf-8").lstrip().startswith("<svg")


def test_strings_from_the_spec_are_escaped(tmp_path: Path) -> None:
    frame = hand_table(HAND_ROWS).with_columns(
        schedule=pl.col("schedule").replace("none", "<b>bold</b>"))
    name = '<script>alert("name")</script>'
    page = build_report(write_table(tmp_path / "x", frame, name=name)).html.read_text(
        encoding="utf-8")
    assert "<script>alert" not in page
    assert "<b>bold" not in page
    assert "&lt;script&gt;alert(&#34;name&#34;)&lt;/script&gt;" in page  # markupsafe: &#34;
    assert "&lt;b&gt;bold&lt;/b&gt;" in page
    # Inside the charts' JSON, < and > are \u-escaped, so no tag can close a script early.
    assert "\\u003cb\\u003ebold" in page


def test_page_is_self_contained(hand_report: Report) -> None:
    page = hand_report.html.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]*\ssrc\s*=", page, re.IGNORECASE)
    assert not re.search(r"<link[^>]*\shref\s*=", page, re.IGNORECASE)
    assert not re.search(r"""\ssrc\s*=\s*["']?(https?:)?//""", page, re.IGNORECASE)
    assert "vegaEmbed" in page


def test_report_is_deterministic(hand_report: Report, tmp_path: Path) -> None:
    # Built again over a copy of the first build's folder: its table and its report.
    page, summary = hand_report.html.read_bytes(), hand_report.summary.read_bytes()
    again = tmp_path / "hand"
    shutil.copytree(hand_report.html.parent, again)
    second = build_report(again)
    assert second.html.read_bytes() == page
    assert second.summary.read_bytes() == summary


def test_extra_parameter_columns_are_tolerated(tmp_path: Path) -> None:
    frame = hand_table(HAND_ROWS).with_columns(
        window=pl.when(pl.col("controller") == "oracle").then(pl.lit(30, pl.Int64)))
    report = build_report(write_table(tmp_path / "extra", frame))
    assert report.data["axes"]["window"] == {"distinct": 2, "nulls": 9, "min": 30, "max": 30,
                                             "values": [None, 30]}
    assert report.data["law"]["mismatches"] == 3


def test_parameters_of_some_controllers_only_are_fixed_per_controller(tmp_path: Path) -> None:
    """New parameter columns: a list (restart_at), a string (observe), one null where it
    does not apply (ttl); the read-cost slice keeps every controller."""
    rows = [{"controller": c, "U": U, "reads": 900 * U} for c in ("ledger", "oracle")
            for U in (5, 15)]
    frame = hand_table(rows).with_columns(
        observe=pl.lit("ready"),
        ttl=pl.when(pl.col("controller") == "oracle").then(pl.lit(300, pl.Int64)),
        restart_at=pl.when(pl.col("controller") == "oracle").then(pl.lit([100, 200]))
        .otherwise(pl.lit([], dtype=pl.List(pl.Int64))),
    )
    report = build_report(write_table(tmp_path / "new", frame))
    axes = report.data["axes"]
    assert axes["restart_at"]["values"] == ["100,200", "none"]
    assert axes["ttl"]["values"] == [None, 300]
    fixed = report.data["read_cost"]["chart"]["fixed"]
    assert fixed["observe"] == "ready"
    assert fixed["ttl"] == {"by_controller": {"ledger": None, "oracle": 300}}
    assert fixed["restart_at"] == {"by_controller": {"ledger": "none", "oracle": "100,200"}}
    assert [(p["controller"], p["U"]) for p in report.data["read_cost"]["chart"]["points"]] == [
        ("ledger", 5), ("ledger", 15), ("oracle", 5), ("oracle", 15)]
    # ttl does not apply to ledger: its null is left out of the slice's description.
    assert "ttl = 300 (oracle), restart_at = none (ledger); 100,200 (oracle)" in (
        report.html.read_text(encoding="utf-8"))


def test_ledger_cells_without_a_law_value_are_not_counted_as_holding() -> None:
    table = hand_table(HAND_ROWS).with_columns(
        law_holds=pl.when(pl.col("G") == 40).then(None).otherwise(pl.col("law_holds")))
    law = law_verdict(table, ("controller", "G", "U", "B", "desired", "schedule"), {})
    assert (law.cells, law.not_applicable, law.holds, law.mismatches) == (6, 1, 4, 2)


def test_missing_schedule_column_is_named_from_the_deaths(tmp_path: Path) -> None:
    frame = hand_table(HAND_ROWS).drop("schedule")
    sweep = load_sweep(write_table(tmp_path / "nosched", frame))
    assert sorted(sweep.schedules) == ["300:2", "none"]
    assert summarize(sweep)["read_cost"]["chart"]["fixed"]["schedule"] == "300:2"


def test_sweep_without_ledger_cells_says_the_law_is_unchecked(tmp_path: Path) -> None:
    frame = hand_table([r for r in HAND_ROWS if r["controller"] != "ledger"])
    report = build_report(write_table(tmp_path / "noledger", frame))
    assert report.data["law"]["cells"] == 0
    assert report.data["boundary"]["cells"] == 0
    # One U (15 s): no chart against U, the read cost's nor the answers'.
    assert list(report.data["figures"]) == ["controllers", "tradeoff"]
    page = report.html.read_text(encoding="utf-8")
    assert ("The overshoot law</strong>: not tested, for this sweep has no ledger cells it "
            "applies to.") in page
    assert "so the boundary is not checked" in page


def test_cell_count_mismatch_with_sweep_json_is_shown(tmp_path: Path) -> None:
    report = build_report(write_table(tmp_path / "n", hand_table(HAND_ROWS), cells=11))
    assert "sweep.json declares 11 cells but the data holds 10" in report.html.read_text(
        encoding="utf-8")


@pytest.mark.parametrize("breakage", ["no_meta", "no_data", "bad_json", "no_column",
                                      "garbage"])
def test_unreadable_sweeps_raise_report_error(tmp_path: Path, breakage: str) -> None:
    d = write_table(tmp_path / "s", hand_table(HAND_ROWS))
    if breakage == "no_meta":
        (d / "sweep.json").unlink()
    elif breakage == "no_data":
        (d / "data" / "part-00000.parquet").unlink()
    elif breakage == "bad_json":
        (d / "sweep.json").write_text("{", encoding="utf-8")
    elif breakage == "garbage":
        (d / "data" / "part-00000.parquet").write_bytes(b"not parquet at all" * 100)
        with pytest.raises(ReportError, match=r"part-00000\.parquet: unreadable: "):
            build_report(d)
    else:
        hand_table(HAND_ROWS).drop("overshoot").write_parquet(d / "data" / "part-00000.parquet")
    with pytest.raises(ReportError, match=re.escape(str(d))):
        build_report(d)


def test_bins_keep_every_value_and_stay_within_the_limit() -> None:
    values = list(range(0, 500, 5))
    mapping = bins(values, MAX_G_BINS)
    assert set(mapping) == set(values)
    assert len(set(mapping.values())) == MAX_G_BINS
    assert all(lo <= v <= hi for v, (lo, hi) in mapping.items())


def law_chart(sweep: Sweep) -> Figure:
    """The law's heatmaps of a sweep, drawn from its section's summary."""
    grid = law_verdict(sweep.table, sweep.axes, sweep.schedules).chart
    assert grid is not None
    return law_figure(grid)


def law_chart_data(spec: dict[str, Any]) -> pl.DataFrame:
    """The rows a chart's spec carries inline (CSV)."""
    assert spec["data"]["format"]["type"] == "csv"
    return pl.read_csv(io.StringIO(spec["data"]["values"]))


def test_binned_law_chart_accounts_for_every_cell(tmp_path: Path) -> None:
    frame = model_frame(controller=["ledger"], G=list(range(0, 200, 2)), U=[1, 3, 5, 15],
                        B=[5], desired=[6])
    sweep = load_sweep(write_table(tmp_path / "wide", frame))
    figure = law_chart(sweep)
    data = law_chart_data(figure.spec)
    assert data["G_label"].n_unique() == MAX_G_BINS
    assert figure.meta["binned"] == ["G"]
    assert data["cells"].sum() == frame.height
    assert data["mismatching"].sum() == summarize(sweep)["law"]["mismatches"] > 0
    assert {"cells", "mismatching", "overshoot_max"} <= set(figure.spec["data"]["format"]["parse"])


def test_law_chart_gives_desired_and_schedule_panels_while_the_budget_allows(
        tmp_path: Path) -> None:
    frame = model_frame(controller=["ledger"], G=[0, 10, 20], U=[1, 5, 15, 35], B=[0, 5],
                        desired=[1, 6], schedules=SCHEDULES)
    sweep = load_sweep(write_table(tmp_path / "p", frame))
    figure = law_chart(sweep)
    # 12 cells per panel, 2 B x 2 desired x 3 schedules: one mark per cell.
    assert (figure.meta["facets"], figure.meta["shared"]) == (["B", "desired", "schedule"], [])
    data = law_chart_data(figure.spec)
    assert data.height == frame.height == int(data["cells"].sum())
    assert set(data["cells"].to_list()) == {1}
    # Every mismatched cell is marked: the outline layer draws the squares with mismatches.
    law = summarize(sweep)["law"]
    assert int((data["mismatching"] > 0).sum()) == law["mismatches"] > 0
    layers = figure.spec["spec"]["layer"]
    assert {"filter": "(datum.mismatching > 0)"} in layers[1]["transform"]
    assert layers[1]["mark"]["filled"] is False
    # Tooltips give each cell's parameters and figures.
    titles = {t.get("title", t["field"]) for t in layers[0]["encoding"]["tooltip"]}
    assert {"G", "U", "panel", "measured overshoot", "law's overshoot", "unneeded copies",
            "stable_at (settled cells)"} <= titles


def test_law_facets_stop_at_the_mark_budget() -> None:
    t = pl.DataFrame({"B": [5] * 6, "desired": [1, 1, 3, 3, 6, 6], "schedule": ["a", "b"] * 3})
    t = t.with_columns(bin_columns(t, "B", 12)[0])
    axes = ["controller", "G", "U", "B", "desired", "schedule"]
    assert law_facets(t, axes, per_panel=10, budget=60) == (["desired", "schedule"], [])
    assert law_facets(t, axes, per_panel=10, budget=59) == (["desired"], ["schedule"])
    # Desired's 3 panels do not fit 29 marks; schedule's 2 do, on their own.
    assert law_facets(t, axes, per_panel=10, budget=29) == (["schedule"], ["desired"])
    assert law_facets(t, axes, per_panel=10, budget=19) == ([], ["desired", "schedule"])


def test_publish_links_reports_and_lists_sweeps_without_one(tmp_path: Path) -> None:
    results = tmp_path / "results"
    build_report(write_table(results / "alpha", hand_table(HAND_ROWS), name="alpha <1>"))
    write_table(results / "beta", hand_table(HAND_ROWS), name="beta")
    (results / "bench").mkdir()
    (results / "README.md").write_text("outputs\n", encoding="utf-8")
    index = publish(results)
    assert index == results / "index.html"
    page = index.read_text(encoding="utf-8")
    assert '<a href="alpha/report.html">alpha &lt;1&gt;</a>' in page
    assert "<strong>fails on 3</strong> of 7" in page
    assert "above: 2 zero, 1 positive; below: 2 zero, 2 positive" in page
    assert "beta</td><td colspan=\"6\">no report yet" in page
    assert "bench" not in page


def test_publish_flags_summaries_of_another_report_version(tmp_path: Path) -> None:
    results = tmp_path / "results"
    sweep = write_table(results / "old", hand_table(HAND_ROWS), name="old")
    build_report(sweep)
    summary = json.loads((sweep / "summary.json").read_text(encoding="utf-8"))
    (sweep / "summary.json").write_text(json.dumps(summary | {"format": 1}), encoding="utf-8")
    assert "another version of the report" in publish(results).read_text(encoding="utf-8")


def test_publish_needs_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="no such directory"):
        publish(tmp_path / "nowhere")


def test_fixtures_hold_the_cell_defaults() -> None:
    # The fixtures' fixed values are the model's defaults, so the seed slice is the default cell.
    c = Cell()
    assert {name: getattr(c, name) for name in HAND_FIXED} == HAND_FIXED
    row = hand_table([{}]).row(0, named=True)
    assert {name: row[name] for name in HAND_FIXED} == HAND_FIXED
    frame = model_frame()
    assert frame.select(pl.col("duration", "ledger_base").unique()).rows() == [(
        c.duration, c.ledger_base)]


def test_where_and_groups_by_groups_of_axes_count_as_one_axis_at_a_time(
        tmp_path: Path) -> None:
    frame = model_frame(G=[0, 10, 20, 30], U=[1, 5, 15, 35], B=[0, 5], desired=[0, 1, 6],
                        schedules=SCHEDULES)
    sweep = load_sweep(write_table(tmp_path / "w", frame))
    rest = [a for a in sweep.axes if a != "controller"]
    checked = sweep.table.filter(pl.col("controller") == "ledger",
                                 pl.col("law_holds").is_not_null())
    # The sizes only decide which axes share a group_by: as many as WHERE_KEYS (the
    # table's own sizes), two by two (400 values each); the counts must not change.
    pairs = dict.fromkeys(rest, 400)
    assert [len(g) for g in key_groups(rest, sweep.sizes)] == [WHERE_KEYS] * (
        len(rest) // WHERE_KEYS) + ([len(rest) % WHERE_KEYS] if len(rest) % WHERE_KEYS else [])
    assert [len(g) for g in key_groups(rest, pairs)] == [2] * (len(rest) // 2) + [1] * (
        len(rest) % 2)
    fails = ~pl.col("law_holds")
    one_by_one = where(checked, fails, rest)
    assert any(entry["values"] for entry in one_by_one)
    mismatched = checked.filter(fails)
    per_schedule = groups(mismatched, checked, ["schedule"], rest)
    assert per_schedule
    for sizes in (sweep.sizes, pairs):
        assert where(checked, fails, rest, sizes=sizes) == one_by_one
        assert groups(mismatched, checked, ["schedule"], rest, sizes=sizes) == per_schedule


def test_the_script_bundle_is_made_once_per_version(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[str | None] = []
    real = bundle.vl_convert.javascript_bundle

    def counted(snippet: str | None, vl_version: str | None = None) -> str:
        made.append(vl_version)
        return real(snippet, vl_version=vl_version)  # type: ignore[arg-type]

    monkeypatch.setattr(bundle.vl_convert, "javascript_bundle", counted)
    monkeypatch.setenv("RECONSIM_CACHE_DIR", str(tmp_path / "cache"))
    first = bundle.javascript_bundle()
    assert bundle.javascript_bundle() == first
    assert len(made) == 1
    assert "</script" not in first
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [
        f"vega-bundle-{bundle.VL_CONVERT_VERSION}-vl{bundle.vegalite_version()}.js"]
    # Another vl-convert: another file, made anew, the other version's removed; files of
    # other names are left alone.
    (tmp_path / "cache" / "notes.txt").write_text("mine", encoding="utf-8")
    monkeypatch.setattr(bundle, "VL_CONVERT_VERSION", "0.0.0-other")
    assert bundle.javascript_bundle() == first
    assert len(made) == 2
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [
        "notes.txt", f"vega-bundle-0.0.0-other-vl{bundle.vegalite_version()}.js"]
    # A cache that cannot be written: made every time, the same script.
    (tmp_path / "file").write_text("", encoding="utf-8")
    monkeypatch.setenv("RECONSIM_CACHE_DIR", str(tmp_path / "file" / "cache"))
    assert bundle.javascript_bundle() == first
    assert bundle.javascript_bundle() == first
    assert len(made) == 4


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.tuples(st.one_of(st.none(), st.integers(0, 3)), st.integers(0, 2),
                               st.floats(0, 1, allow_nan=False)), max_size=40),
       descending=st.tuples(st.booleans(), st.booleans(), st.booleans()),
       n=st.integers(1, 12), at_once=st.sampled_from([1, 3, 50_000]))
def test_first_rows_are_the_sorted_tables_first(rows: list[tuple[int | None, int, float]],
                                                descending: tuple[bool, bool, bool], n: int,
                                                at_once: int) -> None:
    """However many rows tie (TIES_AT_ONCE forced down to 1 and 3), the first rows equal
    the whole table's, sorted, in every ``by`` column."""
    frame = pl.DataFrame(rows, schema={"a": pl.Int64, "b": pl.Int64, "c": pl.Float64},
                         orient="row")
    by = ["a", "b", "c"]
    with pytest.MonkeyPatch.context() as m:
        m.setattr(query, "TIES_AT_ONCE", at_once)
        got = query.first_rows(frame.lazy(), by, list(descending), n)
    want = frame.sort(by, descending=list(descending), nulls_last=True).head(n)
    assert got.select(by).equals(want.select(by))


def test_law_chart_tallies_failures_by_shared_value() -> None:
    """Each square's tooltip tally (failures by a shared axis's value, most first, eight at
    most) equals a recount of the rows, on a grid too wide for the axis to get panels."""
    rng = np.random.default_rng(7)
    schedules = [f"s{i:02d}" for i in range(12)]
    frame = pl.DataFrame(list(itertools.product(range(0, 95, 5), range(1, 41), [0, 5],
                                                [1, 2, 3], schedules)),
                         schema=["G", "U", "B", "desired", "schedule"], orient="row")
    n = frame.height
    frame = frame.with_columns(
        law_holds=pl.Series(rng.random(n) > 0.6), overshoot=pl.Series(rng.integers(0, 5, n)),
        law_overshoot=pl.Series(rng.integers(0, 5, n)),
        unneeded=pl.Series(rng.integers(0, 3, n)), stable_at=pl.Series(rng.integers(1, 900, n)))
    grid = law.law_grid(frame.lazy(), ("G", "U", "B", "desired", "schedule"))
    assert grid.facets == ("desired",)
    assert grid.shared == ("schedule",)
    assert not grid.binned
    failing = frame.filter(~pl.col("law_holds"))
    seen_more = 0
    for row in grid.grid.iter_rows(named=True):
        panel = dict(part.split(" = ") for part in grid.labels[row["panel"]].split(" \u00b7 "))
        mine = failing.filter(pl.col("G") == int(row["G_label"]),
                              pl.col("U") == int(row["U_label"]),
                              pl.col("B") == int(panel["B"]),
                              pl.col("desired") == int(panel["desired"]))
        counts = sorted(mine.group_by("schedule").len().iter_rows(),
                        key=lambda vc: (-vc[1], vc[0]))
        want = ", ".join(f"{v}: {c}" for v, c in counts[:8]) or "\u2014"
        if len(counts) > 8:
            want += f" \u2026 and {len(counts) - 8} more"
            seen_more += 1
        assert row["mismatching"] == mine.height
        assert row["by_schedule"] == want
    assert seen_more > 0
