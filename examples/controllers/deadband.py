"""A deadband controller: no correction while the read is within ``band`` of desired.

Stateless, with one parameter. Use it in a spec as ``controller = ["deadband:DEADBAND"]``
with this folder on the spec's ``import_path``, and sweep its band as an axis:
``band = [0, 1, 2]``.
"""

from reconsim.controllers import Controller, Int, Param


def decide(v, p, m):
    """The whole gap, or nothing while it is at most ``band`` either way."""
    gap = v.desired - v.seen
    if -p.band <= gap <= p.band:
        return 0
    return gap


DEADBAND = Controller(
    "deadband", decide, "no correction while |desired - ledger| <= band",
    params={"band": Param(Int(0, 1000), 1, "deadband: the gap it leaves alone")},
    steady=True)
