"""``deployment``: the real Kubernetes Deployment controller (v1.23.13) rolling a
Deployment out, each of its ReplicaSets reconciled by the real ReplicaSet controller, in a
world of their own (:mod:`reconsim.model.deployment`, the rules on docs/deployment.md).

Its cells read the rolling update's parameters (``max_surge``, ``max_unavailable``,
``min_ready``, ``rollout``) beside the world's ``desired``, ``G`` (the delay of every pod
event to the controllers' cache), ``B``, ``grace``, ``deaths``, ``scale``, ``initial``
and ``duration``, and give the rolling update's figures as metrics. It declares
``compiled=False`` because its ``decide`` never runs in the round kernels: ``simulate``
runs a frame's Deployment cells on the world's own kernel
(:mod:`reconsim.model.kernels.deployment`, through :func:`reconsim.model.rolling.kernel_counts`),
one cell (``run_cell``, ``reconsim run``, a trace) on its reference model.
"""

from __future__ import annotations

from typing import Any

from reconsim.model.controllers.definition import Controller, ControllerError


def decide(v: Any, p: Any, m: Any) -> int:
    """Never called: the two controllers' own logic runs in their world."""
    raise ControllerError("controller 'deployment' runs in the Deployment world, not in rounds")


DEPLOYMENT = Controller(
    "deployment", decide,
    "Kubernetes' Deployment controller (RollingUpdate) with its ReplicaSets' controller, "
    "v1.23.13, in the Deployment world", compiled=False, world="deployment",
    version="v1.23.13")
