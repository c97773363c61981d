"""Each event's response: how each controller answers each death and each change of desired.

An *event* is a second within the run that holds a death event, a change of desired, or
both; a cell's ``responses`` column (:data:`~reconsim.model.metrics.RESPONSES`) holds one
record per event, measured over the event's window (to the next event, or the end): the
overshoot, the undershoot, the missing copy-seconds and the seconds to settle (null: not
settled before the next event or the end). Every event of every cell is read, none left
out: the lists are exploded, and each event is given its *kind* (:data:`KINDS`) from the
cell's own death events and changes of desired at that second (:func:`event_kind`).

For every controller variant (:func:`reconsim.report.query.variant_params`) at each swept
U and each kind: the events, and each figure's median, p95 and max (nearest rank, as
:func:`reconsim.model.metrics.percentile`: the value at rank ⌈p·n⌉ of the n values sorted;
the median is the 50th percentile so read, the lower of the two middle values when n is
even), the seconds to settle over the settled events, with how many did not settle. Then
the same over every U, per variant and kind.

Exact and streaming: one read of the table, one ``group_by`` of the exploded events by
(variant, U, kind, figure, value), counting events (a few rows per group where values
repeat, never more than four per event); the percentiles are read from those counts in
memory by :func:`~reconsim.model.metrics.nearest_rank`. Each event's kind is two
membership tests in lists computed once per cell (:func:`with_event_lists`). A table
written before the responses existed has none, and the section is left out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

import altair as alt
import polars as pl
from markupsafe import Markup

from reconsim.model.metrics import RESPONSES, nearest_rank
from reconsim.report.blocks import macro
from reconsim.report.charts import WIDTH, Figure, finish, inline, names_expr
from reconsim.report.load import ROW_DEATHS, ROW_SCALE, Sweep
from reconsim.report.query import (
    Table,
    collect,
    lazy,
    variant_label,
    variant_order,
    variant_params,
)
from reconsim.report.section import NOT_IN_JSON, Context, Section
from reconsim.web.html import num
from reconsim.words import listed, plural

#: The kinds of event, in the page's order, each with what it is.
KINDS: Final = {
    "death": "a death event (with no change of desired in its second)",
    "step up": "a change of desired to more copies (no death event in its second)",
    "step down": "a change of desired to fewer copies (no death event in its second)",
    "death + step": "a death event and a change of desired in the same second",
    "same desired": "a change of desired to the count already desired, alone in its second "
                    "(it changes nothing, but opens a window)",
}
#: Each kind in the plural, for the sentences.
KIND_PLURALS: Final = {"death": "deaths", "step up": "steps up", "step down": "steps down",
                       "death + step": "deaths with a step",
                       "same desired": "changes to the same desired"}
#: The figures of a response: field -> its name on the page.
FIGURES: Final = {"overshoot": "overshoot (copies)", "undershoot": "undershoot (copies)",
                  "missing": "missing copy-seconds", "settle": "seconds to settle"}
#: The percentiles read from a group's counts: name -> level (nearest rank).
LEVELS: Final = {"median": Fraction(1, 2), "p95": Fraction(19, 20)}


#: Hidden columns of :func:`with_event_lists`: a cell's death events' seconds, its first
#: change of desired coded (:func:`changes`) and its later ones coded, as a list.
_DEATH_ATS, _FIRST, _LATER = "__death_ats", "__first_change", "__later_changes"
#: How :func:`changes` codes a change: its second times this, plus 1 (up), 2 (down) or 0.
_CODE: Final = 4


def _direction(difference: pl.Expr) -> pl.Expr:
    """1 for a rise, 2 for a fall, 0 for none."""
    return pl.when(difference > 0).then(1).when(difference < 0).then(2).otherwise(0)


def changes() -> tuple[pl.Expr, pl.Expr]:
    """Each row's changes of desired (:data:`~reconsim.report.load.ROW_SCALE`), each coded
    as its second times 4, plus 1 where it raises desired, 2 where it lowers it, 0 where it
    keeps it: the first change (against ``desired``; null without one) and the later ones
    (against the change before), a list. Elementwise list arithmetic only: a shift or a
    search within each cell's list cost ten to a hundred times more."""
    scale = pl.col(ROW_SCALE)
    at = scale.list.eval(pl.element().struct.field("at").cast(pl.Int64))
    wanted = scale.list.eval(pl.element().struct.field("desired").cast(pl.Int64))
    earlier = wanted.list.head(pl.max_horizontal(scale.list.len().cast(pl.Int64) - 1, 0))
    first = (at.list.first() * _CODE
             + _direction(wanted.list.first() - pl.col("desired").cast(pl.Int64)))
    later = (at.list.slice(1) * _CODE
             + (wanted.list.slice(1) - earlier).list.eval(_direction(pl.element())))
    return first, later


