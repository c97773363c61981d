"""The patient controller on a grid of cells, beside reconsim's ``intent``: how fast the
kernels run it, and the figures it is judged by.

Each benchmark records its figures in ``extra_info["quality"]``, the place where
``reconsim bench-compare`` reads them: the pull-request workflow compares them between the
base and the head exactly, and the time per cell as a ratio.
"""

import itertools

import polars as pl
import pytest

from reconsim import simulate

#: Variant -> the controller's own columns.
VARIANTS = {
    "intent": {"controller": "intent"},
    "patient-0": {"controller": "patient", "patience": 0},
    "patient-3": {"controller": "patient", "patience": 3},
    "patient-10": {"controller": "patient", "patience": 10},
}
#: Restarts make it forget creations in flight: the surplus its patience is about.
RESTARTS = {"none": [], "early": [10], "every 2 min": list(range(95, 900, 120))}


def grid(variant):
    """7 G x 5 U x 3 B x 3 desired x 3 restart schedules x 2 death schedules, 900 s."""
    rows = [{"G": G, "U": U, "B": B, "desired": d, "restart_at": r, "deaths": deaths}
            for G, U, B, d, r, deaths in itertools.product(
                (0, 10, 20, 30, 45, 60, 90), (5, 10, 15, 30, 60), (1, 5, 10), (3, 6, 12),
                RESTARTS.values(), ([], [{"at": 300, "count": 2}]))]
    return pl.DataFrame(rows).with_columns(duration=pl.lit(900), **{
        name: pl.lit(value) for name, value in variant.items()})


def figures(out):
    """Quality (excess copy-seconds, wasted deletes) and cost (missing copy-seconds, reads),
    summed over the grid; integers, so that any change shows."""
    row = out.select(
        cells=pl.len(),
        unneeded=pl.col("unneeded").sum(),
        max_overshoot=pl.col("overshoot").max(),
        wasted_delete_commands=(pl.col("delete_commands") - pl.col("deleted")).sum(),
        excess_copy_seconds=pl.col("excess_copy_seconds").sum(),
        missing_copy_seconds=pl.col("missing_copy_seconds").sum(),
        reads=pl.col("reads").sum(),
    ).row(0, named=True)
    return {name: int(value) for name, value in row.items()}


@pytest.mark.benchmark(group="patient controller: seconds per grid")
@pytest.mark.parametrize("name", list(VARIANTS))
def test_variant(benchmark, name):
    cells = grid(VARIANTS[name])
    simulate(cells.head(1))  # compile the kernel (or load numba's cache) outside the timing
    out = benchmark.pedantic(simulate, args=(cells,), rounds=10, warmup_rounds=1)
    benchmark.extra_info["quality"] = figures(out)
    assert out.height == cells.height
