"""The boundary U >= G + B: overshoot zero or positive on each side of it, on every
ledger row, with the line U = G + B drawn over the overshoot map.

A row whose delays or period vary (spreads, delay tables, jitter) has no single G + B: it
is placed by its worst case, :data:`~reconsim.model.laws.BOUNDARY_WORST` (the longest
delays, the shortest interval; ``above_boundary_worst``), which reads U >= G + B where the
delays are fixed. On or above it every copy is listed before the next round looks, so
overshoot must be 0 there too; below it a copy may still draw short delays, so overshoot
is not claimed there, and such a row is never counted against the boundary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

import altair as alt
import polars as pl
from markupsafe import Markup

from reconsim.model.laws import (
    BOUNDARY,
    BOUNDARY_WORST,
    EXTRA_WORDS,
    above_its_boundary,
    boundary_delay,
    boundary_interval,
    delays_vary,
    side_counts,
)
from reconsim.report.blocks import macro
from reconsim.report.charts import (
    ALARM,
    QUIET,
    SHARE,
    Figure,
    add_bins,
    bin_label,
    binning_note,
    clamp,
    finish,
    inline,
)
from reconsim.report.claims import Check, Claim, locate
from reconsim.report.load import Sweep
from reconsim.report.query import (
    Table,
    collect,
    lazy,
    variant_label,
    variant_order,
    variant_params,
)
from reconsim.report.section import NOT_IN_JSON, UNLESS_DEFAULT, Context, Section


@dataclass(frozen=True, slots=True)
class VariantCounts:
    """The four boundary counts of one ledger variant."""

    variant: str
    cells: int
    above_zero: int
    above_positive: int
    below_zero: int
    below_positive: int


@dataclass(frozen=True, slots=True)
class BoundaryGrid:
    """The boundary chart's data: one row per (variant, U bin, G + B bin); ``binned`` names
    the binned axes; ``varying``: whether some cell's delays vary (U is then the shortest
    interval and G + B the longest delay, :data:`BOUNDARY_WORST`'s sides)."""

    grid: pl.DataFrame
    binned: tuple[str, ...]
    varying: bool = False


@dataclass(frozen=True, slots=True)
class Varying:
    """The ledger rows whose delays or period vary (spreads, delay tables, jitter), each
    placed by the worst-case boundary ``formula``: above it overshoot must be 0; below it
    overshoot is not claimed (``below_zero_desired_positive``: the cells there with
    desired > 0 that do not overshoot, no exception)."""

    formula: str
    cells: int
    above_cells: int
    above_positive: int
    below_cells: int
    below_positive: int
    below_zero_desired_positive: int


@dataclass(frozen=True, slots=True)
class BoundarySummary:
    """Overshoot on each side of U >= G + B (``summary.json``'s ``boundary``), each row
    placed by the boundary of its own delays (the worst case where they vary: ``varying``
    counts those rows, and is left out of ``summary.json`` where there are none): the four
    counts, and seed 001's claim in both directions, each a :class:`~.claims.Claim`:
    ``above`` (overshoot 0 on or above the boundary) and ``below`` (overshoot below it, on
    the rows with fixed delays and desired > 0: desired = 0 has nothing to overshoot).
    ``chart`` is the chart's data (None without ledger cells)."""

    population: str
    cells: int
    above_zero: int
    above_positive: int
    below_zero: int
    below_positive: int
    below_cells: int
    below_zero_desired_0: int
    below_zero_desired_positive_U_below_B: int  # noqa: N815 (summary.json's key)
    below_implies_positive: bool | None
    above: Claim
    below: Claim
    by_variant: tuple[VariantCounts, ...]
    varying: Varying | None = field(default=None, metadata=UNLESS_DEFAULT)
    chart: BoundaryGrid | None = field(default=None, metadata=NOT_IN_JSON)


#: The worst-case boundary's sides, as the chart's axes name them: the shortest interval
#: between rounds and the longest delay before a copy is listed.
INTERVAL, DELAY = BOUNDARY_WORST.split(" \u2265 ")


@dataclass(frozen=True, slots=True)
class Words:
    """How the words name the boundary the rows are placed by: ``above`` (the claim's
    condition), ``cells_above`` and ``cells_below`` (the cells on each side the claims speak
    of), and ``below`` (the other direction's condition, on the rows with fixed delays)."""

    above: str
    cells_above: str
    cells_below: str
    below: str


