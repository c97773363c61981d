"""A patient controller: it scales up at once, counting its own creations still in
flight, and scales down only a surplus that has lasted more than ``patience`` rounds in a
row (a scale-down stabilisation window, counted in rounds).

``decide`` is plain Python that numba compiles as it is: integers, comparisons and the
memory array ``m``, nothing else.
"""

from reconsim.controllers import Controller, Int, Param

SURPLUS_ROUNDS = 0  # its one memory slot: rounds in a row that saw a surplus


def decide(v, p, m):
    """Create the shortfall at once; delete a surplus once it outlasts ``patience`` rounds."""
    gap = v.desired - v.seen - v.pending
    if gap >= 0:
        m[SURPLUS_ROUNDS] = 0
        return gap
    m[SURPLUS_ROUNDS] += 1
    if m[SURPLUS_ROUNDS] <= p.patience:
        return 0
    m[SURPLUS_ROUNDS] = 0
    return gap


PATIENT = Controller(
    "patient", decide,
    "creates at once (its pending creations counted); deletes a surplus only after it "
    "lasted more than patience rounds",
    params={"patience": Param(Int(0, 1000), 3, "patient: rounds a surplus must last "
                                                "before it is deleted")},
    memory={"surplus_rounds": 0},
    sees=("pending",),
    steady=True,
    version="1.0")
