"""``reconsim conformance``: the ReplicaSet and Deployment data sets shipped intact, the
mapping of a scenario to a cell, the comparison and its causes, the command's table and
errors, and what reconsim matches of the real controllers today, computed from the data."""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest

from reconsim.cli import main
from reconsim.conformance import compare
from reconsim.conformance.compare import (
    CAUSES,
    FAILED_RETRY,
    LOST_WRITE_OFF,
    METRICS_COMPARED,
    NOT_FOUND,
    OTHER,
    SEVERAL_SYNCS,
    Conformance,
    classify,
    first_difference,
    several_syncs_acted,
)
from reconsim.conformance.load import (
    COPIED,
    DATA_DIR,
    DEPLOYMENT,
    REPLICASET,
    TRACE_COLUMNS,
    TRACES_FILE,
    DataError,
    Dataset,
    kind_of,
    load,
    load_source,
    source_differences,
)
from reconsim.conformance.mapping import cell_of, default_controller
from reconsim.model.controllers import registry

#: The data set's original folder, where it exists: ``RECONSIM_REPLICASET_SOURCE``, else
#: ``../shared/data/kubernetes-replicaset`` beside the repository. A clean clone (CI) has
#: none, and checks the shipped copy's shape instead (test_shipped_data_is_whole).
SOURCE = Path(os.environ.get("RECONSIM_REPLICASET_SOURCE") or Path(__file__).resolve(
    ).parent.parent.parent / "shared" / "data" / "kubernetes-replicaset")
#: The Deployment data set's original folder, where it exists (as :data:`SOURCE`).
DEPLOYMENT_SOURCE = Path(os.environ.get("RECONSIM_DEPLOYMENT_SOURCE") or Path(
    __file__).resolve().parent.parent.parent / "shared" / "data" / "kubernetes-deployment")


@pytest.fixture(scope="module")
def dataset() -> Dataset:
    return load()


@pytest.fixture(scope="module")
def result(dataset: Dataset) -> Conformance:
    """Every scenario compared, with the default controller (replicaset)."""
    return compare.run(dataset)


@pytest.fixture(scope="module")
def by_rounds(dataset: Dataset) -> Conformance:
    """Every scenario compared, with the controller that decides once a round."""
    return compare.run(dataset, "expectations")


def test_shipped_data_is_whole(dataset: Dataset) -> None:
    ids = [s.id for s in dataset.scenarios]
    assert len(ids) == len(set(ids)) == 400
    assert all(int(i[2:]) % 5 != 4 for i in ids)  # the held-out fifth is not shipped
    assert dataset.metrics["id"].to_list() == ids
    assert dataset.traces.columns == ["id", *TRACE_COLUMNS]
    assert dataset.traces["id"].unique(maintain_order=True).to_list() == ids
    for s in dataset.scenarios:
        trace = dataset.trace(s.id)
        assert trace["t"].to_list() == list(range(s.duration + 1)), s.id
        assert (trace["desired"] == s.desired).all(), s.id
    assert {p.name for p in DATA_DIR.iterdir()} == {*COPIED, TRACES_FILE}


@pytest.mark.skipif(not SOURCE.is_dir(), reason=f"no original data set folder at {SOURCE}")
def test_shipped_data_equals_its_source() -> None:
    assert source_differences(SOURCE) == []


def test_loader_reads_a_scenario_and_its_metrics(dataset: Dataset) -> None:
    s = dataset.scenario("rs000")
    assert (s.desired, s.G, s.B, s.grace, s.duration) == (3, 1, 1, 0, 300)
    assert s.deaths == ((300, 2),)
    assert s.create_faults == ((0, 1, "fail"),)
    assert s.logarithmic_scale_down is False
    row = dataset.metrics.row(0, named=True)
    assert row["id"] == "rs000"
    assert row["stable_at"] is None  # empty in the file: live differs at the last second
    assert dataset.metrics.schema["stable_at"] == pl.Int64


