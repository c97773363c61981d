"""Hypothesis strategies for cells, sized so the reference model stays quick."""

from __future__ import annotations

import dataclasses

from hypothesis import strategies as st

from reconsim import CONTROLLERS, Cell
from reconsim.model.params import DELETE_ORDERS, FAULT_KINDS, OBSERVE, SEED_MAX, TRIGGERS


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


@st.composite
def world_cells(draw: st.DrawFn, max_duration: int = 200) -> Cell:
    """A random cell of issue 8's world: a :func:`cells` cell with every new parameter
    drawn too, each often at its default so that combinations of a few are common; edges
    included (spreads with B = 0 or G = 0, jitter larger than U, lag windows over the start
    or past the end, fault schedules longer than the run, watch triggers with zero delays)."""
    base = draw(cells(max_duration=max_duration))
    duration = base.duration

    def sometimes(strategy: st.SearchStrategy[object], default: object) -> object:
        return draw(st.just(default) | strategy)

    window_start = st.integers(0, duration + 20)
    windows = st.lists(st.tuples(window_start, st.integers(1, 80), st.integers(1, 60))
                       .map(lambda w: (w[0], w[0] + w[1], w[2])), min_size=1, max_size=3)
    faults = st.lists(st.tuples(st.integers(0, duration + 20), st.integers(0, 30),
                                st.sampled_from(FAULT_KINDS)), min_size=1, max_size=4)
    rate = st.sampled_from((0.001, 0.05, 0.2, 0.5, 0.999, 1.0))
    return dataclasses.replace(
        base,
        B=draw(st.sampled_from((base.B, 0))),
        G=draw(st.sampled_from((base.G, 0))),
        B_spread=sometimes(st.integers(1, 15), 0),
        G_spread=sometimes(st.integers(1, 30), 0),
        U_jitter=sometimes(st.integers(1, 50), 0),  # often larger than U
        seed=draw(st.integers(0, SEED_MAX)),
        delete_order=draw(st.sampled_from(DELETE_ORDERS)),
        grace=sometimes(st.integers(1, 40), 0),
        lag=sometimes(windows, ()),
        create_faults=sometimes(faults, ()),
        fail_rate=sometimes(rate, 0.0),
        lost_rate=sometimes(rate, 0.0),
        trigger=draw(st.sampled_from(TRIGGERS)),
        slow_start=draw(st.booleans()),
    )
