"""Grid expansion: any slice of the Cartesian product, built without the rest."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
from hypothesis import given
from hypothesis import strategies as st

from reconsim.sweep.grid import PARAM_COLUMNS, axis_indices, expand
from reconsim.sweep.spec import AXES, Spec, parse_spec

SPEC = parse_spec("""
    name = "t"
    [grid]
    controller = ["ledger", "intent"]
    G = [0, 30]
    U = [5, 15, 35]
    duration = [200, 900]
    schedule = ["seed", "p"]
    [schedule.seed]
    events = [[300, 2]]
    [schedule.p]
    every = 150
    count = 1
""")


@given(st.lists(st.integers(1, 5), min_size=1, max_size=4), st.data())
def test_axis_indices_match_itertools_product(shape: list[int], data: st.DataObject) -> None:
    total = int(np.prod(shape))
    start = data.draw(st.integers(0, total))
    stop = data.draw(st.integers(start, total))
    got = list(zip(*(a.tolist() for a in axis_indices(tuple(shape), start, stop)), strict=True))
    want = list(itertools.product(*(range(n) for n in shape)))[start:stop]
    assert got == want if stop > start else got == []


def expected_keys(spec: Spec) -> list[tuple[object, ...]]:
    """Per controller, the product of the axes that apply to it; null elsewhere."""
    keys = []
    for c in spec.axes["controller"]:
        for combo in itertools.product(*(spec.axes[a] if a in spec.block_axes(c) else (None,)
                                         for a in AXES[1:])):
            keys.append((c, *combo))
    return keys


def row_keys(frame: pl.DataFrame) -> list[tuple[object, ...]]:
    return [tuple(tuple(v) if isinstance(v, list) else v for v in (r[a] for a in AXES))
            for r in frame.iter_rows(named=True)]


def test_full_expansion_is_the_cartesian_product_in_axis_order() -> None:
    frame = expand(SPEC)
    assert frame.columns == list(PARAM_COLUMNS)
    assert frame.height == SPEC.n_cells == 2 * 2 * 3 * 2 * 2
    assert row_keys(frame) == expected_keys(SPEC)
    assert frame["ttl"].null_count() == frame.height  # no expectations controller here
    assert frame.filter(controller="ledger")["restart_at"].null_count() == 24
    assert frame.filter(controller="intent")["restart_at"].to_list() == [[]] * 24


def test_axes_multiply_only_the_controllers_they_apply_to() -> None:
    spec = parse_spec("""
        name = "t"
        [grid]
        controller = ["ledger", "intent", "expectations"]
        G = [0, 30]
        ttl = [10, 300]
        restart_at = [[], [305]]
        max_per_round = ["unlimited", 2]
        observe = ["ready", "created"]
    """)
    # ledger: G x cap x observe; intent: x restarts; expectations: x restarts x ttl
    assert [size for _, size in spec.blocks()] == [8, 16, 32]
    frame = expand(spec)
    assert frame.height == spec.n_cells == 56
    assert row_keys(frame) == expected_keys(spec)
    assert frame.filter(controller="ledger").select("ttl", "restart_at").null_count().row(0) \
        == (8, 8)
    assert sorted(set(frame["max_per_round"].to_list()), key=str) == [2, None]
    assert not frame.select(PARAM_COLUMNS).is_duplicated().any()


def test_deaths_follow_schedule_and_duration() -> None:
    frame = expand(SPEC)
    def events(schedule: str, duration: int) -> list[list[dict[str, int]]]:
        return frame.filter(schedule=schedule, duration=duration)["deaths"].to_list()
    assert all(e == [{"at": 300, "count": 2}] for e in events("seed", 200))
    assert all(e == [{"at": 150, "count": 1}] for e in events("p", 200))
    assert all([d["at"] for d in e] == [150, 300, 450, 600, 750, 900]
               for e in events("p", 900))


def test_slices_concatenate_to_the_whole() -> None:
    whole = expand(SPEC)
    parts = [expand(SPEC, lo, min(lo + 7, SPEC.n_cells)) for lo in range(0, SPEC.n_cells, 7)]
    assert pl.concat(parts).equals(whole)


def test_slices_with_random_deaths_concatenate_to_the_whole() -> None:
    """A slice draws its own cells' random deaths, on each cell's seed: any cut of the grid
    gives the same rows."""
    spec = parse_spec("""
        name = "t"
        [grid]
        controller = ["ledger", "intent"]
        duration = [100, 900]
        seed = [0, 1, 2]
        schedule = ["r", "mix", "seed"]
        [schedule.r]
        rate = 0.01
        count = 1
        seed = 3
        [schedule.mix]
        events = [[300, 2]]
        every = 200
        rate = 0.005
        count = 1
        seed = 4
        [schedule.seed]
        events = [[300, 2]]
    """)
    whole = expand(spec)
    for step in (1, 5, 7):
        parts = [expand(spec, lo, min(lo + step, spec.n_cells))
                 for lo in range(0, spec.n_cells, step)]
        assert pl.concat(parts).equals(whole), step
    for r in whole.iter_rows(named=True):
        want = spec.schedules[r["schedule"]].events(r["duration"], r["seed"])
        assert [(e["at"], e["count"]) for e in r["deaths"]] == list(want)
    assert whole.filter(schedule="r", duration=900)["deaths"].n_unique() == 3
