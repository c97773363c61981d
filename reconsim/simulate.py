"""Cells in, metrics out: the polars face of the kernel, and ``run_cell`` for one cell."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from reconsim.kernel import OUT_COLUMNS, simulate_arrays
from reconsim.kernel_world import WORLD_OUT_COLUMNS, simulate_world_arrays
from reconsim.params import (
    CONTROLLERS,
    DEFAULTS,
    FAULT_KINDS,
    INT_PARAMS,
    METRIC_NAMES,
    PARAMS,
    UNLIMITED,
    WORLD_PARAMS,
    Cell,
    applies,
    check_faults,
    check_windows,
)

#: The polars dtype of the ``deaths`` column.
DEATHS_DTYPE = pl.List(pl.Struct({"at": pl.Int64, "count": pl.Int64}))
#: The polars dtype of the ``lag`` column: the windows of a lag schedule.
WINDOWS_DTYPE = pl.List(pl.Struct({"from": pl.Int64, "to": pl.Int64, "extra": pl.Int64}))
#: The polars dtype of the ``create_faults`` column: the events of a fault schedule.
FAULTS_DTYPE = pl.List(pl.Struct({"at": pl.Int64, "count": pl.Int64, "kind": pl.String}))
#: Fields of the records in each list-of-struct kind.
_RECORD_FIELDS = {"deaths": ("at", "count"), "windows": ("from", "to", "extra"),
                  "faults": ("at", "count", "kind")}

#: The polars dtype of each parameter column, derived from its kind.
PARAM_DTYPES: dict[str, pl.DataType] = {
    f.name: {"int": pl.Int64(), "choice": pl.String(), "cap": pl.Int64(), "gain": pl.Float64(),
             "times": pl.List(pl.Int64), "deaths": DEATHS_DTYPE, "windows": WINDOWS_DTYPE,
             "faults": FAULTS_DTYPE, "rate": pl.Float64(), "bool": pl.Boolean(),
             }[f.metadata["kind"]]
    for f in PARAMS
}
_META = {f.name: f.metadata for f in PARAMS}
_KINDS = {name: meta["kind"] for name, meta in _META.items()}


def column_value(name: str, value: Any) -> Any:
    """A checked parameter value as a frame cell: records as structs, tuples as lists.

    >>> column_value("lag", ((10, 20, 5),))
    [{'from': 10, 'to': 20, 'extra': 5}]
    """
    fields = _RECORD_FIELDS.get(_KINDS[name])
    if fields is not None:
        return [dict(zip(fields, record, strict=True)) for record in value]
    return list(value) if isinstance(value, tuple) else value

#: Parameter columns a frame must carry; the others fall back to their defaults.
REQUIRED_COLUMNS = tuple(f.name for f in PARAMS if f.metadata["required"])


def run_cell(**params: Any) -> dict[str, Any]:
    """Simulate one cell with the kernel and return its metrics.

    Keyword arguments are the fields of :class:`reconsim.Cell`, with its defaults.

    >>> m = run_cell(controller="ledger", G=60)
    >>> m["created"], m["unneeded"], m["delete_commands"], m["overshoot"]
    (40, 32, 128, 24)
    """
    cell = Cell(**params)
    frame = simulate(cells_frame([cell]))
    return {name: frame[name][0] for name in METRIC_NAMES}


def cells_frame(cells: list[Cell]) -> pl.DataFrame:
    """A frame with one row per cell, in the column layout :func:`simulate` reads;
    a parameter that does not apply to a cell's controller is null."""

    def value(cell: Cell, name: str) -> Any:
        if not applies(name, cell.controller):
            return None
        return column_value(name, getattr(cell, name))

    return pl.DataFrame({f.name: [value(c, f.name) for c in cells] for f in PARAMS},
                        schema=PARAM_DTYPES)


