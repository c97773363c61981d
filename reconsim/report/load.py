"""A sweep's output directory as one lazy table: :func:`load_sweep`.

The report reads ``DIR/data/*.parquet`` (one row per cell) and ``DIR/sweep.json``. The
table is never loaded whole: :class:`Sweep` holds a lazy query over the Parquet parts, and
every figure is an aggregate of it (:mod:`.query`). Every verdict checks the law as
:mod:`reconsim.model.laws` states it today: the stored law columns are read where the
chunks' footers say today's laws computed them (:mod:`reconsim.sweep.facts`) or where a
first read finds every row equal to the law's; otherwise the law columns are recomputed
from :func:`reconsim.model.laws.law_columns`, and the cells whose stored columns say
otherwise are counted, never silently overwritten.

A cell's responses to its events (:data:`~reconsim.model.metrics.RESPONSES`) stay a list
of records, one per event, never flattened; where the table has them and a ``scale``
column, the law per step (:func:`reconsim.model.laws.step_columns`) is computed from the
lists as stored, in hidden columns, as the law columns are. A table written before either
existed has neither.
"""


from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import polars as pl

from reconsim.model.laws import (
    delay_reads,
    delay_tables,
    law_columns,
    law_exclusion,
    step_columns,
)
from reconsim.model.metrics import METRIC_NAMES, RESPONSES
from reconsim.model.params import (
    BY_NAME,
    DEFAULTS,
    NAME_COLUMNS,
    PARAM_NAMES,
    WORLD_PARAMS,
)
from reconsim.model.studies.seed001 import BASE
from reconsim.report.query import Deaths, collect, collect_all, in_order
from reconsim.report.source import ReportError, SweepSource
from reconsim.sweep.facts import FACTS_KEY, TableFacts, merge
from reconsim.sweep.store import cell_ids, chunk_index
from reconsim.sweep.table import flat

#: The columns :func:`~reconsim.model.laws.law_columns` derives from a cell's parameters
#: and overshoot.
LAW_COLUMNS: Final = ("law_overshoot", "law_holds", "above_boundary", "law_overshoot_worst",
                      "above_boundary_worst")
#: Prefix of the law columns recomputed from the stored parameters, before they are shown.
_FRESH: Final = "__fresh_"
#: Why the law leaves a ledger row unchecked (:func:`reconsim.model.laws.law_exclusion`).
LAW_EXCLUDED: Final = "__law_excluded"

#: Parameters the report leaves out where every cell holds their default (seed 001's world,
#: from a cold start, desired never changing): no axis, no column of the example cells.
QUIET_AT_DEFAULT: Final = (*WORLD_PARAMS, "initial", "scale")

#: Axes every sweep has, in the order the report lists them; extra parameter columns follow.
CORE_AXES: Final = ("controller", "G", "U", "B", "desired", "schedule", "duration", "ledger_base")

#: Hidden column: whether a cell's deaths are exactly seed 001's (two copies at second 300).
SEED_DEATHS: Final = "__seed_deaths"
#: Hidden column: a cell's id, its number in the sweep's grid (:func:`reconsim.sweep.store.
#: cell_ids`: from its chunk file and its row there); null where the report cannot say (a
#: table on object storage whose sweep did not finish, a ``sweep.json`` without
#: ``chunk_size``).
CELL_ID: Final = "__cell"
#: Hidden column: a cell's own death events, as stored (a random schedule's differ from seed
#: to seed, so its name does not say them); read only by queries that select it.
ROW_DEATHS: Final = "__deaths"
#: Hidden column: a cell's changes of desired (``scale``), as stored: a list of (at,
#: desired) records (the ``scale`` axis is flattened to text); read only by queries that
#: select it.
ROW_SCALE: Final = "__scale"
#: Hidden column: a cell's template changes (``rollout``), as stored: a list of seconds (the
#: ``rollout`` axis is flattened to text); read only by queries that select it.
ROW_ROLLOUT: Final = "__rollout"
#: The hidden columns of the law per step (:func:`reconsim.model.laws.step_columns`), where
#: the table has ``scale`` and ``responses``.
STEP_COLUMNS: Final = tuple(e.meta.output_name() for e in step_columns())


