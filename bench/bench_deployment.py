"""The Deployment world: cells per second of its kernel on the data set's 400 scenarios
repeated to a batch (51,200 cells; 6,400 in quick mode), and of its reference model on a
sample of them, in one run (the real controllers ran about 28 scenarios a second)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from bench.conftest import QUICK, RATES
from reconsim.conformance.load import DEPLOYMENT, load
from reconsim.model import deployment
from reconsim.model.kernels.arrays import take_rows
from reconsim.model.kernels.deployment import (
    DEPLOYMENT_OUT_COLUMNS,
    scenario_arrays,
    simulate_deployment_arrays,
)

#: The data set repeated this many times: the kernel's batch.
REPEATS = 16 if QUICK else 128
#: Every this many scenarios of the data set, one runs on the reference model.
SAMPLE_EVERY = 20 if QUICK else 5


@pytest.fixture(scope="module")
def scenarios() -> list[deployment.Scenario]:
    return list(load(DEPLOYMENT.data_dir).scenarios)


@pytest.mark.benchmark(group="deployment: cells per second")
def test_deployment_kernel(benchmark, scenarios) -> None:  # type: ignore[no-untyped-def]
    arrays = scenario_arrays(scenarios)
    batch = take_rows(arrays, np.tile(np.arange(len(scenarios)), REPEATS))
    simulate_deployment_arrays(**arrays)  # compile (or load the cache) outside the timing
    cpu: list[float] = []

    def timed() -> np.ndarray:
        start = time.process_time()
        out = simulate_deployment_arrays(**batch)
        cpu.append(time.process_time() - start)
        return out

    out = benchmark.pedantic(timed, rounds=2 if QUICK else 5, warmup_rounds=1)
    n = len(batch["desired"])
    rate = n / benchmark.stats.stats.median
    benchmark.extra_info.update(cells=n, cells_per_second=round(rate),
                                cpu_seconds_min=round(min(cpu), 4),
                                cells_per_cpu_second=round(n / min(cpu)))
    RATES[f"deployment kernel ({n:,} cells)"] = rate
    created = out[DEPLOYMENT_OUT_COLUMNS.index("created")]
    assert np.array_equal(created, np.tile(created[:len(scenarios)], REPEATS))


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
