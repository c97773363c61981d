"""The test modules' own controllers: users' modules that tests write into a folder on
sys.path, kept here so that their kernels can be compiled before the tests start.

Each new definition compiles the kernels it runs on (10-30 s of a core each: the count
kernel, the world kernel, the event kernel). A definition's kernels are cached under its
name and the digest of its module's source (:attr:`Controller.digest`), not under the
folder it is imported from: :func:`compile_test_kernels` writes the same modules into a
folder of its own and runs each controller once on each kernel its tests run it on, before
the pytest-xdist workers start (:mod:`tests.helpers.kernels`); the tests then load them
from numba's cache instead of compiling them, each worker again, inside a test's time.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import textwrap
from pathlib import Path

#: Module name -> source of each test controller module (written dedented).
SOURCES: dict[str, str] = {
    # the front door: a user's expectations, taking reconsim's ttl by its declaration
    "frontdoor_mine": """
    from reconsim.controllers import TTL, Controller, Int, Param
    from reconsim.model.controllers.expectations import decide

    MINE = Controller("mine", decide, "expectations, as a user declares them",
                      params={"ttl": TTL, "spare": Param(Int(0, 9), 0, "mine: unused")},
                      sees=("unobserved", "last_act"), steady=True)
""",
    # an event-driven controller whose desired moves
    "userctl_events_scale": """
    from reconsim.controllers import Controller

    def decide(v, p, m):
        m[0] += 1
        d = v.desired - v.seen
        return d + 1 if d > 0 else d

    def settle(o, p, m):
        return 20 if o.asked > 0 and o.ok < o.asked else 0

    def observe(e, p, m):
        m[1] += 1

    def less(a, b, p):
        if (a.ready >= 0) != (b.ready >= 0):
            return a.ready >= 0
        return a.created < b.created

    EAGER = Controller("eager_scale", decide, "event test: one more copy up",
                       memory={"syncs": 0, "events": 0}, settle=settle, observe=observe,
                       less=less)
