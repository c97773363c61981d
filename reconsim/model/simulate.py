"""Cells in, metrics out: the polars face of the kernel, and ``run_cell`` for one cell.

The kernel (numba) loads on the first simulation, not on import: reading parameters,
specs and tables does not pay for it.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from reconsim.model import metrics
from reconsim.model.arrow import arrow_lists
from reconsim.model.controllers import CellError, Controller, ControllerError, registry
from reconsim.model.kernels.arrays import (
    KernelDecisionError,
    controller_params,
    numbered,
    response_buffers,
    take_rows,
)
from reconsim.model.kinds import NAMED
from reconsim.model.metrics import (
    METRIC_NAMES,
    METRICS,
    RESPONSE_FIELDS,
    RESPONSES,
    RESPONSES_DTYPE,
)
from reconsim.model.params import (
    BY_NAME,
    DEATHS_DTYPE,
    DELAY_PARAMS,
    PARAM_DTYPES,
    PARAMS,
    WORLD_OWN,
    WORLD_SWITCHES,
    Cell,
    IntOrParam,
    Parameter,
    all_params,
    applies,
    cell_text,
    make_cell,
    options_of,
    takes_cell_keywords,
)

__all__ = ["DEATHS_DTYPE", "PARAM_DTYPES", "cell_arrays", "cells_frame", "kernel_inputs",
           "run_cell", "simulate", "simulate_cell"]

#: Each delay table's parameter, by name, and the uniform spread it replaces.
DELAYS_BY_NAME = {p.name: p.kind.spread for p in DELAY_PARAMS}  # type: ignore[attr-defined]
#: Parameter columns a frame must carry; the others fall back to their defaults.
REQUIRED_COLUMNS = tuple(p.name for p in PARAMS if p.required)


def _frame_params(cells: pl.DataFrame) -> tuple[pl.DataFrame, tuple[Parameter, ...],
                                                 tuple[Controller, ...]]:
    """``cells`` with each controller named by its name, the parameters its rows take
    (:data:`PARAMS` and their user controllers' own) and its controllers. A controller
    named by its import path is resolved (its module imported) and its rows renamed; an
    unknown one is refused."""
    if "controller" not in cells.columns or not isinstance(
            cells.schema["controller"], (pl.String, pl.Categorical, pl.Enum)):
        return cells, PARAMS, ()  # the frame's check says what is wrong
    values = cells["controller"].cast(pl.String).unique().drop_nulls().to_list()
    try:
        renamed = {v: registry.resolve(v).name for v in values if v not in registry.names()}
    except ControllerError as exc:
        raise ValueError(f"controller: {exc}") from None
    if renamed:
        cells = cells.with_columns(pl.col("controller").cast(pl.String).replace(renamed))
    names = {renamed.get(v, v) for v in values}
    controllers = tuple(registry.get(n) for n in sorted(names) if n in registry.names())
    return cells, _params_of(names), controllers


def _params_of(controllers: set[str]) -> tuple[Parameter, ...]:
    """The parameters rows of ``controllers`` (known names) take: :data:`PARAMS`, then the
    options of those that have any."""
    with_options = [c for c in controllers if options_of(registry.get(c))]
    if not with_options:
        return PARAMS
    return tuple(p for p in all_params() if p.name in PARAM_DTYPES
                 or any(p.applies_to(c) for c in with_options))


@takes_cell_keywords
def run_cell(**params: Any) -> dict[str, Any]:
    """Simulate one cell with the kernel and return its metrics.

    Keyword arguments are the fields of :class:`reconsim.Cell`, with its defaults, and the
    parameters of its controller (``controller`` a name, ``package.module:Name`` or a
    :class:`~reconsim.model.controllers.Controller`): see :func:`reconsim.model.params.make_cell`.

    >>> m = run_cell(controller="ledger", G=60)
    >>> m["created"], m["unneeded"], m["delete_commands"], m["overshoot"]
    (40, 32, 128, 24)
    """
    return simulate_cell(make_cell(**params))


def simulate_cell(cell: Cell) -> dict[str, Any]:
    """The metrics of one checked cell, as :func:`simulate` gives them for a frame of it
    (Python numbers, None for a null), from the kernel that :func:`simulate` would pick,
    called with the cell's arrays (:func:`cell_arrays`) instead of a frame's."""
    controller = registry.get(cell.controller)
    if not controller.compiled:
        from reconsim.model.reference import run_reference

        return run_reference(cell)
    try:
        raw, responses = _kernel_raw(controller, cell)
    except KernelDecisionError as exc:
        raise _reference_line(cell, exc) from None
    return metrics.of_run(raw, cell, metrics.responses_of(responses, 0, raw[RESPONSES]))


def _kernel_raw(controller: Controller, cell: Cell) -> tuple[dict[str, Any], np.ndarray]:
    """The raw counts of one checked cell of a compiled ``controller``, from the kernel
    that :func:`simulate` would pick, and the matrix of its responses (from column 0)."""
    known = registry.known()
    world = controller.rank is not None or _leaves_seed_world(cell)
    arrays = cell_arrays(cell, count=not (controller.syncs_on_events or world))
    base, responses = response_buffers(arrays)
    if controller.syncs_on_events:
        from reconsim.model.kernels.events import simulate_event_arrays
        from reconsim.model.kernels.world import WORLD_OUT_COLUMNS

        out = simulate_event_arrays(controllers=known, responses=responses,
                                    response_base=base, **arrays)
        raw = dict(zip(WORLD_OUT_COLUMNS, out[0].tolist(), strict=True))
    elif world:
        from reconsim.model.kernels.world import WORLD_OUT_COLUMNS, simulate_world_arrays

        out = simulate_world_arrays(controllers=known, parallel=False, responses=responses,
                                    response_base=base, **arrays)
        raw = dict(zip(WORLD_OUT_COLUMNS, out[0].tolist(), strict=True))
    else:
        from reconsim.model.kernels.count import OUT_COLUMNS, simulate_arrays

        out = simulate_arrays(controllers=known, parallel=False, responses=responses,
                              response_base=base, **arrays)
        raw = dict(zip(OUT_COLUMNS, out[0].tolist(), strict=True))
        raw["create_commands"] = raw["created"]
        raw["failed_creates"] = 0
    return raw, responses


def _leaves_seed_world(cell: Cell) -> bool:
    """Whether a world switch of ``cell`` is off its default: the world kernel's cell
    (:func:`world_rows` for one cell; a switch that does not apply is null, and off)."""
    layout = _layout(registry.get(cell.controller))
    return any(getattr(cell, p.name) != p.default for p in layout.switches) or not all(
        layout.applies[p.name] for p in layout.switches)


@dataclass(frozen=True)
class _Layout:
    """The parameters a cell of a controller gives the kernels (reconsim's, then its own),
    whether each applies to it (else its array holds a null's), and its world switches."""

    params: tuple[Parameter, ...]
    applies: dict[str, bool]
    switches: tuple[Parameter, ...]
    #: A parameter whose value may name another (``initial = "desired"``), by its index in
    #: :attr:`params`: the index of the one it names.
    named: dict[int, int]


@functools.lru_cache(maxsize=256)
def _layout(controller: Controller) -> _Layout:
    """:class:`_Layout` of ``controller``'s cells, once per definition."""
    params = tuple(p for p in _params_of({controller.name}) if p.name not in WORLD_OWN)
    index = {p.name: i for i, p in enumerate(params)}
    return _Layout(params, {p.name: applies(p.name, controller.name) for p in params},
                   tuple(p for p in params if p.name in WORLD_SWITCHES),
                   {i: index[p.kind.param] for i, p in enumerate(params)
                    if isinstance(p.kind, IntOrParam)})


def cell_arrays(cell: Cell, *, count: bool = False) -> dict[str, np.ndarray]:
    """The keyword arrays the kernels take for one checked cell, equal to
    :func:`kernel_inputs` of :func:`cells_frame` ``([cell])`` (``controller`` included;
    with ``count``, those of seed 001's world only) — built from its values, not through
    a frame: each parameter's value (null where it does not apply to the cell's
    controller) as its kind encodes it (:meth:`~reconsim.model.kinds.Kind.value_arrays`),
    then a value naming another parameter resolved."""
    layout = _layout(registry.get(cell.controller))
    options = dict(cell.options)
    values = [(options[p.name] if p.name in options else getattr(cell, p.name))
              if layout.applies[p.name] else None for p in layout.params]
    # The scalars as one read-only array, each a one-cell view of it: one allocation
    codes = {i: p.kind.code(values[i]) for i, p in enumerate(layout.params)
             if p.kind.scalar and not (count and p.world)}
    for i, other in layout.named.items():
        if codes[i] == NAMED:
            codes[i] = codes[other]
    row = np.array(list(codes.values()), np.int64)
    row.flags.writeable = False
    arrays = {layout.params[i].name: row[k:k + 1] for k, i in enumerate(codes)}
    for i, p in enumerate(layout.params):
        if not p.kind.scalar and not (count and p.world):
            arrays.update(p.kind.value_arrays(p.name, values[i]))
    return arrays


def cells_frame(cells: list[Cell]) -> pl.DataFrame:
    """A frame with one row per cell, in the column layout :func:`simulate` reads;
    a parameter that does not apply to a cell's controller is null."""

    def value(cell: Cell, p: Parameter) -> Any:
        if not applies(p.name, cell.controller):
            return None
        return p.kind.to_column(cell.value(p.name))

    controllers = {c.controller for c in cells}
    params = [p for p in all_params()
              if p.name in PARAM_DTYPES or any(applies(p.name, c) for c in controllers)]
    return pl.DataFrame({p.name: [value(c, p) for c in cells] for p in params},
                        schema={p.name: p.kind.dtype for p in params})


def simulate(cells: pl.DataFrame, *, checked: bool = False) -> pl.DataFrame:
    """Simulate every row of ``cells``; return its columns plus one column per metric.

    Parameter columns: ``controller`` (str), ``G``, ``U``, ``B``, ``desired``, ``duration``
    (integers) and ``deaths`` (list of struct{at, count}) are required; ``ledger_base``,
    ``observe`` (str), ``max_per_round`` (integer, null for no cap), ``gain`` (a number),
    ``ttl`` (integer), ``restart_at`` (list of integers) and the world parameters
    (``B_spread``, ``G_spread``, ``U_jitter``, ``seed``, ``grace`` integers;
    ``delete_order``, ``trigger`` strings; ``fail_rate``, ``lost_rate`` numbers;
    ``slow_start`` boolean; ``lag`` list of struct{from, to, extra}; ``create_faults`` list
    of struct{at, count, kind}; ``B_delays``, ``G_delays`` delay tables, list of
    struct{value, weight}, each empty or in place of its spread) are optional and take
    their defaults when absent. Rows in seed 001's world run on the count kernel, the
    others (and those of a controller with a ``rank``) on the world kernel, those of a
    controller that syncs on events on the event kernel, the Deployment world's on its own
    kernel, those of a controller declared ``compiled=False`` on the reference model. A
    column of parameters that apply to other controllers than a row's is not read for that
    row; ``ttl`` may be null where the controller is not ``expectations`` or
    ``replicaset``, ``restart_at`` where it is ``ledger``.
    Other columns pass through untouched; rows keep their order. Raises ``ValueError``
    naming the column and the offending value if a parameter is bad.
    ``checked=True`` skips those checks, for frames built from checked values (a grid
    expanded from a checked spec): validation happens once, where data enters.

    A controller whose code misbehaves in a cell — raises, or returns what it may not —
    is refused with the reference model's line for the first such row (a
    :class:`~reconsim.controllers.DecisionError` naming the second), whichever kernel ran
    it; a refusal of one cell (that, or a
    :class:`~reconsim.controllers.RunawayError`) gives the frame's ``row`` and ends with
    the cell as ``reconsim run``'s flags.
    """
    try:
        return _simulate(cells, checked=checked)
    except KernelDecisionError as exc:
        refusal: CellError = _reference_refusal(cells, exc)
    except CellError as exc:
        if exc.row is None or exc.cell is not None:
            raise
        refusal = exc
    frame, params, _ = _frame_params(cells)
    assert refusal.row is not None
    raise refusal.of(cell_text(_cell_of(frame, refusal.row, params))) from None


def _reference_refusal(cells: pl.DataFrame, exc: KernelDecisionError) -> CellError:
    """The refusal of the first row of ``cells`` (checked) that a kernel refused with
    ``exc``: the reference model's line for it where the reference model refuses it too
    (it knows the second and the value), else ``exc`` naming the row. Where ``exc`` names
    no row (an exception inside a kernel, a hook numba types wrongly), the row is found
    by running halves of the frame again, the first half first: at most twice the cells."""
    frame, params, _ = _frame_params(cells)
    row = exc.row
    if row is None:
        lo, hi = 0, frame.height
        while hi - lo > 1 and row is None:
            mid = (lo + hi) // 2
            try:
                _simulate(frame[lo:mid], checked=True)
            except KernelDecisionError as part:
                row = None if part.row is None else lo + part.row
                hi = mid
            else:
                lo = mid
        row = lo if row is None else row
    return _reference_line(_cell_of(frame, row, params), exc).at(row)


def _reference_line(cell: Cell, exc: KernelDecisionError) -> CellError:
    """The refusal of ``cell``, which a kernel refused with ``exc``: the reference model's
    where it refuses the cell too (its line names the second and the value), else ``exc``."""
    from reconsim.model.reference import run_reference

    try:
        run_reference(cell)
    except CellError as reference:
        return reference
    return exc


def _simulate(cells: pl.DataFrame, *, checked: bool) -> pl.DataFrame:
    """:func:`simulate`, whose refusals of a cell are the kernels' own (a
    :class:`KernelDecisionError` without the reference model's second)."""
    from reconsim.model.kernels.count import OUT_COLUMNS, simulate_arrays

    cells, params, controllers = _frame_params(cells)
    rolling_rows = _rows_of(cells, [c.name for c in controllers if c.world == "deployment"])
    if rolling_rows is not None:
        if not checked:
            _check_frame(cells, params)
        return _simulate_rolling(cells, rolling_rows, params, checked=checked)
    slow = _rows_of(cells, [c.name for c in controllers if not c.compiled])
    events = _rows_of(cells, [c.name for c in controllers if c.syncs_on_events and c.compiled])
    if slow is not None or events is not None:
        if not checked:
            _check_frame(cells, params)
        if slow is not None:
            return _simulate_split(cells, slow, params)
        assert events is not None
        return _simulate_events(cells, events, params)
    off = None if checked else _check_columns(cells, params)
    world = world_rows(cells, off)
    # The count kernel does not hold the entries (seed 001's world has no use for them):
    # rows of a controller that ranks the entries it deletes go to the world kernel.
    ranked = _rows_of(cells, [c.name for c in controllers if c.rank is not None])
    if ranked is not None:
        world = ranked if world is None else world | ranked
    known = registry.known()
    arrays = _encoded(cells, params, off, count=world is None)
    base, responses = response_buffers(arrays)
    if world is None:  # seed 001's world throughout: the count kernel alone
        counts = simulate_arrays(controllers=known, responses=responses, response_base=base,
                                 **arrays)  # type: ignore[arg-type]
        raw = dict(zip(OUT_COLUMNS, counts.T, strict=True))
        raw["create_commands"] = raw["created"]
        raw["failed_creates"] = np.zeros(cells.height, np.int64)
        return _with_metrics(cells, raw, responses, base)
    from reconsim.model.kernels.count import COUNT_INPUTS
    from reconsim.model.kernels.world import WORLD_OUT_COLUMNS, simulate_world_arrays

    out = np.empty((len(WORLD_OUT_COLUMNS), cells.height), np.int64)  # a metric a row
    if not world.all():
        # Each row to the kernel that is exact for it: the arrays are split, not the frame
        # (gathering a frame's list columns costs several times more).
        rows = np.flatnonzero(~world)
        with numbered(rows):
            present = [p for p in controller_params(known) if p in arrays]
            count = take_rows(arrays, rows, (*COUNT_INPUTS, *present))
            out[:len(OUT_COLUMNS), rows] = simulate_arrays(
                controllers=known, responses=responses, response_base=base[rows],
                **count).T  # type: ignore[arg-type]
        out[WORLD_OUT_COLUMNS.index("create_commands"), rows] = out[
            OUT_COLUMNS.index("created"), rows]
        out[WORLD_OUT_COLUMNS.index("failed_creates"), rows] = 0
    # the world rows read in place, their metrics written into their columns
    simulate_world_arrays(controllers=known, rows=None if world.all() else np.flatnonzero(world),
                          out=out, responses=responses, response_base=base,
                          **arrays)  # type: ignore[arg-type]
    return _with_metrics(cells, dict(zip(WORLD_OUT_COLUMNS, out, strict=True)), responses, base)


def _with_metrics(cells: pl.DataFrame, raw: dict[str, np.ndarray], responses: np.ndarray,
                  base: np.ndarray) -> pl.DataFrame:
    """``cells`` with one column per metric, from a kernel's raw columns, the formulas
    evaluated by polars (:func:`reconsim.model.metrics.exprs`), then the responses to their
    events (:func:`responses_column` of the kernel's ``responses`` and ``base``)."""
    counts = pl.DataFrame(raw).with_columns(cells["desired"], cells["duration"],
                                            initial=initial_copies(cells))
    columns = counts.select(metrics.exprs({name: pl.col(name) for name in counts.columns})
                            ).get_columns()
    return cells.with_columns(*columns, responses_column(responses, base, raw[RESPONSES]))


def responses_column(responses: np.ndarray, base: np.ndarray, counts: np.ndarray) -> pl.Series:
    """The :data:`~reconsim.model.metrics.RESPONSES` column of a batch: row i's ``counts[i]``
    responses from column ``base[i]`` of ``responses`` on (a field a row), settle -1 as null.

    The column is made around the matrix's own rows, not copied (so the matrix must not
    change afterwards): where every row's responses lie one after the other from column 0
    (the layout :func:`~reconsim.model.kernels.arrays.response_buffers` gives a batch whose
    events all fall within the run, each in a second of its own), each field is a row of
    ``responses`` as it is; else the rows' responses are first gathered into that layout.
    On the default sweep's 316,800 cells (1.1 million responses) that takes about 3 ms,
    where cutting a padded table's rows to their lengths with polars' list functions took
    60 (:func:`reconsim.model.arrow.arrow_lists`)."""
    counts = np.asarray(counts, np.int64)
    offsets = np.zeros(len(counts) + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    total = int(offsets[-1])
    if not np.array_equal(base, offsets[:-1]):
        where = np.repeat(base - offsets[:-1], counts) + np.arange(total, dtype=np.int64)
        responses = np.take(responses, where, axis=1)
    fields = [responses[k, :total] for k in range(len(RESPONSE_FIELDS))]
    settle = fields[tuple(RESPONSE_FIELDS).index("settle")]
    valid = settle >= 0
    nulls = {"settle": valid} if not valid.all() else {}
    return arrow_lists(RESPONSES, offsets, dict(zip(RESPONSE_FIELDS, fields, strict=True)),
                       nulls)


def initial_copies(cells: pl.DataFrame) -> np.ndarray:
    """The copies each row runs at t = 0: its ``initial``, ``desired`` where it names it
    (0 without the column)."""
    if "initial" not in cells.columns:
        return np.zeros(cells.height, np.int64)
    kind = BY_NAME["initial"].kind
    assert isinstance(kind, IntOrParam)
    return kind.resolve(cells["initial"].fill_null(0).to_numpy(), cells["desired"].to_numpy())


def frame_cells(cells: pl.DataFrame) -> list[Cell]:
    """The rows of a checked frame (a sweep's grid, say) as :class:`Cell` values."""
    cells, params, _ = _frame_params(cells)
    return [_cell_of(cells, i, params) for i in range(cells.height)]


def _cell_of(cells: pl.DataFrame, i: int, params: tuple[Parameter, ...]) -> Cell:
    """Row ``i`` of a checked frame as a :class:`Cell`: its values of the parameters that
    apply to its controller (a frame's column for other controllers is not its parameter)."""
    names = {p.name: p for p in params}
    row = cells.row(i, named=True)
    controller = row["controller"]
    return make_cell(**{k: names[k].kind.from_column(v) for k, v in row.items()
                        if k in names and (v is not None or names[k].kind.null_is_value)
                        and names[k].applies_to(controller)})


def world_rows(cells: pl.DataFrame, off: list[str] | None = None) -> np.ndarray | None:
    """Which rows leave seed 001's world (a world switch off its default), or None when
    none does. Those rows need the world kernel; the others the count kernel. ``off``:
    the switches off their default somewhere, if known already."""
    # First which columns leave it anywhere: a frame that carries them all at their
    # defaults costs no row mask.
    off = _switches_off(cells) if off is None else off
    schema = cells.schema  # (built anew at each call: once here)
    differs = [_off_default(BY_NAME[name], schema[name]) for name in off]
    if not differs:
        return None
    return cells.select(pl.any_horizontal(differs)).to_series().to_numpy()


def _rows_of(cells: pl.DataFrame, names: list[str]) -> np.ndarray | None:
    """The rows whose controller is one of ``names``, or None when there are none."""
    if not names:
        return None
    return cells["controller"].cast(pl.String).is_in(names).to_numpy()


def _simulate_split(cells: pl.DataFrame, slow: np.ndarray,
                    params: tuple[Parameter, ...]) -> pl.DataFrame:
    """``cells`` (checked) with their metrics: the rows ``slow`` marks (a controller declared
    ``compiled=False``) on the reference model, one by one, the others on the kernels."""
    from reconsim.model.reference import run_reference

    values = _empty_values(cells.height)
    fast = np.flatnonzero(~slow)
    if len(fast):
        with numbered(fast):
            _scatter(values, fast, _simulate(cells[fast], checked=True))
    for i in np.flatnonzero(slow):
        try:
            got = run_reference(_cell_of(cells, int(i), params))
        except CellError as exc:
            raise exc.at(int(i)) from None
        for name, column in values.items():
            column[i] = got[name]
    return _with_values(cells, values)


def _simulate_rolling(cells: pl.DataFrame, rows: np.ndarray, params: tuple[Parameter, ...],
                      *, checked: bool) -> pl.DataFrame:
    """``cells`` with their metrics: the rows ``rows`` marks (the Deployment world's) on its
    kernel (:func:`reconsim.model.rolling.kernel_counts`), the others on theirs. Unless the
    frame is ``checked``, each of those rows is made a cell first: the world's own refusals
    (a parameter of another world off its default, ``initial``, both budgets 0, the size)
    are its cells'."""
    from reconsim.model import rolling

    if not checked:
        for i in np.flatnonzero(rows):
            try:
                _cell_of(cells, int(i), params)
            except ValueError as exc:  # the cell's own refusal, and where it is
                raise ValueError(f"row {i}: {exc}") from None
    if rows.all():
        return _with_metrics(cells, *rolling.kernel_counts(cells))
    values = _empty_values(cells.height)
    for part in (np.flatnonzero(rows), np.flatnonzero(~rows)):
        with numbered(part):
            _scatter(values, part, _simulate(cells[part], checked=True))
    return _with_values(cells, values)


def _simulate_events(cells: pl.DataFrame, events: np.ndarray,
                     params: tuple[Parameter, ...]) -> pl.DataFrame:
    """``cells`` (checked) with their metrics: the rows ``events`` marks (a controller that
    syncs on events) on the event kernel, the others on the other kernels."""
    from reconsim.model.kernels.events import simulate_event_arrays
    from reconsim.model.kernels.world import WORLD_OUT_COLUMNS

    if events.all():
        arrays = kernel_inputs(cells, params=params)
        base, responses = response_buffers(arrays)
        out = simulate_event_arrays(controllers=registry.known(), responses=responses,
                                    response_base=base, **arrays)
        return _with_metrics(cells, dict(zip(WORLD_OUT_COLUMNS, out.T, strict=True)),
                             responses, base)
    values = _empty_values(cells.height)
    for rows in (np.flatnonzero(events), np.flatnonzero(~events)):
        with numbered(rows):
            _scatter(values, rows, _simulate(cells[rows], checked=True))
    return _with_values(cells, values)


def _empty_values(n: int) -> dict[str, list[Any]]:
    """A list of ``n`` Nones per metric and for the responses, for :func:`_scatter`."""
    return {name: [None] * n for name in (*METRIC_NAMES, RESPONSES)}


def _scatter(values: dict[str, list[Any]], rows: np.ndarray, done: pl.DataFrame) -> None:
    """Put the metrics of ``done`` (the frame's rows ``rows``, simulated) into ``values``."""
    for name, column in values.items():
        for i, v in zip(rows, done[name].to_list(), strict=True):
            column[i] = v


def _with_values(cells: pl.DataFrame, values: dict[str, list[Any]]) -> pl.DataFrame:
    """``cells`` with one column per metric and the responses, from ``values`` (a list
    each)."""
    return cells.with_columns(
        *(pl.Series(m.name, values[m.name], dtype=pl.Float64 if m.float else pl.Int64)
          for m in METRICS), pl.Series(RESPONSES, values[RESPONSES], dtype=RESPONSES_DTYPE))


def _switches_off(cells: pl.DataFrame) -> list[str]:
    """The world switches among ``cells``' columns that are off their default (or null) in
    some row: one pass of reductions, side by side."""
    names = [name for name in WORLD_SWITCHES if name in cells.columns]
    if not names or not cells.height:
        return []
    schema = cells.schema
    off = cells.select(_off_default(BY_NAME[n], schema[n]).any().alias(n)
                       for n in names).row(0)
    return [n for n, o in zip(names, off, strict=True) if o]


def _off_default(p: Parameter, dtype: pl.DataType) -> pl.Expr:
    """:meth:`Parameter.off_default` for a column of ``dtype``, with an empty schedule's
    test as a length: comparing lists of structs element-wise costs ~1 us a row, a length
    nothing."""
    if dtype == pl.Null:  # all null: off in every row
        return pl.lit(value=True)
    if isinstance(p.kind.dtype, pl.List) and not p.default:
        return pl.col(p.name).list.len().ne_missing(0)  # a null list is off the default too
    return p.off_default()


#: Frames from this many rows on have their columns encoded on several threads at once.
THREADED_FROM = 10_000


@functools.cache
def _pool(role: str) -> ThreadPoolExecutor | None:
    """A pool of threads for ``role``, made once per process: as many as polars' own pool
    holds (a sweep's workers size theirs to their share of the cores), none where that is
    one thread."""
    n = min(8, pl.thread_pool_size())
    return ThreadPoolExecutor(max_workers=n, thread_name_prefix=f"reconsim-{role}") if n > 1 \
        else None


def _threads() -> ThreadPoolExecutor | None:
    """Threads that encode a large frame's columns side by side (polars releases the GIL
    while it works)."""
    return _pool("columns")


def kernel_inputs(cells: pl.DataFrame, *, count: bool = False,
                  params: Iterable[Parameter] = PARAMS) -> dict[str, np.ndarray]:
    """The keyword arrays the kernels take, for checked cells: each parameter's column (or
    its default) as its kind encodes it. :func:`reconsim.model.kernels.world.simulate_world_arrays`
    takes them all; with ``count``, only those :func:`reconsim.model.kernels.count.simulate_arrays`
    takes (seed 001's world). A large frame's columns are encoded on several threads (on the
    default sweep's 316,800 cells, 29 ms on one thread and 18 on two)."""
    params = tuple(params)

    def encoded(p: Parameter) -> dict[str, np.ndarray]:
        if p.name in cells.columns:
            return p.kind.arrays(p.name, cells[p.name])
        return _default_arrays(p, cells.height)

    # (a world of its own reads its parameters itself: no kernel here takes them)
    chosen = [p for p in params if not (count and p.world) and p.name not in WORLD_OWN]
    threads = _threads() if cells.height >= THREADED_FROM else None
    parts = map(encoded, chosen) if threads is None else threads.map(encoded, chosen)
    arrays: dict[str, np.ndarray] = {}
    for part in parts:
        arrays.update(part)
    for p in params:  # a value that names another parameter takes that one's
        if isinstance(p.kind, IntOrParam) and p.name in arrays:
            arrays[p.name] = p.kind.resolve(arrays[p.name], arrays[p.kind.param])
    return arrays


def _default_arrays(p: Parameter, n: int) -> dict[str, np.ndarray]:
    """The arrays of ``n`` rows that all hold ``p``'s default: one row's, repeated (an
    offsets array steps by the row's length)."""
    one = p.kind.arrays(p.name, pl.Series(p.name, [p.kind.to_column(p.default)],
                                          dtype=p.kind.dtype))
    return {key: np.arange(n + 1, dtype=np.int64) * int(a[-1]) if key.endswith("_offsets")
            else np.tile(a, n) for key, a in one.items()}


def _encoded(cells: pl.DataFrame, params: tuple[Parameter, ...], off: list[str] | None, *,
             count: bool) -> dict[str, np.ndarray]:
    """:func:`kernel_inputs` of ``cells``. Unless the frame is checked already (``off`` is
    None), its values are checked on another thread meanwhile (:func:`_check_values`,
    ``off`` the world switches :func:`_check_columns` found off their default): a bad
    frame raises the check's error, never what encoding it may have raised, and only a
    good frame's arrays are returned. The two overlap where the cores have room: on the
    default sweep's 316,800 cells the checks take 24 ms and the encoding 18 ms one after
    the other, 39 and 30 ms of CPU; on two cores the whole call gained about 2 ms of 115."""
    if off is None:
        return kernel_inputs(cells, count=count, params=params)
    checker = _checker()
    if checker is None:  # one thread: one after the other
        _check_values(cells, params, off)
        return kernel_inputs(cells, count=count, params=params)
    checking = checker.submit(_check_values, cells, params, off)
    try:
        arrays = kernel_inputs(cells, count=count, params=params)
    except Exception:
        refused = checking.exception()
        if refused is not None:  # a bad frame: the check names what is wrong
            raise refused from None
        raise
    checking.result()
    return arrays


def _checker() -> ThreadPoolExecutor | None:
    """The threads that check frames while :func:`_encoded` encodes them (a pool apart
    from :func:`_threads`, which the encoding waits for)."""
    return _pool("check")


def _check_frame(cells: pl.DataFrame, params: Iterable[Parameter] = PARAMS) -> list[str]:
    """Raise ``ValueError`` naming the column and a value when ``cells`` is not simulable;
    return the world switches off their default somewhere (:func:`_switches_off`).

    Columns and dtypes first (:func:`_check_columns`), then the values
    (:func:`_check_values`). Only a failing frame pays for more than that.
    """
    params = tuple(params)
    off = _check_columns(cells, params)
    _check_values(cells, params, off)
    return off


def _check_columns(cells: pl.DataFrame, params: Iterable[Parameter] = PARAMS) -> list[str]:
    """Raise ``ValueError`` naming the column when ``cells`` lacks a required column, has
    one named as a metric, or one of a parameter's with the wrong dtype; return the world
    switches off their default somewhere (:func:`_switches_off`)."""
    for name in REQUIRED_COLUMNS:
        if name not in cells.columns:
            raise ValueError(f"cells: missing column {name!r}")
    clash = [name for name in (*METRIC_NAMES, RESPONSES) if name in cells.columns]
    if clash:
        raise ValueError(f"cells: column {clash[0]!r} is a metric name and would be overwritten")
    schema = cells.schema  # (built anew at each call: once here)
    for p in params:
        if p.name in schema and schema[p.name] != pl.Null:  # all null: the null check says
            p.kind.check_dtype(p.name, schema[p.name])      # if that is allowed
    return _switches_off(cells) if cells.height else []


def _check_values(cells: pl.DataFrame, params: Iterable[Parameter], off: list[str]) -> None:
    """Raise ``ValueError`` naming the column and a value when a value of ``cells`` (its
    columns checked: :func:`_check_columns`) is not simulable. ``off``: the world switches
    off their default somewhere.

    Values in one pass that computes, per column, the statistics its kind judges (the
    first forbidden null, the extremes, ...).
    """
    if not cells.height:
        return
    schema = cells.schema
    # A world switch at its default in every row (no null either) holds a valid value:
    # a frame may carry them all without paying for their checks.
    present = [p for p in params if p.name in schema
               and (p.name not in WORLD_SWITCHES or p.name in off)]
    # A column without nulls has no forbidden one (its null count is known, not counted)
    nulls = [p for p in present if cells[p.name].null_count()]
    names = _controller_names(cells) if any(p.applies is not None for p in nulls) else []
    exprs = [e for p in nulls if (e := _first_bad_null(p, names)) is not None]
    # Nor has a column without a value any bad one: all null (a parameter of controllers
    # the frame does not hold), or lists that are all empty (no schedule anywhere).
    valued = [p for p in present if schema[p.name] != pl.Null
              and cells[p.name].null_count() < cells.height]
    lists = [p.name for p in valued if isinstance(schema[p.name], pl.List)]
    longest = cells.select(pl.col(n).list.len().max() for n in lists).row(0, named=True) \
        if lists else {}
    valued = [p for p in valued if longest.get(p.name) != 0]
    exprs += [e for p in valued for e in p.kind.stats(p.name)]
    # (lazily: the statistics of one column share their subexpressions, a list column
    # exploded once for all of them)
    row = cells.lazy().select(exprs).collect().row(0, named=True) if exprs else {}
    for p in present:  # column by column, in declaration order: the first problem is named
        if row.get(f"{p.name}:bad_null") is not None:
            raise ValueError(f"{p.name}: null {p.kind.null_noun} in row "
                             f"{row[f'{p.name}:bad_null']}{p.kind.null_hint}")
        if p in valued:
            p.kind.check_stats(p.name, row, cells[p.name])
    _check_one_of(cells, [p for p in present if p.name in DELAYS_BY_NAME])


def _check_one_of(cells: pl.DataFrame, tables: list[Parameter]) -> None:
    """Raise ``ValueError`` for a row that gives both a delay table and its uniform spread."""
    for p in tables:
        spread = DELAYS_BY_NAME[p.name]
        if spread not in cells.columns:
            continue
        both = cells.select(((pl.col(p.name).list.len() > 0) & (pl.col(spread) > 0))
                            .fill_null(value=False).arg_true().first()).item()
        if both is not None:
            raise ValueError(f"{p.name}: row {both} gives a delay table and {spread} "
                             f"{cells[spread][both]}; give one of the two")


def _controller_names(cells: pl.DataFrame) -> list[str]:
    """The controllers ``cells`` names (its controller column's values, nulls left out)."""
    return cells["controller"].cast(pl.String).unique().drop_nulls().to_list()


def _first_bad_null(p: Parameter, controllers: list[str]) -> pl.Expr | None:
    """The first row where ``p`` is null although it applies (a null cap means no cap): a
    row whose controller is not a known one that ``p`` does not apply to. None where no
    row of the frame can hold such a null: a null that means something, or ``p`` applies
    to none of ``controllers``, the frame's controllers (a column of another controller's
    parameter, null throughout, costs no look at its rows)."""
    if p.kind.null_is_value:
        return None
    if p.applies is None:
        bad = pl.col(p.name).is_null()
    else:
        known = registry.names()
        not_applicable = [c for c in controllers if c in known and not applies(p.name, c)]
        if len(not_applicable) == len(controllers):
            return None
        bad = pl.col(p.name).is_null() & ~pl.col("controller").cast(pl.String).is_in(
            not_applicable)
    return bad.arg_true().first().alias(f"{p.name}:bad_null")
