"""Sections f (delays that vary) and g (faults and real control planes) against figures
computed independently: the same cells simulated straight from a frame, their statistics
and laws worked out with numpy and exact fractions."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from reconsim import simulate
from reconsim.model.simulate import DEATHS_DTYPE
from reconsim.report import build_report
from reconsim.report.build import summarize
from reconsim.report.load import load_sweep
from reconsim.report.section import Context, to_json
from reconsim.report.sections import delays
from tests.helpers.sweeps import run_spec
from tests.test_percentile import by_hand

#: The world sweep's axes (and the fixed values below): spreads, jitter and a stale
#: window, two controllers, 20 seeds.
AXES: dict[str, list[Any]] = {
    "controller": ["ledger", "intent"], "U": [3, 8, 20], "B_spread": [0, 2],
    "U_jitter": [0, 4], "lag": ["none", "stale"], "seed": list(range(20)),
}
FIXED: dict[str, Any] = {"G": 0, "G_spread": 12, "B": 5, "desired": 3, "duration": 600}
STALE = [[300, 420, 60]]

WORLD_SPEC = """
name = "world"
[lag.stale]
windows = [[300, 420, 60]]
[grid]
controller = ["ledger", "intent"]
G = 0
G_spread = 12
B = 5
B_spread = [0, 2]
U = [3, 8, 20]
U_jitter = [0, 4]
desired = 3
duration = 600
seed = { from = 0, to = 19 }
lag = ["none", "stale"]
schedule = "seed"
[schedule.seed]
events = [[300, 2]]
"""

CLAIM_SPEC = """
name = "claim"
[grid]
controller = ["ledger", "intent"]
G = 0
G_spread = 27
B = 5
U = 15
desired = 6
seed = { from = 0, to = 19 }
schedule = "seed"
[schedule.seed]
events = [[300, 2]]
"""

#: Every cell runs under the watch trigger (no periodic twin); fail_rate has twins.
WATCH_SPEC = """
name = "watch"
[grid]
controller = ["ledger", "intent"]
G = 10
B = 5
U = [20, 40]
trigger = "watch"
fail_rate = [0.0, 0.1]
seed = { from = 0, to = 3 }
schedule = "seed"
[schedule.seed]
events = [[300, 2]]
"""

#: Seed 001's world only: no spread, no fault, no switch.
PLAIN_SPEC = """
name = "plain"
[grid]
controller = ["ledger", "intent"]
G = [0, 30]
U = [15, 35]
schedule = "seed"
[schedule.seed]
events = [[300, 2]]
"""


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = run_spec(tmp_path_factory.mktemp("world"), WORLD_SPEC)
    return out, summarize(load_sweep(out))


@pytest.fixture(scope="module")
def world_cells() -> pl.DataFrame:
    """The world sweep's cells, simulated from a frame built here."""
    rows = [dict(zip(AXES, values, strict=True)) for values in itertools.product(*AXES.values())]
    frame = pl.DataFrame(rows).with_columns(
        **{k: pl.lit(v, pl.Int64) for k, v in FIXED.items()},
        deaths=pl.lit(pl.Series([[{"at": 300, "count": 2}]], dtype=DEATHS_DTYPE)).first(),
        lag=pl.col("lag").replace_strict(
            {"none": [], "stale": [{"from": f, "to": t, "extra": e} for f, t, e in STALE]},
            return_dtype=pl.List(pl.Struct({"from": pl.Int64, "to": pl.Int64,
                                            "extra": pl.Int64}))),
        lag_name=pl.col("lag"))
    out = simulate(frame)
    return out.with_columns(pl.col("lag_name").alias("lag")).drop("lag_name")


def ceil(x: Fraction) -> int:
    return math.ceil(x)


def laws(r: dict[str, Any]) -> tuple[int, int, int] | None:
    """The law's three readings for one cell, from exact fractions (None outside its scope:
    the ledger in seed 001's world but for the delays)."""
    if r["controller"] != "ledger" or r["lag"] != "none":
        return None
    g, gs, b, bs, u, j, d = (r[k] for k in ("G", "G_spread", "B", "B_spread", "U", "U_jitter",
                                           "desired"))
    lowest = d * (ceil(Fraction(g + b, u + j)) - 1)
    interval = Fraction(sum(max(1, u - j + z) for z in range(2 * j + 1)), 2 * j + 1)
    mean = d * (ceil(Fraction(2 * g + gs + 2 * b + bs, 2) / interval) - 1)
    worst = d * (ceil(Fraction(g + gs + b + bs, max(1, u - j))) - 1)
    return lowest, mean, worst