def simulate(cells: pl.DataFrame) -> pl.DataFrame:
    """Simulate every row of ``cells``; return its columns plus one column per metric.

    Parameter columns: ``controller`` (str), ``G``, ``U``, ``B``, ``desired``, ``duration``
    (integers) and ``deaths`` (list of struct{at, count}) are required; ``ledger_base``,
    ``observe`` (str), ``max_per_round`` (integer, null for no cap), ``ttl`` (integer),
    ``restart_at`` (list of integers) and issue 8's parameters (``B_spread``, ``G_spread``,
    ``U_jitter``, ``seed``, ``grace`` integers; ``delete_order``, ``trigger`` strings;
    ``fail_rate``, ``lost_rate`` floats; ``slow_start`` boolean; ``lag`` list of
    struct{from, to, extra}; ``create_faults`` list of struct{at, count, kind}) are optional
    and take their defaults when absent. Rows in seed 001's world run on the count kernel,
    the others on the world kernel.
    ``ttl`` may be null where the controller is not ``expectations``, ``restart_at`` where
    it is ``ledger``. Other columns pass through untouched; rows keep their order. Raises
    ``ValueError`` naming the column and the offending value if a parameter is bad.
    """
    _check_frame(cells)
    world = world_rows(cells)
    if world is None:  # seed 001's world throughout: the count kernel alone
        counts = simulate_arrays(**kernel_inputs(cells))  # type: ignore[arg-type]
        raw = dict(zip(OUT_COLUMNS, counts.T, strict=True))
        raw["create_commands"] = raw["created"]
        raw["failed_creates"] = np.zeros(cells.height, np.int64)
    else:  # each row to the kernel that is exact for it
        out = np.empty((cells.height, len(WORLD_OUT_COLUMNS)), np.int64)
        rows = np.flatnonzero(~world)
        if rows.size:
            out[rows, :len(OUT_COLUMNS)] = simulate_arrays(
                **kernel_inputs(cells[rows]))  # type: ignore[arg-type]
            out[rows, WORLD_OUT_COLUMNS.index("create_commands")] = out[
                rows, OUT_COLUMNS.index("created")]
            out[rows, WORLD_OUT_COLUMNS.index("failed_creates")] = 0
        rows = np.flatnonzero(world)
        out[rows] = simulate_world_arrays(
            **kernel_inputs(cells[rows], world=True))  # type: ignore[arg-type]
        raw = dict(zip(WORLD_OUT_COLUMNS, out.T, strict=True))
    rounds = raw["rounds"]
    work = raw["create_commands"] + raw["delete_commands"]
    metrics = {
        "rounds": rounds,
        "work": work,
        "work_per_round": work / rounds,
        "created": raw["created"],
        "unneeded": raw["created"] - cells["desired"].to_numpy() - raw["deaths_total"],
        "delete_commands": raw["delete_commands"],
        "deleted": raw["deleted"],
        "overshoot": raw["overshoot"],
        "stable_at": pl.Series(raw["stable_at"]).replace(-1, None),
        "reads": raw["reads"],
        "reads_per_round": raw["reads"] / rounds,
        "excess_copy_seconds": raw["excess_copy_seconds"],
        "missing_copy_seconds": raw["missing_copy_seconds"],
        "create_commands": raw["create_commands"],
        "failed_creates": raw["failed_creates"],
    }
    return cells.with_columns(pl.Series(name, metrics[name]) for name in METRIC_NAMES)


def world_rows(cells: pl.DataFrame) -> np.ndarray | None:
    """Which rows leave seed 001's world (some issue-8 parameter off its default), or None
    when none does. Those rows need the world kernel; the others the count kernel."""
    differs = []
    for name in WORLD_PARAMS:
        if name not in cells.columns or name == "seed":  # the seed alone changes nothing
            continue
        if _KINDS[name] in ("windows", "faults"):
            differs.append(pl.col(name).list.len() > 0)
        else:
            differs.append(pl.col(name) != DEFAULTS[name])
    if not differs or not cells.height:
        return None
    mask = cells.select(pl.any_horizontal(differs).fill_null(False)).to_series().to_numpy()
    return mask if mask.any() else None


