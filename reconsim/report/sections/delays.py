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
from reconsim.report.blocks import examples_table, where_sentence, where_table
from reconsim.report.charts import ALARM, WIDTH, Figure, finish, inline, names_expr
from reconsim.report.load import Sweep
from reconsim.report.query import (
    Table,
    collect,
    examples,
    in_order,
    lazy,
    where,
    where_each,
)
from reconsim.report.section import NOT_IN_JSON, Context, Section
from reconsim.web.html import TableCell, figure_html, folded, num, share, table, verdict

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
    """One reading of the law over every cell it covers: how often it is exceeded, by how
    much at most, and where (bounded)."""

    name: str
    formula: str
    cells: int
    exceeded: int
    equal: int
    below: int
    excess_max: int | None
    where: tuple[dict[str, Any], ...]
    examples: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class BoundaryRow:
    """Overshoot on each side of the worst-case boundary, for one controller."""

    controller: str
    above_cells: int
    above_positive: int
    above_max: int | None
    below_cells: int
    below_positive: int
    below_max: int | None


@dataclass(frozen=True, slots=True)
class Boundary:
    """``max(1, U - U_jitter) ≥ G + G_spread + B + B_spread`` against overshoot, on every
    ledger row whose delays vary (whatever its other parameters), and per controller."""

    formula: str
    cells: int
    above_cells: int
    above_positive: int
    above_max: int | None
    below_cells: int
    below_positive: int
    below_max: int | None
    above_cells_in_scope: int
    above_positive_in_scope: int
    where_above_positive: tuple[dict[str, Any], ...]
    examples_above_positive: tuple[dict[str, Any], ...]
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
class Claim:
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
    claim: Claim
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
                   pl.when(o > law).then(o - law).max().alias(f"{name}__excess_max")]
    row = collect(cells.select(counts)).row(0, named=True)
    figures = ["overshoot", "law_lowest", "law_mean", "law_worst", "unneeded"]
    exceeded = {name: int(row[f"{name}__exceeded"] or 0) for name in READINGS}
    # Where each exceeded reading is exceeded, among the cells it covers: one read of the
    # cells per group of axes for all of them.
    splits = {name: (pl.col(f"law_{name}").is_not_null(), o > pl.col(f"law_{name}"))
              for name in READINGS if exceeded[name]}
    located = where_each(cells, splits, rest, sizes=sizes) if splits else {}
    out = []
    for name in READINGS:
        law = pl.col(f"law_{name}")
        out.append(Reading(
            name=name, formula=READINGS[name], cells=int(row[f"{name}__cells"] or 0),
            exceeded=exceeded[name], equal=int(row[f"{name}__equal"] or 0),
            below=int(row[f"{name}__below"] or 0), excess_max=row[f"{name}__excess_max"],
            where=tuple(located[name]) if exceeded[name] else (),
            examples=tuple(examples(cells.filter(law.is_not_null(), o > law), rest, figures,
                                    o - law)) if exceeded[name] else ()))
    return tuple(out)


def _boundary(cells: pl.LazyFrame, rest: Sequence[str],
              sizes: Mapping[str, int] | None = None) -> Boundary:
    """The worst-case boundary's counts per controller; the ledger's failures located."""
    above, o = pl.col("above_boundary_worst"), pl.col("overshoot")
    by = collect(cells.group_by("controller").agg(
        *side_counts(above, o > 0), pl.when(above).then(o).max().alias("above_max"),
        pl.when(~above).then(o).max().alias("below_max")))
    rows = {r["controller"]: r for r in by.iter_rows(named=True)}
    per = tuple(BoundaryRow(controller=c, **{k: rows[c][k] for k in (
        "above_cells", "above_positive", "above_max", "below_cells", "below_positive",
        "below_max")}) for c in in_order(rows))
    ledger = rows.get("ledger")
    led = cells.filter(pl.col("controller") == "ledger")
    failing = ledger["above_positive"] if ledger else 0
    scoped = collect(led.filter(in_readings(), above).select(
        pl.len().alias("cells"), (o > 0).sum().alias("positive"))).row(0, named=True)
    figures = ["overshoot", "unneeded", "law_worst", "above_boundary_worst"]
    return Boundary(
        formula=BOUNDARY_WORST,
        cells=(ledger["above_cells"] + ledger["below_cells"]) if ledger else 0,
        above_cells=ledger["above_cells"] if ledger else 0, above_positive=failing,
        above_max=ledger["above_max"] if ledger else None,
        below_cells=ledger["below_cells"] if ledger else 0,
        below_positive=ledger["below_positive"] if ledger else 0,
        below_max=ledger["below_max"] if ledger else None,
        above_cells_in_scope=int(scoped["cells"]),
        above_positive_in_scope=int(scoped["positive"] or 0),
        where_above_positive=tuple(where(led.filter(above), o > 0, rest, sizes=sizes))
        if failing else (),
        examples_above_positive=tuple(examples(led.filter(above & (o > 0)), rest, figures, o))
        if failing else (),
        by_controller=per)


