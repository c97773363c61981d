"""A cell of the Deployment world (its controller ``deployment``): its run, and its
metrics — the world's own figures of a rolling update beside every other world's.

The world itself is :mod:`reconsim.model.deployment` (the real controllers' rules); this
module turns a :class:`~reconsim.model.params.Cell` into its scenario, runs it, and reads
the metrics off its per-second trace: the rolling update's (:data:`ROLLING_METRICS`, the
Deployment data set's definitions, :func:`reconsim.model.deployment.metrics`) and the
figures every world has, counted by the rules every simulator shares
(:class:`reconsim.model.copies.Account`: live = the ready pods in the API, terminating
ones included; desired = ``spec.replicas``): overshoot, excess and missing copy-seconds,
``stable_at``, the disturbance's and each event's response. A round is a second in which
either controller synced (as the event world counts them); ``reads`` are not counted here
(0): the world has no ledger read.

:func:`run` is the reference path, a cell at a time; :func:`kernel_counts` runs a frame's
cells on the Deployment kernel (:mod:`reconsim.model.kernels.deployment`), which counts
the same figures as it goes and equals :func:`metrics_of` on every one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np
import polars as pl

from reconsim.model import deployment
from reconsim.model.copies import Account
from reconsim.model.kinds import NAMED
from reconsim.model.metrics import WORLD_METRICS
from reconsim.model.params import BY_NAME, Cell

#: The rolling update's metrics: the Deployment data set's ``metrics.csv`` columns by the
#: names a cell's table gives them (three renamed, as the cell's own parameters hold the
#: data set's names).
ROLLING_METRICS: Final[Mapping[str, str]] = {
    name: {"peak_surge": "max_surge", "surge_budget": "max_surge_r",
           "unavailable_budget": "max_unavailable_r"}.get(name, name)
    for name in WORLD_METRICS["deployment"]}


def cell_of(scenario: deployment.Scenario) -> Cell:
    """A scenario (of the Deployment data set, say) as a cell of the ``deployment``
    controller: :func:`reconsim.model.deployment.scenario_of` the other way."""
    s = scenario
    return Cell(controller="deployment", desired=s.desired, G=s.G, B=s.B,
                min_ready=s.min_ready_seconds, grace=s.grace, max_surge=s.max_surge,
                max_unavailable=s.max_unavailable,
                initial="desired" if s.start == "settled" else 0, rollout=s.rollouts,
                scale=s.scale, deaths=s.deaths, duration=s.duration)


def run(cell: Cell) -> tuple[list[dict[str, int]], dict[str, Any]]:
    """The cell's per-second trace (:data:`reconsim.model.deployment.TRACE_COLUMNS`) and
    its metrics (:data:`reconsim.model.metrics.METRICS` and the responses)."""
    scenario = deployment.scenario_of(cell)
    trace = deployment.run(scenario)
    return trace, metrics_of(cell, scenario, trace)


def metrics_of(cell: Cell, scenario: deployment.Scenario,
               trace: list[dict[str, int]]) -> dict[str, Any]:
    """A cell's metrics from its trace."""
    account = Account(cell)
    for row in trace:
        t = row["t"]
        account.begin(t)
        account.sample(t, row["live"])
    total = {c: sum(r[c] for r in trace) for c in (
        "created", "create_commands", "delete_commands", "deleted")}
    out = account.metrics({
        "rounds": sum(1 for r in trace if r["rs_syncs"] or r["deploy_syncs"]), **total,
        "reads": 0, "failed_creates": 0})
    rolling = deployment.metrics(scenario, trace)
    for name, source in ROLLING_METRICS.items():
        out[name] = rolling[source]
    return out


#: The kernel's inputs (:data:`reconsim.model.kernels.deployment.DEPLOYMENT_INPUTS`) by the
#: array of a cell's parameter each one is (``initial`` gives ``start``: 'desired' is a
#: settled start, 0 a cold one).
_INPUTS: Final[Mapping[str, str]] = {
    "desired": "desired", "G": "G", "B": "B", "min_ready_seconds": "min_ready",
    "grace": "grace", "max_surge": "max_surge", "max_surge_percent": "max_surge_percent",
    "max_unavailable": "max_unavailable",
    "max_unavailable_percent": "max_unavailable_percent", "duration": "duration",
    "rollouts_offsets": "rollout_offsets", "rollouts_at": "rollout",
    "scale_offsets": "scale_offsets", "scale_at": "scale_at",
    "scale_desired": "scale_desired", "deaths_offsets": "deaths_offsets",
    "deaths_at": "deaths_at", "deaths_count": "deaths_count"}
#: The parameters a cell of the world gives the kernel.
_PARAMS: Final = ("desired", "G", "B", "min_ready", "grace", "max_surge", "max_unavailable",
                  "duration", "rollout", "scale", "deaths", "initial")
#: The rolling update's metrics that may be null (-1 from the kernel): no such second.
_NULLABLE: Final = frozenset({"min_available_after_rollout", "rollout_done_at",
                              "status_complete_at"})


def kernel_arrays(cells: pl.DataFrame) -> dict[str, np.ndarray]:
    """The Deployment kernel's arrays of ``cells``, a checked frame whose rows are all of
    the world (:func:`reconsim.model.simulate.cells_frame`'s columns; a parameter without
    its column takes its default)."""
    n = cells.height
    encoded: dict[str, np.ndarray] = {}
    for name in _PARAMS:
        p = BY_NAME[name]
        column = cells[name] if name in cells.columns else pl.Series(
            name, [p.kind.to_column(p.default)] * n, dtype=p.kind.dtype)
        encoded.update(p.kind.arrays(name, column))
    arrays = {key: encoded[source] for key, source in _INPUTS.items()}
    arrays["start"] = (encoded["initial"] != NAMED).astype(np.int64)
    return arrays


def kernel_counts(cells: pl.DataFrame) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    """Run ``cells`` (a checked frame whose rows are all of the world) on the Deployment
    kernel: each figure every world counts (the world kernel's columns, a row of cells
    each), the rolling update's metrics (:data:`ROLLING_METRICS`, a column each, null where
    there is no such second), and the matrix of the cells' responses with each cell's first
    column of it — what :func:`reconsim.model.simulate` turns into the cells' table, exactly
    as :func:`metrics_of` gives each one. Raises
    :class:`~reconsim.errors.KernelRefusalError` naming the row of a cell the kernel
    cannot run exactly."""
    from reconsim.model.kernels.arrays import response_buffers
    from reconsim.model.kernels.deployment import (
        DEPLOYMENT_OUT_COLUMNS,
        SHARED_OUT_COLUMNS,
        simulate_deployment_arrays,
    )

    arrays = kernel_arrays(cells)
    base, responses = response_buffers(arrays)
    shared = np.empty((len(SHARED_OUT_COLUMNS), cells.height), np.int64)
    out = simulate_deployment_arrays(**arrays, shared=shared, responses=responses,
                                     response_base=base)
    raw: dict[str, Any] = dict(zip(SHARED_OUT_COLUMNS, shared, strict=True))
    rolling = pl.DataFrame({name: out[DEPLOYMENT_OUT_COLUMNS.index(source)]
                            for name, source in ROLLING_METRICS.items()})
    raw.update(rolling.select(
        pl.when(pl.col(name) >= 0).then(pl.col(name)).alias(name) if name in _NULLABLE
        else pl.col(name) for name in ROLLING_METRICS).to_dict())
    return raw, responses, base
