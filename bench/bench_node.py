"""``simulate`` against seed 001's own JS model under node, on the same cells, in one run.

The seed's ``reconcile.mjs`` is not part of this project: the benchmark takes its code
block from the seed file at run time (``$RECONSIM_SEEDS``, default ``../shared/seeds``
beside the repository), writes it with a small driver into a temporary directory and
runs ``node`` on :func:`bench.conftest.grid_batch`'s 300,000 cells (G 0-90, U 5-90,
B 1-10, desired 3-12, both controllers; deaths (300, 2) and 900 s, the seed's own
``DEATHS`` and default duration): three passes in one process, the JIT warm after the
first, the best pass counts. ``simulate`` runs the same cells; the ratio of the two best
times goes into ``extra_info``. The two are the same model (``intent = true`` is the
"intent" controller), so on a sample of the cells every figure ``run`` returns must equal
``simulate``'s.

Skipped, saying why, without ``node``, without the seed file, or in quick mode.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import polars as pl
import pytest

from bench.conftest import QUICK, RATES, grid_batch
from reconsim import simulate

ROOT = Path(__file__).resolve().parents[1]
#: Every this many cells, node's figures are compared with simulate's.
SAMPLE_EVERY = 97
N_CELLS = 300_000
PASSES = 3

#: The driver: imports the seed's module, runs every cell PASSES times, reports each pass's
#: time and the figures of the sampled cells.
DRIVER = """
import { readFileSync } from "node:fs";
import { run } from "./reconcile.mjs";
const cells = JSON.parse(readFileSync(process.argv[2], "utf8"));
const n = cells.G.length, passes = Number(process.argv[3]), every = Number(process.argv[4]);
const seconds = [], cpu = [];
let sink = 0;
for (let p = 0; p < passes; p++) {
  const t0 = process.hrtime.bigint(), c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const r = run({ desired: cells.desired[i], U: cells.U[i], G: cells.G[i], B: cells.B[i],
                    duration: cells.duration, intent: cells.intent[i] });
    sink += r.created;
  }
  seconds.push(Number(process.hrtime.bigint() - t0) / 1e9);
  const c = process.cpuUsage(c0);
  cpu.push((c.user + c.system) / 1e6);
}
const sample = [];
for (let i = 0; i < n; i += every) {
  sample.push(run({ desired: cells.desired[i], U: cells.U[i], G: cells.G[i], B: cells.B[i],
                    duration: cells.duration, intent: cells.intent[i] }));
}
console.log(JSON.stringify({ seconds, cpu, sink, sample }));
"""

#: node's names for simulate's metrics.
FIGURES = {"round": "rounds", "workRound": "work_per_round", "created": "created",
           "unneeded": "unneeded", "commands": "delete_commands", "deleted": "deleted",
           "overshoot": "overshoot", "stable": "stable_at"}


def seed_file() -> Path | None:
    """Seed 001's file, where ``$RECONSIM_SEEDS`` (or ``../shared/seeds``) holds it."""
    where = Path(os.environ.get("RECONSIM_SEEDS", ROOT.parent / "shared" / "seeds"))
    found = sorted(where.glob("001_*.txt"))
    return found[0] if found else None


#: Where JS code resumes after a line comment, in the seed's code block (see reconcile_js).
_CODE_RESUMES = re.compile(r"export |let |const |if \(|for \(|r\.ready|seen\.slice|return ")


def reconcile_js(text: str) -> str:
    """The seed's ``reconcile.mjs`` code block, runnable.

    The seed file stores its text on one line: the block's line breaks are gone, so each
    ``//`` comment would swallow the code after it. Each comment (outside string and
    template literals) is cut where the seed's code resumes, and the rest kept as is.
    """
    match = re.search(r"```js\s*(// reconcile\.mjs.*?)```", text, re.DOTALL)
    if match is None:
        raise LookupError("no ```js block starting with '// reconcile.mjs'")
    code, out, i, quote = match.group(1), [], 0, ""
    while i < len(code):
        c = code[i]
        if quote:
            out.append(c)
            if c == "\\":
                out.append(code[i + 1])
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'`":
            quote = c
            out.append(c)
        elif code.startswith("//", i):
            resume = _CODE_RESUMES.search(code, i)
            if resume is None:
                break
            out.append("\n")
            i = resume.start()
            continue
        else:
            out.append(c)
        i += 1
    return "".join(out)


@pytest.mark.benchmark(group="simulate against seed 001's JS model (node)")
def test_simulate_against_seed_node_model(benchmark, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    if QUICK:
        pytest.skip("quick mode: node runs the 300,000 cells for minutes")
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH")
    seed = seed_file()
    if seed is None:
        pytest.skip("seed 001's file not found: set RECONSIM_SEEDS to the seeds directory")
    (tmp_path / "reconcile.mjs").write_text(reconcile_js(seed.read_text(encoding="utf-8")))
    (tmp_path / "driver.mjs").write_text(DRIVER)
    cells = grid_batch(N_CELLS)
    (tmp_path / "cells.json").write_text(json.dumps({
        **{k: cells[k].to_list() for k in ("G", "U", "B", "desired")},
        "intent": (cells["controller"] == "intent").to_list(), "duration": 900}))
    proc = subprocess.run([node, "driver.mjs", "cells.json", str(PASSES), str(SAMPLE_EVERY)],
                          cwd=tmp_path, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, f"node failed: {proc.stderr.strip()[-2000:]}"
    got = json.loads(proc.stdout)

    simulate(cells.head(100))  # compile (or load the cache) outside the timing
    cpu: list[float] = []

    def timed(frame: pl.DataFrame) -> pl.DataFrame:
        start = time.process_time()
        out = simulate(frame)
        cpu.append(time.process_time() - start)
        return out

    out = benchmark.pedantic(timed, args=(cells,), rounds=PASSES, warmup_rounds=1)

    # Same model, same figures: on every sampled cell.
    ours = out.select(FIGURES.values()).gather_every(SAMPLE_EVERY).to_dicts()
    theirs = [{FIGURES[k]: v for k, v in r.items() if k in FIGURES} for r in got["sample"]]
    assert len(ours) == len(theirs) > 3000
    pairs = enumerate(zip(ours, theirs, strict=True))
    mismatched = [(i * SAMPLE_EVERY, o, t) for i, (o, t) in pairs if o != t]
    assert not mismatched, f"node and simulate differ, e.g. cell {mismatched[0]}"

    node_best, ours_best = min(got["seconds"]), benchmark.stats.stats.min
    benchmark.extra_info.update(
        cells=cells.height, node_seconds=[round(s, 3) for s in got["seconds"]],
        node_cpu_seconds=[round(s, 3) for s in got["cpu"]],
        node_cells_per_second=round(cells.height / node_best),
        simulate_cells_per_second=round(cells.height / ours_best),
        faster_than_node=round(node_best / ours_best, 1), cells_compared=len(ours),
        # CPU seconds (simulate's summed over its threads): what other jobs do not inflate
        faster_than_node_cpu=round(min(got["cpu"]) / min(cpu), 1))
    RATES["seed 001's JS model, node (best pass)"] = cells.height / node_best
    RATES["simulate, same cells (best round)"] = cells.height / ours_best
    print(f"\nnode best pass {node_best:.2f} s, simulate best {ours_best:.3f} s: "
          f"simulate is {node_best / ours_best:,.0f}x faster on {cells.height:,} cells "
          f"({min(got['cpu']) / min(cpu):,.0f}x in CPU seconds); "
          f"{len(ours):,} sampled cells agree on every figure")

