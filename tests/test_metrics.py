"""The metrics' one declaration: one cell and a batch get the same values from it, nulls
included, and the kernels' results go through the same formulas as the reference model's."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from reconsim.model.metrics import COUNTERS, INPUTS, METRIC_NAMES, METRICS, columns, of_run


@st.composite
def runs(draw: st.DrawFn) -> tuple[dict[str, int], SimpleNamespace]:
    """A run's counters and the cell it ran (rounds >= 1, the last drift within the run)."""
    duration = draw(st.integers(0, 10**6))
    counts = {name: draw(st.integers(0, 10**9)) for name in COUNTERS}
    counts["rounds"] = draw(st.integers(1, 10**6))
    counts["last_drift"] = draw(st.integers(0, duration))
    for name in ("overshoot_after", "missing_after", "settle_after"):  # -1: null
        counts[name] = draw(st.integers(-1, 10**6))
    deaths = draw(st.lists(st.tuples(st.integers(0, 100), st.integers(0, 1000)), max_size=3))
    initial = draw(st.integers(0, 10**6))
    return counts, SimpleNamespace(desired=draw(st.integers(0, 10**6)), duration=duration,
                                   deaths=tuple(deaths), initial_copies=lambda: initial)


@given(st.lists(runs(), min_size=1, max_size=5))
def test_one_cell_and_a_batch_get_the_same_metrics(batch: list[Any]) -> None:
    arrays = {name: np.array([c[name] for c, _ in batch], np.int64) for name in COUNTERS}
    arrays |= {"desired": np.array([cell.desired for _, cell in batch], np.int64),
               "duration": np.array([cell.duration for _, cell in batch], np.int64),
               "deaths_total": np.array([sum(n for _, n in cell.deaths) for _, cell in batch],
                                        np.int64),
               "initial": np.array([cell.initial_copies() for _, cell in batch], np.int64)}
    got = columns(arrays)
    assert [c.name for c in got] == list(METRIC_NAMES)
    assert [c.dtype for c in got] == [m.dtype for m in METRICS]
    for i, (counts, cell) in enumerate(batch):
        assert {c.name: c[i] for c in got} == of_run(counts, cell)


def test_the_derived_metrics_and_their_nulls() -> None:
    counts = {**dict.fromkeys(COUNTERS, 0), "rounds": 4, "created": 9, "create_commands": 10,
              "delete_commands": 3, "reads": 30}
    cell = SimpleNamespace(desired=5, duration=60, deaths=((10, 2), (500, 1)),
                           initial_copies=lambda: 0)
    m = of_run({**counts, "last_drift": 0}, cell)
    assert (m["work"], m["work_per_round"], m["unneeded"], m["reads_per_round"]) == (
        13, 3.25, 1, 7.5)
    # the copies running at t = 0 ran too: two more than needed
    assert of_run({**counts, "last_drift": 0}, SimpleNamespace(
        desired=5, duration=60, deaths=((10, 2), (500, 1)), initial_copies=lambda: 2)
        )["unneeded"] == 3
    # a run counts the disturbance's metrics itself, -1 for null
    after = of_run({**counts, "last_drift": 0, "overshoot_after": -1, "missing_after": 4,
                    "settle_after": -1}, cell)
    assert (after["overshoot_after"], after["missing_after"], after["settle_after"]) == (
        None, 4, None)
    assert m["stable_at"] == 1  # never off desired after second 0: stable from second 1
    assert of_run({**counts, "last_drift": 59}, cell)["stable_at"] == 60
    assert of_run({**counts, "last_drift": 60}, cell)["stable_at"] is None  # ends unsettled


def test_every_formula_reads_counters_inputs_and_earlier_metrics_only() -> None:
    counted = {m.name for m in METRICS if m.formula is None and m.world is None}
    assert set(COUNTERS) == {*counted, "last_drift", "raised"}
    assert not set(INPUTS) & set(METRIC_NAMES)
    for i, m in enumerate(METRICS):
        if m.formula is None:
            continue
        # A formula that read anything else would raise KeyError here.
        m.formula(dict.fromkeys({*COUNTERS, *INPUTS, *METRIC_NAMES[:i]}, 1))
