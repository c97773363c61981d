"""A sweep's output directory as one in-memory table, and the helpers the report's figures share.

The report reads ``DIR/data/*.parquet`` (one row per cell) and ``DIR/sweep.json``.
The law columns are recomputed here from :func:`reconsim.model.laws.law_columns` so that
every verdict checks the law as :mod:`reconsim.model.laws` states it today; cells whose
stored law columns say otherwise are counted, never silently overwritten.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import polars as pl

from reconsim.errors import ReconsimError
from reconsim.model.laws import law_columns
from reconsim.model.params import (
    BY_NAME,
    CONTROLLERS,
    DEFAULTS,
    METRIC_NAMES,
    PARAM_NAMES,
    UNLIMITED,
    VARIANT_PARAMS,
    WORLD_PARAMS,
    applies,
)
from reconsim.model.seed001 import BASE, U_SCAN_G
from reconsim.model.simulate import DEATHS_DTYPE

#: The columns :func:`~reconsim.model.laws.law_columns` derives from a cell's parameters
#: and overshoot.
LAW_COLUMNS: Final = ("law_overshoot", "law_holds", "above_boundary", "law_overshoot_worst",
                      "above_boundary_worst")
#: Prefix of the law columns recomputed from the stored parameters, before they are shown.
_FRESH: Final = "__fresh_"

#: Axes every sweep has, in the order the report lists them; extra parameter columns follow.
CORE_AXES: Final = ("controller", "G", "U", "B", "desired", "schedule", "duration", "ledger_base")

#: Hidden column: whether a cell's deaths are exactly seed 001's (two copies at second 300).
SEED_DEATHS: Final = "__seed_deaths"


def flat_value(value: Any) -> Any:
    """A parameter value as :func:`flat` shows it: sequences as ``a,b,c`` or ``none``."""
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value) or "none"
    return value


#: Values a "representative" slice prefers where the sweep has them: seed 001's setting
#: (the model's defaults, B 5, six copies, 900 s; G 30 and U 15 as in its scans).
SEED_SETTING: Final[Mapping[str, Any]] = {
    name: flat_value(getattr(BASE, name)) for name in PARAM_NAMES if name != "deaths"
} | {"G": U_SCAN_G, "U": 15}

Deaths = tuple[tuple[int, int], ...]


class ReportError(ReconsimError, ValueError):
    """A sweep directory the report cannot read: the message names the path and the problem."""


@dataclass(frozen=True)
class Sweep:
    """One sweep's output, loaded: its ``sweep.json``, its cells and the axes they vary on."""

    meta: dict[str, Any]
    table: pl.DataFrame
    axes: tuple[str, ...]
    schedules: dict[str, Deaths]
    stale_law_cells: int


