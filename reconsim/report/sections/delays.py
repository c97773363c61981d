"""Delays that vary: overshoot over seeds where ledger delays, startups or the period
vary per copy or per round (``G_spread``, ``B_spread``, ``U_jitter`` > 0), against the law
read at the lowest, the mean and the worst delays; the worst-case boundary; seed 001's
own claim at its measured delays.

The law at three readings, on the rows the worst-case law covers (``law_overshoot_worst``
not null: uncapped, undamped ``ledger`` in seed 001's world but for spreads and jitter),
with D the listing delay (``G + B``; ``G`` where observe = created, B and B_spread left out):

* **lowest** — ``desired x (⌈(G + B) / (U + U_jitter)⌉ - 1)``: every delay at its shortest
  (spreads 0), every interval at its longest;
* **mean** — ``desired x (⌈(G + G_spread/2 + B + B_spread/2) / Ū⌉ - 1)`` with Ū the exact
  mean interval between periodic rounds, ``Ū = U + c(c+1) / (2(2·U_jitter + 1))``,
  ``c = max(0, U_jitter + 1 - U)`` (U itself unless the ``max(1, …)`` floor bites); the
  ceiling is taken on the exact fraction, in integers;
* **worst** — ``law_overshoot_worst`` (:mod:`reconsim.model.laws`): the longest delays,
  the shortest interval.

A cell *exceeds* a reading when its overshoot is larger. Replicates are the cells equal in
every parameter but ``seed``; each replicate group's median and p95 (nearest rank,
:func:`reconsim.model.metrics.percentile`) over its seeds are taken first, and a table row
(G, G_spread, B, B_spread, U, U_jitter, controller) shows the range of its groups' medians
and the largest p95 and maximum, so that other axes (desired, schedule, …) are never pooled
into one median.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import altair as alt
import polars as pl
from markupsafe import Markup

from reconsim.model.laws import (
    BOUNDARY_WORST,
    EXTRA_WORDS,
    LAW_WORST_FORMULA,
    READ_PREFIX,
    delays_vary,
    drawn_from_table,
    in_readings,
    law_readings,
    side_counts,
)
from reconsim.model.metrics import percentile_expr
from reconsim.model.studies.seed001 import (
    MEASURED,
    MEASURED_CHAIN_MEAN,
    MEASURED_CHAIN_WORST,
    MEASURED_U,
)
from reconsim.report.blocks import macro
from reconsim.report.charts import ALARM, WIDTH, Figure, finish, inline, names_expr
from reconsim.report.claims import Check, Claim, Spread, locate
from reconsim.report.load import Sweep
from reconsim.report.query import (
    Table,
    collect,
    in_order,
    lazy,
)
from reconsim.report.section import NOT_IN_JSON, Context, Section
from reconsim.web.html import TableCell, num

#: The parameters of a row of the section's table: the delays, the period and the controller.
KEY: Final = ("G", "G_spread", "G_delays_name", "B", "B_spread", "B_delays_name", "U",
              "U_jitter", "controller")
#: The three readings of the law, in order, with their formulas.
READINGS: Final = {
    "lowest": "desired \u00d7 (\u2308(G + G\u2193 + B + B\u2193) / (U + U_jitter)\u2309 "
              "\u2212 1)",
    "mean": "desired \u00d7 (\u2308(G + \u1e20 + B + B\u0304) / \u016a\u2309 \u2212 1)",
    "worst": LAW_WORST_FORMULA,
}
#: Most rows the summary lists (the rest are counted; the chart draws its panels' rows).
MAX_ROWS: Final = 400
#: Most (G, G_spread, B, B_spread, U_jitter) panels the chart draws.
MAX_PANELS: Final = 6
#: Most replicate groups of the seed's claim listed one by one.
MAX_CLAIM_GROUPS: Final = 12
#: Level of the per-group tail figure's percentile (nearest rank).
TAIL: Final = 0.95


def _int(name: str) -> pl.Expr:
    return pl.col(name).cast(pl.Int64)


def with_readings(table: Table) -> pl.LazyFrame:
    """The table with ``law_lowest``, ``law_mean`` and ``law_worst``."""
    return lazy(table).with_columns(law_readings(stored=True))


@dataclass(frozen=True, slots=True)
class DelayRow:
    """One (G, G_spread, B, B_spread, U, U_jitter, controller): its replicate groups'
    overshoot over seeds, the law's readings (ranges over the groups) and how many cells
    exceed each."""

    G: int
    G_spread: int
    G_delays_name: str | None
    B: int
    B_spread: int
    B_delays_name: str | None
    U: int
    U_jitter: int
    controller: str
    cells: int
    groups: int
    median_lo: float
    median_hi: float
    p95: float
    max: int
    law_cells: int
    law_lowest_lo: int | None
    law_lowest_hi: int | None
    law_mean_lo: int | None
    law_mean_hi: int | None
    law_worst_lo: int | None
    law_worst_hi: int | None
    above_lowest: int
    above_mean: int
    above_worst: int


@dataclass(frozen=True, slots=True)
class Reading:
    """One reading of the law over every cell it covers: the claim that it bounds the
    measured overshoot (its counterexamples exceed it: by how much, where, the worst), and
    of the cells where it holds, how many equal it and how many lie below it."""

    name: str
    formula: str
    claim: Claim
    equal: int
    below: int


#: The worst-case boundary's claim, in words.
ZERO_ABOVE: Final = "U ≥ worst G + worst B gives zero overshoot"


@dataclass(frozen=True, slots=True)
class BoundaryRow:
    """Overshoot on each side of the worst-case boundary, for one controller: above it,
    the boundary's claim (counted only; ``above_max``: the largest overshoot there), below
    it the cells and those overshooting (not claimed)."""

    controller: str
    above: Claim
    above_max: int | None
    below_cells: int
    below_positive: int
    below_max: int | None


@dataclass(frozen=True, slots=True)
class Boundary:
    """``max(1, U - U_jitter) ≥ G + G_spread + B + B_spread`` against overshoot, on every
    ledger row whose delays vary (whatever its other parameters), and per controller:
    ``above``, the claim that overshoot is 0 on or above it (``in_scope``: the same on the
    cells in seed 001's world but for the delays); below it overshoot is counted, not
    claimed."""

    formula: str
    cells: int
    above: Claim
    in_scope: Claim
    below_cells: int
    below_positive: int
    below_max: int | None
    by_controller: tuple[BoundaryRow, ...]


@dataclass(frozen=True, slots=True)
class ClaimGroup:
    """One replicate group at the seed's measured delays and U = 15."""

    key: dict[str, Any]
    cells: int
    oscillating: int
    median: float | None
    max: int | None
    unneeded_max: int | None
    law_mean: int | None
    law_worst: int | None


@dataclass(frozen=True, slots=True)
class SeedClaim:
    """Seed 001's claim: with its measured delays and U = 15 the ledger loop oscillates.
    Over the ledger cells the law covers with exactly :data:`MEASURED` and U = 15."""

    setting: dict[str, int | str]
    cells: int
    oscillating: int
    median: float | None
    p95: float | None
    max: int | None
    unneeded_median: float | None
    unneeded_max: int | None
    law_mean_lo: int | None
    law_mean_hi: int | None
    law_worst_lo: int | None
    law_worst_hi: int | None
    groups_total: int
    groups: tuple[ClaimGroup, ...]


@dataclass(frozen=True, slots=True)
class DelaysGrid:
    """The chart's data: one row per :data:`KEY` of the first :data:`MAX_PANELS` delay
    settings (G, G_spread, B, B_spread, U_jitter), with the range of its replicate groups'
    medians, the largest overshoot and each reading's largest value; ``settings``: how many
    delay settings the sweep holds."""

    grid: pl.DataFrame
    settings: int


@dataclass(frozen=True, slots=True)
class Delays:
    """The section's summary (``summary.json``'s ``delays``); ``chart`` is the chart's data
    (None when no delay varies)."""

    population: str
    cells: int
    of: int
    groups: int
    rows_total: int
    rows: tuple[DelayRow, ...]
    readings: tuple[Reading, ...]
    boundary: Boundary
    claim: SeedClaim
    chart: DelaysGrid | None = field(default=None, metadata=NOT_IN_JSON)


def _replicate_key(axes: Sequence[str]) -> list[str]:
    """Every parameter column the sweep varies, but the seed."""
    return [a for a in axes if a != "seed"]


def _rows(cells: pl.LazyFrame,
          axes: Sequence[str]) -> tuple[int, int, int, list[DelayRow], DelaysGrid | None]:
    """Per replicate group first (median, p95, max over its seeds), then per :data:`KEY`:
    the number of cells and of groups, the rows (at most :data:`MAX_ROWS`, in key order),
    their total and the chart's data (from the same aggregate: no other read of the table)."""
    group = list(dict.fromkeys([*KEY, *_replicate_key(axes)]))
    o = pl.col("overshoot")
    per_group = cells.group_by(group).agg(
        pl.len().alias("cells"),
        o.median().alias("median"),
        percentile_expr(o, TAIL).cast(pl.Float64).alias("p95"),
        o.max().alias("max"),
        pl.col("law_lowest").is_not_null().sum().alias("law_cells"),
        *(pl.col(c).min().alias(f"{c}_lo") for c in ("law_lowest", "law_mean", "law_worst")),
        *(pl.col(c).max().alias(f"{c}_hi") for c in ("law_lowest", "law_mean", "law_worst")),
        *((o > pl.col(f"law_{r}")).sum().alias(f"above_{r}") for r in READINGS),
    )
    per_key = per_group.group_by(KEY).agg(
        pl.col("cells").sum(), pl.len().alias("groups"),
        pl.col("median").min().alias("median_lo"), pl.col("median").max().alias("median_hi"),
        pl.col("p95").max(), pl.col("max").max(), pl.col("law_cells").sum(),
        *(pl.col(f"law_{r}_lo").min() for r in READINGS),
        *(pl.col(f"law_{r}_hi").max() for r in READINGS),
        *(pl.col(f"above_{r}").sum() for r in READINGS),
    )
    rows = collect(per_key)
    if rows.height == 0:
        return 0, 0, 0, [], None
    n, groups, total = int(rows["cells"].sum()), int(rows["groups"].sum()), rows.height
    chart = delays_grid(rows)
    order = {c: i for i, c in enumerate(in_order(rows["controller"].unique()))}
    rows = rows.with_columns(pl.col("controller").replace_strict(
        order, return_dtype=pl.Int64).alias("__rank")).sort(
        "G", "G_spread", "G_delays_name", "B", "B_spread", "B_delays_name", "U_jitter",
        "__rank", "U", nulls_last=False).head(MAX_ROWS)
    fields = DelayRow.__dataclass_fields__
    out = [DelayRow(**{k: v for k, v in r.items() if k in fields})
           for r in rows.iter_rows(named=True)]
    return n, groups, total, out, chart


#: The delay settings: a row of the chart's panels.
PANEL: Final = ("G", "G_spread", "G_delays_name", "B", "B_spread", "B_delays_name",
                 "U_jitter")


def _extra_text(delay: str) -> pl.Expr:
    """A panel's extra delay in words: ``+ 0…s`` for a spread, ``+ NAME`` for a table."""
    name = pl.col(f"{delay}_delays_name")
    return (pl.when(name.is_not_null() & (name != "none"))
            .then(pl.concat_str([pl.lit(" + "), name]))
            .otherwise(pl.concat_str([pl.lit(" + 0…"), pl.col(f"{delay}_spread").cast(
                pl.String)])))


def delays_grid(per_key: pl.DataFrame) -> DelaysGrid | None:
    """The chart's rows from the aggregate per :data:`KEY` (every row, before the summary's
    :data:`MAX_ROWS`): those of the first :data:`MAX_PANELS` delay settings, each reading
    at its largest over the groups; no read of the table. None without rows."""
    panel = list(PANEL)
    settings = per_key.select(panel).unique().sort(panel, nulls_last=False)
    shown = settings.head(MAX_PANELS)
    if shown.height == 0:
        return None
    grid = per_key.join(shown, on=panel, how="semi", nulls_equal=True).select(
        *KEY, "median_lo", "median_hi", "max",
        *(pl.col(f"law_{r}_hi").alias(f"law_{r}") for r in READINGS)).with_columns(
        pl.concat_str([pl.lit("G = "), pl.col("G").cast(pl.String), _extra_text("G"),
                       pl.lit(", B = "), pl.col("B").cast(pl.String), _extra_text("B"),
                       pl.lit(", U_jitter = "),
                       pl.col("U_jitter").cast(pl.String)]).alias("setting")).sort(
        KEY, nulls_last=False)
    return DelaysGrid(grid, settings.height)


def _readings(cells: pl.LazyFrame, rest: Sequence[str],
              sizes: Mapping[str, int] | None = None) -> tuple[Reading, ...]:
    """Each reading's counts over the cells it covers (one query for the three), where it
    is exceeded and the cells exceeding it most."""
    o = pl.col("overshoot")
    counts = []
    for name in READINGS:
        law = pl.col(f"law_{name}")  # null outside the scope: compared, null; not counted
        counts += [law.is_not_null().sum().alias(f"{name}__cells"),
                   (o > law).sum().alias(f"{name}__exceeded"),
                   (o == law).sum().alias(f"{name}__equal"),
                   (o < law).sum().alias(f"{name}__below"),
                   pl.when(o > law).then(o - law).min().alias(f"{name}__excess_min"),
                   pl.when(o > law).then(o - law).max().alias(f"{name}__excess_max")]
    row = collect(cells.select(counts)).row(0, named=True)
    figures = ["overshoot", "law_lowest", "law_mean", "law_worst", "unneeded"]
    exceeded = {name: int(row[f"{name}__exceeded"] or 0) for name in READINGS}
    # Where each exceeded reading is exceeded, among the cells it covers: one read of the
    # cells per group of axes for all of them.
    located = locate(cells, {name: Check(pl.col(f"law_{name}").is_not_null(),
                                         o > pl.col(f"law_{name}"), o - pl.col(f"law_{name}"))
                             for name in READINGS if exceeded[name]}, rest, figures, sizes)
    out = []
    for name in READINGS:
        where, listed = located.get(name, ((), ()))
        out.append(Reading(
            name=name, formula=READINGS[name],
            claim=Claim.of(f"The law at the {name} delays bounds the overshoot",
                           "cells the law covers", int(row[f"{name}__cells"] or 0),
                           exceeded[name], by=Spread("overshoot above the law",
                                                     row[f"{name}__excess_min"],
                                                     row[f"{name}__excess_max"]),
                           where=where, examples=listed),
            equal=int(row[f"{name}__equal"] or 0), below=int(row[f"{name}__below"] or 0)))
    return tuple(out)


def _boundary(cells: pl.LazyFrame, rest: Sequence[str],
              sizes: Mapping[str, int] | None = None) -> Boundary:
    """The worst-case boundary's counts per controller; the ledger's failures located."""
    above, o = pl.col("above_boundary_worst"), pl.col("overshoot")
    by = collect(cells.group_by("controller").agg(
        *side_counts(above, o > 0), pl.when(above).then(o).max().alias("above_max"),
        pl.when(above & (o > 0)).then(o).min().alias("above_positive_min"),
        pl.when(~above).then(o).max().alias("below_max")))
    rows = {r["controller"]: r for r in by.iter_rows(named=True)}
    per = tuple(BoundaryRow(
        controller=c, above=Claim.of(ZERO_ABOVE, f"{c} cells above it", r["above_cells"],
                                     r["above_positive"]),
        above_max=r["above_max"], below_cells=r["below_cells"],
        below_positive=r["below_positive"], below_max=r["below_max"])
        for c in in_order(rows) for r in [rows[c]])
    ledger = rows.get("ledger") or dict.fromkeys(
        ("above_cells", "above_positive", "below_cells", "below_positive"), 0) | dict.fromkeys(
        ("above_max", "above_positive_min", "below_max"))
    led = cells.filter(pl.col("controller") == "ledger")
    failing = ledger["above_positive"]
    scoped = collect(led.filter(in_readings(), above).select(
        pl.len().alias("cells"), (o > 0).sum().alias("positive"))).row(0, named=True)
    figures = ["overshoot", "unneeded", "law_worst", "above_boundary_worst"]
    located = locate(led, {"above": Check(above, o > 0, o)} if failing else {}, rest, figures,
                     sizes)
    where, listed = located.get("above", ((), ()))
    return Boundary(
        formula=BOUNDARY_WORST,
        cells=ledger["above_cells"] + ledger["below_cells"],
        above=Claim.of(ZERO_ABOVE, "ledger cells above it", ledger["above_cells"], failing,
                       by=Spread("overshoot", ledger["above_positive_min"],
                                 ledger["above_max"]), where=where, examples=listed),
        in_scope=Claim.of(ZERO_ABOVE, "ledger cells above it in seed 001's world but for the "
                          "delays (uncapped, undamped, periodic, no faults or stale reads, "
                          "oldest first, no grace)", int(scoped["cells"]),
                          int(scoped["positive"] or 0)),
        below_cells=ledger["below_cells"],
        below_positive=ledger["below_positive"],
        below_max=ledger["below_max"],
        by_controller=per)


def _claim(cells: pl.LazyFrame, axes: Sequence[str]) -> SeedClaim:
    """The ledger cells the law covers at the seed's measured delays and U = 15: how many
    oscillate (overshoot > 0), by how much, per replicate group. The measured delays are
    the measured chain (:data:`MEASURED_CHAIN_MEAN`, :data:`MEASURED_CHAIN_WORST`: a ledger
    delay table of that mean and worst, G = 0, B = 5 fixed, no jitter) where the sweep has
    such cells, else the uniform stand-in :data:`MEASURED` (G_spread = 27)."""
    chain = _at_chain(cells)
    if collect(chain.select(pl.len())).item():
        at, setting = chain, _chain_setting(chain)
    else:
        at = cells.filter(pl.col("controller") == "ledger", in_readings(),
                          ~drawn_from_table("G", stored=True),
                          ~drawn_from_table("B", stored=True),
                          *(_int(k) == v for k, v in MEASURED.items()), _int("U") == MEASURED_U)
        setting = {**MEASURED, "U": MEASURED_U}
    o, u = pl.col("overshoot"), pl.col("unneeded")
    whole = collect(at.select(
        pl.len().alias("cells"), (o > 0).sum().alias("oscillating"),
        o.median().alias("median"), percentile_expr(o, TAIL).cast(pl.Float64).alias("p95"),
        o.max().alias("max"), u.median().alias("unneeded_median"),
        u.max().alias("unneeded_max"),
        pl.col("law_mean").min().alias("law_mean_lo"),
        pl.col("law_mean").max().alias("law_mean_hi"),
        pl.col("law_worst").min().alias("law_worst_lo"),
        pl.col("law_worst").max().alias("law_worst_hi"))).row(0, named=True)
    key = [a for a in _replicate_key(axes) if a not in (*MEASURED, "U", "controller")]
    grouped = collect(at.group_by(key or [pl.lit(0).alias("__all")]).agg(
        pl.len().alias("cells"), (o > 0).sum().alias("oscillating"),
        o.median().alias("median"), o.max().alias("max"), u.max().alias("unneeded_max"),
        pl.col("law_mean").first(), pl.col("law_worst").first()))
    groups_total = grouped.height if whole["cells"] else 0
    listed = grouped.sort(key or "__all", nulls_last=False).head(MAX_CLAIM_GROUPS)
    groups = tuple(ClaimGroup(key={k: r[k] for k in key}, **{
        f: r[f] for f in ("cells", "oscillating", "median", "max", "unneeded_max",
                          "law_mean", "law_worst")}) for r in listed.iter_rows(named=True)
    ) if whole["cells"] else ()
    return SeedClaim(setting=setting, groups_total=groups_total, groups=groups, **whole)


def _at_chain(cells: pl.LazyFrame) -> pl.LazyFrame:
    """The ledger cells the law covers with the measured chain as their ledger delay table
    (its mean and worst exactly), G = 0, B = 5, no B spread or table, no jitter, U = 15."""
    moment, total = pl.col(f"{READ_PREFIX}G_moment"), pl.col(f"{READ_PREFIX}G_total")
    mean = MEASURED_CHAIN_MEAN
    return cells.filter(
        pl.col("controller") == "ledger", in_readings(), drawn_from_table("G", stored=True),
        ~drawn_from_table("B", stored=True),
        _int("G") == 0, _int("B") == MEASURED["B"], _int("B_spread") == 0,
        _int("U_jitter") == 0, _int("U") == MEASURED_U,
        moment * mean.denominator == total * mean.numerator,
        pl.col(f"{READ_PREFIX}G_worst") == MEASURED_CHAIN_WORST)


def _chain_setting(chain: pl.LazyFrame) -> dict[str, int | str]:
    """The claim's setting at the measured chain: the tables' names among its cells."""
    names = sorted(collect(chain.select(pl.col("G_delays_name").unique()))[
        "G_delays_name"].drop_nulls().to_list())
    return {"G": 0, "G_delays": ", ".join(names) or "unnamed", "B": MEASURED["B"],
            "B_spread": 0, "U_jitter": 0, "U": MEASURED_U}


def delays_summary(sweep: Sweep) -> Delays:
    """The section's figures and the chart's data: every row whose delays vary, aggregated."""
    cells = with_readings(sweep.table.filter(delays_vary(stored=True)))
    rest = [a for a in sweep.axes if a != "controller"]
    n, groups, total, rows, chart = _rows(cells, sweep.axes)
    tables = any(r.G_delays_name not in (None, "none") or r.B_delays_name not in (None, "none")
                 for r in rows)
    return Delays(
        population="rows with G_spread, B_spread or U_jitter above 0"
        + (", or a delay table (G_delays, B_delays)" if tables else ""),
        cells=n, of=sweep.cells, groups=groups, rows_total=total, rows=tuple(rows),
        readings=_readings(cells, rest, sweep.sizes),
        boundary=_boundary(cells, rest, sweep.sizes),
        claim=_claim(cells, sweep.axes),
        chart=chart,
    )


def summarize(sweep: Sweep) -> Delays:
    """``summary.json``'s ``delays``, and the chart's data."""
    return delays_summary(sweep)


# ---------------------------------------------------------------- words


def _range(lo: Any, hi: Any) -> str:
    return "—" if lo is None else num(lo) if lo == hi else f"{num(lo)} to {num(hi)}"


def render(d: Delays, context: Context, figures: Mapping[str, Figure]) -> Markup:
    """The readings of the law, the worst-case boundary, the seed's claim, the chart and
    the table per (G, G_spread, B, B_spread, U, U_jitter, controller)
    (``templates/delays.html``)."""
    return macro("delays.html", "body")(
        d, READINGS, EXTRA_WORDS, MEASURED_CHAIN_WORST, _range, figures.get("delays"),
        table_rows(d.rows), context.constant)


def table_rows(rows: Sequence[DelayRow]) -> list[list[Any]]:
    """The cells of the section's table, row by row (its headings: ``delays.html``)."""
    return [[r.G, r.G_spread, r.G_delays_name or "none", r.B, r.B_spread,
             r.B_delays_name or "none", r.U, r.U_jitter,
             r.controller, r.cells, r.groups,
             _range(r.median_lo, r.median_hi), r.p95, r.max,
             _range(r.law_lowest_lo, r.law_lowest_hi),
             _range(r.law_mean_lo, r.law_mean_hi),
             _range(r.law_worst_lo, r.law_worst_hi),
             *(TableCell(above, "bad" if above else "") if r.law_cells else "—"
               for above in (r.above_lowest, r.above_mean, r.above_worst))]
            for r in rows]


# ---------------------------------------------------------------- chart


#: Room for a panel's y axis, and the margin the panels leave on the page, in px.
AXIS: Final = 75
MARGIN: Final = 170


def delays_figure(data: DelaysGrid) -> Figure:
    """Overshoot against U per delay setting (rows) and controller (columns): the groups'
    median range as a band, the largest as points, the law's three readings as lines."""
    grid = data.grid
    has_law = grid["law_worst"].is_not_null().any()
    controllers = in_order(grid["controller"].unique())
    x = alt.X("U:Q", title="U: loop period (s)")
    info = ["setting:N", "controller:N", "U:Q"]
    band = alt.Chart().mark_area(opacity=0.35, color="#4c78a8").encode(
        x=x, y=alt.Y("median_lo:Q", title="overshoot (copies, symlog scale)",
                     scale=alt.Scale(type="symlog")), y2="median_hi:Q",
        tooltip=[*info, alt.Tooltip("median_lo:Q", title="median (lowest group)"),
                 alt.Tooltip("median_hi:Q", title="median (highest group)"),
                 alt.Tooltip("max:Q", title="largest")])
    mid = alt.Chart().mark_line(color="#4c78a8").encode(x=x, y="median_hi:Q")
    top = alt.Chart().mark_point(color=ALARM, size=12, filled=True).encode(
        x=x, y="max:Q", tooltip=[*info, alt.Tooltip("max:Q", title="largest")])
    layers: list[alt.Chart] = [band, mid, top]
    names = [f"law_{r}" for r in READINGS]
    if has_law:
        layers.append(alt.Chart().transform_fold(list[Any](names), as_=["reading", "law"])
                      .transform_filter("isValid(datum.law)").mark_line(
            interpolate="step-after", strokeDash=[4, 2], strokeWidth=1.2).encode(
            x=x, y="law:Q",
            color=alt.Color("reading:N", title="the law at the … delays", sort=names,
                            scale=alt.Scale(domain=names, range=["#2ca02c", "#555", "#d62728"]),
                            legend=alt.Legend(orient="bottom", direction="horizontal",
                                              labelExpr=names_expr(
                                                  {f"law_{r}": r for r in READINGS}))),
            tooltip=[*info, "reading:N", "law:Q"]))
    # Within the page's width: each setting named above its row of panels, each panel with
    # its own y axis (AXIS px), the page's margin (MARGIN px); the legend below them.
    n = len(controllers)
    chart = alt.layer(*layers, data=inline(grid)).properties(
        width=max(120, (WIDTH - MARGIN) // n - AXIS), height=220).facet(
        row=alt.Row("setting:N", title=None, header=alt.Header(
            labelOrient="top", labelAngle=0, labelAlign="left", labelAnchor="start",
            labelFontWeight="bold", labelLimit=WIDTH - MARGIN)),
        column=alt.Column("controller:N", title=None, sort=controllers),
    ).resolve_scale(y="independent")
    title = "Overshoot over seeds where delays vary, against the law's three readings"
    panels = min(data.settings, MAX_PANELS)
    more = (f" The first {MAX_PANELS} of {data.settings} delay settings are drawn."
            if data.settings > MAX_PANELS else "")
    sub = ("Per delay setting (rows) and controller (columns), against U. The band spans the "
           "replicate groups' medians over seeds; red points: the largest overshoot. Dashed "
           "steps: the law read at the lowest, mean and worst delays (ledger only)." + more)
    return Figure("delays", title, finish(chart, title, sub),
                  {"marks": grid.height * 6, "panels": panels, "settings": data.settings})


def charts(d: Delays, context: Context) -> list[Figure]:
    """The chart, when the sweep has cells whose delays vary (from the summary's data)."""
    return [delays_figure(d.chart)] if d.chart is not None else []


def glance(d: Delays) -> Markup | None:
    """The section's verdicts in one sentence (None when no delay varies)."""
    return macro("delays.html", "glance")(d) if d.cells else None


SECTION = Section("delays", summarize, render, charts, glance, title="Delays that vary")
