"""numba's cache of the kernels, filled before the test processes start.

The kernels are compiled with ``cache=True``: the first process that runs one compiles it
(about 10 s of a core for the count kernel, 30 s for the world kernel, each in a threaded
and a one-thread variant) and writes it to ``__pycache__``; later processes load it. In a
fresh clone, every pytest-xdist worker, and every child process started before the cache is
written, would compile each kernel again. ``tests/conftest.py`` has the xdist controller
run :func:`start` first, one process per kernel side by side; the workers then load them.

numba compiles a kernel anew for each pattern of read-only and writable input arrays it
meets; the kernels hand every input over read-only (``reconsim.model.kernels.arrays.frozen``),
so each variant of a kernel compiles once per controller. Kernels of other controllers (the
test controllers', the event-driven ones) the workers compile as they meet them, and share
through the same cache.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
KERNELS = ("count", "world")


def compile_kernel(kernel: str) -> None:
    """Run both variants of ``kernel`` (threaded and one-thread) once on one cell of each
    of reconsim's controllers (each has a kernel of its own)."""
    from reconsim.model.controllers import BUILT_IN
    from reconsim.model.kernels.count import simulate_arrays
    from reconsim.model.kernels.world import simulate_world_arrays
    from reconsim.model.params import Cell
    from reconsim.model.simulate import cells_frame, kernel_inputs

    for controller in BUILT_IN:
        if not BUILT_IN[controller].compiled or BUILT_IN[controller].syncs_on_events:
            continue  # the reference model runs it, or the event kernel
        if kernel == "count":
            arrays = kernel_inputs(cells_frame([Cell(controller=controller, G=60)]),
                                   count=True)
            for parallel in (True, False):
                simulate_arrays(**arrays, parallel=parallel)  # type: ignore[arg-type]
        else:
            arrays = kernel_inputs(cells_frame([Cell(controller=controller, G=60, U_jitter=2,
                                                     seed=3)]))
            for parallel in (True, False):
                simulate_world_arrays(**arrays, parallel=parallel)  # type: ignore[arg-type]


def start() -> list[subprocess.Popen[bytes]]:
    """One process per kernel, compiling it into the cache (or loading it, when there)."""
    return [subprocess.Popen([sys.executable, "-c", "import sys; from tests.helpers.kernels "
                              "import compile_kernel; compile_kernel(sys.argv[1])", kernel],
                             cwd=ROOT) for kernel in KERNELS]


def wait(procs: list[subprocess.Popen[bytes]]) -> None:
    """Wait for :func:`start`'s processes; a failure here the tests will show, not this."""
    for proc in procs:
        proc.wait()