def load_sweep(sweep_dir: Path) -> Sweep:
    """Read ``sweep_dir/sweep.json`` and every ``sweep_dir/data/*.parquet`` into a :class:`Sweep`.

    Raises :class:`ReportError` naming the path when a file is missing or unreadable,
    or when a column the report needs is absent.
    """
    meta_path = sweep_dir / "sweep.json"
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportError(f"{meta_path}: no such file (is {sweep_dir} a sweep's output?)") from None
    except (OSError, ValueError) as exc:
        raise ReportError(f"{meta_path}: unreadable: {exc}") from None
    if not isinstance(meta, dict):
        raise ReportError(f"{meta_path}: expected a JSON object")
    parts = sorted((sweep_dir / "data").glob("*.parquet"))
    if not parts:
        raise ReportError(f"{sweep_dir / 'data'}: no *.parquet files")
    scan = pl.scan_parquet(parts)
    schema = scan.collect_schema()
    if "schedule" not in schema:
        scan = scan.with_columns(schedule=schedule_names(pl.col("deaths")))
        schema = scan.collect_schema()
    needed = [*CORE_AXES, "deaths", *METRIC_NAMES]
    missing = [c for c in needed if c not in schema]
    if missing:
        raise ReportError(f"{sweep_dir / 'data'}: missing column(s) {', '.join(missing)}")
    # Parameters the file lacks (a sweep written before they existed) took the model's
    # defaults; hidden columns carry those for reconsim.model.laws, and they are no axes.
    # So are issue 8's parameters where every cell holds the default: seed 001's world.
    constant = [p for p in WORLD_PARAMS if p in schema]
    if constant:
        off = scan.select(BY_NAME[p].off_default().any() for p in constant).collect().row(0)
        constant = [p for p, differs in zip(constant, off, strict=True) if not differs]
    axes = tuple(a for a in axis_names(schema.names()) if a not in constant)
    hidden = [p for p in PARAM_NAMES if p not in schema and p != "deaths"]
    scan = scan.with_columns(_default_column(p) for p in hidden)
    hidden += constant
    # The laws read the parameters as stored (lists as lists), before they are flattened.
    scan = scan.with_columns(e.name.prefix(_FRESH) for e in law_columns())
    schema = scan.collect_schema()
    scan = scan.with_columns(
        *(flat(a, schema[a]) for a in (*axes, *hidden)),
        pl.col("deaths").eq_missing(pl.lit(pl.Series([list_of_events(BASE.deaths)],
                                                     dtype=DEATHS_DTYPE)).first())
        .alias(SEED_DEATHS),
    )
    table = scan.select(
        *axes, *METRIC_NAMES, *(c for c in LAW_COLUMNS if c in schema), *hidden, SEED_DEATHS,
        *(_FRESH + c for c in LAW_COLUMNS),
    ).collect()
    if table.height == 0:
        raise ReportError(f"{sweep_dir / 'data'}: the table has no rows")
    stale = _stale_law_cells(table)
    table = table.drop(*(c for c in LAW_COLUMNS if c in table.columns)).rename(
        {_FRESH + c: c for c in LAW_COLUMNS})
    # A schedule's events can depend on the duration; show those of its longest run.
    schedules = scan.group_by("schedule").agg(
        pl.col("deaths").sort_by("duration", descending=True).first()).collect()
    return Sweep(
        meta=meta,
        table=table,
        axes=axes,
        schedules={s: tuple((e["at"], e["count"]) for e in d)
                   for s, d in schedules.sort("schedule").iter_rows()},
        stale_law_cells=stale,
    )


def list_of_events(deaths: Deaths) -> list[dict[str, int]]:
    """A death schedule as the rows of a ``deaths`` cell."""
    return [{"at": at, "count": count} for at, count in deaths]


def _default_column(name: str) -> pl.Expr:
    """A constant column holding parameter ``name``'s default value."""
    value = DEFAULTS[name]
    if value is None:
        return pl.lit(None, dtype=pl.Int64).alias(name)
    if isinstance(value, tuple):
        return pl.lit(list(value), dtype=pl.List(pl.Int64)).alias(name)
    return pl.lit(value).alias(name)


def flat(axis: str, dtype: pl.DataType) -> pl.Expr:
    """An axis column as scalars the report can group and show: lists become ``a,b,c``
    (``none`` when empty), structs JSON, categoricals strings; other columns stay as they are."""
    col = pl.col(axis)
    if isinstance(dtype, pl.Array):
        dtype = pl.List(dtype.inner)
        col = col.cast(dtype)
    if isinstance(dtype, pl.List):
        element = (pl.element().struct.json_encode() if isinstance(dtype.inner, pl.Struct)
                   else pl.element().cast(pl.String))
        joined = col.list.eval(element).list.join(",")
        return pl.when(col.list.len() == 0).then(pl.lit("none")).otherwise(joined).alias(axis)
    if isinstance(dtype, pl.Struct):
        return col.struct.json_encode().alias(axis)
    if isinstance(dtype, (pl.Categorical, pl.Enum)):
        return col.cast(pl.String).alias(axis)
    return col


