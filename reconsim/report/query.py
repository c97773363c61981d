"""The queries the report's sections share, over a sweep's lazy table (:mod:`.load`):
collecting on polars' streaming engine (:func:`collect`), slicing (:func:`representative`,
:func:`select`), where a condition holds (:func:`where`, :func:`groups`), binning, tallies,
the first rows by an order, example cells and statistics.

Sections aggregate a part of a group as ``pl.when(cond).then(x).max()``, never as
``x.filter(cond).max()``: the streaming engine buffers the rows of a filter inside an
aggregate, and at 10^8 cells the law's counts held 957 MiB that way and 336 MiB this way.
"""


from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import polars as pl

from reconsim.model.kinds import Cap
from reconsim.model.metrics import percentile_expr
from reconsim.model.params import (
    BY_NAME,
    CONTROLLERS,
    PARAM_NAMES,
    UNLIMITED,
    VARIANT_PARAMS,
    applies,
)
from reconsim.model.studies.seed001 import BASE, G_SCAN_U, U_SCAN_G
from reconsim.report.source import ReportError
from reconsim.sweep.table import user_param_columns


def flat_value(value: Any) -> Any:
    """A parameter value as :func:`flat` shows it: sequences as ``a,b,c`` or ``none``."""
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value) or "none"
    return value


#: Values a "representative" slice prefers where the sweep has them: seed 001's setting
#: (the model's defaults, B 5, six copies, 900 s; G 30 and U 15 as in its scans).
SEED_SETTING: Final[Mapping[str, Any]] = {
    name: flat_value(getattr(BASE, name)) for name in PARAM_NAMES if name != "deaths"
} | {"G": U_SCAN_G, "U": G_SCAN_U}

Deaths = tuple[tuple[int, int], ...]

Table = pl.LazyFrame | pl.DataFrame


def collect(query: Table) -> pl.DataFrame:
    """Run a query on polars' streaming engine (a frame already collected stays as it is)."""
    if isinstance(query, pl.DataFrame):
        return query
    return query.collect(engine="streaming")


def collect_all(queries: Sequence[Table]) -> list[pl.DataFrame]:
    """Run several queries, one after the other: run together (``pl.collect_all``) their
    buffers add up, and at 10^7 cells a report's peak memory was several times higher."""
    return [collect(q) for q in queries]


def lazy(table: Table) -> pl.LazyFrame:
    """A frame or a query, as a query."""
    return table.lazy()


def height(table: Table) -> int:
    """The number of rows of a query (counted, not loaded)."""
    if isinstance(table, pl.DataFrame):
        return table.height
    return int(collect(table.select(pl.len())).item())


def controllers(table: Table) -> list[str]:
    """The controllers present: those reconsim declares, in its order, then others by name."""
    return in_order(collect(lazy(table).select(pl.col("controller").unique()))["controller"])


def in_order(names: Iterable[str]) -> list[str]:
    """Controller names as reconsim orders them: those it declares first, then by name."""
    known = list(CONTROLLERS)
    return sorted(names, key=lambda c: (known.index(c) if c in known else len(known), c))


def user_params(columns: Iterable[str]) -> list[str]:
    """The columns of a table that hold users' controllers' parameters, as the table's
    names say (:func:`reconsim.sweep.table.user_param_columns`): reading it imports no
    controller."""
    return list(user_param_columns(columns))


def variant_params(table: Table, sizes: Mapping[str, int] | None = None,
                   variants: pl.DataFrame | None = None) -> list[str]:
    """The :data:`VARIANT_PARAMS`, then the users' controllers' parameters
    (:func:`user_params`), that take more than one value among one controller's rows
    (``sizes``, each axis's number of values over the sweep where known, rules out those
    with one value without a query; ``variants``, the table's distinct rows of controller
    and the variant parameters where known, answers without one)."""
    schema = lazy(table).collect_schema()
    present = [p for p in (*VARIANT_PARAMS, *user_params(schema.names())) if p in schema
               and (sizes is None or sizes.get(p, 2) > 1)]
    if not present:
        return []
    # The distinct combinations first (a few rows), counted per controller in memory:
    # n_unique per controller over every row took 4 s at 10^8 cells.
    if variants is None or any(p not in variants.columns for p in present):
        variants = collect(lazy(table).group_by("controller", *present).agg(pl.len()))
    combos = variants
    counts = combos.group_by("controller").agg(pl.col(p).n_unique() for p in present)
    if counts.height == 0:
        return []
    return [p for p in present if int(counts[p].max()) > 1]  # type: ignore[arg-type]


