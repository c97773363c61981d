"""A controller, defined once: its name, its parameters, the memory it keeps, and its
decision for a round, in plain Python that numba compiles as it is.

The reference model (:mod:`reconsim.model.reference`) calls :attr:`Controller.decide` as
Python; the kernels (:mod:`reconsim.model.kernels`) compile the same function with numba
and run it inside their loop, one compiled kernel per controller (cached on disk, see
:mod:`reconsim.model.kernels.specialise`). A round happens as it always did — scripted
deaths, restarts, the trigger, the read — then the controller decides, then the loop
damps (``gain``) and caps (``max_per_round``) the correction and carries it out
(creates in slow-start batches, deletes to the read's oldest or newest entries).

The decision is ``decide(v, p, m) -> int``:

``v``, the round (:data:`Round`)
    ``t`` the second; ``desired`` the copies that should run; ``seen`` how many entries
    the read returned. What it remembers of its own commands (a restart wipes it):
    ``pending`` its creations whose replies arrived and that the read does not list yet
    (nor were they removed); ``unobserved`` 1 while the commands of its last acting round
    are not all observed in the read (its creations listed, the entries it deleted off
    the ledger), else 0; ``last_act`` the second of its last acting round, -1 if none.
    These three are computed only for a controller that declares them in ``sees`` (they
    cost a walk over the copies in the fast kernel); the reference model refuses a read
    of an undeclared one, so a missing declaration cannot go unnoticed.
``p``, its parameters
    A named tuple of its declared parameters' values (integers: a flag is 0 or 1, a
    choice its index, a number of thousandths its count of thousandths).
``m``, its memory
    An int64 array of its declared memory slots, in declared order, set to their initial
    values at t = 0 and by every restart. ``decide`` may change it. Declared with
    :func:`slots`, a slot is read and written by its name (``m[M.target]``).

It returns the correction: ``n > 0`` creates ``n`` copies, ``n < 0`` deletes ``-n`` of
the read's entries, 0 does nothing; an integer with ``|n| <= MAX_COPIES``.

Which entries a deletion takes is the controller's too, if it defines ``rank(e, p) ->
int``: each entry of the read gets a key, and the ``-n`` entries with the smallest keys
are deleted; entries with equal keys go in the cell's ``delete_order`` (``oldest``: the
first created first). ``e``, an :data:`Entry`, is what the read shows of one entry:
``t`` the round's second, ``created`` the second it was created, ``ready`` the second it
became ready if the read shows it ready (its readiness reaches the ledger with the
entry's own delay, as its listing does), else -1. The read lists only entries it does
not know to be terminating (the ledger drops an entry once it shows its deletion, as
Kubernetes' ``FilterActivePods`` does), so there is no terminating flag to see. Without
``rank`` every key is equal: ``delete_order`` alone decides. A key is an integer with
``|key| < 2^62``; a tuple of criteria is one integer, its most significant first.

``compiled=False`` is for code numba cannot compile (a dictionary, a library call): the
controller then runs on the reference model alone, everywhere — ``run_cell``,
``simulate``, sweeps, the report — with the same results and far slower (see
docs/performance.md for the measured factor); ``check-controller`` then checks only that
its code runs without error on random cells, as there is no second implementation to
compare with.

``steady`` declares what lets the fast kernel skip idle rounds in closed form: in a
settled world — the read unchanged, nothing pending, nothing unobserved — a round that
decides 0 and leaves the memory as it was would decide 0 at every later second too (the
decision does not depend on ``t`` there). The kernel proves the rest (the world is
settled, the memory unchanged); a controller that is not steady runs every round.

A controller that defines ``settle`` **syncs on events** instead of deciding once a
round: the world then runs in milliseconds (:mod:`reconsim.model.events`, the rules in
docs/model.md), as a controller-runtime or client-go controller runs. Its key is queued by
every event that reaches its cache (an entry created, turned ready, terminating or gone,
each ``G`` s after it happened), by its own status writes and by its retries; one sync
runs at a time, and a key queued while its sync runs is queued again when the sync ends.
Its hooks, all plain integer code:

``decide(v, p, m) -> int``
    as above, with ``v`` a :data:`Sync`: ``t`` the second, ``now`` the instant in
    milliseconds, ``desired``, ``seen`` the entries its cache lists as active.
``settle(o, p, m) -> int``
    after the sync's commands, with ``o`` an :data:`Outcome` (the correction carried out
    after damping and the cap, and what came of its commands); returns 0 when the sync
    succeeded, else the delay in milliseconds (>= 1) after which it is retried.
``observe(e, p, m) -> None``
    each event reaching its cache, an :data:`Event`: ``kind`` one of :data:`ADDED`,
    :data:`UPDATED`, :data:`DELETED` (terminating, or gone); ``marked`` 1 when the entry
    is one its last acting sync deleted and this is the first deletion event of it since.
``less(a, b, p) -> bool``
    optional: which entries a deletion takes, as Go's ``sort.Sort`` (pdqsort, unstable)
    orders the active entries with this ``Less`` when it deletes fewer than all of them
    (:data:`Item`: ``uid`` the creation number, ``created`` and ``ready`` seconds, ``ready``
    -1 when the cache does not show it ready, ``now`` the instant, ms). Without it,
    ``delete_order`` decides.

The event kernel (:mod:`reconsim.model.kernels.events`) compiles these hooks as the other
kernels compile ``decide``; cells with ``lag`` windows, and a controller declared
``compiled=False``, run on the reference model.
"""

