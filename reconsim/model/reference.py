"""The reference model: every copy a record, every second a step — the executable spec.

It follows seed 001's rules (CA19-CA25) as literally as Python allows and is
deliberately slow: the vectorised kernel (:mod:`reconsim.model.kernel`) must agree
with it on every metric, and the property tests check that it does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from reconsim.model.params import Cell, damped, permille


@dataclass
class Copy:
    """One copy of the service: created at ``birth``, ready at ``ready``, dead at ``death``.

    ``listed`` is the second from which the ledger shows it (while it lives, and for G
    seconds after it dies): G after it is ready, or G after creation with observe="created".
    """

    birth: int
    ready: int
    listed: int
    death: int | None = None


@dataclass
class Expectations:
    """What the ``expectations`` controller waits to see after a round that acted."""

    set_at: int
    creations: list[Copy]  # observed once the ledger has caught up with each creation
    deletions: list[Copy]  # observed once each has left the ledger

    def observed(self, t: int, G: int) -> bool:
        return (all(c.listed <= t for c in self.creations)
                and all(c.death is not None and c.death + G <= t for c in self.deletions))


def run_reference(cell: Cell) -> dict[str, Any]:  # noqa: PLR0912 — the spec, in order
    """Run one cell second by second and return its metrics (:data:`.params.METRICS`).

    >>> run_reference(Cell(G=20))["overshoot"]
    6
    """
    G, U, B, desired = cell.G, cell.U, cell.B, cell.desired
    cap = cell.max_per_round
    copies: list[Copy] = []  # in creation order: "oldest" means first in this list
    # The controller's memory, which a restart wipes: its own creations, its expectations.
    remembered: list[Copy] = []
    expecting: Expectations | None = None

    def live(t: int) -> list[Copy]:
        return [c for c in copies if c.ready <= t and (c.death is None or c.death > t)]

    def ledger(t: int) -> list[Copy]:
        # The ledger shows a copy from `listed` on, and drops it G seconds after it dies.
        return [c for c in copies if c.listed <= t and (c.death is None or c.death + G > t)]

    rounds = created = delete_commands = deleted = reads = 0
    overshoot = excess = missing = 0
    last_drift = 0
    for t in range(cell.duration + 1):
        for at, count in cell.deaths:  # scripted deaths: the oldest live copies drop
            if at == t:
                for c in live(t)[:count]:
                    c.death = t

        if t in cell.restart_at:  # the controller restarts: its memory is gone
            remembered, expecting = [], None

        if t % U == 0:
            rounds += 1
            seen = ledger(t)
            reads += len(seen) + cell.ledger_base
            diff = desired - len(seen)
            if cell.controller == "intent":  # its own creations not yet on the ledger
                diff -= sum(1 for c in remembered if c.death is None and c.listed > t)
            if (cell.controller == "expectations" and expecting is not None
                    and not expecting.observed(t, G) and t - expecting.set_at < cell.ttl):
                diff = 0  # waiting for its last corrections to show: no action this round
            diff = damped(diff, permille(cell.gain))  # a damped loop corrects part of the gap
            if cap is not None:
                diff = max(-cap, min(cap, diff))
            if diff > 0:
                new = [Copy(birth=t, ready=t + B,
                            listed=(t + B if cell.observe == "ready" else t) + G)
                       for _ in range(diff)]
                copies.extend(new)
                remembered.extend(new)
                created += diff
                expecting = Expectations(t, creations=new, deletions=[])
            elif diff < 0:
                delete_commands += -diff
                targets = seen[:-diff]
                for c in targets:  # a command to an already-dead copy changes nothing
                    if c.death is None:
                        c.death = t
                        deleted += 1
                expecting = Expectations(t, creations=[], deletions=targets)

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
