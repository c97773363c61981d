"""Hypothesis strategies for cells, sized so the reference model stays quick."""

from __future__ import annotations

from hypothesis import strategies as st

from reconsim import CONTROLLERS, Cell
from reconsim.model.params import OBSERVE


@st.composite
def cells(draw: st.DrawFn, max_duration: int = 240) -> Cell:
    """A random cell, edges included: B = 0, G = 0, desired = 0, U = 1, durations 0 and 1,
    several deaths in one second, deaths larger than the live count, deaths after the end;
    every controller and variant: observe, max_per_round, gain, ttl (0 too), restarts."""
    duration = draw(st.integers(0, max_duration))
    at = st.integers(0, duration + 30)  # some events fall after the end of the run
    events = draw(st.lists(st.tuples(at, st.integers(0, 20)), max_size=5))
    if events and draw(st.booleans()):  # a second event in the same second as the first
        events.append((events[0][0], draw(st.integers(0, 20))))
    return Cell(
        controller=draw(st.sampled_from(tuple(CONTROLLERS))),
        desired=draw(st.integers(0, 10)),
        U=draw(st.integers(1, 40)),
        G=draw(st.integers(0, 50)),
        B=draw(st.integers(0, 25)),
        duration=duration,
        deaths=tuple(events),
        ledger_base=draw(st.integers(0, 30)),
        observe=draw(st.sampled_from(OBSERVE)),
        max_per_round=draw(st.none() | st.integers(1, 8)),
        gain=draw(st.sampled_from((1.0, 1.0, 0.999, 0.75, 0.5, 0.333, 0.1, 0.001))),
        ttl=draw(st.integers(0, 120)),
        restart_at=tuple(draw(st.lists(st.integers(0, duration + 10), max_size=3))),
    )