@dataclass(frozen=True)
class AxisFacts:
    """One axis over the whole table: its distinct values (sorted, null first) and its nulls."""

    values: tuple[Any, ...]
    nulls: int


@dataclass(frozen=True)
class Sweep:
    """One sweep's output: its ``sweep.json``, a lazy query over its cells (axes flattened,
    law columns recomputed), the axes they vary on, and the few facts every section needs
    (counted once, on loading)."""

    meta: dict[str, Any]
    table: pl.LazyFrame
    axes: tuple[str, ...]
    schedules: dict[str, Deaths]
    stale_law_cells: int
    cells: int
    axis_facts: dict[str, AxisFacts]
    #: The distinct rows of controller and the variant parameters (as stored: lists as
    #: lists), where the chunks' footers say; for :func:`variant_params`.
    variants: pl.DataFrame | None = None
    #: The sweep's folder as a command names it (``reconsim run --from FOLDER``): as given,
    #: or relative to the current folder when under it; None on object storage.
    folder: str | None = None

    @property
    def sizes(self) -> dict[str, int]:
        """Each axis's number of distinct values (null counting as one)."""
        return {a: len(f.values) for a, f in self.axis_facts.items()}

    @property
    def controllers(self) -> list[str]:
        """The controllers present, in :func:`in_order`."""
        return in_order(self.axis_facts["controller"].values)