def groups(cells: pl.DataFrame) -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """The cells per (G, G_spread, B, B_spread, U, U_jitter, controller) and lag: each group
    the seeds of one replicate."""
    key = ["G", "G_spread", "B", "B_spread", "U", "U_jitter", "controller", "lag"]
    for k, frame in cells.group_by(key):
        yield dict(zip(key, k, strict=True)), frame.to_dicts()


def test_rows_are_the_replicate_groups_figures(world: tuple[Path, dict[str, Any]],
                                               world_cells: pl.DataFrame) -> None:
    d = world[1]["delays"]
    assert d["cells"] == world_cells.height == 960
    assert d["groups"] == 48
    want: dict[tuple[Any, ...], dict[str, Any]] = {}
    for key, rows in groups(world_cells):
        o = np.array([r["overshoot"] for r in rows])
        assert len(o) == 20
        readings = [laws(r) for r in rows]
        row = want.setdefault(tuple(key[k] for k in ("G", "G_spread", "B", "B_spread", "U",
                                                     "U_jitter", "controller")),
                              {"cells": 0, "groups": 0, "medians": [], "p95": [], "max": [],
                               "law": [], "above": [0, 0, 0]})
        row["cells"] += len(o)
        row["groups"] += 1
        row["medians"].append(float(np.median(o)))
        row["p95"].append(float(by_hand(o.tolist(), 95)))
        row["max"].append(int(o.max()))
        for r, law in zip(rows, readings, strict=True):
            if law is not None:
                row["law"].append(law)
                for i in range(3):
                    row["above"][i] += r["overshoot"] > law[i]
    got = {tuple(r[k] for k in ("G", "G_spread", "B", "B_spread", "U", "U_jitter",
                                "controller")): r for r in d["rows"]}
    assert got.keys() == want.keys()
    for key, w in want.items():
        g = got[key]
        assert (g["cells"], g["groups"]) == (w["cells"], w["groups"]), key
        assert (g["median_lo"], g["median_hi"]) == (min(w["medians"]), max(w["medians"])), key
        assert (g["p95"], g["max"]) == (max(w["p95"]), max(w["max"])), key
        assert g["law_cells"] == len(w["law"])
        for i, name in enumerate(("lowest", "mean", "worst")):
            values = [law[i] for law in w["law"]]
            assert g[f"law_{name}_lo"] == (min(values) if values else None), key
            assert g[f"law_{name}_hi"] == (max(values) if values else None), key
            assert g[f"above_{name}"] == w["above"][i], key


def test_delays_chart_draws_the_rows_of_the_summary(
        world: tuple[Path, dict[str, Any]]) -> None:
    # The chart's marks come from the aggregate the summary's rows are read from (checked
    # against the cells above): per row, the medians' range, the largest, each reading's
    # largest; every delay setting (G_spread = 12, B_spread 0 or 2, U_jitter 0 or 4).
    summary = delays.summarize(load_sweep(world[0]))
    assert to_json(summary) == world[1]["delays"]
    assert summary.chart is not None
    assert summary.chart.settings == 4
    grid = summary.chart.grid
    rows = {tuple(getattr(r, k) for k in delays.KEY): r for r in summary.rows}
    assert sorted(tuple(g[k] for k in delays.KEY) for g in grid.iter_rows(named=True)) == \
        sorted(rows)
    for g in grid.iter_rows(named=True):
        r = rows[tuple(g[k] for k in delays.KEY)]
        assert (g["median_lo"], g["median_hi"], g["max"]) == (r.median_lo, r.median_hi, r.max)
        assert (g["law_lowest"], g["law_mean"], g["law_worst"]) == (
            r.law_lowest_hi, r.law_mean_hi, r.law_worst_hi)
        assert g["setting"] == (f"G = {r.G} + 0…{r.G_spread}, B = {r.B} + 0…{r.B_spread}, "
                                f"U_jitter = {r.U_jitter}")
    fig = delays.charts(summary, Context.of(load_sweep(world[0])))[0]
    assert fig.meta == {"marks": grid.height * 6, "panels": 4, "settings": 4}