from __future__ import annotations

import enum
import hashlib
import inspect
import keyword
from collections import namedtuple
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple, Self

import numpy as np

from reconsim.errors import ReconsimError
from reconsim.model.kinds import MAX_COPIES, Choice, Flag, Int, Kind, Thousandths, permille


class ControllerError(ReconsimError):
    """A controller definition that cannot be used, or that misbehaved in a round."""


class CellError(ControllerError):
    """A cell's run that a controller's code or the model stops, with one line, ``reason``,
    that the reference model and the kernels give alike. ``row``: the cell's index in the
    batch a kernel ran (None from the reference model); ``cell``: its ``reconsim run``
    flags, which :func:`reconsim.simulate` adds to the line."""

    def __init__(self, reason: str, row: int | None = None, cell: str | None = None) -> None:
        super().__init__(reason, row, cell)  # the arguments again: a worker's refusal pickles
        self.reason, self.row, self.cell = reason, row, cell

    def at(self, row: int) -> Self:
        """The same refusal, of the cell numbered ``row`` (its index in a larger batch)."""
        return type(self)(self.reason, row, self.cell)

    def of(self, cell: str) -> Self:
        """The same refusal, naming the cell by its ``reconsim run`` flags."""
        return type(self)(self.reason, self.row, cell)

    def __str__(self) -> str:
        return (self.reason if self.cell is None
                else f"{self.reason}; the cell: reconsim run {self.cell}")


class RunawayError(CellError):
    """A cell the model refuses to finish: one that would create a copy beyond
    ``MAX_COPIES``, or an instant whose syncs never end (docs/model.md, "Controllers that
    sync on events"). The reference model and the kernels refuse the same cells with the
    same line."""


class DecisionError(CellError):
    """A controller's code that misbehaved in a round: a hook raised, or returned what it
    may not (a correction that is not an integer or passes ``MAX_COPIES``, a deletion key
    of 2^62 or more in magnitude, a settle delay below 0). The line names the controller,
    the hook, the value or exception and the second; the kernels give the reference
    model's line (:func:`reconsim.simulate` runs the cell on it to find the second)."""


class Entry(NamedTuple):
    """One entry of the read, as :attr:`Controller.rank` sees it (see the module's
    docstring)."""

    t: int
    created: int
    ready: int


class Round(NamedTuple):
    """What one round lets the controller see (see the module's docstring)."""

    t: int
    desired: int
    seen: int
    pending: int
    unobserved: int
    last_act: int


