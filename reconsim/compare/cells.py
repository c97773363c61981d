"""Two sweeps compared cell by cell: which cells changed, by how much, and where.

Cells are matched on the parameter columns of a sweep table
(:data:`reconsim.sweep.grid.PARAM_COLUMNS`, then the users' controllers' parameters either
table has, :func:`reconsim.sweep.table.user_param_columns`: null in a table without them,
as for every other controller); cells in only one sweep are counted and listed
(a bounded sample), never dropped. For each metric: how many matched cells changed
(by more than its tolerance), the largest changes, how the changed cells spread over
each parameter, and the delta (B - A) aggregated over G x U per panel.

Both tables are scanned lazily and joined by polars; only aggregates and bounded samples
are collected, so two sweeps of millions of cells compare in the memory of their
aggregates. Computing lives here; :mod:`reconsim.compare.page` draws the page.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import polars as pl

from reconsim.errors import ReconsimError
from reconsim.model.metrics import METRIC_NAMES, percentile_expr
from reconsim.model.params import PARAMS
from reconsim.sweep.facts import FACTS_KEY, merge
from reconsim.sweep.grid import PARAM_COLUMNS
from reconsim.sweep.store import DATA, StoreError, scan
from reconsim.sweep.table import flat, user_param_columns
from reconsim.words import counted, plural

#: Cells listed in full: per side among unmatched cells, per metric among the largest changes.
SAMPLE: Final = 20
LARGEST: Final = 10
#: An axis with more distinct values among changed cells lists only its range.
MAX_WHERE_VALUES: Final = 60
#: Panels of a delta heatmap: at most this many values on each of two panel axes.
MAX_PANEL_VALUES: Final = 8
#: The two hashes of a cell's parameters that match cells across the tables.
_KEY: Final = ("__key0", "__key1")
#: Parameters null where they do not apply (``ttl`` outside expectations): a null there
#: does not make the axis vary.
_NULL_IF_INAPPLICABLE: Final = frozenset(p.name for p in PARAMS if p.applies is not None)


class CompareError(ReconsimError, ValueError):
    """Bad input to a comparison: the message names the directory or the value."""


@dataclass(frozen=True)
class MetricDiff:
    """One metric over the matched cells: how many changed, by how much, where."""

    metric: str
    tolerance: float
    changed: int
    delta_min: float | None
    delta_max: float | None
    #: the largest changes (by |B - A|), each cell's varying parameters with a, b, delta
    largest: list[dict[str, Any]] = field(default_factory=list)
    #: per shown axis: the values of changed cells, each with its count among all matched
    where: list[dict[str, Any]] = field(default_factory=list)
    #: G x U (x panel axes) aggregates of the delta over the matched cells
    heatmap: pl.DataFrame | None = None


@dataclass(frozen=True)
class SweepComparison:
    """Everything ``reconsim compare`` reports."""

    a: str
    b: str
    keys: tuple[str, ...]
    varying: tuple[str, ...]
    panels: tuple[str, ...]
    metrics: tuple[MetricDiff, ...]
    cells_a: int
    cells_b: int
    matched: int
    only_a: int
    only_b: int
    only_a_sample: list[dict[str, Any]]
    only_b_sample: list[dict[str, Any]]
    #: the parameters tables show: the varying ones (deaths named by their schedule)
    shown: tuple[str, ...] = ()
    #: every parameter axis of the two sweeps (``keys``: those cells are paired on)
    axes: tuple[str, ...] = ()
    #: paired on fewer axes than all: ``matched``, ``only_a``, ``only_b`` count pairs (values
    #: of ``keys``), each side of a pair a distribution over its cells
    grouped: bool = False
    #: the axes whose values differ between the sweeps (:func:`_axes_differ`)
    axes_differ: list[dict[str, Any]] = field(default_factory=list)
    #: the cells of each side in the matched pairs (``matched`` when not grouped)
    paired_cells_a: int = 0
    paired_cells_b: int = 0

    @property
    def ignored(self) -> tuple[str, ...]:
        """The axes compared as distributions: those cells are not paired on."""
        return tuple(k for k in self.axes if k not in self.keys)

    @property
    def identical(self) -> bool:
        """True when no metric changed (beyond its tolerance) in any matched cell."""
        return all(m.changed == 0 for m in self.metrics)

    def to_json(self) -> dict[str, Any]:
        """The comparison as plain data (heatmaps left out: they are the page's)."""
        return {
            "a": self.a, "b": self.b, "identical": self.identical,
            "cells": ({"a": self.cells_a, "b": self.cells_b, "paired_a": self.paired_cells_a,
                       "paired_b": self.paired_cells_b} if self.grouped else
                      {"a": self.cells_a, "b": self.cells_b, "matched": self.matched,
                       "only_a": self.only_a, "only_b": self.only_b}),
            **({"pairs": {"matched": self.matched, "only_a": self.only_a,
                          "only_b": self.only_b}} if self.grouped else {}),
            "keys": list(self.keys), "varying": list(self.varying),
            "pairing": {"on": list(self.keys), "ignored": list(self.ignored),
                        "distributions": self.grouped,
                        "stats": list(STATS) if self.grouped else []},
            "axes_differ": self.axes_differ,
            "only_a_sample": self.only_a_sample, "only_b_sample": self.only_b_sample,
            "metrics": {m.metric: {"tolerance": m.tolerance, "changed": m.changed,
                                   "delta_min": m.delta_min, "delta_max": m.delta_max,
                                   "largest": m.largest, "where": m.where}
                        for m in self.metrics},
        }


def parse_tolerances(items: Sequence[str]) -> dict[str, float]:
    """``METRIC=X`` items as a mapping; raise :class:`CompareError` naming a bad item.

    >>> parse_tolerances(["overshoot=1", "reads_per_round=0.5"])
    {'overshoot': 1.0, 'reads_per_round': 0.5}
    """
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            raise CompareError(f"--tolerance: expected METRIC=X, got {item!r}")
        if name not in METRIC_NAMES:
            raise CompareError(f"--tolerance: unknown metric {name!r} "
                               f"(one of {', '.join(METRIC_NAMES)})")
        try:
            x = float(value)
        except ValueError:
            x = math.nan
        if not math.isfinite(x) or x < 0:
            raise CompareError(f"--tolerance: {name}: expected a non-negative number, "
                               f"got {value!r}")
        out[name] = x
    return out


def _scan(sweep: str | Path) -> tuple[pl.LazyFrame, pl.Schema]:
    try:
        lazy = scan(sweep)
    except StoreError as exc:
        raise CompareError(str(exc)) from None
    return lazy, lazy.collect_schema()


def _columns(schemas: tuple[pl.Schema, pl.Schema], dirs: tuple[str, str],
             names: Sequence[str], what: str) -> tuple[str, ...]:
    """The columns of ``names`` both tables have; raise when one has a column the other lacks
    or a different type in it."""
    (schema_a, schema_b), (a, b) = schemas, dirs
    in_a = [c for c in names if c in schema_a]
    in_b = [c for c in names if c in schema_b]
    if in_a != in_b:
        only_a, only_b = sorted(set(in_a) - set(in_b)), sorted(set(in_b) - set(in_a))
        raise CompareError(f"different {what}: only in {a}: {', '.join(only_a) or 'none'}; "
                           f"only in {b}: {', '.join(only_b) or 'none'}")
    for c in in_a:
        if schema_a[c] != schema_b[c] and not (schema_a[c].is_numeric()
                                               and schema_b[c].is_numeric()):
            raise CompareError(f"column {c!r} is {schema_a[c]} in {a} and {schema_b[c]} in {b}")
    return tuple(in_a)


#: The summaries of a metric over a pair's cells, when cells are paired on some axes: the
#: median is the metric's own column (``m__a``), the others ``m__{stat}__a``.
STATS: Final = ("median", "p95", "max", "nulls")
#: Parameters named together by ``--match-on`` and ``--ignore``: a schedule's name and the
#: death events it gives.
_TOGETHER: Final = {"schedule": "deaths", "deaths": "schedule"}


def _stat(m: str, stat: str, tag: str) -> str:
    return f"{m}__{tag}" if stat == "median" else f"{m}__{stat}__{tag}"


def _differs(a: pl.Expr, b: pl.Expr, tolerance: float) -> pl.Expr:
    if tolerance == 0:
        return ~a.eq_missing(b)
    return (a.is_null() != b.is_null()) | ((b - a).abs() > tolerance).fill_null(False)


def _changed(m: str, tolerance: float, grouped: bool = False) -> pl.Expr:
    """Whether a matched cell changed (beyond ``tolerance``) on ``m``; for a pair of
    distributions (``grouped``), whether its median, p95 or max did, or its share of nulls."""
    if not grouped:
        return _differs(pl.col(f"{m}__a"), pl.col(f"{m}__b"), tolerance)
    return pl.any_horizontal(
        *(_differs(pl.col(_stat(m, s, "a")), pl.col(_stat(m, s, "b")), tolerance)
          for s in ("median", "p95", "max")),
        _differs(pl.col(_stat(m, "nulls", "a")), pl.col(_stat(m, "nulls", "b")), 0))


def parse_axes(flag: str, text: str | None) -> tuple[str, ...] | None:
    """A comma-separated list of axes (``--match-on G,B``) as names; None for no flag.

    >>> parse_axes("--ignore", "U, G")
    ('U', 'G')
    """
    if text is None:
        return None
    names = tuple(n.strip() for n in text.split(","))
    if not any(names):
        return ()
    for n in names:
        if not n:
            raise CompareError(f"{flag}: an empty axis name in {text!r}")
    return names


def pair_axes(keys: Sequence[str], match_on: Sequence[str] | None,
              ignore: Sequence[str] | None) -> tuple[str, ...]:
    """The axes cells are paired on: ``match_on`` (every axis of ``keys`` when None) less
    ``ignore``, in the tables' order; a schedule's name and its deaths go together. Raise
    :class:`CompareError` naming an axis the sweeps do not have."""
    for flag, names in (("--match-on", match_on), ("--ignore", ignore)):
        for n in names or ():
            if n not in keys:
                raise CompareError(f"{flag}: unknown axis {n!r} (the sweeps' axes: "
                                   f"{', '.join(keys)})")

    def closed(names: Sequence[str]) -> set[str]:
        return {*names, *(_TOGETHER[n] for n in names if n in _TOGETHER)}

    chosen = closed(keys if match_on is None else match_on) - closed(ignore or ())
    return tuple(k for k in keys if k in chosen)


def _summarized(frame: pl.LazyFrame, on: Sequence[str], metrics: Sequence[str],
                tag: str) -> pl.LazyFrame:
    """One row per value of the pairing axes ``on``: its cells' count and, per metric, their
    median, p95 (nearest rank, :func:`reconsim.model.metrics.percentile`), max and share of
    nulls (the median and p95 over the others)."""
    key = pl.struct(list(on)) if on else pl.lit(0)
    return frame.group_by(key.hash(0).alias(_KEY[0]), key.hash(1).alias(_KEY[1])).agg(
        *(pl.col(k).first() for k in on),
        pl.len().alias(f"__n__{tag}"),
        *(e for m in metrics for e in (
            pl.col(f"{m}__{tag}").median().alias(_stat(m, "median", tag)),
            percentile_expr(pl.col(f"{m}__{tag}"), 0.95).cast(pl.Float64)
            .alias(_stat(m, "p95", tag)),
            pl.col(f"{m}__{tag}").max().cast(pl.Float64).alias(_stat(m, "max", tag)),
            (pl.col(f"{m}__{tag}").null_count() / pl.len()).alias(_stat(m, "nulls", tag)))))


def compare(a: str | Path, b: str | Path,
            tolerances: Mapping[str, float] | None = None, *,
            match_on: Sequence[str] | None = None,
            ignore: Sequence[str] | None = None) -> SweepComparison:
    """Compare sweep directories ``a`` and ``b``: cell by cell, or (``match_on``,
    ``ignore``) pair by pair.

    Cells are paired on every parameter, or on ``match_on`` (all axes when None) less
    ``ignore``. Paired on fewer than all, a *pair* is one value of the pairing axes present
    in both sweeps, and each side of it the distribution of a metric over that side's cells
    with that value (however many): compared by median, p95 (nearest rank), max and share
    of nulls.

    Raises :class:`CompareError` on a missing or unreadable directory, different metric or
    parameter columns, an unknown axis, duplicate cells, or nothing in common.
    """
    tolerances = dict(tolerances or {})
    (la, sa), (lb, sb) = _scan(a), _scan(b)
    # A user's controller's parameters are parameters like a built-in's: null for the other
    # controllers, so null where a table has none of its cells.
    users = tuple(dict.fromkeys((*user_param_columns(sa), *user_param_columns(sb))))
    la, sa = _with_nulls(la, sa, users, sb)
    lb, sb = _with_nulls(lb, sb, users, sa)
    keys = _columns((sa, sb), (str(a), str(b)), (*PARAM_COLUMNS, *users), "parameter columns")
    metrics = _columns((sa, sb), (str(a), str(b)), METRIC_NAMES, "metric sets")
    if not metrics:
        raise CompareError(f"{a}: no metric columns")
    for name in tolerances:
        if name not in metrics:
            raise CompareError(f"--tolerance: {name!r} is not a column of these sweeps")
    on = pair_axes(keys, match_on, ignore)
    grouped = on != keys

    def side(lazy: pl.LazyFrame, schema: pl.Schema, tag: str) -> pl.LazyFrame:
        casts = [pl.col(k).cast(sa[k]) for k in keys if schema[k] != sa[k]]
        cell = pl.struct(list(keys))
        return lazy.with_columns(*casts).select(
            cell.hash(0).alias(_KEY[0]), cell.hash(1).alias(_KEY[1]), *keys,
            *(pl.col(m).alias(f"{m}__{tag}") for m in metrics))

    left, right = side(la, sa, "a"), side(lb, sb, "b")
    # Matched on a 128-bit hash of all parameters (two seeds): the join carries two
    # integers per cell rather than every parameter, lists included. Two different cells
    # sharing both hashes is as likely as a collision of two random 128-bit numbers; two
    # cells of one table sharing them would show as a duplicate and stop the comparison.
    # Paired on some axes, each side is first reduced to one row per value of them.
    units = ((_summarized(left, on, metrics, "a"), _summarized(right, on, metrics, "b"))
             if grouped else (left, right))
    b_columns = [_stat(m, s, "b") for m in metrics for s in (STATS if grouped else ("median",))]
    matched = units[0].join(units[1].select(*_KEY, *(["__n__b"] if grouped else []),
                                            *b_columns), on=list(_KEY), how="inner")
    counts_q = matched.select(
        matched=pl.len(),
        cells_a=pl.col("__n__a").sum() if grouped else pl.len(),
        cells_b=pl.col("__n__b").sum() if grouped else pl.len(),
        **{f"changed__{m}": _changed(m, tolerances.get(m, 0), grouped).sum() for m in metrics},
        **{f"min__{m}": (pl.col(f"{m}__b") - pl.col(f"{m}__a")).min() for m in metrics},
        **{f"max__{m}": (pl.col(f"{m}__b") - pl.col(f"{m}__a")).max() for m in metrics},
        **{f"distinct__{k}": (pl.col(k).drop_nulls() if k in _NULL_IF_INAPPLICABLE
                              or k in users else pl.col(k)).n_unique() for k in on},
    )
    distinct_q = [frame.select(pl.len().alias("rows"),
                               pl.struct(list(_KEY)).n_unique().alias("cells"))
                  for frame in (left, right)]
    units_q = [u.select(pl.len()) for u in units] if grouped else []
    counts, dist_a, dist_b, *rest = _collect([counts_q, *distinct_q, *units_q])
    axes = _axes_between((a, b), (sa, sb), (left, right), keys, users)
    c = counts.row(0, named=True)
    distinct = {k: int(c[f"distinct__{k}"]) for k in on}
    (rows_a, cells_a), (rows_b, cells_b) = dist_a.row(0), dist_b.row(0)
    for path, rows, cells in ((a, rows_a, cells_a), (b, rows_b, cells_b)):
        if rows != cells:
            raise CompareError(f"{path}: {counted(rows - cells, 'duplicate cell')} "
                               "(same parameters)")
    units_a, units_b = (rest[0].item(), rest[1].item()) if grouped else (cells_a, cells_b)
    if c["matched"] == 0:
        what = "pairs" if grouped else "cells"
        apart = [x["axis"] for x in axes if x["axis"] in on]
        hint = "" if not apart else (
            f"; the sweeps differ on {', '.join(apart)}: --ignore {','.join(apart)} pairs "
            "the cells on the other axes")
        raise CompareError(f"no {what} in common: {counted(cells_a, 'cell')} in {a}, "
                           f"{cells_b:,} in {b}, matched on "
                           f"{', '.join(on) if grouped else 'every parameter'}"
                           f"{hint}")

    varying = tuple(k for k in on if distinct[k] > 1)
    # A schedule's name stands for its deaths in tables (they still match cells).
    shown = [k for k in varying if not (k == "deaths" and "schedule" in varying)]
    shown = shown or [k for k in on if k != "deaths"][:3]
    order = [k for k in shown if not isinstance(sa[k], pl.List)]
    # Paired on no axis, the whole sweeps are one pair: nothing is in one side only.
    samples = _collect([
        one.join(other.select(_KEY), on=list(_KEY), how="anti").select(shown)
        .sort(order).head(SAMPLE) for one, other in ((units[0], units[1]), (units[1], units[0]))
    ]) if shown else [pl.DataFrame(), pl.DataFrame()]
    panels = _panels(shown, distinct)
    scope = _Scope(shown=tuple(shown), order=tuple(order), panels=panels,
                   schema={k: sa[k] for k in on}, grouped=grouped)
    diffs = [_located(matched, MetricDiff(m, tolerances.get(m, 0.0), int(c[f"changed__{m}"]),
                                          c[f"min__{m}"], c[f"max__{m}"]), scope)
             for m in metrics]
    return SweepComparison(
        a=str(a), b=str(b), keys=on, varying=varying, panels=panels, metrics=tuple(diffs),
        cells_a=cells_a, cells_b=cells_b, matched=int(c["matched"]),
        only_a=units_a - int(c["matched"]), only_b=units_b - int(c["matched"]),
        only_a_sample=_flat(samples[0], scope).to_dicts(),
        only_b_sample=_flat(samples[1], scope).to_dicts(),
        shown=tuple(shown), axes=keys, grouped=grouped, axes_differ=axes,
        paired_cells_a=int(c["cells_a"]), paired_cells_b=int(c["cells_b"]),
    )


def _axes_between(paths: tuple[str | Path, str | Path], schemas: tuple[pl.Schema, pl.Schema],
                  frames: tuple[pl.LazyFrame, pl.LazyFrame], keys: Sequence[str],
                  users: Sequence[str]) -> list[dict[str, Any]]:
    """:func:`_axes_differ` of the two sweeps: each axis's values from the chunks' footers
    where they state them, else (a table written without facts) from the table."""
    axes = [k for k in keys if not (k == "deaths" and "schedule" in keys)]
    known = [_footer_values(path, schema, axes, users)
             for path, schema in zip(paths, schemas, strict=True)]
    missing = [[k for k in axes if k not in got] for got in known]
    read = iter(_collect([_axis_values(frame, todo, schemas[0], users)
                          for frame, todo in zip(frames, missing, strict=True) if todo]))
    for got, todo in zip(known, missing, strict=True):
        if todo:
            got.update(next(read).row(0, named=True))
    return _axes_differ(axes, known[0], known[1])


def _footer_values(sweep: str | Path, schema: pl.Schema, axes: Sequence[str],
                   users: Sequence[str]) -> dict[str, list[Any]]:
    """Per axis, the sorted distinct values of a sweep as its chunks' footers state them
    (:mod:`reconsim.sweep.facts`): none where a footer lists none (past its limit, or a
    table written without facts), and every axis when none can be read."""
    files = sorted((Path(sweep) / DATA).glob("part-*.parquet"))
    own = [k for k in axes if (k in PARAM_COLUMNS and k != "deaths") or k in users]
    try:
        footers = [pl.read_parquet_metadata(f).get(FACTS_KEY) for f in files]
    except (OSError, pl.exceptions.PolarsError):
        return {}
    if not footers or any(f is None for f in footers):
        return {}
    in_table = [k for k in own if k in _footer_columns(footers[0])]
    facts = merge([f for f in footers if f is not None], schema, in_table)
    if facts is None:
        return {}
    out: dict[str, list[Any]] = {k: [] for k in own if k not in in_table}  # null-filled
    for k in in_table:
        frame = facts.values[k]
        if frame is None:
            continue
        col = frame.select(flat(k, schema[k])).to_series()
        if k in _NULL_IF_INAPPLICABLE or k in users:
            col = col.drop_nulls()
        out[k] = col.unique().sort(nulls_last=False).to_list()
    return out


def _footer_columns(footer: str | None) -> set[str]:
    try:
        doc = json.loads(footer or "")
        return set(doc["columns"])
    except (ValueError, KeyError, TypeError):
        return set()


def _axis_values(frame: pl.LazyFrame, keys: Sequence[str], schema: pl.Schema,
                 users: Sequence[str]) -> pl.LazyFrame:
    """One row: per axis, the sorted distinct values of one sweep (as scalars; no null where
    the parameter does not apply)."""
    def values(k: str) -> pl.Expr:
        col = flat(k, schema[k])
        if k in _NULL_IF_INAPPLICABLE or k in users:
            col = col.drop_nulls()
        return col.unique().sort(nulls_last=False).implode().alias(k)

    return frame.select(values(k) for k in keys)


def _axes_differ(keys: Sequence[str], a: Mapping[str, list[Any]],
                 b: Mapping[str, list[Any]]) -> list[dict[str, Any]]:
    """The axes whose values differ between the two sweeps: per axis, the values only in
    A and only in B (each at most :data:`MAX_WHERE_VALUES`, then a count) and how many
    both have; a schedule's deaths are named by the schedule."""
    out = []
    for k in keys:
        if k == "deaths" and "schedule" in keys:
            continue
        in_a, in_b = list(a[k]), list(b[k])
        set_a, set_b = set(in_a), set(in_b)
        only_a = [v for v in in_a if v not in set_b]
        only_b = [v for v in in_b if v not in set_a]
        if only_a or only_b:
            out.append({"axis": k, "only_a": only_a[:MAX_WHERE_VALUES],
                        "only_b": only_b[:MAX_WHERE_VALUES],
                        "only_a_count": len(only_a), "only_b_count": len(only_b),
                        "common": len(in_a) - len(only_a)})
    return out


def _with_nulls(lazy: pl.LazyFrame, schema: pl.Schema, columns: Sequence[str],
                other: pl.Schema) -> tuple[pl.LazyFrame, pl.Schema]:
    """``lazy`` with a null column (of ``other``'s dtype) for each of ``columns`` it lacks,
    and its schema."""
    missing = [c for c in columns if c not in schema]
    if not missing:
        return lazy, schema
    lazy = lazy.with_columns(pl.lit(None, dtype=other[c]).alias(c) for c in missing)
    return lazy, lazy.collect_schema()


def _collect(queries: Sequence[pl.LazyFrame]) -> list[pl.DataFrame]:
    """Run queries that each reduce the join to an aggregate or a bounded sample, together
    and on polars' streaming engine: the tables pass through in batches."""
    try:
        return pl.collect_all(queries, engine="streaming")
    except (pl.exceptions.PolarsError, OSError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CompareError(f"cannot read the tables: {first}") from None


def _panels(shown: Sequence[str], distinct: Mapping[str, int]) -> tuple[str, ...]:
    """Up to two varying axes (besides G and U) that split the heatmap into panels: the
    controller first, then those with the fewest values, each with at most
    :data:`MAX_PANEL_VALUES`."""
    candidates = [k for k in shown if k not in ("G", "U") and 1 < distinct[k] <= MAX_PANEL_VALUES]
    return tuple(sorted(candidates, key=lambda k: (k != "controller", distinct[k],
                                                   shown.index(k)))[:2])


@dataclass(frozen=True)
class _Scope:
    """What the per-metric queries show: parameters (in order), sort keys, panels, types."""

    shown: tuple[str, ...]
    order: tuple[str, ...]
    panels: tuple[str, ...]
    schema: Mapping[str, pl.DataType]
    grouped: bool = False


def _flat(frame: pl.DataFrame, scope: _Scope) -> pl.DataFrame:
    """A small result with its list parameters (deaths, restart_at) as text."""
    return frame.with_columns(flat(k, scope.schema[k]) for k in frame.columns
                              if k in scope.schema)


def _located(matched: pl.LazyFrame, diff: MetricDiff, scope: _Scope) -> MetricDiff:
    """``diff`` with its largest changes, ``where`` and heatmap, when some cell changed."""
    if diff.changed == 0:
        return diff
    m, tolerance, shown, panels = diff.metric, diff.tolerance, scope.shown, scope.panels
    delta = (pl.col(f"{m}__b") - pl.col(f"{m}__a")).alias("delta")
    hit = _changed(m, tolerance, scope.grouped).alias("changed")
    extra = ([pl.col("__n__a").alias("cells_a"), pl.col("__n__b").alias("cells_b"),
              *(pl.col(_stat(m, s, t)).alias(f"{s}_{t}") for s in ("p95", "max", "nulls")
                for t in "ab")] if scope.grouped else [])
    cells = matched.with_columns(delta, hit)
    largest_q = (cells.filter(pl.col("changed"))
                 .with_columns(pl.col("delta").abs().fill_null(math.inf).alias("__size"))
                 .sort(["__size", *scope.order], descending=[True, *[False] * len(scope.order)],
                       nulls_last=True)
                 .head(LARGEST)
                 .select(*shown, pl.col(f"{m}__a").alias("a"), pl.col(f"{m}__b").alias("b"),
                         "delta", *extra))
    where_q = [cells.group_by(k).agg(pl.col("changed").sum().alias("cells"),
                                     pl.len().alias("of"))
               for k in shown]
    grid = [k for k in ("G", "U") if k in scope.schema]
    heat_q = cells.group_by([*grid, *panels]).agg(
        pl.len().alias("cells"), pl.col("changed").sum().alias("changed"),
        pl.col("delta").min().alias("delta_min"), pl.col("delta").max().alias("delta_max"),
    ) if grid else None
    frames = _collect([largest_q, *where_q, *([heat_q] if heat_q is not None else [])])
    where = []
    for k, raw in zip(shown, frames[1:1 + len(shown)], strict=True):
        counted = _flat(raw, scope).sort(k, nulls_last=False)
        hits = counted.filter(pl.col("cells") > 0)
        where.append({
            "axis": k, "distinct": hits.height, "of_distinct": counted.height,
            "truncated": hits.height > MAX_WHERE_VALUES,
            "min": hits[k].min(), "max": hits[k].max(),
            "values": [] if hits.height > MAX_WHERE_VALUES else hits.to_dicts(),
        })
    heatmap = _flat(frames[-1], scope).sort([*grid, *panels]) if heat_q is not None else None
    return dataclasses.replace(diff, largest=_flat(frames[0], scope).to_dicts(), where=where,
                               heatmap=heatmap)


def _num(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, float):
        return f"{v:,.6g}" if not v.is_integer() else f"{v:,.0f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def where_text(where: Sequence[Mapping[str, Any]], limit: int = 12) -> list[tuple[str, str]]:
    """Per axis, the values of the changed cells as ``value (changed of cells)``."""
    rows = []
    for w in where:
        if w["truncated"]:
            text = (f"{w['distinct']} of {w['of_distinct']} values, "
                    f"{_num(w['min'])} to {_num(w['max'])}")
        else:
            parts = [f"{_num(v[w['axis']])} ({v['cells']:,} of {v['of']:,})"
                     for v in w["values"][:limit]]
            more = len(w["values"]) - limit
            text = ", ".join(parts) + (f", … {more} more" if more > 0 else "")
            if w["distinct"] == w["of_distinct"]:
                text = f"every value: {text}"
        rows.append((w["axis"], text))
    return rows


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], markdown: bool) -> list[str]:
    if markdown:
        esc = [[str(x).replace("|", "\\|") for x in r] for r in rows]
        return [f"| {' | '.join(head)} |", "|" + "---|" * len(head),
                *(f"| {' | '.join(r)} |" for r in esc)]
    widths = [max(len(str(x)) for x in col) for col in zip(head, *rows, strict=True)]
    return ["  ".join(str(x).ljust(w) for x, w in zip(r, widths, strict=True)).rstrip()
            for r in (head, *rows)]