def with_event_lists(frame: pl.LazyFrame) -> pl.LazyFrame:
    """``frame`` (with :data:`~reconsim.report.load.ROW_DEATHS`,
    :data:`~reconsim.report.load.ROW_SCALE` and ``desired``) with what :func:`event_kind`
    reads, computed once per cell."""
    first, later = changes()
    return frame.with_columns(
        pl.col(ROW_DEATHS).list.eval(pl.element().struct.field("at").cast(pl.Int64))
        .alias(_DEATH_ATS), first.alias(_FIRST), later.alias(_LATER))


def event_kind(at: pl.Expr) -> pl.Expr:
    """The kind (:data:`KINDS`) of the event at second ``at`` of each row, from the row's
    death events' seconds and coded changes of desired (:func:`with_event_lists`): a death
    event at ``at``, and whether a change at ``at`` raises or lowers desired. Membership
    tests only."""
    at = at.cast(pl.Int64)

    def coded(direction: int) -> pl.Expr:
        code = at * _CODE + direction
        return ((pl.col(_FIRST) == code) | pl.col(_LATER).list.contains(code)).fill_null(
            value=False)

    death = pl.col(_DEATH_ATS).list.contains(at).fill_null(value=False)
    up, down = coded(1), coded(2)
    return (pl.when(death & (up | down)).then(pl.lit("death + step"))
            .when(death).then(pl.lit("death"))
            .when(up).then(pl.lit("step up"))
            .when(down).then(pl.lit("step down"))
            .otherwise(pl.lit("same desired")))


def events(table: Table, keys: Sequence[str]) -> pl.LazyFrame:
    """Every event of every cell of ``table`` (a sweep's table with its responses), one row
    each: ``keys``, ``kind`` and the figures of :data:`FIGURES`."""
    record = pl.col(RESPONSES)
    cells = with_event_lists(lazy(table).filter(record.list.len() > 0).select(
        *keys, "desired", ROW_DEATHS, ROW_SCALE, RESPONSES))
    return (cells.select(*keys, _DEATH_ATS, _FIRST, _LATER, RESPONSES).explode(RESPONSES)
            .select(*keys, event_kind(record.struct.field("at")).alias("kind"),
                    *(record.struct.field(f).alias(f) for f in FIGURES)))


def event_counts(table: Table, keys: Sequence[str]) -> dict[str, pl.DataFrame]:
    """Per figure of :data:`FIGURES`, the events per (``keys``, kind, value): one
    streaming ``group_by`` of the events, the four figures side by side as (figure, value)
    rows (one read of the table, the kinds computed once)."""
    long = events(table, keys).unpivot(on=list(FIGURES), index=[*keys, "kind"],
                                       variable_name="__figure", value_name="__value")
    counts = collect(long.group_by(*keys, "kind", "__figure", "__value").agg(pl.len()))
    return {f: counts.filter(pl.col("__figure") == f).drop("__figure").rename({"__value": f})
            for f in FIGURES}