def variant_label(params: Sequence[str]) -> pl.Expr:
    """A row's variant as text: its controller, then ``param=value`` for each of ``params``
    that applies to the row (``max_per_round`` null reads ``unlimited``; other nulls are
    parameters that do not apply, left out)."""
    parts: list[pl.Expr] = [pl.col("controller").cast(pl.String)]
    for p in params:
        value = pl.col(p).cast(pl.String)
        if p == "max_per_round":
            value = value.fill_null(UNLIMITED)
        parts.append(pl.concat_str(pl.lit(f" \u00b7 {p}="), value))
    return pl.concat_str(parts, ignore_nulls=True).alias("variant")


def variant_order(table: Table, params: Sequence[str]) -> list[str]:
    """The variant labels present, controller by controller (as :func:`controllers` orders
    them), then by their parameter values (nulls first)."""
    keys = collect(lazy(table).select("controller", *params, variant_label(params)).unique())
    rank = {c: i for i, c in enumerate(controllers(keys))}
    keys = keys.with_columns(pl.col("controller").replace_strict(rank, return_dtype=pl.Int64)
                             .alias("__rank"))
    return keys.sort(["__rank", *params], nulls_last=False)["variant"].to_list()


def values_of(table: Table, axis: str) -> list[Any]:
    """The distinct values of one axis, sorted (nulls first)."""
    return collect(lazy(table).select(pl.col(axis).unique()))[axis].sort(
        nulls_last=False).to_list()


@dataclass(frozen=True)
class KeyCode:
    """Several columns as one 64-bit hash, checked to be one-to-one on the table: a group
    key that costs 8 bytes a row (many-column keys made polars hold far more), decoded back
    to the columns exactly. Columns holding one value over the table (``fixed``) are left
    out of the hash and put back on decoding."""

    columns: tuple[str, ...]
    seed: int
    keys: pl.DataFrame
    fixed: pl.DataFrame

    @classmethod
    def of(cls, table: Table, columns: Sequence[str],
           sizes: Mapping[str, int] | None = None) -> KeyCode:
        """The code of ``columns`` over ``table``: one query (the distinct combinations),
        then in memory each hash's first combination, equal in number when no two
        combinations share a hash; else another seed is tried. ``sizes`` (each column's
        number of values, where known) names the columns with one value: their value is
        read from the first row instead (at 10^8 cells, grouping by 6 columns instead of 12
        took half the time)."""
        fixed = [c for c in columns if sizes is not None and sizes.get(c) == 1]
        if len(fixed) == len(columns):
            fixed.pop()
        varying = [c for c in columns if c not in fixed]
        combos = collect(lazy(table).group_by(varying).agg(pl.len()).drop("len"))
        one = collect(lazy(table).select(fixed).head(1))
        for seed in range(8):
            hashed = pl.struct(varying).hash(seed).alias("__key")
            keys = combos.group_by(hashed).agg(pl.col(c).first() for c in varying)
            if keys.height == combos.height:
                return cls(tuple(columns), seed, keys, one)
        raise ReportError(f"{', '.join(columns)}: no collision-free hash found")

    @property
    def varying(self) -> list[str]:
        """The columns the hash covers."""
        return [c for c in self.columns if c not in self.fixed.columns]

    def values(self, column: str) -> pl.Series:
        """The distinct values of one of the columns."""
        frame = self.fixed if column in self.fixed.columns else self.keys
        return frame[column].unique()

    def encode(self, name: str = "__key") -> pl.Expr:
        """The code of each row."""
        return pl.struct(self.varying).hash(self.seed).alias(name)

    def decode(self, frame: pl.DataFrame, name: str = "__key") -> pl.DataFrame:
        """``frame`` with the code in column ``name`` replaced by the columns it encodes."""
        keys = self.keys.rename({"__key": name})
        out = frame.join(keys, on=name, how="left", maintain_order="left").drop(name)
        if self.fixed.width:
            out = out.join(self.fixed, how="cross")
        return out.select(*self.columns, pl.exclude(self.columns))


