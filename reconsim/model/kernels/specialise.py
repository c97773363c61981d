"""One compiled kernel per controller, cached on disk.

A kernel module's loop calls ``decide`` (and ``rank``, and reads the other names below)
as module globals. :func:`specialise` makes, for one controller, new function objects from
the same code with those globals bound to the controller's — its compiled ``decide`` and
``rank``, its parameters' named tuple, its memory's initial values, what it sees, whether
it is steady — and compiles them with numba, which reads globals as compile-time
constants: the branches a controller does not need (the walk that counts ``pending``, the
memory check, the skipping of idle rounds, the ranking) are compiled out, and the built-ins
run as fast as when their rules were written into the loop.

Passing the compiled ``decide`` as an argument instead would also specialise the kernel,
but numba does not cache a function typed on a dispatcher argument: every process would
compile the world kernel anew (tens of seconds). Here each specialised function has a name
of its own, ``<function>__<controller>_<digest>_<source>``, so numba's disk cache keeps
one entry per controller and version; the digest (:attr:`Controller.digest`) covers the
module that defines ``decide``, ``<source>`` this module and the world's rules the kernels
call (:mod:`.rules`), and numba itself invalidates the entries when the kernel's own source
changes.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import logging
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

import numba
import numpy as np

from reconsim.model.controllers.definition import Controller
from reconsim.model.kernels.arrays import KernelDecisionError, rerun_unrun
from reconsim.model.kernels.rules import SOURCE_DIGEST, rebound
from reconsim.model.kinds import MAX_COPIES


# The globals a kernel module's loop reads for its controller. A kernel module imports
# them from here; these values hold until specialise() binds a controller's, and make the
# unspecialised functions fail if they were ever compiled.
def decide(v: Any, p: Any, m: Any) -> int:
    """The controller's decision (unbound)."""
    raise RuntimeError("a kernel runs a controller only once specialised for it")


def rank(e: Any, p: Any) -> int:
    """The controller's deletion key for a read entry (unbound)."""
    raise RuntimeError("a kernel runs a controller only once specialised for it")


def no_rank(e: Any, p: Any) -> int:
    """The key of every entry for a controller without ``rank``: all equal."""
    return 0


def settle(o: Any, p: Any, m: Any) -> int:
    """An event-driven controller's settling of its sync (unbound)."""
    raise RuntimeError("a kernel runs a controller only once specialised for it")


def observe(e: Any, p: Any, m: Any) -> None:
    """An event-driven controller's view of a cache event (unbound)."""
    raise RuntimeError("a kernel runs a controller only once specialised for it")


def less(a: Any, b: Any, p: Any) -> bool:
    """An event-driven controller's deletion order (unbound)."""
    raise RuntimeError("a kernel runs a controller only once specialised for it")


def no_observe(e: Any, p: Any, m: Any) -> None:
    """The view of a controller without ``observe``: nothing."""


def no_less(a: Any, b: Any, p: Any) -> bool:
    """The order of a controller without ``less``: all tied."""
    return False


#: Whether the controller orders the entries an event-driven deletion takes.
HAS_LESS = False
#: Whether the controller ranks the entries a deletion takes.
RANKED = False
#: The named tuple of the controller's parameters, and how many it has.
PARAMS_TYPE: Any = None
N_PARAMS = 0
#: The controller's memory at t = 0 and after a restart; whether it declares any.
MEMORY_INIT = np.zeros(1, np.int64)
HAS_MEMORY = False
#: Whether it reads its pending creations (a walk over the copies held), and is steady.
SEES_PENDING = False
STEADY = False


def _jit(function: Callable[..., Any]) -> Any:
    """``function`` compiled lazily by numba, its machine code cached on disk where its
    source file allows (so that :func:`checked` costs a process nothing the second time)."""
    try:
        return numba.njit(nogil=True, cache=True)(function)
    except RuntimeError:  # no source file to cache it beside (defined in a notebook, say)
        return numba.njit(nogil=True)(function)


@functools.cache
def compiled_decide(controller: Controller) -> Any:
    """``controller.decide`` compiled by numba (lazily: numba compiles it with the kernel)."""
    return _jit(controller.decide)


@functools.cache
def compiled_rank(controller: Controller) -> Any:
    """``controller.rank`` (or :func:`no_rank`) compiled by numba, lazily as decide."""
    return _jit(controller.rank or no_rank)


