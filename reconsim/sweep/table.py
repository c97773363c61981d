"""The sweep table's parameter columns as scalars: a schedule (a list) as ``a,b,c``, a
record list as JSON, and back. The report groups and shows them so; ``compare`` pairs
cells on them."""

from __future__ import annotations

import json
from typing import Any

import polars as pl

from reconsim.model.kinds import Kind, Records, Times


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
        return value
    if isinstance(kind, Times):
        return () if value == "none" else tuple(int(v) for v in value.split(","))
    if isinstance(kind, Records):
        return () if value == "none" else tuple(
            tuple(r[f] for f in kind.names) for r in json.loads(f"[{value}]"))
    return value
