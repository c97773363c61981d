"""A list column made around numpy arrays (reconsim.model.arrow): what it holds, and what it
refuses rather than read beyond its arrays."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from reconsim.model.arrow import arrow_lists


def test_a_column_holds_its_rows_and_survives_polars_operations() -> None:
    column = arrow_lists("r", np.array([0, 1, 1, 4]), {"a": np.arange(4), "b": np.arange(4) * 10},
                         {"b": np.array([True, True, False, True])})
    assert column.dtype == pl.List(pl.Struct({"a": pl.Int64, "b": pl.Int64}))
    assert column.to_list() == [[{"a": 0, "b": 0}], [],
                                [{"a": 1, "b": 10}, {"a": 2, "b": None}, {"a": 3, "b": 30}]]
    # sliced, put together with another, flattened: the same entries
    both = pl.concat([column.slice(1), column.slice(0, 1)]).rechunk()
    assert both.list.len().to_list() == [0, 3, 1]
    assert both.list.eval(pl.element().struct.field("b")).to_list() == [[], [10, None, 30], [0]]


@pytest.mark.parametrize(("offsets", "fields", "valid", "message"), [
    ([0, 4], {"a": [1, 2]}, {}, "a: 2 values for 4 entries"),
    ([0, 2], {"a": [1, 2]}, {"a": [True]}, "a: a mask of 1 for 2 entries"),
    ([0, 2, 1], {"a": [1, 2]}, {}, "offsets: one or more, from 0 or more, never decreasing"),
    ([-1, 1], {"a": [1, 2]}, {}, "offsets: one or more"),
    ([], {"a": []}, {}, "offsets: one or more"),
])
def test_sizes_that_would_read_beyond_the_arrays_are_refused(
        offsets: list[int], fields: dict[str, list[int]], valid: dict[str, list[bool]],
        message: str) -> None:
    with pytest.raises(ValueError, match=message):
        arrow_lists("r", np.array(offsets, np.int64),
                    {k: np.array(v, np.int64) for k, v in fields.items()},
                    {k: np.array(v, bool) for k, v in valid.items()})
