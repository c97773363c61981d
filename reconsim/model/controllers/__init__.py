"""The controllers, each a :class:`~.definition.Controller` written once: the reference
model runs its decision as Python, the kernels compile the same function with numba.

:data:`BUILT_IN` holds reconsim's own; :mod:`.registry` knows every controller of the
process, a user's resolved from its import path or entry point.
"""

from __future__ import annotations

from reconsim.model.controllers.definition import (
    ADDED,
    DELETED,
    UPDATED,
    CellError,
    Controller,
    ControllerError,
    DecisionError,
    Entry,
    Event,
    Item,
    Outcome,
    Param,
    Round,
    RunawayError,
    Sync,
)
from reconsim.model.controllers.registry import BUILT_IN, known, register, resolve

__all__ = ["ADDED", "BUILT_IN", "DELETED", "UPDATED", "CellError", "Controller",
           "ControllerError", "DecisionError", "Entry",
           "Event", "Item", "Outcome", "Param", "Round", "RunawayError", "Sync", "known",
           "register", "resolve"]