class Sync(NamedTuple):
    """What one sync of an event-driven controller sees (see the module's docstring)."""

    t: int
    now: int
    desired: int
    seen: int


class Outcome(NamedTuple):
    """What came of one sync's commands, as ``settle`` sees it: ``now`` the instant (ms);
    ``asked`` the correction carried out (after damping and the cap); for creates,
    ``issued`` commands sent (slow start stops after a batch with an error), ``ok`` those
    whose pod was created and whose reply arrived, ``failed`` and ``lost`` the others; for
    deletes, ``issued`` commands sent and ``not_found`` those whose entry was gone."""

    now: int
    asked: int
    issued: int
    ok: int
    failed: int
    lost: int
    not_found: int


class Event(NamedTuple):
    """One event reaching an event-driven controller's cache (see the module's docstring)."""

    kind: int
    now: int
    marked: int


class Item(NamedTuple):
    """One active entry of the cache, as ``less`` sees it (see the module's docstring)."""

    uid: int
    created: int
    ready: int
    now: int


#: The kinds of :class:`Event`: an entry's creation, its update (it turned ready), its
#: deletion seen (terminating or gone).
ADDED: Final = 0
UPDATED: Final = 1
DELETED: Final = 2


#: The round's fields a controller sees only if it declares them: its own commands.
OWN_FIELDS: Final = ("pending", "unobserved", "last_act")
#: The kinds a controller's parameter may have: each is one integer in the decision.
PARAM_KINDS: Final = (Int, Choice, Flag, Thousandths)


@dataclass(frozen=True)
class Param:
    """A controller's parameter: its kind (bounds and all), default and meaning. It becomes
    a spec axis, a flag of ``reconsim run``, a column of the table (null for the other
    controllers) and a field of ``p``, under its name. One that a cell declares as a field
    of its own (``ttl``, declared once as :data:`reconsim.controllers.TTL`) is that field
    for every controller that declares it alike; any other is one of the cell's options."""

    kind: Kind
    default: Any
    help: str


class Slots(enum.IntEnum):
    """Memory slots by name (:func:`slots`): each member is its slot's index in ``m``;
    :attr:`initial` holds the initial values by name."""

    initial: Mapping[str, int]


def slots(**initial: int) -> Any:
    """A controller's memory, declared once: its slots by name with their initial values,
    in order. Pass it as ``memory=``; a hook reads and writes a slot by its name, ``m[M.name]``
    (a compile-time constant in the kernels, an ``int`` in the reference model). Its
    members are made at run time: to a type checker it is ``Any``.

    >>> M = slots(acted_at=-1, target=0)
    >>> M.target, int(M.target), dict(M.initial)
    (<M.target: 1>, 1, {'acted_at': -1, 'target': 0})
    """
    for name in initial:
        if name == "initial" or not name.isidentifier() or keyword.iskeyword(name) \
                or name.startswith("_") or name == "mro":
            raise ControllerError(f"memory slot {name!r}: a slot's name is an identifier, not "
                                  "a keyword, 'initial' or 'mro', and does not start with _")
    functional: Any = Slots  # the functional API: a subclass with these members
    kinds: type[Slots] = functional("M", [(name, i) for i, name in enumerate(initial)])
    type.__setattr__(kinds, "initial", dict(initial))
    return kinds


