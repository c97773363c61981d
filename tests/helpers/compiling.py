"""A chunk task that logs a kernel's compilation, as a worker's first use of a kernel does
(numba's cache makes a real one rare and slow to provoke). The loky backend's workers
import this module by name to unpickle the task."""

from __future__ import annotations

import logging
from pathlib import Path

from reconsim.sweep import runner
from reconsim.sweep.spec import Spec
from reconsim.sweep.store import Model

_run_and_write_chunk = runner.run_and_write_chunk
#: The line each chunk logs (a worker's real notice, with its time).
NOTICE = ("compiled the count kernel for controller 'ledger' in 1.5 s (its first use here; "
          "numba keeps it on disk for later runs)")


def compiling_run_and_write_chunk(spec: Spec, out: Path, index: int, threads: int | None = None,
                                  expected: Model | None = None) -> tuple[int, int]:
    """:func:`reconsim.sweep.runner.run_and_write_chunk`, after logging :data:`NOTICE`."""
    logging.getLogger("reconsim.compile").info(
        "compiled the %s for controller %r in %.1f s (its first use here; numba keeps it on "
        "disk for later runs)", "count kernel", "ledger", 1.5)
    return _run_and_write_chunk(spec, out, index, threads, expected)
