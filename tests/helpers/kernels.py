"""numba's cache of the kernels, filled before the test processes start.

The kernels are compiled with ``cache=True``: the first process that runs one compiles it
(about 10 s of a core for the count kernel, 30 s for the world kernel, each in a threaded
and a one-thread variant) and writes it to ``__pycache__``; later processes load it. In a
fresh clone, every pytest-xdist worker, and every child process started before the cache is
written, would compile each kernel again. ``tests/conftest.py`` has the xdist controller
run :func:`start` first, one process per kernel side by side; the workers then load them.

numba compiles a kernel anew for each pattern of read-only and writable input arrays it
meets; the kernels hand every input over read-only (``reconsim.model.kernels.arrays.frozen``),
so each variant of a kernel compiles once per controller. Beside the built-ins', the event
kernel (the built-ins that sync on events) and the one-thread count and world kernels of the
examples' controllers that tests of several modules run (:data:`EXAMPLE_CONTROLLERS`) are
compiled here too (:func:`compile_more_kernels`), and the kernels of the test modules' own
controllers (:func:`compile_test_kernels`, :mod:`tests.helpers.controllers`): a test that
met one first would spend tens of seconds compiling it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
KERNELS = ("count", "world")
#: The examples' controllers that tests in several modules run, by import path, and the
#: folder each imports from: the user repository's (its own tests, its benchmark, its
#: sweep, in this tree and from the wheel, whose kernels start from this tree's cache) and
#: examples/controllers/. Each test module that meets one first would compile its kernels
#: (10-30 s each); two workers meeting it at once would both compile them.
EXAMPLE_CONTROLLERS = {
    "acme_controllers:PATIENT": ROOT / "examples" / "user-repo" / "src",
    "deadband:DEADBAND": ROOT / "examples" / "controllers",
    "holdoff:HOLDOFF": ROOT / "examples" / "controllers",
}


def compile_kernel(kernel: str) -> None:
    """Run both variants of ``kernel`` (threaded and one-thread) once on one cell of each
    of reconsim's controllers (each has a kernel of its own)."""
    from reconsim.model.controllers import registry
    from reconsim.model.kernels.count import simulate_arrays
    from reconsim.model.kernels.world import simulate_world_arrays
    from reconsim.model.params import Cell
    from reconsim.model.simulate import cells_frame, kernel_inputs

    for built_in in registry.built_in():
        if not built_in.compiled or built_in.syncs_on_events:
            continue  # the reference model runs it, or the event kernel
        controller = built_in.name
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


def compile_more_kernels(kernel: str) -> None:
    """What the workers would otherwise compile as they meet it, the first one or two at
    once: for ``count`` or ``world``, that kernel's one-thread variant on one cell of each
    of :data:`EXAMPLE_CONTROLLERS` (the variant their tests run: their batches stay below
    the threaded variant's thousands of cells); for ``events``, the event kernel on one cell
    of each built-in that syncs on events, as :func:`~reconsim.simulate` and the checker
    run it (without and with the responses' buffer); for ``deployment``, the Deployment
    world's kernel as :func:`~reconsim.simulate` runs it."""
    from reconsim.model.controllers import registry
    from reconsim.model.differential import compare_cell
    from reconsim.model.kernels.count import simulate_arrays
    from reconsim.model.kernels.world import simulate_world_arrays
    from reconsim.model.params import make_cell
    from reconsim.model.simulate import cell_arrays, cells_frame, simulate

    if kernel == "events":
        for controller in registry.built_in():
            if controller.compiled and controller.syncs_on_events:
                cell = make_cell(controller=controller.name, G=60)
                simulate(cells_frame([cell]))
                compare_cell(cell)
        return
    if kernel == "deployment":  # the Deployment world's kernel, as simulate runs it
        simulate(cells_frame([make_cell(controller="deployment", desired=3, G=5, B=5,
                                        duration=60)]))
        return
    sys.path[:0] = sorted({str(folder) for folder in EXAMPLE_CONTROLLERS.values()})
    run = simulate_arrays if kernel == "count" else simulate_world_arrays
    for ref in EXAMPLE_CONTROLLERS:
        world = {} if kernel == "count" else {"U_jitter": 2, "seed": 3}
        arrays = cell_arrays(make_cell(controller=ref, G=60, **world), count=kernel == "count")
        run(controllers=registry.known(), parallel=False, **arrays)


def compile_test_kernels(group: str) -> None:
    """The kernels of share ``group`` of the test modules' controllers
    (:func:`tests.helpers.controllers.compile_test_kernels`)."""
    from tests.helpers import controllers

    controllers.compile_test_kernels(int(group))


def start() -> list[subprocess.Popen[bytes]]:
    """One process per kernel, compiling it into the cache (or loading it, when there):
    the built-ins' (:func:`compile_kernel`), then the event kernel and the examples'
    (:func:`compile_more_kernels`), and the test modules' controllers'
    (:func:`compile_test_kernels`)."""
    from tests.helpers.controllers import GROUPS

    def process(function: str, kernel: str) -> subprocess.Popen[bytes]:
        return subprocess.Popen([sys.executable, "-c", "import sys; from tests.helpers.kernels "
                                 f"import {function}; {function}(sys.argv[1])", kernel],
                                cwd=ROOT)

    return [*(process("compile_kernel", k) for k in KERNELS),
            *(process("compile_more_kernels", k) for k in (*KERNELS, "events", "deployment")),
            *(process("compile_test_kernels", str(group)) for group in range(GROUPS))]


def wait(procs: list[subprocess.Popen[bytes]]) -> None:
    """Wait for :func:`start`'s processes; a failure here the tests will show, not this."""
    for proc in procs:
        proc.wait()
