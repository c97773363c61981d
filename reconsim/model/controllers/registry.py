"""Which controllers this process knows: reconsim's own, and those a user named.

Every controller becomes known through :func:`register`: reconsim's own are registered
with it when this module is first imported, as a user's is when it is named (as
Gymnasium registers its own environments with the same ``register``). A user's
controller is named by its import path (``mypkg.controllers:Deadband``, the attribute a
:class:`~.definition.Controller`), or by a short name its package registers under the
entry-point group ``reconsim.controllers``. Naming one imports its module — as naming a
noxfile runs it — so only a spec, a flag or a call that the user wrote does it; reading a
sweep (its table, its manifest) never imports anything. Once resolved, the controller is
known by its own name in this process: the table's ``controller`` column holds that
name, and its parameters become parameters of a cell.

A controller's parameter is a field of a cell or one of its options, by its declaration
(:func:`reserve`): a parameter that a cell declares as a field of its own (``ttl``,
``log_scale_down``) is taken by every controller that declares it as the cell does; one
named like any other parameter of a cell is refused; the rest are options, which
controllers declaring the same name must declare alike.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
from collections.abc import Iterator, Mapping
from typing import Any, Final

from reconsim.model.controllers.definition import Controller, ControllerError, Param
from reconsim.model.controllers.deployment import DEPLOYMENT
from reconsim.model.controllers.expectations import EXPECTATIONS
from reconsim.model.controllers.intent import INTENT
from reconsim.model.controllers.ledger import LEDGER
from reconsim.model.controllers.replicaset import REPLICASET
from reconsim.model.kinds import Choice
from reconsim.words import listed

#: The entry-point group under which a package registers its controllers by short name.
ENTRY_POINTS: Final = "reconsim.controllers"

#: reconsim's own controllers, in the order of their codes (registered below).
_BUILT_IN: Final = (LEDGER, INTENT, EXPECTATIONS, REPLICASET, DEPLOYMENT)
_BUILT_IN_NAMES: Final = frozenset(c.name for c in _BUILT_IN)
_known: dict[str, Controller] = {}
#: How each user controller was named (its import path or entry point), by its name.
_named_by: dict[str, str] = {}
#: A cell's parameters, by name: the declaration a controller takes to share the field
#: (``ttl``), or None for a name no controller may take (``G``).
_fields: dict[str, Param | None] = {}


@contextlib.contextmanager
def scope() -> Iterator[None]:
    """Controllers that become known inside the block are forgotten after it (for tests,
    and for code that checks definitions it does not mean to keep)."""
    known_before, named_before = dict(_known), dict(_named_by)
    try:
        yield
    finally:
        _known.clear()
        _known.update(known_before)
        _named_by.clear()
        _named_by.update(named_before)


def forget(name: str) -> None:
    """Forget the user's controller called ``name`` (one of :func:`built_in` stays)."""
    if name not in _BUILT_IN_NAMES:
        _known.pop(name, None)
        _named_by.pop(name, None)


def reserve(fields: Mapping[str, Param | None]) -> None:
    """Make ``fields`` a cell's parameters, by name: a controller's parameter of one of
    these names is that field if it is declared as the field's declaration says (a
    :class:`Param` equal to it), and is refused otherwise (and always, for a name whose
    declaration is None). The controllers known already are held to it too."""
    _fields.update(fields)
    for controller in _known.values():
        _check_params(controller, _where(controller, named_by(controller.name)))


def known() -> tuple[Controller, ...]:
    """Every controller known in this process: :func:`built_in`'s, then the users' in the
    order they were resolved. A controller's code in the kernels is its index here."""
    return tuple(_known.values())


def built_in() -> tuple[Controller, ...]:
    """reconsim's own controllers, in the order of their codes (the first of
    :func:`known`): the ones every process knows without importing anything.

    >>> [c.name for c in built_in()]
    ['ledger', 'intent', 'expectations', 'replicaset', 'deployment']
    """
    return _BUILT_IN


def names() -> tuple[str, ...]:
    """The names of :func:`known`."""
    return tuple(_known)


def named_by(name: str) -> str | None:
    """The import path or entry point a user's controller was resolved from (None for a
    built-in or one registered as an object)."""
    return _named_by.get(name)


def get(name: str) -> Controller:
    """The known controller called ``name``."""
    try:
        return _known[name]
    except KeyError:
        raise ControllerError(f"controller {name!r} is not known here: "
                              f"{', '.join(_known)} are (name a user's controller by its "
                              "import path, package.module:Name)") from None


def register(controller: Controller, source: str | None = None) -> Controller:
    """Make ``controller`` known by its name; the one already known under that name if it is
    the same definition. Two different definitions may not share a name. A parameter the
    controller declares is a cell's field if a cell declares it so (:func:`reserve`), else
    one of its options (one declared otherwise, or of a name a cell holds, is refused)."""
    if not isinstance(controller, Controller):
        raise ControllerError(f"controller {source or controller!r}: it is a "
                              f"{type(controller).__name__}, not a reconsim Controller "
                              "definition")
    if not _fields and controller.name not in _BUILT_IN_NAMES:
        # a cell's parameters are declared when its module is imported (reserve): a user's
        # controller is checked against them, whichever was imported first
        importlib.import_module("reconsim.model.params")
    held = _known.get(controller.name)
    where = _where(controller, source)
    if held is not None and held is not controller:
        if controller.name in _BUILT_IN_NAMES:
            raise ControllerError(f"{where}: the name is a built-in controller's; choose "
                                  "another")
        if held.identity != controller.identity:
            raise ControllerError(
                f"{where}: another definition of that name is known "
                f"({named_by(controller.name) or 'registered'}, {held.identity}); choose "
                "another name")
        return held
    _check_params(controller, where)
    _known[controller.name] = controller
    if source is not None and controller.name not in _BUILT_IN_NAMES:
        _named_by[controller.name] = source
    return controller


