"""Write your own controller: everything a definition needs, in one import.

>>> from reconsim.controllers import Controller, Int, Param
>>> def decide(v, p, m):
...     gap = v.desired - v.seen
...     return 0 if abs(gap) <= p.band else gap
>>> DEADBAND = Controller("deadband", decide, "no correction while |gap| <= band",
...                       params={"band": Param(Int(0, 1000), 1, "the gap it leaves alone")},
...                       steady=True)

A parameter a cell holds as a field of its own is taken by declaring it as reconsim's
controllers do: ``params={"ttl": TTL}`` makes the controller's ``p.ttl`` the cell's
``ttl`` (the expectations' lifetime), as for ``expectations`` and ``replicaset``
(``LOG_SCALE_DOWN``, ``replicaset``'s ``log_scale_down``, likewise).

The decision's arguments and result, ``rank``, ``sees``, ``memory`` (by name with
:func:`slots`) and ``steady`` are described in
:mod:`reconsim.model.controllers.definition`; check a definition with
:func:`reconsim.testing.check_controller` (``reconsim check-controller``).
"""

from reconsim.model.controllers.definition import (
    Controller,
    ControllerError,
    DecisionError,
    Entry,
    Param,
    Round,
    RunawayError,
    slots,
)
from reconsim.model.controllers.expectations import TTL
from reconsim.model.controllers.registry import built_in, known, register, resolve
from reconsim.model.controllers.replicaset import LOG_SCALE_DOWN
from reconsim.model.kinds import Choice, Flag, Int, Thousandths

__all__ = ["LOG_SCALE_DOWN", "TTL", "Choice", "Controller", "ControllerError", "DecisionError",
           "Entry", "Flag", "Int", "Param", "Round", "RunawayError", "Thousandths", "built_in",
           "known", "register", "resolve", "slots"]
