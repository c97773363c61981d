"""Sweep tables for the report's tests: written by hand (``hand_table``) or simulated
(``model_frame``), and saved as a sweep's output directory (``write_table``)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import polars as pl

from reconsim import METRIC_NAMES
from reconsim.model.laws import law_columns
from reconsim.model.simulate import DEATHS_DTYPE, simulate

SCHEDULES: dict[str, list[dict[str, int]]] = {
    "seed": [{"at": 300, "count": 2}],
    "none": [],
    "start": [{"at": 0, "count": 2}],
}


#: The values the fixtures below hold fixed: the model's defaults (B 5, six copies, 900 s,
#: ledger_base 20, undamped, uncapped), so a fixture's seed slice is the default cell.
HAND_FIXED: dict[str, Any] = {"B": 5, "desired": 6, "duration": 900, "ledger_base": 20,
                              "observe": "ready", "max_per_round": None, "gain": 1.0}


def write_table(sweep_dir: Path, frame: pl.DataFrame, name: str = "demo",
                **meta: Any) -> Path:
    """Write ``frame`` as a sweep's output: data/part-00000.parquet and sweep.json."""
    (sweep_dir / "data").mkdir(parents=True, exist_ok=True)
    frame.write_parquet(sweep_dir / "data" / "part-00000.parquet")
    info = {"name": name, "spec": {"name": name, "grid": {"G": [0, 30]}}, "spec_hash": "f00d",
            "version": "0.1.0", "cells": frame.height, "started": "2026-01-01T00:00:00+00:00",
            "finished": "2026-01-01T00:00:02+00:00", "cells_per_second": 1234.5} | meta
    (sweep_dir / "sweep.json").write_text(json.dumps(info), encoding="utf-8")
    return sweep_dir


def model_frame(schedules: dict[str, list[dict[str, int]]] | None = None,
                **grid: list[Any]) -> pl.DataFrame:
    """Simulate a grid of cells (both controllers by default) with a schedule column."""
    schedules = schedules or {"seed": SCHEDULES["seed"], "none": SCHEDULES["none"]}
    axes: dict[str, list[Any]] = {"controller": ["ledger", "intent"], "G": [0, 10, 20, 30],
                                  "U": [5, 15, 35], "B": [0, 5], "desired": [0, 6]}
    axes |= grid
    rows = list(itertools.product(*axes.values(), list(schedules)))
    frame = pl.DataFrame(rows, schema=[*axes, "schedule"], orient="row").with_columns(
        duration=pl.lit(HAND_FIXED["duration"], pl.Int64),
        ledger_base=pl.lit(HAND_FIXED["ledger_base"], pl.Int64),
        deaths=pl.col("schedule").replace_strict(schedules, return_dtype=DEATHS_DTYPE),
        observe=pl.lit("ready"), max_per_round=pl.lit(None, pl.Int64), gain=pl.lit(1.0),
    )
    return simulate(frame).with_columns(law_columns(frame.columns))


def write_sweep(sweep_dir: Path, name: str = "demo") -> Path:
    """A small simulated sweep on disk (also used by the browser test)."""
    return write_table(sweep_dir, model_frame(), name=name)


def hand_table(rows: list[dict[str, Any]]) -> pl.DataFrame:
    """A sweep table from hand-written rows: unspecified parameters get fixed values,
    unspecified metrics 0 (``rounds`` 1); the law columns are computed by reconsim.model.laws."""
    defaults: dict[str, Any] = {"controller": "ledger", "G": 30, "U": 15, "schedule": "seed",
                                **HAND_FIXED}
    metrics = dict.fromkeys(METRIC_NAMES, 0) | {"rounds": 1, "stable_at": None,
                                                "work_per_round": 0.0, "reads_per_round": 0.0}
    full = [defaults | metrics | r for r in rows]
    frame = pl.DataFrame(full, schema_overrides={"stable_at": pl.Int64,
                                                 "max_per_round": pl.Int64})
    frame = frame.with_columns(
        deaths=pl.col("schedule").replace_strict(SCHEDULES, return_dtype=DEATHS_DTYPE),
        work_per_round=pl.col("work_per_round").cast(pl.Float64),
        reads_per_round=pl.col("reads_per_round").cast(pl.Float64),
    )
    return frame.with_columns(law_columns(frame.columns))


#: Ten cells whose law and boundary figures are worked out by hand beside each row:
#: law = desired * (ceil((G + B) / U) - 1); above = U >= G + B.
HAND_ROWS: list[dict[str, Any]] = [
    # ledger: law 6 * (2 - 1) = 6, holds; below, overshoots
    {"controller": "ledger", "G": 20, "U": 15, "B": 5, "desired": 6, "overshoot": 6},
    # ledger: law 6 * (3 - 1) = 12, holds; below, overshoots
    {"controller": "ledger", "G": 30, "U": 15, "B": 5, "desired": 6, "overshoot": 12},
    # ledger: law 6 * (1 - 1) = 0, holds; above, zero
    {"controller": "ledger", "G": 0, "U": 15, "B": 5, "desired": 6, "overshoot": 0},
    # ledger: law 6 * (0 - 1) = -6, fails by +6 (negative law); above, zero
    {"controller": "ledger", "G": 0, "U": 5, "B": 0, "desired": 6, "schedule": "none",
     "overshoot": 0},
    # ledger: law 3 * (2 - 1) = 3, fails by -3; below, zero with desired > 0
    {"controller": "ledger", "G": 0, "U": 5, "B": 10, "desired": 3, "schedule": "none",
     "overshoot": 0},
    # ledger: law 6 * (1 - 1) = 0, fails by +6; above, overshoots
    {"controller": "ledger", "G": 40, "U": 60, "B": 5, "desired": 6, "schedule": "none",
     "overshoot": 6},
    # ledger: law 0, holds; below, zero with desired = 0
    {"controller": "ledger", "G": 30, "U": 5, "B": 5, "desired": 0, "overshoot": 0},
    # intent: no law; below, zero with desired > 0
    {"controller": "intent", "G": 30, "U": 15, "B": 5, "desired": 6, "overshoot": 0},
    # intent: below, overshoots
    {"controller": "intent", "G": 60, "U": 15, "B": 5, "desired": 6, "overshoot": 2},
    # a controller reconsim does not know: above, zero
    {"controller": "oracle", "G": 0, "U": 15, "B": 5, "desired": 6, "overshoot": 0},
]
