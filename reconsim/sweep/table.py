"""The sweep table's parameter columns as scalars: a schedule (a list) as ``a,b,c``, a
record list as JSON, and back. The report groups and shows them so; ``compare`` pairs
cells on them. Which of a table's columns are its users' controllers' parameters, known
from the column names alone (:func:`user_param_columns`)."""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from typing import Any

import polars as pl

from reconsim.model.kinds import Kind, Records, Times
from reconsim.model.laws import law_columns
from reconsim.model.metrics import METRIC_NAMES, RESPONSES
from reconsim.model.params import PARAMS, table_columns


def user_param_columns(columns: Iterable[str]) -> tuple[str, ...]:
    """The columns, among a sweep table's ``columns``, that hold users' controllers'
    parameters: those that are no cell parameter, metric or law column (nor a hidden
    ``__`` column). A sweep writes one per parameter of each user's controller it ran,
    null for the other controllers; reading a table learns them from its names alone,
    without importing any controller.

    >>> user_param_columns(["controller", "G", "ttl", "band", "overshoot", "law_holds"])
    ('band',)
    """
    return tuple(c for c in columns if c not in _known_columns() and not c.startswith("__"))


@functools.cache
def _known_columns() -> frozenset[str]:
    """The columns every sweep table may hold but a user's controller's parameters."""
    laws = (e.meta.output_name() for e in law_columns())
    return frozenset((*table_columns(PARAMS), *METRIC_NAMES, RESPONSES, *laws))


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


def unflat(kind: Kind, value: Any) -> Any:
    """The inverse of :func:`flat` for one parameter of ``kind``: ``a,b,c`` (or ``none``)
    back to a tuple of ints, a record list's JSON back to tuples in the kind's field order;
    other values as they are."""
    if not isinstance(value, str):
        return kind.from_column(value)
    if isinstance(kind, Times):
        return () if value == "none" else tuple(int(v) for v in value.split(","))
    if isinstance(kind, Records):
        return () if value == "none" else tuple(
            tuple(r[f] for f in kind.names) for r in json.loads(f"[{value}]"))
    return value
