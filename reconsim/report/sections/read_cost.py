"""Read cost against the loop period: what a faster loop pays, and what oscillation adds.

Every round reads the whole ledger: the service's own entries plus ``ledger_base``
entries of other services. Seed 001's trade-off: a faster loop (smaller U) reads more
often, and under delay it oscillates, which puts more entries on the ledger. The
verdict measures both, on every cell:

* ``flat``: where nothing oscillates (overshoot 0), how far reads per round move with
  U among cells that differ only in U;
* ``inflation``: each oscillating cell's reads per round against the no-oscillation
  level of its series (the median over the cells of the same series with overshoot 0);
* ``per_second``: whether reads per second ever rise as U grows, series by series;
* ``by_GB``: for each (G, B), the ledger controller's fastest loop with zero overshoot
  and what it reads, against the slowest loop in the sweep, and whether it is the first U
  on the boundary: U >= G + B, or where the slice's delays vary (spreads, delay tables,
  jitter) the worst-case boundary :data:`~reconsim.model.laws.BOUNDARY_WORST`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import altair as alt
import polars as pl
from markupsafe import Markup

from reconsim.model.laws import BOUNDARY, BOUNDARY_WORST, above_its_boundary, delays_vary
from reconsim.model.metrics import BY_NAME, DERIVED, derived, percentile_expr
from reconsim.report.blocks import fixed_text, macro
from reconsim.report.charts import WIDTH, Figure, finish, inline
from reconsim.report.load import AxisFacts, Sweep
from reconsim.report.query import (
    Deaths,
    KeyCode,
    Stats,
    Table,
    collect,
    collect_all,
    controllers,
    describe,
    height,
    in_order,
    lazy,
    representative,
    select,
    where,
)
from reconsim.report.section import NOT_IN_JSON, UNLESS_DEFAULT, Context, Section
from reconsim.web.html import TableCell, plain
from reconsim.words import listed


@dataclass(frozen=True, slots=True)
class Flat:
    """Reads per round against U where nothing oscillates (see :func:`flat_verdict`)."""

    population: str
    series: int
    cells: int
    spread: Stats
    relative: Stats
    series_within_one_entry: int
    widest: dict[str, Any] | None


@dataclass(frozen=True, slots=True)
class ControllerRatio:
    """One controller's inflation ratios."""

    controller: str
    cells: int
    ratio: Stats


@dataclass(frozen=True, slots=True)
class Inflation:
    """Oscillating cells' reads per round against their series' level (see
    :func:`inflation_verdict`)."""

    population: str
    cells: int
    with_level: int
    without_level: int
    ratio: Stats
    below_level: int
    largest: dict[str, Any] | None
    by_controller: tuple[ControllerRatio, ...]


@dataclass(frozen=True, slots=True)
class PerSecond:
    """Whether reads per second rise with U, series by series (see
    :func:`per_second_verdict`)."""

    series: int
    rising: int
    rise: Stats
    largest_rise: dict[str, Any] | None
    last_over_first: Stats
    where_rising: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class CellFigures:
    """One cell's read-cost figures."""

    reads_per_round: float
    reads_per_second: float
    missing_copy_seconds: int
    unneeded: int
    overshoot: int


@dataclass(frozen=True, slots=True)
class GBRow:
    """One (G, B): the fastest loop without overshoot, and what it and the slowest read
    (see :func:`by_gb_verdict`)."""

    G: int
    B: int
    G_plus_B: int
    series: int
    zero_from: int | None
    zero_from_min: int | None
    same_for_all: bool
    never_zero: int
    boundary_U: int | None  # noqa: N815 (summary.json's key)
    at_boundary: bool
    zero_below: int
    cheapest_U: int | None  # noqa: N815 (summary.json's key)
    U_max: int
    at_zero_from: CellFigures | None
    at_U_max: CellFigures | None  # noqa: N815 (summary.json's key)


@dataclass(frozen=True, slots=True)
class ByGB:
    """For each (G, B), the ledger controller's fastest loop with zero overshoot, on the
    slice ``fixed``; the figures are those of the series ``shown``. A series is one
    desired count and schedule, and one value of each replicate axis ``over``
    (:data:`OVER`) the sweep varies. ``boundary``: the boundary ``boundary_U`` is the first
    swept U on, U >= G + B, or the worst-case one where the slice's delays vary (in
    ``summary.json`` only then)."""

    controller: str
    fixed: dict[str, Any]
    shown: dict[str, Any]
    rows: tuple[GBRow, ...]
    over: tuple[str, ...] = ()
    boundary: str = field(default=BOUNDARY, metadata=UNLESS_DEFAULT)

    @property
    def every(self) -> str:
        """``every desired count and schedule`` (``, schedule and seed`` with seeds)."""
        return "every desired count, schedule and seed" if self.over else (
            "every desired count and schedule")


