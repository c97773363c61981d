"""The parameters of one cell and the metrics it produces, declared once.

Everything else derives from these declarations: the keyword arguments of
:func:`reconsim.run_cell`, the columns :func:`reconsim.simulate` reads and
writes, the flags of ``reconsim run`` and the axes a sweep spec may name.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

#: Controller name -> one-line description. The order fixes the kernel's codes.
CONTROLLERS: Final[Mapping[str, str]] = {
    "ledger": "trusts the ledger only: diff = desired - ledger entries",
    "intent": "also counts its own pending creations: diff = desired - ledger - pending",
    "expectations": "Kubernetes' ReplicaSet gate: no corrections while its last ones are "
                    "unobserved and younger than ttl",
}

#: When a copy reaches the ledger: G seconds after it is ready (the seed's), or after it
#: is created (the way Kubernetes counts Pending pods as replicas).
OBSERVE: Final = ("ready", "created")

#: Spelling of "no cap" for ``max_per_round`` in specs and on the command line.
UNLIMITED: Final = "unlimited"

#: Parameters that describe a controller variant rather than the world it runs in.
_VARIANT = {"variant": True}

#: Parameters of issue 8's richer world; at their defaults a cell is in seed 001's world,
#: where the count kernel is exact.
_WORLD = {"world": True}

#: Controllers that keep a memory a restart can wipe.
WITH_MEMORY: Final = ("intent", "expectations")

#: A death schedule: (at, count) events; at second ``at`` the ``count`` oldest live copies die.
Deaths = tuple[tuple[int, int], ...]

# --- issue 8: the world's new parameters (kept together in this block) ---
#: Which ledger entries delete commands go to, by creation order.
DELETE_ORDERS: Final = ("oldest", "newest")
#: What starts a round: the period only, or also every change of the ledger it reads.
TRIGGERS: Final = ("periodic", "watch")
#: Kinds of scripted create faults: nothing is created, or the reply is lost.
FAULT_KINDS: Final = ("fail", "lost")
#: A lag schedule: (from, to, extra) windows; a round at from <= t < to reads the ledger
#: as it stood at the end of second t - extra.
Windows = tuple[tuple[int, int, int], ...]
#: A create-fault schedule: (at, count, kind) events.
Faults = tuple[tuple[int, int, str], ...]


#: Largest cell seed.
SEED_MAX: Final = 2**31 - 1


def _int(minimum: int, help: str, *, required: bool = True,
         applies: tuple[str, ...] | None = None) -> dict[str, Any]:
    return {"kind": "int", "min": minimum, "help": help, "required": required,
            "applies": applies}


@dataclass(frozen=True, kw_only=True, slots=True)
class Cell:
    """One cell of a sweep: a controller and the durations it runs against.

    >>> Cell(G=20).G
    20
    >>> Cell(U=0)
    Traceback (most recent call last):
    ...
    ValueError: U must be an integer >= 1, got 0
    """

    controller: str = field(
        default="ledger",
        metadata={"kind": "choice", "choices": tuple(CONTROLLERS), "required": True,
                  "applies": None, "help": "which controller runs the loop"},
    )
    desired: int = field(default=6, metadata=_int(0, "copies that should run"))
    U: int = field(default=15, metadata=_int(1, "loop period, seconds between rounds"))
    G: int = field(default=0, metadata=_int(0, "ledger delay: seconds from ready to listed"))
    B: int = field(default=5, metadata=_int(0, "startup: seconds from creation to ready"))
    duration: int = field(default=900, metadata=_int(0, "the run covers seconds 0..duration"))
    deaths: Deaths = field(
        default=((300, 2),),
        metadata={"kind": "deaths", "required": True, "applies": None,
                  "help": "death schedule: (at, count) events, the oldest live copies die"},
    )
    ledger_base: int = field(
        default=20,
        metadata=_int(0, "entries of other services each round also reads", required=False),
    )
    observe: str = field(
        default="ready",
        metadata={**_VARIANT, "kind": "choice", "choices": OBSERVE, "required": False,
                  "applies": None,
                  "help": "the ledger lists a copy G s after it is ready, or after creation"},
    )
    max_per_round: int | None = field(
        default=None,
        metadata={**_VARIANT, "kind": "cap", "required": False, "applies": None,
                  "help": f"cap on one round's creates or delete commands ({UNLIMITED!r}: none)"},
    )
    gain: float = field(
        default=1.0,
        metadata={**_VARIANT, "kind": "gain", "required": False, "applies": None,
                  "help": "damping: a round corrects ceil(gain x |diff|); gain in (0, 1], "
                          "a multiple of 0.001"},
    )
    ttl: int = field(
        default=300,
        metadata=_VARIANT | _int(0, "expectations: seconds before unobserved expectations expire",
                                 required=False, applies=("expectations",)),
    )
    restart_at: tuple[int, ...] = field(
        default=(),
        metadata={**_VARIANT, "kind": "times", "required": False, "applies": WITH_MEMORY,
                  "help": "seconds at which the controller restarts and forgets its memory"},
    )

    # --- issue 8: delays that vary, Kubernetes semantics, faults. Defaults: seed 001's world.
    B_spread: int = field(default=0, metadata=_WORLD | _int(
        0, "copy k's startup is B + X, X uniform in 0..B_spread", required=False))
    G_spread: int = field(default=0, metadata=_WORLD | _int(
        0, "copy k's ledger delay is G + Y, Y uniform in 0..G_spread", required=False))
    U_jitter: int = field(default=0, metadata=_WORLD | _int(
        0, "round i+1 comes max(1, U - U_jitter + Z) s after round i, Z uniform in "
           "0..2 U_jitter", required=False))
    seed: int = field(default=0, metadata=_WORLD | _int(
        0, "the cell's random streams, 0 <= seed < 2^31", required=False) | {"max": SEED_MAX})
    delete_order: str = field(
        default="oldest",
        metadata={**_WORLD, **_VARIANT, "kind": "choice", "choices": DELETE_ORDERS,
                  "required": False, "applies": None,
                  "help": "delete commands go to the oldest or newest entries"},
    )
    grace: int = field(default=0, metadata=_WORLD | _int(
        0, "seconds a deleted copy keeps running after its delete command", required=False))
    lag: Windows = field(
        default=(),
        metadata={**_WORLD, "kind": "windows", "required": False, "applies": None,
                  "help": "stale reads: (from, to, extra) windows; a round at from <= t < to "
                          "reads the ledger of second t - extra"},
    )
    create_faults: Faults = field(
        default=(),
        metadata={**_WORLD, "kind": "faults", "required": False, "applies": None,
                  "help": "scripted create faults: (at, count, kind) events, kind fail or lost"},
    )
    fail_rate: float = field(default=0.0, metadata={
        **_WORLD, "kind": "rate", "required": False, "applies": None,
        "help": "probability that a create command fails (a multiple of 0.001 in [0, 1])"})
    lost_rate: float = field(default=0.0, metadata={
        **_WORLD, "kind": "rate", "required": False, "applies": None,
        "help": "probability that a create command loses its reply (multiple of 0.001)"})
    trigger: str = field(
        default="periodic",
        metadata={**_WORLD, **_VARIANT, "kind": "choice", "choices": TRIGGERS, "required": False,
                  "applies": None, "help": "periodic rounds, or also one whenever the ledger "
                                           "it reads changed (watch)"},
    )
    slow_start: bool = field(
        default=False,
        metadata={**_WORLD, **_VARIANT, "kind": "bool", "required": False, "applies": None,
                  "help": "creates go in batches 1, 2, 4, ...; none after a batch with an error"},
    )

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            object.__setattr__(self, f.name, check_value(f.name, getattr(self, f.name)))


PARAMS: Final[tuple[dataclasses.Field[Any], ...]] = dataclasses.fields(Cell)
PARAM_NAMES: Final[tuple[str, ...]] = tuple(f.name for f in PARAMS)
INT_PARAMS: Final[tuple[str, ...]] = tuple(f.name for f in PARAMS if f.metadata["kind"] == "int")
#: The parameters that make a controller variant (observe, max_per_round, gain, ...).
VARIANT_PARAMS: Final[tuple[str, ...]] = tuple(f.name for f in PARAMS
                                               if f.metadata.get("variant"))
DEFAULTS: Final[Mapping[str, Any]] = {f.name: f.default for f in PARAMS}
#: Issue 8's parameters: a cell with all of them at their defaults is in seed 001's world.
WORLD_PARAMS: Final[tuple[str, ...]] = tuple(f.name for f in PARAMS if f.metadata.get("world"))
_BY_NAME: Final[Mapping[str, dataclasses.Field[Any]]] = {f.name: f for f in PARAMS}


def check_value(name: str, value: Any) -> Any:
    """Validate one parameter value and return it normalised; raise ``ValueError`` naming it."""
    meta = _BY_NAME[name].metadata
    return _CHECKS[meta["kind"]](name, value, meta)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_int(name: str, value: Any, meta: Mapping[str, Any]) -> int:
    if not _is_int(value) or value < meta["min"]:
        raise ValueError(f"{name} must be an integer >= {meta['min']}, got {value!r}")
    if "max" in meta and value > meta["max"]:
        raise ValueError(f"{name} must be an integer <= {meta['max']}, got {value!r}")
    return int(value)


def _check_choice(name: str, value: Any, meta: Mapping[str, Any]) -> str:
    if value not in meta["choices"]:
        raise ValueError(f"{name} must be one of {', '.join(meta['choices'])}; got {value!r}")
    return str(value)


def _check_cap(name: str, value: Any, meta: Mapping[str, Any]) -> int | None:
    if value is None or value == UNLIMITED:
        return None
    if not _is_int(value) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1 or {UNLIMITED!r}, got {value!r}")
    return int(value)


def _check_gain(name: str, value: Any, meta: Mapping[str, Any]) -> float:
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1
            or abs(value * 1000 - round(value * 1000)) > 1e-9):
        raise ValueError(f"{name} must be a multiple of 0.001 in (0, 1], got {value!r}")
    return round(value * 1000) / 1000


def _check_times(name: str, value: Any, meta: Mapping[str, Any]) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ValueError(f"{name} must be a list of seconds, got {value!r}")
    times = tuple(value)
    for v in times:
        if not _is_int(v) or v < 0:
            raise ValueError(f"{name} must hold integers >= 0, got {v!r}")
    return times


def _check_schedule(name: str, value: Any, meta: Mapping[str, Any]) -> Deaths:
    return check_deaths(value, name)


def _check_rate(name: str, value: Any, meta: Mapping[str, Any]) -> float:
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1
            or abs(value * 1000 - round(value * 1000)) > 1e-9):
        raise ValueError(f"{name} must be a multiple of 0.001 in [0, 1], got {value!r}")
    return round(value * 1000) / 1000


def _check_bool(name: str, value: Any, meta: Mapping[str, Any]) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be true or false, got {value!r}")
    return value


def _records(name: str, events: Any, fields: tuple[str, ...]) -> list[tuple[Any, ...]]:
    """A list of records given as tuples or as mappings with ``fields``, as tuples."""
    shape = "(" + ", ".join(fields) + ")"
    if isinstance(events, (str, bytes)) or not isinstance(events, Iterable):
        raise ValueError(f"{name} must be a list of {shape} records, got {events!r}")
    out = []
    for event in events:
        record = (tuple(event.get(f) for f in fields) if isinstance(event, Mapping)
                  else event)
        try:
            values = tuple(record)
        except TypeError:
            values = ()
        if len(values) != len(fields):
            raise ValueError(f"{name} record must be {shape}, got {event!r}")
        out.append(values)
    return out


def _record_int(name: str, part: str, v: Any, minimum: int) -> int:
    if not _is_int(v) or v < minimum:
        raise ValueError(f"{name} {part} must be an integer >= {minimum}, got {v!r}")
    return int(v)


def check_windows(value: Any, name: str = "lag") -> Windows:
    """Validate a lag schedule: (from, to, extra) windows, 0 <= from < to, extra >= 1."""
    out = []
    for raw_start, raw_end, extra in _records(name, value, ("from", "to", "extra")):
        start = _record_int(name, "window from", raw_start, 0)
        end = _record_int(name, "window to", raw_end, 0)
        if end <= start:
            raise ValueError(f"{name} window must have from < to, got ({start}, {end})")
        out.append((start, end, _record_int(name, "window extra", extra, 1)))
    return tuple(out)


def check_faults(value: Any, name: str = "create_faults") -> Faults:
    """Validate a create-fault schedule: (at, count, kind) events, kind fail or lost."""
    out = []
    for at, count, kind in _records(name, value, ("at", "count", "kind")):
        if kind not in FAULT_KINDS:
            raise ValueError(f"{name} event kind must be one of {', '.join(FAULT_KINDS)}; "
                             f"got {kind!r}")
        out.append((_record_int(name, "event at", at, 0),
                    _record_int(name, "event count", count, 0), str(kind)))
    return tuple(out)


_CHECKS: Final[Mapping[str, Callable[[str, Any, Mapping[str, Any]], Any]]] = {
    "int": _check_int,
    "choice": _check_choice,
    "cap": _check_cap,
    "gain": _check_gain,
    "times": _check_times,
    "deaths": _check_schedule,
    "rate": _check_rate,
    "bool": _check_bool,
    "windows": lambda name, value, meta: check_windows(value, name),
    "faults": lambda name, value, meta: check_faults(value, name),
}


def permille(gain: float) -> int:
    """A checked gain as an exact integer count of thousandths.

    >>> permille(0.7), permille(1.0)
    (700, 1000)
    """
    return round(gain * 1000)


def damped(diff: int, gain_permille: int) -> int:
    """The correction a damped round makes: ceil(gain x |diff|), with diff's sign, exactly.

    >>> damped(10, 700), damped(-3, 500), damped(1, 1)
    (7, -2, 1)
    """
    magnitude = -(-abs(diff) * gain_permille // 1000)
    return magnitude if diff >= 0 else -magnitude


def applies(name: str, controller: str) -> bool:
    """Whether parameter ``name`` means anything for ``controller`` (else its column is null).

    >>> applies("ttl", "ledger"), applies("ttl", "expectations"), applies("G", "intent")
    (False, True, True)
    """
    allowed = _BY_NAME[name].metadata["applies"]
    return allowed is None or controller in allowed


def check_deaths(events: Iterable[Any], name: str = "deaths") -> Deaths:
    """Validate a death schedule: (at, count) pairs of integers >= 0, kept in listed order."""
    if isinstance(events, (str, bytes)) or not isinstance(events, Iterable):
        raise ValueError(f"{name} must be a list of (at, count) pairs, got {events!r}")
    out: list[tuple[int, int]] = []
    for event in events:
        pair = (event.get("at"), event.get("count")) if isinstance(event, Mapping) else event
        try:
            at, count = pair
        except (TypeError, ValueError):
            raise ValueError(f"{name} event must be an (at, count) pair, got {event!r}") from None
        checked = []
        for part, v in (("at", at), ("count", count)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"{name} event {part} must be an integer >= 0, got {v!r}")
            checked.append(int(v))
        out.append((checked[0], checked[1]))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Metric:
    """One output column: its name, whether it is fractional or may be null, and its meaning."""

    name: str
    help: str
    float: bool = False
    nullable: bool = False


#: Every metric of a cell, in column order.
METRICS: Final[tuple[Metric, ...]] = (
    Metric("rounds", "rounds run: periodic ones (every U s, jittered) and watch-triggered"),
    Metric("work", "create commands + delete commands"),
    Metric("work_per_round", "work / rounds", float=True),
    Metric("created", "copies created"),
    Metric("unneeded", "created - desired - the schedule's total death count"),
    Metric("delete_commands", "delete commands issued"),
    Metric("deleted", "delete commands that removed a copy (it dies grace s later)"),
    Metric("overshoot", "largest live - desired over all seconds, 0 if live never exceeds desired"),
    Metric("stable_at", "1 + last second with live != desired (second 0 if none); "
           "null if that is the final second", nullable=True),
    Metric("reads", "ledger entries read over all rounds, ledger_base included"),
    Metric("reads_per_round", "reads / rounds", float=True),
    Metric("excess_copy_seconds", "sum over seconds of max(0, live - desired)"),
    Metric("missing_copy_seconds", "sum over seconds of max(0, desired - live)"),
    Metric("create_commands", "create commands issued (failed and lost ones included)"),
    Metric("failed_creates", "create commands that failed: nothing was created"),
)
METRIC_NAMES: Final[tuple[str, ...]] = tuple(m.name for m in METRICS)
