"""Shared pieces of the benchmarks: batches, summaries, and the quality baseline.

Quality figures (``bench/bench_controllers.py``) are deterministic: against a baseline,
any change fails, and so does a benchmark the baseline does not hold yet. The baseline is
the run that ``--benchmark-compare`` names (a saved pytest-benchmark run), or else
``bench/quality-baseline.json`` (committed, so CI compares every change).
``--quality-save`` rewrites that file after an intended change.

Time per cell (the fastest round's) is compared too but only flagged, never failed: on
the shared 2-core machines these run on, identical runs of the controller benchmarks
gave medians from 4.7 to 12 us per cell (2.5x) and fastest rounds from 4.4 to 7.4 us
(1.7x) in one afternoon, so a slowdown is flagged beyond 2x the baseline's fastest
round — what noise alone did not reach there.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from reconsim.benchmarks.compare import frontier
from reconsim.model.simulate import DEATHS_DTYPE

#: Benchmarks record cells/s here; the terminal summary prints them side by side.
RATES: dict[str, float] = {}
#: Controller benchmarks record their quality figures here, for the comparison table.
QUALITY: dict[str, dict[str, Any]] = {}
#: Time regressions found against the baseline (flagged in the summary, not failed).
SLOWER: list[str] = []
#: Flag a time per cell above this multiple of the baseline's.
TIME_FLAG_RATIO = 2.0
BASELINE = Path(__file__).resolve().parent / "quality-baseline.json"

#: ``RECONSIM_BENCH_QUICK=1`` (CI) shrinks batches so every change is still measured, fast.
QUICK = os.environ.get("RECONSIM_BENCH_QUICK", "") not in ("", "0")


def grid_batch(n_cells: int) -> pl.DataFrame:
    """``n_cells`` cells cycling through the core grid: both controllers,
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


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("reconsim quality baseline")
    group.addoption("--quality-baseline", metavar="PATH", default=None,
                    help=f"compare quality figures with this file (default {BASELINE.name}, "
                    "or the run --benchmark-compare names)")
    group.addoption("--quality-save", action="store_true",
                    help=f"write this run's quality figures to {BASELINE.name}")


def _saved_run(config: pytest.Config) -> dict[str, Any] | None:
    """The saved pytest-benchmark run that ``--benchmark-compare`` names, if any."""
    which = config.getoption("benchmark_compare", None)
    if not which:
        return None
    storage = Path(str(config.getoption("benchmark_storage")).removeprefix("file://"))
    runs = sorted(storage.glob("*/*.json"))
    if which is not True:
        runs = [r for r in runs if r.name.startswith(str(which))]
    return json.loads(runs[-1].read_text()) if runs else None


def _baseline(config: pytest.Config) -> dict[str, dict[str, Any]]:
    """Benchmark name -> {"quality": {...}, "microseconds_per_cell": float}."""
    cached = getattr(config, "_reconsim_baseline", None)
    if cached is None:
        run = _saved_run(config)
        if run is not None:
            cached = {b["name"]: b.get("extra_info", {}) for b in run["benchmarks"]}
        else:
            path = Path(config.getoption("quality_baseline") or BASELINE)
            cached = json.loads(path.read_text()) if path.exists() else {}
        config._reconsim_baseline = cached  # type: ignore[attr-defined]
    return cached  # type: ignore[no-any-return]


def check_quality(config: pytest.Config, name: str, figures: dict[str, int],
                  seconds_per_cell: float) -> None:
    """Fail on any change of a quality figure against the baseline; flag slowdowns."""
    if config.getoption("quality_save"):
        return
    base = _baseline(config).get(name)
    if base is None or "quality" not in base:
        # A new benchmark is compared from its first run on: it fails until it is saved.
        pytest.fail(f"{name}: no quality baseline entry; check its figures, then record "
                    "them with --quality-save", pytrace=False)
    changed = {k: (base["quality"].get(k), v) for k, v in figures.items()
               if base["quality"].get(k) != v}
    if changed:
        pytest.fail(f"{name}: quality figures changed against the baseline "
                    f"(baseline, now): {changed}", pytrace=False)
    before = base.get("microseconds_per_cell")
    if before and seconds_per_cell * 1e6 > TIME_FLAG_RATIO * before:
        SLOWER.append(f"{name}: {seconds_per_cell * 1e6:.3f} us/cell against {before:.3f} "
                      f"(> {TIME_FLAG_RATIO}x)")