def test_readings_count_every_cell_they_cover(world: tuple[Path, dict[str, Any]],
                                              world_cells: pl.DataFrame) -> None:
    readings = {r["name"]: r for r in world[1]["delays"]["readings"]}
    rows = world_cells.to_dicts()
    covered = [(r["overshoot"], law) for r in rows if (law := laws(r)) is not None]
    assert len(covered) == 240      # ledger, lag none: 3 U x 2 B_spread x 2 U_jitter x 20
    for i, name in enumerate(("lowest", "mean", "worst")):
        above = [o - law[i] for o, law in covered if o > law[i]]
        r, claim = readings[name], readings[name]["claim"]
        assert claim["cells"] == 240
        assert claim["counterexamples"] == len(above)
        assert claim["holds"] == 240 - len(above) == r["equal"] + r["below"]
        assert claim["verdict"] == ("fails" if above else "holds")
        assert r["equal"] == sum(o == law[i] for o, law in covered)
        assert r["below"] == sum(o < law[i] for o, law in covered)
        assert claim.get("by") == ({"figure": "overshoot above the law", "min": min(above),
                                    "max": max(above)} if above else None)
        if above:   # the worst first, one per (G, U, B, desired)
            first = claim["examples"][0]
            assert first["overshoot"] - first[f"law_{name}"] == max(above)
            assert 0 < len(claim["examples"]) <= 12
            assert all(e["overshoot"] > e[f"law_{name}"] for e in claim["examples"])
            # Where: each axis's counts add up to the counterexamples.
            assert all(sum(v["cells"] for v in w["values"]) == len(above)
                       for w in claim["where"] if not w["truncated"])
    # The law at the lowest delays is exceeded here (a delay of 5 to 19 s against one of 5).
    assert readings["lowest"]["claim"]["counterexamples"] > 0
    assert readings["lowest"]["claim"]["where"]


def test_worst_case_boundary_fails_under_a_stale_window(world: tuple[Path, dict[str, Any]],
                                                        world_cells: pl.DataFrame) -> None:
    b = world[1]["delays"]["boundary"]
    frame = world_cells.with_columns(
        above=pl.max_horizontal(1, pl.col("U") - pl.col("U_jitter"))
        >= pl.col("G") + pl.col("G_spread") + pl.col("B") + pl.col("B_spread"))
    for row in b["by_controller"]:
        mine = frame.filter(pl.col("controller") == row["controller"])
        up, down = mine.filter(pl.col("above")), mine.filter(~pl.col("above"))
        assert row["above"]["cells"] == up.height
        assert row["above"]["counterexamples"] == (up["overshoot"] > 0).sum()
        assert row["above_max"] == up["overshoot"].max()
        assert row["below_cells"] == down.height
        assert row["below_positive"] == (down["overshoot"] > 0).sum()
        assert row["below_max"] == down["overshoot"].max()
    ledger = frame.filter(pl.col("controller") == "ledger", pl.col("above"))
    failing = ledger.filter(pl.col("overshoot") > 0)
    # A ledger read 60 s old after the deaths at 300 s duplicates copies above the boundary.
    above = b["above"]
    assert (above["cells"], above["counterexamples"]) == (ledger.height, failing.height)
    assert failing.height > 0
    assert above["verdict"] == "fails"
    assert above["by"] == {"figure": "overshoot", "min": failing["overshoot"].min(),
                           "max": failing["overshoot"].max()}
    assert set(failing["lag"]) == {"stale"}
    assert b["in_scope"]["counterexamples"] == 0
    assert b["in_scope"]["cells"] == ledger.filter(pl.col("lag") == "none").height
    [stale] = {w["axis"]: w for w in above["where"]}["lag"]["values"]  # the stale window only
    assert (stale["cells"], stale["of"]) == (failing.height,
                                             ledger.filter(pl.col("lag") == "stale").height)
    assert 0 < len(above["examples"]) <= 12
    assert all(e["overshoot"] > 0 for e in above["examples"])