@dataclass(frozen=True, eq=False)
class Controller:
    """A controller definition (see the module's docstring).

    >>> from reconsim.model.controllers import registry
    >>> registry.get("expectations").sees
    ('unobserved', 'last_act')
    """

    name: str
    decide: Callable[..., int]
    help: str
    params: Mapping[str, Param] = field(default_factory=dict)
    #: Slot name -> initial value, or :func:`slots` (then a dictionary like this one).
    memory: Mapping[str, int] = field(default_factory=dict)
    sees: tuple[str, ...] = ()
    steady: bool = False
    #: A version string; without one, the identity is a digest of the defining module.
    version: str | None = None
    #: ``rank(e, p) -> int``: which read entries a deletion takes, smallest keys first.
    rank: Callable[..., int] | None = None
    #: False for code numba cannot compile: it then runs on the reference model alone.
    compiled: bool = True
    #: ``settle(o, p, m) -> int``: defined, the controller syncs on events (0: success,
    #: else the retry's delay in ms).
    settle: Callable[..., int] | None = None
    #: ``observe(e, p, m)``: each event reaching an event-driven controller's cache.
    observe: Callable[..., None] | None = None
    #: ``less(a, b, p) -> bool``: Go's ``Less`` for the entries an event-driven deletion takes.
    less: Callable[..., bool] | None = None
    #: The world it brings, if it runs in one of its own rather than in the world of rounds
    #: or of events (``"deployment"``: Kubernetes' Deployment and ReplicaSet controllers,
    #: :mod:`reconsim.model.deployment`); its ``decide`` is then never called.
    world: str | None = None

    def __post_init__(self) -> None:
        where = f"controller {self.name!r}"
        if not isinstance(self.name, str) or not self.name.isidentifier() \
                or keyword.iskeyword(self.name):
            raise ControllerError(f"controller {self.name!r}: a name must be an identifier")
        for role, function, signature in (("decide", self.decide, "decide(v, p, m)"),
                                          ("rank", self.rank, "rank(e, p) -> int"),
                                          ("settle", self.settle, "settle(o, p, m) -> int"),
                                          ("observe", self.observe, "observe(e, p, m)"),
                                          ("less", self.less, "less(a, b, p) -> bool")):
            if (function is not None or role == "decide") and (
                    not callable(function) or inspect.isclass(function)):
                raise ControllerError(f"{where}: {role} must be a function {signature}")
        for name, param in self.params.items():
            _check_param(where, name, param)
        if self.settle is None and (self.observe is not None or self.less is not None):
            raise ControllerError(f"{where}: observe and less are hooks of a controller "
                                  "that syncs on events: define settle(o, p, m) too")
        if self.settle is not None and (self.rank is not None or self.sees or self.steady):
            raise ControllerError(f"{where}: a controller that syncs on events takes no "
                                      "rank, sees or steady (it has less, observe and settle)")
        if isinstance(self.memory, type) and issubclass(self.memory, Slots):
            object.__setattr__(self, "memory", dict(self.memory.initial))
        for name, initial in self.memory.items():
            if not name.isidentifier() or not isinstance(initial, int) \
                    or isinstance(initial, bool) or abs(initial) >= 2**62:
                raise ControllerError(f"{where}: memory slot {name!r} needs an integer "
                                      f"initial value below 2^62, got {initial!r}")
        unknown = [s for s in self.sees if s not in OWN_FIELDS]
        if unknown:
            raise ControllerError(f"{where}: sees {unknown[0]!r}, not one of "
                                  f"{', '.join(OWN_FIELDS)}")
        object.__setattr__(self, "sees", tuple(s for s in OWN_FIELDS if s in self.sees))
        read = [f for f in OWN_FIELDS if f in _names_read(self.decide) and f not in self.sees]
        if read:
            raise ControllerError(
                f"{where}: decide reads {read[0]!r} without declaring it: add "
                f"sees={(*self.sees, *read)!r} to its definition "
                "(the fast kernels compute only what a controller declares)")

    @property
    def syncs_on_events(self) -> bool:
        """Whether it syncs on events (it defines ``settle``) rather than once a round."""
        return self.settle is not None

    @property
    def remembers(self) -> bool:
        """Whether it keeps something a restart wipes (memory or its own commands)."""
        return bool(self.memory or self.sees)

    @property
    def identity(self) -> str:
        """Its name and version, or a digest of the module that defines its decision: two
        versions of one controller never share a sweep directory or a compiled kernel."""
        return f"{self.name}@{self.version or self.digest}"

    @property
    def digest(self) -> str:
        """The first 12 hex digits of the SHA-256 of the source of ``decide``'s module
        (its helpers included), with the module and qualified names of its functions and
        the declaration's parameters, memory and flags."""
        functions = [f for f in (self.decide, self.rank, self.settle, self.observe, self.less)
                     if f is not None]
        modules = {id(m): m for m in map(inspect.getmodule, functions) if m is not None}
        sources = [_source(m) for m in modules.values()] or [_source(self.decide)]
        if any(inspect.getmodule(f) is None for f in functions):
            sources += [_source(f) for f in functions if inspect.getmodule(f) is None]
        # Where the code lives too: the same source imported under two module names is two
        # controllers, and its kernels must not share numba's cache entries.
        where = [(f.__module__, f.__qualname__) for f in functions]
        declared = repr((self.name, where, sorted((n, p.kind, p.default) for n, p in
                                                  self.params.items()),
                         sorted(self.memory.items()), self.sees, self.steady,
                         *(() if self.rank is None else ("ranked",)),
                         *(() if self.settle is None else ("events",
                                                          self.observe is not None,
                                                          self.less is not None)),
                         *(() if self.compiled else ("reference model alone",))))
        return hashlib.sha256(("".join(sources) + declared).encode()).hexdigest()[:12]

    @property
    def params_type(self) -> Any:
        """The named tuple ``p`` is."""
        return _params_type(self.name, tuple(self.params))

    def initial_memory(self) -> np.ndarray:
        """Its memory at t = 0 and after a restart (at least one slot: numba wants one)."""
        return np.array([*self.memory.values()] or [0], dtype=np.int64)

    def check_correction(self, value: Any, t: int) -> int:
        """``value`` if it is a correction decide may return, else a DecisionError."""
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise DecisionError(f"controller {self.name!r}: decide returned "
                                f"{value!r} at t = {t}, not an integer")
        if abs(int(value)) > MAX_COPIES:
            raise DecisionError(f"controller {self.name!r}: decide returned {value} at "
                                f"t = {t}, beyond the {MAX_COPIES:,} copies a correction "
                                "may make")
        return int(value)

    def too_many_copies(self, t: int) -> RunawayError:
        """The refusal of a cell whose copies pass MAX_COPIES at second ``t``."""
        return RunawayError(f"controller {self.name!r}: the cell created {MAX_COPIES:,} "
                            f"copies by t = {t}, the most a cell may")

    def endless_instant(self, now: int, most: int) -> RunawayError:
        """The refusal of a cell whose key is still queued after ``most`` syncs at the
        instant ``now`` (ms): its syncs would never let time pass."""
        return RunawayError(
            f"controller {self.name!r}: the key was still queued after {most:,} syncs at "
            f"instant {now} ms (t = {now // 1000}), the most one instant may run: its syncs "
            "never let time pass (a stale read with watch triggers and no ledger delay, for "
            "one, does this: each sync creates copies its read cannot show)")