def load_sweep(sweep_dir: Any) -> Sweep:
    """Open ``sweep_dir/sweep.json`` and a lazy query over every ``sweep_dir/data/*.parquet``.

    ``sweep_dir`` is a local path, a ``file://`` URL or an object-store URL (see
    :mod:`.source`). Raises :class:`ReportError` naming the path when a file is missing or
    unreadable, or when a column the report needs is absent. Its size, each axis's nulls
    and values, the death schedules and whether the stored law columns are today's come
    from the chunks' footers (:mod:`reconsim.sweep.facts`) where every chunk has them;
    otherwise from the table: its size, the stale law cells and each axis's nulls in one
    query, each axis's values in one small query each, and the death schedules.
    """
    source = sweep_dir if isinstance(sweep_dir, SweepSource) else SweepSource.parse(sweep_dir)
    meta = source.read_meta()
    scan = _numbered(source, meta)
    where_data = source.name("data")
    try:
        schema = scan.collect_schema()
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise _unreadable(source, exc) from None
    if "schedule" not in schema:
        scan = scan.with_columns(schedule=schedule_names(pl.col("deaths")))
        schema = scan.collect_schema()
    needed = [*CORE_AXES, "deaths", *METRIC_NAMES]
    missing = [c for c in needed if c not in schema]
    if missing:
        raise ReportError(f"{where_data}: missing column(s) {', '.join(missing)}")
    # Parameters the file lacks (a sweep written before they existed) took the model's
    # defaults; hidden columns carry those for reconsim.model.laws, and they are no axes.
    # So are the world parameters (and initial) where every cell holds the default: seed
    # 001's world, from a cold start.
    candidates = axis_names(schema.names())
    world = [p for p in QUIET_AT_DEFAULT if p in schema]
    kept, steps = _responses(schema)  # lists, read before they are flattened
    scan, hidden = _with_defaults(scan, schema)
    # The laws read the parameters as stored (lists as lists), before they are flattened.
    scan = scan.with_columns(*(e.name.prefix(_FRESH) for e in law_columns()),
                             law_exclusion().alias(LAW_EXCLUDED),  # why a row is unchecked
                             *steps)
    # The delay tables' reads, for law_readings, and whether a row has a table at all.
    scan = scan.with_columns(*delay_reads(), *delay_tables())
    reads = [e.meta.output_name() for e in (*delay_reads(), *delay_tables())]
    schema = scan.collect_schema()
    stored = [c for c in LAW_COLUMNS if c in schema]
    footer = (_footer_facts(source, schema, candidates)
              if not hidden and len(stored) == len(LAW_COLUMNS) else None)
    try:
        cells, stale, nulls, off = _opening_facts(scan, footer, stored, candidates, world)
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise _unreadable(source, exc) from None
    if cells == 0:
        raise ReportError(f"{where_data}: the table has no rows")
    constant = _constant(candidates, world, cells, nulls, off)
    # a delay table's name is no axis where no cell has a table
    constant += [n for n, p in NAME_COLUMNS.items() if p in constant and n in candidates]
    axes = tuple(a for a in candidates if a not in constant)
    hidden += constant
    # Only the columns flat() changes: re-selecting a plain column would stop polars from
    # pushing a filter on it down to the Parquet scan.
    scan = scan.with_columns(
        *(flat(a, schema[a]) for a in (*axes, *hidden) if _needs_flat(schema[a])),
        has_deaths(BASE.deaths).alias(SEED_DEATHS),
        pl.col("deaths").alias(ROW_DEATHS),
        pl.col("scale").alias(ROW_SCALE),
        pl.col("rollout").alias(ROW_ROLLOUT),
    )
    if stale == 0 and len(stored) == len(LAW_COLUMNS):
        # Every row's stored law columns equal the law's (compared above, or computed by
        # today's laws, as the footers say): later queries read them instead of deriving
        # them again (that cost more than reading the row).
        base = scan.select(*axes, *METRIC_NAMES, *LAW_COLUMNS, *hidden, *reads, *kept,
                           SEED_DEATHS, ROW_DEATHS, ROW_SCALE, ROW_ROLLOUT, LAW_EXCLUDED, CELL_ID)
        table = base
    else:
        base = scan.select(*axes, *METRIC_NAMES, *stored, *hidden, *reads, *kept,
                           SEED_DEATHS, ROW_DEATHS, ROW_SCALE, ROW_ROLLOUT, LAW_EXCLUDED, CELL_ID,
                           *(_FRESH + c for c in LAW_COLUMNS))
        table = base.drop(*stored).rename({_FRESH + c: c for c in LAW_COLUMNS})
    known = {} if footer is None else {
        a: v.select(flat(a, schema[a])).unique() for a in axes
        if (v := footer.values[a]) is not None}
    try:
        schedules = _schedules(scan if footer is None or footer.schedules is None
                               else footer.schedules.lazy())
        asked = [a for a in axes if a not in known]
        values = dict(zip(asked, collect_all([base.select(pl.col(a).unique()) for a in asked]),
                          strict=True)) | known
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise _unreadable(source, exc) from None
    return Sweep(
        meta=meta,
        table=table,
        axes=axes,
        schedules=schedules,
        stale_law_cells=stale,
        cells=cells,
        axis_facts={a: AxisFacts(values=tuple(values[a][a].sort(nulls_last=False).to_list()),
                                 nulls=nulls[a])
                    for a in axes},
        variants=None if footer is None else footer.variants,
        folder=None if source.remote else _folder(source.local),
    )


def _responses(schema: pl.Schema) -> tuple[list[str], list[pl.Expr]]:
    """The columns kept beside the axes for the responses to events, and the expressions of
    the law per step: ``responses`` where the table has it (a list of records, never
    flattened), and where it also has ``scale``, the hidden :data:`STEP_COLUMNS`
    (:func:`~reconsim.model.laws.step_columns`, from the lists as stored); none for a table
    written before them."""
    if RESPONSES not in schema:
        return [], []
    if "scale" not in schema:
        return [RESPONSES], []
    return [RESPONSES, *STEP_COLUMNS], step_columns()


def _folder(path: Path) -> str:
    """How a command names the folder ``path``: relative to the current folder when under
    it, else as it is."""
    with contextlib.suppress(ValueError, OSError):
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    return str(path)