def test_mapping_sets_every_field(dataset: Dataset) -> None:
    s = dataset.scenario("rs002")
    cell = cell_of(s, "expectations")
    assert (cell.controller, cell.ttl, cell.observe, cell.delete_order) == (
        "expectations", 300, "created", "newest")
    assert (cell.max_per_round, cell.slow_start, cell.trigger, cell.ledger_base) == (
        500, True, "watch", 0)
    assert cell.U == s.duration + 1 == 901
    assert (cell.desired, cell.G, cell.B, cell.grace, cell.duration) == (1, 5, 1, 30, 900)
    assert cell.deaths == ((100, 1), (200, 3))
    assert cell.create_faults == ((0, 2, "lost"),)
    assert cell_of(s).controller == default_controller() == "replicaset"
    assert "replicaset" in registry.names()
    synced = cell_of(s)
    assert (synced.ttl, synced.trigger, synced.max_per_round, synced.slow_start) == (
        300, "watch", 500, True)
    assert synced.log_scale_down is s.logarithmic_scale_down is False
    logarithmic = next(x for x in dataset.scenarios if x.logarithmic_scale_down)
    assert cell_of(logarithmic).log_scale_down is True
    assert cell_of(logarithmic, "expectations").log_scale_down is False  # no such rank


def test_replicaset_matches_every_scenario(dataset: Dataset, result: Conformance) -> None:
    """The replicaset controller matches the real one on all 400 scenarios: all ten
    metrics and the five series, every second. A scenario that did not would be listed
    here with its cause and first differing second (none is left out)."""
    assert result.controller == "replicaset"
    assert len(result.outcomes) == len(dataset.scenarios) == 400
    differing = [(o.id, o.cause, o.first_second, o.series, o.differing_metrics)
                 for o in result.outcomes if not o.matches]
    assert differing == []
    assert all(result.matched(m) == 400 for m in METRICS_COMPARED)
    assert result.matching == result.all_metrics == result.per_second == 400


def test_first_difference_finds_a_planted_one(dataset: Dataset) -> None:
    real = dataset.trace("rs002")
    assert first_difference(real, real) == (None, ())
    planted = real.with_columns(
        pl.when(pl.col("t") >= 7).then(pl.col("live") + 1).otherwise(pl.col("live")),
        pl.when(pl.col("t") == 9).then(9).otherwise(pl.col("deleted")).alias("deleted"))
    assert first_difference(real, planted) == (7, ("live",))
    assert first_difference(real, planted.head(5)) == (5, compare.SERIES_COMPARED)


def test_a_planted_metric_difference_is_reported(dataset: Dataset) -> None:
    s = dataset.scenario("rs002")
    real = dataset.trace(s.id)
    metrics = dataset.metrics.row(2, named=True)
    ours = dict(metrics, overshoot=metrics["overshoot"] + 1)
    outcome = compare.compare_one(s, metrics, real, ours, real)
    assert outcome.differing_metrics == ("overshoot",)
    assert outcome.per_second
    assert not outcome.matches
    assert outcome.cause == OTHER
    same = compare.compare_one(s, metrics, real, metrics, real)
    assert same.matches
    assert same.cause is None


def _second(**counts: int) -> pl.DataFrame:
    row = dict.fromkeys(TRACE_COLUMNS, 0) | {"t": 3} | counts
    return pl.DataFrame([row])


@pytest.mark.parametrize(("counts", "cause"), [
    ({"failed_creates": 1, "lost_creates": 1, "create_commands": 3}, FAILED_RETRY),
    ({"lost_creates": 2, "create_commands": 3}, LOST_WRITE_OFF),
    ({"create_commands": 600}, SEVERAL_SYNCS),
    ({"delete_commands": 4, "deleted": 3}, NOT_FOUND),
    ({"create_commands": 2}, OTHER),
])
def test_classify_reads_the_real_second(counts: dict[str, int], cause: str) -> None:
    assert classify(_second(**counts), 3) == cause
    assert cause in CAUSES


def test_what_a_round_a_second_matches(dataset: Dataset, by_rounds: Conformance) -> None:
    """The controllers that decide in rounds run one a second and never retry within it: every
    scenario without create faults and without a second acting sync in one second
    matches on all ten metrics and second by second. Each other difference is put down
    to a known cause at its first differing second."""
    result = by_rounds
    by_id = {o.id: o for o in result.outcomes}
    plain = {s.id for s in dataset.scenarios
             if not s.create_faults and not several_syncs_acted(dataset.trace(s.id))}
    assert len(plain) > 90
    assert [i for i in sorted(plain) if not by_id[i].matches] == []
    for o in result.outcomes:
        if o.matches:
            continue
        assert o.first_second is not None, o.id
        assert o.cause in (FAILED_RETRY, LOST_WRITE_OFF, SEVERAL_SYNCS), o.id
        s = dataset.scenario(o.id)
        if not s.create_faults:  # the burst cap left creates for a second sync to make
            assert o.cause == SEVERAL_SYNCS, o.id
            assert s.desired > 500, o.id
    assert result.matching == result.all_metrics == result.per_second
    assert all(result.matched(m) >= result.matching for m in METRICS_COMPARED)