def kernel_inputs(cells: pl.DataFrame, *, world: bool = False) -> dict[str, np.ndarray]:
    """The keyword arrays :func:`reconsim.kernel.simulate_arrays` takes, for checked cells;
    with ``world``, those :func:`reconsim.kernel_world.simulate_world_arrays` takes."""
    n = cells.height

    def column(name: str) -> pl.Series:
        if name in cells.columns:
            return cells[name]
        default = column_value(name, DEFAULTS[name])
        return pl.Series(name, [default], dtype=PARAM_DTYPES[name]).new_from_index(0, n)

    death_offsets, deaths = _csr(column("deaths").cast(DEATHS_DTYPE))
    events = deaths.struct.unnest()
    restart_offsets, restarts = _csr(column("restart_at").cast(pl.List(pl.Int64)).fill_null([]))
    inputs = {
        "controller": column("controller").cast(pl.String)
        .replace_strict(list(CONTROLLERS), list(range(len(CONTROLLERS))), return_dtype=pl.Int64)
        .to_numpy(),
        "created_listed": (column("observe") == "created").to_numpy(),
        "cap": column("max_per_round").fill_null(0).to_numpy(),
        "gain_pm": _permille(column("gain")),
        **{name: column(name).fill_null(0).to_numpy() for name in INT_PARAMS
           if world or name not in WORLD_PARAMS},
        "death_offsets": death_offsets,
        "death_at": events["at"].to_numpy(),
        "death_count": events["count"].to_numpy(),
        "restart_offsets": restart_offsets,
        "restart_at": restarts.to_numpy(),
    }
    if not world:
        return inputs
    lag_offsets, lag = _csr(column("lag").cast(WINDOWS_DTYPE))
    windows = lag.struct.unnest()
    fault_offsets, faults = _csr(column("create_faults").cast(FAULTS_DTYPE))
    fault = faults.struct.unnest()
    return inputs | {
        "delete_newest": (column("delete_order") == "newest").to_numpy(),
        "watch": (column("trigger") == "watch").to_numpy(),
        "slow_start": column("slow_start").to_numpy(),
        "fail_pm": _permille(column("fail_rate")),
        "lost_pm": _permille(column("lost_rate")),
        "lag_offsets": lag_offsets,
        "lag_from": windows["from"].to_numpy(),
        "lag_to": windows["to"].to_numpy(),
        "lag_extra": windows["extra"].to_numpy(),
        "fault_offsets": fault_offsets,
        "fault_at": fault["at"].to_numpy(),
        "fault_count": fault["count"].to_numpy(),
        "fault_lost": (fault["kind"] == "lost").to_numpy(),
    }


def _permille(column: pl.Series) -> np.ndarray:
    """A checked multiple of 0.001 as an exact integer count of thousandths."""
    return (column.cast(pl.Float64) * 1000).round(0).cast(pl.Int64).to_numpy()


def _csr(lists: pl.Series) -> tuple[np.ndarray, pl.Series]:
    """Offsets (one per row + 1) and the flattened elements of a list column without nulls."""
    offsets = np.zeros(lists.len() + 1, np.int64)
    np.cumsum(lists.list.len().to_numpy(), out=offsets[1:])
    return offsets, lists.explode(empty_as_null=False)


def _check_frame(cells: pl.DataFrame) -> None:
    """Raise ``ValueError`` naming the column and a value when ``cells`` is not simulable.

    Dtypes are checked from the schema; values in one pass that computes, per column,
    the first forbidden null and the smallest value. Only a failing frame pays for more.
    """
    for name in REQUIRED_COLUMNS:
        if name not in cells.columns:
            raise ValueError(f"cells: missing column {name!r}")
    clash = [name for name in METRIC_NAMES if name in cells.columns]
    if clash:
        raise ValueError(f"cells: column {clash[0]!r} is a metric name and would be overwritten")
    present = [f for f in PARAMS if f.name in cells.columns]
    for f in present:
        _check_dtype(f.name, f.metadata["kind"], cells.schema[f.name])
    exprs = [pl.col("deaths").explode(empty_as_null=False).is_null().sum()
             .alias("deaths:null_event")]
    for f in present:
        exprs.append(_first_bad_null(f.name, f.metadata))
        if f.metadata["kind"] == "choice":
            col = pl.col(f.name)
            exprs.append(col.filter(~col.cast(pl.String).is_in(list(f.metadata["choices"])))
                         .first().alias(f"{f.name}:bad_choice"))
        else:
            exprs.extend(_smallest(f.name, f.metadata["kind"]))
    if cells.height:
        _raise_on_values(cells, present, cells.select(exprs).row(0, named=True))
        for f in present:
            if f.metadata["kind"] in ("windows", "faults"):
                _check_records(cells[f.name], f.metadata["kind"])