@dataclass(frozen=True, slots=True)
class ChartSlice:
    """The chart's cells: one slice, every axis but controller, U and the replicates ``over``
    (:data:`OVER`, where the sweep varies them) ``fixed``. A point per (controller, U): each
    figure's value, or with ``over`` its median over the cells there and its p95 (nearest
    rank) as ``{figure}_p95``, and ``cells``. ``varying``: whether the slice's delays vary
    (spreads, delay tables, jitter), and then ``worst_U`` the first swept U on or above its
    worst-case boundary (None where none is), for the chart's dashed line."""

    fixed: dict[str, Any]
    points: tuple[dict[str, Any], ...]
    over: tuple[str, ...] = ()
    varying: bool = field(default=False, metadata=NOT_IN_JSON)
    worst_U: int | None = field(default=None, metadata=NOT_IN_JSON)  # noqa: N815 (as boundary_U)


#: The replicate axes: the chart takes distributions over them, and the fastest loop
#: without overshoot for each (G, B) must hold for each of their values, instead of one.
OVER: Final = ("seed",)
#: Reads per second's formula (:data:`~reconsim.model.metrics.DERIVED`), as the page shows it.
PER_SECOND: Final = DERIVED["reads_per_second"].formula


def replicates(axes: Sequence[str], constants: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The replicate axes (:data:`OVER`) the sweep varies."""
    return tuple(a for a in OVER if a in axes and a not in (constants or {}))


@dataclass(frozen=True, slots=True)
class ReadCostSummary:
    """Every read-cost figure (``summary.json``'s ``read_cost``; see the module's
    docstring)."""

    definitions: dict[str, str]
    flat: Flat
    inflation: Inflation
    per_second: PerSecond
    by_GB: ByGB  # noqa: N815 (summary.json's key)
    chart: ChartSlice


def read_cost_verdict(table: Table, axes: Sequence[str], schedules: Mapping[str, Deaths],
                      cells: int | None = None,
                      facts: Mapping[str, AxisFacts] | None = None) -> ReadCostSummary:
    """Reads per round and per second against U, on every cell (``cells`` of them, counted
    when not given); see the module's docstring. ``facts``: each axis's values, where known
    (the series code leaves out, and the representative slices fix without a query, the
    axes with one value)."""
    sizes = None if facts is None else {a: len(f.values) for a, f in facts.items()}
    constants = None if facts is None else {a: f.values[0] for a, f in facts.items()
                                            if len(f.values) == 1}
    t = lazy(table).with_columns(derived("reads_per_second"))
    series = [a for a in axes if a != "U"]
    # The series' code, for the inflation's levels and the per-second trend alike.
    code = KeyCode.of(t, series, sizes)
    figures = series_figures(t, code, height(t) if cells is None else cells)
    return ReadCostSummary(
        definitions={
            "reads_per_round": BY_NAME["reads_per_round"].help,
            "reads_per_second": PER_SECOND,
            "series": "cells that differ only in U",
            "no_oscillation_level": "median reads_per_round over the cells of the same series "
                                    "with overshoot 0",
        },
        flat=flat_verdict(figures, series, code),
        inflation=inflation_verdict(figures, series, code),
        per_second=per_second_verdict(figures, series, code),
        by_GB=by_gb_verdict(t, axes, schedules, constants),
        chart=chart_slice(t, axes, schedules, constants),
    )


def _row(frame: pl.DataFrame, columns: Sequence[str]) -> dict[str, Any] | None:
    """The first row of ``frame`` as a dict of ``columns``, floats to four places."""
    if frame.height == 0:
        return None
    row = frame.select(columns).row(0, named=True)
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}


def flat_verdict(figures: SeriesFigures, series: Sequence[str], code: KeyCode) -> Flat:
    """Among cells with overshoot 0, per series of two or more: the spread of reads per
    round (highest minus lowest) in entries, and relative to the lowest."""
    runs = figures.flat.filter(pl.col("cells") >= 2).with_columns(
        (pl.col("highest") - pl.col("lowest")).alias("spread"),
    ).with_columns(
        pl.when(pl.col("lowest") > 0).then(pl.col("spread") / pl.col("lowest")).alias("relative"),
    )
    # The widest series, ties by the series' columns: only the tied rows are decoded.
    widest = runs.filter(pl.col("spread") == pl.col("spread").max()) if runs.height else runs
    worst = code.decode(widest, "__series").sort(
        ["spread", *series], descending=[True, *[False] * len(series)], nulls_last=True)
    return Flat(
        population="cells with overshoot 0, in series of two or more cells differing only "
                   "in U",
        series=runs.height,
        cells=int(runs["cells"].sum()) if runs.height else 0,
        spread=Stats.of(runs["spread"]),
        relative=Stats.of(runs["relative"], digits=4),
        series_within_one_entry=int((runs["spread"] < 1).sum()),
        widest=_row(worst, [*series, "U_lowest", "lowest", "U_highest", "highest", "spread",
                            "relative", "cells"]),
    )


#: Most cells whose (series, U, figures) rows one query of :func:`series_figures` collects
#: (40 bytes each); more cells are split into parts of whole series (:func:`_parts`). At
#: 10^8 cells, parts of 8 million took the report's peak to 2.6 GB; parts of 2 million
#: peaked at 1.65 GB in the same time (70 s for the 51 parts).
PART_CELLS: Final = 2_000_000


def _parts(t: pl.LazyFrame, code: KeyCode, cells: int) -> list[pl.LazyFrame]:
    """``t`` with its series code as ``__series``, split into parts of whole series, each of
    at most about :data:`PART_CELLS` cells.

    A part is the rows whose value of one series axis (the one with the most values) lies
    in a set of values, the sets balanced by their cells (largest first, each to the
    lightest part). A filter on a stored column is applied by the Parquet reader before it
    decodes the other columns, so a part costs about its own rows: at 10^8 cells, 13 parts
    took 61 s where parts by code (each reading and hashing every row) took 190 s.
    Where no axis has as many values as there are parts, the parts are by code modulo
    their number."""
    coded = t.with_columns(code.encode("__series"))
    n = -(-cells // PART_CELLS)
    if n <= 1:
        return [coded]
    distinct = {c: code.keys[c].n_unique() for c in code.varying}
    axis = max(code.varying, key=distinct.__getitem__)
    if distinct[axis] < n:
        return [coded.filter(pl.col("__series") % n == i) for i in range(n)]
    sizes = collect(t.group_by(axis).agg(pl.len())).sort(["len", axis], descending=[True, False],
                                                          nulls_last=True)
    loads = [0] * n
    values: list[list[Any]] = [[] for _ in range(n)]
    for value, count in sizes.iter_rows():
        lightest = loads.index(min(loads))
        loads[lightest] += count
        values[lightest].append(value)
    return [coded.filter(_one_of(axis, part)) for part in values if part]


def _one_of(axis: str, values: Sequence[Any]) -> pl.Expr:
    """Whether a row's ``axis`` is one of ``values`` (a null matching a null)."""
    present = [v for v in values if v is not None]
    inside = pl.col(axis).is_in(present) if present else pl.lit(value=False)
    return inside | pl.col(axis).is_null() if None in values else inside


@dataclass(frozen=True, slots=True)
class SeriesFigures:
    """What :func:`flat_verdict`, :func:`inflation_verdict` and :func:`per_second_verdict`
    read, series by series (by their code, ``__series``), from one pass over the table's
    parts.

    ``flat``: per series with cells of overshoot 0, over those cells: their number, the
    lowest and highest reads per round and the U of each (ties: the smaller U for the
    lowest, the larger for the highest), and U's range; ``runs``: per series of two or
    more cells, the largest rise of reads per second from one U to the next larger one,
    the last over the first, and U's range; ``ratios``: per oscillating cell whose series
    has a no-oscillation level, its controller's index in ``controllers`` and its reads
    per round over that level; ``unrated``: per controller index, the oscillating cells
    without a level (``n``, one row per part); ``top``: the oscillating cells with the
    largest ratio of their part."""

    controllers: tuple[str, ...]
    flat: pl.DataFrame
    runs: pl.DataFrame
    ratios: pl.DataFrame
    unrated: pl.DataFrame
    top: pl.DataFrame


def series_figures(t: pl.LazyFrame, code: KeyCode, cells: int) -> SeriesFigures:
    """Each series' no-oscillation level (the median reads per round over its cells with
    overshoot 0), each oscillating cell's ratio to it, and each series' reads per second
    along U.

    Collected as (code, U, overshoot, reads per round, reads per second), 40 bytes a cell,
    part by part (:func:`_parts`), and aggregated in memory: a streaming median or ordered
    aggregate per many-column group held far more. One read of the table per part serves
    the level, the ratios and the trend alike."""
    names = tuple(in_order(code.values("controller").to_list()))
    controller_of = code.decode(code.keys.select("__key"), "__key").select(
        code.encode("__series"), pl.col("controller").replace_strict(
            {c: i for i, c in enumerate(names)}, return_dtype=pl.UInt8).alias("__controller"))
    flats, runs, ratios, unrated, tops = [], [], [], [], []
    for part in _parts(t, code, cells):
        # The part's rows live inside _part_figures only: held across the next part's
        # query, they doubled the peak.
        part_flat, part_runs, part_ratios, part_unrated, part_top = _part_figures(
            collect(part.select("__series", "U", "overshoot", "reads_per_round",
                                "reads_per_second")), controller_of)
        flats.append(part_flat)
        runs.append(part_runs)
        ratios.append(part_ratios)
        unrated.append(part_unrated)
        if part_top is not None:
            tops.append(part_top)
    # The ratios (one per oscillating cell: 0.2 GB at 10^8 cells) stay in their parts'
    # chunks: one copy fewer at the report's peak.
    return SeriesFigures(names, pl.concat(flats), pl.concat(runs),
                         pl.concat(ratios, rechunk=False), pl.concat(unrated),
                         pl.concat(tops) if tops else pl.DataFrame())


def _part_figures(rows: pl.DataFrame, controller_of: pl.DataFrame
                  ) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame,
                             pl.DataFrame | None]:
    """:class:`SeriesFigures`' flat figures, runs, ratios, unrated cells and top cells of
    one part's rows."""
    ratio, rpr = pl.col("ratio"), pl.col("reads_per_round")
    still = rows.filter(pl.col("overshoot") == 0).group_by("__series").agg(
        rpr.median().alias("level"),
        pl.len().alias("cells"),
        rpr.min().alias("lowest"),
        rpr.max().alias("highest"),
        # The U of the lowest and of the highest, ties by the smaller and the larger U.
        pl.when(rpr == rpr.min()).then(pl.col("U")).min().alias("U_lowest"),
        pl.when(rpr == rpr.max()).then(pl.col("U")).max().alias("U_highest"),
        pl.col("U").min().alias("U_min"), pl.col("U").max().alias("U_max"),
    )
    level = still.select("__series", "level")
    osc = rows.filter(pl.col("overshoot") > 0).drop("reads_per_second").join(
        level, on="__series", how="left")
    osc = osc.with_columns(pl.when(pl.col("level") > 0)
                           .then(rpr / pl.col("level")).alias("ratio"))
    tagged = osc.select("__series", "ratio").join(controller_of, on="__series", how="left")
    ratios = tagged.filter(ratio.is_not_null()).select("__controller", "ratio")
    unrated = tagged.filter(ratio.is_null()).group_by("__controller").agg(pl.len().alias("n"))
    best = osc["ratio"].max()
    top = None if best is None else osc.filter(ratio >= best).select(
        "__series", "U", "overshoot", "reads_per_round", "level", "ratio")
    # Each series' reads per second in U's order (sorted within each group: sorting the
    # part by series and U took twice as long): the rise from each U to the next.
    along = pl.col("reads_per_second").sort_by("U")
    before = along.shift(1)
    runs = rows.group_by("__series").agg(
        pl.len().alias("n"),
        pl.when(before > 0).then(along / before - 1).max().alias("rise"),
        pl.when(along.first() > 0).then(along.last() / along.first()).alias("last_over_first"),
        pl.col("U").min().alias("U_min"), pl.col("U").max().alias("U_max"),
    ).filter(pl.col("n") >= 2)
    return still.drop("level"), runs, ratios, unrated, top


