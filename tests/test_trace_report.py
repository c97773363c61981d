"""Timelines outside the model: ``reconsim run --plot`` and the report's telling cells."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

import reconsim
from reconsim import METRICS, Cell, parse_spec, run_sweep
from reconsim.cli import main
from reconsim.model.metrics import OUTPUT_NAMES
from reconsim.model.params import cell_text
from reconsim.model.simulate import cells_frame
from reconsim.model.trace import trace_cell
from reconsim.report import build_report
from reconsim.report.load import load_sweep
from reconsim.report.sections.timelines import (
    COUNTS,
    MAX_POINTS,
    cell_of,
    downsample,
)
from tests.helpers.tables import model_frame, write_table

# --- reconsim run --plot ---


@pytest.mark.parametrize("suffix", [".html", ".png", ".svg"])
def test_plot_writes_each_format(tmp_path: Path, suffix: str,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "sub" / f"cell{suffix}"
    assert main(["run", "--G", "20", "--grace", "10", "--json", "--plot", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == reconsim.run_cell(G=20, grace=10)
    data = path.read_bytes()
    if suffix == ".png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
    elif suffix == ".svg":
        assert data.lstrip().startswith(b"<svg")
        assert b"</svg>" in data
    else:
        page = data.decode()
        # Self-contained: the spec and the Vega bundle inline, nothing fetched.
        assert re.search(r"<script[^>]+src=", page) is None
        assert "vegaEmbed" in page
        spec = json.loads(re.search(r'<script type="application/json" id="spec-timeline">'
                                    r"(.*?)</script>", page, re.S).group(1))  # type: ignore[union-attr]
        # The command on the page, the chart titled by a line (no flag list in its spec).
        assert spec["title"]["text"] == "ledger, U = 15, G = 20, B = 5"
        assert "--G 20" not in json.dumps(spec)
        assert "--U 15 --G 20 --B 5" in page
        assert "--grace 10" in page


@pytest.mark.parametrize("name", ["cell.pdf", "cell", "cell.HTML.gz"])
def test_plot_unknown_suffix_is_one_line(tmp_path: Path, name: str,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--plot", str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert name in err
    assert "suffix" in err
    assert list(tmp_path.iterdir()) == []


def test_plot_of_a_bad_cell_writes_nothing(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--U", "0", "--plot", str(tmp_path / "cell.svg")]) == 2
    assert "U must be" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_cell_text_is_the_run_command() -> None:
    cell = Cell(controller="expectations", ttl=30, G=45, max_per_round=None, gain=0.5,
                restart_at=(100, 200), lag=((10, 20, 5),), create_faults=((0, 2, "lost"),),
                deaths=((300, 2), (600, 1)), slow_start=True, observe="created")
    argv = ["run", *cell_text(cell).split(), "--json"]
    assert reconsim.run_cell(**{f: getattr(cell, f) for f in cell.__dataclass_fields__}) \
        == _run_json(argv)


def _run_json(argv: list[str]) -> dict[str, object]:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(argv) == 0
    return json.loads(out.getvalue())  # type: ignore[no-any-return]


# --- drawing ---

def test_drawn_steps_are_the_trace() -> None:
    # Only the seconds where something changes are kept; as steps they give every second.
    frame = trace_cell(Cell(G=20, grace=10, deaths=((300, 2), (301, 1))))
    drawn, k = downsample(frame)
    assert k == 1
    assert drawn.height < frame.height / 4
    filled = frame.select("t").join(drawn.select("t", *COUNTS), on="t", how="left").sort(
        "t").fill_null(strategy="forward")
    assert filled.select(COUNTS).equals(frame.select(COUNTS))
    assert set(frame.filter(pl.col("round") | (pl.col("deaths") > 0))["t"]) <= set(drawn["t"])


def test_long_traces_are_drawn_in_buckets() -> None:
    frame = trace_cell(Cell(G=20, U=7, duration=6000, deaths=((3001, 4),)))
    drawn, k = downsample(frame)
    assert k > 1
    assert drawn.height <= MAX_POINTS
    assert drawn["live"].max() == frame["live"].max()
    assert drawn["create_commands"].sum() == frame["create_commands"].sum()
    assert drawn["rounds"].sum() == frame["round"].sum()
    assert drawn["deaths"].sum() == 4


# --- the report's telling cells ---

def test_report_picks_and_traces_telling_cells(tmp_path: Path) -> None:
    frame = model_frame()
    report = build_report(write_table(tmp_path / "s", frame))
    entries = {e["kind"]: e for e in report.data["timelines"]["cells"]}
    assert list(entries) == ["law_mismatch", "below_boundary", "above_boundary",
                             "slowest_settling"]
    for kind, e in entries.items():
        assert e["found"], kind
        assert e["traced"], kind
        assert e["agrees"], kind
        # The parameters are the cell: reconsim.trace takes them as they are in the JSON.
        cell = Cell(**json.loads(json.dumps(e["parameters"])))
        ran = reconsim.run_cell(**{f: getattr(cell, f) for f in cell.__dataclass_fields__})
        assert set(e["metrics"]) >= {m.name for m in METRICS if m.world is None}
        assert e["metrics"] == {m: ran[m] for m in e["metrics"]}
        assert reconsim.trace(**e["parameters"]).height == cell.duration + 1
        assert (tmp_path / "s" / "figures" / f"timeline_{kind}.svg").exists()
    # The worst mismatch: the largest gap, computed here on the whole frame.
    law = frame.filter(pl.col("law_overshoot").is_not_null())
    worst = (law["overshoot"] - law["law_overshoot"]).abs().max()
    m = entries["law_mismatch"]["metrics"]
    p = entries["law_mismatch"]["parameters"]
    assert worst is not None
    assert worst > 0
    row = law.filter(pl.col("G") == p["G"], pl.col("U") == p["U"], pl.col("B") == p["B"],
                     pl.col("desired") == p["desired"],
                     pl.col("controller") == p["controller"])
    assert abs(m["overshoot"] - row["law_overshoot"][0]) == worst
    # The boundary pair: the same panel, U just below G + B and at it.
    below, at = entries["below_boundary"]["parameters"], entries["above_boundary"]["parameters"]
    assert {k: v for k, v in below.items() if k != "U"} == {
        k: v for k, v in at.items() if k != "U"}
    assert below["controller"] == "ledger"
    assert at["U"] == at["G"] + at["B"]
    gb = below["G"] + below["B"]
    panel_us = frame.filter(pl.col("controller") == "ledger", pl.col("G") == below["G"],
                            pl.col("B") == below["B"], pl.col("U") < gb)["U"]
    assert below["U"] == panel_us.max()
    # Slowest settling: the longest wait after the last death (at 300 or none).
    settled = frame.filter(pl.col("stable_at").is_not_null()).with_columns(
        wait=pl.col("stable_at") - pl.when(pl.col("schedule") == "seed").then(300).otherwise(0))
    assert entries["slowest_settling"]["metrics"]["stable_at"] - (
        300 if entries["slowest_settling"]["parameters"]["deaths"] else 0) == \
        settled["wait"].max()
    page = report.html.read_text(encoding="utf-8")
    assert 'id="timelines"' in page
    assert page.count('data-figure="timeline_') == 4


def test_report_says_which_cells_do_not_exist(tmp_path: Path) -> None:
    frame = model_frame(controller=["intent"])  # no ledger cell: no law, no boundary
    report = build_report(write_table(tmp_path / "s", frame))
    entries = {e["kind"]: e for e in report.data["timelines"]["cells"]}
    for kind in ("law_mismatch", "below_boundary", "above_boundary"):
        assert not entries[kind]["found"], kind
        assert entries[kind]["why"], kind
    assert "No cell is in the law's scope." in entries["law_mismatch"]["why"]
    assert entries["slowest_settling"]["found"]
    page = report.html.read_text(encoding="utf-8")
    assert page.count('data-figure="timeline_') == 1
    assert "No ledger cell has U = G + B" in page


def test_report_says_when_a_timeline_disagrees(tmp_path: Path) -> None:
    frame = model_frame(controller=["ledger"]).with_columns(
        pl.when((pl.col("U") == 35) & (pl.col("G") == 30)).then(pl.col("created") + 1)
        .otherwise(pl.col("created")).alias("created"))
    report = build_report(write_table(tmp_path / "s", frame))
    above = next(e for e in report.data["timelines"]["cells"] if e["kind"] == "above_boundary")
    assert above["parameters"]["U"] == 35
    assert above["parameters"]["G"] == 30
    assert above["agrees"] is False
    assert "created" in above["differing"]
    assert "does not give the table" in report.html.read_text(encoding="utf-8")


WORLD_SPEC = """
name = "world"
[grid]
controller = ["ledger", "intent", "expectations"]
G = [0, 20]
U = [10, 25]
desired = 4
duration = [200, 400]
schedule = ["explicit", "every", "chaos"]
restart_at = [[], [50, 120]]
lag = ["none", "stale"]
create_faults = ["none", "burst"]
grace = [0, 15]
max_per_round = ["unlimited", 2]
G_spread = [0, 9]
seed = [3, 4]
[schedule.explicit]
events = [[100, 2], [350, 1], [900, 3]]
[schedule.every]
every = 90
count = 1
[schedule.chaos]
rate = 0.02
count = 1
seed = 5
[lag.stale]
windows = [[60, 140, 25]]
[faults.burst]
events = [[0, 2, "lost"], [150, 1, "fail"]]
"""


def test_every_row_is_rebuilt_as_its_cell(tmp_path: Path) -> None:
    # Every parameter column back to a Cell, schedules by name and duration included:
    # run_cell on the rebuilt cell gives the row's metrics, row by row.
    result = run_sweep(parse_spec(WORLD_SPEC), tmp_path / "w", jobs=1, backend="sequential",
                       progress=False)
    sweep = load_sweep(result.out)
    rows = sweep.table.collect()
    assert rows.height > 500
    cells = [cell_of(sweep, r) for r in rows.iter_rows(named=True)]
    assert {c.deaths for c in cells if c.duration == 200} >= {
        ((100, 2), (350, 1), (900, 3)), ((90, 1), (180, 1))}
    # a random schedule's deaths are the row's own: they differ from seed to seed
    chaos = {c.seed: c.deaths for c in cells if c.duration == 400 and c.deaths not in (
        ((100, 2), (350, 1), (900, 3)), tuple((at, 1) for at in range(90, 401, 90)))}
    assert chaos[3] != chaos[4]
    got = reconsim.simulate(cells_frame(cells))
    assert got.select(OUTPUT_NAMES).equals(rows.select(OUTPUT_NAMES))


def test_report_names_a_row_that_makes_no_cell(tmp_path: Path) -> None:
    # A table from elsewhere: a gain off the 0.001 grid is no cell this version accepts.
    frame = model_frame(controller=["intent"]).with_columns(gain=pl.lit(0.0005))
    report = build_report(write_table(tmp_path / "s", frame))
    slowest = next(e for e in report.data["timelines"]["cells"]
                   if e["kind"] == "slowest_settling")
    assert slowest["found"]
    assert not slowest["traced"]
    assert "make no cell today" in slowest["why"]
    assert "gain" in slowest["why"]
    assert "timeline_slowest_settling" not in report.data["figures"]


def test_plot_to_an_unwritable_place_is_one_line(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("not a folder", encoding="utf-8")
    assert main(["run", "--plot", str(tmp_path / "file" / "cell.svg")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "cannot write" in err