def words(cells: int, varying: Varying | None) -> Words:
    """The boundary in words: U >= G + B where every one of the ``cells`` ledger rows has
    fixed delays, the worst-case form where every one varies, both where some do."""
    if varying is None:
        return Words(BOUNDARY, "cells with U ≥ G + B", "cells with U < G + B", "U < G + B")
    if varying.cells == cells:
        return Words(BOUNDARY_WORST, "cells on or above this worst-case boundary",
                     "cells below it", "")
    return Words(f"{BOUNDARY} (where the delays vary, {BOUNDARY_WORST})",
                 "cells on or above their boundary", "cells with fixed delays and U < G + B",
                 "U < G + B")


def verdict_kind(b: BoundarySummary) -> str:
    """The verdict box's kind over both directions: fails where either claim does."""
    claims = [b.above] + ([b.below] if asks_below(b) else [])
    if any(c.verdict == "fails" for c in claims):
        return "fails"
    return "holds" if any(c.verdict == "holds" for c in claims) else "none"


def asks_below(b: BoundarySummary) -> bool:
    """Whether the other direction is asked: some ledger row has fixed delays."""
    return b.varying is None or b.varying.cells < b.cells


def render(b: BoundarySummary, context: Context, figures: Mapping[str, Figure]) -> Markup:
    """The four counts, both claims, the chart with the line U = G + B, and where each
    claim fails (``templates/boundary.html``)."""
    return macro("boundary.html", "body")(
        b, words(b.cells, b.varying), verdict_kind(b), asks_below(b), figures.get("boundary"),
        context.constant, BOUNDARY, BOUNDARY_WORST, EXTRA_WORDS)


#: The four boundary counts: above or below the boundary of each row's delays x overshoot
#: 0 or > 0.
FOUR: Final = ("above_zero", "above_positive", "below_zero", "below_positive")
#: The counts the verdict adds to the four: below the boundary with fixed delays, those
#: with desired > 0 (the claim's cells), those with overshoot 0, and the exceptions
#: (overshoot 0 although desired > 0), of them with U < B.
EXCEPTIONS: Final = ("below_claimed", "below_at_zero", "exceptions", "exceptions_U_below_B")
#: The counts of the rows whose delays vary (:class:`Varying`).
VARYING: Final = ("varying", "varying_above", "varying_above_positive", "varying_below_positive",
                  "varying_below_unclaimed")


def boundary_counts(ledger: pl.LazyFrame, params: Sequence[str]) -> pl.DataFrame:
    """Every count of the verdict and of the chart, per ledger variant (``controller`` and
    ``params``), U and G + B (``GB``): one read of the ledger rows, a group table of at
    most (variants x U x G + B) rows. The verdict sums it, the chart bins it. Where a row's
    delays vary, ``U`` and ``GB`` are the sides of its worst-case boundary (the shortest
    interval, the longest delay: U and G + B where they are fixed), and it is placed by
    that boundary and never counted as an exception below it."""
    above, zero = above_its_boundary(stored=True), pl.col("overshoot") == 0
    positive, vary = pl.col("overshoot") > 0, delays_vary(stored=True)
    exception = ~above & zero & ~vary & (pl.col("desired") > 0)
    return collect(ledger.group_by("controller", *params, boundary_interval().alias("U"),
                                   boundary_delay(stored=True).alias("GB")).agg(
        pl.len().alias("cells"),
        positive.sum().alias("overshooting"),
        pl.col("overshoot").max().alias("max_overshoot"),
        *side_counts(above, positive),
        (~above & ~positive & ~vary & (pl.col("desired") > 0)).sum().alias("below_zero_desired"),
        (~above & ~vary & (pl.col("desired") > 0)).sum().alias("below_claimed"),
        (~above & zero & ~vary).sum().alias("below_at_zero"),
        exception.sum().alias("exceptions"),
        (exception & (pl.col("U") < pl.col("B"))).sum().alias("exceptions_U_below_B"),
        vary.sum().alias("varying"),
        (vary & above).sum().alias("varying_above"),
        (vary & above & positive).sum().alias("varying_above_positive"),
        (vary & ~above & positive).sum().alias("varying_below_positive"),
        (vary & ~above & zero & (pl.col("desired") > 0)).sum().alias("varying_below_unclaimed"),
    ).with_columns(*((pl.col(f"{side}_cells") - pl.col(f"{side}_positive")).alias(f"{side}_zero")
                     for side in ("above", "below"))))