def inflation_verdict(figures: SeriesFigures, series: Sequence[str],
                      code: KeyCode) -> Inflation:
    """Each oscillating cell's reads per round divided by its series' no-oscillation level;
    the ratio's distribution over all of them and per controller, and the largest."""
    rated = figures.ratios
    unrated = dict(figures.unrated.group_by("__controller").agg(pl.col("n").sum()).iter_rows())
    largest = [*series, "U", "overshoot", "reads_per_round", "level", "ratio"]
    top = (code.decode(figures.top.filter(pl.col("ratio") >= rated["ratio"].max()), "__series")
           .select(largest)
           .sort(["ratio", *series, "U"], descending=[True, *[False] * (len(series) + 1)],
                 nulls_last=True) if rated.height else pl.DataFrame())
    per = []
    for i, name in enumerate(figures.controllers):
        part = rated.filter(pl.col("__controller") == i)["ratio"]
        if part.len() + unrated.get(i, 0):
            per.append(ControllerRatio(name, part.len() + unrated.get(i, 0), Stats.of(part)))
        del part  # one controller's copy at a time
    without = sum(unrated.values())
    return Inflation(
        population="cells with overshoot > 0; level: their series' no-oscillation level",
        cells=rated.height + without,
        with_level=rated.height,
        without_level=without,
        ratio=Stats.of(rated["ratio"]),
        below_level=int((rated["ratio"] < 1).sum()),
        largest=_row(top, largest),
        by_controller=tuple(per),
    )


