"""A hold-off controller: after acting, it waits until the read has moved to what it asked
for, or until ``hold`` seconds have passed.

It keeps its own memory (when it acted, and the read size it then expected) instead of
asking the loop whether its commands were observed: two memory slots, wiped by a restart.
"""

from reconsim.controllers import Controller, Int, Param

ACTED_AT, TARGET = 0, 1  # its memory slots, in declared order


def decide(v, p, m):
    """The gap, unless it acted less than ``hold`` seconds ago and the read has not yet
    reached the size it expected then."""
    if m[ACTED_AT] >= 0 and v.t - m[ACTED_AT] < p.hold and v.seen != m[TARGET]:
        return 0
    gap = v.desired - v.seen
    if gap != 0:
        m[ACTED_AT] = v.t
        m[TARGET] = v.desired
    return gap


HOLDOFF = Controller(
    "holdoff", decide, "after acting, waits until the read shows desired or hold s passed",
    params={"hold": Param(Int(0, 100_000), 60, "holdoff: seconds it waits at most")},
    memory={"acted_at": -1, "target": 0})