def seed_schedules(schedules: Mapping[str, Deaths]) -> list[str]:
    """Names of the schedules whose deaths are seed 001's (two copies at second 300)."""
    return [name for name, deaths in schedules.items() if deaths == BASE.deaths]


def _candidates(counts: pl.DataFrame, axis: str, schedules: Mapping[str, Deaths]) -> list[Any]:
    """An axis's values, best first, from their ``count`` of cells: seed 001's value, then
    by count (ties: the smallest value, null last)."""
    counts = counts.sort(["count", axis], descending=[True, False], nulls_last=True)
    present = counts[axis].to_list()
    preferred: list[Any] = (seed_schedules(schedules) if axis == "schedule"
                            else [SEED_SETTING[axis]] if axis in SEED_SETTING else [])
    first = [v for v in preferred if v in present]
    return first + [v for v in present if v not in first]


def representative(table: Table, vary: Sequence[str], axes: Sequence[str],
                   schedules: Mapping[str, Deaths],
                   constants: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Fix every axis outside ``vary`` to one value, axis by axis, so the slice is never empty.

    Each axis takes seed 001's value where the remaining cells have it, else its most
    common value (ties: the smallest). When ``controller`` varies, the value must keep
    every controller in the slice; where no single value does (a parameter that applies
    to some controllers only), the axis is fixed per controller, as
    ``{"by_controller": {controller: value}}``. Only the ``axes`` are fixed: hidden
    columns (defaults of parameters the file lacks) are constant anyway. One query per
    axis, each a count of the remaining cells by that axis's values, but for the axes in
    ``constants`` (those with one value over the sweep: that value, which every row and
    every controller has).
    """
    fixed: dict[str, Any] = {}
    for axis in axes:
        if axis in vary:
            continue
        if constants is not None and axis in constants:
            fixed[axis] = constants[axis]
            continue
        rest = select(lazy(table), fixed)
        if "controller" not in vary:
            counts = collect(lazy(rest).group_by(axis).agg(pl.len().alias("count")))
            if counts.height == 0:
                break
            fixed[axis] = _candidates(counts, axis, schedules)[0]
            continue
        by = collect(lazy(rest).group_by("controller", axis).agg(pl.len().alias("count")))
        if by.height == 0:
            break
        counts = by.group_by(axis).agg(pl.col("count").sum(),
                                       pl.col("controller").n_unique().alias("__controllers"))
        everyone = by["controller"].n_unique()
        complete = set(counts.filter(pl.col("__controllers") == everyone)[axis].to_list())
        candidates = _candidates(counts, axis, schedules)
        chosen = [v for v in candidates if v in complete]
        if chosen:
            fixed[axis] = chosen[0]
            continue
        per = {c: _candidates(by.filter(pl.col("controller") == c).drop("controller"), axis,
                              schedules)[0]
               for c in controllers(by)}
        fixed[axis] = {"by_controller": per}
    return fixed


def _matches(axis: str, value: Any) -> pl.Expr:
    """Rows whose ``axis`` equals ``value`` (per controller for a ``by_controller`` value)."""
    if isinstance(value, dict) and "by_controller" in value:
        return pl.any_horizontal(
            *((pl.col("controller") == c) & pl.col(axis).eq_missing(v)
              for c, v in value["by_controller"].items()))
    return pl.col(axis).eq_missing(value)


def select(table: pl.LazyFrame, fixed: Mapping[str, Any]) -> pl.LazyFrame:
    """The rows of ``table`` whose axes equal ``fixed`` (null matches null)."""
    if not fixed:
        return lazy(table)
    return lazy(table).filter(*(_matches(a, v) for a, v in fixed.items()))


def describe(fixed: Mapping[str, Any], controller: str | None = None) -> str:
    """A slice's fixed values as plain text: ``G = 30, B = 5, ttl = 300 (expectations) ...``.

    A null value of a parameter that does not apply to a controller (``ttl`` for
    ``ledger``) is left out: for every controller of a ``by_controller`` value, and for
    ``controller`` when the slice holds that one only. Controllers sharing a value are
    listed together.
    """
    parts = []
    for axis, value in fixed.items():
        if isinstance(value, dict) and "by_controller" in value:
            by_value: dict[str, list[str]] = {}
            for c, v in value["by_controller"].items():
                if not _inapplicable(axis, c, v):
                    by_value.setdefault(_text(v), []).append(c)
            if by_value:
                shown = "; ".join(f"{v} ({', '.join(cs)})" for v, cs in by_value.items())
                parts.append(f"{axis} = {shown}")
        elif controller is None or not _inapplicable(axis, controller, value):
            parts.append(f"{axis} = {_text(value)}")
    return ", ".join(parts)


def _inapplicable(axis: str, controller: str, value: Any) -> bool:
    """Whether ``value`` is the null of a parameter that does not apply to ``controller``:
    a built-in's as the parameter declares; a user's controller's parameter is null for
    every other controller, and a user's controller (not known to the report, which imports
    none) has a null exactly where a parameter does not apply to it, but a cap's (no cap)."""
    if value is not None:
        return False
    if axis not in PARAM_NAMES:
        return True
    if controller not in CONTROLLERS:
        return not isinstance(BY_NAME[axis].kind, Cap)
    return not applies(axis, controller)