def per_second_verdict(figures: SeriesFigures, series: Sequence[str],
                       code: KeyCode) -> PerSecond:
    """Series by series (two or more cells): whether reads per second ever rise from one U
    to the next larger one, by how much at most (relative to the smaller U's), and the
    ratio of reads per second at the largest U to those at the smallest."""
    runs = code.decode(figures.runs, "__series")
    rising = runs.filter(pl.col("rise") > 0)
    top = rising.sort(["rise", *series], descending=[True, *[False] * len(series)],
                      nulls_last=True)
    return PerSecond(
        series=runs.height,
        rising=rising.height,
        rise=Stats.of(rising["rise"], digits=4),
        largest_rise=_row(top, [*series, "rise"]),
        last_over_first=Stats.of(runs["last_over_first"], digits=4),
        where_rising=(tuple(where(runs, pl.col("rise") > 0, series)) if rising.height
                      else ()),
    )


def by_gb_verdict(t: pl.LazyFrame, axes: Sequence[str], schedules: Mapping[str, Deaths],
                  constants: Mapping[str, Any] | None = None) -> ByGB:
    """For each (G, B), the ledger controller's fastest loop with zero overshoot.

    The rows are the ledger cells with every axis but G, U, B, desired, schedule and the
    replicates (:data:`OVER`) fixed (seed 001's values where present, see
    :func:`representative`). Per series (G, B, desired, schedule and, where seeds vary, a
    seed), ``zero_from`` is the smallest U from which overshoot is 0 at every larger U of
    the series. Per (G, B): ``zero_from`` is the largest of its series' (the fastest loop
    that overshoots in no series; null if some series overshoots at its largest U),
    ``zero_from_min`` the smallest, and ``zero_below`` counts the cells below their
    series' ``zero_from`` whose overshoot is 0 all the same. The figures at that U and at
    the largest U are those of one series, ``shown`` (desired and schedule as in seed 001
    where present); ``cheapest_U`` is the U with the fewest reads per second among its
    cells with overshoot 0. ``boundary_U`` is the smallest U on or above the boundary of
    the slice's delays (:func:`~reconsim.model.laws.above_its_boundary`: the worst case
    where they vary).
    """
    ledger = t.filter(pl.col("controller") == "ledger")
    if height(ledger) == 0:
        return ByGB("ledger", {}, {}, ())
    over = replicates(axes, constants)
    fixed = representative(ledger, ("G", "U", "B", "desired", "schedule", *over), axes,
                           schedules, constants)
    pop = select(ledger, fixed)
    shown = representative(pop, ("G", "U", "B"), ["desired", "schedule", *over], schedules,
                           constants)
    key = ["G", "B", "desired", "schedule", *over]
    figures = ["reads_per_round", "reads_per_second", "missing_copy_seconds", "unneeded",
               "overshoot"]
    # Two passes of plain aggregates: each series' last U with overshoot, then the first U
    # after it (zero_from) and the cells with overshoot 0 at or below it (zero_below, the
    # cells below zero_from: no U of the series lies between the two).
    last = collect(pop.group_by(key).agg(
        pl.when(pl.col("overshoot") > 0).then(pl.col("U")).max().alias("last_positive"),
        pl.col("U").min().alias("first_U")))
    per_series = collect(pop.join(last.lazy(), on=key, how="left", nulls_equal=True)
                         .group_by(key).agg(
        pl.col("last_positive").first(), pl.col("first_U").first(),
        pl.when(pl.col("U") > pl.col("last_positive")).then(pl.col("U")).min().alias("after"),
        ((pl.col("U") <= pl.col("last_positive")) & (pl.col("overshoot") == 0)).sum()
        .alias("zero_below"),
    )).select(*key, pl.when(pl.col("last_positive").is_null()).then(pl.col("first_U"))
              .otherwise(pl.col("after")).alias("zero_from"), "zero_below")
    boundary_u, one = collect_all([
        pop.group_by("G", "B").agg(
            pl.when(above_its_boundary(stored=True)).then(pl.col("U")).min()
            .alias("boundary_U"),
            pl.col("U").max().alias("U_max"), delays_vary(stored=True).any().alias("varying")),
        select(pop, shown).select("G", "B", "U", *figures),
    ])
    per_gb = per_series.group_by("G", "B").agg(
        pl.len().alias("series"),
        pl.when(pl.col("zero_from").null_count() == 0).then(pl.col("zero_from").max())
        .alias("zero_from"),
        pl.col("zero_from").min().alias("zero_from_min"),
        pl.col("zero_from").null_count().alias("never_zero"),
        pl.col("zero_below").sum().alias("zero_below"),
    )
    cheapest = one.filter(pl.col("overshoot") == 0).group_by("G", "B").agg(
        pl.col("U").sort_by("reads_per_second", "U").first().alias("cheapest_U"))
    at = one
    rows = (per_gb.join(boundary_u, on=["G", "B"]).join(cheapest, on=["G", "B"], how="left")
            .join(at.rename({f: f"at_zero_from__{f}" for f in figures}),
                  left_on=["G", "B", "zero_from"], right_on=["G", "B", "U"], how="left")
            .join(at.rename({f: f"at_U_max__{f}" for f in figures}),
                  left_on=["G", "B", "U_max"], right_on=["G", "B", "U"], how="left")
            .sort("G", "B"))
    out = []
    for r in rows.iter_rows(named=True):
        out.append(GBRow(
            G=r["G"], B=r["B"], G_plus_B=r["G"] + r["B"], series=r["series"],
            zero_from=r["zero_from"], zero_from_min=r["zero_from_min"],
            same_for_all=r["zero_from"] is not None and r["zero_from"] == r["zero_from_min"],
            never_zero=r["never_zero"],
            boundary_U=r["boundary_U"],
            at_boundary=r["zero_from"] is not None and r["zero_from"] == r["boundary_U"],
            zero_below=r["zero_below"],
            cheapest_U=r["cheapest_U"], U_max=r["U_max"],
            at_zero_from=_figures(r, "at_zero_from", figures),
            at_U_max=_figures(r, "at_U_max", figures),
        ))
    worst = bool(boundary_u["varying"].any())
    return ByGB("ledger", fixed, shown, tuple(out), over, BOUNDARY_WORST if worst else BOUNDARY)


