"""The kernels' input arrays: one value per cell, or for a list parameter (a schedule) an
offsets array beside the values of every cell in turn; a kernel's refusal of a cell of
them, named by its row; and the step every kernel takes after its threads, so that no row
is left unwritten."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final

import numpy as np
from numpy.typing import NDArray

from reconsim.errors import KernelRefusalError
from reconsim.model import rules
from reconsim.model.controllers import Controller
from reconsim.model.controllers.definition import CellError, DecisionError

Int64Array = NDArray[np.int64]


class KernelDecisionError(DecisionError):
    """A controller's misbehaviour as a kernel finds it: its line lacks what only the
    reference model knows (the second, the value returned), and ``row`` is None where the
    kernel cannot tell the cell (an exception raised inside it, a hook whose result numba
    types wrongly). :func:`reconsim.simulate` replaces it by the reference model's
    :class:`DecisionError` of the cell, or adds the cell where the reference model runs it."""


#: The first figure of each row a kernel is to run, until its cell has run to its end and
#: written its figures (or a refusal's code) over it: no figure or code is this value.
UNRUN: Final = int(np.iinfo(np.int64).min)


def rerun_unrun(first: Int64Array, run_alone: Callable[[int], object]) -> None:
    """After a kernel's threads: ``run_alone(j)`` for each position ``j`` of ``first`` (the
    first figure of the rows it ran, in its order) that still holds :data:`UNRUN`, one at a
    time, on this thread. A cell's exception (a user's controller raising) that numba's
    threads did not carry back leaves its block's rows as they were, not an error: run
    alone, each of them runs to its end or raises its exception here, and none is returned
    unwritten."""
    for j in np.flatnonzero(first == UNRUN).tolist():
        run_alone(int(j))


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


def response_buffers(arrays: Mapping[str, np.ndarray]) -> tuple[Int64Array, Int64Array]:
    """Where a batch's kernels write each cell's responses to its events: each cell's first
    column (``response_base``), and a zeroed matrix of :data:`reconsim.model.rules.RESPONSE_ROWS`
    rows with a column for each death event and each change of desired of every cell (a
    cell has at most that many events: those within the run, in distinct seconds), each
    cell's after the one before's. Where every event falls within the run in a second of
    its own, the cells' responses lie one after the other from column 0, a field a row: the
    layout :func:`reconsim.model.simulate.responses_column` makes its column around, as it
    lies.

    >>> base, matrix = response_buffers({"deaths_offsets": np.array([0, 2, 2, 3]),
    ...                                  "scale_offsets": np.array([0, 0, 1, 2])})
    >>> base.tolist(), matrix.shape
    ([0, 2, 3], (5, 5))
    """
    room = np.diff(arrays["deaths_offsets"]) + np.diff(arrays["scale_offsets"])
    base = np.zeros(len(room), np.int64)
    np.cumsum(room[:-1], out=base[1:])
    total = int(base[-1] + room[-1]) if len(room) else 0
    return base, np.zeros((rules.RESPONSE_ROWS, max(1, total)), np.int64)


#: The schedules every kernel reads, each by the name of one of its value arrays.
SCHEDULES: Final[Mapping[str, str]] = {"deaths": "deaths_at", "scale": "scale_at",
                                       "restart_at": "restart_at"}


def check_offsets(a: Mapping[str, np.ndarray], n: int,
                  lists: Mapping[str, str] = SCHEDULES) -> None:
    """Raise ``ValueError`` where a list parameter's offsets (``NAME_offsets``) do not run
    from 0 to the number of its values (its array ``lists[NAME]``), one entry per cell of
    the ``n`` + 1."""
    for name, values_name in lists.items():
        offsets = a[f"{name}_offsets"]
        values = a[values_name]
        if len(offsets) != n + 1 or offsets[0] != 0 or offsets[-1] != len(values):
            raise ValueError(f"{name}_offsets must run from 0 to the number of {name} "
                             "values, one entry per cell + 1")


def response_outputs(a: Mapping[str, np.ndarray], responses: Int64Array | None,
                     response_base: Int64Array | None, todo: Int64Array | None = None,
                     ) -> tuple[Int64Array, Int64Array]:
    """The matrix a kernel writes the batch ``a``'s responses into and each cell's first
    column of it (``response_base``), as given — both or neither: without them, a
    throwaway pair (:func:`response_buffers`) — checked, since a kernel writes without
    bounds checks: a writable C-contiguous int64 matrix of
    :data:`~reconsim.model.rules.RESPONSE_ROWS` rows with a column for each death event
    and each change of desired of every cell (of ``todo``, the rows a kernel runs, where
    given), from its first on."""
    if responses is None and response_base is None:
        response_base, responses = response_buffers(a)
    elif responses is None or response_base is None:
        raise TypeError("responses and response_base go together: give both or neither")
    n = len(a["controller"])
    if not (isinstance(responses, np.ndarray) and responses.dtype == np.int64
            and responses.ndim == 2 and responses.shape[0] == rules.RESPONSE_ROWS
            and responses.flags.c_contiguous and responses.flags.writeable):
        raise ValueError(f"responses must be a writable C-contiguous int64 matrix of "
                         f"{rules.RESPONSE_ROWS} rows")
    base = frozen(np.asarray(response_base, np.int64))
    if base.shape != (n,):
        raise ValueError(f"response_base must hold one column per cell ({n})")
    events = np.diff(a["deaths_offsets"]) + np.diff(a["scale_offsets"])
    first = base if todo is None else base[todo]
    events = events if todo is None else events[todo]
    if len(first) and (first.min() < 0 or (first + events).max() > responses.shape[1]):
        raise ValueError("responses must have a column for each death event and each "
                         "change of desired of every cell, from its response_base on")
    return responses, base


def largest_desired(a: Mapping[str, np.ndarray]) -> Int64Array:
    """Each cell's largest desired over its run: its ``desired`` or, where larger, its scale
    schedule's largest (``scale_offsets``, ``scale_desired``): what the kernels' refusal
    bounds read.

    >>> largest_desired({"desired": np.array([3, 3, 9]),
    ...                  "scale_offsets": np.array([0, 2, 2, 3]),
    ...                  "scale_desired": np.array([1, 7, 4])}).tolist()
    [7, 3, 9]
    """
    desired = np.asarray(a["desired"], np.int64)
    offsets = np.asarray(a["scale_offsets"])
    values = np.asarray(a["scale_desired"], np.int64)
    if not len(values):
        return desired
    has = offsets[1:] > offsets[:-1]
    top = desired.copy()
    # a cell's changes run from its offset to the next cell's with changes (none between)
    top[has] = np.maximum(desired[has], np.maximum.reduceat(values, offsets[:-1][has]))
    return top


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