def _text(value: Any) -> str:
    """A value as :func:`describe` shows it."""
    return "null" if value is None else str(value)


#: Most groups one :func:`where` query counts: axes whose numbers of values multiply to at
#: most this share one ``group_by``, each axis's counts summed from it in memory.
WHERE_GROUPS: Final = 200_000
#: Most axes one such ``group_by`` has as keys: at 10^8 cells, 4 keys held 0.6 GB, 11 keys
#: 0.5 to 1.2 GB in one run and 5 GB in another.
WHERE_KEYS: Final = 4


def key_groups(axes: Sequence[str], sizes: Mapping[str, int],
               limit: int = WHERE_GROUPS) -> list[list[str]]:
    """``axes`` in groups of at most :data:`WHERE_KEYS` whose numbers of values (``sizes``)
    multiply to at most ``limit`` (an axis larger than that alone), smallest axes first.

    >>> key_groups(["G", "U", "B", "desired"], {"G": 19, "U": 120, "B": 7, "desired": 630},
    ...            limit=100_000)
    [['B', 'G', 'U'], ['desired']]
    """
    out: list[list[str]] = []
    product = limit + 1
    for axis in sorted(axes, key=lambda a: (sizes[a], list(axes).index(a))):
        size = max(1, sizes[axis])
        if product * size > limit or len(out[-1]) >= WHERE_KEYS:
            out.append([axis])
            product = size
        else:
            out[-1].append(axis)
            product *= size
    return out


def where(population: Table, condition: pl.Expr, axes: Sequence[str],
          max_values: int = 60, sizes: Mapping[str, int] | None = None
          ) -> list[dict[str, Any]]:
    """Where the cells of ``population`` meeting ``condition`` lie: per axis, each value with
    its count among those cells and in the whole population.

    An axis with more than ``max_values`` distinct values among the cells lists its range
    only (``truncated`` is then true). Counts only: one ``group_by`` per group of axes
    (:func:`key_groups`, by their numbers of values in ``sizes``, at most the table's;
    without ``sizes``, one per axis), each axis's counts summed from its group's. Each
    query reads the population once and holds its groups only (several ``group_by`` of one
    query, concatenated, made polars cache the rows they share: at 10^8 cells, 2.5 GB).
    """
    return where_each(population, {"": (None, condition)}, axes, max_values, sizes)[""]


