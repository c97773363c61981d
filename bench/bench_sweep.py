"""A sweep end to end — spec to Parquet on disk, 2 jobs — at 10^5, 10^6 and 10^7 cells,
beside ``simulate`` alone on the same cells: the harness's overhead, time and peak memory.
Then, in one run, the backends side by side on one large sweep (the fastest of three
interleaved rounds each): the default (loky, each worker writing its own chunks), loky
with the parent writing, ``--backend sequential``, and expand + ``simulate`` alone in
this process, chunk by chunk (no laws, no files). Each round prints its load average and
every mode's cells/s and CPU seconds (the process tree's): on a machine other jobs load,
wall time follows the CPU share a mode gets, and CPU seconds say what it costs."""

from __future__ import annotations

import os
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from bench.conftest import QUICK, RATES
from reconsim.model.simulate import simulate
from reconsim.sweep.grid import expand
from reconsim.sweep.spec import Spec, load_spec

MILLION = Path(__file__).resolve().parent.parent / "sweeps" / "million.toml"
#: desired = 1..k on sweeps/million.toml's grid: 159,600 cells per desired value.
SIZES = {"1e5": 1, "1e6": 7} if QUICK else {"1e5": 1, "1e6": 7, "1e7": 63}


def _spec_with_desired(tmp_path: Path, k: int) -> Path:
    text = MILLION.read_text()
    if k != 7:
        text = text.replace("desired = [1, 2, 3, 4, 6, 8, 12]",
                            f"desired = {{ from = 1, to = {k} }}")
        text = text.replace('name = "million"', f'name = "million-d{k}"')
    path = tmp_path / f"spec-{k}.toml"
    path.write_text(text)
    return path


