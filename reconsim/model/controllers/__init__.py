"""The controllers, each a :class:`~.definition.Controller` written once: the reference
model runs its decision as Python, the kernels compile the same function with numba.

:data:`BUILT_IN` holds reconsim's own, in the order of their codes in a sweep's table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from reconsim.model.controllers.definition import (
    Controller,
    ControllerError,
    Param,
    Round,
)
from reconsim.model.controllers.expectations import EXPECTATIONS
from reconsim.model.controllers.intent import INTENT
from reconsim.model.controllers.ledger import LEDGER

#: reconsim's controllers by name.
BUILT_IN: Final[Mapping[str, Controller]] = {c.name: c for c in (LEDGER, INTENT, EXPECTATIONS)}

__all__ = ["BUILT_IN", "Controller", "ControllerError", "Param", "Round"]
