"""A user's controller against a built-in of the same shape, side by side in one run: the
deadband controller with ``band = 0`` decides exactly as ``ledger`` does, so on the same
cells it must give the same metrics, and its kernel (compiled from the user's module)
should run as fast as the built-in's. Each records its quality figures
(``extra_info["quality"]``, as the controller benchmarks do), so ``reconsim bench-compare``
compares the user's controller and the built-in alike. Also its cold compile and its cached
start, each in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import polars as pl
import pytest

from bench.bench_controllers import quality
from bench.conftest import QUICK, RATES, world_batch
from reconsim import simulate
from reconsim.model.controllers import registry

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "controllers"
METRICS = ("rounds", "created", "delete_commands", "deleted", "overshoot", "reads",
           "excess_copy_seconds", "missing_copy_seconds", "create_commands")


@pytest.fixture(scope="module")
def ledger_mix() -> pl.DataFrame:
    """The world mix's ledger cells, and the same cells on deadband (band 0)."""
    sys.path.insert(0, str(EXAMPLES))
    registry.resolve("deadband:DEADBAND")
    mix = world_batch(30_000 if QUICK else 300_000)
    return mix.filter(pl.col("controller") == "ledger")


@pytest.mark.benchmark(group="user controller: cells per second")
@pytest.mark.parametrize("controller", ["ledger", "deadband"])
def test_same_shape_as_a_built_in(benchmark, ledger_mix: pl.DataFrame,  # type: ignore[no-untyped-def]
                                  controller: str) -> None:
    cells = ledger_mix if controller == "ledger" else ledger_mix.with_columns(
        controller=pl.lit("deadband"), band=pl.lit(0, dtype=pl.Int64))
    simulate(cells.head(500))  # compile (or load the cache) outside the timing
    out = benchmark.pedantic(simulate, args=(cells,), rounds=3 if QUICK else 7,
                             warmup_rounds=1)
    rate = cells.height / benchmark.stats.stats.median
    benchmark.extra_info.update(cells=cells.height, cells_per_second=round(rate),
                                quality=quality(out))
    RATES[f"world mix, {controller} ({cells.height:,} ledger cells)"] = rate
    baseline = simulate(ledger_mix)
    assert out.select(METRICS).equals(baseline.select(METRICS))


_START = textwrap.dedent("""
    import sys, time
    start = time.perf_counter()
    sys.path.insert(0, {examples!r})
    from reconsim import run_cell
    run_cell(controller="deadband:DEADBAND", band=1, G=20)
    run_cell(controller="deadband:DEADBAND", band=1, G=20, B_spread=3)
    print(time.perf_counter() - start)
""")


@pytest.mark.benchmark(group="user controller: start")
def test_cold_compile_and_cached_start(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Seconds from a fresh interpreter's start to a user's controller's first cells on
    both kernels: with an empty numba cache (cold), then with the cache that run left."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    code = _START.format(examples=str(EXAMPLES))

    def run() -> float:
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                              text=True, check=True)
        return float(done.stdout.strip().splitlines()[-1])

    cold = run()
    started = time.perf_counter()
    cached = benchmark.pedantic(run, rounds=1 if QUICK else 3, iterations=1)
    benchmark.extra_info.update(cold_seconds=round(cold, 2), cached_seconds=round(cached, 2),
                                wall_seconds=round(time.perf_counter() - started, 2))
    print(f"\nuser controller: cold compile {cold:.2f} s, cached start {cached:.2f} s")
    assert cached < cold


@pytest.mark.benchmark(group="user controller: reference model alone")
@pytest.mark.parametrize("engine", ["kernel", "reference"])
def test_reference_model_alone(benchmark, ledger_mix: pl.DataFrame,  # type: ignore[no-untyped-def]
                               engine: str) -> None:
    """A controller declared ``compiled=False`` (code numba cannot compile) runs on the
    reference model alone: the ledger's own decision so declared, against the ledger on the
    kernels, on the same cells of the world mix."""
    from reconsim.controllers import Controller

    ledger = registry.get("ledger")
    registry.register(Controller("ledger_in_python", ledger.decide, ledger.help,
                                 compiled=False))
    cells = ledger_mix.head(40 if QUICK else 400)
    if engine == "reference":
        cells = cells.with_columns(controller=pl.lit("ledger_in_python"))
    simulate(cells.head(5))
    out = benchmark.pedantic(simulate, args=(cells,), rounds=1 if QUICK else 3,
                             warmup_rounds=0)
    rate = cells.height / benchmark.stats.stats.median
    benchmark.extra_info.update(cells=cells.height, cells_per_second=round(rate, 1))
    RATES[f"world mix, ledger on the {engine} ({cells.height:,} cells)"] = rate
    assert out.select(METRICS).equals(simulate(ledger_mix.head(cells.height)).select(METRICS))


@pytest.mark.benchmark(group="user controller: the sweep's check")
def test_the_sweeps_check(benchmark) -> None:  # type: ignore[no-untyped-def]
    """What ``reconsim sweep`` adds before a sweep that names users' controllers: the
    shipped ``sweeps/controllers.toml`` (deadband and hold-off, 900-second cells), each
    controller's :data:`~reconsim.sweep.runner.CHECK_CELLS` cells of its own grid on the
    reference model and on the kernels (compiled, or loaded from numba's cache, first)."""
    from reconsim import load_spec
    from reconsim.sweep.runner import CHECK_CELLS, check_controllers

    spec = load_spec(Path(__file__).resolve().parent.parent / "sweeps" / "controllers.toml")
    check_controllers(spec, cells=1)  # the kernels compiled or loaded outside the timing
    checked = benchmark.pedantic(check_controllers, args=(spec,), rounds=1 if QUICK else 3,
                                 warmup_rounds=0)
    assert checked == 2 * CHECK_CELLS
    benchmark.extra_info.update(cells=checked, seconds=round(benchmark.stats.stats.median, 3))
    RATES[f"the sweep's check ({checked} cells, reference model and kernels)"] = (
        checked / benchmark.stats.stats.median)