def _claim(cells: pl.LazyFrame, axes: Sequence[str]) -> Claim:
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
    return Claim(setting=setting, groups_total=groups_total, groups=groups, **whole)


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


def reading_sentence(r: Reading) -> Markup:
    """One reading's verdict: exceeded on how many cells it covers."""
    if r.exceeded == 0:
        return Markup("<strong>At the {} delays the law is never exceeded</strong>: on all {:,} "
                      "cells its overshoot is at least the measured one ({:,} equal, {:,} "
                      "below the law).").format(r.name, r.cells, r.equal, r.below)
    return Markup("<strong>At the {} delays the law is exceeded on {:,} of {:,} cells "
                  "({})</strong>, by up to {} copies ({:,} equal, {:,} below).").format(
        r.name, r.exceeded, r.cells, share(r.exceeded, r.cells),
        num(r.excess_max), r.equal, r.below)


def boundary_sentence(b: Boundary) -> tuple[str, Markup]:
    """The worst-case boundary's verdict over the ledger rows: its kind and its words."""
    if b.cells == 0:
        return "none", Markup("No ledger cell has delays that vary, so the worst-case boundary "
                              "is not checked.")
    above = b.above_cells
    if above == 0:
        head = Markup("<strong>Does U ≥ worst G + worst B give zero overshoot?</strong> Not "
                      "tested: no ledger cell with varying delays lies above it.")
        kind = "none"
    elif b.above_positive == 0:
        head = Markup("<strong>Does U ≥ worst G + worst B give zero overshoot? Yes</strong>: "
                      "none of the {:,} ledger cells above it overshoots.").format(above)
        kind = "holds"
    else:
        head = Markup("<strong>Does U ≥ worst G + worst B give zero overshoot? No</strong>: "
                      "{:,} of the {:,} ledger cells above it overshoot (by up to {}), at {}."
                      ).format(b.above_positive, above, num(b.above_max),
                               where_sentence(b.where_above_positive))
        scoped, of = b.above_positive_in_scope, b.above_cells_in_scope
        if of:
            head += Markup(" In seed 001's world but for the delays (uncapped, undamped, "
                           "periodic, no faults or stale reads, oldest first, no grace) {:,} "
                           "of {:,} such cells overshoot.").format(scoped, of)
        else:
            head += Markup(" None of these cells is in seed 001's world but for the delays: "
                           "each also has a cap, damping or another of the richer world's switches "
                           "(faults, stale reads, newest first, grace, watch, slow start), "
                           "of which the boundary does not speak.")
        kind = "fails"
    below = b.below_cells
    tail = (Markup(" Below it {:,} of {:,} ledger cells overshoot ({}), by up to {}.").format(
        b.below_positive, below, share(b.below_positive, below), num(b.below_max))
        if below else Markup(" No ledger cell lies below it."))
    return kind, head + tail