def boundary_verdict(table: Table, axes: Sequence[str],
                     sizes: Mapping[str, int] | None = None,
                     variant_rows: pl.DataFrame | None = None) -> BoundarySummary:
    """Overshoot on each side of the boundary ``U >= G + B``, on every ledger row (the
    worst-case boundary where a row's delays vary,
    :func:`~reconsim.model.laws.above_its_boundary`).

    The four counts answer both directions of seed 001's claim: does U >= G + B imply
    zero overshoot (``above_positive`` = 0)? Does U < G + B imply overshoot
    (``below_zero`` = 0; cells with desired = 0 cannot overshoot and are counted apart)?
    The second is asked of the rows with fixed delays only: below the worst-case boundary
    a copy may draw short delays (``varying`` counts those rows apart).
    ``by_variant`` repeats the counts per ledger variant when the sweep varies observe
    or max_per_round (the boundary is seed 001's for observe = ready without a cap).
    The counts and the chart's data come from one aggregate (:func:`boundary_counts`);
    ``sizes``: each axis's number of values, for :func:`~reconsim.report.query.where`;
    ``variant_rows``: the table's distinct (controller, variant parameters) rows, where known.
    """
    rest = [a for a in axes if a != "controller"]
    ledger = lazy(table).filter(pl.col("controller") == "ledger")
    params = variant_params(ledger, sizes, None if variant_rows is None else variant_rows.filter(
        pl.col("controller") == "ledger"))
    above, zero = above_its_boundary(stored=True), pl.col("overshoot") == 0
    claimed = ~delays_vary(stored=True) & (pl.col("desired") > 0)
    counts = boundary_counts(ledger, params)
    total = {k: int(counts[k].sum())
             for k in ("cells", "above_cells", "below_cells", *FOUR, *EXCEPTIONS, *VARYING)}
    four = {k: total[k] for k in FOUR}
    cells = total["cells"]
    by_variant = []
    if params:
        by = counts.with_columns(variant_label(params)).group_by("variant").agg(
            pl.col("cells", *FOUR).sum())
        rows = {r["variant"]: r for r in by.iter_rows(named=True)}
        for label in variant_order(counts, params):
            r = rows[label]
            by_variant.append(VariantCounts(label, r["cells"], *(r[k] for k in FOUR)))
    figures = ["overshoot", "law_overshoot", "unneeded", "deleted"]
    # Where the counterexamples lie on each side: one read per group of axes for both.
    checks = {}
    if four["above_positive"]:
        checks["above"] = Check(above, pl.col("overshoot") > 0, pl.col("overshoot"))
    if total["exceptions"]:
        checks["below"] = Check(~above & claimed, zero, pl.col("law_overshoot"))
    located = locate(ledger, checks, rest, figures, sizes)
    n = total["varying"]
    worst = Varying(
        formula=BOUNDARY_WORST, cells=n, above_cells=total["varying_above"],
        above_positive=total["varying_above_positive"],
        below_cells=n - total["varying_above"], below_positive=total["varying_below_positive"],
        below_zero_desired_positive=total["varying_below_unclaimed"]) if n else None
    # Below the boundary with overshoot 0, where the delays are fixed (the claim's cells).
    fixed_below_zero = four["below_zero"] - (
        worst.below_cells - worst.below_positive if worst else 0)
    w = words(cells, worst)
    fixed = "" if worst is None else "fixed delays, "
    above_where, above_examples = located.get("above", ((), ()))
    below_where, below_examples = located.get("below", ((), ()))
    return BoundarySummary(
        population="every ledger row (all values of the other parameters)" + (
            f"; where the delays vary, placed by the worst-case boundary {BOUNDARY_WORST}, "
            "and below it counted, never claimed" if worst else ""),
        cells=cells,
        above_zero=four["above_zero"],
        above_positive=four["above_positive"],
        below_zero=four["below_zero"],
        below_positive=four["below_positive"],
        below_cells=total["below_cells"],
        below_zero_desired_0=total["below_at_zero"] - total["exceptions"],
        below_zero_desired_positive_U_below_B=total["exceptions_U_below_B"],
        below_implies_positive=fixed_below_zero == 0 if cells and n < cells else None,
        above=Claim.of(f"{w.above} implies zero overshoot", f"ledger {w.cells_above}",
                       total["above_cells"], four["above_positive"], where=above_where,
                       examples=above_examples),
        below=Claim.of("U < G + B implies overshoot",
                       f"ledger cells with {fixed}U < G + B and desired > 0",
                       total["below_claimed"], total["exceptions"], where=below_where,
                       examples=below_examples),
        by_variant=tuple(by_variant),
        varying=worst,
        chart=boundary_grid(counts, params, varying=bool(n)) if cells else None,
    )