def pytest_sessionfinish(session: pytest.Session) -> None:
    if session.config.getoption("quality_save", False) and QUALITY:
        saved = {f"test_variant[{name}]": {
            "quality": {k: v for k, v in q.items() if k != "us_per_cell"},
            "microseconds_per_cell": q["us_per_cell"]} for name, q in QUALITY.items()}
        BASELINE.write_text(json.dumps(saved, indent=2, sort_keys=True) + "\n")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if QUALITY:
        terminalreporter.section("controller variants on the scenario set (quality figures)")
        columns = list(next(iter(QUALITY.values())))
        width = max(len(n) for n in QUALITY)
        terminalreporter.write_line(f"{'variant':<{width}}" + "".join(
            f"{c:>{max(len(c), 8) + 2}}" for c in columns))
        for name, q in QUALITY.items():
            terminalreporter.write_line(f"{name:<{width}}" + "".join(
                f"{q[c]:>{max(len(c), 8) + 2}}" for c in columns))
        terminalreporter.write_line("(worst_stable_at -1: no cell ever settled; never_stable: "
                                    "cells still unsettled at the end)")
        beaten = [t for t in frontier(QUALITY) if not t.on_frontier]
        terminalreporter.write_line(
            "quality against cost (excess copy-s, wasted deletes / missing copy-s, reads): "
            + "; ".join(f"{t.name} beaten by {', '.join(t.beaten_by)}" for t in beaten)
            if beaten else "quality against cost: every variant is on the frontier")
    for line in SLOWER:
        terminalreporter.write_line(f"SLOWER THAN BASELINE: {line}", yellow=True, bold=True)
    if not RATES:
        return
    terminalreporter.section("cells per second (median round)")
    fastest = max(RATES.values())
    for name, rate in sorted(RATES.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line(f"{name:<40} {rate:>14,.0f} cells/s   "
                                    f"{fastest / rate:>10,.1f}x slower than the fastest")


def world_batch(n_cells: int) -> pl.DataFrame:
    """``n_cells`` cells of :func:`grid_batch`'s grid (all three controllers), each with a
    mix of the world parameters: every one takes a non-default value in some cells, in
    combinations that cycle with coprime periods (so every pair of values meets)."""
    base = grid_batch(n_cells)
    i = pl.int_range(0, n_cells, dtype=pl.Int64, eager=True)

    def cycle(period: int, values: list[object], dtype: pl.DataType) -> pl.Series:
        return pl.Series(values, dtype=dtype).gather((i % period) % len(values))

    windows = pl.List(pl.Struct({"from": pl.Int64, "to": pl.Int64, "extra": pl.Int64}))
    faults = pl.List(pl.Struct({"at": pl.Int64, "count": pl.Int64, "kind": pl.String}))
    return base.with_columns(
        controller=cycle(3, ["ledger", "intent", "expectations"], pl.String()),
        B_spread=cycle(2, [0, 5], pl.Int64()),
        G_spread=cycle(3, [0, 27, 10], pl.Int64()),
        U_jitter=cycle(5, [0, 3, 0, 1, 0], pl.Int64()),
        seed=i,
        delete_order=cycle(7, ["oldest", "newest"], pl.String()),
        grace=cycle(11, [0, 30, 0, 5], pl.Int64()),
        lag=cycle(13, [[], [{"from": 100, "to": 200, "extra": 30}], []], windows),
        create_faults=cycle(17, [[], [{"at": 0, "count": 3, "kind": "lost"}],
                                 [{"at": 300, "count": 2, "kind": "fail"}]], faults),
        fail_rate=cycle(19, [0.0, 0.05, 0.0], pl.Float64()),
        lost_rate=cycle(23, [0.0, 0.0, 0.02], pl.Float64()),
        trigger=cycle(29, ["periodic", "watch"], pl.String()),
        slow_start=cycle(31, [False, True], pl.Boolean()),
    )
