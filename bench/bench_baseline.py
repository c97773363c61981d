"""The built-ins are no slower than a baseline commit's: both trees side by side, in one run.

Opt in with ``RECONSIM_BASELINE=/path/to/checkout`` (another checkout of reconsim, e.g. an
older main): without it the benchmark is skipped. Each tree runs in an interpreter of its
own (its own ``PYTHONPATH``), kept alive for the whole comparison: both load the same
frames (built here, by this tree: the default sweep's cells — seed 001's world — the
world mix of :func:`bench.conftest.world_batch`, and the replicaset cells of
``sweeps/kubernetes.toml`` on the event kernel), simulate each once to compile (or load
numba's cache), then time ``simulate`` alternately for ``RECONSIM_BASELINE_ROUNDS`` rounds
(default 6; 2 in quick mode), so that whatever else the machine does falls on both. Which
tree goes first changes from frame to frame and from round to round: a run is slower right
after a large run of the other process (on the default sweep's cells, 0.89 of the baseline's
speed when this tree always went first, 1.01 when the baseline did), so each tree follows
each of the other's runs as often (with an even number of rounds). Reported in
``benchmark.extra_info``: cells per second (the median round) of each tree, and the ratio
this / baseline, per frame. The driver uses only ``reconsim.model.simulate.simulate`` and
``reconsim.model.params.PARAM_NAMES``, which both the old layout and this one have; each
tree reads the parameter columns it knows.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from bench.conftest import QUICK, RATES, world_batch
from reconsim.process import ALLOCATOR_VARIABLE, JEMALLOC_CONF
from reconsim.sweep.grid import expand
from reconsim.sweep.spec import load_spec

ROOT = Path(__file__).resolve().parent.parent
BASELINE = os.environ.get("RECONSIM_BASELINE", "")
ROUNDS = int(os.environ.get("RECONSIM_BASELINE_ROUNDS", "2" if QUICK else "6"))

#: One tree's side: reads commands on stdin, one JSON answer a line on stdout.
DRIVER = textwrap.dedent("""
    import json, sys, time
    import polars as pl
    import reconsim
    from reconsim.model.params import PARAM_NAMES
    from reconsim.model.simulate import simulate

    frames = {}
    print(json.dumps({"tree": reconsim.__file__}), flush=True)
    for line in sys.stdin:
        command, name, *rest = line.split()
        if command == "load":
            frame = pl.read_parquet(rest[0])
            frames[name] = frame.select(c for c in frame.columns if c in PARAM_NAMES)
            answer = {"cells": frames[name].height}
        elif command == "warm":  # compile (or load the cache); keep the metrics
            out = simulate(frames[name])
            out.select(c for c in out.columns if c not in frames[name].columns).write_parquet(
                rest[0])
            answer = {}
        else:
            start = time.perf_counter()
            simulate(frames[name])
            answer = {"seconds": time.perf_counter() - start}
        print(json.dumps(answer), flush=True)