def largest_columns(grouped: bool) -> list[tuple[str, str]]:
    """The figures of a row of ``MetricDiff.largest`` beside its parameters, with their
    headings: a cell's value in A and B, or a pair's cells and summaries on each side."""
    if not grouped:
        return [("a", "value in A"), ("b", "value in B"), ("delta", "B - A")]
    return [("cells_a", "cells A"), ("cells_b", "cells B"), ("a", "median A"),
            ("b", "median B"), ("delta", "B - A (median)"), ("p95_a", "p95 A"),
            ("p95_b", "p95 B"), ("max_a", "max A"), ("max_b", "max B"),
            ("nulls_a", "null share A"), ("nulls_b", "null share B")]


def _values(values: Sequence[Any], total: int) -> str:
    shown = ", ".join(_num(v) for v in values)
    more = total - len(values)
    return (shown + (f", … {more} more" if more > 0 else "")) or "none"


def axes_text(c: SweepComparison) -> list[tuple[str, str, str, str]]:
    """Per axis whose values differ between the sweeps: (axis, values only in A, values
    only in B, how many both have)."""
    return [(x["axis"], _values(x["only_a"], x["only_a_count"]),
             _values(x["only_b"], x["only_b_count"]), f"{x['common']:,}")
            for x in c.axes_differ]


