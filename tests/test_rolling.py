"""The Deployment world as cells: the ``deployment`` controller's cells through
``simulate``, ``run_cell``, ``trace`` and the command line, checked against the real
controllers' recorded metrics and against recounts of the world's own trace."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from reconsim.cli import main
from reconsim.conformance.load import DEPLOYMENT, load
from reconsim.errors import KernelRefusalError
from reconsim.model import deployment, rolling
from reconsim.model.metrics import OUTPUT_NAMES, WORLD_METRICS
from reconsim.model.params import Cell
from reconsim.model.simulate import _with_metrics, cells_frame, run_cell, simulate
from reconsim.model.trace import trace_cell

ROLLING = WORLD_METRICS["deployment"]


@pytest.fixture(scope="module")
def dataset() -> Any:
    return load(DEPLOYMENT.data_dir)


@pytest.mark.parametrize("half", range(2))
def test_cells_reproduce_the_real_controllers(dataset: Any, half: int) -> None:
    """Every data set scenario, as a row of a frame through ``simulate``: its rolling
    update's metrics equal the real controllers' metrics.csv row (renamed), and the
    figures both count (creates, deletes, copy-seconds) too."""
    scenarios = list(dataset.scenarios)[200 * half:200 * (half + 1)]
    out = simulate(cells_frame([rolling.cell_of(s) for s in scenarios]))
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


def test_a_frame_names_the_row_its_world_refuses() -> None:
    frame = cells_frame([Cell(controller="ledger", G=20),
                         Cell(controller="deployment", desired=3, G=5, B=5, duration=60)])
    with pytest.raises(ValueError, match=re.escape(
            "row 1: initial must be 'desired' (a settled Deployment) or 0")):
        simulate(frame.with_columns(initial=pl.Series([0, 2])))


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
    # its introduction is the rolling update's, not the ledger loop's
    assert "A <strong>rolling update</strong> replaces a Deployment's pods" in page
    assert "<strong>reconciliation loop</strong> keeps a service" not in page
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


# --- the kernel's path: cells -> the table, equal to the reference path --------------------


def kernel_table(cells: pl.DataFrame) -> pl.DataFrame:
    """``cells`` with their metrics from the Deployment kernel (:func:`rolling.kernel_counts`),
    turned into the table as ``simulate`` turns every kernel's counts."""
    return _with_metrics(cells, *rolling.kernel_counts(cells))


def assert_as_reference(cells: list[Cell]) -> None:
    """Every metric and the responses of each of ``cells`` on the kernel's path equal the
    reference path's (:func:`rolling.run`, which :func:`rolling.metrics_of` counts); a cell
    the reference model cannot run (it divides by a max-replicas annotation of 0) the
    kernel refuses, naming its row."""
    expected: list[dict[str, Any] | None] = []
    for cell in cells:
        try:
            expected.append(rolling.run(cell)[1])
        except ZeroDivisionError:
            expected.append(None)
    ok = [i for i, e in enumerate(expected) if e is not None]
    for i in (i for i, e in enumerate(expected) if e is None):
        with pytest.raises(KernelRefusalError, match=r"^kernel: cell 0 .*annotation of 0"):
            rolling.kernel_counts(cells_frame([cells[i]]))
    if not ok:
        return
    table = kernel_table(cells_frame([cells[i] for i in ok]))
    assert table.columns[-len(OUTPUT_NAMES):] == list(OUTPUT_NAMES)
    for j, i in enumerate(ok):
        got = table.select(OUTPUT_NAMES).row(j, named=True)
        want = expected[i]
        assert want is not None
        differ = {n: (got[n], want[n]) for n in OUTPUT_NAMES if got[n] != want[n]}
        assert differ == {}, cells[i]


@pytest.mark.parametrize("half", range(2))
def test_the_kernel_path_is_the_reference_path_on_the_data_set(dataset: Any,
                                                                half: int) -> None:
    """Every data set scenario as a cell: every metric column and the responses, from the
    kernel, equal the reference path's."""
    assert_as_reference([rolling.cell_of(s) for s in list(dataset.scenarios)[200 * half:
                                                                     200 * (half + 1)]])