#: Most U and G + B bins of the boundary chart.
MAX_BOUNDARY_BINS: Final = 60


def boundary_grid(counts: pl.DataFrame, params: Sequence[str],
                  varying: bool = False) -> BoundaryGrid:
    """The chart's marks from :func:`boundary_counts`' aggregate: U and G + B binned to at
    most :data:`MAX_BOUNDARY_BINS` each, per variant; no read of the table (``varying``:
    whether some row's delays vary, so that U and G + B are the worst case's sides)."""
    chart = ("overshooting", "above_zero", "above_positive", "below_zero", "below_positive",
             "below_zero_desired")
    t, binned = add_bins(counts, {"U": MAX_BOUNDARY_BINS, "GB": MAX_BOUNDARY_BINS})
    keys = ("controller", *params, "U_lo", "U_hi", "GB_lo", "GB_hi")
    grid = collect(t.group_by(*keys).agg(
        pl.col("cells").sum(),
        pl.col("overshooting").sum(),
        pl.col("max_overshoot").max(),
        *(pl.col(c).sum() for c in chart[1:]),
    )).with_columns(variant_label(params), bin_label("U"), bin_label("GB")).select(
        "variant", "U_lo", "U_hi", "U_label", "GB_lo", "GB_hi", "GB_label", pl.exclude(
            "controller", *params, "variant", "U_lo", "U_hi", "U_label", "GB_lo", "GB_hi",
            "GB_label")
    ).with_columns(
        (pl.col("overshooting") / pl.col("cells")).round(4).alias("share"),
        ((pl.col("U_lo") + pl.col("U_hi")) / 2).alias("U"),
        ((pl.col("GB_lo") + pl.col("GB_hi")) / 2).alias("GB"),
        (pl.col("above_positive") + pl.col("below_zero_desired")).alias("exceptions"),
    ).drop("U_lo", "U_hi", "GB_lo", "GB_hi").sort("variant", "U", "GB")
    return BoundaryGrid(grid, tuple(binned), varying)


