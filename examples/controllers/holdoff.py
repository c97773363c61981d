"""A hold-off controller: after acting, it waits until the read has moved to what it asked
for, or until ``hold`` seconds have passed.

It keeps its own memory (when it acted, and the read size it then expected) instead of
asking the loop whether its commands were observed: two memory slots, wiped by a restart,
declared once with their initial values and read by name.
"""

from reconsim.controllers import Controller, Int, Param, slots

M = slots(acted_at=-1, target=0)  # its memory: when it acted, the read it then expected


def decide(v, p, m):
    """The gap, unless it acted less than ``hold`` seconds ago and the read has not yet
    reached the size it expected then."""
    if m[M.acted_at] >= 0 and v.t - m[M.acted_at] < p.hold and v.seen != m[M.target]:
        return 0
    gap = v.desired - v.seen
    if gap != 0:
        m[M.acted_at] = v.t
        m[M.target] = v.desired
    return gap


HOLDOFF = Controller(
    "holdoff", decide, "after acting, waits until the read shows desired or hold s passed",
    params={"hold": Param(Int(0, 100_000), 60, "holdoff: seconds it waits at most")},
    memory=M)