def test_faults_compare_each_cell_with_its_twin(world: tuple[Path, dict[str, Any]],
                                                world_cells: pl.DataFrame) -> None:
    f = world[1]["faults"]
    assert list(f["switches_present"]) == ["lag"]
    assert f["cells"] == 480
    (value,) = f["values"]
    assert (value["switch"], value["value"], value["cells"], value["twinned"],
            value["untwinned"]) == ("lag", "300:420:60", 480, 480, 0)  # as the flag spells it
    key = ["controller", "U", "B_spread", "U_jitter", "seed"]
    frame = world_cells.with_columns(wasted=pl.col("delete_commands") - pl.col("deleted"))
    stale = frame.filter(pl.col("lag") == "stale").sort(key)
    twin = frame.filter(pl.col("lag") == "none").sort(key)
    assert stale.select(key).equals(twin.select(key))
    for c in value["controllers"]:
        mask = (stale["controller"] == c["controller"]).to_numpy()
        assert c["twinned"] == c["cells"] == mask.sum()
        for x in c["changes"]:
            column = {"wasted_deletes": "wasted"}.get(x["figure"], x["figure"])
            a, t = stale[column].to_numpy()[mask], twin[column].to_numpy()[mask]
            change = a - t
            assert x["mean"] == round(float(a.mean()), 3)
            assert x["twin_mean"] == round(float(t.mean()), 3)
            assert x["change_mean"] == round(float(change.mean()), 3)
            assert (x["worse"], x["better"], x["same"]) == (
                (change > 0).sum(), (change < 0).sum(), (change == 0).sum())
            assert (x["change_min"], x["change_max"]) == (change.min(), change.max())
    assert value["worst"][0]["change_overshoot"] == int(
        (stale["overshoot"] - twin["overshoot"]).max())  # type: ignore[arg-type]
    assert f["watch_cells"] == 0


def test_claim_at_the_measured_delays(tmp_path: Path) -> None:
    out = run_spec(tmp_path, CLAIM_SPEC)
    c = summarize(load_sweep(out))["delays"]["claim"]
    cells = simulate(pl.DataFrame({
        "controller": ["ledger"] * 20, "G": [0] * 20, "G_spread": [27] * 20, "U": [15] * 20,
        "B": [5] * 20, "desired": [6] * 20, "duration": [900] * 20, "seed": list(range(20)),
        "deaths": pl.Series([[{"at": 300, "count": 2}]] * 20, dtype=DEATHS_DTYPE)}))
    o = cells["overshoot"].to_numpy()
    assert c["cells"] == 20
    assert c["oscillating"] == (o > 0).sum()
    assert c["median"] == float(np.median(o))
    assert c["max"] == o.max()
    assert c["unneeded_max"] == cells["unneeded"].max()
    # desired 6, delays 5 + 13.5 on average and 32 at worst, U = 15: 6 x 1 and 6 x 2.
    assert (c["law_mean_lo"], c["law_worst_lo"]) == (6, 12)
    assert c["groups_total"] == 1


def test_a_switch_without_twins_is_counted_and_said(tmp_path: Path) -> None:
    out = run_spec(tmp_path, WATCH_SPEC)
    report = build_report(out)
    f = report.data["faults"]
    by = {(v["switch"], v["value"]): v for v in f["values"]}
    watch = by[("trigger", "watch")]
    assert (watch["cells"], watch["twinned"], watch["untwinned"]) == (32, 0, 32)
    assert all(c["twinned"] == 0 for c in watch["controllers"])
    rate = by[("fail_rate", "0.1")]
    assert (rate["cells"], rate["twinned"], rate["untwinned"]) == (16, 16, 0)
    frame = pl.read_parquet(out / "data" / "*.parquet")
    want = frame.group_by("controller", "U").agg(
        pl.len().alias("cells"), (pl.col("overshoot") > 0).sum().alias("overshooting"),
        pl.col("overshoot").max().alias("max"))
    got = {(r["controller"], r["U"]): r for r in f["resync"]}
    assert f["watch_cells"] == frame.height == 32
    for r in want.iter_rows(named=True):
        g = got[(r["controller"], r["U"])]
        assert (g["cells"], g["overshooting"], g["max"]) == (r["cells"], r["overshooting"],
                                                              r["max"])
    html = report.html.read_text(encoding="utf-8")
    assert "trigger = watch (32 cells)" in html
    assert "Not compared" in html
    assert "Watch trigger: overshoot against the resync period" in html


#: The real controller and the gate in one Kubernetes-like world, with create faults.
GATE_SPEC = """
name = "gate"
[grid]
controller = ["replicaset", "expectations"]
ttl = 300
observe = "created"
delete_order = "newest"
max_per_round = 500
slow_start = true
trigger = "watch"
U = 300
G = 5
B = 5
desired = [1, 6]
duration = 120
fail_rate = [0.0, 0.3]
lost_rate = [0.0, 0.2]
seed = { from = 0, to = 3 }
schedule = "quiet"

[schedule.quiet]
events = []
"""