def _budget() -> st.SearchStrategy[int | str]:
    return st.one_of(st.integers(0, 6), st.integers(0, 100).map(lambda p: f"{p}%"))


@st.composite
def rolling_cells(draw: st.DrawFn) -> Cell:
    """A cell of the Deployment world: any counts and budgets (counts and percentages), a
    settled or a cold start, up to four rollouts (one may fall after the end), up to three
    changes of desired and up to three death events (in any order, some after the end)."""
    duration = draw(st.integers(20, 300))
    counts = st.one_of(st.integers(0, 8), st.integers(0, 40))
    rollout = tuple(sorted(draw(st.sets(st.integers(0, duration + 20), min_size=1,
                                        max_size=4))))
    scale = tuple((at, draw(counts)) for at in sorted(draw(st.sets(
        st.integers(1, duration + 10), max_size=3))))
    deaths = tuple(draw(st.lists(st.tuples(st.integers(0, duration + 10),
                                           st.integers(0, 6)), max_size=3)))
    try:
        return Cell(controller="deployment", desired=draw(counts), G=draw(st.integers(0, 20)),
                    B=draw(st.integers(0, 20)), min_ready=draw(st.sampled_from([0, 0, 1, 5, 20])),
                    grace=draw(st.sampled_from([0, 0, 1, 5, 30])), max_surge=draw(_budget()),
                    max_unavailable=draw(_budget()),
                    initial=draw(st.sampled_from(["desired", 0])), rollout=rollout,
                    scale=scale, deaths=deaths, duration=duration)
    except ValueError:  # both budgets 0: the world refuses it
        assume(False)
        raise


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(rolling_cells(), min_size=1, max_size=5))
def test_the_kernel_path_is_the_reference_path_on_random_cells(cells: list[Cell]) -> None:
    assert_as_reference(cells)


def test_the_kernel_path_counts_events_and_a_late_rollout_as_the_reference() -> None:
    """A death event and a change of desired in one second, another event, a first rollout
    after the end (its figures null), a cold start and an increase of desired."""
    cells = [Cell(controller="deployment", desired=5, initial="desired", G=5, B=10, grace=5,
                  deaths=((60, 2), (120, 1)), scale=((60, 8), (90, 3)), rollout=(10, 40),
                  duration=200),
             Cell(controller="deployment", desired=3, initial="desired", deaths=(),
                  rollout=(700,), duration=600),
             Cell(controller="deployment", desired=4, initial=0, max_surge="50%",
                  max_unavailable=0, deaths=((30, 9),), scale=((100, 6),), rollout=(5,),
                  duration=150)]
    assert_as_reference(cells)
    table = kernel_table(cells_frame(cells))
    assert [len(r) for r in table["responses"].to_list()] == [3, 0, 2]
    assert table["rollout_done_at"][1] is None
    assert table["min_available_after_rollout"][1] is None


def test_a_frame_without_the_worlds_optional_columns_takes_their_defaults() -> None:
    cell = Cell(controller="deployment", desired=4, duration=120)
    frame = pl.DataFrame({"controller": ["deployment"], "desired": [4], "U": [5], "G": [0],
                          "B": [5], "duration": [120], "deaths": cells_frame([cell])["deaths"]})
    assert kernel_table(frame).select(OUTPUT_NAMES).row(0, named=True) == \
        rolling.run(cell)[1]


def test_the_kernel_refuses_a_row_in_one_line_naming_field_and_value() -> None:
    frame = cells_frame([Cell(controller="deployment", desired=3, duration=60)] * 2)
    bad = frame.with_columns(pl.Series("G", [0, 10**7]))
    with pytest.raises(KernelRefusalError) as refused:
        rolling.kernel_counts(bad)
    assert str(refused.value) == "kernel: cell 1 (G 10000000) is outside 0 … 1,000,000"