def _figures(row: Mapping[str, Any], prefix: str, figures: Sequence[str]) -> CellFigures | None:
    """The ``{prefix}__{figure}`` columns of ``row``, or None if the cell is absent."""
    values = {f: row[f"{prefix}__{f}"] for f in figures}
    if all(v is None for v in values.values()):
        return None
    shown: dict[str, Any] = {f: round(v, 3) if isinstance(v, float) else v
                             for f, v in values.items()}
    return CellFigures(**shown)


#: The figures of a chart point.
POINT_FIGURES: Final = ("reads", "rounds", "reads_per_round", "reads_per_second", "overshoot",
                        "unneeded", "missing_copy_seconds")


def chart_slice(t: pl.LazyFrame, axes: Sequence[str], schedules: Mapping[str, Deaths],
                constants: Mapping[str, Any] | None = None) -> ChartSlice:
    """The cells of one slice, every axis but controller, U and the replicates that vary
    fixed, for the chart; over replicates, each (controller, U)'s median and p95; whether
    the slice's delays vary, and the first U on or above its boundary (in the same read)."""
    over = replicates(axes, constants)
    fixed = representative(t, ("controller", "U", *over), axes, schedules, constants)
    cut = select(t, fixed).select("controller", "U", *POINT_FIGURES,
                                  delays_vary(stored=True).alias("__varying"),
                                  above_its_boundary(stored=True).alias("__above"))
    if over:
        cut = cut.group_by("controller", "U").agg(
            *(pl.col(f).median().alias(f) for f in POINT_FIGURES),
            *(percentile_expr(pl.col(f), 0.95).cast(pl.Float64).alias(f"{f}_p95")
              for f in READ_PANELS),
            pl.len().alias("cells"), pl.col("__varying").any(), pl.col("__above").all())
    points = collect(cut)
    vary = bool(points["__varying"].any())
    worst_u = points.filter(pl.col("__above"))["U"].min() if vary else None
    points = points.drop("__varying", "__above")
    rank = {c: i for i, c in enumerate(controllers(points))}
    points = points.sort(pl.col("controller").replace_strict(rank, return_dtype=pl.Int64), "U")
    rounded = [f for f in points.columns if f.startswith(("reads_per_round", "reads_per_second"))]
    return ChartSlice(fixed, tuple(points.with_columns(pl.col(rounded).round(4)).to_dicts()),
                      over, vary, None if worst_u is None else int(worst_u))  # type: ignore[arg-type]


