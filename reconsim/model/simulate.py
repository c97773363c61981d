"""Cells in, metrics out: the polars face of the kernel, and ``run_cell`` for one cell."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from reconsim.model.kernel import OUT_COLUMNS, simulate_arrays
from reconsim.model.params import (
    CONTROLLERS,
    DEFAULTS,
    INT_PARAMS,
    METRIC_NAMES,
    PARAMS,
    UNLIMITED,
    Cell,
    applies,
)

#: The polars dtype of the ``deaths`` column.
DEATHS_DTYPE = pl.List(pl.Struct({"at": pl.Int64, "count": pl.Int64}))

#: The polars dtype of each parameter column, derived from its kind.
PARAM_DTYPES: dict[str, pl.DataType] = {
    f.name: {"int": pl.Int64(), "choice": pl.String(), "cap": pl.Int64(), "gain": pl.Float64(),
             "times": pl.List(pl.Int64), "deaths": DEATHS_DTYPE}[f.metadata["kind"]]
    for f in PARAMS
}

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
        v = getattr(cell, name)
        if not applies(name, cell.controller):
            return None
        if name == "deaths":
            return [{"at": a, "count": n} for a, n in v]
        return list(v) if isinstance(v, tuple) else v

    return pl.DataFrame({f.name: [value(c, f.name) for c in cells] for f in PARAMS},
                        schema=PARAM_DTYPES)


def simulate(cells: pl.DataFrame) -> pl.DataFrame:
    """Simulate every row of ``cells``; return its columns plus one column per metric.

    Parameter columns: ``controller`` (str), ``G``, ``U``, ``B``, ``desired``, ``duration``
    (integers) and ``deaths`` (list of struct{at, count}) are required; ``ledger_base``,
    ``observe`` (str), ``max_per_round`` (integer, null for no cap), ``ttl`` (integer) and
    ``restart_at`` (list of integers) are optional and take their defaults when absent.
    ``ttl`` may be null where the controller is not ``expectations``, ``restart_at`` where
    it is ``ledger``. Other columns pass through untouched; rows keep their order. Raises
    ``ValueError`` naming the column and the offending value if a parameter is bad.
    """
    _check_frame(cells)
    out = simulate_arrays(**kernel_inputs(cells))  # type: ignore[arg-type]
    raw = dict(zip(OUT_COLUMNS, out.T, strict=True))
    rounds = raw["rounds"]
    work = raw["created"] + raw["delete_commands"]
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
    }
    return cells.with_columns(pl.Series(name, metrics[name]) for name in METRIC_NAMES)


def kernel_inputs(cells: pl.DataFrame) -> dict[str, np.ndarray]:
    """The keyword arrays :func:`reconsim.model.kernel.simulate_arrays` takes, for checked cells."""
    n = cells.height

    def column(name: str) -> pl.Series:
        if name in cells.columns:
            return cells[name]
        default = DEFAULTS[name]
        if name == "deaths":
            default = [{"at": a, "count": c} for a, c in default]
        elif isinstance(default, tuple):
            default = list(default)
        return pl.Series(name, [default], dtype=PARAM_DTYPES[name]).new_from_index(0, n)

    death_offsets, deaths = _csr(column("deaths").cast(DEATHS_DTYPE))
    events = deaths.struct.unnest()
    restart_offsets, restarts = _csr(column("restart_at").cast(pl.List(pl.Int64)).fill_null([]))
    return {
        "controller": column("controller").cast(pl.String)
        .replace_strict(list(CONTROLLERS), list(range(len(CONTROLLERS))), return_dtype=pl.Int64)
        .to_numpy(),
        "created_listed": (column("observe") == "created").to_numpy(),
        "cap": column("max_per_round").fill_null(0).to_numpy(),
        "gain_pm": (column("gain").cast(pl.Float64) * 1000).round(0).cast(pl.Int64).to_numpy(),
        **{name: column(name).fill_null(0).to_numpy() for name in INT_PARAMS},
        "death_offsets": death_offsets,
        "death_at": events["at"].to_numpy(),
        "death_count": events["count"].to_numpy(),
        "restart_offsets": restart_offsets,
        "restart_at": restarts.to_numpy(),
    }


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
    elif kind == "gain":
        if row.get(f"{name}:bad") is not None:
            raise ValueError(f"{name} must be a multiple of 0.001 in (0, 1], "
                             f"got {row[f'{name}:bad']!r}")
    elif kind != "choice":
        extra = f" or null ({UNLIMITED})" if kind == "cap" else ""
        _check_min(row.get(f"{name}:min"), name, meta.get("min", 1), extra)


def _check_dtype(name: str, kind: str, dtype: pl.DataType) -> None:
    if dtype == pl.Null:  # all null: the value checks say whether that is allowed
        return
    if kind == "choice":
        if not isinstance(dtype, (pl.String, pl.Categorical, pl.Enum)):
            raise ValueError(f"{name}: column must be strings, got dtype {dtype}")
    elif kind in ("int", "cap"):
        if not dtype.is_integer():
            raise ValueError(f"{name}: column must hold integers, got dtype {dtype}")
    elif kind == "gain":
        if not dtype.is_numeric():
            raise ValueError(f"{name}: column must hold numbers, got dtype {dtype}")
    elif kind == "times":
        if not (isinstance(dtype, pl.List) and dtype.inner.is_integer()):
            raise ValueError(f"{name}: column must be a list of integers, got dtype {dtype}")
    elif not (isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct)
              and {fld.name: fld.dtype.is_integer() for fld in dtype.inner.fields}
              == {"at": True, "count": True}):
        raise ValueError(f"deaths: column must be list[struct{{at, count}}] of integers, "
                         f"got dtype {dtype}")


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
    if kind == "gain":
        thousandths = col.cast(pl.Float64) * 1000
        off_grid = (thousandths - thousandths.round(0)).abs() > 1e-9
        return [col.filter((col <= 0) | (col > 1) | off_grid).first().alias(f"{name}:bad")]
    return [col.min().alias(f"{name}:min")]


def _check_min(lowest: Any, name: str, minimum: int, extra: str = "") -> None:
    if lowest is not None and lowest < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}{extra}, got {lowest!r}")
