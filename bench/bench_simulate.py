"""Cells per second of ``reconsim.model.simulate`` (polars in and out included) and of the
reference model, in one run; and the kernel's peak memory per cell.

Seed 001's world (every world parameter at its default) runs on the count kernel
whether or not the frame carries the new columns; the same cells forced onto the world
kernel show what the general kernel would cost there. The world mix (``world_batch``:
every new parameter, in cycling combinations) runs on the world kernel and is set
against the reference model on a sample of the same mix.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

from bench.conftest import QUICK, RATES, grid_batch, world_batch
from reconsim import Cell, run_reference, simulate
from reconsim.model.kernels.world import simulate_world_arrays
from reconsim.model.params import BY_NAME, DEFAULTS, PARAM_DTYPES, WORLD_PARAMS
from reconsim.model.simulate import kernel_inputs


def _record(benchmark, name: str, cells: int,  # type: ignore[no-untyped-def]
            cpu: list[float] | None = None) -> None:
    rate = cells / benchmark.stats.stats.median
    benchmark.extra_info.update(cells=cells, cells_per_second=round(rate))
    if cpu:  # CPU time of this process (all its threads): what other jobs do not inflate
        benchmark.extra_info.update(cpu_seconds_min=round(min(cpu), 4),
                                    cells_per_cpu_second=round(cells / min(cpu)))
    RATES[name] = rate


def _cpu_timed(fn: Callable[..., Any], cpu: list[float]) -> Callable[..., Any]:
    """``fn``, appending the process CPU seconds of each call to ``cpu``."""
    def timed(*args: Any) -> Any:
        start = time.process_time()
        out = fn(*args)
        cpu.append(time.process_time() - start)
        return out
    return timed


@pytest.mark.benchmark(group="simulate: cells per second")
def test_simulate_kernel(benchmark, batch_300k) -> None:  # type: ignore[no-untyped-def]
    simulate(batch_300k.head(100))  # compile (or load the cache) outside the timing
    cpu: list[float] = []
    out = benchmark.pedantic(_cpu_timed(simulate, cpu), args=(batch_300k,),
                             rounds=3 if QUICK else 7, warmup_rounds=1)
    assert out.height == batch_300k.height
    _record(benchmark, f"simulate ({batch_300k.height:,} cells)", batch_300k.height, cpu)


@pytest.mark.benchmark(group="simulate: cells per second")
def test_reference_model(benchmark) -> None:  # type: ignore[no-untyped-def]
    # The same grid, a sample small enough for the per-copy, per-second model.
    rows = grid_batch(1008).gather_every(10 if QUICK else 3)
    cells = [Cell(**{**r, "deaths": tuple((d["at"], d["count"]) for d in r["deaths"])})
             for r in rows.iter_rows(named=True)]
    cpu: list[float] = []
    benchmark.pedantic(_cpu_timed(lambda: [run_reference(c) for c in cells], cpu), rounds=1,
                       iterations=1)
    _record(benchmark, f"reference model ({len(cells):,} cells)", len(cells), cpu)


def _cells(rows: pl.DataFrame) -> list[Cell]:
    def value(name: str, v: object) -> object:
        if isinstance(v, list):
            return tuple(tuple(d.values()) if isinstance(d, dict) else d for d in v)
        return v
    return [Cell(**{k: value(k, v) for k, v in r.items()}) for r in rows.iter_rows(named=True)]


@pytest.mark.benchmark(group="simulate: cells per second")
def test_simulate_seed_world_with_new_columns(benchmark, batch_300k) -> None:  # type: ignore[no-untyped-def]
    # As a sweep's table carries them: every world column present, all at defaults.
    cells = batch_300k.with_columns(
        pl.Series(name, [BY_NAME[name].kind.to_column(DEFAULTS[name])], dtype=PARAM_DTYPES[name])
        .new_from_index(0, batch_300k.height) for name in WORLD_PARAMS)
    simulate(cells.head(100))
    cpu: list[float] = []
    benchmark.pedantic(_cpu_timed(simulate, cpu), args=(cells,), rounds=3 if QUICK else 7,
                       warmup_rounds=1)
    _record(benchmark, "simulate, seed world + default new columns", cells.height, cpu)


@pytest.mark.benchmark(group="simulate: cells per second")
def test_world_kernel_forced_on_seed_world(benchmark, batch_300k) -> None:  # type: ignore[no-untyped-def]
    inputs = kernel_inputs(batch_300k)
    simulate_world_arrays(**inputs)
    benchmark.pedantic(lambda: simulate_world_arrays(**inputs), rounds=3 if QUICK else 5,
                       warmup_rounds=1)
    _record(benchmark, "world kernel alone, seed world", batch_300k.height)


@pytest.fixture(scope="module")
def world_300k() -> pl.DataFrame:
    return world_batch(30_000 if QUICK else 300_000)


@pytest.mark.benchmark(group="simulate: cells per second")
def test_simulate_world_mix(benchmark, world_300k) -> None:  # type: ignore[no-untyped-def]
    simulate(world_300k.head(2000))
    cpu: list[float] = []
    out = benchmark.pedantic(_cpu_timed(simulate, cpu), args=(world_300k,),
                             rounds=3 if QUICK else 5, warmup_rounds=1)
    assert out.height == world_300k.height
    _record(benchmark, f"simulate, world mix ({world_300k.height:,} cells)", world_300k.height,
            cpu)


@pytest.mark.benchmark(group="simulate: cells per second")
def test_reference_world_mix(benchmark, world_300k) -> None:  # type: ignore[no-untyped-def]
    cells = _cells(world_300k.head(3000).gather_every(30 if QUICK else 10))
    cpu: list[float] = []
    benchmark.pedantic(_cpu_timed(lambda: [run_reference(c) for c in cells], cpu), rounds=1,
                       iterations=1)
    _record(benchmark, f"reference model, world mix ({len(cells):,} cells)", len(cells), cpu)


_MEMORY_PROBE = textwrap.dedent("""
    import json, sys
    from bench.conftest import grid_batch
    from reconsim import simulate
    simulate(grid_batch(100))
    cells = grid_batch(int(sys.argv[1]))
    def status_kib(field):
        # VmHWM, unlike ru_maxrss, starts afresh at exec: the parent's peak does not leak in.
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith(field + ":"))
    before = status_kib("VmRSS")
    out = simulate(cells)
    peak = status_kib("VmHWM")
    print(json.dumps({"cells": out.height, "before_kib": before, "peak_kib": peak}))