#: The widest flat series' figures (its key is the rest).
FLAT_FIGURES: Final = ("U_lowest", "lowest", "U_highest", "highest", "spread", "relative", "cells")


@dataclass(frozen=True, slots=True)
class GBFacts:
    """What the words say of the (G, B) rows (:class:`ByGB`), counted from them: the pairs,
    those whose fastest loop without overshoot is the first U on the boundary
    (``at_boundary``; ``below_boundary``: those with it below the worst-case boundary's
    first U, or with no such U), the others (``off``), those that overshoot at every U
    (``never``), whether it is the same U for every series (``same``, where some pair has
    several: ``several``), the cells with overshoot 0 below it (``below``), the cheapest
    U and the largest, the rows with figures at both ends (``both``) and among them those
    where the fastest reads more per second (``dearer``) and misses more or fewer
    copy-seconds than the slowest (``more``, ``fewer``), the row the price is told at
    (``example``), and the series shown, in words."""

    pairs: int
    worst: bool
    at_boundary: int
    below_boundary: int
    off: tuple[GBRow, ...]
    never: tuple[GBRow, ...]
    same: bool
    several: bool
    below: int
    cheapest: tuple[int, ...]
    U_max: tuple[int, ...]
    both: int
    dearer: int
    more: int
    fewer: int
    example: GBRow | None
    shown: str


