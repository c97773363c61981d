"""The Deployment world as cells: the ``deployment`` controller's cells through
``simulate``, ``run_cell``, ``trace`` and the command line, checked against the real
controllers' recorded metrics and against recounts of the world's own trace."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from reconsim.cli import main
from reconsim.conformance.load import DEPLOYMENT, load
from reconsim.model import deployment, rolling
from reconsim.model.metrics import WORLD_METRICS
from reconsim.model.params import Cell
from reconsim.model.simulate import cells_frame, run_cell, simulate
from reconsim.model.trace import trace_cell

ROLLING = WORLD_METRICS["deployment"]


def cell_of(s: deployment.Scenario) -> Cell:
    """A data set scenario as a cell of the ``deployment`` controller."""
    return Cell(controller="deployment", desired=s.desired, G=s.G, B=s.B,
                min_ready=s.min_ready_seconds, grace=s.grace, max_surge=s.max_surge,
                max_unavailable=s.max_unavailable,
                initial="desired" if s.start == "settled" else 0, rollout=s.rollouts,
                scale=s.scale, deaths=s.deaths, duration=s.duration)


@pytest.fixture(scope="module")
def dataset() -> Any:
    return load(DEPLOYMENT.data_dir)


@pytest.mark.parametrize("half", range(2))
def test_cells_reproduce_the_real_controllers(dataset: Any, half: int) -> None:
    """Every data set scenario, as a row of a frame through ``simulate``: its rolling
    update's metrics equal the real controllers' metrics.csv row (renamed), and the
    figures both count (creates, deletes, copy-seconds) too."""
    scenarios = list(dataset.scenarios)[200 * half:200 * (half + 1)]
    out = simulate(cells_frame([cell_of(s) for s in scenarios]))
    real = dataset.metrics.filter(pl.col("id").is_in([s.id for s in scenarios]))
    assert out.height == real.height == 200
    expected = real.select(
        *(pl.col(source).alias(name) for name, source in rolling.ROLLING_METRICS.items()),
        "created", "deleted", "create_commands", "delete_commands", "excess_copy_seconds",
        "missing_copy_seconds")
    got = out.select(expected.columns)
    mismatched = [(s.id, c) for i, s in enumerate(scenarios) for c in expected.columns
                  if got[c][i] != expected[c][i]]
    assert mismatched == []


def test_the_worlds_metrics_are_null_for_other_controllers() -> None:
    out = simulate(cells_frame([
        Cell(controller="ledger", duration=60),
        Cell(controller="deployment", desired=3, initial="desired", deaths=(), duration=60)]))
    assert out.select(ROLLING).row(0) == (None,) * len(ROLLING)
    assert None not in out.select(ROLLING).row(1)
    assert out["max_surge"].to_list() == [None, "25%"]
    assert out["rollout"].to_list() == [None, [10]]


def test_the_shared_figures_are_those_of_its_trace() -> None:
    """overshoot, copy-seconds, stable_at and each event's response (a death, a change of
    desired) recounted from the world's own per-second trace."""
    cell = Cell(controller="deployment", desired=5, initial="desired", G=5, B=10, grace=5,
                deaths=((60, 2),), scale=((90, 8),), rollout=(10, 40), duration=200)
    got = run_cell(**{f: getattr(cell, f) for f in (
        "controller", "desired", "initial", "G", "B", "grace", "deaths", "scale", "rollout",
        "duration")})
    rows = deployment.run(deployment.scenario_of(cell))
    gap = [r["live"] - r["desired"] for r in rows]
    assert got["overshoot"] == max(0, *gap)
    assert got["excess_copy_seconds"] == sum(max(0, g) for g in gap)
    assert got["missing_copy_seconds"] == sum(max(0, -g) for g in gap)
    drift = max((r["t"] for r in rows if r["live"] != r["desired"]), default=0)
    assert got["stable_at"] == (None if drift == cell.duration else drift + 1)
    assert [r["at"] for r in got["responses"]] == [60, 90]
    window = [g for r, g in zip(rows, gap, strict=True) if 60 <= r["t"] < 90]
    assert got["responses"][0]["missing"] == sum(max(0, -g) for g in window)
    assert got["rounds"] == sum(1 for r in rows if r["rs_syncs"] or r["deploy_syncs"])
    frame = trace_cell(cell)
    assert frame["live"].to_list() == [r["live"] for r in rows]
    assert frame["round"].sum() == got["rounds"]


