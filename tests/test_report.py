"""The HTML report: verdict figures against hand-computed tables, the files it writes,
escaping, self-containment, and the results index."""

from __future__ import annotations

import io
import itertools
import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from reconsim import METRIC_NAMES, Cell
from reconsim.laws import law_columns
from reconsim.report import ReportError, build_report, publish
from reconsim.report_charts import MAX_BINS, law_figure
from reconsim.report_data import bins, load_sweep, representative
from reconsim.report_verdicts import law_verdict, summarize
from reconsim.seed001 import cells as seed_cells
from reconsim.simulate import DEATHS_DTYPE, cells_frame, simulate

SCHEDULES: dict[str, list[dict[str, int]]] = {
    "seed": [{"at": 300, "count": 2}],
    "none": [],
    "start": [{"at": 0, "count": 2}],
}


def write_table(sweep_dir: Path, frame: pl.DataFrame, name: str = "demo",
                **meta: Any) -> Path:
    """Write ``frame`` as a sweep's output: data/part-00000.parquet and sweep.json."""
    (sweep_dir / "data").mkdir(parents=True, exist_ok=True)
    frame.write_parquet(sweep_dir / "data" / "part-00000.parquet")
    info = {"name": name, "spec": {"name": name, "grid": {"G": [0, 30]}}, "spec_hash": "f00d",
            "version": "0.1.0", "cells": frame.height, "started": "2026-01-01T00:00:00+00:00",
            "finished": "2026-01-01T00:00:02+00:00", "cells_per_second": 1234.5} | meta
    (sweep_dir / "sweep.json").write_text(json.dumps(info), encoding="utf-8")
    return sweep_dir


def model_frame(schedules: dict[str, list[dict[str, int]]] | None = None,
                **grid: list[Any]) -> pl.DataFrame:
    """Simulate a grid of cells (both controllers by default) with a schedule column."""
    schedules = schedules or {"seed": SCHEDULES["seed"], "none": SCHEDULES["none"]}
    axes: dict[str, list[Any]] = {"controller": ["ledger", "intent"], "G": [0, 10, 20, 30],
                                  "U": [5, 15, 35], "B": [0, 5], "desired": [0, 6]}
    axes |= grid
    rows = list(itertools.product(*axes.values(), list(schedules)))
    frame = pl.DataFrame(rows, schema=[*axes, "schedule"], orient="row").with_columns(
        duration=pl.lit(900, pl.Int64), ledger_base=pl.lit(20, pl.Int64),
        deaths=pl.col("schedule").replace_strict(schedules, return_dtype=DEATHS_DTYPE),
        observe=pl.lit("ready"), max_per_round=pl.lit(None, pl.Int64),
    )
    return simulate(frame).with_columns(law_columns())


def write_sweep(sweep_dir: Path, name: str = "demo") -> Path:
    """A small simulated sweep on disk (also used by the browser test)."""
    return write_table(sweep_dir, model_frame(), name=name)


