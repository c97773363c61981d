"""A scenario of the ReplicaSet data set as a reconsim cell: the one place that says how."""

from __future__ import annotations

from typing import Final

from reconsim.conformance.load import Scenario
from reconsim.model.controllers import registry
from reconsim.model.controllers.expectations import EXPECTATIONS_TIMEOUT
from reconsim.model.deployment import BURST_REPLICAS
from reconsim.model.params import Cell, applies, make_cell

#: The controllers the mapping prefers, best first: the first one known is the default.
PREFERRED: Final = ("replicaset", "expectations")


def default_controller() -> str:
    """The best controller available for the mapping: the first of :data:`PREFERRED` that
    is known."""
    names = registry.names()
    return next(name for name in PREFERRED if name in names)


def cell_of(scenario: Scenario, controller: str | None = None) -> Cell:
    """The reconsim cell that stands for ``scenario``, run by ``controller`` (default
    :func:`default_controller`).

    The world the data set states, in reconsim's parameters:

    * pods are counted from creation + G, Pending ones too: ``observe="created"``;
    * a sync runs on every event reaching the controller's cache (with ``replicaset``,
      which syncs on events, also on its status writes and retries), and there is no
      periodic resync within the run: ``trigger="watch"``, ``U = duration + 1`` (so the
      only periodic round, or resync, is second 0, where the real controller's first
      sync is);
    * the deletion ranking: ``replicaset`` ranks pods as ``ActivePodsWithRanks`` does,
      with ``log_scale_down`` the scenario's ``logarithmic_scale_down``; for the others,
      the youngest pods first, as every pod is on one rank: ``delete_order="newest"``;
    * ``burstReplicas`` caps a sync's creates and deletes: ``max_per_round=500``;
    * creates go in ``slowStartBatch`` batches: ``slow_start=True``;
    * the expectations expire after 5 minutes: ``ttl=300`` (``expectations``,
      ``replicaset``);
    * the controller reads its own ReplicaSet's pods only: ``ledger_base=0``;
    * deaths and create faults are the scenario's scripted schedules, and ``desired``,
      ``G``, ``B``, ``grace`` and ``duration`` its own values.

    ``logarithmic_scale_down`` has no counterpart for the controllers that decide in
    rounds: they rank deletions by creation order alone.
    """
    name = default_controller() if controller is None else controller
    ranks = {"log_scale_down": scenario.logarithmic_scale_down} if applies(
        "log_scale_down", registry.resolve(name).name) else {}
    return make_cell(
        controller=name, **ranks, ttl=EXPECTATIONS_TIMEOUT, observe="created",
        delete_order="newest",
        max_per_round=BURST_REPLICAS, slow_start=True, trigger="watch",
        U=scenario.duration + 1, ledger_base=0, deaths=scenario.deaths,
        create_faults=scenario.create_faults, G=scenario.G, B=scenario.B,
        grace=scenario.grace, desired=scenario.desired, duration=scenario.duration)
