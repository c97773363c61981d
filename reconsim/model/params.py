"""The parameters of one cell, declared once (its metrics: :mod:`reconsim.model.metrics`).

Everything else derives from these declarations: the keyword arguments of
:func:`reconsim.run_cell`, the columns :func:`reconsim.model.simulate` reads and
writes (their dtypes and checks), the arrays the kernel reads, the flags of
``reconsim run``, the axes a sweep spec may name and the columns of its table.
What a value of each kind may be lives on its :class:`~reconsim.model.kinds.Kind`
(:mod:`reconsim.model.kinds`), so a new parameter of an existing kind is one field of
:class:`Cell`. Free of numba: importing this module does not load the kernel.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, TypeVar

import polars as pl

from reconsim.errors import ReconsimError
from reconsim.model import delays, deployment, rng
from reconsim.model.controllers import Controller, Param, registry
from reconsim.model.controllers.expectations import TTL
from reconsim.model.controllers.registry import ControllerKind
from reconsim.model.controllers.replicaset import LOG_SCALE_DOWN
from reconsim.model.deployment import MAX_ROLLOUTS
from reconsim.model.kinds import (
    DEATHS_DTYPE,
    FAULT_KINDS,
    MAX_COPIES,
    MAX_EVENTS,
    MAX_SECONDS,
    UNLIMITED,
    Cap,
    Choice,
    Deaths,
    Delays,
    Events,
    Faults,
    Flag,
    Int,
    IntOrParam,
    IntOrPercent,
    Kind,
    Scale,
    Thousandths,
    Times,
    Windows,
    permille,
    shown,
)
from reconsim.model.metrics import METRIC_NAMES, METRICS, Metric
from reconsim.words import listed

# The kinds' names that the rest of the package reads from here, with the parameters (and
# the metrics, declared in reconsim.model.metrics).
__all__ = ["DEATHS_DTYPE", "FAULT_KINDS", "MAX_COPIES", "MAX_EVENTS", "MAX_SECONDS",
           "METRICS", "METRIC_NAMES", "UNLIMITED", "Deaths", "IntOrParam", "Kind", "Metric",
           "permille", "shown"]

#: reconsim's own controllers: name -> one-line description, from their definitions
#: (:func:`reconsim.model.controllers.registry.built_in`). The order fixes their codes in
#: the kernels' inputs.
CONTROLLERS: Final[Mapping[str, str]] = {c.name: c.help for c in registry.built_in()}

#: When a copy reaches the ledger: G seconds after it is ready (the seed's), or after it
#: is created (the way Kubernetes counts Pending pods as replicas).
OBSERVE: Final = ("ready", "created")

#: What ``restart_at`` applies to: every controller that keeps a memory a restart wipes
#: (:attr:`~reconsim.model.controllers.Controller.remembers`), a user's ones included.
REMEMBERING: Final = "remembering"
#: What ``observe`` applies to: every controller that decides in rounds. One that syncs on
#: events (:mod:`reconsim.model.events`) lists a copy from its creation, as an informer's
#: cache does.
IN_ROUNDS: Final = "in rounds"
#: What a controller's own parameter applies to (``ttl``, ``log_scale_down``, a user's
#: controller's options): every controller that declares it.
DECLARING: Final = "declaring"
#: What a rolling update's parameters apply to: every controller of the Deployment world.
ROLLING: Final = "rolling"
#: The rules by which a parameter is some controllers' own: given off its default to
#: another, it is refused (:func:`refuse_inapplicable`). The others apply by what a
#: controller does, and to the rest they change nothing.
OWN: Final = (DECLARING, ROLLING)

# --- the richer world: its names and record shapes ---
#: Which ledger entries delete commands go to, by creation order.
DELETE_ORDERS: Final = ("oldest", "newest")
#: What starts a round: the period only, or also every change of the ledger it reads.
TRIGGERS: Final = ("periodic", "watch")
#: A lag schedule: (from, to, extra) windows; a round at from <= t < to reads the ledger
#: as it stood at the end of second t - extra.
LagWindows = tuple[tuple[int, int, int], ...]
#: A create-fault schedule: (at, count, kind) events, kind one of :data:`FAULT_KINDS`.
FaultEvents = tuple[tuple[int, int, str], ...]
#: A scale schedule: (at, desired) changes, in increasing ``at``.
ScaleChanges = tuple[tuple[int, int], ...]
#: A delay table: (value, weight) entries (:mod:`reconsim.model.delays`).
DelayTable = tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class Parameter:
    """One parameter of a cell: its kind and what it means, as declared on :class:`Cell`.

    ``required``: a frame given to ``simulate`` must carry the column (else it takes the
    default). ``applies``: the controllers it means something to, by a rule on what each
    known controller is: None, all; :data:`REMEMBERING`, every controller that keeps a
    memory a restart wipes; :data:`IN_ROUNDS`, every controller that decides in rounds;
    :data:`DECLARING`, every controller that declares it (its own parameter);
    :data:`ROLLING`, every controller of the Deployment world. Elsewhere its column is
    null. ``variant``: it describes a controller variant, not the world.
    ``world``: one of the richer world's parameters, whose defaults are seed 001's world.
    ``declared``: the controllers' declaration of a field they declare (``ttl``): a
    controller that declares it so takes the field.
    """

    kind: Kind
    help: str
    required: bool = False
    applies: str | None = None
    variant: bool = False
    world: bool = False
    declared: Param | None = None
    name: str = ""  # filled in from the field
    default: Any = None  # filled in from the field

    def applies_to(self, controller: str) -> bool:
        """Whether the parameter means anything for ``controller`` (a known one's name)."""
        if self.applies is None:
            return True
        if controller not in registry.names():
            return False
        known = registry.get(controller)
        if self.applies == REMEMBERING:
            return known.remembers
        if self.applies == IN_ROUNDS:
            return not known.syncs_on_events and known.world is None
        if self.applies == ROLLING:
            return known.world == "deployment"
        return self.name in known.params

    def owners(self) -> tuple[str, ...]:
        """The known controllers whose own parameter it is (:data:`OWN`), in the order of
        their codes; none for one that applies by what a controller does."""
        if self.applies not in OWN:
            return ()
        return tuple(c.name for c in registry.known() if self.applies_to(c.name))

    def off_default(self) -> pl.Expr:
        """Which rows of a frame hold another value than the default (a null counts)."""
        return pl.col(self.name).ne_missing(
            pl.lit(self.kind.to_column(self.default), dtype=self.kind.dtype))


def declare(kind: Kind, help: str, **declared: Any) -> dict[str, Parameter]:
    """The metadata of a :class:`Cell` field: its :class:`Parameter` declaration."""
    return {"param": Parameter(kind, help, **declared)}


def field_of_controllers(param: Param) -> dict[str, Parameter]:
    """The metadata of a :class:`Cell` field that controllers take by declaring ``param``
    (one declaration, which several take: :data:`~reconsim.controllers.TTL`): a variant
    parameter applying to every controller that declares it (:data:`DECLARING`). A
    controller that declares it otherwise is refused
    (:func:`reconsim.model.controllers.registry.reserve`)."""
    return declare(param.kind, param.help, applies=DECLARING, variant=True, declared=param)


#: The largest ``max_surge`` percentage (Kubernetes sets none; a budget of ten times desired
#: is past any use).
MAX_PERCENT: Final = 1000


@dataclass(frozen=True, kw_only=True, slots=True)
class Cell:
    """One cell of a sweep: a controller and the durations it runs against.

    A delay table (``G_delays``, ``B_delays``) is given compiled, as (value, weight)
    entries, or in any form a spec's ``[delays.NAME]`` table takes, as a mapping of one of
    them — ``{"quantiles": {"p50": 5, "p90": 20, "p99": 60}}``, ``{"samples": [...]}``,
    ``{"histogram": [[seconds, weight], ...]}``, ``{"csv": "file.csv"}`` (relative to the
    current folder) — which the cell holds compiled
    (:func:`reconsim.model.delays.from_spec_table`).

    >>> Cell(G=20).G
    20
    >>> Cell(G_delays={"samples": [12, 5, 12]}).G_delays
    ((5, 1), (12, 2))
    >>> Cell(U=0)
    Traceback (most recent call last):
    ...
    ValueError: U must be an integer in [1, 1000000], got 0
    """

    controller: str = field(default="ledger", metadata=declare(
        ControllerKind(), "which controller runs the loop", required=True))
    desired: int = field(default=6, metadata=declare(
        Int(0, MAX_COPIES), "copies that should run", required=True))
    U: int = field(default=15, metadata=declare(
        Int(1, MAX_SECONDS), "loop period, seconds between rounds", required=True))
    G: int = field(default=0, metadata=declare(
        Int(0, MAX_SECONDS), "ledger delay: seconds from ready to listed", required=True))
    B: int = field(default=5, metadata=declare(
        Int(0, MAX_SECONDS), "startup: seconds from creation to ready", required=True))
    duration: int = field(default=900, metadata=declare(
        Int(0, MAX_SECONDS), "the run covers seconds 0..duration", required=True))
    deaths: Deaths = field(default=((300, 2),), metadata=declare(
        Events(), "death schedule: (at, count) events, the oldest live copies die",
        required=True))
    ledger_base: int = field(default=20, metadata=declare(
        Int(0, MAX_COPIES), "entries of other services each round also reads"))
    observe: str = field(default="ready", metadata=declare(
        Choice(OBSERVE), "the ledger lists a copy G s after it is ready, or after creation",
        applies=IN_ROUNDS, variant=True))
    max_per_round: int | None = field(default=None, metadata=declare(
        Cap(1, MAX_COPIES), f"cap on one round's creates or delete commands ({UNLIMITED!r}: none)",
        variant=True))
    gain: float = field(default=1.0, metadata=declare(
        Thousandths(open_below=True), "damping: a round corrects ceil(gain x |diff|); gain in "
        "(0, 1], a multiple of 0.001", variant=True))
    ttl: int = field(default=TTL.default, metadata=field_of_controllers(TTL))
    restart_at: tuple[int, ...] = field(default=(), metadata=declare(
        Times(), "seconds at which the controller restarts and forgets its memory",
        applies=REMEMBERING, variant=True))

    # --- the richer world: delays that vary, Kubernetes semantics, faults. The defaults are
    # seed 001's world.
    B_spread: int = field(default=0, metadata=declare(
        Int(0, MAX_SECONDS), "copy k's startup is B + X, X uniform in 0..B_spread", world=True))
    G_spread: int = field(default=0, metadata=declare(
        Int(0, MAX_SECONDS), "copy k's ledger delay is G + Y, Y uniform in 0..G_spread",
        world=True))
    B_delays: DelayTable = field(default=(), metadata=declare(
        Delays(spread="B_spread"), "copy k's startup is B + X, X drawn from this table of "
        "(value, weight) entries (none: uniform in 0..B_spread)", world=True))
    G_delays: DelayTable = field(default=(), metadata=declare(
        Delays(spread="G_spread"), "copy k's ledger delay is G + Y, Y drawn from this table "
        "of (value, weight) entries (none: uniform in 0..G_spread)", world=True))
    U_jitter: int = field(default=0, metadata=declare(
        Int(0, MAX_SECONDS), "round i+1 comes max(1, U - U_jitter + Z) s after round i, Z "
        "uniform in "
        "0..2 U_jitter", world=True))
    seed: int = field(default=0, metadata=declare(
        Int(0, rng.MAX_SEED), "the cell's random streams, 0 <= seed < 2^31", world=True))
    delete_order: str = field(default="oldest", metadata=declare(
        Choice(DELETE_ORDERS), "delete commands go to the oldest or newest ledger entries",
        variant=True, world=True))
    grace: int = field(default=0, metadata=declare(
        Int(0, MAX_SECONDS), "seconds a deleted copy keeps running after its delete command",
        world=True))
    lag: LagWindows = field(default=(), metadata=declare(
        Windows(), "stale reads: (from, to, extra) windows; a round at from <= t < to reads "
        "the ledger of second t - extra", world=True))
    create_faults: FaultEvents = field(default=(), metadata=declare(
        Faults(), "scripted create faults: (at, count, kind) events, kind fail or lost",
        world=True))
    fail_rate: float = field(default=0.0, metadata=declare(
        Thousandths(), "probability that a create command fails (a multiple of 0.001)",
        world=True))
    lost_rate: float = field(default=0.0, metadata=declare(
        Thousandths(), "probability that a create command loses its reply (a multiple of "
        "0.001)", world=True))
    trigger: str = field(default="periodic", metadata=declare(
        Choice(TRIGGERS), "periodic rounds, or also one whenever the ledger it reads changed "
        "(watch)", variant=True, world=True))
    slow_start: bool = field(default=False, metadata=declare(
        Flag(), "creates go in batches 1, 2, 4, ...; none after a batch with a failure",
        variant=True, world=True))
    # --- the parameters of controllers that came after the richer world
    log_scale_down: bool = field(default=LOG_SCALE_DOWN.default,
                                 metadata=field_of_controllers(LOG_SCALE_DOWN))
    # --- a running service: copies that run before the run starts
    initial: int | str = field(default=0, metadata=declare(
        IntOrParam(0, MAX_COPIES, param="desired"), "copies already running, ready and "
        "listed at t = 0, the oldest of all (not created by the controller); 'desired': as "
        "many as desired, a settled service"))
    # --- desired that moves: changes of the count that should run, during the run
    scale: ScaleChanges = field(default=(), metadata=declare(
        Scale(), "scale schedule: (at, desired) changes; from second at on, desired copies "
        "should run (at >= 1, increasing)"))
    # --- a rolling update: the Deployment world's own parameters
    max_surge: int | str = field(default="25%", metadata=declare(
        IntOrPercent(max_percent=MAX_PERCENT), "a rolling update's surge budget: pods "
        "above desired, a count or a percentage of desired (rounded up)",
        applies=ROLLING, variant=True))
    max_unavailable: int | str = field(default="25%", metadata=declare(
        IntOrPercent(), "a rolling update's availability budget: pods below desired, a "
        "count or a percentage of desired (rounded down)", applies=ROLLING, variant=True))
    min_ready: int = field(default=0, metadata=declare(
        Int(0, MAX_SECONDS), "minReadySeconds: seconds a pod must be ready to count as "
        "available", applies=ROLLING))
    rollout: tuple[int, ...] = field(default=(10,), metadata=declare(
        Times(max_len=MAX_ROLLOUTS), "seconds at which the Deployment's template changes "
        "(a rollout; one during a rollout is a rollover), increasing", applies=ROLLING))

    #: The values of its controller's options — its parameters that are no field of a
    #: cell — (name, value) pairs in their declared order (:func:`make_cell` fills them in
    #: from keywords). reconsim's own controllers have none: theirs are fields.
    options: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        for p in PARAMS:
            value = getattr(self, p.name)
            if isinstance(p.kind, Delays) and isinstance(value, Mapping):  # a form, compiled
                value = delays.from_spec_table(value, p.name, Path())
            if value is not p.default:  # a default is a checked value (tests/test_params.py)
                object.__setattr__(self, p.name, p.kind.check(p.name, value))
        for p in DELAY_PARAMS:
            spread = p.kind.spread  # type: ignore[attr-defined]
            if getattr(self, p.name) and getattr(self, spread):
                raise ValueError(f"{p.name}: a delay table and {spread} "
                                 f"{getattr(self, spread)} both given; give one of the two")
        controller = registry.get(self.controller)
        if controller.world == "deployment":
            deployment.check_cell(self, DEFAULTS)
        given = dict(self.options)
        if len(given) != len(self.options):
            raise ValueError("options: a parameter is given twice")
        fields = [n for n in given if n in _FIELDS]
        if fields:
            raise ValueError(f"options: {fields[0]} = {shown(given[fields[0]])} is a field of "
                             f"a Cell, not an option: give it as {fields[0]}=")
        own = options_of(controller)
        if given and not own:
            raise ValueError(f"options: controller {controller.name!r} takes no options "
                             f"(got {', '.join(given)})")
        unknown = [n for n in given if n not in own]
        if unknown:
            raise ValueError(f"{unknown[0]}: not a parameter of controller "
                             f"{controller.name!r}{_its_params(controller)}")
        object.__setattr__(self, "options", tuple(
            (n, param.kind.check(n, given.get(n, param.default))) for n, param in own.items()))

    def initial_copies(self) -> int:
        """How many copies run at t = 0: ``initial``, or ``desired`` for ``"desired"``."""
        return self.desired if self.initial == "desired" else int(self.initial)

    def desired_at(self, t: int) -> int:
        """The copies that should run in second ``t``: ``desired``, or the last change of
        ``scale`` at or before ``t``."""
        now = self.desired
        for at, desired in self.scale:
            if at > t:
                break
            now = desired
        return now

    def event_seconds(self) -> list[int]:
        """The seconds within the run that open an event's window: those of a death event
        (whatever its count) or a change of desired, in order, each once."""
        return sorted({at for at, _ in (*self.deaths, *self.scale) if at <= self.duration})

    def value(self, name: str) -> Any:
        """The value of parameter ``name``: a field, or an option of its controller."""
        options = dict(self.options)
        return options[name] if name in options else getattr(self, name)


def options_of(controller: Controller) -> dict[str, Param]:
    """``controller``'s options: its parameters that are no field of a cell, in declared
    order (a parameter a cell declares as a field, ``ttl``, is that field)."""
    return {n: p for n, p in controller.params.items() if n not in _FIELDS}


def _its_params(controller: Controller) -> str:
    return (f", which has {', '.join(controller.params)}" if controller.params
            else ", which has none")


class UnknownParameterError(ReconsimError, TypeError):
    """A keyword that is no parameter of a cell or of its controller."""


def _did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean 'G'?)`` for the known name nearest ``name``, or '' when none is."""
    near = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {near[0]!r}?)" if near else ""


def _refusing_unknown_fields(init: Callable[..., None]) -> Callable[..., None]:
    """Cell's ``__init__``, whose unknown keyword is an :class:`UnknownParameterError`
    naming the nearest field (the dataclass's own is Python's bare ``TypeError``)."""
    known = frozenset(f.name for f in dataclasses.fields(Cell))

    @functools.wraps(init)
    def __init__(self: Cell, **fields: Any) -> None:  # noqa: N807 — it is Cell's
        if not known.issuperset(fields):
            name = next(name for name in fields if name not in known)
            raise UnknownParameterError(
                f"{name}: not a field of a Cell{_did_you_mean(name, known)}; a controller's "
                "own parameters go in options, or to make_cell")
        init(self, **fields)

    return __init__


Cell.__init__ = _refusing_unknown_fields(Cell.__init__)  # type: ignore[method-assign]


_F = TypeVar("_F", bound=Callable[..., Any])


def takes_cell_keywords(func: _F) -> _F:
    """Give ``func(**params)``, which passes its keywords to :func:`make_cell`, the signature
    they have: :class:`Cell`'s fields, keyword-only, with their types and defaults
    (``controller`` also a :class:`~reconsim.model.controllers.Controller`), then
    ``**options``, a controller's own parameters. ``help()`` and a notebook's completion
    show it."""
    fields = [p.replace(annotation="str | Controller") if p.name == "controller" else p
              for p in inspect.signature(Cell).parameters.values() if p.name != "options"]
    func.__signature__ = inspect.signature(func).replace(  # type: ignore[attr-defined]
        parameters=[*fields, inspect.Parameter("options", inspect.Parameter.VAR_KEYWORD,
                                               annotation="Any")])
    return func


def make_cell(**params: Any) -> Cell:
    """A :class:`Cell` from keywords: its fields, and the parameters of its controller (its
    options go to :attr:`Cell.options`). An unknown keyword is an
    :class:`UnknownParameterError` naming the nearest known one; a bad value a ``ValueError``
    naming it, as is another controller's own parameter given off its default (``ttl`` to
    ``ledger``, ``max_surge`` to anything but ``deployment``: :func:`refuse_inapplicable`)."""
    try:
        controller = registry.resolve(params.get("controller", "ledger"))
    except ReconsimError as exc:
        raise ValueError(f"controller: {exc}") from None
    fields = {k: v for k, v in params.items() if k in _FIELDS}
    options = dict(params.get("options", ())) | {
        k: v for k, v in params.items() if k not in _FIELDS and k != "options"}
    for name in options:
        if name not in controller.params:
            hint = (_did_you_mean(name, [*_FIELDS, *controller.params])
                    or _its_params(controller))
            raise UnknownParameterError(f"{name}: not a parameter of a cell or of controller "
                                   f"{controller.name!r}{hint}")
    fields["controller"] = controller.name
    for name, value in fields.items():
        refuse_inapplicable(name, value, controller.name)
    return Cell(**fields, options=tuple(options.items()))


def refuse_inapplicable(name: str, value: Any, controller: str, where: str = "") -> None:
    """Refuse parameter ``name`` given ``value`` (checked here first) for ``controller``
    when it is other controllers' own (``ttl``, ``log_scale_down``, the Deployment world's
    ``max_surge``: the controllers that declare them) and the value is not its default: a
    ``ValueError`` naming the parameter (after ``where``, a spec's ``grid.``), the value
    and the controller, where ignoring it would run another cell than the one asked for. A
    parameter that applies by what a controller does is not refused: ``restart_at``
    restarts one that remembers nothing, losing nothing; ``observe`` leaves one that syncs
    on events listing copies from their creation."""
    p = parameter(name)
    if p.applies not in OWN or p.applies_to(controller):
        return
    checked = p.kind.check(name, value)
    if checked == p.default:
        return
    owners = listed(p.owners())
    raise ValueError(f"{where}{name}: {shown(checked)} does not apply to controller "
                     f"{controller!r} ({name} is a parameter of {owners} only)")


#: Every parameter, in declaration order (the order of a sweep's axes).
PARAMS: Final[tuple[Parameter, ...]] = tuple(
    dataclasses.replace(f.metadata["param"], name=f.name, default=f.default)
    for f in dataclasses.fields(Cell) if "param" in f.metadata)
#: The delay tables (:class:`~reconsim.model.kinds.Delays`), each replacing a uniform spread.
DELAY_PARAMS: Final[tuple[Parameter, ...]] = tuple(
    p for p in PARAMS if isinstance(p.kind, Delays))
#: The keywords of a cell that are its fields (its parameters, and ``options``).
_FIELDS: Final = frozenset(f.name for f in dataclasses.fields(Cell)) - {"options"}
#: ``options`` is a keyword of a cell too: no controller's parameter may take the name.
registry.reserve({**{p.name: p.declared for p in PARAMS}, "options": None})


def all_params() -> tuple[Parameter, ...]:
    """:data:`PARAMS`, then the options of every controller known now (:func:`options_of`;
    each applying to the controllers that declare it), in the order they became known."""
    extra: dict[str, Parameter] = {}
    for controller in registry.known():
        for name, param in options_of(controller).items():
            extra[name] = Parameter(param.kind, param.help, applies=DECLARING, variant=True,
                                    name=name, default=param.default)
    return (*PARAMS, *extra.values())


def parameter(name: str) -> Parameter:
    """The parameter called ``name`` among :func:`all_params`."""
    if name in BY_NAME:
        return BY_NAME[name]
    for p in all_params():
        if p.name == name:
            return p
    raise KeyError(name)
#: Every parameter's name, in declaration order.
PARAM_NAMES: Final[tuple[str, ...]] = tuple(p.name for p in PARAMS)
#: The parameters of a world of its own, by name: they apply to its controllers alone (a
#: rolling update's, to ``deployment``).
WORLD_OWN: Final[Mapping[str, Parameter]] = {p.name: p for p in PARAMS if p.applies == ROLLING}
#: The parameters that make a controller variant (observe, max_per_round, gain, ...).
VARIANT_PARAMS: Final[tuple[str, ...]] = tuple(p.name for p in PARAMS if p.variant)
DEFAULTS: Final[Mapping[str, Any]] = {p.name: p.default for p in PARAMS}
#: The richer world's parameters, in declaration order.
WORLD_PARAMS: Final[tuple[str, ...]] = tuple(p.name for p in PARAMS if p.world)
#: The richer world's switches: a cell with all of them at their defaults is in seed 001's
#: world
#: (the seed alone draws nothing: numbers are drawn only for spreads, jitter and rates).
WORLD_SWITCHES: Final[tuple[str, ...]] = tuple(n for n in WORLD_PARAMS if n != "seed")
#: The polars dtype of each parameter's column.
PARAM_DTYPES: Final[Mapping[str, pl.DataType]] = {p.name: p.kind.dtype for p in PARAMS}
BY_NAME: Final[Mapping[str, Parameter]] = {p.name: p for p in PARAMS}

#: The column naming a death schedule, stored beside its events in a sweep's table.
SCHEDULE_COLUMN: Final = "schedule"


def name_column(name: str) -> str:
    """The column of a sweep's table naming the ``[delays.NAME]`` table that delay table
    parameter ``name`` holds (``none`` for no table).

    >>> name_column("G_delays")
    'G_delays_name'
    """
    return f"{name}_name"


#: The columns naming delay tables, with the parameter each names the table of.
NAME_COLUMNS: Final[Mapping[str, str]] = {name_column(p.name): p.name for p in DELAY_PARAMS}
#: The parameters a sweep's table lists first, in the order it has always published them;
#: the rest follow in declaration order.
_PUBLISHED_FIRST: Final = ("controller", "G", "U", "B", "desired", "duration", "ledger_base",
                           "deaths")


def table_columns(params: Sequence[Parameter]) -> tuple[str, ...]:
    """The parameter columns of a sweep table for ``params``: the published order first,
    then any other parameter in declaration order; a schedule's name precedes its events,
    a delay table's name its entries.

    >>> table_columns(PARAMS)[:9]
    ('controller', 'G', 'U', 'B', 'desired', 'duration', 'ledger_base', 'schedule', 'deaths')
    """
    names = [p.name for p in params]
    ordered: list[str] = [n for n in _PUBLISHED_FIRST if n in names]
    ordered += [n for n in names if n not in ordered]
    by_name = {p.name: p for p in params}
    out: list[str] = []
    for n in ordered:
        if isinstance(by_name[n].kind, Events):
            out.append(SCHEDULE_COLUMN)
        if isinstance(by_name[n].kind, Delays):
            out.append(name_column(n))
        out.append(n)
    return tuple(out)



def cell_text(cell: Cell) -> str:
    """The ``reconsim run`` flags that give ``cell`` (its required parameters, the others
    where they differ from the defaults and apply to its controller, and its controller's:
    a user's controller by the import path or entry point it was resolved from).

    >>> cell_text(Cell(G=20, deaths=(), lag=((100, 200, 30),), slow_start=True))[67:]
    '--deaths none --lag 100:200:30 --slow_start'
    """
    parts = []
    named = registry.named_by(cell.controller)
    values = [(p, cell.value(p.name)) for p in PARAMS]
    values += [(parameter(name), value) for name, value in cell.options]
    if named is not None:  # a user's controller, by the name it was resolved from
        values[0] = (values[0][0], named.removeprefix(f"{registry.ENTRY_POINTS}:"))
    for p, value in values:
        if (value == p.default and not p.required) or not p.applies_to(cell.controller):
            continue
        if isinstance(value, bool):
            parts.append(f"--{p.name}" if value else f"--no-{p.name}")
            continue
        if value is None:
            shown = UNLIMITED
        elif isinstance(value, tuple):
            shown = ",".join(":".join(str(v) for v in r) if isinstance(r, tuple) else str(r)
                             for r in value) or "none"
        else:
            shown = str(value)
        parts.append(f"--{p.name} {shown}")
    return " ".join(parts)

def check_value(name: str, value: Any) -> Any:
    """Validate one parameter value and return it normalised; raise ``ValueError`` naming it."""
    return parameter(name).kind.check(name, value)




def damped(diff: int, gain_permille: int) -> int:
    """The correction a damped round makes: ceil(gain x |diff|), with diff's sign, exactly.

    Plain integer arithmetic, so the kernel compiles this very function with numba.

    >>> damped(10, 700), damped(-3, 500), damped(1, 1), damped(-7, 1000)
    (7, -2, 1, -7)
    """
    magnitude = (abs(diff) * gain_permille + 999) // 1000
    return magnitude if diff >= 0 else -magnitude


def applies(name: str, controller: str) -> bool:
    """Whether parameter ``name`` means anything for ``controller`` (else its column is null).

    >>> applies("ttl", "ledger"), applies("ttl", "expectations"), applies("G", "intent")
    (False, True, True)
    """
    return parameter(name).applies_to(controller)


def check_deaths(events: Iterable[Any], name: str = "deaths") -> Deaths:
    """Validate a death schedule as the ``deaths`` parameter declares it: (at, count) pairs
    of bounded integers >= 0, kept in listed order."""
    checked: Deaths = BY_NAME["deaths"].kind.check(name, events)
    return checked