def _check_records(column: pl.Series, kind: str) -> None:
    """Raise naming the first bad record of a lag or fault schedule column (nulls included)."""
    name = column.name
    lengths = column.list.len().fill_null(0).to_numpy()
    events = column.explode(empty_as_null=False).drop_nulls() if column.null_count() \
        else column.explode(empty_as_null=False)
    nulls = events.is_null()
    flat = events.struct.unnest()
    if kind == "windows":
        bad = (nulls | flat["from"].is_null() | flat["to"].is_null() | flat["extra"].is_null()
               | (flat["from"] < 0) | (flat["to"] <= flat["from"]) | (flat["extra"] < 1))
    else:
        bad = (nulls | flat["at"].is_null() | flat["count"].is_null() | flat["kind"].is_null()
               | (flat["at"] < 0) | (flat["count"] < 0) | ~flat["kind"].is_in(list(FAULT_KINDS)))
    first = bad.fill_null(True).arg_true()
    if first.len() == 0:
        return
    row = int(np.searchsorted(np.cumsum(lengths), first[0], side="right"))
    record = events[int(first[0])]
    if record is None:
        raise ValueError(f"{name}: null record in row {row}")
    check = check_windows if kind == "windows" else check_faults
    check([record], name)  # raises with the field and the value
    raise ValueError(f"{name}: bad record {record!r} in row {row}")  # pragma: no cover


def _raise_on_values(cells: pl.DataFrame, present: list[Any], row: dict[str, Any]) -> None:
    """Raise for the first problem the one-pass statistics in ``row`` show."""
    for f in present:
        name, meta = f.name, f.metadata
        if row.get(f"{name}:bad_null") is not None:
            what = "schedule" if name == "deaths" else "value"
            hint = " (use an empty list for none)" if name == "deaths" else ""
            raise ValueError(f"{name}: null {what} in row {row[f'{name}:bad_null']}{hint}")
        if meta["kind"] == "choice" and row.get(f"{name}:bad_choice") is not None:
            raise ValueError(f"{name} must be one of {', '.join(meta['choices'])}; "
                             f"got {row[f'{name}:bad_choice']!r}")
    if row.get("deaths:null_event"):
        bad = cells["deaths"].list.eval(pl.element().is_null()).list.any().arg_true()[0]
        raise ValueError(f"deaths: null event in row {bad}")
    for f in present:
        _raise_on_range(f.name, f.metadata, row)


def _raise_on_range(name: str, meta: Any, row: dict[str, Any]) -> None:
    """Raise if the statistics in ``row`` show a value of ``name`` out of its range."""
    kind = meta["kind"]
    if kind == "deaths":
        for part in ("at", "count"):
            if row.get(f"deaths:{part}:nulls"):  # no null events by now: a null field
                raise ValueError(f"deaths event {part}: null value")
            _check_min(row.get(f"deaths:{part}"), f"deaths event {part}", 0)
    elif kind == "times":
        if row.get(f"{name}:null_time"):
            raise ValueError(f"{name}: null time in a list")
        _check_min(row.get(f"{name}:min"), name, 0)
    elif kind in ("gain", "rate"):
        if row.get(f"{name}:bad") is not None:
            interval = "(0, 1]" if kind == "gain" else "[0, 1]"
            raise ValueError(f"{name} must be a multiple of 0.001 in {interval}, "
                             f"got {row[f'{name}:bad']!r}")
    elif kind in ("int", "cap"):
        extra = f" or null ({UNLIMITED})" if kind == "cap" else ""
        _check_min(row.get(f"{name}:min"), name, meta.get("min", 1), extra)
        highest = row.get(f"{name}:max")
        if "max" in meta and highest is not None and highest > meta["max"]:
            raise ValueError(f"{name} must be an integer <= {meta['max']}, got {highest!r}")


