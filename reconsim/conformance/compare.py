"""Run a data set's scenarios on reconsim and compare them with the real controllers: for
the ReplicaSet data set ten metrics per scenario, five series second by second, and the
cause of each difference; for the Deployment data set every metric of ``metrics.csv`` and
every trace column but ``t``, second by second, run by the Deployment world's reference
model (:mod:`reconsim.model.deployment`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import polars as pl

from reconsim.conformance.load import DEPLOYMENT, REPLICASET, Dataset, Kind, Scenario
from reconsim.conformance.mapping import cell_of
from reconsim.model import deployment
from reconsim.model.deployment import BURST_REPLICAS
from reconsim.model.params import Cell
from reconsim.model.simulate import cells_frame, simulate
from reconsim.model.trace import trace_cell

#: The metrics compared: those the data set and reconsim define alike.
METRICS_COMPARED: Final = (
    "create_commands", "created", "failed_creates", "delete_commands", "deleted",
    "overshoot", "unneeded", "stable_at", "excess_copy_seconds", "missing_copy_seconds")
#: The per-second series compared, by their names in both traces.
SERIES_COMPARED: Final = ("live", "create_commands", "delete_commands", "created", "deleted")
#: The Deployment data set's metrics compared: every column of its ``metrics.csv``.
DEPLOYMENT_METRICS: Final = tuple(m for m in deployment.METRIC_COLUMNS if m != "id")
#: The Deployment data set's series compared: every trace column but ``t``.
DEPLOYMENT_SERIES: Final = tuple(c for c in deployment.TRACE_COLUMNS if c != "t")
#: The name the Deployment world's reference model goes by in a comparison.
DEPLOYMENT_MODEL: Final = "deployment"

FAILED_RETRY: Final = "failed-create retry"
LOST_WRITE_OFF: Final = "lost reply write-off"
SEVERAL_SYNCS: Final = "several syncs in one second (burst)"
NOT_FOUND: Final = "NotFound deletes"
OTHER: Final = "other"
#: Every cause a difference is put down to, in the order :func:`classify` tries them.
CAUSES: Final = (FAILED_RETRY, LOST_WRITE_OFF, SEVERAL_SYNCS, NOT_FOUND, OTHER)


@dataclass(frozen=True)
class Outcome:
    """One scenario compared: the metrics that differ (real, reconsim), the first second
    where a compared series differs and which ones do there, and the difference's cause
    (None when the scenario matches throughout)."""

    id: str
    metrics: Mapping[str, tuple[Any, Any]]  # every compared metric: (real, reconsim)
    first_second: int | None = None
    series: tuple[str, ...] = ()
    cause: str | None = None

    @property
    def differing_metrics(self) -> tuple[str, ...]:
        return tuple(m for m, (real, ours) in self.metrics.items() if real != ours)

    @property
    def all_metrics(self) -> bool:
        return not self.differing_metrics

    @property
    def per_second(self) -> bool:
        return self.first_second is None

    @property
    def matches(self) -> bool:
        return self.all_metrics and self.per_second

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "matches": self.matches,
                "differing_metrics": {m: {"real": self.metrics[m][0],
                                          "reconsim": self.metrics[m][1]}
                                      for m in self.differing_metrics},
                "first_second": self.first_second, "series": list(self.series),
                "cause": self.cause}


@dataclass(frozen=True)
class Conformance:
    """Every scenario of a data set (``kind``) compared, run by ``controller``, on the
    metrics ``metrics_compared``."""

    controller: str
    outcomes: tuple[Outcome, ...]
    causes: tuple[str, ...] = field(default=CAUSES)
    kind: Kind = REPLICASET
    metrics_compared: tuple[str, ...] = METRICS_COMPARED

    def matched(self, metric: str) -> int:
        """Scenarios whose ``metric`` is the real controller's."""
        return sum(1 for o in self.outcomes if metric not in o.differing_metrics)

    @property
    def all_metrics(self) -> int:
        return sum(1 for o in self.outcomes if o.all_metrics)

    @property
    def per_second(self) -> int:
        return sum(1 for o in self.outcomes if o.per_second)

    @property
    def matching(self) -> int:
        return sum(1 for o in self.outcomes if o.matches)

    def by_cause(self) -> dict[str, list[Outcome]]:
        """The differing scenarios under their cause, causes in :data:`CAUSES` order."""
        groups: dict[str, list[Outcome]] = {c: [] for c in self.causes}
        for o in self.outcomes:
            if o.cause is not None:
                groups[o.cause].append(o)
        return {c: found for c, found in groups.items() if found}

    def to_json(self) -> dict[str, Any]:
        return {
            "dataset": self.kind.name,
            "controller": self.controller, "scenarios": len(self.outcomes),
            "metrics": {m: self.matched(m) for m in self.metrics_compared},
            "all_metrics": self.all_metrics, "per_second": self.per_second,
            "matching": self.matching,
            "causes": {c: {"scenarios": len(found), "example": found[0].id,
                           "first_second": found[0].first_second}
                       for c, found in self.by_cause().items()},
            "outcomes": [o.to_json() for o in self.outcomes]}