def claim_sentence(c: Claim) -> tuple[str, Markup]:
    """Seed 001's claim at its measured delays, answered."""
    s = c.setting
    if "G_delays" in s:
        setting = (f"G = {s['G']}, G_delays = {s['G_delays']} (a ledger delay table of mean "
                   f"13.53 s and worst {MEASURED_CHAIN_WORST} s), B = {s['B']}, U = {s['U']}")
    else:
        setting = (f"G = {s['G']}, G_spread = {s['G_spread']} (a ledger delay uniform in "
                   f"{s['G']} … {int(s['G']) + int(s['G_spread'])} s), B = {s['B']}, "
                   f"U = {s['U']}")
    if c.cells == 0:
        return "none", Markup("<strong>Seed 001's claim</strong> (its measured delays, 13.53 s "
                              "mean and 26.36 s worst, with B = 5 s and U = 15 s sit in the "
                              "oscillation zone) is not tested: the sweep has no ledger cell "
                              "the law covers at {}.").format(setting)
    n, k = c.cells, c.oscillating
    verb = "oscillates (overshoot > 0)" if k else "never oscillates"
    text = Markup("<strong>Seed 001's claim</strong>, at its measured delays ({}): <strong>the "
                  "ledger loop {} in {:,} of {:,} seeds ({})</strong>: overshoot median {}, p95 "
                  "(nearest rank) {}, largest {}; up to {} unneeded copies. The law says {} at the "
                  "mean delay and {} at the worst.").format(
        setting, verb, k, n, share(k, n),
        num(c.median), num(c.p95), num(c.max), num(c.unneeded_max),
        _range(c.law_mean_lo, c.law_mean_hi), _range(c.law_worst_lo, c.law_worst_hi))
    return ("holds" if k else "fails"), text


def render(d: Delays, context: Context, figures: Mapping[str, Figure]) -> Markup:
    """The readings of the law, the worst-case boundary, the seed's claim, the
    chart and the table per (G, G_spread, B, B_spread, U, U_jitter, controller)."""
    hide = context.constant
    head = Markup(
        "<p>Seed 001 measured its report chain's delay at 13.53 s on average and 26.36 s at "
        "worst: a real ledger delay is not one number. Here each copy draws its own startup "
        "(B + 0 … B_spread) and ledger delay (G + 0 … G_spread, or G plus a draw from a "
        "measured delay table, G_delays), and rounds may wobble by "
        "U_jitter. The law is read three ways on the ledger cells it covers — at the "
        "<em>lowest</em> delays, <code>{}</code>; at the <em>mean</em> delays, <code>{}</code> "
        "(Ū: the exact mean interval between periodic rounds, U unless U_jitter ≥ U); at the "
        "<em>worst</em> delays, <code>{}</code> — and the measured overshoot of each cell "
        "(one seed) is set against each. Each delay's extra over G or B is read at its lowest "
        "(G↓, B↓: 0 for a spread), its exact mean (Ḡ, B̄: half the spread) and its longest "
        "({}): a delay table's own lowest, mean and last values where one is given.</p>"
        ).format(READINGS["lowest"], READINGS["mean"], READINGS["worst"], EXTRA_WORDS)
    if d.cells == 0:
        return head + Markup("<p>This sweep has no cells whose delays vary (every G_spread, "
                             "B_spread and U_jitter is 0), so this section has nothing to "
                             "check.</p>")
    parts = [head, Markup("<p>{:,} of the sweep's {:,} cells have delays that vary, in {:,} "
                          "replicate groups (cells equal in every parameter but the seed)."
                          "</p>").format(d.cells, d.of, d.groups)]
    covered = d.readings[0].cells
    if covered:
        worst_fails = any(r.exceeded for r in d.readings if r.name == "worst")
        parts.append(verdict("fails" if worst_fails else "holds",
                             [reading_sentence(r) for r in d.readings]))
    else:
        parts.append(verdict("none", [Markup(
            "No cell with varying delays is one the law covers (an uncapped, undamped ledger "
            "controller in seed 001's world but for spreads and jitter), so its readings are "
            "not checked; the table below gives every controller's overshoot over seeds.")]))
    kind, text = boundary_sentence(d.boundary)
    parts.append(verdict(kind, [text]))
    kind, text = claim_sentence(d.claim)
    parts.append(verdict(kind, [text]))
    if "delays" in figures:
        parts.append(figure_html(figures["delays"]))
    b = d.boundary
    parts += [Markup("<h3>The worst-case boundary, per controller</h3><p><code>{}</code>; "
                     "every cell whose delays vary.</p>").format(b.formula),
              table(["controller", "above: cells", "above: overshoot > 0", "above: largest",
                     "below: cells", "below: overshoot > 0", "below: largest"],
                    [[r.controller, r.above_cells,
                      TableCell(r.above_positive, "bad" if r.above_positive
                                and r.controller == "ledger" else ""),
                      r.above_max, r.below_cells, r.below_positive, r.below_max]
                     for r in b.by_controller], missing="\u2014")]
    if b.above_positive:
        parts += [Markup("<h3>Ledger overshoot although U ≥ worst G + worst B</h3>"),
                  where_table(b.where_above_positive, "such cells",
                              among="ledger cells above the worst-case boundary"),
                  examples_table(b.examples_above_positive, hide)]
    for r in d.readings:
        if r.exceeded:
            parts += [Markup("<h3>Cells above the law at the {} delays</h3>").format(r.name),
                      where_table(r.where, "such cells", among="cells the law covers"),
                      examples_table(r.examples, hide)]
    c = d.claim
    if c.groups_total > 1:
        parts += [Markup("<h3>Seed 001's claim, per replicate group</h3>"),
                  table(["group", "seeds", "oscillating", "median", "largest", "unneeded (max)",
                         "law (mean)", "law (worst)"],
                        [[", ".join(f"{k} = {num(v)}" for k, v in g.key.items()), g.cells,
                          g.oscillating, g.median, g.max, g.unneeded_max,
                          g.law_mean, g.law_worst] for g in c.groups])]
        if c.groups_total > len(c.groups):
            parts.append(Markup("<p>… and {:,} more groups.</p>").format(
                c.groups_total - len(c.groups)))
    parts += [Markup("<h3>Overshoot over seeds, per delay setting and controller</h3>"
                     "<p>Median: the range of the replicate groups' medians; p95 (nearest "
                     "rank) and largest: the largest over the groups. Law columns: the "
                     "readings' range over the groups (— where no law applies); exceeded: "
                     "cells above that reading.</p>"),
              folded(rows_table(d.rows), len(d.rows), "rows")]
    if d.rows_total > len(d.rows):
        parts.append(Markup("<p>The first {:,} of {:,} rows (by G, G_spread, B, B_spread, "
                            "U_jitter, controller, U); summary.json lists the same.</p>")
                     .format(len(d.rows), d.rows_total))
    return Markup("").join(parts)


