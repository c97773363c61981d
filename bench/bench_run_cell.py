"""One cell at a time: ``run_cell``'s cost a call, against the one-row frame it replaced.

A notebook's loop, ``trace``'s check, ``--plot`` and random-cell checks run cells one by
one. ``run_cell`` builds the kernel's arrays straight from the checked ``Cell``; the path
it replaced went through a one-row polars frame (``simulate(cells_frame([cell]))``), which
is measured here too, in the same run, on the same cells. Goals: 100 us a call for a cell
of seed 001's world (the count kernel), 200 us for a world cell (the world kernel) and an
event-driven one (the event kernel). The figure is the fastest round's mean (each round a
loop of calls, so the timer's own cost is spread); the medians are in the JSON. Each
benchmark asserts that the one-row frame gives the same metrics and that ``run_cell`` is
the faster path.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from bench.conftest import QUICK, RATES
from reconsim import run_cell
from reconsim.model.params import make_cell
from reconsim.model.simulate import cells_frame, simulate

#: The cells: one a kernel, each a typical cell of its world.
CELLS: dict[str, dict[str, Any]] = {
    "seed world (count kernel)": {"controller": "ledger", "G": 20},
    "world (world kernel)": {"controller": "ledger", "G": 20, "G_spread": 3,
                             "trigger": "watch"},
    "event-driven (event kernel)": {"controller": "replicaset", "G": 1, "B": 5},
}
#: The goal a call, in microseconds.
GOAL_US: dict[str, float] = {"seed world (count kernel)": 100.0,
                             "world (world kernel)": 200.0,
                             "event-driven (event kernel)": 200.0}
CALLS = 200 if QUICK else 2_000
ROUNDS = 3 if QUICK else 10


def _per_call(run: Any, calls: int) -> float:
    """Seconds a call of ``run``, the fastest of ROUNDS loops of ``calls``."""
    best = float("inf")
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(calls):
            run()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


@pytest.mark.parametrize("name", list(CELLS))
@pytest.mark.benchmark(group="run_cell: one call")
def test_run_cell_per_call(benchmark: Any, name: str) -> None:
    fields = CELLS[name]
    frame = cells_frame([make_cell(**fields)])
    want = run_cell(**fields)  # compiled, or loaded from numba's cache, before timing
    row = simulate(frame).row(0, named=True)
    assert {metric: row[metric] for metric in want} == want

    def loop() -> None:
        for _ in range(CALLS):
            run_cell(**fields)

    benchmark.pedantic(loop, rounds=ROUNDS, iterations=1)
    us = benchmark.stats.stats.min / CALLS * 1e6
    frame_us = _per_call(lambda: simulate(cells_frame([make_cell(**fields)])),
                         max(10, CALLS // 100)) * 1e6
    benchmark.extra_info.update(us_per_call=round(us, 1), goal_us=GOAL_US[name],
                                one_row_frame_us=round(frame_us, 1))
    RATES[f"run_cell, {name}"] = 1e6 / us
    RATES[f"one-row frame, {name}"] = 1e6 / frame_us
    print(f"\nrun_cell, {name}: {us:.0f} us a call (goal {GOAL_US[name]:.0f} us); "
          f"one-row frame {frame_us:.0f} us")
    assert us < frame_us
