"""The law of a rollout's duration (:func:`reconsim.model.laws.rollout_columns`) against
the Deployment world's reference model (:mod:`reconsim.model.deployment`): on a grid of
settled single rollouts it holds on every cell it applies to, each other cell carries its
reason, and the waves and wave times of hand-derived cases (the kubernetes.io example
among them) are as worked out on paper."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import product
from typing import Any

import polars as pl

from reconsim.model import deployment
from reconsim.model.deployment import Scenario
from reconsim.model.laws import ROLLOUT_PREFIX, rollout_columns

#: The table's metric columns of the Deployment world, each with the data set's name where
#: it differs (three are renamed).
METRICS: dict[str, str] = {
    name: name for name in (
        "max_pods", "max_api_pods", "max_live", "surge_violation_seconds",
        "api_surge_violation_seconds", "min_available", "min_available_after_rollout",
        "unavailable_seconds", "unavailable_seconds_after_rollout", "rollout_done_at",
        "status_complete_at", "complete_at_end", "rs_syncs", "deploy_syncs",
        "final_rs_count", "created", "deleted", "excess_copy_seconds",
        "missing_copy_seconds")} | {
    "peak_surge": "max_surge", "surge_budget": "max_surge_r",
    "unavailable_budget": "max_unavailable_r"}
#: How a stored ``initial`` holds "desired" (a settled start).
NAMED = -1

_DEATH = pl.Struct({"at": pl.Int64, "count": pl.Int64})
_SCALE = pl.Struct({"at": pl.Int64, "desired": pl.Int64})
SCHEMA: dict[str, Any] = {
    "controller": pl.String, "desired": pl.Int64, "G": pl.Int64, "B": pl.Int64,
    "U": pl.Int64, "grace": pl.Int64, "duration": pl.Int64, "initial": pl.Int64,
    "max_surge": pl.String, "max_unavailable": pl.String, "min_ready": pl.Int64,
    "rollout": pl.List(pl.Int64), "scale": pl.List(_SCALE), "deaths": pl.List(_DEATH),
    **dict.fromkeys(METRICS, pl.Int64)}


def row(s: Scenario) -> dict[str, Any]:
    """The table's row of scenario ``s``, run through the reference model: its parameters
    as the table's columns, its metrics under the table's names."""
    m = deployment.metrics(s, deployment.run(s))
    return {
        "controller": "deployment", "desired": s.desired, "G": s.G, "B": s.B, "U": 1,
        "grace": s.grace, "duration": s.duration,
        "initial": NAMED if s.start == "settled" else 0,
        "max_surge": str(s.max_surge), "max_unavailable": str(s.max_unavailable),
        "min_ready": s.min_ready_seconds,
        "rollout": [s.rollout_at] + ([] if s.rollout2_at is None else [s.rollout2_at]),
        "scale": [] if s.scale_at is None else [{"at": s.scale_at, "desired": s.desired2}],
        "deaths": [{"at": a, "count": c} for a, c in s.deaths],
        **{table: m[data] for table, data in METRICS.items()}}


def frame(scenarios: Iterable[Scenario]) -> pl.DataFrame:
    """The table of ``scenarios``, as a sweep of the Deployment world stores it."""
    return pl.DataFrame([row(s) for s in scenarios], schema=SCHEMA)


def grid(**axes: Iterable[Any]) -> Iterator[Scenario]:
    """Every combination of ``axes`` (Scenario fields; ``scale`` an (at, desired) pair or
    None), skipping surge and unavailable both 0 (the API refuses it)."""
    names = list(axes)
    for values in product(*(list(v) for v in axes.values())):
        kw = dict(zip(names, values, strict=True))
        if (change := kw.pop("scale", None)) is not None:  # (at, desired) or None
            kw["scale_at"], kw["desired2"] = change
        if str(kw.get("max_surge", "25%")) in ("0", "0%") and str(
                kw.get("max_unavailable", "25%")) in ("0", "0%"):
            continue
        yield Scenario(**kw)


def with_law(f: pl.DataFrame) -> pl.DataFrame:
    """``f`` with the law's hidden columns, named without their prefix."""
    return f.with_columns(rollout_columns(f.columns)).rename(
        {f"{ROLLOUT_PREFIX}{n}": n for n in (
            "at", "surge", "unavailable", "waves", "wave", "law", "measured", "excluded",
            "holds")})


#: Every regime of the derivation: one batch a wave; the split first wave with W = A
#: (G <= B) and W = 2G (G > B); the merged first wave (G <= minReady, 2G <= minReady);
#: the staggered one (G <= minReady < 2G, excluded); G = 0 with minReady (A = B + 2m);
#: G > minReady (A = B + G); U >= N; the run's end before the rollout's.
GRID: dict[str, list[Any]] = {
    "desired": [1, 3, 10], "max_surge": [0, 1, "25%", "50%"],
    "max_unavailable": [0, 1, "25%"], "G": [0, 1, 5], "B": [0, 2],
    "min_ready_seconds": [0, 5], "grace": [0, 5], "duration": [90]}


