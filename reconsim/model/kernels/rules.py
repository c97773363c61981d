"""The world's rules (:mod:`reconsim.model.rules`) compiled for the kernels: the very
functions the reference models call, each compiled by numba with its random draws bound to
:func:`uniform_u64`, :func:`reconsim.model.rng.uniform` in machine integers (the tests
check that both give the same numbers)."""

from __future__ import annotations

import hashlib
import inspect
import sys
import types
from collections.abc import Callable
from typing import Any, Final

import numba
import numpy as np

from reconsim.model import gosort, rng, rules

#: :func:`reconsim.model.rng.splitmix64` compiled: its masks are no-ops on unsigned 64-bit
#: machine integers, so the same code gives the same numbers.
splitmix64_u64 = numba.njit(cache=True, nogil=True)(rng.splitmix64)


@numba.njit(cache=True, nogil=True)
def uniform_u64(seed: int, stream: int, k: int, n: int) -> np.int64:
    """:func:`reconsim.model.rng.uniform` in machine integers: draw ``k`` of ``stream``
    mod ``n``."""
    x = (np.uint64(seed) << np.uint64(32)) | (np.uint64(stream) << np.uint64(28)) \
        | np.uint64(k)
    return np.int64(splitmix64_u64(x) % np.uint64(n))  # type: ignore[arg-type]


def rebound(function: Callable[..., Any], scope: dict[str, Any],
            suffix: str) -> Callable[..., Any]:
    """A new function from ``function``'s code reading its globals from ``scope``, named
    ``<qualname>__<suffix>`` in its own module: what numba compiles, and caches under that
    name, where a kernel or a rule needs other names bound than its module's."""
    copy = types.FunctionType(function.__code__, scope, function.__name__,
                              function.__defaults__, function.__closure__)
    copy.__qualname__ = f"{function.__qualname__}__{suffix}"
    copy.__module__ = function.__module__
    copy.__doc__ = function.__doc__
    return copy


def _compiled(function: Callable[..., Any], **bound: Any) -> Any:
    """``function`` of :mod:`reconsim.model.rules` compiled by numba, the names ``bound``
    (and the rules it calls) rebound to compiled ones in its globals."""
    copy = rebound(function, {**function.__globals__, **bound}, "kernel")
    # Inlined into the kernel's loop at numba's level: a call that passes arrays costs their
    # reference counts at every call (a few per cent of the world kernel's time, measured).
    return numba.njit(cache=True, nogil=True, inline="always")(copy)


extra_delay = _compiled(rules.extra_delay, uniform=uniform_u64)
create_outcome = _compiled(rules.create_outcome, uniform=uniform_u64)
listed_at = _compiled(rules.listed_at)
after_figures = _compiled(rules.after_figures)
write_metrics = _compiled(rules.write_metrics, after_figures=after_figures)
start_account = _compiled(rules.start_account)
account = _compiled(rules.account)
_close_event = _compiled(rules._close_event)
begin_event = _compiled(rules.begin_event, _close_event=_close_event)
end_events = _compiled(rules.end_events, _close_event=_close_event)
change_desired = _compiled(rules.change_desired)
ready_at = _compiled(rules.ready_at, extra_delay=extra_delay)
ledger_delay = _compiled(rules.ledger_delay, extra_delay=extra_delay)
runs = _compiled(rules.runs)
dies_at = _compiled(rules.dies_at)
on_ledger = _compiled(rules.on_ledger)
pending_at = _compiled(rules.pending_at)
next_round = _compiled(rules.next_round, uniform=uniform_u64)
stale_by = _compiled(rules.stale_by)
capped = _compiled(rules.capped)
most_syncs = _compiled(rules.most_syncs)

#: A digest of the rules' source, the random streams', Go's sort's and this module's: part
#: of every specialised kernel's name (:mod:`.specialise`), since numba's disk cache checks
#: only the kernel module's own source, not that of the functions a kernel calls.
SOURCE_DIGEST: Final = hashlib.sha256("".join(
    inspect.getsource(m) for m in (rules, rng, gosort, sys.modules[__name__])).encode()
).hexdigest()[:8]
