"""The kernels' input arrays: one value per cell, or for a list parameter (a schedule) an
offsets array beside the values of every cell in turn; and a kernel's refusal of a cell
of them, named by its row."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import numpy as np
from numpy.typing import NDArray

from reconsim.errors import KernelRefusalError
from reconsim.model.controllers import Controller
from reconsim.model.controllers.definition import CellError, DecisionError

Int64Array = NDArray[np.int64]


class KernelDecisionError(DecisionError):
    """A controller's misbehaviour as a kernel finds it: its line lacks what only the
    reference model knows (the second, the value returned), and ``row`` is None where the
    kernel cannot tell the cell (an exception raised inside it, a hook whose result numba
    types wrongly). :func:`reconsim.simulate` replaces it by the reference model's
    :class:`DecisionError` of the cell, or adds the cell where the reference model runs it."""


def _lists(names: Iterable[str]) -> dict[str, list[str]]:
    """The list parameters among the kernel arrays ``names``: each one's offsets array, by
    name, and the names of its value arrays (one value per list entry, not per row)."""
    names = tuple(names)
    lists = {}
    for key in names:
        if key.endswith("_offsets"):
            name = key.removesuffix("_offsets")
            lists[key] = [v for v in names
                          if v == name or (v.startswith(name + "_") and v != key)]
    return lists


def take_rows(arrays: dict[str, np.ndarray], rows: np.ndarray,
              names: tuple[str, ...] | None = None) -> dict[str, np.ndarray]:
    """The kernel arrays of ``rows`` only (all of them, or those ``names``): one value per
    row, or for a list parameter its offsets renumbered and the values of those rows."""
    names = tuple(arrays) if names is None else names
    taken: dict[str, np.ndarray] = {}
    for key, values in _lists(names).items():  # their value arrays are not one per row
        offsets = arrays[key]
        lengths = offsets[rows + 1] - offsets[rows]
        taken[key] = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        # each row's run of values, from its old offset
        where = np.repeat(offsets[rows] - taken[key][:-1], lengths) + np.arange(
            taken[key][-1], dtype=np.int64)
        for name in values:
            taken[name] = arrays[name][where]
    return {key: taken[key] if key in taken else arrays[key][rows] for key in names}


@contextmanager
def numbered(rows: np.ndarray) -> Iterator[None]:
    """A kernel's refusal of cell ``i`` of a part of a batch (a KernelRefusalError, or a
    CellError that names its row) as one of cell ``rows[i]`` of the batch."""
    try:
        yield
    except (KernelRefusalError, CellError) as exc:
        if exc.row is None:
            raise
        raise exc.at(int(rows[exc.row])) from None


def cumulative(offsets: Int64Array, weights: Int64Array) -> Int64Array:
    """Each list's weights as running sums that start again at each list (``offsets``: one
    per list + 1): what the kernels bisect to draw from a delay table.

    >>> cumulative(np.array([0, 2, 2, 5]), np.array([1, 3, 2, 2, 1])).tolist()
    [1, 4, 2, 4, 5]
    """
    sums = np.cumsum(weights, dtype=np.int64)
    starts = np.concatenate(([0], sums))[offsets[:-1]]
    return np.ascontiguousarray(sums - np.repeat(starts, np.diff(offsets)))


def worst_extra(a: Mapping[str, NDArray[Any]], delay: str) -> Int64Array:
    """Each cell's longest extra ``delay`` (``"G"`` or ``"B"``): its delay table's last value
    where it has one, else its uniform spread."""
    offsets = np.asarray(a[f"{delay}_delays_offsets"])
    values = np.asarray(a[f"{delay}_delays_value"])
    has = np.diff(offsets) > 0
    last = values[np.maximum(offsets[1:] - 1, 0)] if len(values) else np.zeros(len(has),
                                                                              np.int64)
    return np.where(has, last, np.asarray(a[f"{delay}_spread"])).astype(np.int64)


def by_controller(codes: Int64Array, order: Int64Array | None,
                  ) -> list[tuple[int, Int64Array | None]]:
    """The batch's cells per controller code: (code, its rows in running order), or
    ``[(code, None)]`` when one controller runs the whole batch in its order. ``order``
    runs the cells grouped (controllers first), or None when they are in order already."""
    ranked = codes if order is None else codes[order]
    if len(ranked) < 2:  # (one cell's batch: no look for edges)
        return [(int(ranked[0]), None)] if len(ranked) else []
    edges = [0, *(np.flatnonzero(ranked[1:] != ranked[:-1]) + 1), len(ranked)]
    if len(edges) == 2 and order is None:
        return [(int(ranked[0]), None)]
    rows = np.arange(len(codes), dtype=np.int64) if order is None else order
    return [(int(ranked[lo]), rows[lo:hi]) for lo, hi in itertools.pairwise(edges)]


def controller_params(controllers: Iterable[Controller]) -> tuple[str, ...]:
    """The parameters of ``controllers`` (``ttl`` for reconsim's own), which the kernels
    take besides the world's, each as one more array."""
    return tuple(dict.fromkeys(p for c in controllers for p in c.params))


def params_matrix(controller: Controller, cells: Mapping[str, NDArray[Any]],
                  rows: Int64Array | None = None) -> Int64Array:
    """The parameters of ``controller`` for each of ``cells`` (or of its ``rows``), a row
    per cell (one column at least: numba wants one), from their arrays by name."""
    missing = [name for name in controller.params if name not in cells]
    if missing:
        raise TypeError(f"kernel: missing {', '.join(missing)}, a parameter of controller "
                        f"{controller.name!r}")
    n = len(cells["desired"]) if rows is None else len(rows)
    matrix = np.zeros((n, max(1, len(controller.params))), np.int64)
    for k, name in enumerate(controller.params):
        matrix[:, k] = cells[name] if rows is None else np.asarray(cells[name])[rows]
    return matrix


def frozen(values: NDArray[Any], dtype: type[np.generic] = np.int64) -> NDArray[Any]:
    """``values`` as a C-contiguous, read-only array of ``dtype`` (copied only where it is
    not C-contiguous ``dtype``; otherwise itself or a read-only view). numba compiles a
    kernel once per pattern of read-only and writable inputs, and polars hands some columns
    over read-only, others writable: every input read-only, each kernel compiles once, and
    no column is copied to make it writable."""
    array = values
    if not (isinstance(array, np.ndarray) and array.dtype == dtype
            and array.flags.c_contiguous):  # np.require costs microseconds even when not
        array = np.require(values, dtype, ["C_CONTIGUOUS"])
    if array.flags.writeable:
        array = array.view()
        array.flags.writeable = False
    return array