def _tree_rss_kib(root: int) -> int:
    """Sum of VmRSS over ``root`` and its descendants (an upper bound: shared pages count
    once per process)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            pass
    return total


def _cpu_seconds(who: int) -> float:
    """User + system CPU seconds of this process (RUSAGE_SELF) or of its waited-for
    descendants (RUSAGE_CHILDREN)."""
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _run_sampled(args: list[str], **popen: Any) -> tuple[float, int,
                                                        subprocess.CompletedProcess[str]]:
    """Run ``args`` (text output captured); return its wall seconds, the peak RSS of its
    process tree in KiB (sampled every 20 ms) and how it ended."""
    peak = 0
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **popen)

    def sample() -> None:
        nonlocal peak
        while proc.poll() is None:
            peak = max(peak, _tree_rss_kib(proc.pid))
            time.sleep(0.02)

    sampler = threading.Thread(target=sample)
    sampler.start()
    out, err = proc.communicate()
    seconds = time.perf_counter() - start
    sampler.join()
    return seconds, peak, subprocess.CompletedProcess(args, proc.returncode, out, err)


def _run_sweep(spec: Path, out: Path, *flags: str) -> tuple[float, int, float]:
    """Run ``reconsim sweep`` (default: 2 jobs); return wall seconds, peak tree RSS (KiB)
    and the CPU seconds of the process tree."""
    cpu = _cpu_seconds(resource.RUSAGE_CHILDREN)
    seconds, peak, done = _run_sampled([sys.executable, "-m", "reconsim", "sweep", str(spec),
                                       "--out", str(out), *(flags or ("--jobs", "2")),
                                       "--no-progress"])
    assert done.returncode == 0, done.stderr
    return seconds, peak, _cpu_seconds(resource.RUSAGE_CHILDREN) - cpu


@pytest.mark.benchmark(group="sweep: end to end, 2 jobs")
@pytest.mark.parametrize("size", list(SIZES))
def test_sweep_end_to_end(benchmark, tmp_path: Path, size: str) -> None:  # type: ignore[no-untyped-def]
    spec_path = _spec_with_desired(tmp_path, SIZES[size])
    spec = load_spec(spec_path)
    cells = expand(spec)
    simulate(cells.head(10))
    t = time.perf_counter()
    simulate(cells)
    simulate_rate = spec.n_cells / (time.perf_counter() - t)
    del cells

    seconds, peak_kib, _ = benchmark.pedantic(_run_sweep, args=(spec_path, tmp_path / "out"),
                                              rounds=1, iterations=1)
    rate = spec.n_cells / seconds
    benchmark.extra_info.update(
        cells=spec.n_cells, seconds=round(seconds, 2), cells_per_second=round(rate),
        simulate_cells_per_second=round(simulate_rate),
        harness_ratio=round(rate / simulate_rate, 3),
        peak_tree_rss_mib=round(peak_kib / 1024),
        parquet_mib=round(sum(p.stat().st_size for p in (tmp_path / "out").rglob("*.parquet"))
                          / 2**20, 1),
    )
    RATES[f"sweep end to end ({spec.n_cells:,} cells)"] = rate
    RATES[f"simulate alone ({spec.n_cells:,} cells)"] = simulate_rate
    print(f"\n{spec.n_cells:>12,} cells: {seconds:6.1f} s end to end ({rate:,.0f} cells/s), "
          f"simulate alone {simulate_rate:,.0f} cells/s, ratio {rate / simulate_rate:.2f}, "
          f"peak RSS of the process tree {peak_kib / 1024:,.0f} MiB")


#: desired = 1..k for the backends compared: 10,054,800 cells (quick: 159,600; the quick
#: run's 1e6 end to end already runs the default mode on 1,117,200).
BACKENDS_DESIRED = 1 if QUICK else 63
#: Rounds, each running every mode once in turn; a mode's figure is its fastest round
#: (the least disturbed by whatever else the shared machine is doing).
BACKENDS_ROUNDS = 1 if QUICK else 3
#: Label -> ``reconsim sweep`` flags, each run end to end into a fresh directory.
SWEEP_RUNS = {
    "default (loky, workers write)": (),
    "loky, parent writes": ("--write-from", "parent"),
    "sequential": ("--backend", "sequential"),
}
ALONE = "expand + simulate alone"


def _expand_and_simulate(spec: Spec) -> tuple[float, float]:
    """Wall and CPU seconds to expand and simulate every chunk of ``spec`` in this process."""
    simulate(expand(spec, 0, 10))  # compiled before the clock starts
    cpu = _cpu_seconds(resource.RUSAGE_SELF)
    start = time.perf_counter()
    for index in range(spec.n_chunks):
        lo = index * spec.chunk_size
        simulate(expand(spec, lo, min(spec.n_cells, lo + spec.chunk_size)))
    return time.perf_counter() - start, _cpu_seconds(resource.RUSAGE_SELF) - cpu


#: One round: the 1-minute load average when it began, and per mode (cells/s, CPU seconds).
Round = tuple[float, dict[str, tuple[float, float]]]


def _compare(spec_path: Path, spec: Spec, tmp_path: Path) -> list[Round]:
    """BACKENDS_ROUNDS rounds, each running every mode once in turn."""
    rounds: list[Round] = []
    for _ in range(BACKENDS_ROUNDS):
        load = os.getloadavg()[0]
        seconds, cpu = _expand_and_simulate(spec)
        modes = {ALONE: (spec.n_cells / seconds, cpu)}
        for label, flags in SWEEP_RUNS.items():
            out = tmp_path / "out"
            seconds, _, cpu = _run_sweep(spec_path, out, *flags)
            modes[label] = (spec.n_cells / seconds, cpu)
            shutil.rmtree(out)
        rounds.append((load, modes))
        print(f"\nround {len(rounds)}, load average {load:.1f} at its start:", flush=True)
        for label, (rate, cpu) in modes.items():
            print(f"  {label:<32} {rate:>12,.0f} cells/s  {rate / modes[ALONE][0]:6.0%} of "
                  f"alone  {cpu:6.1f} CPU-s", flush=True)
    return rounds


@pytest.mark.benchmark(group="sweep: backends compared")
def test_backends_compared(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    spec_path = _spec_with_desired(tmp_path, BACKENDS_DESIRED)
    spec = load_spec(spec_path)
    rounds = benchmark.pedantic(_compare, args=(spec_path, spec, tmp_path), rounds=1,
                                iterations=1)
    rates = {label: max(modes[label][0] for _, modes in rounds) for label in rounds[0][1]}
    alone = rates[ALONE]
    benchmark.extra_info.update(
        cells=spec.n_cells, rounds=BACKENDS_ROUNDS,
        load_average=[round(load, 1) for load, _ in rounds],
        cells_per_second={label: round(rate) for label, rate in rates.items()},
        share_of_alone={label: round(rate / alone, 3) for label, rate in rates.items()},
        per_round={label: [{"cells_per_second": round(modes[label][0]),
                            "cpu_seconds": round(modes[label][1], 1)} for _, modes in rounds]
                   for label in rates})
    print(f"\n{spec.n_cells:,} cells, {os.cpu_count()} cores, fastest of {BACKENDS_ROUNDS} "
          "round(s):")
    for label, rate in rates.items():
        RATES[f"{label} ({spec.n_cells:,} cells)"] = rate
        print(f"  {label:<32} {rate:>12,.0f} cells/s  {rate / alone:6.0%} of alone")
