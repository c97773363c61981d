"""The controllers, each a :class:`~.definition.Controller` written once: the reference
model runs its decision as Python, the kernels compile the same function with numba.

:data:`BUILT_IN` holds reconsim's own; :mod:`.registry` knows every controller of the
process, a user's resolved from its import path or entry point.
"""

from __future__ import annotations

from reconsim.model.controllers.definition import (
    Controller,
    ControllerError,
    Entry,
    Param,
    Round,
)
from reconsim.model.controllers.registry import BUILT_IN, known, register, resolve

__all__ = ["BUILT_IN", "Controller", "ControllerError", "Entry", "Param", "Round", "known",
           "register", "resolve"]
