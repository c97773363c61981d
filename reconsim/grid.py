"""Grid expansion: cell ``i`` of a spec's Cartesian product, without building the product.

Cells are numbered in row-major order over the axes in :data:`reconsim.spec.AXES`
order (the first axis varies slowest), so any slice of the grid can be built
independently — a worker gets the spec and a range, never a million rows.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from reconsim.params import INT_PARAMS
from reconsim.simulate import DEATHS_DTYPE
from reconsim.spec import AXES, Spec

#: The parameter columns of a sweep table, in order.
PARAM_COLUMNS = ("controller", "G", "U", "B", "desired", "duration", "ledger_base",
                 "schedule", "deaths")


def axis_indices(shape: tuple[int, ...], start: int, stop: int) -> list[np.ndarray]:
    """Per-axis indices of cells ``start .. stop - 1`` of a grid of ``shape`` (row-major).

    >>> [a.tolist() for a in axis_indices((2, 3), 2, 5)]
    [[0, 1, 1], [2, 0, 1]]
    """
    flat = np.arange(start, stop, dtype=np.int64)
    out = []
    for size in reversed(shape):
        flat, idx = np.divmod(flat, size)
        out.append(idx)
    return out[::-1]


def expand(spec: Spec, start: int = 0, stop: int | None = None) -> pl.DataFrame:
    """Cells ``start .. stop - 1`` of the spec's grid as a frame :func:`reconsim.simulate` reads,
    with the ``schedule`` name beside its ``deaths`` events."""
    stop = spec.n_cells if stop is None else stop
    shape = tuple(len(spec.axes[a]) for a in AXES)
    idx = dict(zip(AXES, axis_indices(shape, start, stop), strict=True))
    columns: dict[str, pl.Series] = {
        "controller": pl.Series(spec.axes["controller"], dtype=pl.String).gather(
            idx["controller"]),
    }
    for name in INT_PARAMS:
        columns[name] = pl.Series(np.asarray(spec.axes[name], np.int64)[idx[name]])
    names = spec.axes["schedule"]
    columns["schedule"] = pl.Series(names, dtype=pl.String).gather(idx["schedule"])
    # Periodic and random schedules depend on the duration: one event list per pair.
    durations = spec.axes["duration"]
    table = pl.Series(
        [[{"at": a, "count": c} for a, c in spec.schedules[s].events(d)]
         for s in names for d in durations],
        dtype=DEATHS_DTYPE,
    )
    columns["deaths"] = table.gather(idx["schedule"] * len(durations) + idx["duration"])
    return pl.DataFrame({name: columns[name].alias(name) for name in PARAM_COLUMNS})