def _check_param(where: str, name: str, param: Any) -> None:
    """Refuse a controller's parameter declaration that cannot be used."""
    if not isinstance(param, Param):
        raise ControllerError(f"{where}: parameter {name!r} must be declared with "
                              "Param(kind, default, help)")
    if not isinstance(param.kind, PARAM_KINDS):
        raise ControllerError(
            f"{where}: parameter {name!r} has kind {type(param.kind).__name__}; "
            "a controller's parameters are Int, Choice, Flag or Thousandths "
            "(bounded: every value must be checked)")
    if not name.isidentifier() or keyword.iskeyword(name):
        raise ControllerError(f"{where}: parameter {name!r} is not an identifier")
    if isinstance(param.kind, Int) and param.kind.maximum is None:
        raise ControllerError(f"{where}: parameter {name!r} has no upper bound "
                              "(Int(minimum, maximum): every value must be checked)")
    try:
        param.kind.check(name, param.default)
    except ValueError as exc:
        raise ControllerError(f"{where}: default of {exc}") from None


def _source(thing: Any) -> str:
    """The source of a module or function, or its bytecode where there is no source."""
    try:
        return inspect.getsource(thing)
    except (OSError, TypeError):
        code = getattr(thing, "__code__", None)
        return repr(code.co_code) if code is not None else repr(thing)