def hand_table(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """A sweep table from hand-written rows: unspecified parameters get fixed values,
    unspecified metrics 0 (``rounds`` 1); the law columns are computed by reconsim.laws."""
    defaults: dict[str, Any] = {"controller": "ledger", "G": 30, "U": 15, "B": 5, "desired": 6,
                                "schedule": "seed", "duration": 900, "ledger_base": 20,
                                "observe": "ready", "max_per_round": None}
    metrics = dict.fromkeys(METRIC_NAMES, 0) | {"rounds": 1, "stable_at": None,
                                                "work_per_round": 0.0, "reads_per_round": 0.0}
    full = [defaults | metrics | r for r in rows]
    frame = pl.DataFrame(full, schema_overrides={"stable_at": pl.Int64,
                                                 "max_per_round": pl.Int64})
    frame = frame.with_columns(
        deaths=pl.col("schedule").replace_strict(SCHEDULES, return_dtype=DEATHS_DTYPE),
        work_per_round=pl.col("work_per_round").cast(pl.Float64),
        reads_per_round=pl.col("reads_per_round").cast(pl.Float64),
    )
    return frame.with_columns(law_columns())


#: Ten cells whose law and boundary figures are worked out by hand beside each row:
#: law = desired * (ceil((G + B) / U) - 1); above = U >= G + B.
HAND_ROWS: list[dict[str, Any]] = [
    # ledger: law 6 * (2 - 1) = 6, holds; below, overshoots
    {"controller": "ledger", "G": 20, "U": 15, "B": 5, "desired": 6, "overshoot": 6},
    # ledger: law 6 * (3 - 1) = 12, holds; below, overshoots
    {"controller": "ledger", "G": 30, "U": 15, "B": 5, "desired": 6, "overshoot": 12},
    # ledger: law 6 * (1 - 1) = 0, holds; above, zero
    {"controller": "ledger", "G": 0, "U": 15, "B": 5, "desired": 6, "overshoot": 0},
    # ledger: law 6 * (0 - 1) = -6, fails by +6 (negative law); above, zero
    {"controller": "ledger", "G": 0, "U": 5, "B": 0, "desired": 6, "schedule": "none",
     "overshoot": 0},
    # ledger: law 3 * (2 - 1) = 3, fails by -3; below, zero with desired > 0
    {"controller": "ledger", "G": 0, "U": 5, "B": 10, "desired": 3, "schedule": "none",
     "overshoot": 0},
    # ledger: law 6 * (1 - 1) = 0, fails by +6; above, overshoots
    {"controller": "ledger", "G": 40, "U": 60, "B": 5, "desired": 6, "schedule": "none",
     "overshoot": 6},
    # ledger: law 0, holds; below, zero with desired = 0
    {"controller": "ledger", "G": 30, "U": 5, "B": 5, "desired": 0, "overshoot": 0},
    # intent: no law; below, zero with desired > 0
    {"controller": "intent", "G": 30, "U": 15, "B": 5, "desired": 6, "overshoot": 0},
    # intent: below, overshoots
    {"controller": "intent", "G": 60, "U": 15, "B": 5, "desired": 6, "overshoot": 2},
    # a controller reconsim does not know: above, zero
    {"controller": "oracle", "G": 0, "U": 15, "B": 5, "desired": 6, "overshoot": 0},
]


@pytest.fixture
def hand_sweep(tmp_path: Path) -> Path:
    return write_table(tmp_path / "hand", hand_table(HAND_ROWS), name="hand")


def test_law_verdict_on_a_hand_computed_table(hand_sweep: Path) -> None:
    law = summarize(load_sweep(hand_sweep))["law"]
    assert (law["cells"], law["holds"], law["fails"]) == (7, 4, 3)
    assert (law["measured_above_law"], law["measured_below_law"]) == (2, 1)
    assert (law["difference_min"], law["difference_max"]) == (-3, 6)
    assert law["law_negative"] == 1
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


def test_boundary_verdict_on_a_hand_computed_table(hand_sweep: Path) -> None:
    boundary = summarize(load_sweep(hand_sweep))["boundary"]
    claim = boundary["claim"]
    assert (claim["cells"], claim["not_covered"], claim["exceptions"]) == (7, 0, 2)
    above, below = claim["above"], claim["below"]
    assert (above["cells"], above["overshoot_zero"], above["overshoot_positive"]) == (3, 2, 1)
    assert [(e["G"], e["U"]) for e in above["examples"]] == [(40, 60)]
    assert (below["cells"], below["overshoot_positive"], below["overshoot_zero"]) == (4, 2, 2)
    assert (below["zero_with_desired_0"], below["zero_with_desired_positive"]) == (1, 1)
    assert [(e["G"], e["U"], e["B"]) for e in below["examples"]] == [(0, 5, 10)]
    by = {c["controller"]: c for c in boundary["controllers"]}
    assert list(by) == ["ledger", "intent", "oracle"]
    ledger = by["ledger"]
    assert (ledger["cells"], ledger["overshoot_positive"], ledger["max_overshoot"]) == (7, 3, 12)
    assert (ledger["above"], ledger["below"]) == ({"cells": 3, "overshoot_positive": 1},
                                                  {"cells": 4, "overshoot_positive": 2})
    assert (ledger["largest"]["G"], ledger["largest"]["U"], ledger["largest"]["overshoot"]) == (
        30, 15, 12)
    intent = by["intent"]
    assert (intent["cells"], intent["overshoot_positive"]) == (2, 1)
    assert (intent["above"], intent["below"]) == ({"cells": 0, "overshoot_positive": 0},
                                                  {"cells": 2, "overshoot_positive": 1})
    assert {w["axis"]: w["values"] for w in intent["where_positive"]}["G"] == [
        {"value": 60, "cells": 1, "of": 1}]
    assert (by["oracle"]["above"]["cells"], by["oracle"]["overshoot_positive"]) == (1, 0)


def test_ledger_cells_outside_the_law_are_counted_apart(tmp_path: Path) -> None:
    # A capped ledger and a ledger listing copies at creation: the law gives the first no
    # value; the second it checks with ceil(G / U) (6 * (2 - 1) = 6), but not the boundary.
    extra: list[dict[str, Any]] = [{"G": 20, "U": 15, "B": 5, "max_per_round": 2, "overshoot": 0},
                                   {"G": 20, "U": 15, "B": 5, "observe": "created", "overshoot": 6}]
    summary = summarize(load_sweep(write_table(tmp_path / "x", hand_table(HAND_ROWS + extra))))
    law, claim = summary["law"], summary["boundary"]["claim"]
    assert (law["cells"], law["not_applicable"], law["fails"]) == (8, 1, 3)
    assert (claim["cells"], claim["not_covered"]) == (7, 2)
    assert summary["boundary"]["controllers"][0]["cells"] == 9


def test_tables_without_newer_parameter_columns_use_the_defaults(tmp_path: Path) -> None:
    frame = hand_table(HAND_ROWS).drop("observe", "max_per_round")
    sweep = load_sweep(write_table(tmp_path / "old", frame))
    assert "observe" not in sweep.axes
    assert summarize(sweep)["law"]["fails"] == 3


def test_page_says_what_the_summary_holds(hand_sweep: Path) -> None:
    report = build_report(hand_sweep)
    page = report.html.read_text(encoding="utf-8")
    saved = json.loads(report.summary.read_text(encoding="utf-8"))
    assert saved == json.loads(json.dumps(report.data, default=str))
    assert "The law fails on 3 of 7 ledger cells (42.9%)" in page
    assert "it holds on the other 4" in page
    assert "measured minus law ranges from -3 to 6" in page
    assert "On 1 of the failing cells the law's value is negative" in page
    assert "The claim fails on 2 cells" in page  # boundary: 1 above + 1 below with desired > 0
    assert "0: 2 of 3, 40: 1 of 1" in page    # where, G row
    assert "<strong>intent</strong>: overshoot is positive on 1 of 2 cells" in page
    assert "(no description in this version of reconsim)" in page  # the unknown controller


def test_read_cost_on_a_hand_computed_table(tmp_path: Path) -> None:
    # duration 899: a run of 900 seconds, so reads per second = reads / 900.
    seed = [{"U": U, "reads": r, "duration": 899} for U, r in ((5, 9000), (15, 2700), (35, 1800))]
    none = [{"U": U, "reads": r, "duration": 899, "schedule": "none"}
            for U, r in ((5, 900), (15, 1800))]
    summary = summarize(load_sweep(write_table(tmp_path / "rc", hand_table(seed + none))))
    rc = summary["read_cost"]
    assert rc["fixed"] == {"G": 30, "B": 5, "desired": 6, "schedule": "seed", "duration": 899,
                           "ledger_base": 20, "observe": "ready", "max_per_round": None}
    assert [(p["U"], p["reads_per_second"]) for p in rc["points"]] == [
        (5, 10.0), (15, 3.0), (35, 2.0)]
    [ledger] = rc["per_controller"]
    assert (ledger["U_min"], ledger["U_max"]) == (5, 35)
    assert (ledger["reads_per_second_at_U_min"], ledger["reads_per_second_at_U_max"]) == (10, 2)
    assert (rc["series"], rc["rising"]) == (2, 1)
    where = {w["axis"]: w["values"] for w in rc["where_rising"]}
    assert where["schedule"] == [{"value": "none", "cells": 1, "of": 1}]


def test_representative_prefers_seed_values_then_the_most_common(tmp_path: Path) -> None:
    rows: list[dict[str, Any]] = [
        {"G": 10, "desired": 3}, {"G": 20, "desired": 3}, {"G": 20, "desired": 4},
        {"G": 10, "desired": 4}, {"G": 40, "desired": 6, "schedule": "none"}]
    sweep = load_sweep(write_table(tmp_path / "r", hand_table(rows)))
    # No G = 30: G 10 and 20 tie (2 cells each), the smaller wins; then desired 3 and 4
    # tie again among G = 10; the seed's schedule is present.
    fixed = representative(sweep.table, ("U", "B"), sweep.axes, sweep.schedules)
    assert fixed == {"controller": "ledger", "G": 10, "desired": 3, "schedule": "seed",
                     "duration": 900, "ledger_base": 20, "observe": "ready", "max_per_round": None}


def test_stored_law_columns_are_checked_not_trusted(tmp_path: Path) -> None:
    frame = hand_table(HAND_ROWS).with_columns(
        law_holds=pl.when(pl.col("G") == 40).then(pl.lit(True)).otherwise(pl.col("law_holds")))
    sweep = load_sweep(write_table(tmp_path / "stale", frame))
    assert sweep.stale_law_cells == 1
    assert summarize(sweep)["law"]["fails"] == 3


def test_model_sweep_matches_seed_001_published_figures(tmp_path: Path) -> None:
    cells = list(dict.fromkeys(c for _, c in seed_cells()))
    frame = simulate(cells_frame(cells)).with_columns(schedule=pl.lit("seed")).with_columns(
        law_columns())
    # The same cells with a cap on corrections are other cells: never compared.
    capped = frame.with_columns(max_per_round=pl.lit(1, pl.Int64), schedule=pl.lit("capped"))
    frame = pl.concat([frame, capped.with_columns(law_columns())])
    seed = summarize(load_sweep(write_table(tmp_path / "ok", frame)))["seed001"]
    assert seed["schedules"] == ["seed"]
    assert (seed["published"], seed["found"], seed["compared"]) == (12 + 7 + 56,) * 3
    assert (seed["agree"], seed["disagree"]) == (75, 0)

    broken = frame.with_columns(overshoot=pl.when(
        (pl.col("controller") == "ledger") & (pl.col("G") == 60) & (pl.col("U") == 15)
        & (pl.col("schedule") == "seed")).then(23).otherwise(pl.col("overshoot")))
    seed = summarize(load_sweep(write_table(tmp_path / "broken", broken)))["seed001"]
    assert seed["disagree"] == 2  # the G scan's row and the table's cell
    assert {(d["experiment"], d["G"], d["U"]) for d in seed["disagreements"]} == {
        ("G scan", 60, 15), ("overshoot table", 60, 15)}
    assert all(d["figures"]["overshoot"] == {"published": 24, "measured": 23}
               for d in seed["disagreements"])


def test_model_sweep_law_breaks_where_the_model_says(tmp_path: Path) -> None:
    """On a model sweep, the verdict's count equals an independent cell-by-cell recount."""
    frame = model_frame(SCHEDULES)
    law = summarize(load_sweep(write_table(tmp_path / "m", frame)))["law"]
    ledger = [r for r in frame.iter_rows(named=True) if r["controller"] == "ledger"]
    recount = sum(r["overshoot"] != r["desired"] * (-(-(r["G"] + r["B"]) // r["U"]) - 1)
                  for r in ledger)
    assert law["cells"] == len(ledger)
    assert law["fails"] == recount


def test_report_writes_every_figure_as_svg_and_png(hand_sweep: Path) -> None:
    report = build_report(hand_sweep)
    names = list(report.data["figures"])
    assert names == ["law", "overshoot", "boundary", "read_cost"]
    for name in names:
        svg = hand_sweep / "figures" / f"{name}.svg"
        png = hand_sweep / "figures" / f"{name}.png"
        assert svg.read_text(encoding="utf-8").lstrip().startswith("<svg")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert sorted(p.name for p in (hand_sweep / "figures").iterdir()) == sorted(
        f"{n}.{ext}" for n in names for ext in ("svg", "png"))


def test_strings_from_the_spec_are_escaped(tmp_path: Path) -> None:
    frame = hand_table(HAND_ROWS).with_columns(
        schedule=pl.col("schedule").replace("none", "<b>bold</b>"))
    name = '<script>alert("name")</script>'
    page = build_report(write_table(tmp_path / "x", frame, name=name)).html.read_text(
        encoding="utf-8")
    assert "<script>alert" not in page
    assert "<b>bold" not in page
    assert "&lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;" in page
    assert "&lt;b&gt;bold&lt;/b&gt;" in page
    # Inside the charts' JSON, < and > are \u-escaped, so no tag can close a script early.
    assert "\\u003cb\\u003ebold" in page


def test_page_is_self_contained(hand_sweep: Path) -> None:
    page = build_report(hand_sweep).html.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]*\ssrc\s*=", page, re.IGNORECASE)
    assert not re.search(r"<link[^>]*\shref\s*=", page, re.IGNORECASE)
    assert not re.search(r"""\ssrc\s*=\s*["']?(https?:)?//""", page, re.IGNORECASE)
    assert "vegaEmbed" in page


def test_report_is_deterministic(hand_sweep: Path) -> None:
    first = build_report(hand_sweep)
    page, summary = first.html.read_bytes(), first.summary.read_bytes()
    second = build_report(hand_sweep)
    assert second.html.read_bytes() == page
    assert second.summary.read_bytes() == summary


def test_extra_parameter_columns_are_tolerated(tmp_path: Path) -> None:
    frame = hand_table(HAND_ROWS).with_columns(
        window=pl.when(pl.col("controller") == "oracle").then(pl.lit(30, pl.Int64)))
    report = build_report(write_table(tmp_path / "extra", frame))
    assert report.data["axes"]["window"] == {"distinct": 2, "nulls": 9, "min": 30, "max": 30,
                                             "values": [None, 30]}
    assert report.data["law"]["fails"] == 3


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
    fixed = report.data["read_cost"]["fixed"]
    assert fixed["observe"] == "ready"
    assert fixed["ttl"] == {"by_controller": {"ledger": None, "oracle": 300}}
    assert fixed["restart_at"] == {"by_controller": {"ledger": "none", "oracle": "100,200"}}
    assert [(p["controller"], p["U"]) for p in report.data["read_cost"]["points"]] == [
        ("ledger", 5), ("ledger", 15), ("oracle", 5), ("oracle", 15)]
    assert "ttl = null (ledger); 300 (oracle)" in report.html.read_text(encoding="utf-8")


def test_ledger_cells_without_a_law_value_are_not_counted_as_holding() -> None:
    table = hand_table(HAND_ROWS).with_columns(
        law_holds=pl.when(pl.col("G") == 40).then(None).otherwise(pl.col("law_holds")))
    law = law_verdict(table, ("controller", "G", "U", "B", "desired", "schedule"), {})
    assert (law["cells"], law["not_applicable"], law["holds"], law["fails"]) == (6, 1, 4, 2)


def test_missing_schedule_column_is_named_from_the_deaths(tmp_path: Path) -> None:
    frame = hand_table(HAND_ROWS).drop("schedule")
    sweep = load_sweep(write_table(tmp_path / "nosched", frame))
    assert sorted(sweep.schedules) == ["300:2", "none"]
    assert summarize(sweep)["read_cost"]["fixed"]["schedule"] == "300:2"


def test_sweep_without_ledger_cells_says_the_law_is_unchecked(tmp_path: Path) -> None:
    frame = hand_table([r for r in HAND_ROWS if r["controller"] != "ledger"])
    report = build_report(write_table(tmp_path / "noledger", frame))
    assert report.data["law"]["cells"] == 0
    assert "so the law is not checked" in report.html.read_text(encoding="utf-8")


def test_cell_count_mismatch_with_sweep_json_is_shown(tmp_path: Path) -> None:
    report = build_report(write_table(tmp_path / "n", hand_table(HAND_ROWS), cells=11))
    assert "sweep.json declares 11 cells but the data holds 10" in report.html.read_text(
        encoding="utf-8")


@pytest.mark.parametrize("breakage", ["no_meta", "no_data", "bad_json", "no_column"])
def test_unreadable_sweeps_raise_report_error(tmp_path: Path, breakage: str) -> None:
    d = write_table(tmp_path / "s", hand_table(HAND_ROWS))
    if breakage == "no_meta":
        (d / "sweep.json").unlink()
    elif breakage == "no_data":
        (d / "data" / "part-00000.parquet").unlink()
    elif breakage == "bad_json":
        (d / "sweep.json").write_text("{", encoding="utf-8")
    else:
        hand_table(HAND_ROWS).drop("overshoot").write_parquet(d / "data" / "part-00000.parquet")
    with pytest.raises(ReportError, match=re.escape(str(d))):
        build_report(d)


def test_bins_keep_every_value_and_stay_within_the_limit() -> None:
    values = list(range(0, 500, 5))
    mapping = bins(values, MAX_BINS)
    assert set(mapping) == set(values)
    assert len(set(mapping.values())) == MAX_BINS
    assert all(lo <= v <= hi for v, (lo, hi) in mapping.items())


def test_binned_law_chart_accounts_for_every_cell(tmp_path: Path) -> None:
    frame = model_frame(controller=["ledger"], G=list(range(0, 100, 2)), U=[5, 15], B=[5],
                        desired=[6])
    sweep = load_sweep(write_table(tmp_path / "wide", frame))
    spec = law_figure(sweep.table).spec
    assert spec["data"]["format"]["type"] == "csv"
    data = pl.read_csv(io.StringIO(spec["data"]["values"]))
    assert data["G_label"].n_unique() == MAX_BINS
    assert data["cells"].sum() == frame.height
    assert data["mismatching"].sum() == summarize(sweep)["law"]["fails"]
    assert {"cells", "mismatching", "share"} <= set(spec["data"]["format"]["parse"])


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
    assert "holds on 4 of 7, <strong>fails on 3</strong>" in page
    assert "ledger: 3; intent: 1; oracle: 0" in page
    assert "beta</td><td colspan=\"5\">no report yet" in page
    assert "bench" not in page


def test_publish_needs_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="no such directory"):
        publish(tmp_path / "nowhere")


def test_cells_frame_fixture_agrees_with_cell_defaults() -> None:
    # The fixtures' fixed values are the model's defaults, so the seed slice is the default cell.
    c = Cell()
    assert (c.B, c.desired, c.duration, c.ledger_base) == (5, 6, 900, 20)
