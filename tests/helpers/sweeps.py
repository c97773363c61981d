"""Small sweeps run for a test: a spec's text run into a folder (sequential, no progress
bar), the sweep the ``compare`` tests start from, and edited copies of a sweep."""

from __future__ import annotations

import shutil
from pathlib import Path

import polars as pl

from reconsim.sweep.runner import run_sweep
from reconsim.sweep.spec import load_spec, parse_spec


def run_spec(tmp: Path, text: str) -> Path:
    """Write ``text`` as ``tmp/spec.toml`` and sweep it into ``tmp/out``; return that DIR."""
    spec_path = tmp / "spec.toml"
    spec_path.write_text(text, encoding="utf-8")
    out = tmp / "out"
    run_sweep(load_spec(spec_path), out, jobs=1, backend="sequential", progress=False)
    return out


#: The sweep ``reconsim compare`` is tested on (108 cells with the default G and U).
COMPARE_SPEC = """
name = "{name}"
[grid]
controller = ["ledger", "intent", "expectations"]
G = {G}
U = {U}
B = 5
desired = [3, 6]
duration = 300
schedule = ["seed", "none"]
[schedule.seed]
events = [[100, 2]]
[schedule.none]
events = []
"""


def compare_sweep(out: Path, name: str = "a", G: str = "[0, 10, 30]",
                  U: str = "[5, 15, 30]") -> Path:
    """:data:`COMPARE_SPEC` swept into ``out``."""
    run_sweep(parse_spec(COMPARE_SPEC.format(name=name, G=G, U=U)), out, jobs=1,
              backend="sequential", progress=False)
    return out


def edited(base: Path, out: Path, **columns: pl.Expr) -> Path:
    """A copy of sweep ``base`` with some columns rewritten in every chunk file."""
    shutil.copytree(base, out)
    for part in (out / "data").glob("part-*.parquet"):
        pl.read_parquet(part).with_columns(**columns).write_parquet(part)
    return out