def where_each(population: Table, splits: Mapping[str, tuple[pl.Expr | None, pl.Expr]],
               axes: Sequence[str], max_values: int = 60,
               sizes: Mapping[str, int] | None = None) -> dict[str, list[dict[str, Any]]]:
    """:func:`where` for several (sub-population, condition) pairs of one population at
    once, by name: each pair's sub-population is the rows of ``population`` meeting its
    first expression (None: every row), its cells those meeting both. One read of the
    population per group of axes serves them all."""
    groups = [[a] for a in axes] if sizes is None else key_groups(axes, sizes)
    counted: dict[str, dict[str, pl.DataFrame]] = {name: {} for name in splits}
    of = [pl.len() if inside is None else inside.sum() for inside, _ in splits.values()]
    cells = [condition.sum() if inside is None else (inside & condition).sum()
             for inside, condition in splits.values()]
    for keys in groups:
        rows = collect(lazy(population).group_by(keys).agg(
            *(e.alias(f"of{i}") for i, e in enumerate(of)),
            *(e.alias(f"cells{i}") for i, e in enumerate(cells))))
        for i, name in enumerate(splits):
            mine = rows.filter(pl.col(f"of{i}") > 0).select(
                *keys, pl.col(f"cells{i}").alias("cells"), pl.col(f"of{i}").alias("of"))
            for axis in keys:
                counted[name][axis] = mine.group_by(axis).agg(pl.col("cells").sum(),
                                                             pl.col("of").sum())
    return {name: [_where_entry(axis, counted[name][axis], max_values) for axis in axes]
            for name in splits}


def _where_entry(axis: str, pop: pl.DataFrame, max_values: int) -> dict[str, Any]:
    """One axis's entry of :func:`where` from its counts per value."""
    joined = pop.filter(pl.col("cells") > 0).sort(axis, nulls_last=False)
    non_null = joined[axis].drop_nulls()
    return {
        "axis": axis,
        "distinct": joined.height,
        "distinct_in_population": pop.height,
        "min": non_null.min() if non_null.len() else None,
        "max": non_null.max() if non_null.len() else None,
        "truncated": joined.height > max_values,
        "values": [] if joined.height > max_values else [
            {"value": v, "cells": int(n), "of": of} for v, n, of in joined.iter_rows()
        ],
    }


