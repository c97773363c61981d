"""The controllers, each a :class:`~.definition.Controller` written once: the reference
model runs its decision as Python, the kernels compile the same function with numba.

:mod:`.registry` knows every controller of the process: reconsim's own
(:func:`~.registry.built_in`), registered through the same :func:`~.registry.register` as
a user's, resolved from its import path or entry point.
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
from reconsim.model.controllers.registry import built_in, known, register, resolve

__all__ = ["ADDED", "DELETED", "UPDATED", "CellError", "Controller",
           "ControllerError", "DecisionError", "Entry",
           "Event", "Item", "Outcome", "Param", "Round", "RunawayError", "Sync", "built_in",
           "known", "register", "resolve"]
