"""The Deployment world's reference model, rule by rule, in small scenarios one can follow:
the fenceposts, client-go's queue and rate limiter, the kubernetes.io rolling update, the
status write conflict of a sync that creates a ReplicaSet, the swallowed error of
``cleanupUnhealthyReplicas``, the rate-limited progress requeues, the trace and metrics."""

from __future__ import annotations

import pytest

from reconsim.model import deployment
from reconsim.model.deployment import (
    METRIC_COLUMNS,
    TRACE_COLUMNS,
    Expectations,
    PodView,
    Scenario,
    ScenarioError,
    deletion_order,
    go_round,
    metrics,
    resolve_fenceposts,
    run,
    scaled_value,
)
from reconsim.model.workqueue import (
    MAX_DELAY,
    MS,
    SECOND,
    Bucket,
    WorkQueue,
    duration_from_tokens,
    exponential_delay,
    reserve,
    tokens_from_duration,
)


@pytest.mark.parametrize(("surge", "unavailable", "desired", "resolved"), [
    ("25%", "25%", 3, (1, 0)),  # the kubernetes.io example: surge up, unavailable down
    ("25%", "25%", 4, (1, 1)),
    ("50%", "50%", 25, (13, 12)),
    (0, "25%", 1, (0, 1)),  # both 0: unavailable becomes 1
    (0, "25%", 3, (0, 1)),
    (3, 0, 10, (3, 0)),
    ("25%", 0, 1, (1, 0)),  # 0.25 rounds up to 1
    (1, "50%", 1, (1, 0)),
])
def test_resolve_fenceposts(surge: int | str, unavailable: int | str, desired: int,
                            resolved: tuple[int, int]) -> None:
    assert resolve_fenceposts(surge, unavailable, desired) == resolved


def test_scaled_values_and_rounding() -> None:
    assert scaled_value("50%", 3, round_up=True) == 2
    assert scaled_value("50%", 3, round_up=False) == 1
    assert scaled_value(7, 3, round_up=False) == 7
    assert [go_round(x) for x in (2.5, 3.5, -2.5, 2.4999, 0.5)] == [3, 4, -3, 2, 1]
    for bad in ("25", "x%", True, 2.5):
        with pytest.raises(ScenarioError, match="max_surge"):
            Scenario(desired=3, max_surge=bad)  # type: ignore[arg-type]
    with pytest.raises(ScenarioError, match="start = 'warm'"):
        Scenario(desired=3, start="warm")
    with pytest.raises(ScenarioError, match="scale_at and desired2"):
        Scenario(desired=3, scale_at=30)