def test_the_real_controller_is_set_against_the_gate_on_faulty_cells(tmp_path: Path) -> None:
    out = run_spec(tmp_path, GATE_SPEC)
    report = build_report(out)
    g = report.data["faults"]["gate"]
    # Recounted here: each replicaset cell with a create fault beside the expectations cell
    # equal in every parameter both take.
    frame = pl.read_parquet(out / "data" / "*.parquet").filter(
        (pl.col("fail_rate") > 0) | (pl.col("lost_rate") > 0)).with_columns(
        wasted=pl.col("delete_commands") - pl.col("deleted"))
    key = ["desired", "fail_rate", "lost_rate", "seed"]
    pairs = frame.filter(pl.col("controller") == "replicaset").join(
        frame.filter(pl.col("controller") == "expectations"), on=key, suffix="_gate")
    assert g["pairs"] == g["faulty"] == pairs.height == 24
    assert g["duplicates"] == (pairs["unneeded"] - pairs["unneeded_gate"]).sum()
    assert g["wasted_deletes"] == (pairs["wasted"] - pairs["wasted_gate"]).sum()
    assert g["missing_copy_seconds"] == (
        pairs["missing_copy_seconds"] - pairs["missing_copy_seconds_gate"]).sum()
    assert g["more_duplicates"] == (pairs["unneeded"] > pairs["unneeded_gate"]).sum()
    assert g["less_missing"] == (
        pairs["missing_copy_seconds"] < pairs["missing_copy_seconds_gate"]).sum()
    assert g["missing_copy_seconds"] < 0  # retrying at once fills the gap sooner
    # The faults' own share: each pair's change less its fault-free twins' change.
    calm = pl.read_parquet(out / "data" / "*.parquet").filter(
        (pl.col("fail_rate") == 0) & (pl.col("lost_rate") == 0)).with_columns(
        wasted=pl.col("delete_commands") - pl.col("deleted"))
    twins = calm.filter(pl.col("controller") == "replicaset").join(
        calm.filter(pl.col("controller") == "expectations"), on=["desired", "seed"],
        suffix="_gate").select("desired", "seed", *(
            (pl.col(f) - pl.col(f"{f}_gate")).alias(f"calm_{f}")
            for f in ("unneeded", "wasted", "missing_copy_seconds")))
    both = pairs.join(twins, on=["desired", "seed"])
    assert g["twinned"] == both.height == 24
    for f, name in (("unneeded", "fault_duplicates"), ("wasted", "fault_wasted_deletes"),
                    ("missing_copy_seconds", "fault_missing_copy_seconds")):
        assert g[name] == (both[f] - both[f"{f}_gate"] - both[f"calm_{f}"]).sum(), name
    html = report.html.read_text(encoding="utf-8")
    assert "The real ReplicaSet controller against the idealised gate" in html
    assert f"saved {-g['missing_copy_seconds']:,} missing copy-seconds" in html
    assert "The faults' own share" in html


def test_sweep_in_seed_001_s_world_says_so(tmp_path: Path) -> None:
    out = run_spec(tmp_path, PLAIN_SPEC)
    report = build_report(out)
    d, f = report.data["delays"], report.data["faults"]
    assert (d["cells"], len(d["rows"]), d["boundary"]["cells"], d["claim"]["cells"]) == (0, 0, 0, 0)
    assert all(r["claim"]["cells"] == 0 for r in d["readings"])
    assert all(r["claim"]["verdict"] == "untested" for r in d["readings"])
    assert (f["cells"], len(f["switches_present"]), len(f["values"])) == (0, 0, 0)
    html = report.html.read_text(encoding="utf-8")
    assert "This sweep has no cells whose delays vary" in html
    assert "This sweep has no fault or semantic switch off its default" in html
    assert "delays" not in report.data["figures"]
    assert "faults" not in report.data["figures"]


def test_world_report_states_its_verdicts(world: tuple[Path, dict[str, Any]]) -> None:
    report = build_report(world[0])
    html = report.html.read_text(encoding="utf-8")
    d = report.data["delays"]
    lowest = d["readings"][0]
    assert ("<strong>The law at the lowest delays bounds the overshoot: fails</strong> on "
            f"{lowest['claim']['counterexamples']:,} of the {lowest['claim']['cells']:,} cells "
            "the law covers") in html
    above = d["boundary"]["above"]
    assert ("<strong>U ≥ worst G + worst B gives zero overshoot: fails</strong> on "
            f"{above['counterexamples']:,} of the {above['cells']:,} ledger cells above it") in html
    assert "U ≥ worst G + worst B gives zero overshoot&rdquo; fails</h3>" in html
    assert "is not tested: the sweep has no ledger cell the law covers at G = 0" in html
    assert "<strong>lag = 300:420:60</strong>" in html
    assert {"delays", "faults"} <= set(report.data["figures"])