def _numbered(source: SweepSource, meta: dict[str, Any]) -> pl.LazyFrame:
    """The scan of every chunk file, with each row's cell id (:data:`CELL_ID`) from its
    position: local chunk files are listed, so their gaps (a sweep still running) are
    known; on object storage, only a finished sweep's ids are known (every chunk there)."""
    scan = source.scan_parts()
    size = meta.get("chunk_size")
    if not isinstance(size, int) or size < 1:
        return scan.with_columns(pl.lit(None, dtype=pl.Int64).alias(CELL_ID))
    if source.remote:
        if meta.get("status") != "complete":
            return scan.with_columns(pl.lit(None, dtype=pl.Int64).alias(CELL_ID))
        chunks = list(range(int(meta.get("chunks") or 0)))
    else:
        indices = [chunk_index(p) for p in source.part_files()]
        if any(i is None for i in indices):  # a file no sweep wrote: no position says
            return scan.with_columns(pl.lit(None, dtype=pl.Int64).alias(CELL_ID))
        chunks = [i for i in indices if i is not None]
    row = scan.with_row_index(CELL_ID)
    return row.with_columns(cell_ids(pl.col(CELL_ID), chunks, size).alias(CELL_ID))


def _opening_facts(scan: pl.LazyFrame, footer: TableFacts | None, stored: Sequence[str],
                   candidates: Sequence[str], world: Sequence[str]
                   ) -> tuple[int, int, dict[str, int], dict[str, bool]]:
    """The table's size, its stale law cells, each candidate axis's nulls and whether each
    world parameter ever leaves its default: from the chunks' ``footer`` facts where they
    say, and from one read of the table for the rest (flattening keeps a null a null)."""
    if footer is not None:
        # Every chunk's footer states its rows, its columns' values and nulls, and that
        # today's laws computed its law columns.
        unknown = [p for p in world if footer.values[p] is None]
        off = {p: bool(v.select(_off_default(p).any()).item())
               for p, v in footer.values.items() if p in world and v is not None}
        if unknown:
            read = collect(scan.select(_off_default(p).any().alias(p) for p in unknown))
            off |= {p: bool(read[p].item()) for p in unknown}
        return footer.rows, 0, footer.nulls, off
    read = collect(scan.select(
        pl.len().alias("__cells"),
        _stale_law_cells(stored).alias("__stale"),
        *(pl.col(a).null_count().alias(f"{a}__nulls") for a in candidates),
        *(_off_default(p).any().alias(f"{p}__off") for p in world),
    ))
    return (int(read["__cells"].item()), int(read["__stale"].item() or 0),
            {a: int(read[f"{a}__nulls"].item()) for a in candidates},
            {p: bool(read[f"{p}__off"].item()) for p in world})


def _footer_facts(source: SweepSource, schema: pl.Schema,
                  columns: Sequence[str]) -> TableFacts | None:
    """The facts every chunk's footer states about ``columns`` (:mod:`reconsim.sweep.facts`),
    merged; None when a chunk has none (or other ones), or the table is on object storage
    (where each footer is a request). Raises :class:`ReportError` naming a chunk file that
    is not Parquet."""
    if source.remote:
        return None
    footers = []
    for part in source.part_files():
        try:
            text = pl.read_parquet_metadata(part).get(FACTS_KEY)
        except (OSError, pl.exceptions.PolarsError) as exc:
            raise ReportError(f"{part}: unreadable: {_first_line(exc)}") from None
        if text is None:
            return None
        footers.append(text)
    return merge(footers, schema, columns)


def _off_default(name: str) -> pl.Expr:
    """Which rows hold another value of parameter ``name`` than its default (a null
    counts), as :meth:`~reconsim.model.params.Parameter.off_default` says, cheaper where the
    default is an empty list: comparing lists of structs row by row cost a second per
    million rows, their lengths next to nothing."""
    if DEFAULTS[name] == ():
        column = pl.col(name)
        return column.is_null() | (column.list.len() > 0)
    return BY_NAME[name].off_default()


def _schedules(scan: pl.LazyFrame) -> dict[str, Deaths]:
    """Each schedule's death events, those of its longest run (a schedule's events can
    depend on the duration): the (schedule, duration) pairs, then one row's deaths per
    schedule, read until the first row of it (reading every row's list of structs to pick
    one per group took ten times longer)."""
    pairs = collect(scan.group_by("schedule", "duration").agg(pl.len())).sort(
        "schedule", "duration", descending=[False, True]).unique(
        "schedule", keep="first", maintain_order=True)
    out = {}
    for name, duration, _ in pairs.iter_rows():
        first = collect(scan.filter(pl.col("schedule").eq_missing(name),
                                    pl.col("duration").eq_missing(duration))
                        .select("deaths").head(1))
        out[name] = tuple((e["at"], e["count"]) for e in first["deaths"].to_list()[0])
    return out


