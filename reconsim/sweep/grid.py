"""Grid expansion: cell ``i`` of a spec's Cartesian product, without building the product.

Cells are numbered in row-major order over the axes in :data:`reconsim.sweep.spec.AXES`
order (the first axis varies slowest), so any slice of the grid can be built
independently — a worker gets the spec and a range, never a million rows.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from reconsim.model.params import DEATHS_DTYPE, NAME_COLUMNS, PARAMS, parameter, table_columns
from reconsim.sweep.spec import Spec

#: The parameter columns of a sweep table, in order, derived from the declaration.
PARAM_COLUMNS = table_columns(PARAMS)


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
    """Cells ``start .. stop - 1`` of the spec's grid as a frame :func:`.simulate` reads,
    with the ``schedule`` name beside its ``deaths`` events and each delay table's name
    (``G_delays_name``, ...) beside its entries.

    The grid is one block per controller (in the spec's order); within a block, the
    axes that apply to that controller vary row-major, the others are null.
    """
    stop = spec.n_cells if stop is None else stop
    parts, offset = [], 0
    for controller, size in spec.blocks():
        lo, hi = max(start, offset), min(stop, offset + size)
        if lo < hi:
            parts.append(_block(spec, controller, lo - offset, hi - offset))
        offset += size
    if not parts:
        return _block(spec, spec.axes["controller"][0], 0, 0)
    return pl.concat(parts)


def _block(spec: Spec, controller: str, start: int, stop: int) -> pl.DataFrame:
    axes = spec.block_axes(controller)
    idx = dict(zip(axes, axis_indices(tuple(len(spec.axes[a]) for a in axes), start, stop),
                   strict=True))
    n = stop - start

    def column(axis: str) -> pl.Series:
        kind = parameter("deaths" if axis == "schedule" else axis).kind
        dtype = pl.String() if axis == "schedule" else kind.dtype
        if axis not in idx:
            return pl.repeat(None, n, dtype=dtype, eager=True)
        values = [v if axis == "schedule" else kind.to_column(v) for v in spec.axes[axis]]
        return pl.Series(values, dtype=dtype).gather(idx[axis])

    columns = {axis: column(axis) for axis in spec.axes if axis != "controller"}
    for name, axis in NAME_COLUMNS.items():  # a delay table's name beside its entries
        columns[name] = (pl.Series(spec.names[axis], dtype=pl.String()).gather(idx[axis])
                         if axis in idx else pl.repeat(None, n, dtype=pl.String, eager=True))
    columns["controller"] = pl.repeat(controller, n, dtype=pl.String, eager=True)
    columns["deaths"] = _deaths(spec, idx)
    return pl.DataFrame({name: columns[name].alias(name) for name in param_columns(spec)})


def _deaths(spec: Spec, idx: dict[str, np.ndarray]) -> pl.Series:
    """The cells' death events. Periodic and random deaths depend on the duration, random
    ones on the cell's seed too: one event list per (schedule, duration) pair this slice
    holds, per (schedule, duration, seed) for a schedule with random deaths, so a chunk
    builds at most its own cells' lists. Each schedule builds its lists at once
    (:meth:`~reconsim.sweep.spec.Schedule.cells`), and the lists are gathered into rows."""
    names, durations, seeds = (spec.axes[a] for a in ("schedule", "duration", "seed"))
    random = np.array([spec.schedules[name].random for name in names])
    seed = np.where(random[idx["schedule"]], idx["seed"], 0)
    keys, where = np.unique((idx["schedule"] * len(durations) + idx["duration"]) * len(seeds)
                            + seed, return_inverse=True)
    schedule, rest = np.divmod(keys, len(durations) * len(seeds))
    duration, seed = np.divmod(rest, len(seeds))
    empty = np.zeros(0, dtype=np.int64)  # an empty slice has no lists
    owners, ats, counts = [empty], [empty], [empty]
    for s in np.unique(schedule).tolist():  # keys are sorted: each schedule's lists in a run
        mine = np.flatnonzero(schedule == s)
        owner, at, count = spec.schedules[names[s]].cells(
            np.array([durations[k] for k in duration[mine].tolist()], dtype=np.int64),
            np.array([seeds[k] for k in seed[mine].tolist()], dtype=np.int64))
        owners.append(mine[owner])
        ats.append(at)
        counts.append(count)
    return _lists(np.concatenate(owners), np.concatenate(ats), np.concatenate(counts),
                  len(keys)).gather(where.reshape(-1))


def _lists(owner: np.ndarray, at: np.ndarray, count: np.ndarray, n: int) -> pl.Series:
    """``n`` lists of (at, count) events from flat arrays, list i the events whose
    ``owner`` is i, in their order (``owner`` ascending): a group per list, each opened by
    a placeholder event that is left out, so that every list, empty ones too, has one and
    the groups come in order."""
    frame = pl.DataFrame({
        "owner": np.concatenate([np.arange(n, dtype=np.int64), owner]),
        "at": np.concatenate([np.full(n, -1, dtype=np.int64), at]),
        "count": np.concatenate([np.zeros(n, dtype=np.int64), count]),
    })
    lists = frame.group_by("owner", maintain_order=True).agg(
        pl.struct("at", "count").filter(pl.col("at") >= 0).alias("deaths"))
    return lists["deaths"].cast(DEATHS_DTYPE)


def param_columns(spec: Spec) -> tuple[str, ...]:
    """The parameter columns of ``spec``'s table: :data:`PARAM_COLUMNS`, then its users'
    controllers' parameters."""
    return table_columns(spec.params)
