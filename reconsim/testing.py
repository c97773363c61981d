"""The same guarantees for a user's controller as for reconsim's own: random cells over
every world parameter, each run by the reference model and by the fast kernels, compared
on every metric (as Gymnasium's ``env_checker`` checks an environment).

>>> from reconsim.testing import check_controller
>>> check_controller("intent", examples=5)  # doctest: +SKIP

Hypothesis draws the cells (a dependency of reconsim). ``reconsim check-controller REF``
runs the same; :func:`compare_cell` is :func:`reconsim.model.differential.compare_cell`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Final, TypeVar

from hypothesis import HealthCheck, Verbosity, given, settings
from hypothesis import strategies as st

from reconsim.model import rng
from reconsim.model.controllers import Controller, ControllerError, registry
from reconsim.model.differential import ControllerMismatchError, compare_cell
from reconsim.model.kinds import Choice, Flag, Int, Kind, Thousandths
from reconsim.model.params import (
    DELETE_ORDERS,
    FAULT_KINDS,
    OBSERVE,
    TRIGGERS,
    Cell,
    applies,
    options_of,
    parameter,
)

__all__ = ["ControllerMismatchError", "cells", "check_controller", "compare_cell", "event_cells",
           "world_cells"]

T = TypeVar("T")


#: reconsim's controllers that decide in rounds: :func:`cells` draws them when it is not
#: told which (:func:`event_cells` draws those that sync on events).
IN_ROUNDS: Final = tuple(c.name for c in registry.built_in()
                         if not c.syncs_on_events and c.world is None)


@st.composite
def cells(draw: st.DrawFn, max_duration: int = 240, controllers: tuple[str, ...] = (),
          ) -> Cell:
    """A random cell, edges included: B = 0, G = 0, desired = 0, U = 1, durations 0 and 1,
    several deaths in one second, deaths larger than the live count, deaths after the end,
    changes of desired (up, down, to the same count, at a death's second, after the end);
    every controller that decides in rounds (or those named) and variant: observe,
    max_per_round, gain, restarts, and the controller's own parameters, fields (ttl, 0
    too) and options alike, each drawn for a controller that declares it."""
    duration = draw(st.integers(0, max_duration))
    at = st.integers(0, duration + 30)  # some events fall after the end of the run
    events: list[tuple[int, int]] = draw(st.lists(st.tuples(at, st.integers(0, 20)),
                                                  max_size=5))
    same_second: bool = draw(st.booleans())
    if events and same_second:  # a second event in the same second as the first
        events.append((events[0][0], draw(st.integers(0, 20))))
    # desired that moves: often not at all; changes in increasing seconds, some after the
    # end, some at a death's second, to counts above, below and equal to the one before
    changes = draw(st.just(()) | st.lists(
        st.tuples(st.integers(1, duration + 30) | st.sampled_from([at for at, _ in events] or [1]),
                  st.integers(0, 14)), max_size=3))
    scale = tuple(sorted(dict(c for c in changes if c[0] >= 1).items()))
    controller = registry.get(draw(st.sampled_from(controllers or IN_ROUNDS)))
    options = tuple((name, draw(_values(param.kind)))
                    for name, param in options_of(controller).items())
    return Cell(
        controller=controller.name,
        desired=draw(st.integers(0, 10)),
        U=draw(st.integers(1, 40)),
        G=draw(st.integers(0, 50)),
        B=draw(st.integers(0, 25)),
        duration=duration,
        deaths=tuple(events),
        scale=scale,
        ledger_base=draw(st.integers(0, 30)),
        observe=draw(st.sampled_from(OBSERVE)),
        max_per_round=draw(st.none() | st.integers(1, 8)),
        gain=draw(st.sampled_from((1.0, 1.0, 0.999, 0.75, 0.5, 0.333, 0.1, 0.001))),
        # drawn only for the controllers that declare it: another's is refused
        ttl=draw(st.integers(0, 120)) if applies("ttl", controller.name)
        else parameter("ttl").default,
        restart_at=tuple(draw(st.lists(st.integers(0, duration + 10), max_size=3))),
        options=options,
        # drawn only for the controllers that declare it: the others' cells stay as they were
        log_scale_down=draw(st.booleans()) if applies("log_scale_down", controller.name)
        else parameter("log_scale_down").default,
        # a running service: often none, often settled, sometimes more or fewer than desired
        initial=draw(st.one_of(st.just(0), st.just("desired"), st.integers(0, 14))),
    )


def _values(kind: Kind) -> st.SearchStrategy[Any]:
    """Values of a controller parameter's kind, its bounds' edges included."""
    if isinstance(kind, Choice):
        return st.sampled_from(kind.choices)
    if isinstance(kind, Flag):
        return st.booleans()
    if isinstance(kind, Thousandths):
        lo = kind.minimum * 1000 + (1 if kind.open_below else 0)
        return st.integers(round(lo), round(kind.maximum * 1000)).map(lambda k: k / 1000)
    if isinstance(kind, Int):
        return st.integers(kind.minimum, kind.maximum)
    raise TypeError(f"no strategy for a parameter of kind {type(kind).__name__}")


@st.composite
def world_cells(draw: st.DrawFn, max_duration: int = 200, controllers: tuple[str, ...] = (),
                ) -> Cell:
    """A random cell of the richer world: a :func:`cells` cell with every world parameter
    drawn too, each often at its default so that combinations of a few are common; edges
    included (spreads and delay tables with B = 0 or G = 0, jitter larger than U, lag
    windows over the start or past the end, fault schedules longer than the run, watch
    triggers with zero delays)."""
    base = draw(cells(max_duration=max_duration, controllers=controllers))
    duration = base.duration

    def sometimes(strategy: st.SearchStrategy[T], default: T) -> T:
        return draw(st.just(default) | strategy)

    window_start = st.integers(0, duration + 20)
    windows = st.lists(st.tuples(window_start, st.integers(1, 80), st.integers(1, 60))
                       .map(lambda w: (w[0], w[0] + w[1], w[2])), min_size=1, max_size=3
                       ).map(tuple)
    faults = st.lists(st.tuples(st.integers(0, duration + 20), st.integers(0, 30),
                                st.sampled_from(FAULT_KINDS)), min_size=1, max_size=4
                      ).map(tuple)
    rate = st.sampled_from((0.001, 0.05, 0.2, 0.5, 0.999, 1.0))
    # delay tables: a few seconds, small weights or parts per million; each in place of
    # its spread
    tables = st.lists(st.tuples(st.integers(0, 40), st.integers(1, 5) | st.integers(1, 10**6)),
                      min_size=1, max_size=6).map(lambda es: tuple(sorted(dict(es).items())))
    b_table, g_table = sometimes(tables, ()), sometimes(tables, ())
    return dataclasses.replace(
        base,
        B=draw(st.sampled_from((base.B, 0))),
        G=draw(st.sampled_from((base.G, 0))),
        B_spread=0 if b_table else sometimes(st.integers(1, 15), 0),
        G_spread=0 if g_table else sometimes(st.integers(1, 30), 0),
        B_delays=b_table,
        G_delays=g_table,
        U_jitter=sometimes(st.integers(1, 50), 0),  # often larger than U
        seed=draw(st.integers(0, rng.MAX_SEED)),
        delete_order=draw(st.sampled_from(DELETE_ORDERS)),
        grace=sometimes(st.integers(1, 40), 0),
        lag=sometimes(windows, ()),
        create_faults=sometimes(faults, ()),
        fail_rate=sometimes(rate, 0.0),
        lost_rate=sometimes(rate, 0.0),
        trigger=draw(st.sampled_from(TRIGGERS)),
        slow_start=draw(st.booleans()),
    )


def event_cells(max_duration: int = 200, controllers: tuple[str, ...] = ()
                ) -> st.SearchStrategy[Cell]:
    """:func:`world_cells` of the controllers that sync on events (default: reconsim's own,
    ``replicaset``)."""
    names = controllers or tuple(c.name for c in registry.built_in()
                                 if c.syncs_on_events and c.world is None)
    return world_cells(max_duration=max_duration, controllers=names)


def check_controller(ref: str | Controller, *, examples: int = 200,
                     on_example: Callable[[Cell], None] | None = None) -> int:
    """Run ``examples`` random cells of ``ref`` (a :class:`Controller`, a name or an import
    path) over every world parameter on the reference model and on the fast kernels;
    raise :class:`ControllerMismatchError` at the first difference (Hypothesis shrinks it
    to a small cell first), or a :class:`~reconsim.model.controllers.ControllerError` if the
    definition cannot be used. Returns the number of cells checked. A controller declared
    ``compiled=False`` runs on the reference model alone: its cells are only run (an
    exception or a bad correction is still its ``ControllerError``)."""
    controller = registry.resolve(ref)
    if controller.world is not None:
        raise ControllerError(f"controller {controller.name!r} brings a world of its own, "
                              "with one model and no kernel to compare: `reconsim "
                              "conformance` checks it against the real controllers")
    checked = 0

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
              verbosity=Verbosity.quiet)
    @given(st.one_of(cells(controllers=(controller.name,)),
                     world_cells(controllers=(controller.name,))))
    def run(cell: Cell) -> None:
        nonlocal checked
        checked += 1
        if on_example is not None:
            on_example(cell)
        compare_cell(cell)

    run()
    return checked
