"""The replicaset controller on ``sweeps/kubernetes.toml``'s mix, side by side with
``expectations`` on the same world: cells per second of each (``replicaset`` syncs on
events, at millisecond instants, on the event kernel; ``expectations`` decides once a
round, on the world kernel). The sweep's 1,280 cells per controller are repeated to a
batch large enough to measure the kernels rather than their call."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from bench.conftest import QUICK, RATES
from reconsim import load_spec, simulate
from reconsim.sweep.grid import expand

SPEC = Path(__file__).resolve().parent.parent / "sweeps" / "kubernetes.toml"


@pytest.fixture(scope="module")
def mix() -> pl.DataFrame:
    """The sweep's cells (every controller's), one frame, repeated."""
    cells = expand(load_spec(SPEC))
    return pl.concat([cells] * (4 if QUICK else 40))


@pytest.mark.benchmark(group="replicaset: cells per second")
@pytest.mark.parametrize("controller", ["replicaset", "expectations"])
def test_the_kubernetes_mix(benchmark, mix: pl.DataFrame,  # type: ignore[no-untyped-def]
                            controller: str) -> None:
    cells = mix.filter(pl.col("controller") == controller)
    simulate(cells.head(50))  # compile (or load the cache) outside the timing
    out = benchmark.pedantic(simulate, args=(cells,), rounds=1 if QUICK else 3,
                             warmup_rounds=0)
    rate = cells.height / benchmark.stats.stats.median
    benchmark.extra_info.update(cells=cells.height, cells_per_second=round(rate))
    RATES[f"kubernetes mix, {controller} ({cells.height:,} cells)"] = rate
    assert out["created"].min() >= 0