def gb_facts(by: ByGB, fixed: Mapping[str, Any]) -> GBFacts:
    """The counts the words of the (G, B) rows give; the price is told at the chart's
    slice where its (G, B) is a row, else at the middle row."""
    rows = by.rows
    both = [(r.at_zero_from, r.at_U_max) for r in rows if r.at_zero_from and r.at_U_max]
    return GBFacts(
        pairs=len(rows), worst=by.boundary != BOUNDARY,
        at_boundary=sum(r.at_boundary for r in rows),
        below_boundary=sum(r.zero_from is not None and (r.boundary_U is None
                                                        or r.zero_from < r.boundary_U)
                           for r in rows),
        off=tuple(r for r in rows if not r.at_boundary and r.zero_from is not None),
        never=tuple(r for r in rows if r.zero_from is None),
        same=all(r.same_for_all for r in rows if r.zero_from is not None),
        several=any(r.series > 1 for r in rows),
        below=sum(r.zero_below for r in rows),
        cheapest=tuple(sorted({r.cheapest_U for r in rows if r.cheapest_U is not None})),
        U_max=tuple(sorted({r.U_max for r in rows})),
        both=len(both),
        dearer=sum(fast.reads_per_second > slow.reads_per_second for fast, slow in both),
        more=sum(slow.missing_copy_seconds > fast.missing_copy_seconds for fast, slow in both),
        fewer=sum(slow.missing_copy_seconds < fast.missing_copy_seconds for fast, slow in both),
        example=next((r for r in rows if fixed.get("G") == r.G and fixed.get("B") == r.B),
                     rows[len(rows) // 2]) if rows else None,
        shown=", ".join(f"{k} = {plain(v)}" for k, v in by.shown.items()))


def _slice(fixed: Mapping[str, Any], hide: Iterable[str]) -> str:
    """``, axis = value ...`` for the ledger rows' fixed axes that vary in the sweep, or ''."""
    text = fixed_text(fixed, {*hide, "controller"}, "ledger")
    return "" if text == "the whole sweep" else f", {text}"


def by_gb_rows(by: ByGB) -> list[list[Any]]:
    """One row per (G, B): the fastest and the slowest loop without overshoot, and their
    cost (the table's headings: ``read_cost.html``)."""
    rows = []
    for r in by.rows:
        fast, slow = r.at_zero_from, r.at_U_max
        zero: Any = r.zero_from if r.zero_from is not None else TableCell(
            "none", "bad", "none (overshoot at the largest U)")
        if r.zero_from is not None and not r.same_for_all:
            zero = TableCell(r.zero_from, "", f"{r.zero_from} (by series: "
                             f"{r.zero_from_min}\u2013{r.zero_from})")
        rows.append([r.G, r.B, r.G_plus_B, zero,
                     fast and fast.reads_per_round, fast and fast.reads_per_second,
                     fast and fast.missing_copy_seconds, fast and fast.unneeded,
                     r.U_max, slow and slow.reads_per_second, slow and slow.missing_copy_seconds,
                     r.cheapest_U, r.zero_below])
    return rows


def render(rc: ReadCostSummary, context: Context, figures: Mapping[str, Figure]) -> Markup:
    """Reads per round and per second against U, oscillation's toll, and the
    fastest loop without overshoot for each (G, B) (``templates/read_cost.html``)."""
    hide = context.constant
    return macro("read_cost.html", "body")(
        rc, gb_facts(rc.by_GB, rc.chart.fixed), hide, figures.get("read_cost"),
        _one_u(context), _slice(rc.by_GB.fixed, hide), by_gb_rows(rc.by_GB), FLAT_FIGURES,
        BY_NAME["reads_per_round"].help, PER_SECOND)


#: The read-cost chart's panels: column -> heading.
READ_PANELS: Final = {
    "reads_per_round": "reads per round",
    "reads_per_second": "reads per second",
    "overshoot": "overshoot (copies)",
    "unneeded": "unneeded copies",
}


def read_cost_figure(cut: ChartSlice, order: Sequence[str], hide: Iterable[str] = ()) -> Figure:
    """Reads per round, reads per second (log scale), overshoot and unneeded copies against
    U on the slice ``cut``, one line per controller, with the boundary U = G + B marked (the
    subtitle leaves the axes in ``hide`` out of the slice's description). With replicates
    (``cut.over``): each line the median over them, its band reaching the p95 (nearest
    rank). Where the slice's delays vary, the line marks the first swept U on or above the
    worst-case boundary instead (none where no swept U is)."""
    points, fixed, over, varying = cut.points, cut.fixed, cut.over, cut.varying
    bands = [f"{c}_p95" for c in READ_PANELS] if over else []
    columns = ["controller", "U", *READ_PANELS, "missing_copy_seconds", *bands]
    frame = (pl.DataFrame(list(points)).select(columns) if points else pl.DataFrame(
        schema={"controller": pl.String, "U": pl.Int64, "reads_per_round": pl.Float64,
                "reads_per_second": pl.Float64, "overshoot": pl.Int64, "unneeded": pl.Int64,
                "missing_copy_seconds": pl.Int64, **dict.fromkeys(bands, pl.Float64)}))
    G, B = fixed.get("G"), fixed.get("B")
    boundary = (cut.worst_U if varying
                else G + B if isinstance(G, int) and isinstance(B, int) else None)
    tooltip = [alt.Tooltip("controller:N"), alt.Tooltip("U:Q"),
               *(alt.Tooltip(f"{c}:Q", title=h) for c, h in READ_PANELS.items()),
               alt.Tooltip("missing_copy_seconds:Q", title="missing copy-seconds")]
    panels = []
    for i, (column, heading) in enumerate(READ_PANELS.items()):
        last = i == len(READ_PANELS) - 1
        scale = (alt.Scale(type="log") if column == "reads_per_second"
                 and frame[column].min() is not None and frame[column].min() > 0  # type: ignore[operator]
                 else alt.Scale(zero=False))
        line = alt.Chart().mark_line(point=alt.OverlayMarkDef(size=12)).encode(
            x=alt.X("U:Q", title="U: loop period (s)" if last else None,
                    axis=alt.Axis(labels=last)),
            y=alt.Y(f"{column}:Q", title=heading + (" (log scale)" if scale.type == "log"
                                                    else ""), scale=scale),
            color=alt.Color("controller:N", sort=list(order), title="controller"),
            strokeDash=alt.StrokeDash("controller:N", sort=list(order), legend=None),
            tooltip=tooltip,
        )
        layers: list[alt.Chart] = [line]
        if over:  # its own fill scale: a legend-less colour beside the lines' would conflict
            layers.insert(0, alt.Chart().mark_area(opacity=0.15).encode(
                x="U:Q", y=alt.Y(f"{column}:Q", scale=scale), y2=f"{column}_p95:Q",
                fill=alt.Fill("controller:N", sort=list(order), legend=None)))
        if boundary is not None:
            # One rule, not one per row of the shared data.
            layers.append(alt.Chart().transform_aggregate(rows="count()").mark_rule(
                color="#333", strokeDash=[5, 3]).encode(x=alt.datum(boundary)))
        panels.append(alt.layer(*layers).properties(width=WIDTH - 300, height=120))
    chart = alt.vconcat(*panels, data=inline(frame), spacing=8)
    title = "Read cost against the loop period U, beside overshoot and unneeded copies"
    where = describe({a: v for a, v in fixed.items() if a not in hide}) or "the whole sweep"
    spread = (f" Each point the median over the {listed([f'{a}s' for a in over])} there, "
              "the band reaching the p95 (nearest rank)." if over else "")
    if varying:
        line = (f"Dashed: the first swept U on the worst-case boundary, {BOUNDARY_WORST} (the "
                "delays vary here)." if boundary is not None else
                f"No swept U reaches the worst-case boundary, {BOUNDARY_WORST} (the delays "
                "vary here).")
    else:
        line = "Dashed: U = G + B." if boundary is not None else ""
    sub = f"One slice of the sweep: {where}.{spread} reads_per_second = {PER_SECOND}. " + line
    return Figure("read_cost", title, finish(chart, title, sub))


def summarize(sweep: Sweep) -> ReadCostSummary:
    """Every read-cost figure (``summary.json``'s ``read_cost``)."""
    return read_cost_verdict(sweep.table, sweep.axes, sweep.schedules, sweep.cells,
                             sweep.axis_facts)


def _one_u(context: Context) -> Any:
    """U's value when the sweep holds one only (a chart against it would be one point a
    line), else None."""
    u = context.axes.get("U")
    return u.min if u is not None and u.distinct == 1 else None


def charts(rc: ReadCostSummary, context: Context) -> list[Figure]:
    """Reads per round and per second against U at the chart's fixed slice (none when U
    takes one value)."""
    if _one_u(context) is not None:
        return []
    return [read_cost_figure(rc.chart, context.sweep.controllers, hide=context.constant)]


def glance(rc: ReadCostSummary) -> Markup:
    """What a faster loop costs in reads, in one sentence."""
    return macro("read_cost.html", "glance")(rc, gb_facts(rc.by_GB, rc.chart.fixed))


SECTION = Section("read_cost", summarize, render, charts, glance, anchor="reads",
                  title="Read cost versus period", checks="what a faster loop costs in reads")
