"""``expectations``: the gate of Kubernetes' ReplicaSet controller. After a round that
acted it makes no correction until the read shows that round's commands (its creations
listed, its deletions gone from the ledger), or until ``ttl`` seconds have passed."""

from __future__ import annotations

from typing import Any, Final

from reconsim.model.controllers.definition import Controller, Param
from reconsim.model.kinds import MAX_SECONDS, Int

#: client-go's ``ExpectationsTimeout``, seconds: how long unobserved expectations hold.
EXPECTATIONS_TIMEOUT: Final = 300
#: ``ttl``, the expectations' lifetime: a parameter of every controller that keeps them
#: (this one and ``replicaset``), declared here once.
TTL: Final = Param(Int(0, MAX_SECONDS), EXPECTATIONS_TIMEOUT,
                   "expectations: seconds before unobserved expectations expire")


def decide(v: Any, p: Any, m: Any) -> int:
    """The gap, or nothing while its last corrections are unobserved and younger than ttl."""
    if v.unobserved and v.t - v.last_act < p.ttl:
        return 0
    return v.desired - v.seen  # type: ignore[no-any-return]


EXPECTATIONS = Controller(
    "expectations", decide,
    "Kubernetes' ReplicaSet gate: no corrections while its last ones are unobserved and "
    "younger than ttl",
    params={"ttl": TTL},
    sees=("unobserved", "last_act"), steady=True)