""")


class Tree:
    """One checkout's interpreter, driven over its stdin and stdout, its polars allocator
    set as a reconsim process sets it (:data:`reconsim.process.JEMALLOC_CONF`)."""

    def __init__(self, root: Path) -> None:
        # Not as this process's environment has it: polars, imported here, put its own
        # setting there (freed pages returned after 0.5 s), which both trees would inherit
        # and no reconsim process runs with. Under it each round, which follows the other
        # tree's, takes its memory afresh from the system: on the default sweep's cells
        # both trees took about twice as long (0.79 and 0.57 s, one run of 8 rounds), and
        # this tree, which holds the events' responses, ran at 0.72 of the baseline's
        # speed, against 0.88 under jemalloc's own default.
        env = {**os.environ, "PYTHONPATH": str(root), ALLOCATOR_VARIABLE: JEMALLOC_CONF}
        self.proc = subprocess.Popen([sys.executable, "-c", DRIVER], cwd=root, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.file = self._answer()["tree"]

    def ask(self, *words: str) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(" ".join(words) + "\n")
        self.proc.stdin.flush()
        return self._answer()

    def _answer(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the driver stopped (exit status {self.proc.wait()})")
        return json.loads(line)  # type: ignore[no-any-return]

    def close(self) -> None:
        assert self.proc.stdin is not None
        assert self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self.proc.stdout.close()


def frames(folder: Path) -> dict[str, Path]:
    """The three frames, written as Parquet for both trees to read: the default sweep's
    cells (the count kernel), the world mix (the world kernel) and ``sweeps/kubernetes.toml``'s
    replicaset cells, repeated (the event kernel)."""
    seed = expand(load_spec(ROOT / "sweeps" / "default.toml"))
    kubernetes = expand(load_spec(ROOT / "sweeps" / "kubernetes.toml")).filter(
        pl.col("controller") == "replicaset")
    made = {"seed world": seed if not QUICK else seed.head(30_000),
            "world mix": world_batch(30_000 if QUICK else 300_000),
            "kubernetes mix": pl.concat([kubernetes] * (4 if QUICK else 40))}
    paths = {}
    for name, frame in made.items():
        paths[name] = folder / f"{name.replace(' ', '_')}.parquet"
        frame.write_parquet(paths[name])
    return paths


@pytest.mark.skipif(not BASELINE, reason="opt-in: set RECONSIM_BASELINE=/path/to/checkout "
                    "to compare this tree's built-ins with that checkout's")
@pytest.mark.benchmark(group="baseline: cells per second, this tree / the baseline")
def test_builtins_no_slower_than_the_baseline(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    baseline = Path(BASELINE).resolve()
    if not (baseline / "reconsim" / "__init__.py").exists():
        pytest.fail(f"RECONSIM_BASELINE={BASELINE}: not a reconsim checkout", pytrace=False)
    paths = frames(tmp_path)
    trees = {"this": Tree(ROOT), "baseline": Tree(baseline)}
    try:
        assert trees["this"].file != trees["baseline"].file
        cells: dict[str, int] = {}
        metrics: dict[str, dict[str, pl.DataFrame]] = {}
        for name, path in paths.items():
            for side, tree in trees.items():
                key = name.replace(" ", "_")
                cells[name] = tree.ask("load", key, str(path))["cells"]
                out = tmp_path / f"{key}-{side}-metrics.parquet"
                tree.ask("warm", key, str(out))
                metrics.setdefault(name, {})[side] = pl.read_parquet(out)
        seconds: dict[str, dict[str, list[float]]] = {n: {"this": [], "baseline": []}
                                                      for n in paths}

        def alternate() -> None:
            for r in range(ROUNDS):
                for f, name in enumerate(paths):
                    first = ("this", "baseline")  # which goes first: see the module's text
                    for side in first if (r + f) % 2 == 0 else first[::-1]:
                        answer = trees[side].ask("time", name.replace(" ", "_"))
                        seconds[name][side].append(answer["seconds"])

        benchmark.pedantic(alternate, rounds=1, iterations=1)
    finally:
        for tree in trees.values():
            tree.close()
    report: dict[str, Any] = {"baseline": str(baseline), "rounds": ROUNDS}
    for name in paths:
        rate = {side: cells[name] / statistics.median(seconds[name][side])
                for side in ("this", "baseline")}
        RATES[f"{name}, this tree ({cells[name]:,} cells)"] = rate["this"]
        RATES[f"{name}, baseline {baseline.name} ({cells[name]:,} cells)"] = rate["baseline"]
        report[name] = {"cells": cells[name],
                        "this_cells_per_second": round(rate["this"]),
                        "baseline_cells_per_second": round(rate["baseline"]),
                        "ratio": round(rate["this"] / rate["baseline"], 3),
                        "same_metrics": _same(metrics[name])}
    benchmark.extra_info.update(report)
    print("\n" + json.dumps(report, indent=1))


def _same(metrics: dict[str, pl.DataFrame]) -> bool:
    """Whether both trees gave the same metrics, cell by cell, on those both compute."""
    this, base = metrics["this"], metrics["baseline"]
    common = [c for c in this.columns if c in base.columns]
    return bool(common) and this.select(common).equals(base.select(common))
