"""The Deployment kernel equals the Deployment world's reference model: every metric and
every trace column, every second, on the data set's 400 scenarios and on random cells
beyond it (other counts, several rollouts, several scale changes, deaths); the rules it
shares with the reference, one by one; and its refusals."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconsim.conformance.load import DEPLOYMENT, Dataset, load
from reconsim.errors import KernelRefusalError
from reconsim.model import deployment, deployment_rules, workqueue
from reconsim.model.controllers.definition import Item
from reconsim.model.controllers.replicaset import less as replicaset_less
from reconsim.model.deployment import (
    METRIC_COLUMNS,
    SECOND,
    TRACE_COLUMNS,
    Scenario,
    go_round,
    metrics,
    run,
)
from reconsim.model.kernels.deployment import (
    DEPLOYMENT_INPUTS,
    DEPLOYMENT_OUT_COLUMNS,
    MAX_REPLICASETS,
    SHARED_OUT_COLUMNS,
    scenario_arrays,
    simulate_deployment_arrays,
    trace_buffer,
    trace_rows,
)


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return load(DEPLOYMENT.data_dir)


def _metric_row(m: dict[str, Any]) -> list[int]:
    return [-1 if m[c] is None else int(m[c]) for c in DEPLOYMENT_OUT_COLUMNS]


def _kernel(arrays: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    traces = trace_buffer(arrays)
    out = simulate_deployment_arrays(**arrays, traces=traces)
    return out, traces, trace_rows(arrays)


def test_interface_names_the_data_sets_columns() -> None:
    assert METRIC_COLUMNS[1:] == DEPLOYMENT_OUT_COLUMNS
    assert len(DEPLOYMENT_OUT_COLUMNS) == deployment_rules.N_METRICS == 25
    assert len(TRACE_COLUMNS) == deployment_rules.N_TRACE
    assert set(scenario_arrays([Scenario(desired=3)])) == set(DEPLOYMENT_INPUTS)


def test_kernel_equals_the_reference_on_the_data_set(dataset: Dataset) -> None:
    scenarios = list(dataset.scenarios)
    out, traces, base = _kernel(scenario_arrays(scenarios))
    real = dataset.metrics
    for i, s in enumerate(scenarios):
        trace = run(s)
        expected = np.array([[r[c] for c in TRACE_COLUMNS] for r in trace], np.int64)
        got = traces[base[i]:base[i + 1]]
        if not np.array_equal(got, expected):
            r, c = np.argwhere(got != expected)[0]
            pytest.fail(f"{s.id}: second {r}, {TRACE_COLUMNS[c]}: kernel {got[r, c]}, "
                        f"reference {expected[r, c]}")
        assert out[:, i].tolist() == _metric_row(metrics(s, trace)), s.id
        # and so the real controllers' figures, which the reference matches
        row = real.row(i, named=True)
        assert out[:, i].tolist() == _metric_row(row), s.id


def test_metrics_without_traces_are_the_same(dataset: Dataset) -> None:
    arrays = scenario_arrays(list(dataset.scenarios)[:60])
    out, _, _ = _kernel(arrays)
    given_out = np.full_like(out, 7)
    assert simulate_deployment_arrays(**arrays, out=given_out) is given_out
    assert np.array_equal(given_out, out)


# --- random cells beyond the data set -----------------------------------------------------


def _int_or_percent() -> st.SearchStrategy[int | str]:
    return st.one_of(st.integers(0, 6), st.integers(0, 100).map(lambda p: f"{p}%"))


@st.composite
def scenarios(draw: st.DrawFn, most: int = 200) -> Scenario:
    """A scenario beyond the data set: any counts, up to four rollouts, up to three scale
    changes, up to three deaths."""
    duration = draw(st.integers(20, 400))
    rollouts = tuple(sorted(draw(st.sets(st.integers(0, duration), min_size=1,
                                         max_size=4))))
    scale_at = sorted(draw(st.sets(st.integers(0, duration), max_size=3)))
    counts = st.one_of(st.integers(0, 12), st.integers(0, most))
    return Scenario(
        id="random", desired=draw(counts), G=draw(st.integers(0, 30)),
        B=draw(st.integers(0, 30)),
        min_ready_seconds=draw(st.sampled_from([0, 0, 1, 5, 10, 30])),
        grace=draw(st.sampled_from([0, 0, 1, 5, 30])),
        max_surge=draw(_int_or_percent()), max_unavailable=draw(_int_or_percent()),
        start=draw(st.sampled_from(["settled", "cold"])), rollout_at=rollouts[0],
        rollouts=rollouts, scale=tuple((at, draw(counts)) for at in scale_at),
        deaths=tuple(draw(st.lists(st.tuples(st.integers(0, duration), st.integers(1, 6)),
                                   max_size=3))),
        duration=duration)


def _check(batch: list[Scenario]) -> None:
    """The kernel's metrics and traces of ``batch`` are the reference model's (a scenario
    the reference cannot run, dividing by a max-replicas annotation of 0, the kernel
    refuses)."""
    refs: list[list[dict[str, int]] | None] = []
    for s in batch:
        try:
            refs.append(run(s))
        except ZeroDivisionError:
            refs.append(None)
            with pytest.raises(KernelRefusalError, match="annotation of 0"):
                simulate_deployment_arrays(**scenario_arrays([s]))
    ok = [i for i, r in enumerate(refs) if r is not None]
    if not ok:
        return
    out, traces, base = _kernel(scenario_arrays([batch[i] for i in ok]))
    for j, i in enumerate(ok):
        trace = refs[i]
        assert trace is not None
        expected = np.array([[r[c] for c in TRACE_COLUMNS] for r in trace], np.int64)
        got = traces[base[j]:base[j + 1]]
        if not np.array_equal(got, expected):
            r, col = np.argwhere(got != expected)[0]
            pytest.fail(f"{batch[i]}: second {r}, {TRACE_COLUMNS[col]}: kernel "
                        f"{got[r, col]}, reference {expected[r, col]}")
        assert out[:, j].tolist() == _metric_row(metrics(batch[i], trace)), batch[i]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(scenarios(most=30), min_size=1, max_size=6))
def test_kernel_equals_the_reference_on_random_small_cells(batch: list[Scenario]) -> None:
    _check(batch)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_kernel_equals_the_reference_on_random_cells(s: Scenario) -> None:
    _check([s])


def test_a_cell_with_many_rollouts_scales_and_deaths() -> None:
    rollouts = (5, 20, 21, 60, 120)
    s = Scenario(id="many", desired=40, G=2, B=3, min_ready_seconds=5, grace=5,
                 max_surge="30%", max_unavailable=2, rollout_at=5, rollouts=rollouts,
                 scale=((30, 80), (31, 10), (100, 55)),
                 deaths=((50, 3), (50, 2), (90, 10)), duration=300)
    _check([s])
    out = simulate_deployment_arrays(**scenario_arrays([s]))
    assert out[DEPLOYMENT_OUT_COLUMNS.index("final_rs_count"), 0] == len(rollouts) + 1
    assert out[DEPLOYMENT_OUT_COLUMNS.index("deaths_landed"), 0] == 15


def test_a_cell_needing_more_room_runs_again_the_same() -> None:
    s = Scenario(id="big", desired=600, B=1, max_surge="100%", rollout_at=2,
                 rollouts=(2, 20), duration=40)
    _check([s])


def test_a_first_rollout_after_the_end_runs_its_figures_null() -> None:
    s = Scenario(id="late", desired=3, rollout_at=700, duration=600)
    _check([s])
    out = simulate_deployment_arrays(**scenario_arrays([s]))
    assert [int(out[DEPLOYMENT_OUT_COLUMNS.index(c), 0]) for c in (
        "min_available_after_rollout", "rollout_done_at", "status_complete_at",
        "complete_at_end")] == [-1, -1, -1, 1]


def test_the_shared_figures_go_where_asked() -> None:
    """The figures every world has, into the matrix given (the world kernel's rows), and
    the responses from each cell's column; refused when the shapes do not fit."""
    batch = [Scenario(desired=4, deaths=((30, 1),), scale=((50, 6),), duration=100),
             Scenario(desired=2, duration=60)]
    arrays = scenario_arrays(batch)
    shared = np.full((len(SHARED_OUT_COLUMNS), 2), 99, np.int64)
    responses = np.full((5, 4), 99, np.int64)
    simulate_deployment_arrays(**arrays, shared=shared, responses=responses,
                               response_base=np.array([0, 2]))
    count = SHARED_OUT_COLUMNS.index("responses")
    assert shared[count].tolist() == [2, 0]
    assert responses[0, :3].tolist() == [30, 50, 99]
    assert shared[SHARED_OUT_COLUMNS.index("reads")].tolist() == [0, 0]
    with pytest.raises(ValueError, match="shared must be"):
        simulate_deployment_arrays(**arrays, shared=np.zeros((3, 2), np.int64))
    with pytest.raises(TypeError, match="give both or neither"):
        simulate_deployment_arrays(**arrays, responses=responses)


# --- the shared rules ---------------------------------------------------------------------


@given(st.integers(0, 10**6), st.integers(0, 500), st.integers(0, 500), st.integers(1, 900),
       st.integers(-200, 200), st.integers(-200, 200))
def test_proportion_is_the_references(replicas: int, desired: int, surge: int,  # noqa: PLR0917
                                      annotated: int, to_add: int, added: int) -> None:
    got = deployment_rules.proportion(replicas, desired, surge, annotated, to_add, added)
    if replicas == 0 or to_add in (0, added):
        assert got == 0
        return
    fraction = -replicas if desired == 0 else go_round(
        float(replicas * (desired + surge)) / float(annotated)) - replicas
    allowed = to_add - added
    assert got == (min(fraction, allowed) if to_add > 0 else max(fraction, allowed))


_READY = st.one_of(st.just(deployment_rules.NOT_READY), st.integers(-1000, 3000))


@given(st.integers(1, 50), st.integers(-1000, 3000), _READY, st.integers(1, 50),
       st.integers(-1000, 3000), _READY, st.integers(0, 3000 * SECOND))
def test_pod_less_is_the_replicaset_controllers(  # noqa: PLR0917
        a_uid: int, a_created: int, a_ready: int,
                                                b_uid: int, b_created: int, b_ready: int,
                                                now: int) -> None:
    shift = -deployment.PRE_HISTORY

    def item(uid: int, created: int, ready: int) -> Item:
        moment = now // workqueue.MS + shift * 1000 if now % workqueue.MS == 0 else \
            __import__("fractions").Fraction(now, workqueue.MS) + shift * 1000
        return Item(uid, created + shift, -1 if ready == deployment_rules.NOT_READY
                    else ready + shift, moment)

    class P:
        log_scale_down = 1

    expected = replicaset_less(item(a_uid, a_created, a_ready), item(b_uid, b_created,
                                                                     b_ready), P())
    assert deployment_rules.pod_less(a_uid, a_created, a_ready, b_uid, b_created, b_ready,
                                     now) == expected


def _go_age_rank(second: int, now: int) -> int:
    """Go's way: ``floor(log2(float64(age)))``."""
    age = now - second * SECOND
    return int(math.log2(float(age))) if age > 0 else -1


@given(st.integers(0, 10**6), st.integers(0, 62), st.integers(-(1 << 12), 1 << 12),
       st.integers(0, (1 << 62) - 1))
def test_age_rank_is_gos_float_log2(second: int, power: int, near: int, far: int) -> None:
    """The ages near a power of two (where float64 rounds), and anywhere."""
    for age in ((1 << power) + near, (1 << power) + (near << max(0, power - 24)),
                far >> (62 - power), 0, -near):
        now = second * SECOND + min(age, 1 << 62)
        assert deployment_rules.age_rank(second, now) == _go_age_rank(second, now)
    assert deployment_rules.age_rank(deployment_rules.NOT_READY, 5) == -1


def test_age_rank_at_every_power_of_two() -> None:
    for power in range(63):
        for near in range(-3, 4):
            age = (1 << power) + near
            if 0 < age <= 1 << 62:
                assert deployment_rules.age_rank(0, age) == _go_age_rank(0, age), age
    # float64 rounds 2**53 - 1 ns up to 2**53: Go's rank is 53, the exact age's 52
    assert deployment_rules.age_rank(0, (1 << 53) - 1) == 53


def test_the_bucket_and_backoff_are_workqueues() -> None:
    assert [workqueue.exponential_delay(n) for n in (0, 3)] == [5 * workqueue.MS,
                                                                40 * workqueue.MS]
    assert math.isclose(workqueue.tokens_from_duration(SECOND), 10.0)


# --- refusals --------------------------------------------------------------------------


def _one(**changes: Any) -> dict[str, np.ndarray]:
    arrays = scenario_arrays([Scenario(desired=3)])
    arrays.update({k: np.asarray(v, np.int64) for k, v in changes.items()})
    return arrays


@pytest.mark.parametrize(("changes", "line"), [
    ({"desired": [-1]}, r"kernel: cell 0 \(desired -1\) is outside 0"),
    ({"G": [10**7]}, r"\(G 10000000\) is outside"),
    ({"duration": [-5]}, r"\(duration -5\) is outside"),
    ({"rollouts_at": list(range(MAX_REPLICASETS)),
      "rollouts_offsets": [0, MAX_REPLICASETS]}, r"\(11 rollouts\) needs 1 … 10"),
    ({"rollouts_at": [], "rollouts_offsets": [0, 0]}, r"\(0 rollouts\) needs 1"),
    ({"rollouts_at": [20, 10], "rollouts_offsets": [0, 2]}, r"rollouts at \[20, 10\]"),
    ({"scale_at": [20, 10], "scale_desired": [1, 2], "scale_offsets": [0, 2]},
     r"scale at \[20, 10\]"),
])
def test_refusals_are_one_line(changes: dict[str, Any], line: str) -> None:
    with pytest.raises(KernelRefusalError, match=line) as caught:
        simulate_deployment_arrays(**_one(**changes))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("changes", "line"), [
    ({"scale_at": [5], "scale_desired": [-2], "scale_offsets": [0, 0, 1]},
     r"kernel: cell 1 \(scale_desired -2\) is outside 0"),
    ({"deaths_at": [5], "deaths_count": [-1], "deaths_offsets": [0, 0, 1]},
     r"kernel: cell 1 \(deaths_count -1\) is outside 0"),
    ({"deaths_at": [-3], "deaths_count": [1], "deaths_offsets": [0, 0, 1]},
     r"kernel: cell 1 \(deaths at -3\) must be a second >= 0"),
])
def test_a_bad_schedule_names_its_own_cell(changes: dict[str, Any], line: str) -> None:
    arrays = scenario_arrays([Scenario(desired=3), Scenario(desired=4)])
    arrays.update({k: np.asarray(v, np.int64) for k, v in changes.items()})
    with pytest.raises(KernelRefusalError, match=line) as caught:
        simulate_deployment_arrays(**arrays)
    assert caught.value.row == 1


def test_bad_arrays_are_named() -> None:
    arrays = _one()
    del arrays["grace"]
    with pytest.raises(TypeError, match="missing grace"):
        simulate_deployment_arrays(**arrays)
    with pytest.raises(ValueError, match="deaths_offsets must run"):
        simulate_deployment_arrays(**_one(deaths_offsets=[0, 3]))
    with pytest.raises(ValueError, match="out must be"):
        simulate_deployment_arrays(**_one(), out=np.zeros((25, 2), np.int64))
    with pytest.raises(ValueError, match="traces must be"):
        simulate_deployment_arrays(**_one(), traces=np.zeros((3, 31), np.int64))