def groups(cells: Table, population: Table, key: Sequence[str], axes: Sequence[str],
           sizes: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """Per value of ``key``: how many ``cells`` of how many in ``population``, and each axis's
    range (min, max and the count of distinct values) among those cells.

    With ``sizes`` (each axis's number of values), the ranges come from the distinct
    combinations of ``key`` and a group of axes (:func:`key_groups`), one ``group_by`` per
    group, summarised in memory: ``n_unique`` per group of a many-row query held the
    values themselves (1.2 GB at 10^8 cells)."""
    key = list(key)
    rest = [a for a in axes if a not in key]
    of = collect(lazy(population).group_by(key).agg(pl.len().alias("of")))
    if sizes is None:
        agg_rows = collect(lazy(cells).group_by(key).agg(
            pl.len().alias("cells"),
            *(pl.col(a).min().alias(f"{a}__min") for a in rest),
            *(pl.col(a).max().alias(f"{a}__max") for a in rest),
            *(pl.col(a).n_unique().alias(f"{a}__n") for a in rest),
        ))
    else:
        per_key = 1
        for k in key:
            per_key *= max(1, sizes[k])
        parts = key_groups(rest, sizes, max(1, WHERE_GROUPS // per_key)) if rest else [[]]
        aggs = []
        for part in parts:
            combos = collect(lazy(cells).group_by([*key, *part]).agg(pl.len().alias("__n")))
            aggs.append(combos.group_by(key).agg(
                pl.col("__n").sum().alias("cells"),
                *(pl.col(a).min().alias(f"{a}__min") for a in part),
                *(pl.col(a).max().alias(f"{a}__max") for a in part),
                *(pl.col(a).n_unique().alias(f"{a}__n") for a in part)))
        agg_rows = aggs[0]
        for agg in aggs[1:]:
            agg_rows = agg_rows.join(agg.drop("cells"), on=key, how="left", nulls_equal=True)
    joined = agg_rows.join(of, on=key, how="left", nulls_equal=True).sort(
        key, nulls_last=False)
    return [
        {"key": {k: r[k] for k in key}, "cells": r["cells"], "of": r["of"],
         "ranges": {a: {"min": r[f"{a}__min"], "max": r[f"{a}__max"], "distinct": r[f"{a}__n"]}
                    for a in rest}}
        for r in joined.iter_rows(named=True)
    ]


def bins(values: Sequence[int], max_bins: int) -> dict[int, tuple[int, int]]:
    """Map each value to the (lowest, highest) value of its bin; one bin per value when they fit.

    Past ``max_bins`` distinct values, consecutive sorted values share a bin, bins
    holding nearly equal numbers of distinct values.

    >>> bins([0, 5, 10], 3)
    {0: (0, 0), 5: (5, 5), 10: (10, 10)}
    >>> bins([1, 2, 3, 4, 5], 2)
    {1: (1, 2), 2: (1, 2), 3: (3, 5), 4: (3, 5), 5: (3, 5)}
    """
    ordered = sorted(set(values))
    n = len(ordered)
    if n <= max_bins:
        return {v: (v, v) for v in ordered}
    out: dict[int, tuple[int, int]] = {}
    for b in range(max_bins):
        chunk = ordered[(b * n) // max_bins:((b + 1) * n) // max_bins]
        for v in chunk:
            out[v] = (chunk[0], chunk[-1])
    return out


def bin_columns(table: Table | Sequence[int], axis: str, max_bins: int,
                name: str | None = None) -> tuple[list[pl.Expr], bool]:
    """Columns ``{name}_lo``, ``{name}_hi`` and ``{name}_label`` binning an integer column,
    from the table (or the column's distinct values, when known).

    Returns the expressions and whether any bin holds more than one value.
    """
    name = name or axis
    if isinstance(table, (pl.DataFrame, pl.LazyFrame)):
        present = values_of(table, axis)
    else:
        present = list(table)
    mapping = bins([v for v in present if v is not None], max_bins)
    binned = any(lo != hi for lo, hi in mapping.values())
    lo = pl.col(axis).replace_strict({k: v[0] for k, v in mapping.items()}, default=None)
    hi = pl.col(axis).replace_strict({k: v[1] for k, v in mapping.items()}, default=None)
    label = pl.when(lo == hi).then(lo.cast(pl.String)).otherwise(
        pl.concat_str(lo.cast(pl.String), pl.lit("\u2013"), hi.cast(pl.String)))
    return [lo.alias(f"{name}_lo"), hi.alias(f"{name}_hi"), label.alias(f"{name}_label")], binned


def tally(column: str, count: str = "n", limit: int = 8) -> pl.Expr:
    """Aggregate the (value, count) rows of a group into one ``value: count, ...`` string.

    The largest counts come first, equal counts in the values' order (nulls last); past
    ``limit`` rows the string ends with how many more there are.
    """
    def first(name: str) -> pl.Expr:
        return pl.col(name).sort_by([count, column], descending=[True, False],
                                    nulls_last=True).head(limit)

    # Only the rows shown are spelled out (a group can hold thousands).
    pairs = pl.concat_str(first(column).cast(pl.String).fill_null("null"), pl.lit(": "),
                          first(count).cast(pl.String))
    shown = pairs.str.join(", ")
    more = pl.len().cast(pl.Int64) - limit
    return pl.when(more > 0).then(
        pl.concat_str(shown, pl.lit(" … and "), more.cast(pl.String), pl.lit(" more"))
    ).otherwise(shown)


#: Most rows :func:`first_rows` collects that tie with its ``n``-th best value.
TIES_AT_ONCE: Final = 50_000


def first_rows(table: Table, by: Sequence[str], descending: Sequence[bool], n: int
               ) -> pl.DataFrame:
    """The first ``n`` rows of ``table.sort(by, descending=descending, nulls_last=True)``
    (rows equal in every ``by`` column are interchangeable: ``by`` should name a row).

    The table is not sorted whole: one query finds the ``n``-th best value of the first
    ``by`` column, a second collects the rows at least as good (ties with it included),
    and only those are sorted. Where more than :data:`TIES_AT_ONCE` rows tie with that
    value, the rows strictly better (fewer than ``n``) are collected, and the first of
    the ties by the other columns, the same way (at 10^8 cells, an example query's ties
    were 1.5 million rows, 440 MB).
    """
    query = lazy(table)
    first, desc = by[0], descending[0]
    column = pl.col(first).drop_nulls()
    best = (column.top_k(n) if desc else column.bottom_k(n))
    row = collect(query.select(best.min().alias("lo") if desc else best.max().alias("hi"),
                               best.len().alias("k")))
    edge, k = row.item(0, 0), row.item(0, 1)
    if k < n:
        # Fewer than n non-null values: all of them, then the first of the nulls (sorted
        # last) by the other columns.
        head = collect(query.filter(pl.col(first).is_not_null()))
        nulls = query.filter(pl.col(first).is_null())
        tail = (first_rows(nulls, by[1:], descending[1:], n - k) if len(by) > 1
                else collect(nulls.head(n - k)))
        rows = pl.concat([head, tail], how="vertical_relaxed")
    else:
        better = pl.col(first) > edge if desc else pl.col(first) < edge
        tied = pl.col(first) == edge
        rows = collect(query.filter(better | tied).head(TIES_AT_ONCE + 1))
        if rows.height > TIES_AT_ONCE:
            strict = collect(query.filter(better))
            ties = query.filter(tied)
            rest = n - strict.height
            tail = (first_rows(ties, by[1:], descending[1:], rest) if len(by) > 1
                    else collect(ties.head(rest)))
            rows = pl.concat([strict, tail], how="vertical_relaxed")
    return rows.sort(list(by), descending=list(descending), nulls_last=True).head(n)


#: How many example cells a verdict lists in full.
EXAMPLES: Final = 12


def examples(cells: Table, axes: Sequence[str], figures: Sequence[str],
             order: pl.Expr, limit: int = EXAMPLES) -> list[dict[str, Any]]:
    """Up to ``limit`` cells in full, first by ``order`` (descending), then by their axes;
    one per (G, U, B, desired), so that they differ in more than the schedule.

    The cells are never sorted whole: the first rows in that order are taken, ``limit``
    times a few at first and more while they hold fewer than ``limit`` distinct
    (G, U, B, desired); each cell's first row in the order is the same as in the whole.
    """
    distinct = [a for a in ("G", "U", "B", "desired") if a in axes]
    query = lazy(cells).select(*axes, *figures, order.alias("__order"))
    keys = ["__order", *axes]
    descending = [True, *[False] * len(axes)]
    n = limit * 32
    while True:
        top = first_rows(query, keys, descending, n)
        picked = top.unique(subset=distinct, keep="first", maintain_order=True)
        if picked.height >= limit or top.height < n:
            return picked.head(limit).select(*axes, *figures).to_dicts()
        n *= 8


def stats(values: pl.Series, digits: int = 3) -> dict[str, Any]:
    """Count, min, median, 90th percentile (nearest rank,
    :func:`reconsim.model.metrics.percentile`) and max of a numeric series (nulls left out),
    floats rounded to ``digits`` places; every statistic null when nothing is left."""
    v = values.drop_nulls().cast(pl.Float64)
    if v.len() == 0:
        return {"count": 0, "min": None, "median": None, "p90": None, "max": None}

    def r(x: Any) -> float:
        """``x`` as a float rounded to ``digits`` places."""
        return round(float(x), digits)

    return {"count": v.len(), "min": r(v.min()), "median": r(v.median()),
            "p90": r(v.to_frame("v").select(percentile_expr(pl.col("v"), 0.9)).item()),
            "max": r(v.max())}


@dataclass(frozen=True, slots=True)
class Stats:
    """:func:`stats` as a summary's field: count, min, median, 90th percentile (nearest
    rank) and max."""

    count: int
    min: float | None
    median: float | None
    p90: float | None
    max: float | None

    @classmethod
    def of(cls, values: pl.Series, digits: int = 3) -> Stats:
        """The statistics of a numeric series (see :func:`stats`)."""
        return cls(**stats(values, digits))
