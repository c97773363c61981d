"""A cell's id: ``reconsim run --from DIR --cell ID`` runs a sweep's cell again, the report
names each cell it shows by it, and ``--plot --window`` draws the seconds asked for."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

import reconsim
from reconsim import METRICS, load_spec, run_sweep
from reconsim.cli import main
from reconsim.model.controllers import registry
from reconsim.model.metrics import OUTPUT_NAMES
from reconsim.report import build_report
from reconsim.sweep.grid import expand

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "controllers"
#: ledger: 2 G x 3 U = 6 cells; deadband: 12 more (2 bands), in chunks of 5.
SPEC = """
name = "ids"
import_path = ["{folder}"]
chunk_size = 5

[grid]
controller = ["ledger", "deadband:DEADBAND"]
band = [0, 2]
G = [0, 20]
U = [5, 15, 30]
B = 5
desired = 6
duration = 300
schedule = "seed"

[schedule.seed]
events = [[100, 2]]
"""


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("ids")
    folder = root / "controllers"
    folder.mkdir()
    shutil.copy(EXAMPLES / "deadband.py", folder / "deadband.py")
    spec_path = root / "ids.toml"
    spec_path.write_text(SPEC.format(folder=folder), encoding="utf-8")
    with registry.scope():
        spec = load_spec(spec_path)
        run_sweep(spec, root / "ids", backend="sequential", progress=False)
        yield root / "ids"


def _table(sweep: Path) -> pl.DataFrame:
    return reconsim.scan(sweep).collect()


def _metrics(row: dict[str, object]) -> dict[str, object]:
    return {m: row[m] for m in OUTPUT_NAMES}


def test_rows_are_grid_cells_in_order(sweep: Path) -> None:
    table = _table(sweep)
    with registry.scope():
        spec = load_spec(sweep.parent / "ids.toml")
        grid = expand(spec)
    assert table.height == grid.height == 18
    assert table.select(grid.columns).equals(grid)


@pytest.mark.parametrize("id", [0, 4, 5, 11, 17])  # first, chunk edges, a middle one, last
def test_run_from_equals_the_tables_row(sweep: Path, id: int,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    row = _table(sweep).row(id, named=True)
    with registry.scope():
        assert main(["run", "--from", str(sweep), "--cell", str(id), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == _metrics(row)


def test_a_users_controllers_cell(sweep: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = _table(sweep).with_row_index("id")
    id = int(table.filter(pl.col("controller") == "deadband", pl.col("band") == 2)["id"][0])
    with registry.scope():
        assert main(["run", "--from", str(sweep), "--cell", str(id), "--json",
                     "--check"]) == 0
        cell = reconsim.sweep_cell(sweep, id)
    assert json.loads(capsys.readouterr().out) == _metrics(table.row(id, named=True))
    assert (cell.controller, dict(cell.options)) == ("deadband", {"band": 2})


def test_the_python_call(sweep: Path) -> None:
    cell = reconsim.sweep_cell(sweep, 3)
    frame = reconsim.trace_cell(cell)
    assert frame.height == cell.duration + 1
    row = _table(sweep).row(3, named=True)
    assert (row["G"], row["U"]) == (cell.G, cell.U)


@pytest.mark.parametrize(("args", "message"), [
    (["--from", "{tmp}", "--cell", "0"], "--from {tmp}: {tmp}: not a sweep's directory"),
    (["--from", "{sweep}", "--cell", "18"], "cell 18: not in the grid of"),
    (["--from", "{sweep}", "--cell", "-1"], "cell -1: not in the grid of"),
    (["--from", "{sweep}"], "--from {sweep}: needs --cell ID too"),
    (["--cell", "3"], "--cell 3: needs --from DIR too"),
    (["--from", "{sweep}", "--cell", "3", "--G", "5"], "--G 5: --from {sweep} runs its cell"),
    (["--G", "20", "--window", "9:3", "--plot", "{tmp}/x.svg"],
     "argument --window: expected FROM:TO, whole seconds with FROM <= TO, got '9:3'"),
    (["--G", "20", "--window", "950:990", "--plot", "{tmp}/x.svg"],
     "--window 950:990: starts after the run's last second, 900"),
    (["--G", "20", "--window", "0:60"], "--window 0:60: draws with --plot FILE only"),
])
def test_bad_input_is_one_line(sweep: Path, tmp_path: Path, args: list[str], message: str,
                               capsys: pytest.CaptureFixture[str]) -> None:
    given = [a.format(tmp=tmp_path, sweep=sweep) for a in args]
    assert main(["run", *given]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("error: reconsim run: ")
    assert message.format(tmp=tmp_path, sweep=sweep) in err
    assert list(tmp_path.iterdir()) == []


def test_window_draws_only_its_seconds(tmp_path: Path) -> None:
    path = tmp_path / "cell.html"
    assert main(["run", "--G", "20", "--duration", "3600", "--deaths", "2000:2",
                 "--window", "1900:2300", "--title", "around the deaths", "--plot",
                 str(path)]) == 0
    page = path.read_text(encoding="utf-8")
    spec = json.loads(re.search(r'<script type="application/json"[^>]*>(.*?)</script>',
                                page, re.S).group(1))  # type: ignore[union-attr]
    rows = pl.read_csv(spec["data"]["values"].encode())
    assert rows["t"].min() >= 1900
    assert rows["t"].max() == 2300
    assert rows.filter(pl.col("deaths") > 0)["t"].to_list() == [2000]
    assert spec["title"]["text"] == "around the deaths"
    assert spec["vconcat"][0]["layer"][0]["encoding"]["x"]["scale"]["domain"] == [1900, 2300]


def test_report_names_each_cell_by_a_short_command(sweep: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(sweep.parent)
    build_report(Path(sweep.name), out=tmp_path)
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    ids = [int(i) for i in re.findall(r"<pre><code>reconsim run --from ids --cell (\d+)"
                                      r"</code></pre>", html)]
    assert ids
    assert all(0 <= i < 18 for i in ids)
    summary = json.loads((tmp_path / "summary.json").read_text(encoding="utf-8"))
    named = [c for c in summary["timelines"]["cells"] if c["found"]]
    assert sorted(c["cell"] for c in named) == sorted(ids)
    table = _table(sweep)
    for c in named:  # the id names the row whose metrics the section shows
        row = table.row(c["cell"], named=True)
        assert set(c["metrics"]) >= {m.name for m in METRICS if m.world is None}
        assert {m: row[m] for m in c["metrics"]} == c["metrics"]
    for spec in re.findall(r'<script type="application/json" id="spec-timeline_[^"]*">(.*?)'
                           r"</script>", html, re.S):
        title = json.loads(spec)["title"]
        assert re.fullmatch(r"Cell \d+: \w+, U = \d+, G = \d+, B = \d+", title["text"])
        assert len(" ".join(title["subtitle"])) <= 200
        assert "reconsim run" not in " ".join(title["subtitle"])


def test_a_long_cells_timeline_shows_its_event() -> None:
    from reconsim import Cell
    from reconsim.report.sections.timelines import event_window

    assert event_window(Cell(G=20, duration=900), 400) == (0, 900)
    long = Cell(G=20, duration=14_400, deaths=((7_000, 2),))
    assert event_window(long, 7_060) == (6_940, 7_120)
    assert event_window(long, None) == (6_940, 14_400)
    assert event_window(Cell(G=20, duration=14_400, deaths=()), 30) == (0, 90)
