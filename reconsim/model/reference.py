"""The reference model: every copy a record, every second a step — the executable spec.

It follows seed 001's rules (CA19-CA25) and the richer world's numbered rules as literally as
Python allows and is deliberately slow: the kernels (:mod:`reconsim.model.kernels.count`,
:mod:`reconsim.model.kernels.world`) must agree with it on every metric, and the property
tests check that they do. What a rule decides — a create's outcome, a copy's delays, its
listing time, when it runs and dies, which copies a scripted death takes, when the next
round runs, how stale a read is — is :mod:`reconsim.model.rules`', the functions the
kernels compile; the order of the rules and the bookkeeping are this model's own. (A
controller that syncs on events runs on :mod:`reconsim.model.events`, checked against the
event kernel alike.)

Per second t = 0 … duration, in this order (the richer world's numbered rules):

0. a change of desired (``scale``) takes effect; 1. scripted deaths; 2. restarts; 3. does
a round run (its period, or a watch trigger); 4. the read (stale inside a lag window);
5. the decision; 6. creates (faults, slow start); 7. deletes (oldest or newest, or by the
controller's rank; grace); 8. sample the live count.

Where the rules leave a choice open, this model decides (docs/model.md repeats it):

* Random draws are numbered: copy k counts every copy created in the cell (lost
  replies included, failed commands excluded), command j every create command issued
  (failed, lost and scripted-fault ones included), and periodic round i the rounds of
  the periodic schedule only — watch-triggered rounds neither draw nor move it.
* Lag windows: ``0 <= from < to`` and ``extra >= 1`` (a read of the end of the current
  second would see the round's own future). Where windows overlap, the first listed
  that contains t applies. The ``ttl`` clock of ``expectations`` is the true second t.
* Watch trigger: the read a round would make at t (stale inside a window) is compared,
  as a set of copies, with the one it would have made at t - 1 at the same point of
  that second; second 0 compares with an empty read (it has its periodic round
  anyway). Periodic and watch rounds coincide
  into one round.
* Slow start: a batch "has a failure" when a command in it failed or lost its reply —
  both come back to the controller as an error, as a timed-out create does to
  Kubernetes' ``slowStartBatch``. Commands not issued are not counted anywhere.
* ``deleted`` counts delete commands that found their copy not yet removed (they remove
  it; it dies ``grace`` seconds later). A command to a terminating copy is wasted.
* A scripted death of a terminating copy makes it die at once (it is live until then).
* ``initial`` copies (``"desired"``: as many as desired) are the oldest: created, ready and
  listed before the run (at :data:`~reconsim.model.copies.BEFORE_RUN`), so scripted deaths
  and oldest-first deletes take them first; not counted as created, not remembered by the
  controller; their ledger delays are draws 0 … initial - 1, the created copies' follow.
* The disturbance's metrics (``overshoot_after``, ...) cover the seconds from the
  schedule's first death event (its earliest ``at``) on; none at or before the end: null.
* Desired is that of the second: a change (``scale``) applies from its second's start, so
  that second's round and sample see it. An event — a death event or a change, or both in
  one second — opens a window that runs to the next one's second (or the end); each
  window's response is measured as the disturbance's metrics are (:mod:`reconsim.model.rules`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reconsim.model import rolling, rules
from reconsim.model.controllers import CellError, Entry, Round, registry
from reconsim.model.controllers.definition import (
    decide_in_python,
    rank_in_python,
    reference_params,
)
from reconsim.model.copies import Account, Copy, Second, copy_times, shown_time
from reconsim.model.events import run_events
from reconsim.model.params import Cell, damped, permille

__all__ = ["Copy", "Expectations", "Second", "run_reference"]


@dataclass
class Expectations:
    """What a round that acted waits to see: its creations whose replies arrived listed,
    its deletions' entries off the ledger (a controller sees it as ``unobserved``)."""

    set_at: int
    creations: list[Copy]  # observed once each is listed
    deletions: list[Copy] = field(default_factory=list)  # observed once each left the ledger

    def observed(self, r: int) -> bool:
        return (all(c.listed <= r for c in self.creations)
                and all(c.removed is not None and c.removed + c.g <= r for c in self.deletions))