def _names_read(function: Callable[..., Any]) -> set[str]:
    """The attribute and global names ``function``'s code reads, nested code included."""
    code = getattr(function, "__code__", None)
    found: set[str] = set()
    stack = [code] if code is not None else []
    while stack:
        c = stack.pop()
        found.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, type(c)))
    return found


def _params_type(name: str, fields: Sequence[str]) -> Any:
    """One named tuple class per (controller, fields): numba types ``p`` by its class."""
    return _PARAM_TYPES.setdefault((name, tuple(fields)), namedtuple(
        f"{name.title().replace('_', '')}Params", fields))


_PARAM_TYPES: dict[tuple[str, tuple[str, ...]], Any] = {}


class ReferenceRound:
    """The round as the reference model shows it to ``decide``: the fields of
    :class:`Round`, where reading one the controller did not declare in ``sees`` is an
    error naming it (the fast kernel does not compute those)."""

    __slots__ = ("_controller", "_values")

    def __init__(self, controller: Controller, values: Round) -> None:
        self._controller = controller
        self._values = values

    def __getattr__(self, name: str) -> int:
        if name in Round._fields:
            if name in OWN_FIELDS and name not in self._controller.sees:
                raise ControllerError(
                    f"controller {self._controller.name!r}: decide reads v.{name}, which "
                    f"it does not declare (add sees=({name!r}, ...) to its definition)")
            return int(getattr(self._values, name))
        raise AttributeError(f"a round has no field {name!r} (it has "
                             f"{', '.join(Round._fields)})")


def reference_params(controller: Controller, values: Mapping[str, Any]) -> Any:
    """``p`` for the reference model: each parameter's value as the kernel's integer."""
    return controller.params_type(*(_as_int(controller.params[n].kind, values[n])
                                    for n in controller.params))


def _as_int(kind: Kind, value: Any) -> int:
    if isinstance(kind, Choice):
        return int(kind.choices.index(value))
    if isinstance(kind, Thousandths):
        return permille(value)
    return int(value)


def call_hook(controller: Controller, role: str, t: int, function: Callable[..., Any],
              *args: Any) -> Any:
    """``function(*args)``, one of ``controller``'s hooks (``role``: its name) called as
    Python at second ``t``: whatever it raises becomes one :class:`DecisionError` naming the
    controller, the hook, the exception and the second."""
    try:
        return function(*args)
    except ControllerError:
        raise
    except Exception as exc:  # the user's code: whatever it raised, named in one line
        raise DecisionError(f"controller {controller.name!r}: {role} raised "
                            f"{type(exc).__name__}: {exc} at t = {t}") from None


def decide_in_python(controller: Controller, v: Round, p: Any,
                     m: np.ndarray) -> int:
    """One decision as the reference model takes it: exceptions and bad corrections
    become one :class:`DecisionError` naming the controller and the second."""
    value = call_hook(controller, "decide", v.t, controller.decide,
                      ReferenceRound(controller, v), p, m)
    return controller.check_correction(value, v.t)


#: The largest key :attr:`Controller.rank` may return, in magnitude (below 2^62).
MAX_RANK: Final = (1 << 62) - 1


def rank_in_python(controller: Controller, e: Entry, p: Any) -> int:
    """One entry's deletion key as the reference model takes it: exceptions and keys that
    are not integers below 2^62 become one :class:`DecisionError` naming the controller."""
    assert controller.rank is not None
    value = call_hook(controller, "rank", e.t, controller.rank, e, p)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or abs(int(value)) > MAX_RANK:
        raise DecisionError(f"controller {controller.name!r}: rank returned {value!r} at "
                            f"t = {e.t}, not an integer below 2^62 in magnitude")
    return int(value)