@pytest.mark.parametrize(("change", "message"), [
    ({"G_spread": 3}, "G_spread = 3: not a rule of the Deployment world"),
    ({"gain": 0.5}, "gain = 0.5: not a rule of the Deployment world"),
    ({"initial": 2}, "initial must be 'desired' (a settled Deployment) or 0"),
    ({"max_surge": 0, "max_unavailable": "0%"}, "max_surge and max_unavailable are both 0"),
    ({"rollout": (30, 20)}, "rollout must list increasing seconds, got [30, 20]"),
    ({"rollout": ()}, "rollout: the Deployment world needs at least one template change"),
    ({"desired": 10**6}, "desired 1,000,000 over 901 s: the Deployment world runs at most "
                         "50,000,000 pod-seconds"),
    ({"scale": ((5, 100_000),), "duration": 600}, "desired 100,000 over 601 s"),
    ({"max_unavailable": "101%"}, "max_unavailable must be an integer in [0, 1000000] or a "
                                  "percentage 'P%', P in [0, 100], got '101%'"),
])
def test_a_cell_it_cannot_run_is_refused_in_one_line(change: dict[str, Any],
                                                     message: str) -> None:
    with pytest.raises(ValueError, match=r".") as refused:
        Cell(**{"controller": "deployment", "initial": "desired", "deaths": (), **change})
    assert message in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_rollout_after_the_end_leaves_the_rollouts_figures_null() -> None:
    got = run_cell(controller="deployment", desired=3, initial="desired", deaths=(),
                   rollout=(700,), duration=600)
    assert (got["min_available_after_rollout"], got["rollout_done_at"],
            got["status_complete_at"]) == (None, None, None)
    # its condition holds at the end: every pod is of the current (first) template
    assert got["complete_at_end"] == 1
    assert got["min_available"] == 3


def test_the_command_line_runs_a_rollout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--controller", "deployment", "--desired", "4", "--initial",
                 "desired", "--max_surge", "1", "--max_unavailable", "0", "--rollout", "20",
                 "--G", "5", "--B", "2", "--duration", "120"]) == 0
    out = capsys.readouterr().out
    assert "rollout_done_at" in out
    assert "surge_budget" in out


def test_a_bad_budget_on_the_command_line_is_exit_2(capsys: pytest.CaptureFixture[str]
                                                    ) -> None:
    assert main(["run", "--controller", "deployment", "--max_surge", "12x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "12x" in err[0]


def test_a_sweep_of_the_deployment_world_reports_what_applies(tmp_path: Path) -> None:
    """A spec of the ``deployment`` controller alone: refused beside another controller;
    its report shows the rolling update, the controllers, timelines and the sweep, and
    none of the sections about a loop's period or its ledger."""
    spec = tmp_path / "roll.toml"
    grid = ('controller = "deployment"\ndesired = 3\ninitial = "desired"\nG = [0, 5]\n'
            'max_surge = [1, "50%"]\nrollout = [[10]]\nduration = 90\nschedule = "none"\n')
    spec.write_text(f'name = "roll"\n[grid]\n{grid}[schedule.none]\nevents = []\n')
    assert main(["sweep", str(spec), "--out", str(tmp_path / "out"), "--report",
                 "--no-progress"]) == 0
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    titles = [re.sub(r"<[^>]+>", "", t) for t in re.findall(r"<h2[^>]*>(.*?)</h2>", page)]
    assert [t.split(". ", 1)[-1] for t in titles if ". " in t] == [
        "The rolling update", "Controllers compared"]
    assert "no loop period and no ledger" in page
    mixed = tmp_path / "mixed.toml"
    both = grid.replace('"deployment"', '["ledger", "deployment"]')
    mixed.write_text(f'name = "mixed"\n[grid]\n{both}[schedule.none]\nevents = []\n')
    assert main(["sweep", str(mixed), "--out", str(tmp_path / "mixed")]) == 2
    assert not (tmp_path / "mixed").exists()


def test_a_spec_with_a_cell_too_large_is_refused_before_anything_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "big.toml"
    spec.write_text('name = "big"\n[grid]\ncontroller = "deployment"\ninitial = "desired"\n'
                    'desired = [10, 1000000]\n')
    assert main(["sweep", str(spec), "--out", str(tmp_path / "out")]) == 2
    assert "grid: desired 1,000,000 over 901 s" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
