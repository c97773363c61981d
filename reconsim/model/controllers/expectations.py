"""``expectations``: the gate of Kubernetes' ReplicaSet controller. After a round that
acted it makes no correction until the read shows that round's commands (its creations
listed, its deletions gone from the ledger), or until ``ttl`` seconds have passed."""

from __future__ import annotations

from typing import Any

from reconsim.model.controllers.definition import Controller, Param
from reconsim.model.kinds import MAX_SECONDS, Int


def decide(v: Any, p: Any, m: Any) -> int:
    """The gap, or nothing while its last corrections are unobserved and younger than ttl."""
    if v.unobserved and v.t - v.last_act < p.ttl:
        return 0
    return v.desired - v.seen  # type: ignore[no-any-return]


EXPECTATIONS = Controller(
    "expectations", decide,
    "Kubernetes' ReplicaSet gate: no corrections while its last ones are unobserved and "
    "younger than ttl",
    params={"ttl": Param(Int(0, MAX_SECONDS), 300,
                         "expectations: seconds before unobserved expectations expire")},
    sees=("unobserved", "last_act"), steady=True)