def run_reference(  # noqa: PLR0912, PLR0915 — the spec, in order
        cell: Cell, on_second: Callable[[Second], None] | None = None) -> dict[str, Any]:
    """Run one cell second by second and return its metrics (:data:`.metrics.METRICS`);
    ``on_second``, if given, sees each second's :class:`Second` (it changes nothing).

    >>> run_reference(Cell(G=20))["overshoot"]
    6
    >>> run_reference(Cell(G=20, create_faults=((0, 2, "fail"),)))["failed_creates"]
    2
    """
    if registry.get(cell.controller).world == "deployment":  # a world of its own
        if on_second is not None:
            raise CellError("the Deployment world gives its own per-second trace "
                            "(reconsim.model.deployment.run), not a copy-by-copy one")
        return rolling.run(cell)[1]
    if registry.get(cell.controller).syncs_on_events:  # its world runs in milliseconds
        return run_events(cell, on_second)
    U, seed = cell.U, cell.seed
    cap = cell.max_per_round or 0  # 0: none
    fail_pm, lost_pm = permille(cell.fail_rate), permille(cell.lost_rate)
    lag = rules.lag_table(cell.lag)
    ready_at, ledger_delay = copy_times(cell)  # copy k's ready second and its g

    # In creation order: "oldest" means first in this list. The initial copies come first,
    # numbered 0 .. initial - 1 on the ledger delay's stream (created copies follow).
    copies: list[Copy] = [Copy.initial(ledger_delay(k))
                          for k in range(cell.initial_copies())]
    controller = registry.get(cell.controller)
    p = reference_params(controller, {name: cell.value(name) for name in controller.params})
    # What a restart wipes: its own creations, its last acting round's expectations, and the
    # memory the controller declares.
    remembered: list[Copy] = []
    expecting: Expectations | None = None
    memory = controller.initial_memory()
    faults, faults_left = rules.fault_table(cell.create_faults)

    def live(t: int) -> list[Copy]:  # the copies that run at t, in creation order
        return [c for c in copies if c.runs(t)]

    def read(t: int) -> tuple[int, list[Copy]]:
        """(r, the ledger a round at t reads): the ledger now, or as it stood at the end of
        second r = t - extra inside a lag window (:func:`~.rules.stale_by`). Every removal
        recorded so far happened at or before this point of second t, so one formula serves
        both."""
        r = t - rules.stale_by(t, lag, 0, len(cell.lag))
        return r, [c for c in copies if c.on_ledger(r)]

    def outcome(t: int, j: int) -> int:
        """What comes of create command j at t (:func:`reconsim.model.rules.create_outcome`)."""
        return rules.create_outcome(t, j, seed, fail_pm, lost_pm, faults, faults_left, 0,
                                    len(cell.create_faults))

    rounds = created = create_commands = failed = delete_commands = deleted = reads = 0
    killed = 0
    # The per-second figures, the events' windows and the changes of desired (rules.account).
    account = Account(cell)
    next_periodic, periodic_i = 0, 0
    previous_read: list[Copy] = []  # what a round at t - 1 would have read (t = -1: nothing)
    for t in range(cell.duration + 1):
        # 0. A change of desired takes effect; an event's window opens.
        desired = account.begin(t)
        # 1. Scripted deaths: the oldest copies that run (terminating ones too) die now.
        for at, count in cell.deaths:
            if at == t:
                for c in live(t)[:count]:
                    killed += 1
                    c.death = t
                    if c.removed is None:
                        c.removed = t

        # 2. Restarts: the controller's memory is gone; the ledger and the copies remain.
        if t in cell.restart_at:
            remembered, expecting = [], None
            memory = controller.initial_memory()

        # 3. Does a round run: a periodic round time, or a change of what it would read.
        r, seen = read(t)
        periodic = t == next_periodic
        if periodic:
            next_periodic = rules.next_round(t, U, cell.U_jitter, seed, periodic_i)
            periodic_i += 1
        watched = cell.trigger == "watch" and [id(c) for c in seen] != [
            id(c) for c in previous_read]
        previous_read = seen

        if periodic or watched:
            rounds += 1
            # 4. The read: seen, and everything else the round observes, as of second r.
            reads += len(seen) + cell.ledger_base
            # 5. The decision: the controller's, then damping and the cap.
            pending = sum(1 for c in remembered
                          if c.pending(r))
            unobserved = expecting is not None and not expecting.observed(r)
            view = Round(t=t, desired=desired, seen=len(seen), pending=pending,
                         unobserved=int(unobserved),
                         last_act=-1 if expecting is None else expecting.set_at)
            diff = decide_in_python(controller, view, p, memory)
            diff = damped(diff, permille(cell.gain))  # a damped loop corrects part of the gap
            diff = rules.capped(diff, cap)
            # 6. Creates, in slow-start batches 1, 2, 4, ... if enabled.
            if diff > 0:
                arrived: list[Copy] = []
                remaining, batch = diff, 1 if cell.slow_start else diff
                while remaining > 0:
                    batch = min(batch, remaining)
                    error = False
                    for _ in range(batch):
                        result = outcome(t, create_commands)
                        create_commands += 1
                        if result == rules.FAIL:  # nothing is created
                            failed += 1
                            error = True
                            continue
                        k = len(copies)
                        ready = ready_at(t, k)
                        g = ledger_delay(k)
                        copy = Copy(birth=t, ready=ready, g=g, listed=rules.listed_at(
                            t, ready, g, cell.observe == "created"))
                        copies.append(copy)
                        created += 1
                        if result == rules.LOST_REPLY:  # created; the controller never learns it
                            error = True
                        else:
                            arrived.append(copy)
                    remaining -= batch
                    if error and cell.slow_start:
                        break  # the rest of this round's creates are not issued
                    batch *= 2
                remembered.extend(arrived)
                expecting = Expectations(t, creations=arrived)
            # 7. Deletes to the entries of the ledger it read: the oldest or newest, or
            # those the controller's rank puts first (equal keys in that order).
            elif diff < 0:
                delete_commands += -diff
                order = seen if cell.delete_order == "oldest" else seen[::-1]
                if controller.rank is not None:
                    order = sorted(order, key=lambda c: rank_in_python(controller, Entry(
                        t=t, created=shown_time(c.birth),
                        ready=shown_time(c.ready) if c.ready + c.g <= r else -1), p))
                targets = order[:-diff]
                for c in targets:  # a command to a removed copy is wasted
                    if c.removed is None:
                        c.removed = t
                        c.death = rules.dies_at(t, cell.grace)  # it runs until then
                        deleted += 1
                expecting = Expectations(t, creations=[], deletions=targets)

        # 8. Sample the live count.
        n_live = len(live(t))
        account.sample(t, n_live)
        if on_second is not None:
            on_second(Second(t, n_live, seen if periodic or watched else None, copies, {
                "rounds": rounds, "created": created, "create_commands": create_commands,
                "failed_creates": failed, "delete_commands": delete_commands,
                "deleted": deleted, "reads": reads, "killed": killed}, desired))

    return account.metrics({
        "rounds": rounds, "created": created, "delete_commands": delete_commands,
        "deleted": deleted, "reads": reads, "create_commands": create_commands,
        "failed_creates": failed})

