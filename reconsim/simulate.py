"""Cells in, metrics out: the polars face of the kernel, and ``run_cell`` for one cell."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from reconsim.kernel import OUT_COLUMNS, simulate_arrays
from reconsim.params import CONTROLLERS, DEFAULTS, INT_PARAMS, METRIC_NAMES, PARAMS, Cell

#: The polars dtype of the ``deaths`` column.
DEATHS_DTYPE = pl.List(pl.Struct({"at": pl.Int64, "count": pl.Int64}))

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
    """A frame with one row per cell, in the column layout :func:`simulate` reads."""
    return pl.DataFrame(
        {f.name: [getattr(c, f.name) for c in cells] for f in PARAMS if f.name != "deaths"}
        | {"deaths": [[{"at": a, "count": n} for a, n in c.deaths] for c in cells]},
        schema_overrides={"deaths": DEATHS_DTYPE},
    )


def simulate(cells: pl.DataFrame) -> pl.DataFrame:
    """Simulate every row of ``cells``; return its columns plus one column per metric.

    Parameter columns: ``controller`` (str), ``G``, ``U``, ``B``, ``desired``, ``duration``
    (integers), ``deaths`` (list of struct{at, count}) and optionally ``ledger_base``.
    Other columns pass through untouched. Rows keep their order. Raises ``ValueError``
    naming the column and the offending value if any parameter is out of range.
    """
    _check_frame(cells)
    n = cells.height
    deaths = cells["deaths"].cast(DEATHS_DTYPE)
    lengths = deaths.list.len().to_numpy().astype(np.int64)
    offsets = np.zeros(n + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    events = deaths.explode(empty_as_null=False).struct.unnest()
    ints = {
        name: (cells[name].to_numpy() if name in cells.columns
               else np.full(n, DEFAULTS[name], np.int64))
        for name in INT_PARAMS
    }
    out = simulate_arrays(
        intent=(cells["controller"] == "intent").to_numpy(),
        **ints,
        death_offsets=offsets,
        death_at=events["at"].to_numpy(),
        death_count=events["count"].to_numpy(),
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


def _check_frame(cells: pl.DataFrame) -> None:
    """Raise ``ValueError`` naming the column and a value when ``cells`` is not simulable."""
    for name in REQUIRED_COLUMNS:
        if name not in cells.columns:
            raise ValueError(f"cells: missing column {name!r}")
    clash = [name for name in METRIC_NAMES if name in cells.columns]
    if clash:
        raise ValueError(f"cells: column {clash[0]!r} is a metric name and would be overwritten")
    schema = cells.schema
    controller = cells["controller"]
    if not isinstance(schema["controller"], (pl.String, pl.Categorical, pl.Enum)):
        raise ValueError(f"controller: column must be strings, got dtype {schema['controller']}")
    bad = cells.filter(~controller.cast(pl.String).is_in(list(CONTROLLERS)) | controller.is_null())
    if bad.height:
        raise ValueError(
            f"controller must be one of {', '.join(CONTROLLERS)}; got {bad['controller'][0]!r}"
        )
    for f in PARAMS:
        if f.metadata["kind"] != "int" or f.name not in cells.columns:
            continue
        _check_ints(cells[f.name], f.name, f.metadata["min"])
    deaths = cells["deaths"]
    if not (isinstance(schema["deaths"], pl.List)
            and isinstance(inner := schema["deaths"].inner, pl.Struct)
            and {fld.name for fld in inner.fields} == {"at", "count"}):
        raise ValueError(
            f"deaths: column must be list[struct{{at, count}}], got dtype {schema['deaths']}"
        )
    if deaths.null_count():
        raise ValueError("deaths: null schedule in row "
                         f"{deaths.is_null().arg_true()[0]} (use an empty list for no deaths)")
    if deaths.explode(empty_as_null=False).null_count():
        row = deaths.list.eval(pl.element().is_null()).list.any().arg_true()[0]
        raise ValueError(f"deaths: null event in row {row}")
    events = deaths.explode(empty_as_null=False).struct.unnest()
    for part in ("at", "count"):
        _check_ints(events[part], f"deaths event {part}", 0)


def _check_ints(column: pl.Series, name: str, minimum: int) -> None:
    if not column.dtype.is_integer():
        raise ValueError(f"{name}: column must hold integers, got dtype {column.dtype}")
    if column.null_count():
        raise ValueError(f"{name}: null value in row {column.is_null().arg_true()[0]}")
    if column.len() and (lowest := column.min()) < minimum:  # type: ignore[operator]
        raise ValueError(f"{name} must be an integer >= {minimum}, got {lowest!r}")