def test_per_item_backoff_doubles_from_5_ms_to_1000_s() -> None:
    assert [exponential_delay(n) // MS for n in range(5)] == [5, 10, 20, 40, 80]
    assert exponential_delay(18) == MAX_DELAY == 1000 * SECOND
    assert exponential_delay(2000) == MAX_DELAY  # beyond int64 in float: the cap


def test_bucket_gives_a_burst_of_100_then_10_a_second() -> None:
    assert tokens_from_duration(SECOND + 500 * MS) == 15.0
    assert duration_from_tokens(1.0) == 100 * MS
    bucket = Bucket()
    assert [bucket.delay(0) for _ in range(100)] == [0] * 100
    assert bucket.delay(0) == 100 * MS  # the 101st waits for a token
    assert bucket.delay(0) == 200 * MS
    later = Bucket()
    waits = [later.delay(k * 5 * MS) for k in range(108)]  # a reservation every 5 ms
    first = next(k for k, w in enumerate(waits) if w > 0)
    assert first == 105  # 100 tokens, and the 0.05 gained each 5 ms buy 5 more
    assert waits[first:] == [75 * MS, 170 * MS, 265 * MS]  # -0.75 tokens, then -1.7, ...


def test_the_bucket_is_its_arithmetic_on_numbers() -> None:
    """``Bucket.delay`` is ``reserve`` carried from call to call: tokens in debt, the wait
    their refill takes, the instant of the last reservation."""
    bucket, tokens, last = Bucket(tokens=1.5), 1.5, 0
    waits = []
    for now in (0, 0, 3 * MS, 3 * MS, 2 * SECOND, 2 * SECOND + 1, 2 * SECOND + 1):
        wait, tokens = reserve(tokens, last, now)
        last = now
        assert (bucket.delay(now), bucket.tokens, bucket.last) == (wait, tokens, last)
        waits.append(wait // MS)
    assert waits == [0, 50, 147, 246, 0, 0, 0]  # 246.99... ms: Go truncates
    assert reserve(-2.0, 0, 100 * MS) == (200 * MS, -2.0)  # 0.1 s buys back 1 token
    assert reserve(99.5, 5 * SECOND, 0) == (0, 98.5)  # a clock behind: nothing elapsed


def test_queue_dedupes_marks_dirty_and_keeps_the_earlier_delay() -> None:
    q = WorkQueue()
    q.add("a")
    q.add("b")
    q.add("a")
    assert q.queue == ["a", "b"]
    assert q.get() == "a"
    q.add("a")  # while it is processed: dirty, queued again by done
    assert q.queue == ["b"]
    q.done("a")
    assert q.queue == ["b", "a"]
    q.add_after("c", 30 * MS, 0)
    q.add_after("c", 50 * MS, 0)  # later: the earlier time stays
    assert q.next_due() == 30 * MS
    q.add_after("c", 10 * MS, 0)  # earlier: it replaces
    q.add_after("d", 10 * MS, 0)
    q.release(9 * MS)
    assert q.queue == ["b", "a"]
    q.release(10 * MS)
    assert q.queue == ["b", "a", "c", "d"]
    assert q.next_due() is None
    q.add_rate_limited("e", 0)
    q.add_rate_limited("e", 0)
    assert q.failures["e"] == 2
    assert q.waiting["e"][0] == 5 * MS
    q.forget("e")
    assert "e" not in q.failures


def test_the_deletion_order_ranks_ages_by_their_logarithm() -> None:
    """Not Ready first; Ready pods by floor(log2(age in ns)), the younger rank first and
    the smaller uid within a rank (LogarithmicScaleDown): 90 s and 80 s share rank 36,
    so pod 1 goes before pod 2 although pod 2 is the more recently Ready."""
    now = 100 * SECOND
    pods = [PodView(1, "web-v1", 0, 10, deleting=False),
            PodView(2, "web-v1", 0, 20, deleting=False),
            PodView(3, "web-v1", 0, None, deleting=False),
            PodView(4, "web-v1", 0, 95, deleting=False)]
    ranked = deletion_order(pods, now)
    assert [r[0] for r in ranked] == [3, 4, 1, 2]
    assert [r[4] for r in ranked] == [-1, 32, 36, 36]  # the ready ages' ranks
    later = deletion_order(pods, 200 * SECOND)  # 190 s and 180 s: rank 37 both
    assert [r[0] for r in later] == [3, 4, 1, 2]


def test_expectations_lower_a_named_deletion_once() -> None:
    exp = Expectations(0, 2, 0, {7, 8})
    assert not exp.satisfied(SECOND)
    exp.deletion_observed(7)
    exp.deletion_observed(7)  # its removal after its terminating update: once
    exp.deletion_observed(9)  # not named
    assert (exp.dele, exp.keys) == (1, {8})
    assert not exp.satisfied(300 * SECOND)
    assert exp.satisfied(300 * SECOND + 1)  # the record too old
    exp.deletion_observed(8)
    assert exp.satisfied(SECOND)


def _pairs(trace: list[dict[str, int]]) -> list[tuple[int, int]]:
    """The (new_spec, old_spec) states the trace passes through, each once."""
    states: list[tuple[int, int]] = []
    for row in trace:
        state = (row["new_spec"], row["old_spec"])
        if not states or states[-1] != state:
            states.append(state)
    return states


def test_the_kubernetes_io_example_order() -> None:
    """3 replicas, 25 % / 25 % (1, 0): new->1, old->2 and new->2, old->1 and new->3,
    old->0; each pair at one instant (old first, new in the next sync), 20 s apart with
    G = 20 (the data set's dep366)."""
    s = Scenario(desired=3, G=20, B=0, grace=5, max_surge=1, max_unavailable=0,
                 rollout_at=60)
    trace = run(s)
    assert _pairs(trace) == [(3, 0), (1, 3), (2, 2), (3, 1), (3, 0)]
    writes = {r["t"]: (r["new_scale_writes"], r["old_scale_writes"]) for r in trace
              if r["new_scale_writes"] or r["old_scale_writes"]}
    assert writes == {60: (1, 0), 80: (1, 1), 100: (1, 1), 120: (0, 1)}
    assert all(r["new_spec"] + r["old_spec"] <= r["desired"] + r["max_surge_r"]
               for r in trace)


def test_creating_a_replicaset_conflicts_once() -> None:
    """A cold start (G = 0): the sync that creates the ReplicaSet writes the status in
    getNewReplicaSet and conflicts on its second write; the write's event syncs again at
    once, the error's rate-limited retry 5 ms later: 5 Deployment and 3 ReplicaSet syncs
    at t = 0 (dep005)."""
    s = Scenario(desired=1, G=0, B=10, max_surge="50%", max_unavailable="25%",
                 start="cold", rollout_at=10)
    trace = run(s)
    assert (trace[0]["deploy_syncs"], trace[0]["rs_syncs"]) == (5, 3)
    assert (trace[0]["created"], trace[0]["new_scale_writes"]) == (1, 1)
    assert trace[10]["rs_count"] == 2


def test_a_swallowed_cleanup_error_skips_the_scale_down() -> None:
    """An old ReplicaSet scaled below its available pods makes cleanupUnhealthyReplicas
    fail (a "scale down" by a negative count); reconcileOldReplicaSets returns no error and
    scales nothing in that sync: three old scale writes at t = 10, not five (dep467)."""
    s = Scenario(desired=3, G=0, B=0, max_surge=1, max_unavailable=1, rollout_at=10,
                 deaths=((150, 1),))
    row = run(s)[10]
    assert (row["new_scale_writes"], row["old_scale_writes"]) == (3, 3)
    assert (row["deploy_syncs"], row["rs_syncs"]) == (14, 13)


def test_a_stuck_progress_check_is_rate_limited() -> None:
    """Settled long ago and scaled before its rollout: each rolling sync finds nothing to
    write and the Progressing condition 1000 s old, so it is added rate-limited: every 5 ms
    while the bucket's 100 tokens last, then 10 a second (dep123)."""
    s = Scenario(desired=100, G=5, B=10, min_ready_seconds=30, max_surge="50%",
                 max_unavailable="50%", rollout_at=60, scale_at=31, desired2=10,
                 deaths=((150, 1),))
    trace = run(s)
    assert [trace[t]["deploy_syncs"] for t in range(30, 38)] == [0, 111, 10, 10, 10, 10, 4, 0]


def test_settled_start_is_quiet_until_the_rollout() -> None:
    s = Scenario(desired=4, G=1, B=2, min_ready_seconds=5, max_surge="25%",
                 max_unavailable="25%", rollout_at=10)
    trace = run(s)
    assert list(trace[0]) == list(TRACE_COLUMNS)
    assert (trace[0]["deploy_syncs"], trace[0]["rs_syncs"]) == (1, 1)
    assert all(r["deploy_syncs"] == r["rs_syncs"] == 0 for r in trace[1:10])
    assert trace[9]["status_complete"] == 1
    assert trace[10]["status_complete"] == 0
    assert trace[-1]["status_complete"] == 1
    assert trace[-1]["old_spec"] == 0
    row = metrics(s, trace)
    assert list(row) == list(METRIC_COLUMNS)
    assert row["final_rs_count"] == 2
    assert row["complete_at_end"] == 1
    assert row["rollout_done_at"] is not None
    assert row["rollout_done_at"] <= row["status_complete_at"]


def test_settled_objects_are_what_the_pre_history_leaves() -> None:
    s = Scenario(desired=10, min_ready_seconds=30, max_surge=3, max_unavailable="50%")
    d, rs, pods, _ = deployment.settled_objects(s)
    assert (d.generation, d.revision, d.status.observed_generation) == (1, "1", 1)
    progressing = d.status.conditions[-1]
    assert (progressing.reason, progressing.last_update, progressing.last_transition) == (
        "NewReplicaSetAvailable", -940 * SECOND, -1000 * SECOND)
    assert (rs.replicas, rs.status.available, rs.desired_annotation, rs.max_annotation) == (
        10, 10, 10, 13)
    assert [p.uid for p in pods] == list(range(1, 11))
    assert all(p.ready == -1000 for p in pods)


def test_metrics_fold_the_seconds_of_a_trace() -> None:
    """The data set's definitions on a trace of four seconds, the last two alike but for
    ``t``: maxima, minima, seconds counted, sums, the first second done from the last
    rollout on, and None for what never came."""
    s = Scenario(desired=2, max_surge=1, max_unavailable=0, rollout_at=1, duration=3)
    zero = dict.fromkeys(TRACE_COLUMNS, 0)
    trace = [
        {**zero, "t": 0, "desired": 2, "nonterminating": 2, "api_pods": 2, "live": 2,
         "available": 2, "old_pods": 2, "rs_count": 1, "max_surge_r": 1},
        {**zero, "t": 1, "desired": 2, "nonterminating": 4, "api_pods": 4, "live": 3,
         "available": 1, "new_pods": 2, "old_pods": 2, "rs_count": 2, "max_surge_r": 1,
         "created": 2, "create_commands": 2, "deploy_syncs": 3},
        {**zero, "t": 2, "desired": 2, "nonterminating": 2, "api_pods": 3, "live": 2,
         "available": 2, "new_pods": 3, "terminating": 1, "new_true_available": 2,
         "rs_count": 2, "max_surge_r": 1, "deleted": 2, "delete_commands": 2,
         "status_complete": 0},
    ]
    trace.append({**trace[2], "t": 3})
    row = metrics(s, trace)
    assert (row["max_pods"], row["max_api_pods"], row["max_live"], row["max_surge"]) == (
        4, 4, 3, 2)
    assert (row["surge_violation_seconds"], row["api_surge_violation_seconds"]) == (1, 1)
    assert (row["min_available"], row["min_available_after_rollout"]) == (1, 1)
    assert (row["unavailable_seconds"], row["unavailable_seconds_after_rollout"]) == (1, 1)
    assert (row["rollout_done_at"], row["status_complete_at"]) == (2, None)
    assert (row["complete_at_end"], row["final_rs_count"]) == (1, 2)
    assert (row["created"], row["deleted"], row["deploy_syncs"]) == (2, 4, 3)
    assert (row["excess_copy_seconds"], row["missing_copy_seconds"]) == (1, 0)
    assert (row["max_surge_r"], row["max_unavailable_r"]) == (1, 0)
    late = metrics(Scenario(desired=2, max_surge=1, max_unavailable=0, rollout_at=9,
                            duration=3), trace)
    assert (late["min_available_after_rollout"], late["rollout_done_at"]) == (None, None)