def boundary_figure(data: BoundaryGrid) -> Figure:
    """Ledger cells per (U, G + B): the share that overshoots, the line U = G + B, and a red
    outline where a cell contradicts the boundary (overshoot above it, none below it with
    desired > 0 and fixed delays); one panel per ledger variant. Where some cell's delays
    vary, the axes are the worst-case boundary's sides (:data:`INTERVAL`, :data:`DELAY`),
    U and G + B where they are fixed."""
    grid, binned = data.grid, data.binned
    u, gb = (INTERVAL, DELAY) if data.varying else ("U", "G + B")
    top = max(1.0, float(grid["GB"].max() or 0), float(grid["U"].max() or 0))  # type: ignore[arg-type]
    panel = 480 if grid["variant"].n_unique() <= 1 else 320
    # A square about as wide as columns and rows of marks are apart (the median gap).
    gap = min(_gap(grid["U"]), _gap(grid["GB"]))
    side = clamp(int(0.8 * gap * panel / top), 3, 24)
    # Half a square's room around the marks, so that none is cut at the edge.
    pad = side / panel * top
    scale = alt.Scale(domain=[-pad, top + pad], nice=False)
    points = alt.Chart().mark_square(size=side * side, opacity=1).encode(
        x=alt.X("U:Q", scale=scale, title=f"{INTERVAL}: the shortest interval between rounds "
                "(s)" if data.varying else "U: loop period (s)"),
        y=alt.Y("GB:Q", scale=scale, title=f"{DELAY}: the longest delay before a copy is "
                "listed (s)" if data.varying else "G + B: delay before a copy is listed (s)"),
        color=alt.when(alt.datum.overshooting == 0).then(alt.value(QUIET))
        .otherwise(alt.Color("share:Q", scale=alt.Scale(range=SHARE, domain=[0, 1]),
                             title="share overshooting")),
        stroke=alt.when(alt.datum.exceptions > 0).then(alt.value(ALARM))
        .otherwise(alt.value(None)),
        tooltip=[alt.Tooltip("variant:N"), alt.Tooltip("U_label:N", title=u),
                 alt.Tooltip("GB_label:N", title=gb), alt.Tooltip("cells:Q"),
                 alt.Tooltip("above_zero:Q", title=f"{u} ≥ {gb}, overshoot 0"),
                 alt.Tooltip("above_positive:Q", title=f"{u} ≥ {gb}, overshoot > 0"),
                 alt.Tooltip("below_zero:Q", title=f"{u} < {gb}, overshoot 0"),
                 alt.Tooltip("below_positive:Q", title=f"{u} < {gb}, overshoot > 0"),
                 alt.Tooltip("max_overshoot:Q", title="largest overshoot")],
    )
    # One rule per panel: on the panel's rows as they are, it would be drawn once per row
    # (3,600 dashed lines over each other took 1.3 s to rasterise at 10^6 cells).
    line = alt.Chart().transform_aggregate(rows="count()").mark_rule(
        color="#333", strokeDash=[5, 3]).encode(
        x=alt.datum(0), y=alt.datum(0), x2=alt.datum(top), y2=alt.datum(top))
    chart = alt.layer(points, line, data=inline(grid)).properties(width=panel, height=panel).facet(
        column=alt.Column("variant:N", title=None, sort=sorted(grid["variant"].unique())))
    if data.varying:
        title = (f"The worst-case boundary {INTERVAL} = {DELAY} over the ledger controller's "
                 "overshoot")
        sub = (f"Each square: the ledger cells with that {INTERVAL} and that {DELAY} (U and "
               "G + B where the delays are fixed). Pale: none overshoots; blue: the share "
               f"that does. Dashed: {INTERVAL} = {DELAY}; squares on it and below-right of it "
               "are on or above the boundary. Red outline: a cell contradicting the boundary "
               "(overshoot on or above it, or, with fixed delays, none below it with "
               f"desired > 0).{binning_note(binned)}")
    else:
        title = "The boundary U = G + B over the ledger controller's overshoot"
        sub = ("Each square: the ledger cells with that U and that G + B (every G, B, desired "
               "and schedule adding up to it). Pale: none overshoots; blue: the share that "
               "does. Dashed: U = G + B; squares on it and below-right of it have U ≥ G + B. "
               "Red outline: a cell contradicting the boundary (overshoot with U ≥ G + B, or "
               f"none with U < G + B and desired > 0).{binning_note(binned)}")
    return Figure("boundary", title, finish(chart, title, sub), {"binned": binned})


def _gap(values: pl.Series) -> float:
    """The median gap between neighbouring distinct values (the whole span when there is one)."""
    distinct = values.unique().sort()
    gaps = distinct.diff().drop_nulls()
    return float(gaps.median()) if gaps.len() else max(1.0, float(distinct.max() or 1))  # type: ignore[arg-type]


def summarize(sweep: Sweep) -> BoundarySummary:
    """The four counts and where the exceptions lie (``summary.json``'s ``boundary``), and
    the chart's data."""
    return boundary_verdict(sweep.table, sweep.axes, sweep.sizes, sweep.variants)


def charts(b: BoundarySummary, context: Context) -> list[Figure]:
    """The overshoot map with the boundary line, when the sweep has ledger cells."""
    return [boundary_figure(b.chart)] if b.chart is not None else []


def glance(b: BoundarySummary) -> Markup | None:
    """Both directions of the boundary claim in one sentence (where delays vary, the
    worst-case boundary's, and below it what is counted but not claimed)."""
    if not b.cells:
        return None
    return macro("boundary.html", "glance")(b, words(b.cells, b.varying))


SECTION = Section("boundary", summarize, render, charts, glance,
                  title="The boundary U ≥ G + B", checks="the boundary U ≥ G + B")
