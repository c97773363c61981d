"""Sweep specs: a TOML grid over the cell parameters, named death schedules, named
lag and fault schedules (``[lag.X] windows = [...]``, ``[faults.X] events = [...]``) and
named delay distributions (``[delays.X] samples = [...]``, ``csv``, ``quantiles`` or
``histogram``: :mod:`reconsim.model.delays`), which ``G_delays`` and ``B_delays`` name.

A spec is read and checked completely before anything is run or written. Every
problem is a :class:`SpecError` whose one-line message names the key and the value.

>>> spec = parse_spec('''
... name = "demo"
... [grid]
... G = [0, 30]
... U = { from = 5, to = 15, step = 5 }
... ''')
>>> spec.n_cells, spec.axes["U"]
(6, (5, 10, 15))
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import sys
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from reconsim.errors import ReconsimError
from reconsim.model import delays
from reconsim.model.controllers import Controller, ControllerError, registry
from reconsim.model.deployment import CELL_PARAMS
from reconsim.model.kinds import Delays, Int, Records
from reconsim.model.params import (
    DEFAULTS,
    MAX_COPIES,
    MAX_EVENTS,
    MAX_SECONDS,
    PARAM_NAMES,
    PARAMS,
    Deaths,
    Parameter,
    applies,
    check_deaths,
    check_value,
    make_cell,
    options_of,
    parameter,
    refuse_inapplicable,
    shown,
)
from reconsim.model.rng import death_seconds

if TYPE_CHECKING:
    from numpy.typing import NDArray


class SpecError(ReconsimError, ValueError):
    """A spec file that cannot be run; the message names the key and the value."""


#: Axes a grid may name: every model parameter, with ``schedule`` in place of ``deaths``.
AXES: Final[tuple[str, ...]] = tuple("schedule" if p == "deaths" else p for p in PARAM_NAMES)
#: The name the model's default death schedule gets when a grid names no schedule.
DEFAULT_SCHEDULE: Final = "default"
#: Cells per chunk file unless the spec says otherwise (or its cells' lists are long: see
#: MAX_CHUNK_ENTRIES), for a grid of up to DEFAULT_CHUNK_SIZE x TARGET_CHUNKS cells.
DEFAULT_CHUNK_SIZE: Final = 50_000
#: Chunk files a larger grid is split into by default, its chunks growing up to
#: LARGE_CHUNK_SIZE cells. Every query of the table pays for each file it scans (about
#: 85 us, whatever the footer holds): at 10^8 cells in 2,011 files of 50,000 that was a
#: fifth of the report, and at 10^7 cells 202 files against 41 cost the report 1.5 s of
#: its 12 (the sweep, too, was 0.4 s faster in larger chunks). 40 chunks still keep two
#: to eight workers evenly busy.
TARGET_CHUNKS: Final = 40
#: The largest chunk a spec gets by default (~100 MB in a worker's memory).
LARGE_CHUNK_SIZE: Final = 250_000
#: The largest chunk a spec may ask for: a chunk is held in memory whole (~400 bytes a cell).
MAX_CHUNK_SIZE: Final = 10**6
#: Death events and restart times a chunk's frame may hold, summed over its cells (~50 bytes
#: each in memory). The default chunk size shrinks to fit; a chunk_size the spec sets that
#: does not fit is refused.
MAX_CHUNK_ENTRIES: Final = 10**7
#: Values an axis may hold: every value of a parameter bounded by MAX_SECONDS or MAX_COPIES.
MAX_AXIS_VALUES: Final = max(MAX_SECONDS, MAX_COPIES) + 1
#: A random death schedule's seed: any integer int64 holds.
MAX_SCHEDULE_SEED: Final = 2**63 - 1

#: Axes whose values are names of schedules defined in their own tables, by the kind of
#: their records (``lag`` names ``[lag.X]`` tables, ``create_faults`` ``[faults.X]``).
NAMED_AXES: Final[Mapping[str, Records]] = {
    p.name: p.kind for p in PARAMS if isinstance(p.kind, Records)}
#: The built-in name of the empty schedule on every named axis.
NO_SCHEDULE: Final = "none"

_SLUG = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_TOP_KEYS = {"name", "grid", "schedule", "chunk_size", "import_path", "baseline",
             *(k.table for k in NAMED_AXES.values())}
#: A death schedule's parts, by the key that names each: (its required keys, its optional
#: ones). A schedule holds one or several; those with ``every`` and ``rate`` share
#: ``count``, ``start`` and ``until``.
_SCHEDULE_PARTS: Final[Mapping[str, tuple[set[str], set[str]]]] = {
    "events": ({"events"}, set()),
    "every": ({"every", "count"}, {"start", "until"}),
    "rate": ({"rate", "count", "seed"}, {"start", "until"}),
}
#: Seeds whose random deaths :meth:`Schedule.count` draws at once.
_COUNT_BLOCK: Final = 4096


@dataclass(frozen=True)
class Schedule:
    """A named death schedule: scripted events, periodic deaths and seeded random deaths (a
    trial a second: the discrete-time Poisson process, drawn per cell on its seed's streams,
    :func:`~reconsim.model.rng.death_seconds`), any of the three or several together.

    Periodic and random deaths are generated up to each cell's duration (``until`` caps
    them further); scripted events are kept exactly as listed. A schedule of one part gives
    that part's events (periodic and random ones in order of second); of several, the union
    of their events in order of second, those of one second in the order scripted (as
    listed), periodic, random. Events of one second add up: each kills the oldest live
    copies, so (t, a) and (t, b) kill the a + b oldest, in either order.
    """

    name: str
    params: Mapping[str, Any]

    @property
    def random(self) -> bool:
        """Whether its deaths depend on the cell's seed (it has a ``rate``)."""
        return "rate" in self.params

    def events(self, duration: int, seed: int = 0) -> Deaths:
        """The schedule's (at, count) events for a run of ``duration`` seconds of a cell
        with ``seed``."""
        _, at, count = self.cells(np.array([duration]), np.array([seed]))
        return tuple(zip(at.tolist(), count.tolist(), strict=True))

    def cells(self, durations: NDArray[np.int64], seeds: NDArray[np.int64],
              ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """The events of cells ``i`` with ``durations[i]`` and ``seeds[i]``, as three flat
        arrays, each event's cell, at and count, ordered by cell and, within one, as
        :meth:`events` orders them. Vectorised: random deaths are drawn once per distinct
        seed, up to the longest run."""
        p, n = self.params, len(durations)
        cell = np.arange(n, dtype=np.int64)
        parts: list[tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]] = []
        if "events" in p:
            scripted = np.array(p["events"], dtype=np.int64).reshape(-1, 2)
            parts.append((np.repeat(cell, len(scripted)), np.tile(scripted[:, 0], n),
                          np.tile(scripted[:, 1], n)))
        ends = self._ends(durations)
        if "every" in p:
            start, every = p.get("start", p["every"]), p["every"]
            many = np.maximum(0, (ends - start) // every + 1)
            owner = np.repeat(cell, many)
            parts.append((owner, start + every * _ranks(many), np.full(len(owner), p["count"])))
        if "rate" in p:
            first = p.get("start", 0)
            distinct, which = np.unique(seeds, return_inverse=True)
            last = int(ends.max(initial=first - 1))
            row, second = death_seconds(p["seed"], p["rate"], first, last, distinct)
            # Cell i takes its seed's seconds up to its own end: a prefix of its seed's row.
            rows = np.searchsorted(row, np.arange(len(distinct) + 1))
            keyed = row * (MAX_SECONDS + 1) + second
            stop = np.searchsorted(keyed, which * (MAX_SECONDS + 1) + ends, side="right")
            lo = rows[which]
            many = np.maximum(0, stop - lo)
            owner = np.repeat(cell, many)
            parts.append((owner, second[np.repeat(lo, many) + _ranks(many)],
                          np.full(len(owner), p["count"])))
        if len(parts) == 1:
            return parts[0]
        owner, at, count = (np.concatenate(column) for column in zip(*parts, strict=True))
        order = np.lexsort((np.arange(len(owner)), at, owner))  # stable: scripted first
        return owner[order], at[order], count[order]

    def count(self, duration: int, seeds: Sequence[int] = (0,), limit: int = MAX_EVENTS,
              ) -> int:
        """The most events :meth:`events` gives a cell of ``duration`` with one of ``seeds``,
        counted without building them: scripted and periodic ones exactly
        (:meth:`fixed_count`); random ones drawn (vectorised, a block of seeds at a time,
        until a cell passes ``limit``) and counted, the sum at most ``limit + 1``."""
        p = self.params
        fixed = self.fixed_count(duration)
        if not self.random or fixed > limit:
            return fixed
        most, end = 0, self.end(duration)
        for lo in range(0, len(seeds), _COUNT_BLOCK):
            block = np.asarray(seeds[lo:lo + _COUNT_BLOCK], dtype=np.int64)
            row, _ = death_seconds(p["seed"], p["rate"], p.get("start", 0), end, block)
            most = max(most, int(np.bincount(row, minlength=1).max()))
            if fixed + most > limit:
                break
        return min(fixed + most, limit + 1)

    def fixed_count(self, duration: int) -> int:
        """How many scripted and periodic events a cell of ``duration`` has (any seed)."""
        p = self.params
        periodic = range(p.get("start", p["every"]), self.end(duration) + 1,
                         p["every"]) if "every" in p else ()
        return len(p.get("events", ())) + len(periodic)

    def end(self, duration: int) -> int:
        """The last second a periodic or random event may fall on in a run of ``duration``."""
        until: int = self.params.get("until", duration)
        return min(duration, until)

    def _ends(self, durations: NDArray[np.int64]) -> NDArray[np.int64]:
        """:meth:`end` of each duration."""
        ends: NDArray[np.int64] = np.minimum(durations, self.params.get("until", MAX_SECONDS))
        return ends


def _ranks(many: NDArray[np.int64]) -> NDArray[np.int64]:
    """``0 … many[i] - 1`` for each i, concatenated.

    >>> _ranks(np.array([2, 0, 3])).tolist()
    [0, 1, 0, 1, 2]
    """
    ranks: NDArray[np.int64] = np.arange(many.sum(), dtype=np.int64) - np.repeat(
        np.cumsum(many) - many, many)
    return ranks


@dataclass(frozen=True)
class Spec:
    """A parsed, checked sweep spec."""

    name: str
    # every axis in AXES order, singletons included, then the users' controllers' parameters
    axes: Mapping[str, tuple[Any, ...]]
    schedules: Mapping[str, Schedule]
    chunk_size: int
    source: Mapping[str, Any]  # the TOML document as read
    #: The users' controllers on the controller axis: (name, the import path or entry point
    #: the spec names it by), and the folders ``import_path`` puts on ``sys.path``.
    controllers: tuple[tuple[str, str], ...] = ()
    import_path: tuple[str, ...] = ()
    #: The names each named axis (``lag``, ``create_faults``, ``G_delays``, ...) lists, in
    #: the order of its values.
    names: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: The ``[delays.NAME]`` tables, compiled (a ``csv`` table's samples read from its file).
    delays: Mapping[str, delays.Table] = field(default_factory=dict)
    #: The user's current setting (``baseline``): axis -> one of its values (a named axis's
    #: and the schedule's by name), as the spec gives it; empty when it names none.
    baseline: Mapping[str, Any] = field(default_factory=dict)

    def block_axes(self, controller: str) -> tuple[str, ...]:
        """The axes that vary within ``controller``'s block: those that apply to it."""
        return tuple(a for a in self.axes if a != "controller"
                     and applies("deaths" if a == "schedule" else a, controller))

    @property
    def params(self) -> tuple[Parameter, ...]:
        """The parameters of its cells: a cell's, then its users' controllers'."""
        return (*PARAMS, *(parameter(a) for a in tuple(self.axes)[len(AXES):]))

    def resolve_controllers(self) -> tuple[Controller, ...]:
        """Its users' controllers, resolved (their modules imported, ``import_path`` first):
        what a worker does before it runs a chunk."""
        on_path(self.import_path)
        return tuple(registry.resolve(ref) for _, ref in self.controllers)

    def controller_identities(self) -> tuple[str, ...]:
        """The identities of its users' controllers (part of its sweep's model)."""
        return tuple(c.identity for c in self.resolve_controllers())

    def blocks(self) -> list[tuple[str, int]]:
        """(controller, cells) per controller, in grid order."""
        return [(c, math.prod(len(self.axes[a]) for a in self.block_axes(c)))
                for c in self.axes["controller"]]

    @property
    def n_cells(self) -> int:
        """Cells in the grid: per controller, the product of the axes that apply to it
        (an axis such as ``ttl`` multiplies only the controllers it means something to)."""
        return sum(size for _, size in self.blocks())

    @property
    def n_chunks(self) -> int:
        """Chunk files the sweep writes."""
        return max(1, -(-self.n_cells // self.chunk_size))

    @property
    def hash(self) -> str:
        """A digest of the spec's content (not its formatting): equal specs, equal hashes."""
        content: Any = self.source
        if self.delays:  # what the tables hold, a csv file's samples included
            content = {"spec": self.source, "delays": {k: [list(e) for e in v]
                                                       for k, v in self.delays.items()}}
        canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def load_spec(path: str | Path) -> Spec:
    """Read and check a spec file; raise :class:`SpecError` in one line on any problem.
    Its ``import_path`` folders are relative to the file's folder."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError(f"{path}: no such spec file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"{path}: cannot read: {exc}") from None
    try:
        return parse_spec(text, path.parent)
    except SpecError as exc:
        raise SpecError(f"{path}: {exc}") from None


def parse_spec(text: str, base: str | Path = ".") -> Spec:
    """Parse and check a spec from TOML text; ``import_path`` folders are relative to
    ``base``. A user's controller named on the ``controller`` axis is resolved (its module
    imported): its parameters become axes."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"TOML syntax error: {exc}") from None
    except RecursionError:
        raise SpecError("TOML nesting too deep") from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise SpecError(f"TOML value error: {exc}") from None
    _no_unknown_keys(doc, _TOP_KEYS, "")
    name = doc.get("name")
    if not isinstance(name, str) or not _SLUG.fullmatch(name):
        raise SpecError(f"name must be a plain slug (letters, digits, '-', '_'), "
                        f"got {shown(name)}")
    chunk_size = doc.get("chunk_size")
    if chunk_size is not None:
        _check_int(chunk_size, "chunk_size", 1, MAX_CHUNK_SIZE)
    grid = doc.get("grid", {})
    if not isinstance(grid, dict):
        raise SpecError(f"grid must be a table, got {shown(grid)}")
    import_path = _import_path(doc.get("import_path", []), Path(base))
    controllers = _users_controllers(grid, import_path)
    extra = tuple(dict.fromkeys(n for _, ref in controllers
                                for n in options_of(registry.resolve(ref))))
    _no_unknown_keys(grid, {*AXES, *extra}, "grid.")
    schedules = _schedules(doc.get("schedule", {}))
    tables = _delay_tables(doc.get("delays", {}), Path(base))
    named = {axis: tables if isinstance(kind, Delays) else _named(doc.get(kind.table, {}), kind)
             for axis, kind in NAMED_AXES.items()}
    names = {axis: _named_names(grid, axis, named[axis]) for axis in named}
    axes = {axis: tuple(named[axis][v] for v in names[axis]) if axis in named
            else _axis(grid, axis, schedules) for axis in (*AXES, *extra)}
    _one_of_table_or_spread(axes, names)
    _refuse_inapplicable(grid, axes, controllers)
    _one_world(axes)
    if DEFAULT_SCHEDULE in axes["schedule"] and DEFAULT_SCHEDULE not in schedules:
        schedules[DEFAULT_SCHEDULE] = Schedule(DEFAULT_SCHEDULE, {"events": DEFAULTS["deaths"]})
    entries = _entries_per_cell(axes, schedules)
    baseline = _baseline(doc.get("baseline", {}), axes, names)
    spec = Spec(name=name, axes=axes, schedules=schedules, chunk_size=chunk_size or 1,
                source=doc, controllers=controllers, import_path=import_path, names=names,
                delays={k: v for k, v in tables.items() if k != NO_SCHEDULE},
                baseline=baseline)
    if chunk_size is None:
        return replace(spec, chunk_size=default_chunk_size(spec.n_cells, entries))
    if chunk_size * entries > MAX_CHUNK_ENTRIES:
        raise SpecError(
            f"chunk_size: {chunk_size} cells x up to {entries} death events and restart times "
            f"each is {chunk_size * entries:,} list entries a chunk, more than "
            f"{MAX_CHUNK_ENTRIES:,}; set chunk_size <= {max(1, MAX_CHUNK_ENTRIES // entries)}")
    return spec


def _import_path(raw: Any, base: Path) -> tuple[str, ...]:
    """``import_path``: folders (relative to the spec's) to import users' controllers from."""
    if not isinstance(raw, list) or not all(isinstance(f, str) for f in raw):
        raise SpecError(f"import_path must be a list of folders, got {shown(raw)}")
    folders = tuple(str((base / f).resolve()) for f in raw)
    for given, folder in zip(raw, folders, strict=True):
        if not Path(folder).is_dir():
            raise SpecError(f"import_path: {given!r}: no such folder ({folder})")
    return folders


def on_path(folders: tuple[str, ...]) -> None:
    """Put ``folders`` first on ``sys.path``, in order (those there already stay where they are)."""
    for folder in reversed(folders):
        if folder not in sys.path:
            sys.path.insert(0, folder)


def _one_world(axes: Mapping[str, Sequence[Any]]) -> None:
    """Refuse a grid that puts a controller of a world of its own (``deployment``) beside
    any other (its cells answer other questions: no period, no ledger; the report reads a
    sweep as one world), and one with a cell that world cannot run, before anything runs:
    an axis of a parameter the world does not read, off its default, or a combination of
    its own parameters it refuses (both budgets 0, rollouts out of order ...)."""
    controllers = axes["controller"]
    worlds = [c for c in controllers if registry.get(c).world is not None]
    if not worlds:
        return
    world = registry.get(worlds[0]).world
    if len(set(controllers)) > 1:
        raise SpecError(f"grid.controller: {worlds[0]!r} runs in a world of its own (the "
                        f"{world} world): give it a spec of its "
                        f"own (got {', '.join(map(str, controllers))})")
    for axis, values in axes.items():
        if axis in DEFAULTS and axis not in CELL_PARAMS:
            for v in values:
                if v != DEFAULTS[axis]:
                    raise SpecError(f"grid.{axis}: {shown(v)} is not a rule of the "
                                    f"{world} world; leave it at "
                                    f"its default ({shown(DEFAULTS[axis])})")
    first = {a: v[0] for a, v in axes.items() if a in DEFAULTS and v}
    # (the axes the world's refusals read together; the largest desired and duration alone
    # decide its size check)
    crossed = [a for a in ("initial", "max_surge", "max_unavailable", "rollout", "scale")
               if a in axes]
    first |= {a: max(axes[a]) for a in ("desired", "duration") if axes.get(a)}
    for values in itertools.product(*(axes[a] for a in crossed)):
        try:
            make_cell(**{**first, **dict(zip(crossed, values, strict=True))})
        except ValueError as exc:
            raise SpecError(f"grid: {exc}") from None


def _users_controllers(grid: Mapping[str, Any], import_path: tuple[str, ...],
                       ) -> tuple[tuple[str, str], ...]:
    """The controllers the ``controller`` axis names that a process knows only once it
    imports them (all but :func:`~reconsim.model.controllers.registry.built_in`): (name,
    how it names it), resolved with ``import_path`` on ``sys.path``."""
    raw = grid.get("controller", [])
    if not isinstance(raw, list):
        return ()  # the axis's own check says what is wrong
    on_path(import_path)
    out: dict[str, str] = {}
    built_in = {c.name for c in registry.built_in()}
    for ref in raw:
        if isinstance(ref, str) and ref not in built_in:
            try:
                out[registry.resolve(ref).name] = ref
            except ControllerError as exc:
                raise SpecError(f"grid.controller: {exc}") from None
    return tuple(out.items())


def default_chunk_size(cells: int, entries: int) -> int:
    """Cells per chunk of a grid of ``cells`` whose cells hold up to ``entries`` death
    events and restart times each: :data:`DEFAULT_CHUNK_SIZE`, more for a grid of over
    :data:`TARGET_CHUNKS` such chunks (as many as make that many chunks, at most
    :data:`LARGE_CHUNK_SIZE`), fewer where the lists would not fit
    (:data:`MAX_CHUNK_ENTRIES`).

    >>> default_chunk_size(10**6, 1), default_chunk_size(5 * 10**6, 1)
    (50000, 125000)
    >>> default_chunk_size(10**7, 1), default_chunk_size(10**10, 1)
    (250000, 250000)
    >>> default_chunk_size(10**8, 400)
    25000
    """
    size = min(LARGE_CHUNK_SIZE, max(DEFAULT_CHUNK_SIZE, -(-cells // TARGET_CHUNKS)))
    return max(1, min(size, MAX_CHUNK_ENTRIES // max(1, entries)))


def _entries_per_cell(axes: Mapping[str, tuple[Any, ...]],
                      schedules: Mapping[str, Schedule]) -> int:
    """The most death events plus restart times one cell of the grid holds; refuse a
    schedule with more events than a cell may hold, counted before any is built."""
    longest = max(axes["duration"])  # every schedule's count grows with the duration
    most = 0
    for name in axes["schedule"]:
        schedule = schedules[name]
        n = schedule.count(longest, axes["seed"])
        if n > MAX_EVENTS:
            where = f"schedule.{name}: in a run of {longest} s (the longest grid.duration)"
            p, fixed = schedule.params, schedule.fixed_count(longest)
            if schedule.random and fixed <= MAX_EVENTS:
                span = max(0, schedule.end(longest) + 1 - p.get("start", 0))
                also = f" with its {fixed} scripted and periodic events" if fixed else ""
                seeds = len(axes["seed"])
                some = f" with one of the grid's {seeds} seeds" if seeds > 1 else ""
                raise SpecError(f"{where} rate {p['rate']}{also} gives more than {MAX_EVENTS} "
                                f"death events (about {fixed + p['rate'] * span:,.0f}){some}, "
                                "more than a cell may hold")
            raise SpecError(f"{where} it gives {n} death events, more than the {MAX_EVENTS} a "
                            "cell may hold")
        most = max(most, n)
    return (most + max(len(r) for r in axes["restart_at"])
            + sum(max(len(v) for v in axes[a]) for a in NAMED_AXES))  # lag, fault records


def _no_unknown_keys(table: Mapping[str, Any], known: set[str], prefix: str) -> None:
    for key in table:
        if key not in known:
            named = key if key.isprintable() and len(key) <= 80 else shown(key)
            raise SpecError(f"{prefix}{named}: unknown key (known: {', '.join(sorted(known))})")


def _axis(grid: Mapping[str, Any], axis: str, schedules: Mapping[str, Schedule]) -> tuple[Any, ...]:
    """The checked values of one axis; an axis the grid does not name is the default."""
    if axis == "schedule":
        values = _axis_values(grid[axis], axis) if axis in grid else (DEFAULT_SCHEDULE,)
        for v in values:
            if not isinstance(v, str) or (v not in schedules and v != DEFAULT_SCHEDULE):
                known = ", ".join(schedules) or "none defined"
                raise SpecError(f"grid.schedule: unknown schedule {shown(v)} (known: {known})")
    elif isinstance(grid.get(axis), dict) and isinstance(parameter(axis).kind, Int):
        # A range of integers is valid when its ends are: check two values, not a million.
        values = _axis_values(grid[axis], axis)
        try:
            check_value(axis, values[0])
            check_value(axis, values[-1])
        except ValueError as exc:
            raise SpecError(f"grid.{axis}: {exc}") from None
        return values  # distinct by construction
    else:
        raw = _axis_values(grid[axis], axis) if axis in grid else (parameter(axis).default,)
        try:
            values = tuple(check_value(axis, v) for v in raw)
        except ValueError as exc:
            hint = " (the axis is a list of lists: restart_at = [[], [310]])" \
                if axis == "restart_at" else ""
            raise SpecError(f"grid.{axis}: {exc}{hint}") from None
    if len(set(values)) != len(values):
        raise SpecError(f"grid.{axis}: repeated values in {shown(list(values))}")
    return values


def _named(raw: Any, kind: Records) -> dict[str, tuple[Any, ...]]:
    """The schedules of ``[TABLE.NAME]`` tables, checked, by name; ``none`` built in."""
    if not isinstance(raw, dict):
        raise SpecError(f"{kind.table} must be a table of named schedules, got {raw!r}")
    out: dict[str, tuple[Any, ...]] = {NO_SCHEDULE: ()}
    for name, table in raw.items():
        where = f"{kind.table}.{name}"
        if not _SLUG.fullmatch(name):
            raise SpecError(f"{where}: schedule name must be a plain slug, got {name!r}")
        if name == NO_SCHEDULE:
            raise SpecError(f"{where}: {NO_SCHEDULE!r} is built in (no {kind.many})")
        if not isinstance(table, dict):
            raise SpecError(f"{where} must be a table, got {table!r}")
        _no_unknown_keys(table, {kind.key}, f"{where}.")
        if kind.key not in table:
            raise SpecError(f"{where}.{kind.key}: missing")
        try:
            out[name] = kind.check(f"{where}.{kind.key}:", table[kind.key])
        except ValueError as exc:
            raise SpecError(str(exc)) from None
    return out


def _delay_tables(raw: Any, base: Path) -> dict[str, tuple[Any, ...]]:
    """The ``[delays.NAME]`` tables, compiled, by name; ``none`` (no table) built in."""
    if not isinstance(raw, dict):
        raise SpecError(f"delays must be a table of named distributions, got {shown(raw)}")
    out: dict[str, tuple[Any, ...]] = {NO_SCHEDULE: ()}
    for name, table in raw.items():
        where = f"delays.{name}"
        if not _SLUG.fullmatch(name):
            raise SpecError(f"{where}: distribution name must be a plain slug, got {name!r}")
        if name == NO_SCHEDULE:
            raise SpecError(f"{where}: {NO_SCHEDULE!r} is built in (no table: the uniform "
                            "spread)")
        try:
            out[name] = delays.from_spec_table(table, where, base)
        except ValueError as exc:
            raise SpecError(str(exc)) from None
    return out


def _refuse_inapplicable(grid: Mapping[str, Any], axes: Mapping[str, tuple[Any, ...]],
                         controllers: tuple[tuple[str, str], ...]) -> None:
    """Refuse an axis the grid names, off its default, that applies to none of its
    controllers (``ttl`` beside ``ledger`` alone, or beside ``ledger`` and ``deadband``):
    no cell would take it, as :func:`~reconsim.model.params.refuse_inapplicable` refuses
    it for one cell (the line names a user's controller if the grid has one). An axis
    that applies to some of them multiplies those only."""
    first = controllers[0][0] if controllers else axes["controller"][0]
    for axis in grid:
        name = "deaths" if axis == "schedule" else axis
        if axis == "controller" or any(applies(name, c) for c in axes["controller"]):
            continue
        for value in axes[axis]:
            try:
                refuse_inapplicable(name, value, first, "grid.")
            except ValueError as exc:
                raise SpecError(str(exc)) from None


def _baseline(raw: Any, axes: Mapping[str, tuple[Any, ...]],
              names: Mapping[str, tuple[str, ...]]) -> dict[str, Any]:
    """``baseline``: the user's current setting, a table of axes of the grid, each with one
    of its values (a named axis's and the schedule's by name, a controller by the name the
    table holds, never imported); refused unless some cell of the grid has it (an axis that
    does not apply to a controller leaves that controller's cells out)."""
    if not isinstance(raw, dict):
        raise SpecError(f"baseline must be a table of axes and values, got {shown(raw)}")
    _no_unknown_keys(raw, set(axes), "baseline.")
    for axis, value in raw.items():
        listed = names.get(axis, axes[axis])
        try:
            checked = (value if axis in names or axis in ("schedule", "controller")
                       else check_value(axis, value))
        except ValueError as exc:
            raise SpecError(f"baseline.{axis}: {exc}") from None
        if checked not in listed:
            raise SpecError(f"baseline.{axis}: {shown(value)} is not one of the axis's values "
                            f"({shown(list(listed))})")
    controllers = [raw["controller"]] if "controller" in raw else list(axes["controller"])
    off = {c: [a for a in raw if a != "controller"
               and not applies("deaths" if a == "schedule" else a, c)] for c in controllers}
    if all(off.values()):
        axis = off[controllers[0]][0]
        which = (f"controller {controllers[0]!r}" if "controller" in raw
                 else "any controller of the grid with the rest of the baseline")
        raise SpecError(f"baseline.{axis}: {shown(raw[axis])} does not apply to {which}: "
                        "the baseline selects no cell")
    return dict(raw)


def _one_of_table_or_spread(axes: Mapping[str, tuple[Any, ...]],
                            names: Mapping[str, tuple[str, ...]]) -> None:
    """Refuse a grid whose cells would give both a delay table and its uniform spread."""
    for axis, kind in NAMED_AXES.items():
        if not isinstance(kind, Delays):
            continue
        spread = max(axes[kind.spread])
        table = next((n for n, v in zip(names[axis], axes[axis], strict=True) if v), None)
        if spread > 0 and table is not None:
            raise SpecError(
                f"grid.{axis}: distribution {table!r} and {kind.spread} {spread} would meet "
                f"in a cell; give one of the two (a {kind.spread} of s is the histogram of "
                "0 … s, weight 1 each)")


def _named_names(grid: Mapping[str, Any], axis: str,
                 defined: Mapping[str, tuple[Any, ...]]) -> tuple[str, ...]:
    """The names a named axis lists; an axis the grid does not name is none."""
    names = _axis_values(grid[axis], axis) if axis in grid else (NO_SCHEDULE,)
    for v in names:
        if not isinstance(v, str) or v not in defined:
            what = ("distribution" if isinstance(NAMED_AXES[axis], Delays)
                    else f"{NAMED_AXES[axis].table} schedule")
            raise SpecError(f"grid.{axis}: unknown {what} {shown(v)} "
                            f"(known: {', '.join(defined)})")
    if len(set(names)) != len(names):
        raise SpecError(f"grid.{axis}: repeated values in {list(names)!r}")
    values = tuple(defined[v] for v in names)
    if len(set(values)) != len(values):
        raise SpecError(f"grid.{axis}: two names for the same schedule in {list(names)!r}")
    return tuple(names)


def _axis_values(raw: Any, axis: str) -> tuple[Any, ...]:
    """An axis is a single value, a list, or an inclusive range {from, to, step}."""
    values: tuple[Any, ...]
    if isinstance(raw, dict):
        values = _range(raw, axis)
    elif isinstance(raw, list):
        if len(raw) > MAX_AXIS_VALUES:
            raise SpecError(f"grid.{axis}: {len(raw):,} values, more than the "
                            f"{MAX_AXIS_VALUES:,} an axis may hold")
        values = tuple(raw)
    else:
        values = (raw,)
    if not values:
        raise SpecError(f"grid.{axis}: empty axis, got {shown(raw)}")
    return values


def _range(raw: dict[str, Any], axis: str) -> tuple[int, ...]:
    """An inclusive range table {from, to, step = 1}."""
    _no_unknown_keys(raw, {"from", "to", "step"}, f"grid.{axis}.")
    parts: dict[str, int] = {}
    for key in ("from", "to", "step"):
        v = raw.get(key, 1 if key == "step" else None)
        if isinstance(v, bool) or not isinstance(v, int):
            raise SpecError(f"grid.{axis}.{key} must be an integer, got {shown(v)}")
        parts[key] = v
    if parts["step"] < 1:
        raise SpecError(f"grid.{axis}.step must be a positive integer, "
                        f"got {shown(parts['step'])}")
    values = range(parts["from"], parts["to"] + 1, parts["step"])
    # Counted before a value is built, in Python's integers (len() of a range past 2^63
    # values overflows).
    count = max(0, (parts["to"] - parts["from"]) // parts["step"] + 1)
    if count > MAX_AXIS_VALUES:
        raise SpecError(f"grid.{axis}: the range from {shown(parts['from'])} to "
                        f"{shown(parts['to'])} holds {shown(count)} values, more than "
                        f"the {MAX_AXIS_VALUES:,} an axis may hold")
    return tuple(values)


def _schedules(raw: Any) -> dict[str, Schedule]:
    if not isinstance(raw, dict):
        raise SpecError(f"schedule must be a table of named schedules, got {shown(raw)}")
    return {name: _schedule(name, table) for name, table in raw.items()}


def _schedule(name: str, table: Any) -> Schedule:
    """One named schedule table, checked."""
    if not _SLUG.fullmatch(name):
        raise SpecError(f"schedule: a schedule name must be a plain slug, got {shown(name)}")
    where = f"schedule.{name}"
    if not isinstance(table, dict):
        raise SpecError(f"{where} must be a table, got {shown(table)}")
    parts = [k for k in _SCHEDULE_PARTS if k in table]
    if not parts:
        raise SpecError(f"{where} needs at least one of 'events', 'every' or 'rate', "
                        f"got keys {sorted(table)}")
    known = {key for part in parts for keys in _SCHEDULE_PARTS[part] for key in keys}
    _no_unknown_keys(table, known, f"{where}.")
    for part in parts:
        required = _SCHEDULE_PARTS[part][0]
        missing = sorted(required - set(table))
        if missing:
            raise SpecError(f"{where}.{missing[0]}: missing (a schedule with '{part}' "
                            f"needs {', '.join(sorted(required))})")
    params = dict(table)
    if "events" in params:
        try:
            params["events"] = check_deaths(table["events"], f"{where}.events")
        except ValueError as exc:
            raise SpecError(str(exc)) from None
    bounds = {"count": (0, MAX_COPIES), "start": (0, MAX_SECONDS), "until": (0, MAX_SECONDS),
              "seed": (0, MAX_SCHEDULE_SEED), "every": (1, MAX_SECONDS)}
    for key, (low, high) in bounds.items():
        if key in params:
            _check_int(params[key], f"{where}.{key}", low, high)
    if "rate" in params:
        rate = params["rate"]
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate <= 1:
            raise SpecError(f"{where}.rate must be deaths per second in (0, 1], "
                            f"got {shown(rate)}")
    return Schedule(name, params)


def _check_int(value: Any, where: str, minimum: int, maximum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not (
            minimum <= value <= maximum):
        raise SpecError(f"{where} must be an integer in [{minimum}, {maximum}], "
                        f"got {shown(value)}")
