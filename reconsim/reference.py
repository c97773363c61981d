"""The reference model: every copy a record, every second a step — the executable spec.

It follows seed 001's rules (CA19-CA25) as literally as Python allows and is
deliberately slow: the vectorised kernel (:mod:`reconsim.kernel`) must agree
with it on every metric, and the property tests check that it does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reconsim.params import Cell


@dataclass
class Copy:
    """One copy of the service: created at ``birth``, ready at ``ready``, dead at ``death``."""

    birth: int
    ready: int
    death: int | None = None


def run_reference(cell: Cell) -> dict[str, Any]:
    """Run one cell second by second and return its metrics (see :data:`reconsim.params.METRICS`).

    >>> run_reference(Cell(G=20))["overshoot"]
    6
    """
    G, U, B, desired = cell.G, cell.U, cell.B, cell.desired
    copies: list[Copy] = []  # in creation order: "oldest" means first in this list

    def live(t: int) -> list[Copy]:
        return [c for c in copies if c.ready <= t and (c.death is None or c.death > t)]

    def ledger(t: int) -> list[Copy]:
        # The ledger shows a copy G seconds after it is ready, and drops it G seconds after it dies.
        return [c for c in copies if c.ready + G <= t and (c.death is None or c.death + G > t)]

    rounds = created = delete_commands = deleted = reads = 0
    overshoot = excess = missing = 0
    last_drift = 0
    for t in range(cell.duration + 1):
        for at, count in cell.deaths:  # scripted deaths: the oldest live copies drop
            if at == t:
                for c in live(t)[:count]:
                    c.death = t

        if t % U == 0:
            rounds += 1
            seen = ledger(t)
            reads += len(seen) + cell.ledger_base
            pending = 0
            if cell.controller == "intent":  # its own creations not yet on the ledger
                pending = sum(1 for c in copies if c.death is None and c.ready + G > t)
            diff = desired - len(seen) - pending
            if diff > 0:
                copies.extend(Copy(birth=t, ready=t + B) for _ in range(diff))
                created += diff
            elif diff < 0:
                delete_commands += -diff
                for c in seen[:-diff]:  # a command to an already-dead copy changes nothing
                    if c.death is None:
                        c.death = t
                        deleted += 1

        n_live = len(live(t))
        overshoot = max(overshoot, n_live - desired)
        excess += max(0, n_live - desired)
        missing += max(0, desired - n_live)
        if n_live != desired:
            last_drift = t

    work = created + delete_commands
    return {
        "rounds": rounds,
        "work": work,
        "work_per_round": work / rounds,
        "created": created,
        "unneeded": created - desired - sum(count for _, count in cell.deaths),
        "delete_commands": delete_commands,
        "deleted": deleted,
        "overshoot": overshoot,
        "stable_at": None if last_drift == cell.duration else last_drift + 1,
        "reads": reads,
        "reads_per_round": reads / rounds,
        "excess_copy_seconds": excess,
        "missing_copy_seconds": missing,
    }