def _stale_law_cells(table: pl.DataFrame) -> int:
    """Count cells whose stored law columns differ from what :mod:`.laws` gives now
    (the ``_FRESH`` columns)."""
    stored = [c for c in LAW_COLUMNS if c in table.columns]
    if not stored:
        return 0
    differs = pl.any_horizontal(
        *(~table[c].eq_missing(table[_FRESH + c]) for c in stored)
    )
    return int(table.select(differs.sum()).item())


def schedule_names(deaths: pl.Expr) -> pl.Expr:
    """Name each death schedule ``AT:COUNT,...`` (``none`` when empty), as the CLI spells it."""
    events = deaths.list.eval(
        pl.concat_str(pl.element().struct.field("at").cast(pl.String), pl.lit(":"),
                      pl.element().struct.field("count").cast(pl.String))
    ).list.join(",")
    return pl.when(deaths.list.len() == 0).then(pl.lit("none")).otherwise(events)


def axis_names(columns: Iterable[str]) -> tuple[str, ...]:
    """The parameter columns of a sweep table: the core axes, then any extra ones in file order."""
    columns = list(columns)
    figures = {*METRIC_NAMES, *LAW_COLUMNS, "deaths", SEED_DEATHS}
    extra = [c for c in columns if c not in figures and c not in CORE_AXES]
    return (*(c for c in CORE_AXES if c in columns), *extra)


def controllers(table: pl.DataFrame) -> list[str]:
    """The controllers present: those reconsim declares, in its order, then others by name."""
    known = list(CONTROLLERS)
    present = table["controller"].unique().to_list()
    return sorted(present, key=lambda c: (known.index(c) if c in known else len(known), c))


def variant_params(table: pl.DataFrame) -> list[str]:
    """The :data:`VARIANT_PARAMS` that take more than one value among one controller's rows."""
    present = [p for p in VARIANT_PARAMS if p in table.columns]
    if not present or table.height == 0:
        return []
    counts = table.group_by("controller").agg(pl.col(p).n_unique() for p in present)
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


def variant_order(table: pl.DataFrame, params: Sequence[str]) -> list[str]:
    """The variant labels present, controller by controller (as :func:`controllers` orders
    them), then by their parameter values (nulls first)."""
    rank = {c: i for i, c in enumerate(controllers(table))}
    keys = table.select("controller", *params, variant_label(params)).unique()
    keys = keys.with_columns(pl.col("controller").replace_strict(rank, return_dtype=pl.Int64)
                             .alias("__rank"))
    return keys.sort(["__rank", *params], nulls_last=False)["variant"].to_list()


def values_of(table: pl.DataFrame, axis: str) -> list[Any]:
    """The distinct values of one axis, sorted (nulls first)."""
    return table[axis].unique().sort(nulls_last=False).to_list()


def seed_schedules(schedules: Mapping[str, Deaths]) -> list[str]:
    """Names of the schedules whose deaths are seed 001's (two copies at second 300)."""
    return [name for name, deaths in schedules.items() if deaths == BASE.deaths]


def _candidates(rest: pl.DataFrame, axis: str, schedules: Mapping[str, Deaths]) -> list[Any]:
    """An axis's values among ``rest``, best first: seed 001's value, then by count (ties: the
    smallest value, null last)."""
    counts = rest[axis].value_counts(sort=False).sort(
        ["count", axis], descending=[True, False], nulls_last=True)
    present = counts[axis].to_list()
    preferred: list[Any] = (seed_schedules(schedules) if axis == "schedule"
                            else [SEED_SETTING[axis]] if axis in SEED_SETTING else [])
    first = [v for v in preferred if v in present]
    return first + [v for v in present if v not in first]