def test_the_law_holds_on_every_cell_it_checks() -> None:
    f = with_law(frame(grid(**GRID)))
    assert f.height == 3 * 11 * 3 * 2 * 2 * 2
    assert f["at"].null_count() == 0
    # every cell is checked or carries its reason, and the law holds on every checked one
    assert f.filter(pl.col("holds").is_null() & pl.col("excluded").is_null()).height == 0
    failures = f.filter(pl.col("holds") == False)  # noqa: E712
    assert failures.height == 0, failures.head(5)
    reasons = dict(f.group_by("excluded").len().iter_rows())
    assert reasons.pop(None) > 600
    assert reasons == {"staggered": reasons["staggered"]}
    assert reasons["staggered"] > 0
    # the end of the run comes before some rollouts': the law says "not done", and is right
    late = f.filter(pl.col("holds") & (pl.col("at") + pl.col("law") > pl.col("duration")))
    assert late.height > 0
    assert late["rollout_done_at"].null_count() == late.height
    # the budgets the law resolves are the model's
    assert (f["surge"] == f["surge_budget"]).all()
    assert (f["unavailable"] == f["unavailable_budget"]).all()


def one(**kw: Any) -> dict[str, Any]:
    """The law's columns of one scenario."""
    return with_law(frame([Scenario(**kw)])).row(0, named=True)


def test_the_kubernetes_io_example() -> None:
    """desired 3, 25% / 25%: surge 1, unavailable 0, three waves of one pod; with G 20 and B
    0 a wave takes 20 s (new→1 at 60; old→2, new→2 at 80; old→1, new→3 at 100; old→0 at
    120), and the last old pod leaves at once (grace 0)."""
    r = one(desired=3, max_surge="25%", max_unavailable="25%", G=20, B=0, rollout_at=60)
    assert (r["surge"], r["unavailable"], r["waves"], r["wave"]) == (1, 0, 3, 20)
    assert (r["law"], r["rollout_done_at"], r["holds"]) == (60, 120, True)


def test_the_wave_time_by_hand() -> None:
    """N 10, surge 0, unavailable 2: five waves of two pods; the old set reaches 0 at the
    fourth wave's availability (8 new available), the last new pods are truly available
    B + minReady after the fifth wave's creation, which comes later than the old pods'
    grace: law = 4A + B + minReady."""
    for g, wave in ((0, 2 + 2 * 5), (5, 2 + 5 + 5), (20, 2 + 20)):  # G 0, G <= m, G > m
        r = one(desired=10, max_surge=0, max_unavailable=2, G=g, B=2, min_ready_seconds=5,
                grace=5)
        assert (r["waves"], r["wave"]) == (5, wave)
        assert r["law"] == 4 * wave + 2 + 5 == r["measured"]


def test_the_split_first_wave_by_hand() -> None:
    """N 10, surge 2, unavailable 2, G 5, B 2: the first wave in two batches, at 0 and 5;
    2G > A = 7, so each batch waits for the other's adds: batches at 0, 5, 10, 15, 20 (+r).
    The old set reaches 0 when 8 are available (the batch of 15, at 22) and its pods leave
    at 27; the last new ones are available at 22: law 27."""
    r = one(desired=10, max_surge=2, max_unavailable=2, G=5, B=2, grace=5)
    assert (r["wave"], r["law"], r["measured"], r["holds"]) == (7, 27, 27, True)
    # at r = 0 the ReplicaSet controller's queue holds the start's list first: one batch,
    # waves of four at 0, 7, 14; 8 new are seen available at 14, the old pods gone at 19
    r = one(desired=10, max_surge=2, max_unavailable=2, G=5, B=2, grace=5, rollout_at=0)
    assert (r["law"], r["measured"]) == (19, 19)


def test_the_merged_and_the_staggered_first_wave() -> None:
    """Split with G <= minReady: at 2G <= minReady the first wave is seen at once at
    B + G + m + 1 (checked); at G <= m < 2G it is staggered (unchecked, its reason)."""
    r = one(desired=10, max_surge=2, max_unavailable=2, G=1, B=2, min_ready_seconds=5)
    assert (r["law"], r["measured"], r["excluded"]) == (24, 24, None)
    r = one(desired=10, max_surge=2, max_unavailable=2, G=5, B=2, min_ready_seconds=10)
    assert (r["law"], r["measured"], r["excluded"]) == (r["measured"], r["measured"], None)
    r = one(desired=10, max_surge=2, max_unavailable=2, G=5, B=2, min_ready_seconds=5)
    assert (r["excluded"], r["holds"]) == ("staggered", None)


def test_each_reason_a_cell_is_left_unchecked() -> None:
    base: dict[str, Any] = {"desired": 4, "max_surge": 1, "max_unavailable": 1, "G": 1,
                            "B": 2}
    cases = {"unsettled": {"start": "cold"}, "rollover": {"rollout2_at": 13},
             "scaled": {"scale_at": 12, "desired2": 6}, "death": {"deaths": ((11, 1),)}}
    for reason, kw in cases.items():
        assert one(**base, **kw)["excluded"] == reason
    # events after the predicted end change nothing
    r = one(**base, scale_at=300, desired2=6, deaths=((400, 1),))
    assert (r["excluded"], r["holds"]) == (None, True)
    # other worlds' rows, and a rollout after the end, have no law
    f = frame([Scenario(**base)])
    f = pl.concat([f.with_columns(rollout=pl.lit([700], dtype=pl.List(pl.Int64))),
                   f.with_columns(controller=pl.lit("ledger"))])
    assert with_law(f)["law"].null_count() == 2