def spreads(counts: pl.DataFrame, keys: Sequence[str], value: str) -> pl.DataFrame:
    """Per group of ``keys``, from its events' counts per ``value`` (column ``len``; nulls
    left out): ``{value}__median`` and ``__p95`` (nearest rank) and ``__max``; a group
    whose every value is null has no row.

    >>> c = pl.DataFrame({"k": [1, 1, 1, 1], "v": [0, 1, 4, None], "len": [18, 1, 1, 5]})
    >>> spreads(c, ["k"], "v").row(0)
    (1, 0, 1, 4)
    """
    keys = list(keys)
    h = counts.filter(pl.col(value).is_not_null()).sort([*keys, value])
    h = h.with_columns(pl.col("len").cast(pl.Int64).cum_sum().over(keys).alias("__cum"),
                       pl.col("len").cast(pl.Int64).sum().over(keys).alias("__n"))
    at = {name: pl.col(value).filter(pl.col("__cum") >= nearest_rank(p, pl.col("__n"))).first()
          for name, p in LEVELS.items()}
    return h.group_by(keys, maintain_order=True).agg(
        *(e.alias(f"{value}__{name}") for name, e in at.items()),
        pl.col(value).max().alias(f"{value}__max"))


@dataclass(frozen=True, slots=True)
class Spread:
    """A figure over some events: median, p95 (both nearest rank) and max; null where no
    event has a value (seconds to settle: none settled)."""

    median: int | None
    p95: int | None
    max: int | None


@dataclass(frozen=True, slots=True)
class Response:
    """One variant's events of one kind, at one U (``U`` null: over every U): how many,
    each figure's spread (``settle`` over the settled ones) and how many did not settle
    before the next event or the end."""

    variant: str
    U: int | None
    kind: str
    events: int
    overshoot: Spread
    undershoot: Spread
    missing: Spread
    settle: Spread
    unsettled: int


@dataclass(frozen=True, slots=True)
class ResponsesSummary:
    """``summary.json``'s ``responses``: the cells with an event (of all ``of``), their
    events by kind, the variant parameters that vary, the swept U, every (variant, kind)
    over every U (``overall``) and every (variant, U, kind) (``rows``), and a sentence per
    variant. Left out of the page where no cell has an event."""

    cells: int
    of: int
    events: int
    by_kind: dict[str, int]
    varying: tuple[str, ...]
    U_values: tuple[int, ...]
    overall: tuple[Response, ...]
    rows: tuple[Response, ...]
    sentences: tuple[str, ...]
    chart: pl.DataFrame | None = field(default=None, metadata=NOT_IN_JSON)


def _none(of: int) -> ResponsesSummary:
    """The summary of a table without events (or without responses at all)."""
    return ResponsesSummary(cells=0, of=of, events=0, by_kind={}, varying=(), U_values=(),
                            overall=(), rows=(), sentences=())


def _figures(counts: Mapping[str, pl.DataFrame], keys: Sequence[str]) -> pl.DataFrame:
    """Per group of ``keys``, from the counts per value of each figure: the events, those
    that did not settle, and each figure's spread."""
    keys = list(keys)
    settle = counts["settle"]
    out = settle.group_by(keys).agg(
        pl.col("len").sum().cast(pl.Int64).alias("events"),
        pl.col("len").filter(pl.col("settle").is_null()).sum().cast(pl.Int64)
        .alias("unsettled"))
    for value, c in counts.items():
        out = out.join(spreads(c, keys, value), on=keys, how="left", nulls_equal=True)
    return out


def _response(r: Mapping[str, Any]) -> Response:
    """A row of :func:`_figures` (with its variant) as a :class:`Response`."""
    def spread(m: str) -> Spread:
        return Spread(r[f"{m}__median"], r[f"{m}__p95"], r[f"{m}__max"])

    return Response(variant=r["variant"], U=r.get("U"), kind=r["kind"], events=r["events"],
                    overshoot=spread("overshoot"), undershoot=spread("undershoot"),
                    missing=spread("missing"), settle=spread("settle"),
                    unsettled=r["unsettled"])


def _ordered(frame: pl.DataFrame, order: Sequence[str], by_u: bool) -> pl.DataFrame:
    """``frame`` in the variants' ``order``, then by U (``by_u``), then by kind."""
    rank = {v: i for i, v in enumerate(order)}
    kinds = {k: i for i, k in enumerate(KINDS)}
    return frame.with_columns(
        pl.col("variant").replace_strict(rank, return_dtype=pl.Int64).alias("__rank"),
        pl.col("kind").replace_strict(kinds, return_dtype=pl.Int64).alias("__kind"),
    ).sort(["__rank", *(["U"] if by_u else []), "__kind"]).drop("__rank", "__kind")


