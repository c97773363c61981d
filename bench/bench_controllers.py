"""Controller variants compared on one fixed scenario set, in one run.

Each benchmark times ``simulate`` on the scenario set under one variant and records the
variant's quality figures in ``benchmark.extra_info["quality"]``. The figures are
deterministic, so any change against a baseline fails the run (see ``bench/conftest.py``);
time per cell is compared too, and a slowdown beyond the noise threshold is flagged.
"""

from __future__ import annotations

import itertools
from typing import Any

import polars as pl
import pytest

from bench.conftest import QUALITY, QUICK, check_quality
from reconsim.model.metrics import tradeoff_figure
from reconsim.model.params import Cell
from reconsim.model.simulate import cells_frame, simulate
from reconsim.model.studies import seed001

#: Death schedules of the scenario set.
SCHEDULES = {
    "seed": ((300, 2),),
    "none": (),
    "burst": ((200, 3), (600, 3)),
    "periodic": tuple((at, 1) for at in range(120, 901, 120)),
}
DESIRED = (3, 6, 12)
#: Restarts every two minutes, off the rounds' seconds.
RESTARTS = tuple(range(95, 900, 120))

#: Variant name -> the parameters it changes from seed 001's ledger controller.
VARIANTS: dict[str, dict[str, Any]] = {
    "ledger": {"controller": "ledger"},
    "intent": {"controller": "intent"},
    "expectations": {"controller": "expectations"},
    "expectations-ttl30": {"controller": "expectations", "ttl": 30},
    "ledger-created": {"controller": "ledger", "observe": "created"},
    "intent-created": {"controller": "intent", "observe": "created"},
    "ledger-cap2": {"controller": "ledger", "max_per_round": 2},
    "ledger-gain0.5": {"controller": "ledger", "gain": 0.5},
    "intent-restarts": {"controller": "intent", "restart_at": RESTARTS},
    "expectations-restarts": {"controller": "expectations", "restart_at": RESTARTS},
}


def scenarios(variant: dict[str, Any]) -> pl.DataFrame:
    """Seed 001's 56 (G, U) cells x the schedules x the desired counts, under a variant."""
    return cells_frame([
        Cell(G=G, U=U, B=5, duration=900, desired=d, deaths=deaths, **variant)
        for G, U, d, deaths in itertools.product(
            seed001.TABLE_G, seed001.TABLE_U, DESIRED, SCHEDULES.values())
    ])


def quality(out: pl.DataFrame) -> dict[str, int]:
    """The figures a variant is judged by, over the whole scenario set: its quality (excess
    copy-seconds, wasted deletes, ...) and its cost (missing copy-seconds, ledger reads)."""
    row = out.select(
        cells=pl.len(),
        unneeded=pl.col("unneeded").sum(),
        max_overshoot=pl.col("overshoot").max(),
        wasted_delete_commands=tradeoff_figure("wasted_delete_commands").sum(),
        excess_copy_seconds=pl.col("excess_copy_seconds").sum(),
        missing_copy_seconds=pl.col("missing_copy_seconds").sum(),
        reads=pl.col("reads").sum(),
        worst_stable_at=pl.col("stable_at").max(),
        never_stable=pl.col("stable_at").null_count(),
    ).row(0, named=True)
    return {k: int(v) if v is not None else -1 for k, v in row.items()}


@pytest.mark.benchmark(group="controllers: seconds per scenario set")
@pytest.mark.parametrize("name", list(VARIANTS))
def test_variant(benchmark, name: str, request: pytest.FixtureRequest) -> None:  # type: ignore[no-untyped-def]
    cells = scenarios(VARIANTS[name])
    simulate(cells.head(1))
    out = benchmark.pedantic(simulate, args=(cells,), rounds=10 if QUICK else 30,
                             warmup_rounds=2)
    figures = quality(out)
    # The fastest round: the least disturbed by whatever else the machine is doing.
    seconds_per_cell = benchmark.stats.stats.min / cells.height
    benchmark.extra_info.update(quality=figures, microseconds_per_cell=seconds_per_cell * 1e6)
    QUALITY[name] = {**figures, "us_per_cell": round(seconds_per_cell * 1e6, 3)}
    check_quality(request.config, benchmark.name, figures, seconds_per_cell)