@functools.cache
def compiled_hooks(controller: Controller) -> tuple[Any, Any, Any]:
    """An event-driven controller's ``settle``, ``observe`` and ``less`` compiled by numba
    (lazily, as decide)."""
    return (_jit(controller.settle or no_rank), _jit(controller.observe or no_observe),
            _jit(controller.less or no_less))


#: What each hook must return, as numba types it, and how the line says it.
_INTEGER, _BOOL = "an integer", "a bool"


def checked(controller: Controller) -> None:
    """Raise :class:`KernelDecisionError` (row None) when numba cannot compile one of
    ``controller``'s hooks for the arguments the kernels pass it, or types its result as
    something a hook may not return: ``decide``, ``rank`` and ``settle`` an integer (not a
    bool, a float or nothing), ``less`` a bool or an integer. A float correction would
    otherwise pass silently where a kernel's loop takes it (the world kernel casts it into
    its integer arrays) — the check covers every kernel and every hook, not one case."""
    reason = _refusal(controller)
    if reason is not None:
        raise KernelDecisionError(reason)


@functools.cache
def _refusal(controller: Controller) -> str | None:
    """Why :func:`checked` refuses ``controller``, or None (once per definition)."""
    from reconsim.model.controllers.definition import Entry, Event, Item, Outcome, Round, Sync

    typeof: Callable[[Any], Any] = numba.typeof
    memory = typeof(np.zeros((2, 1), np.int64)[0])  # a row of the kernels' memory
    p = typeof(controller.params_type(*[0] * len(controller.params)))

    def zeros(record: Any) -> Any:
        return typeof(record(*[0] * len(record._fields)))

    hooks: list[tuple[str, Any, tuple[Any, ...], str | None]] = [
        ("decide", compiled_decide(controller),
         (zeros(Sync if controller.syncs_on_events else Round), p, memory), _INTEGER)]
    if controller.rank is not None:
        hooks.append(("rank", compiled_rank(controller), (zeros(Entry), p), _INTEGER))
    if controller.syncs_on_events:
        settle, observe, less = compiled_hooks(controller)
        hooks += [("settle", settle, (zeros(Outcome), p, memory), _INTEGER),
                  ("observe", observe, (zeros(Event), p, memory), None),
                  ("less", less, (zeros(Item), zeros(Item), p), _BOOL)]
    for role, dispatcher, args, wanted in hooks:
        try:
            dispatcher.compile(args)
        except numba.core.errors.NumbaError as exc:
            return compile_failure(controller, exc, role)
        got = dispatcher.overloads[args].signature.return_type
        integer = isinstance(got, numba.types.Integer) and not isinstance(
            got, numba.types.Boolean)
        if (wanted == _INTEGER and not integer) or (
                wanted == _BOOL and not (integer or isinstance(got, numba.types.Boolean))):
            return (f"controller {controller.name!r}: {role} returns {got} as numba compiles "
                    f"it, not {wanted} (a value every return of it takes: use // or int() "
                    "for a whole number)")
    return None


def specialise(namespace: Mapping[str, Any], functions: Mapping[str, Mapping[str, Any]],
               controller: Controller) -> dict[str, Any]:
    """Compile ``functions`` (name -> numba options) of the module whose globals are
    ``namespace`` for ``controller``; return name -> dispatcher. The functions are listed
    callees first: each sees the specialised versions of those listed before it. A name
    ``f@variant`` compiles ``f`` once more, with other options (``_simulate@parallel``)."""
    checked(controller)
    bound = dict(namespace)
    bound.update({
        "decide": compiled_decide(controller),
        "rank": compiled_rank(controller),
        "RANKED": controller.rank is not None,
        "PARAMS_TYPE": controller.params_type,
        "N_PARAMS": len(controller.params),
        "MEMORY_INIT": controller.initial_memory(),
        "HAS_MEMORY": bool(controller.memory),
        "SEES_PENDING": "pending" in controller.sees,
        "STEADY": controller.steady,
    })
    if controller.syncs_on_events:
        hooks = compiled_hooks(controller)
        bound.update({"settle": hooks[0], "observe": hooks[1], "less": hooks[2],
                      "HAS_LESS": controller.less is not None})
    tag = f"{controller.name}_{controller.digest}_{_SOURCE_DIGEST}"
    out: dict[str, Any] = {}
    for key, options in functions.items():
        name, _, variant = key.partition("@")
        python: Callable[..., Any] = namespace[name]
        # A function the kernel module imports (Go's sort) keeps its own module's globals,
        # those of the kernel's namespace (and what is specialised) over them.
        scope = bound if python.__globals__ is namespace else {**python.__globals__, **bound}
        copy = rebound(python, scope, f"{tag}{'_' + variant if variant else ''}")
        out[key] = numba.njit(cache=True, **options)(copy)
        if not variant:
            bound[name] = out[key]
    return out


