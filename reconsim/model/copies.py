"""The records the reference models keep of each copy and hand their observers each second:
the rounds' (:mod:`reconsim.model.reference`) and the events' (:mod:`reconsim.model.events`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


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

    def on_ledger(self, r: int) -> bool:
        """Whether the ledger lists it at second ``r``: listed, and not removed g or more ago."""
        return self.listed <= r and not (self.removed is not None and self.removed <= r - self.g)

    def removed_by(self, r: int) -> bool:
        return self.removed is not None and self.removed <= r


@dataclass(frozen=True)
class Second:
    """What second t left behind, for an observer of :func:`~reconsim.run_reference` (the per-second
    trace of :mod:`reconsim.model.trace` is one).

    ``live`` is step 8's sample; ``read`` the ledger the round read (stale inside a lag
    window), None when no round ran; ``copies`` every copy created so far, in creation
    order — the model's own records: read them during the call, never change them;
    ``totals`` the running counts up to and including second t (``rounds``, ``created``,
    ``create_commands``, ``failed_creates``, ``delete_commands``, ``deleted``, ``reads``
    and ``killed``, the copies scripted deaths killed).
    """

    t: int
    live: int
    read: list[Copy] | None
    copies: list[Copy]
    totals: Mapping[str, int]
