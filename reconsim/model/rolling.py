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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from reconsim.model import deployment
from reconsim.model.copies import Account
from reconsim.model.metrics import WORLD_METRICS
from reconsim.model.params import Cell

#: The rolling update's metrics: the Deployment data set's ``metrics.csv`` columns by the
#: names a cell's table gives them (three renamed, as the cell's own parameters hold the
#: data set's names).
ROLLING_METRICS: Final[Mapping[str, str]] = {
    name: {"peak_surge": "max_surge", "surge_budget": "max_surge_r",
           "unavailable_budget": "max_unavailable_r"}.get(name, name)
    for name in WORLD_METRICS["deployment"]}


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