def responses_verdict(table: Table, sizes: Mapping[str, int] | None = None,
                      variant_rows: pl.DataFrame | None = None) -> ResponsesSummary:
    """Every variant's responses at every swept U, per kind of event, and over every U:
    one query for the cells with an event, one per figure for the counts per value."""
    t = lazy(table)
    if RESPONSES not in t.collect_schema():
        return _none(int(collect(t.select(pl.len())).item()))
    head = collect(t.select(pl.len().alias("of"),
                            (pl.col(RESPONSES).list.len() > 0).sum().alias("cells"),
                            pl.col(RESPONSES).list.len().sum().alias("events")))
    of, cells, n = (int(head[c].item() or 0) for c in ("of", "cells", "events"))
    if n == 0:
        return _none(of)
    params = variant_params(table, sizes, variant_rows)
    keys = ["controller", *params, "U"]
    counts = event_counts(table, keys)
    rows = _figures(counts, [*keys, "kind"]).with_columns(variant_label(params))
    pooled = {f: c.group_by(*keys[:-1], "kind", f).agg(pl.col("len").sum())
              for f, c in counts.items()}
    overall = _figures(pooled, [*keys[:-1], "kind"]).with_columns(variant_label(params))
    order = variant_order(rows, params)
    rows, overall = _ordered(rows, order, by_u=True), _ordered(overall, order, by_u=False)
    by_kind = rows.group_by("kind").agg(pl.col("events").sum())
    kinds = dict(zip(by_kind["kind"].to_list(), by_kind["events"].to_list(), strict=True))
    u_values = tuple(sorted(rows["U"].unique().to_list()))
    summary = ResponsesSummary(
        cells=cells, of=of, events=n,
        by_kind={k: int(kinds[k]) for k in KINDS if k in kinds},
        varying=tuple(params), U_values=u_values,
        overall=tuple(_response(r) for r in overall.iter_rows(named=True)),
        rows=tuple(_response(r) for r in rows.iter_rows(named=True)),
        sentences=(), chart=_chart_rows(rows) if len(u_values) > 1 else None)
    return ResponsesSummary(**{**_fields(summary), "sentences": sentences(summary)})


def _fields(s: ResponsesSummary) -> dict[str, Any]:
    """A summary's fields by name (a slotted dataclass has no ``__dict__``)."""
    return {name: getattr(s, name) for name in ResponsesSummary.__dataclass_fields__}


def _chart_rows(rows: pl.DataFrame) -> pl.DataFrame:
    """The chart's data: per (variant, U, kind), the seconds to settle's median, p95 and
    max over the settled events, and the events and those not settled."""
    return rows.select("variant", "U", "kind", pl.col("settle__median").alias("median"),
                       pl.col("settle__p95").alias("p95"), pl.col("settle__max").alias("max"),
                       "events", "unsettled")


def _spread_text(s: Spread, unit: str = "") -> str:
    """``54 (p95 120, max 300)``, with ``unit`` after each figure."""
    return f"{num(s.median)}{unit} (p95 {num(s.p95)}{unit}, max {num(s.max)}{unit})"


def kind_clause(r: Response) -> str:
    """One variant's events of one kind in words: how many, what they cost, how they
    settle, how far live strays from desired."""
    settled = r.events - r.unsettled
    missing = ("cost no missing copy-second" if not r.missing.max else
               f"cost a median {_spread_text(r.missing)} missing copy-seconds")
    settle = ("none settled before the next event or the end" if not settled else
              f"settle in a median {_spread_text(r.settle, ' s')}")
    text = (f"{r.events:,} {plural(r.events, r.kind, KIND_PLURALS[r.kind])} {missing} and "
            f"{settle}")
    if r.unsettled and settled:
        text += (f" ({r.unsettled:,} of the {r.events:,} did not settle before the next "
                 "event or the end)")
    strays = [f"never {side} desired" if not getattr(r, figure).max else
              f"{figure}ing by a median {_spread_text(getattr(r, figure))} copies"
              for figure, side in (("overshoot", "above"), ("undershoot", "below"))]
    return f"{text}, {listed(strays)}"


