"""The records the reference models keep of each copy and hand their observers each second:
the rounds' (:mod:`reconsim.model.reference`) and the events' (:mod:`reconsim.model.events`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from reconsim.model import metrics, rules
from reconsim.model.kinds import MAX_SECONDS

if TYPE_CHECKING:
    from reconsim.model.params import Cell

#: The second the initial copies (``initial``) were created and became ready: before any
#: second a read can look at (a stale read's ``t - extra`` reaches back MAX_SECONDS at
#: most), so they are listed from before the run with any ledger delay (at most
#: 2 x MAX_SECONDS). A controller sees their times as 0 (:func:`shown_time`).
BEFORE_RUN: Final = -4 * MAX_SECONDS


def shown_time(t: int) -> int:
    """A copy's creation or ready second as a controller sees it: times before the run
    (the initial copies') read as 0."""
    return max(0, t)


def or_never(t: int | None) -> int:
    """A copy's removal or death second as the rules take it: :data:`~.rules.NEVER` for
    none yet."""
    return rules.NEVER if t is None else t


@dataclass
class Copy:
    """One copy of the service, with the times the richer world gives each copy.

    ``g`` is its own ledger delay; it is ``listed`` from ``ready + g`` (or ``birth + g``
    with observe="created"); ``removed`` is its first delete command or its death,
    whichever came first; ``death`` is when it stops running.
    """

    birth: int
    ready: int
    g: int
    listed: int
    removed: int | None = None
    death: int | None = None

    @classmethod
    def initial(cls, g: int) -> Copy:
        """An initial copy with ledger delay ``g``: created, ready and listed before the run."""
        return cls(birth=BEFORE_RUN, ready=BEFORE_RUN, g=g, listed=BEFORE_RUN + g)

    def on_ledger(self, r: int) -> bool:
        """Whether the ledger lists it at second ``r``: listed, and not removed g or more ago."""
        return rules.on_ledger(self.listed, or_never(self.removed), self.g, r)

    def pending(self, r: int) -> bool:
        """Whether it is pending to a round that observes second ``r``
        (:func:`~reconsim.model.rules.pending_at`)."""
        return rules.pending_at(self.listed, or_never(self.removed), r)

    def runs(self, t: int) -> bool:
        """Whether it runs at second ``t`` (:func:`~reconsim.model.rules.runs`)."""
        return rules.runs(self.ready, or_never(self.death), t)


@dataclass(frozen=True)
class Second:
    """What second t left behind, for an observer of :func:`~reconsim.run_reference` (the per-second
    trace of :mod:`reconsim.model.trace` is one).

    ``live`` is step 8's sample; ``read`` the ledger the round read (stale inside a lag
    window), None when no round ran; ``copies`` every copy created so far, in creation
    order — the model's own records: read them during the call, never change them;
    ``totals`` the running counts up to and including second t (``rounds``, ``created``,
    ``create_commands``, ``failed_creates``, ``delete_commands``, ``deleted``, ``reads``
    and ``killed``, the copies scripted deaths killed); ``desired`` the copies that should
    run in second t (the scale schedule's).
    """

    t: int
    live: int
    read: list[Copy] | None
    copies: list[Copy]
    totals: Mapping[str, int]
    desired: int


def after_metrics(duration: int, after: int, overshoot: int, missing: int,
                  last_drift: int) -> dict[str, int]:
    """The disturbance's metrics (``overshoot_after``, ``missing_after``, ``settle_after``)
    from their running values over seconds ``after`` .. ``duration``, ``after`` the first
    death event's second (``last_drift``: the last of them with live != desired, else
    ``after``), as a run counts them (:func:`reconsim.model.rules.after_figures`)."""
    return dict(zip(("overshoot_after", "missing_after", "settle_after"),
                    rules.after_figures(duration, after, overshoot, missing, last_drift),
                    strict=True))


def accounted(acc: Any, duration: int) -> dict[str, int]:
    """The counters a run's running values ``acc`` hold (:func:`reconsim.model.rules.account`):
    the per-second figures, ``last_drift``, ``raised`` and the disturbance's metrics (as
    :func:`after_metrics` gives them)."""
    return {"overshoot": int(acc[rules.OVERSHOOT]), "excess_copy_seconds": int(acc[rules.EXCESS]),
            "missing_copy_seconds": int(acc[rules.MISSING]),
            "last_drift": int(acc[rules.LAST_DRIFT]), "raised": int(acc[rules.RAISED]),
            **after_metrics(duration, int(acc[rules.AFTER]), int(acc[rules.AFTER_OVER]),
                            int(acc[rules.AFTER_MISSING]), int(acc[rules.AFTER_DRIFT]))}


class Account:
    """A reference model's per-second figures, accounted by the rules every simulator
    shares (:mod:`reconsim.model.rules`): the cell's events' windows, its changes of
    desired, the run's running values and its responses."""

    def __init__(self, cell: Cell) -> None:
        self.cell = cell
        self.events = set(cell.event_seconds())
        self.changes = dict(cell.scale)
        self.desired = cell.desired
        self.responses = np.zeros((rules.RESPONSE_ROWS, max(1, len(self.events))), np.int64)
        first = min((at for at, _ in cell.deaths), default=cell.duration + 1)
        self.values = rules.start_account(min(first, cell.duration + 1))

    def begin(self, t: int) -> int:
        """Second ``t`` begins: its change of desired, if any, takes effect and its event's
        window opens, if it has one. Returns the desired of second ``t``."""
        if t in self.changes:
            self.values = rules.change_desired(self.values, self.desired, self.changes[t])
            self.desired = self.changes[t]
        if t in self.events:
            self.values = rules.begin_event(self.values, t, self.responses, 0)
        return self.desired

    def sample(self, t: int, live: int) -> None:
        """Second ``t`` ends with ``live`` copies running."""
        self.values = rules.account(self.values, t, t + 1, live, self.desired)

    def metrics(self, counts: Mapping[str, int]) -> dict[str, Any]:
        """The cell's metrics from its run's other ``counts`` and these figures."""
        rules.end_events(self.values, self.cell.duration, self.responses, 0)
        return metrics.of_run({**counts, **accounted(self.values, self.cell.duration)},
                              self.cell, metrics.responses_of(
                                  self.responses, 0, int(self.values[rules.EVENTS])))


def copy_times(cell: Cell) -> tuple[Callable[[int, int], int], Callable[[int], int]]:
    """The cell's rules of a copy's times, as the reference models call them:
    ``ready_at(t, k)``, the ready second of copy k created at t
    (:func:`reconsim.model.rules.ready_at`), and ``ledger_delay(k)``, its ledger delay g
    (:func:`reconsim.model.rules.ledger_delay`), on the cell's delay tables or spreads."""
    b_table, g_table = rules.delay_table(cell.B_delays), rules.delay_table(cell.G_delays)

    def ready_at(t: int, k: int) -> int:
        return rules.ready_at(t, cell.B, cell.seed, k, cell.B_spread, b_table, 0,
                              len(cell.B_delays))

    def ledger_delay(k: int) -> int:
        return rules.ledger_delay(cell.G, cell.seed, k, cell.G_spread, g_table, 0,
                                  len(cell.G_delays))

    return ready_at, ledger_delay
