"""Shared pieces of the benchmarks: the issue's 300,000-cell batch and a rate summary."""

from __future__ import annotations

import itertools
import os

import polars as pl
import pytest

from reconsim.simulate import DEATHS_DTYPE

#: Benchmarks record cells/s here; the terminal summary prints them side by side.
RATES: dict[str, float] = {}

#: ``RECONSIM_BENCH_QUICK=1`` (CI) shrinks batches so every change is still measured, fast.
QUICK = os.environ.get("RECONSIM_BENCH_QUICK", "") not in ("", "0")


def grid_batch(n_cells: int) -> pl.DataFrame:
    """``n_cells`` cells cycling through the core issue's grid: both controllers,
    G in {0..90}, U in {5..90}, B in {1, 5, 10}, desired in {3, 6, 12}, deaths (300, 2), 900 s."""
    combos = list(itertools.product(
        ["ledger", "intent"], [0, 10, 20, 30, 45, 60, 90], [5, 10, 15, 20, 30, 45, 60, 90],
        [1, 5, 10], [3, 6, 12],
    ))
    base = pl.DataFrame(combos, schema=["controller", "G", "U", "B", "desired"], orient="row")
    reps = -(-n_cells // base.height)
    return pl.concat([base] * reps).head(n_cells).with_columns(
        duration=pl.lit(900, pl.Int64),
        deaths=pl.lit([{"at": 300, "count": 2}], dtype=DEATHS_DTYPE),
    )


@pytest.fixture(scope="session")
def batch_300k() -> pl.DataFrame:
    return grid_batch(30_000 if QUICK else 300_000)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not RATES:
        return
    terminalreporter.section("cells per second (median round)")
    fastest = max(RATES.values())
    for name, rate in sorted(RATES.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line(f"{name:<40} {rate:>14,.0f} cells/s   "
                                    f"{fastest / rate:>10,.1f}x slower than the fastest")