def sentences(s: ResponsesSummary) -> tuple[str, ...]:
    """One sentence per variant, over every U: each kind of event's clause."""
    if not s.U_values:
        return ()
    where = (f"U = {num(s.U_values[0])} s" if len(s.U_values) == 1 else
             f"over every U, {num(s.U_values[0])} to {num(s.U_values[-1])} s")
    out = []
    for variant in dict.fromkeys(r.variant for r in s.overall):
        mine = [r for r in s.overall if r.variant == variant]
        out.append(f"{variant}, {where}: " + "; ".join(kind_clause(r) for r in mine) + ".")
    return tuple(out)


def summarize(sweep: Sweep) -> ResponsesSummary:
    """Every event's response, by variant, U and kind (``summary.json``'s ``responses``)."""
    return responses_verdict(sweep.table, sweep.sizes, sweep.variants)


def shown(s: ResponsesSummary) -> bool:
    """Whether some cell has an event."""
    return s.events > 0


def render(s: ResponsesSummary, context: Context, figures: Mapping[str, Figure]) -> Markup:
    """The question, a sentence per variant, the table over every U, the chart and every
    (variant, U, kind) (``templates/responses.html``)."""
    return macro("responses.html", "body")(s, FIGURES, KIND_PLURALS, figures.get("responses"))


def charts(s: ResponsesSummary, context: Context) -> list[Figure]:
    """The seconds to settle against U, per variant, one panel per kind of event (none
    when U takes one value)."""
    if s.chart is None or s.chart.height == 0:
        return []
    kinds = [k for k in KINDS if k in s.by_kind]
    order = list(dict.fromkeys(r.variant for r in s.overall))
    x = alt.X("U:Q", title="U: loop period (s)", scale=alt.Scale(zero=False))
    y = alt.Y("median:Q", title="seconds to settle (symlog scale)",
              scale=alt.Scale(type="symlog"))
    tooltip = [alt.Tooltip("variant:N", title="controller / variant"), alt.Tooltip("U:Q"),
               alt.Tooltip("kind:N", title="event"), alt.Tooltip("events:Q"),
               alt.Tooltip("median:Q", title="median (s)"),
               alt.Tooltip("p95:Q", title="p95 (s, nearest rank)"),
               alt.Tooltip("max:Q", title="max (s)"),
               alt.Tooltip("unsettled:Q", title="not settled")]
    band = alt.Chart().mark_area(opacity=0.18).encode(
        x=x, y=y, y2="p95:Q", fill=alt.Fill("variant:N", sort=order, legend=None))
    line = alt.Chart().mark_line(point=alt.OverlayMarkDef(size=18)).encode(
        x=x, y=y, tooltip=tooltip,
        color=alt.Color("variant:N", sort=order, title="controller / variant",
                        legend=alt.Legend(labelLimit=260)),
        strokeDash=alt.StrokeDash("variant:N", sort=order, legend=None))
    chart = alt.layer(band, line, data=inline(s.chart)).properties(
        width=max(160, (WIDTH - 300) // len(kinds)), height=220).facet(
        column=alt.Column("kind:N", title=None, sort=kinds,
                          header=alt.Header(labelExpr=names_expr({k: k for k in kinds}),
                                            labelFontSize=12)))
    title = "Seconds to settle after each kind of event, against the loop period U"
    sub = ("Each line: one controller (variant), the median over the settled events at each "
           "U; the band reaches the p95 (nearest rank). One panel per kind of event. The "
           "tooltip adds the max, the events and those not settled before the next event or "
           "the end")
    return [Figure("responses", title, finish(chart, title, sub),
                   {"marks": s.chart.height, "panels": len(kinds)})]


SECTION = Section("responses", summarize, render, charts, title="Each event's response",
                  shown=shown)