def _check_dtype(name: str, kind: str, dtype: pl.DataType) -> None:
    if dtype == pl.Null:  # all null: the value checks say whether that is allowed
        return
    if kind == "choice":
        if not isinstance(dtype, (pl.String, pl.Categorical, pl.Enum)):
            raise ValueError(f"{name}: column must be strings, got dtype {dtype}")
    elif kind in ("int", "cap"):
        if not dtype.is_integer():
            raise ValueError(f"{name}: column must hold integers, got dtype {dtype}")
    elif kind in ("gain", "rate"):
        if not dtype.is_numeric():
            raise ValueError(f"{name}: column must hold numbers, got dtype {dtype}")
    elif kind in ("bool", "windows", "faults"):
        _check_world_dtype(name, kind, dtype)
    elif kind == "times":
        if not (isinstance(dtype, pl.List) and dtype.inner.is_integer()):
            raise ValueError(f"{name}: column must be a list of integers, got dtype {dtype}")
    elif not (isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct)
              and {fld.name: fld.dtype.is_integer() for fld in dtype.inner.fields}
              == {"at": True, "count": True}):
        raise ValueError(f"deaths: column must be list[struct{{at, count}}] of integers, "
                         f"got dtype {dtype}")


def _check_world_dtype(name: str, kind: str, dtype: pl.DataType) -> None:
    """The dtype checks of issue 8's kinds: booleans, lag windows, create faults."""
    if kind == "bool":
        if dtype != pl.Boolean:
            raise ValueError(f"{name}: column must hold booleans, got dtype {dtype}")
        return
    fields = _RECORD_FIELDS[kind]
    want = {fld: fld != "kind" for fld in fields}
    if not (isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct)
            and {fld.name: fld.dtype.is_integer() for fld in dtype.inner.fields} == want
            and all(fld.dtype in (pl.String, pl.Categorical) for fld in dtype.inner.fields
                    if fld.name == "kind")):
        raise ValueError(f"{name}: column must be list[struct{{{', '.join(fields)}}}] "
                         f"({'kind a string, the others ' if kind == 'faults' else ''}"
                         f"integers), got dtype {dtype}")


def _first_bad_null(name: str, meta: Any) -> pl.Expr:
    """The first row where ``name`` is null although it applies (a null cap means no cap)."""
    if meta["kind"] == "cap":
        bad = pl.lit(False)
    elif meta["applies"] is None:
        bad = pl.col(name).is_null()
    else:
        not_applicable = [c for c in CONTROLLERS if not applies(name, c)]
        bad = pl.col(name).is_null() & ~pl.col("controller").cast(pl.String).is_in(
            not_applicable)
    return bad.arg_true().first().alias(f"{name}:bad_null")


def _smallest(name: str, kind: str) -> list[pl.Expr]:
    col = pl.col(name)
    if kind == "deaths":
        events = col.explode(empty_as_null=False)
        return [expr for part in ("at", "count") for expr in (
            events.struct.field(part).min().alias(f"deaths:{part}"),
            events.struct.field(part).is_null().sum().alias(f"deaths:{part}:nulls"))]
    if kind == "times":
        values = col.explode(empty_as_null=False)
        # an empty or null list explodes to nothing here (empty_as_null=False) or a null
        return [values.min().alias(f"{name}:min"),
                (values.is_null().sum() - col.is_null().sum()).alias(f"{name}:null_time")]
    if kind in ("gain", "rate"):
        thousandths = col.cast(pl.Float64) * 1000
        off_grid = (thousandths - thousandths.round(0)).abs() > 1e-9
        low = (col <= 0) if kind == "gain" else (col < 0)
        return [col.filter(low | (col > 1) | off_grid).first().alias(f"{name}:bad")]
    if kind in ("bool", "windows", "faults"):
        return []  # booleans need no range; schedules are checked record by record
    bounds = [col.min().alias(f"{name}:min")]
    if "max" in _META[name]:
        bounds.append(col.max().alias(f"{name}:max"))
    return bounds


def _check_min(lowest: Any, name: str, minimum: int, extra: str = "") -> None:
    if lowest is not None and lowest < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}{extra}, got {lowest!r}")
