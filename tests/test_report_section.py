"""The sections' interface (reconsim/report/section.py): typed, frozen summaries, summary.json
built from them, and charts drawn from a section's summary without reading the table."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import polars as pl
import pytest

from reconsim.report import build_report
from reconsim.report.build import build_figures, summarize, summarize_sections
from reconsim.report.load import load_sweep
from reconsim.report.page import SECTIONS
from reconsim.report.section import NOT_IN_JSON, Context, to_json
from reconsim.report.sections import timelines
from tests.helpers.tables import HAND_ROWS, hand_table, model_frame, write_table


@dataclasses.dataclass(frozen=True, slots=True)
class Inner:
    values: tuple[int, ...]


@dataclasses.dataclass(frozen=True, slots=True)
class Outer:
    name: str
    inner: Inner
    by_key: dict[str, Inner]
    grid: pl.DataFrame = dataclasses.field(metadata=NOT_IN_JSON)


def test_to_json_writes_fields_in_order_and_leaves_chart_data_out() -> None:
    outer = Outer("a", Inner((1, 2)), {"k": Inner(())}, pl.DataFrame({"x": [1]}))
    data = to_json(outer)
    assert data == {"name": "a", "inner": {"values": [1, 2]}, "by_key": {"k": {"values": []}}}
    assert list(data) == ["name", "inner", "by_key"]
    json.dumps(data)


def test_every_section_summary_is_a_frozen_slotted_dataclass(tmp_path: Path) -> None:
    sweep = load_sweep(write_table(tmp_path / "h", hand_table(HAND_ROWS)))
    summaries = summarize_sections(sweep)
    assert isinstance(summaries.context, Context)
    for section, summary in zip(SECTIONS, summaries.sections, strict=True):
        assert dataclasses.is_dataclass(summary), section.name
        assert hasattr(type(summary), "__slots__"), section.name
        field = dataclasses.fields(summary)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(summary, field, None)
    # summary.json's sections are exactly to_json of the typed summaries.
    assert summaries.to_json() == {k: v for k, v in summarize(sweep).items() if k != "format"}


def test_charts_draw_from_the_summaries_without_reading_the_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Delays that vary and a switch off its default: every section has its charts.
    frame = model_frame(controller=["ledger", "intent"], G=[0, 10, 20], U=[1, 5, 15, 35],
                        G_spread=[0, 9], slow_start=[False, True])
    sweep = load_sweep(write_table(tmp_path / "m", frame))
    summaries = summarize_sections(sweep)

    def no_query(*args: object, **kwargs: object) -> pl.DataFrame:
        raise AssertionError("a chart read the table")

    def no_trace(*args: object, **kwargs: object) -> pl.DataFrame:
        raise AssertionError("a chart traced a cell again")

    monkeypatch.setattr(pl.LazyFrame, "collect", no_query)
    monkeypatch.setattr(timelines, "trace_cell", no_trace)
    figures = build_figures(summaries)
    assert [f.name for f in figures] == [
        "answers", "law", "boundary", "responses", "read_cost", "controllers", "tradeoff",
        "delays", "faults",
        "timeline_law_mismatch", "timeline_below_boundary", "timeline_above_boundary",
        "timeline_slowest_settling"]
    data = summaries.to_json()
    law = next(f for f in figures if f.name == "law")
    assert law.meta["cells"] == data["law"]["cells"]
    delays = next(f for f in figures if f.name == "delays")
    # One panel per (G, G_spread, B, B_spread, U_jitter) with a spread: G x B here.
    assert delays.meta["settings"] == delays.meta["panels"] == 3 * 2
    faults = next(f for f in figures if f.name == "faults")
    assert faults.meta["marks"] == sum(len(c["changes"]) for v in data["faults"]["values"]
                                       for c in v["controllers"] if c["twinned"])


def test_boundary_chart_counts_are_the_verdict_s(tmp_path: Path) -> None:
    frame = model_frame(G=list(range(0, 200, 2)), U=[1, 3, 5, 15], B=[0, 5], desired=[0, 6])
    report = build_report(write_table(tmp_path / "b", frame))
    summaries = summarize_sections(load_sweep(tmp_path / "b"))
    boundary = next(s for sec, s in zip(SECTIONS, summaries.sections, strict=True)
                    if sec.name == "boundary")
    assert boundary.chart is not None
    grid = boundary.chart.grid
    b = report.data["boundary"]
    for column in ("cells", "above_zero", "above_positive", "below_zero", "below_positive"):
        assert int(grid[column].sum()) == b[column]
    # Binned to a bounded number of marks: U has 4 values, G + B at most 60 bins.
    assert grid.height <= 4 * 60
    assert "GB" in boundary.chart.binned


def test_headings_are_lettered_from_the_page_s_list(tmp_path: Path) -> None:
    """A section's letter is its place among the lettered sections of SECTIONS: a new
    section is its module plus one line in the list, and the letters follow."""
    import re

    from reconsim.report.page import section_letters

    letters = section_letters()
    lettered = [s for s in SECTIONS if s.lettered]
    assert [letters[s.name] for s in lettered] == [chr(ord("a") + i)
                                                   for i in range(len(lettered))]
    report = build_report(write_table(tmp_path / "t", model_frame()))
    # A section with nothing to say (no change of desired: no law per step) is left out,
    # and the letters close up.
    summaries = summarize_sections(load_sweep(tmp_path / "t"))
    shown = {s.name for s, x in zip(SECTIONS, summaries.sections, strict=True) if s.shown(x)}
    assert "steps" not in shown
    letters = section_letters(shown)
    page = report.html.read_text(encoding="utf-8")
    headings = re.findall(r'<section id="([a-z_0-9]+)"><h2>([^<]*)</h2>', page)
    expected = [(s.anchor or s.name,
                 f"{letters[s.name]}. {s.title}" if s.lettered else s.title)
                for s in SECTIONS if s.name in shown]
    assert [h for h in headings if h[0] not in ("intro", "glance", "definitions")] == [
        (anchor, title.replace("'", "&#39;")) for anchor, title in expected]
    assert "(b) the overshoot law, (c) the boundary U ≥ G + B" in page
