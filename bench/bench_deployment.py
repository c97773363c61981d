"""The Deployment world: cells per second on the data set's 400 scenarios repeated to a
batch (51,200 cells; 6,400 in quick mode) of the path ``simulate`` routes the world's
rows to — the kernel counting every metric (the rolling update's, the figures every world
has and the responses), no trace — and of that path from a frame to the table; beside the
reference model on a sample of them, in one run (the real controllers ran about 28
scenarios a second)."""

from __future__ import annotations

import time

import numpy as np
import polars as pl
import pytest

from bench.conftest import QUICK, RATES
from reconsim.conformance.load import DEPLOYMENT, load
from reconsim.model import deployment, rolling
from reconsim.model.kernels.arrays import response_buffers, take_rows
from reconsim.model.kernels.deployment import (
    DEPLOYMENT_OUT_COLUMNS,
    SHARED_OUT_COLUMNS,
    scenario_arrays,
    simulate_deployment_arrays,
)
from reconsim.model.simulate import _with_metrics, cells_frame

#: The data set repeated this many times: the kernel's batch.
REPEATS = 16 if QUICK else 128
#: Every this many scenarios of the data set, one runs on the reference model.
SAMPLE_EVERY = 20 if QUICK else 5


@pytest.fixture(scope="module")
def scenarios() -> list[deployment.Scenario]:
    return list(load(DEPLOYMENT.data_dir).scenarios)


def _record(benchmark, name: str, n: int, cpu: list[float]) -> float:  # type: ignore[no-untyped-def]
    rate = float(n / benchmark.stats.stats.median)
    benchmark.extra_info.update(cells=n, cells_per_second=round(rate),
                                cpu_seconds_min=round(min(cpu), 4),
                                cells_per_cpu_second=round(n / min(cpu)))
    RATES[f"{name} ({n:,} cells)"] = rate
    return rate


@pytest.mark.benchmark(group="deployment: cells per second")
def test_deployment_kernel(benchmark, scenarios) -> None:  # type: ignore[no-untyped-def]
    """The kernel as ``simulate``'s path calls it: every metric, the responses, no trace."""
    arrays = scenario_arrays(scenarios)
    batch = take_rows(arrays, np.tile(np.arange(len(scenarios)), REPEATS))
    n = len(batch["desired"])
    simulate_deployment_arrays(**arrays)  # compile (or load the cache) outside the timing
    cpu: list[float] = []

    def timed() -> tuple[np.ndarray, np.ndarray]:
        base, responses = response_buffers(batch)
        shared = np.empty((len(SHARED_OUT_COLUMNS), n), np.int64)
        start = time.process_time()
        out = simulate_deployment_arrays(**batch, shared=shared, responses=responses,
                                         response_base=base)
        cpu.append(time.process_time() - start)
        return out, shared

    out, shared = benchmark.pedantic(timed, rounds=2 if QUICK else 5, warmup_rounds=1)
    _record(benchmark, "deployment kernel", n, cpu)
    for matrix, row in ((out, DEPLOYMENT_OUT_COLUMNS.index("created")),
                        (shared, SHARED_OUT_COLUMNS.index("missing_copy_seconds"))):
        assert np.array_equal(matrix[row], np.tile(matrix[row, :len(scenarios)], REPEATS))


@pytest.mark.benchmark(group="deployment: cells per second")
def test_deployment_frame_to_table(benchmark, scenarios) -> None:  # type: ignore[no-untyped-def]
    """A frame of the world's cells to its table: the kernel's arrays encoded from the
    frame, the kernel, the metrics' columns and the responses."""
    frame = pl.concat([cells_frame([rolling.cell_of(s) for s in scenarios])] * REPEATS)
    _with_metrics(frame[:8], *rolling.kernel_counts(frame[:8]))  # compile or load
    cpu: list[float] = []

    def timed() -> pl.DataFrame:
        start = time.process_time()
        table = _with_metrics(frame, *rolling.kernel_counts(frame))
        cpu.append(time.process_time() - start)
        return table

    table = benchmark.pedantic(timed, rounds=2 if QUICK else 5, warmup_rounds=1)
    _record(benchmark, "deployment frame to table", frame.height, cpu)
    assert table.height == frame.height
    assert table["rollout_done_at"].null_count() == REPEATS * table[
        :len(scenarios)]["rollout_done_at"].null_count()


@pytest.mark.benchmark(group="deployment: cells per second")
def test_deployment_reference(benchmark, scenarios) -> None:  # type: ignore[no-untyped-def]
    sample = scenarios[::SAMPLE_EVERY]

    def play() -> None:
        for s in sample:
            deployment.metrics(s, deployment.run(s))

    benchmark.pedantic(play, rounds=1, warmup_rounds=0)
    rate = len(sample) / benchmark.stats.stats.median
    benchmark.extra_info.update(cells=len(sample), cells_per_second=round(rate, 1))
    RATES[f"deployment reference model ({len(sample)} cells)"] = rate