def pairing_text(c: SweepComparison) -> str:
    """How cells were paired, in one sentence."""
    if not c.grouped:
        return "Cells matched on every parameter."
    def named(axes: Sequence[str]) -> str:
        return ", ".join(k for k in axes if not (k == "deaths" and "schedule" in axes))

    how = ("a pair is one value of the pairing axes present in both sweeps, each side the "
           "metric's median, p95 (nearest rank), max and share of nulls over that side's cells "
           "with that value.")
    if not c.keys:
        return f"Cells paired on no axis: each sweep is one distribution; {how}"
    if len(c.ignored) <= len(c.keys):
        return (f"Cells paired on every axis but {named(c.ignored)}, compared as "
                f"distributions: {how}")
    return (f"Cells paired on {named(c.keys)}; every other axis compared as distributions: "
            f"{how}")


def render(c: SweepComparison, markdown: bool = False) -> str:
    """The comparison as text: markdown (for a job summary) or aligned columns."""
    h2, h3 = ("## ", "### ") if markdown else ("", "")
    differ = sum(m.changed > 0 for m in c.metrics)
    unit = "pair" if c.grouped else "cell"
    matched = (f"{counted(c.matched, 'pair')} matched ({c.paired_cells_a:,} cells of "
               f"{c.cells_a:,} in {c.a}, {c.paired_cells_b:,} of {c.cells_b:,} in {c.b}); "
               if c.grouped else f"{counted(c.matched, 'cell')} matched on their parameters; ")
    lines = [f"{h2}{c.a} → {c.b}: {unit}s compared", "", pairing_text(c),
             f"{matched}{c.only_a:,} only in {c.a}, {c.only_b:,} only in {c.b}.",
             ("Identical on every metric." if c.identical else
              f"{differ} of {counted(len(c.metrics), 'metric')} "
              f"{plural(differ, 'differs', 'differ')}."),
             ""]
    if c.axes_differ:
        lines += [f"{h3}Axes that differ between the sweeps", ""]
        lines += _table(["axis", f"only in {c.a}", f"only in {c.b}", "values in both"],
                        axes_text(c), markdown)
        lines += [""]
    else:
        lines += ["Both sweeps have the same values on every axis.", ""]
    rows = [[m.metric, f"{m.changed:,}", f"{m.changed / c.matched:.1%}", _num(m.tolerance),
             _num(m.delta_min), _num(m.delta_max)] for m in c.metrics]
    delta = "B - A (median)" if c.grouped else "B - A"
    lines += _table(["metric", f"{unit}s changed", "share", "tolerance", f"smallest {delta}",
                     f"largest {delta}"], rows, markdown)
    for label, n, sample in ((c.a, c.only_a, c.only_a_sample), (c.b, c.only_b, c.only_b_sample)):
        if n:
            shown = list(c.shown)
            lines += ["", f"{h3}{unit.capitalize()}s only in {label} ({n:,}; "
                      f"the first {len(sample)})", ""]
            lines += _table(shown, [[_num(r[k]) for k in shown] for r in sample], markdown)
    figures = largest_columns(c.grouped)
    for m in c.metrics:
        if not m.changed:
            continue
        lines += ["", f"{h3}{m.metric}: {counted(m.changed, unit)} changed", ""]
        if m.where:
            lines += _table(["axis", f"where the changed {unit}s lie (changed of matched)"],
                            where_text(m.where), markdown)
        if m.largest:
            head = [k for k in m.largest[0] if k not in dict(figures)]
            lines += ["", f"Largest changes (of {m.changed:,}):", ""]
            lines += _table([*head, *(title for _, title in figures)],
                            [[_num(r[k]) for k in (*head, *dict(figures))]
                             for r in m.largest[:5 if markdown else LARGEST]], markdown)
    return "\n".join(lines) + "\n"


def output_name(a: str | Path, b: str | Path) -> str:
    """The page's default file name, ``A_vs_B.html`` from the directories' names.

    >>> output_name("results/seed", "other/seed2/")
    'seed_vs_seed2.html'
    """
    return f"{Path(a).resolve().name}_vs_{Path(b).resolve().name}.html"