def representative(table: pl.DataFrame, vary: Sequence[str], axes: Sequence[str],
                   schedules: Mapping[str, Deaths]) -> dict[str, Any]:
    """Fix every axis outside ``vary`` to one value, axis by axis, so the slice is never empty.

    Each axis takes seed 001's value where the remaining cells have it, else its most
    common value (ties: the smallest). When ``controller`` varies, the value must keep
    every controller in the slice; where no single value does (a parameter that applies
    to some controllers only), the axis is fixed per controller, as
    ``{"by_controller": {controller: value}}``. Only the ``axes`` are fixed: hidden
    columns (defaults of parameters the file lacks) are constant anyway.
    """
    fixed: dict[str, Any] = {}
    rest = table
    for axis in axes:
        if axis in vary or rest.height == 0:
            continue
        candidates = _candidates(rest, axis, schedules)
        if "controller" not in vary:
            fixed[axis] = candidates[0]
            rest = rest.filter(pl.col(axis).eq_missing(candidates[0]))
            continue
        everyone = set(rest["controller"].unique().to_list())
        for value in candidates:
            cut = rest.filter(pl.col(axis).eq_missing(value))
            if set(cut["controller"].unique().to_list()) == everyone:
                fixed[axis], rest = value, cut
                break
        else:
            per = {c: _candidates(rest.filter(pl.col("controller") == c), axis, schedules)[0]
                   for c in controllers(rest)}
            fixed[axis] = {"by_controller": per}
            rest = select(rest, {axis: fixed[axis]})
    return fixed


def _matches(axis: str, value: Any) -> pl.Expr:
    """Rows whose ``axis`` equals ``value`` (per controller for a ``by_controller`` value)."""
    if isinstance(value, dict) and "by_controller" in value:
        return pl.any_horizontal(
            *((pl.col("controller") == c) & pl.col(axis).eq_missing(v)
              for c, v in value["by_controller"].items()))
    return pl.col(axis).eq_missing(value)


def select(table: pl.DataFrame, fixed: Mapping[str, Any]) -> pl.DataFrame:
    """The rows of ``table`` whose axes equal ``fixed`` (null matches null)."""
    if not fixed:
        return table
    return table.filter(*(_matches(a, v) for a, v in fixed.items()))


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
    """Whether ``value`` is the null of a parameter that does not apply to ``controller``."""
    return (value is None and axis in PARAM_NAMES and controller in CONTROLLERS
            and not applies(axis, controller))


def _text(value: Any) -> str:
    """A value as :func:`describe` shows it."""
    return "null" if value is None else str(value)


def where(cells: pl.DataFrame, population: pl.DataFrame, axes: Sequence[str],
          max_values: int = 60) -> list[dict[str, Any]]:
    """Where ``cells`` lie among ``population``: per axis, each value with its count in both.

    An axis with more than ``max_values`` distinct values among ``cells`` lists its
    range only (``truncated`` is then true).
    """
    out = []
    for axis in axes:
        pop = population.group_by(axis).agg(pl.len().alias("of"))
        hit = cells.group_by(axis).agg(pl.len().alias("cells"))
        joined = hit.join(pop, on=axis, how="left", nulls_equal=True).sort(axis, nulls_last=False)
        non_null = joined[axis].drop_nulls()
        entry: dict[str, Any] = {
            "axis": axis,
            "distinct": joined.height,
            "distinct_in_population": pop.height,
            "min": non_null.min() if non_null.len() else None,
            "max": non_null.max() if non_null.len() else None,
            "truncated": joined.height > max_values,
            "values": [] if joined.height > max_values else [
                {"value": v, "cells": n, "of": of} for v, n, of in joined.iter_rows()
            ],
        }
        out.append(entry)
    return out