def _unreadable(source: SweepSource, exc: BaseException) -> ReportError:
    """The error for a table polars could not read (``exc``): naming the first chunk file
    whose footer cannot be read, where one cannot (a local table), else the data folder."""
    if not source.remote:
        for part in source.part_files():
            try:
                pl.read_parquet_metadata(part)
            except (OSError, pl.exceptions.PolarsError) as bad:
                return ReportError(f"{part}: unreadable: {_first_line(bad)}")
    return ReportError(f"{source.name('data')}: unreadable: {_first_line(exc)}")


def _first_line(exc: BaseException) -> str:
    """An exception's message, first line only (polars appends hints and plans)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _constant(candidates: Sequence[str], world: Sequence[str], cells: int,
              nulls: Mapping[str, int], off: Mapping[str, bool]) -> list[str]:
    """The candidate axes that are no axis: a world parameter every cell holds at its
    default, and a parameter null in every row (it applies to none of the table's
    controllers; unless a null is one of its values: an unlimited cap)."""
    constant = [p for p in world if not off[p]]
    return constant + [a for a in candidates if nulls.get(a) == cells and a not in constant
                       and not (a in BY_NAME and BY_NAME[a].kind.null_is_value)]


def has_deaths(deaths: Deaths) -> pl.Expr:
    """Whether a row's ``deaths`` are exactly ``deaths`` (a null row's are not), event by
    event: comparing the lists of structs whole cost a second per million rows."""
    column = pl.col("deaths")
    same = column.list.len() == len(deaths)
    for i, (at, count) in enumerate(deaths):
        event = column.list.get(i, null_on_oob=True).struct
        same = same & (event.field("at") == at) & (event.field("count") == count)
    return same.fill_null(value=False)


def _with_defaults(scan: pl.LazyFrame, schema: pl.Schema) -> tuple[pl.LazyFrame, list[str]]:
    """``scan`` with a constant column for each parameter the file lacks (its default) and
    each delay table's name column (null: a table written before they had names has none),
    and the names of those columns."""
    hidden = [p for p in PARAM_NAMES if p not in schema and p != "deaths"]
    unnamed = [n for n in NAME_COLUMNS if n not in schema]
    return scan.with_columns(*(_default_column(p) for p in hidden),
                             *(pl.lit(None, dtype=pl.String).alias(n) for n in unnamed)), [
        *hidden, *unnamed]


def _default_column(name: str) -> pl.Expr:
    """A constant column holding parameter ``name``'s default value."""
    value = DEFAULTS[name]
    if value is None:
        return pl.lit(None, dtype=pl.Int64).alias(name)
    if isinstance(value, tuple):  # a list parameter: its column's own type (a list of structs)
        kind = BY_NAME[name].kind
        return pl.lit(pl.Series(name, [kind.to_column(value)], dtype=kind.dtype)).first().alias(
            name)
    return pl.lit(value).alias(name)


def _needs_flat(dtype: pl.DataType) -> bool:
    """Whether :func:`flat` changes a column of this type."""
    return isinstance(dtype, (pl.Array, pl.List, pl.Struct, pl.Categorical, pl.Enum))


def _stale_law_cells(stored: Sequence[str]) -> pl.Expr:
    """How many cells' stored law columns differ from what :mod:`.laws` gives now (the
    ``_FRESH`` columns)."""
    if not stored:
        return pl.lit(0, dtype=pl.UInt32)
    return pl.any_horizontal(*(~pl.col(c).eq_missing(pl.col(_FRESH + c)) for c in stored)).sum()


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
    figures = {*METRIC_NAMES, *LAW_COLUMNS, RESPONSES, "deaths", SEED_DEATHS, CELL_ID}
    extra = [c for c in columns if c not in figures and c not in CORE_AXES]
    return (*(c for c in CORE_AXES if c in columns), *extra)