""",
    "userctl_liar": """
        from reconsim.controllers import Controller
        def decide(v, p, m):
            return (v.desired - v.seen) if v.t % 60 < 30 else 0
        LIAR = Controller("liar", decide, "depends on t, claims to be steady", steady=True)
    """,
    "userctl_clock": """
        from reconsim.controllers import Controller
        def decide(v, p, m):
            return (v.desired - v.seen) if (v.t // 100) % 2 == 1 else 0
        CLOCK = Controller("clock", decide, "acts in odd hundreds of seconds only")
    """,
    "userctl_positional": """
        from reconsim.controllers import Controller, Int, Param
        def decide(v, p, m):
            if m[0] >= 0 and v.t - m[0] < p.hold and v.seen != m[1]:
                return 0
            gap = v.desired - v.seen
            if gap != 0:
                m[0] = v.t
                m[1] = v.desired
            return gap
        POSITIONAL = Controller("positional", decide, "the hold-off, by position",
                                params={"hold": Param(Int(0, 100_000), 60, "hold")},
                                memory={"acted_at": -1, "target": 0})
    """,
    "userctl_ranked": """
        from reconsim.controllers import Controller, Choice, Param
        def decide(v, p, m):
            return v.desired - v.seen
        def rank(e, p):
            if p.by == 0:
                return 0  # all keys equal: the cell's delete_order decides
            if p.by == 1:
                return e.created  # the oldest first, whatever the cell's order
            if p.by == 2:
                return -e.created  # the newest first
            # Kubernetes-like: entries the read shows not ready first, then the most recently
            # ready, then the newest
            if e.ready < 0:
                return -e.created
            return (1 << 40) - (e.ready << 20) - e.created
        RANKED = Controller("ranked", decide, "the ledger's rule, deleting by a rank",
                            params={"by": Param(Choice(("equal", "oldest", "newest",
                                                        "readiness")),
                                                "readiness", "how it ranks")},
                            rank=rank, steady=True)
    """,
    "userctl_v": """
        from reconsim.controllers import Controller, Int, Param
        def decide(v, p, m):
            return v.desired - v.seen
        MINE = Controller("mine", decide, "version one", params={
            "k": Param(Int(0, 5), 0, "unused")}, version="1")
    """,
    "userctl_refused": """
        import numpy as np
        from reconsim.controllers import Controller

        def floaty(v, p, m):
            return (v.desired - v.seen) / 2

        def booly(v, p, m):
            return v.desired > v.seen

        def numpy_float(v, p, m):
            return np.float64(v.desired - v.seen)

        def late(v, p, m):
            if v.t >= 300:
                raise ValueError("boom")
            return v.desired - v.seen

        def always(v, p, m):
            raise ValueError("always")

        def huge(v, p, m):
            return 10**7 if v.t >= 60 else v.desired - v.seen

        def ledger(v, p, m):
            return v.desired - v.seen

        def big_rank(e, p):
            return 1 << 62

        def negative_rank(e, p):
            return -(1 << 62)

        def stringly(v, p, m):
            d = {1: 2}
            return (v.desired - v.seen) * (len(str(d)) - 5)

        FLOATY = Controller("floaty", floaty, "returns a float")
        BOOLY = Controller("booly", booly, "returns a bool")
        NUMPY_FLOAT = Controller("numpy_float", numpy_float, "returns a NumPy float")
        LATE = Controller("late", late, "raises from t = 300 on")
        ALWAYS = Controller("always", always, "always raises")
        HUGE = Controller("huge", huge, "returns a correction beyond the bound at t = 60")
        BIG_RANK = Controller("big_rank", ledger, "ranks beyond 2^62", rank=big_rank)
        NEGATIVE_RANK = Controller("negative_rank", ledger, "ranks below -2^62",
                                   rank=negative_rank)
        STRINGLY = Controller("stringly", stringly, "decides on str of a dict")

        def settle_ok(o, p, m):
            return 0

        def settle_float(o, p, m):
            return 0.5

        def less_float(a, b, p):
            return 0.5

        EVENT_FLOATY = Controller("event_floaty", floaty, "syncs; returns a float",
                                  settle=settle_ok)
        EVENT_LATE = Controller("event_late", late, "syncs; raises from t = 300 on",
                                settle=settle_ok)
        SETTLE_FLOAT = Controller("settle_float", ledger, "syncs; settles with a float",
                                  settle=settle_float)
        LESS_FLOAT = Controller("less_float", ledger, "syncs; orders with a float",
                                settle=settle_ok, less=less_float)
    """,
}

#: A world that sends a cell to the count kernel, one that sends it to the world kernel (a
#: controller that ranks goes to the world kernel from either), and the world the tests run
#: the controllers that sync on events in (their kernel).
COUNT, WORLD, EVENTS = "count", "world", "events"
WORLDS: dict[str, dict[str, object]] = {
    COUNT: {"duration": 30}, WORLD: {"duration": 30, "G_spread": 5},
    EVENTS: {"G": 2, "B": 1, "deaths": ((100, 2),), "initial": 8, "desired": 6,
             "duration": 400}}

#: Each test controller whose kernels are compiled before the tests, and the kernels its
#: tests run it on. Those refused before a kernel is compiled (a float, a bool or nothing
#: returned: ALWAYS only raises) have none.
WARMED: dict[str, tuple[str, ...]] = {
    "frontdoor_mine:MINE": (COUNT, WORLD),
    "userctl_events_scale:EAGER": (EVENTS,),
    # defined in its test module, whose source is its digest's: imported from there
    "tests.test_simulate:DEADBAND": (COUNT, WORLD),
    "userctl_liar:LIAR": (COUNT, WORLD),
    "userctl_clock:CLOCK": (COUNT, WORLD),
    "userctl_positional:POSITIONAL": (COUNT, WORLD),
    "userctl_ranked:RANKED": (WORLD,),
    "userctl_v:MINE": (COUNT,),
    "userctl_refused:LATE": (COUNT, WORLD),
    "userctl_refused:HUGE": (COUNT, WORLD),
    "userctl_refused:STRINGLY": (COUNT,),
    "userctl_refused:BIG_RANK": (WORLD,),
    "userctl_refused:NEGATIVE_RANK": (WORLD,),
    "userctl_refused:EVENT_LATE": (EVENTS,),
}
#: The warm-up's share of :data:`WARMED`, one process each, of about equal work.
GROUPS = 3


def write(folder: Path, name: str) -> str:
    """Write the module ``name`` of :data:`SOURCES` into ``folder``; return its name."""
    (folder / f"{name}.py").write_text(textwrap.dedent(SOURCES[name]), encoding="utf-8")
    return name


def compile_test_kernels(group: int) -> None:
    """Run each controller of share ``group`` of :data:`WARMED` (every ``GROUPS``-th one)
    once on each of its kernels, as :func:`~reconsim.run_cell` runs it and in a frame beside
    a built-in's cell (:func:`~reconsim.simulate`), from a folder of its own; a refusal its
    decision makes later in the run (the kernel compiled first) is expected."""
    from reconsim import run_cell, simulate
    from reconsim.model.params import make_cell
    from reconsim.model.simulate import cells_frame

    with tempfile.TemporaryDirectory() as folder:
        sys.path.insert(0, folder)
        for name in SOURCES:
            write(Path(folder), name)
        for ref, kernels in list(WARMED.items())[group::GROUPS]:
            for kernel in kernels:
                world = WORLDS[kernel]
                cell = make_cell(controller=ref, **world)
                beside = make_cell(controller="replicaset" if kernel == EVENTS else "ledger",
                                   **world)
                # The kernels are compiled by the time a run refuses (or fails: the tests
                # say what it should do).
                with contextlib.suppress(Exception):
                    run_cell(controller=ref, **world)
                with contextlib.suppress(Exception):
                    simulate(cells_frame([beside, cell]))