def first_difference(real: pl.DataFrame, ours: pl.DataFrame, columns: Iterable[str] = (
        SERIES_COMPARED)) -> tuple[int | None, tuple[str, ...]]:
    """The first second where a column of two traces differs, and the columns that differ
    there; ``(None, ())`` when they agree throughout. Traces of different lengths differ
    from the first second one lacks."""
    columns = tuple(columns)
    n = min(real.height, ours.height)
    differs = pl.any_horizontal([real[c].head(n) != ours[c].head(n) for c in columns])
    rows = pl.select(differs.arg_true()).to_series()
    if rows.len():
        t = int(rows[0])
        return int(real["t"][t]), tuple(c for c in columns if real[c][t] != ours[c][t])
    if real.height != ours.height:
        return n, columns
    return None, ()


def classify(real: pl.DataFrame, second: int | None) -> str:
    """Why reconsim's trace parts from the real one at ``second``, read off the real
    controller's trace there (the first rule that holds):

    1. a create failed in that second (the real controller retries at once):
       :data:`FAILED_RETRY`;
    2. a create's reply was lost in it (written off, the pod shows up later):
       :data:`LOST_WRITE_OFF`;
    3. more commands than one sync may issue (``burstReplicas``), so a second sync acted
       in the same second: :data:`SEVERAL_SYNCS`;
    4. a delete command found its pod gone or terminating: :data:`NOT_FOUND`;
    5. else :data:`OTHER` (also when only a whole-run metric differs).
    """
    if second is None:
        return OTHER
    row = real.filter(pl.col("t") == second).row(0, named=True)
    if row["failed_creates"] > 0:
        return FAILED_RETRY
    if row["lost_creates"] > 0:
        return LOST_WRITE_OFF
    if row["create_commands"] + row["delete_commands"] > BURST_REPLICAS:
        return SEVERAL_SYNCS
    if row["delete_commands"] > row["deleted"]:
        return NOT_FOUND
    return OTHER


def several_syncs_acted(real: pl.DataFrame) -> bool:
    """Whether a second of a real trace holds more commands than one sync may issue."""
    return bool(((real["create_commands"] + real["delete_commands"]) > BURST_REPLICAS).any())


def compare_one(scenario: Scenario, real_metrics: Mapping[str, Any], real: pl.DataFrame,
                ours: Mapping[str, Any], ours_trace: pl.DataFrame) -> Outcome:
    """One scenario compared: its real metrics and trace against reconsim's."""
    metrics = {m: (real_metrics[m], ours[m]) for m in METRICS_COMPARED}
    second, series = first_difference(real, ours_trace)
    differs = second is not None or any(a != b for a, b in metrics.values())
    return Outcome(scenario.id, metrics, second, series,
                   classify(real, second) if differs else None)


def run(dataset: Dataset, controller: str | None = None,
        ids: Iterable[str] | None = None) -> Conformance:
    """Run the scenarios of ``dataset`` (``ids`` only, if given, in that order) on reconsim
    and compare each with the real controller. The ReplicaSet data set runs with
    ``controller`` (default: the mapping's best): the metrics from the kernels
    (:func:`reconsim.simulate`), the series from the reference model's trace
    (:func:`reconsim.trace`). The Deployment data set runs the Deployment world's
    reference model (:func:`run_deployment`; it takes no ``controller``)."""
    if dataset.kind is DEPLOYMENT:
        return run_deployment(dataset, ids)
    scenarios = (list(dataset.scenarios) if ids is None
                 else [dataset.scenario(i) for i in ids])
    cells: list[Cell] = [cell_of(s, controller) for s in scenarios]
    frame = simulate(cells_frame(cells))
    real_metrics = {row["id"]: row for row in dataset.metrics.iter_rows(named=True)}
    outcomes = tuple(
        compare_one(s, real_metrics[s.id], dataset.trace(s.id), ours, trace_cell(cell))
        for s, cell, ours in zip(scenarios, cells, frame.iter_rows(named=True), strict=True))
    name = cells[0].controller if cells else (controller or "")
    return Conformance(name, outcomes)


def compare_deployment(s: deployment.Scenario, real_metrics: Mapping[str, Any],
                       real: pl.DataFrame) -> Outcome:
    """One Deployment scenario run by the reference model and compared: every metric,
    every series second by second (a difference's cause is :data:`OTHER`: the data set
    records no fault to put it down to; docs/conformance.md gives each one's)."""
    trace = deployment.run(s)
    ours = deployment.metrics(s, trace)
    frame = pl.DataFrame(trace, schema=dict.fromkeys(deployment.TRACE_COLUMNS, pl.Int64))
    metrics = {m: (real_metrics[m], ours[m]) for m in DEPLOYMENT_METRICS}
    second, series = first_difference(real, frame, DEPLOYMENT_SERIES)
    differs = second is not None or any(a != b for a, b in metrics.values())
    return Outcome(s.id, metrics, second, series, OTHER if differs else None)


def run_deployment(dataset: Dataset, ids: Iterable[str] | None = None) -> Conformance:
    """Run the Deployment data set's scenarios (``ids`` only, if given, in that order) on
    the Deployment world's reference model and compare each with the real controllers."""
    scenarios = (list(dataset.scenarios) if ids is None
                 else [dataset.scenario(i) for i in ids])
    real_metrics = {row["id"]: row for row in dataset.metrics.iter_rows(named=True)}
    outcomes = tuple(compare_deployment(s, real_metrics[s.id], dataset.trace(s.id))
                     for s in scenarios)
    return Conformance(DEPLOYMENT_MODEL, outcomes, (OTHER,), DEPLOYMENT, DEPLOYMENT_METRICS)
