"""The parameters of one cell and the metrics it produces, declared once.

Everything else derives from these declarations: the keyword arguments of
:func:`reconsim.run_cell`, the columns :func:`reconsim.model.simulate` reads and
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

#: Controllers that keep a memory a restart can wipe.
WITH_MEMORY: Final = ("intent", "expectations")

#: A death schedule: (at, count) events; at second ``at`` the ``count`` oldest live copies die.
Deaths = tuple[tuple[int, int], ...]


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


_CHECKS: Final[Mapping[str, Callable[[str, Any, Mapping[str, Any]], Any]]] = {
    "int": _check_int,
    "choice": _check_choice,
    "cap": _check_cap,
    "gain": _check_gain,
    "times": _check_times,
    "deaths": _check_schedule,
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
    Metric("rounds", "rounds run: seconds t in 0..duration with t % U == 0"),
    Metric("work", "copies created + delete commands"),
    Metric("work_per_round", "work / rounds", float=True),
    Metric("created", "copies created"),
    Metric("unneeded", "created - desired - the schedule's total death count"),
    Metric("delete_commands", "delete commands issued"),
    Metric("deleted", "delete commands that killed a live copy"),
    Metric("overshoot", "largest live - desired over all seconds, 0 if live never exceeds desired"),
    Metric("stable_at", "1 + last second with live != desired (second 0 if none); "
           "null if that is the final second", nullable=True),
    Metric("reads", "ledger entries read over all rounds, ledger_base included"),
    Metric("reads_per_round", "reads / rounds", float=True),
    Metric("excess_copy_seconds", "sum over seconds of max(0, live - desired)"),
    Metric("missing_copy_seconds", "sum over seconds of max(0, desired - live)"),
)
METRIC_NAMES: Final[tuple[str, ...]] = tuple(m.name for m in METRICS)