def rows_table(rows: Sequence[DelayRow]) -> Markup:
    """The rows of the section's table."""
    return table(["G", "G_spread", "G_delays", "B", "B_spread", "B_delays", "U", "U_jitter",
                  "controller", "cells", "groups", "median", "p95", "largest", "law lowest",
                  "law mean", "law worst", "exceed lowest", "exceed mean", "exceed worst"],
                 [[r.G, r.G_spread, r.G_delays_name or "none", r.B, r.B_spread,
                   r.B_delays_name or "none", r.U, r.U_jitter,
                   r.controller, r.cells, r.groups,
                   _range(r.median_lo, r.median_hi), r.p95, r.max,
                   _range(r.law_lowest_lo, r.law_lowest_hi),
                   _range(r.law_mean_lo, r.law_mean_hi),
                   _range(r.law_worst_lo, r.law_worst_hi),
                   *(TableCell(above, "bad" if above else "") if r.law_cells else "—"
                     for above in (r.above_lowest, r.above_mean, r.above_worst))]
                  for r in rows])


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
    if not d.cells:
        return None
    link = Markup('<a href="#delays">Delays that vary</a>')
    parts = []
    worst = next(r for r in d.readings if r.name == "worst")
    mean = next(r for r in d.readings if r.name == "mean")
    if worst.cells:
        parts.append(Markup("the law at the worst delays is exceeded on {:,} of {:,} cells, at "
                            "the mean delays on {:,}").format(worst.exceeded, worst.cells,
                                                              mean.exceeded))
    b = d.boundary
    if b.above_cells:
        text = Markup("{:,} of {:,} ledger cells at or above U = worst G + worst B "
                      "overshoot").format(b.above_positive, b.above_cells)
        if b.above_positive and b.above_cells_in_scope:
            text += Markup(" ({:,} of the {:,} in seed 001's world but for the delays)").format(
                b.above_positive_in_scope, b.above_cells_in_scope)
        elif b.above_positive:
            text += Markup(" (none of them in seed 001's world but for the delays)")
        parts.append(text)
    c = d.claim
    if c.cells:
        parts.append(Markup("at the seed's measured delays and U = 15 the ledger loop "
                            "oscillates in {:,} of {:,} seeds (median {}, max {})").format(
            c.oscillating, c.cells, num(c.median), num(c.max)))
    if not parts:
        parts.append(Markup("{:,} cells, no law to check").format(d.cells))
    return link + Markup(": ") + Markup("; ").join(parts) + "."


SECTION = Section("delays", summarize, render, charts, glance, title="Delays that vary")