def groups(cells: pl.DataFrame, population: pl.DataFrame, key: Sequence[str],
           axes: Sequence[str]) -> list[dict[str, Any]]:
    """Per value of ``key``: how many ``cells`` of how many in ``population``, and each axis's
    range (min, max and the count of distinct values) among those cells."""
    key = list(key)
    rest = [a for a in axes if a not in key]
    agg = cells.group_by(key).agg(
        pl.len().alias("cells"),
        *(pl.col(a).min().alias(f"{a}__min") for a in rest),
        *(pl.col(a).max().alias(f"{a}__max") for a in rest),
        *(pl.col(a).n_unique().alias(f"{a}__n") for a in rest),
    )
    of = population.group_by(key).agg(pl.len().alias("of"))
    agg = agg.join(of, on=key, how="left", nulls_equal=True).sort(key, nulls_last=False)
    return [
        {"key": {k: r[k] for k in key}, "cells": r["cells"], "of": r["of"],
         "ranges": {a: {"min": r[f"{a}__min"], "max": r[f"{a}__max"], "distinct": r[f"{a}__n"]}
                    for a in rest}}
        for r in agg.iter_rows(named=True)
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


def bin_columns(table: pl.DataFrame, axis: str, max_bins: int, name: str | None = None
                ) -> tuple[list[pl.Expr], bool]:
    """Columns ``{name}_lo``, ``{name}_hi`` and ``{name}_label`` binning an integer column.

    Returns the expressions and whether any bin holds more than one value.
    """
    name = name or axis
    mapping = bins(table[axis].unique().drop_nulls().to_list(), max_bins)
    binned = any(lo != hi for lo, hi in mapping.values())
    lo = pl.col(axis).replace_strict({k: v[0] for k, v in mapping.items()}, default=None)
    hi = pl.col(axis).replace_strict({k: v[1] for k, v in mapping.items()}, default=None)
    label = pl.when(lo == hi).then(lo.cast(pl.String)).otherwise(
        pl.concat_str(lo.cast(pl.String), pl.lit("\u2013"), hi.cast(pl.String)))
    return [lo.alias(f"{name}_lo"), hi.alias(f"{name}_hi"), label.alias(f"{name}_label")], binned


def tally(column: str, count: str = "n", limit: int = 8) -> pl.Expr:
    """Aggregate the (value, count) rows of a group into one ``value: count, ...`` string.

    Rows show in their order in the frame (sort them first); past ``limit`` of them the
    string ends with how many more there are.
    """
    pairs = pl.concat_str(pl.col(column).cast(pl.String).fill_null("null"), pl.lit(": "),
                          pl.col(count).cast(pl.String))
    shown = pairs.head(limit).str.join(", ")
    more = pl.len().cast(pl.Int64) - limit
    return pl.when(more > 0).then(
        pl.concat_str(shown, pl.lit(" … and "), more.cast(pl.String), pl.lit(" more"))
    ).otherwise(shown)


#: How many example cells a verdict lists in full.
EXAMPLES: Final = 12


def examples(cells: pl.DataFrame, axes: Sequence[str], figures: Sequence[str],
             order: pl.Expr, limit: int = EXAMPLES) -> list[dict[str, Any]]:
    """Up to ``limit`` cells in full, first by ``order`` (descending), then by their axes;
    one per (G, U, B, desired), so that they differ in more than the schedule."""
    if cells.height == 0:
        return []
    top = cells.with_columns(order.alias("__order")).sort(
        ["__order", *axes], descending=[True, *[False] * len(axes)], nulls_last=True)
    distinct = [a for a in ("G", "U", "B", "desired") if a in axes]
    top = top.unique(subset=distinct, keep="first", maintain_order=True)
    return top.head(limit).select(*axes, *figures).to_dicts()


def stats(values: pl.Series, digits: int = 3) -> dict[str, Any]:
    """Count, min, median, 90th percentile and max of a numeric series (nulls left out),
    floats rounded to ``digits`` places; every statistic null when nothing is left."""
    v = values.drop_nulls().cast(pl.Float64)
    if v.len() == 0:
        return {"count": 0, "min": None, "median": None, "p90": None, "max": None}

    def r(x: Any) -> float:
        """``x`` as a float rounded to ``digits`` places."""
        return round(float(x), digits)

    return {"count": v.len(), "min": r(v.min()), "median": r(v.median()),
            "p90": r(v.quantile(0.9, interpolation="nearest")), "max": r(v.max())}