def test_conformance_command_prints_the_table(capsys: pytest.CaptureFixture[str],
                                              tmp_path: Path) -> None:
    out = tmp_path / "conformance.json"
    argv = ["conformance", "--controller", "expectations", "--scenario", "rs000",
            "--scenario", "rs465", "--scenario", "rs001", "--out", str(out)]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("3 scenarios of the Kubernetes v1.23.13 ReplicaSet")
    assert lines[2].split() == ["metric", "matched"]
    table = {" ".join(line.split()[:-1]): line.split()[-1] for line in lines[3:16]}
    assert table["all ten metrics"] == "1/3"
    assert table["second by second"] == "1/3"
    assert table["failed_creates"] == "3/3"
    causes = [line.split("  ")[0].strip() for line in lines[17:]]
    assert causes == ["cause", FAILED_RETRY, SEVERAL_SYNCS]
    assert lines[18].split()[-4:] == ["rs000", "0", "(create_commands,", "created)"]
    written = json.loads(out.read_text())
    assert written["matching"] == 1
    assert [o["id"] for o in written["outcomes"]] == ["rs000", "rs465", "rs001"]
    assert written["causes"][SEVERAL_SYNCS] == {"scenarios": 1, "example": "rs465",
                                               "first_second": 0}
    assert main(["conformance", "--scenario", "rs001", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["controller"] == "replicaset"
    assert printed["outcomes"][0] == {"id": "rs001", "matches": True,
                                      "differing_metrics": {}, "first_second": None,
                                      "series": [], "cause": None}
    assert main(["conformance", "--scenario", "rs000", "--scenario", "rs465"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("reconsim controller replicaset")
    assert lines[-3].split() == ["both", "2/2"]
    assert lines[-1] == "no differences"


@pytest.mark.parametrize(("argv", "message"), [
    (["--scenario", "rs999"], "--scenario: no scenario 'rs999' in the data set"),
    (["--controller", "pid"], "controller 'pid': not a built-in"),
    (["--data", "{tmp}"], "traces.parquet: no such file"),
    (["--scenario", "rs001", "--out", "{tmp}/file/x.json"], "cannot write"),
    (["--json", "--out", "x.json"], "not allowed with argument --json"),
])
def test_conformance_bad_input_is_one_line_and_exit_2(
        argv: list[str], message: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(["conformance", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1
    assert captured.err.startswith("error: ")
    assert message in captured.err


def test_replicaset_rounds_are_the_seconds_it_synced(dataset: Dataset) -> None:
    # Beyond the ten metrics: a round of a controller that syncs on events is a second in
    # which it synced, as the data set counts its rounds.
    from reconsim.model.simulate import cells_frame, simulate

    ours = simulate(cells_frame([cell_of(s) for s in dataset.scenarios]))["rounds"]
    assert ours.to_list() == dataset.metrics["rounds"].to_list()


# --- The Deployment data set ----------------------------------------------------------

#: The Deployment scenarios the reference model does not match today, each with its first
#: differing second, the series that differ there and the metrics that differ
#: (docs/conformance.md gives the cause).
DEPLOYMENT_DIFFERENCES: dict[str, tuple[int, tuple[str, ...], tuple[str, ...]]] = {}
#: Scenarios of the Deployment data set the model matches on every metric and second.
DEPLOYMENT_MATCHING = 400


@pytest.fixture(scope="module")
def deployments() -> Dataset:
    return load(DEPLOYMENT.data_dir)


def test_deployment_data_is_whole(deployments: Dataset) -> None:
    ids = [s.id for s in deployments.scenarios]
    assert deployments.kind is DEPLOYMENT
    assert len(ids) == len(set(ids)) == 400
    assert all(int(i[3:]) % 5 != 4 for i in ids)  # the held-out fifth is not shipped
    assert deployments.metrics["id"].to_list() == ids
    assert deployments.traces.columns == ["id", *DEPLOYMENT.trace_columns]
    assert deployments.metrics.schema["rollout_done_at"] == pl.Int64
    for s in deployments.scenarios[:40]:
        assert deployments.trace(s.id)["t"].to_list() == list(range(s.duration + 1)), s.id
    assert {p.name for p in DEPLOYMENT.data_dir.iterdir()} == {*COPIED, TRACES_FILE}
    s = deployments.scenario("dep013")
    assert (s.start, s.scale_at, s.desired2, s.max_surge, s.max_unavailable) == (
        "settled", 72, 25, 0, "25%")


@pytest.mark.skipif(not DEPLOYMENT_SOURCE.is_dir(),
                    reason=f"no original data set folder at {DEPLOYMENT_SOURCE}")
def test_deployment_data_equals_its_source() -> None:
    assert kind_of(DEPLOYMENT_SOURCE) is DEPLOYMENT
    assert source_differences(DEPLOYMENT_SOURCE) == []


@pytest.mark.parametrize("chunk", range(4))
def test_deployment_model_matches_the_real_controllers(deployments: Dataset,
                                                       chunk: int) -> None:
    """The Deployment world's reference model against the real controllers, a hundred
    scenarios at a time: every metric of metrics.csv and every trace column, every second.
    All match but :data:`DEPLOYMENT_DIFFERENCES`, each at its own second."""
    ids = [s.id for s in deployments.scenarios][100 * chunk:100 * (chunk + 1)]
    result = compare.run(deployments, ids=ids)
    assert result.controller == "deployment"
    differing = {o.id: (o.first_second, o.series, o.differing_metrics)
                 for o in result.outcomes if not o.matches}
    assert differing == {i: d for i, d in DEPLOYMENT_DIFFERENCES.items() if i in ids}
    assert result.matching == result.all_metrics == result.per_second == 100 - len(differing)
    assert len(DEPLOYMENT_DIFFERENCES) == 400 - DEPLOYMENT_MATCHING


def test_an_original_folder_is_recognised(tmp_path: Path, deployments: Dataset,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    for name in COPIED:
        (tmp_path / name).write_bytes((DEPLOYMENT.data_dir / name).read_bytes())
    (tmp_path / "traces").mkdir()
    for s in deployments.scenarios:
        deployments.trace(s.id).write_csv(tmp_path / "traces" / f"{s.id}.csv")
    source = load_source(tmp_path)
    assert source.kind is DEPLOYMENT
    assert source.traces.equals(deployments.traces)
    assert kind_of(DATA_DIR) is REPLICASET
    argv = ["conformance", "--dataset", str(tmp_path), "--scenario", "dep005", "--json"]
    assert main(argv) == 0
    printed = json.loads(capsys.readouterr().out)
    assert (printed["dataset"], printed["scenarios"], printed["matching"]) == (
        "kubernetes-deployment", 1, 1)
    assert printed["all_metrics"] == printed["per_second"] == 1
    (tmp_path / "traces" / "dep001.csv").write_text("t,x\n0,1\n")
    with pytest.raises(DataError, match=r"dep001\.csv: cannot read as a kubernetes-deployment"):
        load_source(tmp_path)


def test_conformance_command_on_the_deployment_data_set(
        capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["conformance", "--dataset", "kubernetes-deployment", "--scenario", "dep005",
            "--scenario", "dep095"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("2 scenarios of the Kubernetes v1.23.13 Deployment controller, "
                        "reconsim's Deployment reference model")
    table = {" ".join(line.split()[:-1]): line.split()[-1] for line in lines[3:31]}
    assert table["all 25 metrics"] == table["second by second"] == table["both"] == "2/2"
    assert table["max_surge_r"] == table["deaths_landed"] == "2/2"
    assert lines[-1] == "no differences"


@pytest.mark.parametrize(("argv", "message"), [
    (["--dataset", "kubernetes-nothing"], "--dataset 'kubernetes-nothing': neither"),
    (["--dataset", "{tmp}"], "no README.md"),
    (["--dataset", "kubernetes-deployment", "--controller", "replicaset"],
     "--controller: the Deployment data set runs"),
    (["--dataset", "kubernetes-deployment", "--data", "{tmp}"], "give one of them"),
    (["--dataset", "kubernetes-deployment", "--scenario", "rs001"],
     "no scenario 'rs001'"),
])
def test_conformance_dataset_bad_input_is_one_line_and_exit_2(
        argv: list[str], message: str, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    assert main(["conformance", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1
    assert message in captured.err
