"""The Kubernetes ReplicaSet data set as it ships with reconsim: loading it, and making its
one Parquet file of traces from the original folder of CSV files.

The package holds, in :data:`DATA_DIR`, the data set's ``README.md`` (unchanged),
``scenarios.json`` and ``metrics.csv`` (copied unchanged) and ``traces.parquet``: every
scenario's per-second trace in one zstd-compressed table, a scenario's rows in order of
``t``, with an ``id`` column first. :func:`build_traces` makes that file from the original
folder (``traces/ID.csv``), and :func:`source_differences` says whether the shipped copy
still equals an original folder.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Final

import polars as pl

from reconsim.errors import ReconsimError
from reconsim.io import write_atomic

#: The data set's folder inside the package.
DATA_DIR: Final = Path(__file__).resolve().parent / "data" / "kubernetes-replicaset"
#: The files of the original folder copied unchanged, and the Parquet file made from its
#: traces.
COPIED: Final = ("README.md", "scenarios.json", "metrics.csv")
TRACES_FILE: Final = "traces.parquet"
#: A trace's columns, in the original CSV files' order (every one an integer).
TRACE_COLUMNS: Final = (
    "t", "desired", "live", "api_pods", "cache_pods", "terminating", "syncs",
    "create_commands", "created", "failed_creates", "delete_commands", "deleted",
    "lost_creates", "deaths", "cache_active", "exp_add", "exp_del")
#: A scenario's fields in ``scenarios.json``.
SCENARIO_FIELDS: Final = ("id", "desired", "G", "B", "grace", "deaths", "create_faults",
                          "duration", "logarithmic_scale_down")


class DataError(ReconsimError):
    """A data set folder that cannot be read as the ReplicaSet data set: one line."""


@dataclass(frozen=True)
class Scenario:
    """One scenario of the data set, as ``scenarios.json`` gives it."""

    id: str
    desired: int
    G: int
    B: int
    grace: int
    deaths: tuple[tuple[int, int], ...]
    create_faults: tuple[tuple[int, int, str], ...]
    duration: int
    logarithmic_scale_down: bool

    @classmethod
    def of(cls, record: dict[str, Any]) -> Scenario:
        missing = [f for f in SCENARIO_FIELDS if f not in record]
        if missing:
            raise DataError(f"scenarios.json: scenario {record.get('id', '?')!r} has no "
                            f"{missing[0]!r}")
        return cls(
            id=str(record["id"]), desired=int(record["desired"]), G=int(record["G"]),
            B=int(record["B"]), grace=int(record["grace"]),
            deaths=tuple((int(at), int(n)) for at, n in record["deaths"]),
            create_faults=tuple((int(at), int(n), str(kind))
                                for at, n, kind in record["create_faults"]),
            duration=int(record["duration"]),
            logarithmic_scale_down=bool(record["logarithmic_scale_down"]))


@dataclass(frozen=True)
class Dataset:
    """The data set: its scenarios in file order, ``metrics.csv`` and every trace (one
    frame: ``id`` then :data:`TRACE_COLUMNS`)."""

    scenarios: tuple[Scenario, ...]
    metrics: pl.DataFrame
    traces: pl.DataFrame

    def scenario(self, id: str) -> Scenario:
        for s in self.scenarios:
            if s.id == id:
                return s
        raise KeyError(id)

    def trace(self, id: str) -> pl.DataFrame:
        """Scenario ``id``'s trace: one row per second, :data:`TRACE_COLUMNS`."""
        return self._by_id[id]

    @cached_property
    def _by_id(self) -> dict[str, pl.DataFrame]:
        parts = self.traces.partition_by("id", as_dict=True, include_key=False,
                                         maintain_order=True)
        return {str(key[0]): frame for key, frame in parts.items()}


def load(folder: Path = DATA_DIR) -> Dataset:
    """The data set in ``folder`` (default: the copy shipped with reconsim), its traces
    from ``traces.parquet``."""
    traces = folder / TRACES_FILE
    if not traces.is_file():
        raise DataError(f"{traces}: no such file (make it with tools/replicaset_data.py)")
    return Dataset(read_scenarios(folder), read_metrics(folder), pl.read_parquet(traces))


def read_scenarios(folder: Path) -> tuple[Scenario, ...]:
    path = folder / "scenarios.json"
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: cannot read ({exc})") from None
    return tuple(Scenario.of(r) for r in records)


def read_metrics(folder: Path) -> pl.DataFrame:
    """``metrics.csv``: an empty ``stable_at`` reads as null."""
    path = folder / "metrics.csv"
    try:
        return pl.read_csv(path, schema_overrides={"stable_at": pl.Int64})
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise DataError(f"{path}: cannot read ({exc})") from None


def read_source_traces(source: Path, ids: list[str]) -> pl.DataFrame:
    """The traces of an original folder (``traces/ID.csv`` for each of ``ids``), as one
    frame in the layout of ``traces.parquet``."""
    frames = []
    for id in ids:
        path = source / "traces" / f"{id}.csv"
        frame = pl.read_csv(path, schema=dict.fromkeys(TRACE_COLUMNS, pl.Int64))
        frames.append(frame.select(pl.lit(id).alias("id"), *TRACE_COLUMNS))
    return pl.concat(frames)


def build_traces(source: Path, target: Path = DATA_DIR) -> Path:
    """Make ``target/traces.parquet`` (zstd) from the original folder ``source``, and copy
    its other files (:data:`COPIED`) beside it unchanged; return the Parquet file's path."""
    ids = [s.id for s in read_scenarios(source)]
    traces = read_source_traces(source, ids)
    for name in COPIED:
        write_atomic(target / name, (source / name).read_bytes())
    buffer = io.BytesIO()
    traces.write_parquet(buffer, compression="zstd", compression_level=19, statistics=False)
    write_atomic(target / TRACES_FILE, buffer.getvalue())
    return target / TRACES_FILE


def source_differences(source: Path, shipped: Path = DATA_DIR) -> list[str]:
    """What differs between the shipped copy and the original folder ``source``: each
    copied file not byte for byte the same, and the traces unless every scenario's rows
    equal its CSV file exactly. Empty when the copy is faithful."""
    problems = [f"{name}: differs from {source / name}" for name in COPIED
                if (source / name).read_bytes() != (shipped / name).read_bytes()]
    ids = [s.id for s in read_scenarios(source)]
    original = read_source_traces(source, ids)
    ours = pl.read_parquet(shipped / TRACES_FILE)
    if not ours.equals(original):
        problems.append(f"{TRACES_FILE}: differs from {source / 'traces'}")
    return problems
