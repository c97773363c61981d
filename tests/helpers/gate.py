"""A sweep held at a known point, for the tests that interrupt one.

``python -c "import tests.helpers.gate as g; g.main()" sweep SPEC ...`` runs
``reconsim sweep SPEC ...`` in which every chunk from index ``RECONSIM_TEST_HOLD_FROM``
on, instead of running, writes ``RECONSIM_TEST_HOLD_DIR/held-<index>`` and waits to be
interrupted (the test's signal; it gives up after ten minutes). Chunks before it run as
usual, so once their files and a marker are there the sweep is, for certain, in the middle:
those chunks done, a later one in progress, the rest not started. The loky backend's
workers run the held chunks too: they import this module by name to unpickle the task.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from reconsim.sweep import runner
from reconsim.sweep.spec import Spec
from reconsim.sweep.store import Model

_run_and_write_chunk = runner.run_and_write_chunk
#: How long a held chunk waits for the signal before failing the sweep.
HOLD_SECONDS = 600


def held_run_and_write_chunk(spec: Spec, out: Path, index: int, threads: int | None = None,
                             expected: Model | None = None) -> tuple[int, int]:
    """:func:`reconsim.sweep.runner.run_and_write_chunk`, or held from the set index on."""
    if index < int(os.environ["RECONSIM_TEST_HOLD_FROM"]):
        return _run_and_write_chunk(spec, out, index, threads, expected)
    marker = Path(os.environ["RECONSIM_TEST_HOLD_DIR"]) / f"held-{index}"
    marker.write_text(f"{os.getpid()}\n", encoding="utf-8")
    time.sleep(HOLD_SECONDS)  # a signal ends this: KeyboardInterrupt, or the process
    raise RuntimeError(f"chunk {index} was held {HOLD_SECONDS} s and never interrupted")


def main() -> None:
    """``reconsim`` with the sys.argv given, its chunks held (see the module's doc)."""
    runner.run_and_write_chunk = held_run_and_write_chunk  # type: ignore[assignment]
    from reconsim.cli import main as reconsim

    sys.exit(reconsim(sys.argv[1:]))
