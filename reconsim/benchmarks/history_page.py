"""The history page of the controller benchmarks: per machine and controller variant, each
quality figure and the time per cell against the commit's date, every step where a quality
figure changed marked and its commit named; self-contained like the report.

``reconsim publish RESULTS`` writes it to ``RESULTS/bench/history.html`` from the runs
saved under ``RESULTS/bench/`` (:mod:`reconsim.benchmarks.history`), and links it from the index.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any, Final

import altair as alt
import polars as pl

from reconsim.benchmarks.history import History, load_history
from reconsim.io import write_atomic
from reconsim.web.charts import ALARM, inline
from reconsim.web.kit import chart, render_page

#: Where the runs are saved and the page is written, inside the results folder.
BENCH_DIR: Final = "bench"
HISTORY_PAGE: Final = "bench/history.html"
#: The time panel's name among a variant's figures.
TIME: Final = "µs per cell (fastest round)"
#: How a date shows in tooltips and tables.
DATE_FORMAT: Final = "%Y-%m-%d %H:%M UTC"


def commit_label(commit: pl.Expr, dirty: pl.Expr) -> pl.Expr:
    """A commit as the page names it: its first 10 characters, ``+`` when the run had
    uncommitted changes (the figures are then not quite that commit's)."""
    return pl.concat_str(commit.str.slice(0, 10),
                         pl.when(dirty).then(pl.lit("+")).otherwise(pl.lit("")))


def _thousands(figure: pl.Expr) -> pl.Expr:
    """An integer figure as text with thousands separated, as the tables show it."""
    return figure.map_elements(lambda v: f"{v:,}", return_dtype=pl.String)


def _points(h: History, machine: str, variant: str) -> pl.DataFrame:
    """One row per run and figure of one variant on one machine, with the time per cell as
    one more figure: where it is drawn (``y``, and ``lo``/``hi`` for the time's quartiles),
    how it reads (``shown``) and, at a step, the commit that changed it (``step_text``)."""
    keys = (pl.col("machine") == machine) & (pl.col("variant") == variant)
    steps = h.steps.filter(keys).select(
        "run", "figure", pl.lit(True).alias("step"),
        pl.format("{}: {} → {}", commit_label(pl.col("commit"), pl.col("dirty")),
                  _thousands(pl.col("before")), _thousands(pl.col("value")))
        .alias("step_text"),
        commit_label(pl.col("previous_commit"), pl.col("previous_dirty")).alias("previous"))
    quality = h.quality.filter(keys).join(steps, on=["run", "figure"], how="left").select(
        "run", "commit", "dirty", "date", "figure",
        pl.col("value").cast(pl.Float64).alias("y"),
        # no spread: a rule of no length under the point (an empty layer would leave the
        # panel's scale without an extent)
        pl.col("value").cast(pl.Float64).alias("lo"), pl.col("value").cast(pl.Float64)
        .alias("hi"),
        _thousands(pl.col("value")).alias("shown"),
        pl.col("step").fill_null(False), "step_text", "previous")
    timing = h.timing.filter(keys).select(
        "run", "commit", "dirty", "date", pl.lit(TIME).alias("figure"),
        pl.col("min_us").alias("y"), pl.col("q1_us").alias("lo"), pl.col("q3_us").alias("hi"),
        pl.format("{} fastest; median {} (quartiles {} to {}), {} rounds",
                  *(pl.col(c).round(3) for c in ("min_us", "median_us", "q1_us", "q3_us")),
                  pl.col("rounds")).alias("shown"),
        pl.lit(False).alias("step"), pl.lit(None, pl.String).alias("step_text"),
        pl.lit(None, pl.String).alias("previous"))
    return pl.concat([quality, timing]).with_columns(
        commit_label(pl.col("commit"), pl.col("dirty")).alias("commit"),
        pl.col("date").dt.strftime("%Y-%m-%dT%H:%M:%SZ").alias("date"),
        pl.col("date").dt.strftime(DATE_FORMAT).alias("when")).drop("dirty")


def variant_chart(h: History, machine: str, variant: str) -> dict[str, Any]:
    """One variant on one machine: a panel per quality figure and one for the time per
    cell, against the commit's date; each step a red rule labelled with its commit."""
    frame = _points(h, machine, variant)
    figures = tuple(dict.fromkeys(frame["figure"].to_list()))
    spec: dict[str, Any] = json.loads(_chart_layout(figures))
    # the dates' domain, given: the step layers are empty on most charts, and a domain
    # computed from them would be infinite; a single date gets a day around it
    dates = h.runs.filter(pl.col("machine") == machine)["date"]
    lo, hi = dates.min(), dates.max()
    assert isinstance(lo, datetime)
    assert isinstance(hi, datetime)
    if lo == hi:
        lo, hi = lo - timedelta(hours=12), hi + timedelta(hours=12)
    spec["spec"]["encoding"]["x"]["scale"]["domain"] = [lo.timestamp() * 1000,
                                                        hi.timestamp() * 1000]
    spec["data"] = inline(frame).to_dict()
    spec["title"]["text"] = variant
    return spec


@cache
def _chart_layout(figures: tuple[str, ...]) -> str:
    """The spec of :func:`variant_chart` without its data and title, as JSON: Altair
    checks a spec against the schema as it builds it, which costs about half a second a
    chart; every variant on every machine draws the same layout."""
    x = alt.X("date:T", title="commit date (UTC)", scale=alt.Scale(type="utc", padding=12))
    tooltip = [alt.Tooltip("figure:N"), alt.Tooltip("shown:N", title="value"),
               alt.Tooltip("commit:N"), alt.Tooltip("when:N", title="commit date"),
               alt.Tooltip("step_text:N", title="changed here"),
               alt.Tooltip("previous:N", title="run before: commit")]
    base = alt.Chart()
    y = alt.Y("y:Q", title=None, scale=alt.Scale(zero=False))
    line = base.mark_line(color="#8a96a8", strokeWidth=1).encode(y=y, order="run:Q")
    spread = base.mark_rule(color="#8a96a8").encode(
        y="lo:Q", y2="hi:Q")
    points = base.mark_point(filled=True, size=40).encode(
        y=y, tooltip=tooltip,
        color=alt.condition("datum.step", alt.value(ALARM), alt.value("#1f4e79")))
    rules = base.transform_filter("datum.step").mark_rule(
        color=ALARM, strokeDash=[3, 2]).encode(tooltip=tooltip)
    labels = base.transform_filter("datum.step").mark_text(
        color=ALARM, align="left", baseline="top", dx=3, fontSize=10).encode(
        y=alt.value(2), text="step_text:N")
    layered = alt.layer(line, spread, points, rules, labels,
                        data=alt.Data(values=[])  # type: ignore[no-untyped-call]
                        ).encode(x=x).properties(width=150, height=100)
    faceted = layered.facet(
        facet=alt.Facet("figure:N", sort=list(figures), title=None,
                        header=alt.Header(labelFontWeight="bold")),
        columns=5).resolve_scale(y="independent")
    return json.dumps(faceted.properties(title=alt.TitleParams(
        "", subtitle=["Each quality figure and the time per cell against the commit's "
                      "date. Red: a step, where a figure changed from the run before, "
                      "named by the commit that changed it."],
        anchor="start")).to_dict())


def _steps_table(h: History) -> list[dict[str, Any]]:
    """The change steps as rows for the page's table."""
    return h.steps.with_columns(
        commit_label(pl.col("commit"), pl.col("dirty")).alias("commit"),
        commit_label(pl.col("previous_commit"), pl.col("previous_dirty")).alias("previous"),
        pl.col("date").dt.strftime(DATE_FORMAT).alias("when"),
        pl.col("previous_date").dt.strftime(DATE_FORMAT).alias("previous_when"),
    ).to_dicts()


def _machine_blocks(h: History) -> list[dict[str, Any]]:
    """Per machine: its runs and one chart per variant (in the order the runs list them)."""
    blocks = []
    for i, machine in enumerate(h.machines):
        runs = h.runs.filter(pl.col("machine") == machine).sort("run").with_columns(
            commit_label(pl.col("commit"), pl.col("dirty")).alias("label"),
            pl.col("commit_time").dt.strftime(DATE_FORMAT).alias("when"),
            pl.col("run_time").dt.strftime(DATE_FORMAT).alias("ran"))
        variants = h.quality.filter(pl.col("machine") == machine)["variant"].unique(
            maintain_order=True).to_list()
        charts = [chart(f"m{i}-v{j}", f"{variant} on {machine}",
                        variant_chart(h, machine, variant))
                  for j, variant in enumerate(variants)]
        steps = h.steps.filter(pl.col("machine") == machine).height
        blocks.append({"machine": machine, "runs": runs.to_dicts(), "charts": charts,
                       "steps": steps})
    return blocks


def render_html(h: History, source: str) -> str:
    """The history of ``h`` as one self-contained page; ``source`` names where the runs
    were read."""
    return render_page("reconsim.benchmarks", "history.html",
                       h=h, source=source, steps=_steps_table(h),
                       machines=_machine_blocks(h), time_figure=TIME)


def write_history(results_dir: str | Path) -> Path | None:
    """Write ``results_dir/bench/history.html`` from the runs saved under
    ``results_dir/bench/``; return its path, or None when no run of the controller
    benchmarks is saved there (a page left from earlier is removed: its runs are gone).
    Raise :class:`~reconsim.benchmarks.compare.BenchError` naming a file that is not a
    pytest-benchmark run, before anything is written."""
    results_dir = Path(results_dir)
    history = load_history(results_dir / BENCH_DIR)
    page = results_dir / HISTORY_PAGE
    if history.empty:
        page.unlink(missing_ok=True)
        return None
    write_atomic(page, render_html(history, str(results_dir / BENCH_DIR)).encode())
    return page
