"""``intent``: remembers its own creations and counts those not listed yet, the remedy
the reconciliation-loop lesson (seed 001) proposes."""

from __future__ import annotations

from typing import Any

from reconsim.model.controllers.definition import Controller


def decide(v: Any, p: Any, m: Any) -> int:
    """The gap, less its creations that answered and are not on the read yet."""
    return v.desired - v.seen - v.pending  # type: ignore[no-any-return]


INTENT = Controller(
    "intent", decide,
    "also counts its own pending creations: diff = desired - ledger - pending",
    sees=("pending",), steady=True)
