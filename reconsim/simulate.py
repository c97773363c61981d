"""Cells in, metrics out: the polars face of the kernel, and ``run_cell`` for one cell."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from reconsim.kernel import OUT_COLUMNS, simulate_arrays
from reconsim.params import (
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
    f.name: {"int": pl.Int64(), "choice": pl.String(), "cap": pl.Int64(),
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
    n = cells.height

    def column(name: str) -> pl.Series:
        if name in cells.columns:
            return cells[name]
        return pl.Series(name, [DEFAULTS[name]] * n, dtype=PARAM_DTYPES[name])

    death_offsets, deaths = _csr(column("deaths").cast(DEATHS_DTYPE))
    events = deaths.struct.unnest()
    restart_offsets, restarts = _csr(column("restart_at").cast(pl.List(pl.Int64)).fill_null([]))
    ints = {name: column(name).fill_null(0).to_numpy() for name in INT_PARAMS}
    out = simulate_arrays(
        controller=column("controller").cast(pl.String)
        .replace_strict(list(CONTROLLERS), list(range(len(CONTROLLERS))),
                        return_dtype=pl.Int64).to_numpy(),
        created_listed=(column("observe") == "created").to_numpy(),
        cap=column("max_per_round").fill_null(0).to_numpy(),
        **ints,
        death_offsets=death_offsets,
        death_at=events["at"].to_numpy(),
        death_count=events["count"].to_numpy(),
        restart_offsets=restart_offsets,
        restart_at=restarts.to_numpy(),
    )
    raw = dict(zip(OUT_COLUMNS, out.T, strict=True))
    rounds = raw["rounds"]
    work = raw["created"] + raw["delete_commands"]
    metrics = {
        "rounds": rounds,
        "work": work,
        "work_per_round": work / rounds,
        "created": raw["created"],
        "unneeded": raw["created"] - ints["desired"] - raw["deaths_total"],
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


def _csr(lists: pl.Series) -> tuple[np.ndarray, pl.Series]:
    """Offsets (one per row + 1) and the flattened elements of a list column without nulls."""
    offsets = np.zeros(lists.len() + 1, np.int64)
    np.cumsum(lists.list.len().to_numpy(), out=offsets[1:])
    return offsets, lists.explode(empty_as_null=False)


def _check_frame(cells: pl.DataFrame) -> None:
    """Raise ``ValueError`` naming the column and a value when ``cells`` is not simulable."""
    for name in REQUIRED_COLUMNS:
        if name not in cells.columns:
            raise ValueError(f"cells: missing column {name!r}")
    clash = [name for name in METRIC_NAMES if name in cells.columns]
    if clash:
        raise ValueError(f"cells: column {clash[0]!r} is a metric name and would be overwritten")
    for f in PARAMS:
        if f.name in cells.columns:
            _check_column(cells, f.name, f.metadata)


def _check_column(cells: pl.DataFrame, name: str, meta: Any) -> None:  # noqa: PLR0912
    col = cells[name]
    kind = meta["kind"]
    # Null is allowed only where the parameter does not apply (and means "no cap" for a cap).
    # (``controller`` is checked first, so it can say where a parameter applies.)
    if kind == "cap":
        nullable = pl.repeat(True, cells.height, eager=True)
    elif meta["applies"] is None:
        nullable = pl.repeat(False, cells.height, eager=True)
    else:
        nullable = cells["controller"].cast(pl.String).replace_strict(
            list(CONTROLLERS), [not applies(name, c) for c in CONTROLLERS],
            return_dtype=pl.Boolean)
    bad_null = col.is_null() & ~nullable
    if bad_null.any():
        row = bad_null.arg_true()[0]
        if name == "deaths":
            raise ValueError(f"deaths: null schedule in row {row} (use an empty list for none)")
        raise ValueError(f"{name}: null value in row {row}")
    present = col.drop_nulls()
    if kind == "choice":
        if not isinstance(col.dtype, (pl.String, pl.Categorical, pl.Enum)):
            raise ValueError(f"{name}: column must be strings, got dtype {col.dtype}")
        bad = present.filter(~present.cast(pl.String).is_in(list(meta["choices"])))
        if bad.len():
            raise ValueError(f"{name} must be one of {', '.join(meta['choices'])}; got {bad[0]!r}")
    elif kind in ("int", "cap"):
        _check_ints(present, name, meta.get("min", 1), col.dtype,
                    extra=f" or null ({UNLIMITED})" if kind == "cap" else "")
    elif kind == "times":
        if not (col.dtype == pl.Null
                or (isinstance(col.dtype, pl.List) and col.dtype.inner.is_integer())):
            raise ValueError(f"{name}: column must be a list of integers, got dtype {col.dtype}")
        values = present.explode(empty_as_null=False)
        if values.null_count():
            raise ValueError(f"{name}: null time in a list")
        _check_ints(values, name, 0, values.dtype)
    else:
        dtype = col.dtype
        if not (isinstance(dtype, pl.List) and isinstance(dtype.inner, pl.Struct)
                and {fld.name for fld in dtype.inner.fields} == {"at", "count"}):
            raise ValueError(f"deaths: column must be list[struct{{at, count}}], got dtype {dtype}")
        events = present.explode(empty_as_null=False)
        if events.null_count():
            row = col.list.eval(pl.element().is_null()).list.any().arg_true()[0]
            raise ValueError(f"deaths: null event in row {row}")
        unnested = events.struct.unnest()
        for part in ("at", "count"):
            _check_ints(unnested[part], f"deaths event {part}", 0, unnested[part].dtype)


def _check_ints(values: pl.Series, name: str, minimum: int, dtype: pl.DataType,
                extra: str = "") -> None:
    if not dtype.is_integer() and dtype != pl.Null:
        raise ValueError(f"{name}: column must hold integers, got dtype {dtype}")
    if values.null_count():
        raise ValueError(f"{name}: null value in row {values.is_null().arg_true()[0]}")
    if values.len() and (lowest := values.min()) < minimum:  # type: ignore[operator]
        raise ValueError(f"{name} must be an integer >= {minimum}{extra}, got {lowest!r}")