def _where(controller: Controller, source: str | None) -> str:
    return f"controller {controller.name!r}{f' ({source})' if source else ''}"


def _check_params(controller: Controller, where: str) -> None:
    """Refuse a parameter of ``controller`` that would be a cell's field declared otherwise,
    or an option that another known controller declares otherwise."""
    for name, param in controller.params.items():
        if name in _fields:
            field = _fields[name]
            if field is None:
                raise ControllerError(f"{where}: parameter {name!r} is a cell parameter's "
                                      "name; choose another")
            if param != field:
                raise ControllerError(
                    f"{where}: parameter {name!r} is a cell parameter declared otherwise"
                    f"{_declaring(name, controller)} (its kind, default and help must be "
                    "theirs): declare it as they do to take it, or choose another name")
            continue
        for other in _known.values():
            theirs = other.params.get(name)
            if other is not controller and theirs is not None and (
                    theirs.kind != param.kind or theirs.default != param.default):
                raise ControllerError(f"{where}: parameter {name!r} is declared otherwise by "
                                      f"controller {other.name!r}; choose another name")


def declaring(name: str, but: Controller | None = None) -> tuple[str, ...]:
    """The known controllers (but ``but``) that declare a parameter called ``name``, in the
    order of their codes."""
    return tuple(c.name for c in _known.values() if name in c.params and c is not but)


def _declaring(name: str, checked: Controller) -> str:
    """`` (by expectations and replicaset)``: :func:`declaring`'s, ``checked`` left out, or ''
    if none does."""
    owners = declaring(name, checked)
    return f" (by {listed(owners)})" if owners else ""


def resolve(ref: str | Controller) -> Controller:
    """The controller ``ref`` names: a :class:`Controller`, a known name, an import path
    ``package.module:Name``, or a short name under :data:`ENTRY_POINTS`; it becomes known."""
    if isinstance(ref, Controller):
        return register(ref)
    if not isinstance(ref, str) or not ref:
        raise ControllerError(f"controller {ref!r}: give a name, package.module:Name or a "
                              "Controller")
    if ref in _known:
        return _known[ref]
    if ":" in ref:
        return register(_import(ref), ref)
    point = _entry_point(ref)
    if point is None:
        raise ControllerError(
            f"controller {ref!r}: not a built-in ({', '.join(c.name for c in _BUILT_IN)}), "
            f"not registered under the entry-point group {ENTRY_POINTS!r}, and not an import path "
            "(package.module:Name)")
    try:
        loaded = point.load()
    except Exception as exc:  # the user's package: whatever its import raised, in one line
        raise ControllerError(f"controller {ref!r} (entry point {point.value}): cannot "
                              f"load it: {type(exc).__name__}: {exc}") from None
    controller = register(loaded, f"{ENTRY_POINTS}:{ref}")
    if controller.name != ref:
        raise ControllerError(f"controller {ref!r}: its entry point {point.value} defines "
                              f"a controller named {controller.name!r}")
    return controller



for _controller in _BUILT_IN:  # through the front door a user's controller takes
    register(_controller)


def _import(path: str) -> Any:
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise ControllerError(f"controller {path!r}: an import path is package.module:Name")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ControllerError(f"controller {path!r}: cannot import {module_name!r} "
                              f"({exc})") from None
    except Exception as exc:  # the user's module: whatever its import raised, in one line
        raise ControllerError(f"controller {path!r}: importing {module_name!r} raised "
                              f"{type(exc).__name__}: {exc}") from None
    value: Any = module
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise ControllerError(f"controller {path!r}: {module_name!r} has no "
                                  f"attribute {attribute!r}")
        value = getattr(value, part)
    return value


def _entry_point(name: str) -> importlib.metadata.EntryPoint | None:
    found = importlib.metadata.entry_points(group=ENTRY_POINTS, name=name)
    return next(iter(found), None)


class ControllerKind(Choice):
    """The ``controller`` parameter: the name of a known controller (:func:`known`). A value
    may also be a :class:`Controller` or the name a user's controller is resolved by: it is
    resolved (its module imported) and stands for its name."""

    def __init__(self) -> None:  # the choices are whatever is known when a value is checked
        pass

    @property
    def choices(self) -> tuple[str, ...]:
        return names()

    def check(self, name: str, value: Any) -> Any:
        if isinstance(value, Controller) or (isinstance(value, str) and value not in _known):
            try:
                return resolve(value).name
            except ControllerError as exc:
                raise ValueError(str(exc)) from None
        return super().check(name, value)

    def argument(self, help: str, default: Any) -> dict[str, Any]:
        return {"default": default, "metavar": "NAME",
                "help": f"{help}: {', '.join(names())}, or a user's, by package.module:Name "
                        f"or entry point (default {default})"}

    def __repr__(self) -> str:
        return "ControllerKind()"