""")


@pytest.mark.benchmark(group="simulate: peak memory")
@pytest.mark.parametrize("n_cells", [100_000, 1_000_000] if QUICK else
                         [100_000, 300_000, 1_000_000, 3_000_000])
def test_simulate_peak_memory(benchmark, n_cells: int) -> None:  # type: ignore[no-untyped-def]
    """Peak RSS above the input frame, in a fresh process: it must grow as O(cells)."""
    def probe() -> dict[str, int]:
        proc = subprocess.run([sys.executable, "-c", _MEMORY_PROBE, str(n_cells)],
                              capture_output=True, text=True, check=True)
        return json.loads(proc.stdout)  # type: ignore[no-any-return]

    got = benchmark.pedantic(probe, rounds=1, iterations=1)
    extra = got["peak_kib"] - got["before_kib"]
    benchmark.extra_info.update(cells=n_cells, peak_rss_mib=round(got["peak_kib"] / 1024, 1),
                                extra_rss_mib=round(extra / 1024, 1),
                                extra_bytes_per_cell=round(extra * 1024 / n_cells))
    print(f"\n{n_cells:>10,} cells: peak RSS {got['peak_kib'] / 1024:,.0f} MiB, "
          f"{extra * 1024 / n_cells:,.0f} bytes/cell above the input frame")
