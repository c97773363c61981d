"""Settings a process takes as it starts, before it imports polars: reconsim makes them
where it starts a process — the ``reconsim`` command (:func:`reconsim.cli.main`) and a
sweep's local workers (:func:`start_worker`) — and never on import, so a program that
imports reconsim keeps its environment as it was.

This module imports nothing of reconsim's pipeline (nor polars, numpy or numba): the
command calls it first, and a worker unpickles its initialiser from it before anything
else is imported.
"""

from __future__ import annotations

import os
import sys
from typing import Final

#: The environment variable polars' jemalloc reads its settings from.
ALLOCATOR_VARIABLE: Final = "_RJEM_MALLOC_CONF"
#: polars allocates through jemalloc and configures it on import: pages freed are marked
#: reusable after 0.5 s (``MADV_FREE``) and returned after another 1 s. Marked pages still
#: count in the process's resident memory until the kernel takes them, and a report's
#: queries each take and free hundreds of MB in turn: at 10^8 cells they raised its peak
#: from about 1,700 to about 1,900 MiB. With this setting, which polars appends after its
#: own, they are returned as soon as they are marked (no change in time was measurable).
#: It takes effect only in a process that has not imported polars yet, and never over a
#: setting of the user's own: the ``reconsim`` command sets it first thing (its
#: ``report`` and ``sweep`` are what the figures above measure), and a sweep's loky
#: workers inherit the command's environment and apply the same rule as they start.
JEMALLOC_CONF: Final = "muzzy_decay_ms:0"
#: The environment variable polars' thread pool reads its size from, once, when it starts.
POLARS_THREADS_VARIABLE: Final = "POLARS_MAX_THREADS"


def configure_allocator() -> bool:
    """Set polars' allocator to return freed pages at once (:data:`JEMALLOC_CONF`) in this
    process, where that can still take effect: polars is not imported yet and no
    ``_RJEM_MALLOC_CONF`` is set (the user's own, or polars' once imported). Return
    whether it was set. Call it first thing where a process starts, not from a library."""
    if "polars" in sys.modules or ALLOCATOR_VARIABLE in os.environ:
        return False
    os.environ[ALLOCATOR_VARIABLE] = JEMALLOC_CONF
    return True


def start_worker(polars_threads: int | None) -> None:
    """The initialiser of a sweep's local worker processes, run in each as it starts,
    before it imports polars: the allocator setting (:func:`configure_allocator`), and a
    polars pool of ``polars_threads`` threads (None: polars' default, or the
    ``POLARS_MAX_THREADS`` the worker inherited). Only the worker's own environment
    changes; the parent passes the count, it sets nothing in its own."""
    configure_allocator()
    if polars_threads is not None:
        os.environ[POLARS_THREADS_VARIABLE] = str(polars_threads)
