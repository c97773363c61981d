"""``ledger``: trusts the ledger only. The loop of the reconciliation-loop lesson
(seed 001), whose duplicates follow ``desired x (ceil((G + B) / U) - 1)``."""

from __future__ import annotations

from typing import Any

from reconsim.model.controllers.definition import Controller


def decide(v: Any, p: Any, m: Any) -> int:
    """Correct the whole gap between desired and what the read lists."""
    return v.desired - v.seen  # type: ignore[no-any-return]


LEDGER = Controller(
    "ledger", decide, "trusts the ledger only: diff = desired - ledger entries", steady=True)