#: A digest of this module's source and of the rules the kernels call
#: (:data:`reconsim.model.kernels.rules.SOURCE_DIGEST`), in each specialised kernel's
#: name: numba's disk cache checks only the kernel module's own source, so an edit here or
#: there would otherwise load a kernel compiled from the old code.
_SOURCE_DIGEST: Final = hashlib.sha256(
    (inspect.getsource(sys.modules[__name__]) + SOURCE_DIGEST).encode()).hexdigest()[:8]


#: Where a kernel's compilation is reported: one INFO record each time a process compiles
#: a kernel its numba cache does not hold (the command line prints it on a terminal).
compile_log = logging.getLogger("reconsim.compile")


@contextlib.contextmanager
def noting_compiles(kernel: Any, what: str, controller: Controller) -> Iterator[None]:
    """Run a call of ``kernel`` (a numba dispatcher); if numba compiled it for this call
    (not found in its disk cache), log the seconds the call took on :data:`compile_log`."""
    count = len(kernel.overloads)  # a compiled or a loaded signature adds one
    started = time.perf_counter()
    yield
    new = list(kernel.overloads)[count:] if len(kernel.overloads) > count else []
    if any(kernel.stats.cache_misses[sig] for sig in new):  # compiled, not found on disk
        compile_log.info(
            "compiled the %s for controller %r in %.1f s (its first use here; numba keeps it "
            "on disk for later runs)", what, controller.name, time.perf_counter() - started)


def run_rows(kernel: Any, what: str, controller: Controller, run: Callable[[], Any],
             alone: Callable[[int], object]) -> None:
    """Run ``controller``'s rows on its ``kernel`` (the ``what``): ``run()`` calls it, its
    rows marked :data:`~reconsim.model.kernels.arrays.UNRUN` first, and returns the first
    figure of each row it ran, in its order; a row left unrun then runs again alone,
    ``alone(j)`` on this thread (:func:`~reconsim.model.kernels.arrays.rerun_unrun`). A
    compile is logged (:func:`noting_compiles`); numba's refusal to compile, or an exception
    the controller's code raised, is a :class:`KernelDecisionError` of one line."""
    try:
        with noting_compiles(kernel, what, controller):
            rerun_unrun(run(), alone)
    except numba.core.errors.NumbaError as exc:
        raise KernelDecisionError(compile_failure(controller, exc)) from None
    except Exception as exc:  # raised by the controller's hooks, in its code
        raise raised(controller, exc) from None


def beyond_max(controller: Controller, row: int) -> KernelDecisionError:
    """The kernel's line for cell ``row``, whose controller returned a correction beyond
    :data:`~reconsim.model.kinds.MAX_COPIES`."""
    return KernelDecisionError(f"controller {controller.name!r}: decide returned a correction "
                               f"beyond {MAX_COPIES:,} copies", row)


def raised(controller: Controller, exc: Exception) -> KernelDecisionError:
    """An exception a hook raised inside a kernel, as one line naming the controller."""
    return KernelDecisionError(f"controller {controller.name!r}: its code raised "
                               f"{type(exc).__name__}: {exc}")


def compile_failure(controller: Controller, exc: Exception, role: str = "code") -> str:
    """numba's refusal to compile a hook of ``controller`` (or a kernel for it) as one
    line naming it."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    reason = next((line for line in lines if not line.startswith(
        ("Failed in", "-", "During:", "File", "[", "^", ">"))), type(exc).__name__)
    return (f"controller {controller.name!r}: numba cannot compile its {role} ({reason}); "
            "declare it with compiled=False to run it on the reference model alone")
