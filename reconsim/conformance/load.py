"""The Kubernetes data sets as they ship with reconsim: loading them, recognising an
original folder's kind, and making a data set's one Parquet file of traces from it.

Two data sets ship, each in its folder under :data:`DATA_ROOT` (:data:`KINDS`): the
ReplicaSet controller's (``kubernetes-replicaset``, :data:`REPLICASET`) and the Deployment
controller's driving it (``kubernetes-deployment``, :data:`DEPLOYMENT`). Each folder holds
the data set's ``README.md`` (unchanged), ``scenarios.json`` and ``metrics.csv`` (copied
unchanged) and ``traces.parquet``: every scenario's per-second trace in one
zstd-compressed table, a scenario's rows in order of ``t``, with an ``id`` column first.
:func:`build_traces` makes that file from the original folder (``traces/ID.csv``),
:func:`source_differences` says whether the shipped copy still equals an original folder,
and :func:`load_source` reads an original folder as it is.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Final

import polars as pl

from reconsim.errors import ReconsimError
from reconsim.io import write_atomic
from reconsim.model import deployment

#: The folder of the shipped data sets inside the package.
DATA_ROOT: Final = Path(__file__).resolve().parent / "data"
#: The ReplicaSet data set's folder inside the package.
DATA_DIR: Final = DATA_ROOT / "kubernetes-replicaset"
#: The files of the original folder copied unchanged, and the Parquet file made from its
#: traces.
COPIED: Final = ("README.md", "scenarios.json", "metrics.csv")
TRACES_FILE: Final = "traces.parquet"
#: A ReplicaSet trace's columns, in the original CSV files' order (every one an integer).
TRACE_COLUMNS: Final = (
    "t", "desired", "live", "api_pods", "cache_pods", "terminating", "syncs",
    "create_commands", "created", "failed_creates", "delete_commands", "deleted",
    "lost_creates", "deaths", "cache_active", "exp_add", "exp_del")
#: A ReplicaSet scenario's fields in ``scenarios.json``.
SCENARIO_FIELDS: Final = ("id", "desired", "G", "B", "grace", "deaths", "create_faults",
                          "duration", "logarithmic_scale_down")
#: A Deployment scenario's fields in ``scenarios.json``.
DEPLOYMENT_FIELDS: Final = (
    "id", "desired", "G", "B", "min_ready_seconds", "grace", "max_surge", "max_unavailable",
    "start", "rollout_at", "rollout2_at", "scale_at", "desired2", "deaths", "duration")


class DataError(ReconsimError):
    """A data set folder that cannot be read as one of the data sets: one line."""


@dataclass(frozen=True)
class Scenario:
    """One scenario of the ReplicaSet data set, as ``scenarios.json`` gives it."""

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


def deployment_scenario(record: dict[str, Any]) -> deployment.Scenario:
    """A Deployment scenario of ``scenarios.json`` as the model's
    :class:`~reconsim.model.deployment.Scenario`."""
    missing = [f for f in DEPLOYMENT_FIELDS if f not in record]
    if missing:
        raise DataError(f"scenarios.json: scenario {record.get('id', '?')!r} has no "
                        f"{missing[0]!r}")
    fields = {f: record[f] for f in DEPLOYMENT_FIELDS}
    fields["deaths"] = tuple((int(at), int(n)) for at, n in record["deaths"])
    try:
        return deployment.Scenario(**fields)
    except (TypeError, ValueError, deployment.ScenarioError) as exc:
        raise DataError(f"scenarios.json: {exc}") from None


@dataclass(frozen=True)
class Kind:
    """One kind of data set: its name (its folder's), what it records, its trace columns
    (in the original CSV files' order), its scenarios' fields and how a record becomes a
    scenario, and the metrics that may be empty (null)."""

    name: str
    title: str
    trace_columns: tuple[str, ...]
    scenario_fields: tuple[str, ...]
    scenario: Callable[[dict[str, Any]], Any] = field(repr=False)
    nullable_metrics: tuple[str, ...]

    @property
    def data_dir(self) -> Path:
        """Its shipped copy's folder."""
        return DATA_ROOT / self.name


REPLICASET: Final = Kind(
    "kubernetes-replicaset", "Kubernetes v1.23.13 ReplicaSet controller", TRACE_COLUMNS,
    SCENARIO_FIELDS, Scenario.of, ("stable_at",))
DEPLOYMENT: Final = Kind(
    "kubernetes-deployment", "Kubernetes v1.23.13 Deployment controller",
    deployment.TRACE_COLUMNS, DEPLOYMENT_FIELDS, deployment_scenario,
    ("rollout_done_at", "status_complete_at"))
#: The data sets that ship, by name.
KINDS: Final = {k.name: k for k in (REPLICASET, DEPLOYMENT)}


@dataclass(frozen=True)
class Dataset:
    """A data set: its scenarios in file order, ``metrics.csv`` and every trace (one
    frame: ``id`` then its kind's trace columns)."""

    scenarios: tuple[Any, ...]
    metrics: pl.DataFrame
    traces: pl.DataFrame
    kind: Kind = REPLICASET

    def scenario(self, id: str) -> Any:
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


def kind_of(folder: Path) -> Kind:
    """Which data set ``folder`` holds, told by its scenarios' fields."""
    path = folder / "scenarios.json"
    records = _records(path)
    if not records or not isinstance(records[0], dict):
        raise DataError(f"{path}: no scenarios")
    for kind in KINDS.values():
        if set(kind.scenario_fields) <= set(records[0]):
            return kind
    raise DataError(f"{path}: scenarios with fields {sorted(records[0])} are of neither "
                    f"data set ({', '.join(KINDS)})")


def load(folder: Path = DATA_DIR, kind: Kind | None = None) -> Dataset:
    """The data set in ``folder`` (default: the ReplicaSet copy shipped with reconsim), in
    the shipped layout, its traces from ``traces.parquet``; its kind told by its
    scenarios unless given."""
    traces = folder / TRACES_FILE
    if not folder.is_dir():
        raise DataError(f"{folder}: no such folder")
    if not traces.is_file():
        raise DataError(f"{traces}: no such file (make it with build_traces)")
    kind = kind_of(folder) if kind is None else kind
    frame = pl.read_parquet(traces)
    if frame.columns != ["id", *kind.trace_columns]:
        raise DataError(f"{traces}: columns are not the {kind.name} traces'")
    return Dataset(read_scenarios(folder, kind), read_metrics(folder, kind), frame, kind)


def load_source(folder: Path) -> Dataset:
    """The data set of an original folder (``README.md``, ``scenarios.json``,
    ``metrics.csv``, ``traces/ID.csv``), its kind told by its scenarios and traces."""
    if not folder.is_dir():
        raise DataError(f"{folder}: no such folder")
    for name in (*COPIED, "traces"):
        if not (folder / name).exists():
            raise DataError(f"{folder}: no {name} (a data set folder holds README.md, "
                            "scenarios.json, metrics.csv and traces/)")
    kind = kind_of(folder)
    scenarios = read_scenarios(folder, kind)
    traces = read_source_traces(folder, [s.id for s in scenarios], kind)
    return Dataset(scenarios, read_metrics(folder, kind), traces, kind)


def _records(path: Path) -> list[Any]:
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: cannot read ({exc})") from None
    if not isinstance(records, list):
        raise DataError(f"{path}: not a list of scenarios")
    return records


def read_scenarios(folder: Path, kind: Kind = REPLICASET) -> tuple[Any, ...]:
    return tuple(kind.scenario(r) for r in _records(folder / "scenarios.json"))


def read_metrics(folder: Path, kind: Kind = REPLICASET) -> pl.DataFrame:
    """``metrics.csv``: an empty value of a metric that may be empty reads as null."""
    path = folder / "metrics.csv"
    try:
        return pl.read_csv(path, schema_overrides=dict.fromkeys(kind.nullable_metrics,
                                                                 pl.Int64))
    except (OSError, pl.exceptions.PolarsError) as exc:
        raise DataError(f"{path}: cannot read ({exc})") from None


def read_source_traces(source: Path, ids: list[str], kind: Kind = REPLICASET) -> pl.DataFrame:
    """The traces of an original folder (``traces/ID.csv`` for each of ``ids``), as one
    frame in the layout of ``traces.parquet``."""
    frames = []
    columns = kind.trace_columns
    for id in ids:
        path = source / "traces" / f"{id}.csv"
        try:
            frame = pl.read_csv(path, schema=dict.fromkeys(columns, pl.Int64))
        except (OSError, pl.exceptions.PolarsError) as exc:
            raise DataError(f"{path}: cannot read as a {kind.name} trace ({exc})") from None
        frames.append(frame.select(pl.lit(id).alias("id"), *columns))
    return pl.concat(frames)


def build_traces(source: Path, target: Path | None = None) -> Path:
    """Make ``target/traces.parquet`` (zstd) from the original folder ``source``, and copy
    its other files (:data:`COPIED`) beside it unchanged; return the Parquet file's path.
    ``target`` defaults to the shipped folder of ``source``'s kind."""
    kind = kind_of(source)
    target = kind.data_dir if target is None else target
    ids = [s.id for s in read_scenarios(source, kind)]
    traces = read_source_traces(source, ids, kind)
    for name in COPIED:
        write_atomic(target / name, (source / name).read_bytes())
    buffer = io.BytesIO()
    traces.write_parquet(buffer, compression="zstd", compression_level=19, statistics=False)
    write_atomic(target / TRACES_FILE, buffer.getvalue())
    return target / TRACES_FILE


def source_differences(source: Path, shipped: Path | None = None) -> list[str]:
    """What differs between the shipped copy (default: that of ``source``'s kind) and the
    original folder ``source``: each copied file not byte for byte the same, and the
    traces unless every scenario's rows equal its CSV file exactly. Empty when the copy is
    faithful."""
    kind = kind_of(source)
    shipped = kind.data_dir if shipped is None else shipped
    problems = [f"{name}: differs from {source / name}" for name in COPIED
                if (source / name).read_bytes() != (shipped / name).read_bytes()]
    ids = [s.id for s in read_scenarios(source, kind)]
    original = read_source_traces(source, ids, kind)
    ours = pl.read_parquet(shipped / TRACES_FILE)
    if not ours.equals(original):
        problems.append(f"{TRACES_FILE}: differs from {source / 'traces'}")
    return problems
