"""A user's controller through the whole pipeline, as a built-in goes through it: swept with
loky and with Dask (the workers import its module), reported on (the controllers section,
the trade-off frontier), compared, and its benchmark's runs compared. Reading a sweep —
``report``, ``compare``, ``publish``, ``scan`` — imports no module its table or manifest
names: the reading runs where the controller's module is gone, with a trap registered under
the controller's name as an entry point."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.bench_user_controller import test_same_shape_as_a_built_in as same_shape
from reconsim import load_spec, run_cell, run_sweep, scan
from reconsim.compare.cells import compare
from reconsim.model.controllers import registry
from reconsim.model.metrics import OUTPUT_NAMES
from reconsim.model.params import METRIC_NAMES
from reconsim.report import build_report
from tests.helpers.child import child_env

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "controllers"
#: A real quick run of ``bench/bench_user_controller.py -k same_shape``
#: (``RECONSIM_BENCH_QUICK=1``, ``--benchmark-json``): deadband with ``band = 0`` beside
#: ``ledger`` on the world mix's ledger cells.
USER_RUN = ROOT / "tests" / "data" / "bench-user-controller.json"
#: The deadband example, copied into a folder of this module's (which it can take away). It
#: keeps its module's name: a copy of the same source under another name would share the
#: controller's identity, and so numba's cached kernels, which name the module they came from.
MODULE = "deadband"
DEADBAND = "deadband"
#: ledger: 4 cells; deadband: 4 per band.
SPEC = """
name = "{name}"
import_path = ["{folder}"]
chunk_size = 4

[grid]
controller = ["ledger", "{module}:DEADBAND"]
band = {band}
G = [0, 20]
U = [5, 15]
B = 5
desired = 6
duration = 300
schedule = "seed"

[schedule.seed]
events = [[100, 2]]
"""


class Sweeps:
    """The sweeps the tests read: spec A by loky and by Dask, spec B (one band more)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder = root / "controllers"
        self.module = self.folder / f"{MODULE}.py"
        self.loky, self.dask, self.other = root / "a-loky", root / "a-dask", root / "b"


def _spec(sweeps: Sweeps, name: str, band: str) -> Path:
    path = sweeps.root / f"{name}.toml"
    path.write_text(SPEC.format(name=name, folder=sweeps.folder, module=MODULE, band=band),
                    encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sweeps]:
    made = Sweeps(tmp_path_factory.mktemp("pipeline"))
    made.folder.mkdir()
    shutil.copy(EXAMPLES / "deadband.py", made.module)
    with registry.scope():
        a, b = load_spec(_spec(made, "a", "[0, 2]")), load_spec(_spec(made, "b", "[0, 2, 3]"))
        run_sweep(a, made.loky, jobs=2, progress=False)  # loky, the default backend
        run_sweep(a, made.dask, jobs=2, backend="dask", progress=False)
        run_sweep(b, made.other, jobs=1, backend="sequential", progress=False)
        yield made


def _cell(row: dict[str, object]) -> dict[str, object]:
    """``run_cell``'s keywords for a row of the table."""
    deaths = tuple((e["at"], e["count"]) for e in row["deaths"])  # type: ignore[attr-defined]
    cell = {k: row[k] for k in ("controller", "G", "U", "B", "desired", "duration")}
    cell["deaths"] = deaths
    if row["controller"] == DEADBAND:
        cell["band"] = row["band"]
    return cell


def test_loky_and_dask_give_the_same_table_and_run_cell_agrees(sweeps: Sweeps) -> None:
    table = scan(sweeps.loky).collect()
    assert table.equals(scan(sweeps.dask).collect())
    for part in sorted((sweeps.loky / "data").glob("part-*.parquet")):
        assert part.read_bytes() == (sweeps.dask / "data" / part.name).read_bytes()
    assert len(list((sweeps.loky / "data").glob("part-*.parquet"))) == 3
    assert table.height == 12
    assert sorted(table.filter(controller=DEADBAND)["band"].to_list()) == [0] * 4 + [2] * 4
    assert table.filter(controller="ledger")["band"].null_count() == 4
    for row in table.iter_rows(named=True):
        assert run_cell(**_cell(row)) == {m: row[m] for m in OUTPUT_NAMES}, row
    # band 0 decides as ledger does, cell by cell; band 2 leaves gaps alone
    keys = ["G", "U"]
    ledger = table.filter(controller="ledger").sort(keys).select(METRIC_NAMES)
    band0 = table.filter(controller=DEADBAND, band=0).sort(keys).select(METRIC_NAMES)
    band2 = table.filter(controller=DEADBAND, band=2).sort(keys).select(METRIC_NAMES)
    assert band0.equals(ledger)
    assert not band2.equals(ledger)


def test_the_report_compares_the_users_controller_by_its_parameters(sweeps: Sweeps) -> None:
    report = build_report(sweeps.loky)
    summary = json.loads(report.summary.read_text(encoding="utf-8"))
    c = summary["controllers"]
    labels = ["ledger", "deadband · band=0", "deadband · band=2"]
    assert c["varying"] == ["band"]
    assert [v["variant"] for v in c["variants"]] == labels
    assert [v["params"] for v in c["variants"]] == [{"band": None}, {"band": 0}, {"band": 2}]
    assert [v["cells"] for v in c["variants"]] == [4, 4, 4]
    assert {r["variant"] for r in c["by_G"]} == set(labels)
    frontier = {t["variant"]: t for t in c["tradeoffs"]}
    assert list(frontier) == labels
    # band 0 is ledger, figure for figure: neither beats the other
    assert frontier["deadband · band=0"]["beaten_by"] == []
    assert {"controllers", "tradeoff"} <= set(summary["figures"])
    page = report.html.read_text(encoding="utf-8")
    assert "deadband · band=2" in page
    # what it does, as the sweep recorded it (the report does not import its module)
    assert "no correction while |desired - ledger| &lt;= band" in page
    assert "band = null" not in page  # a parameter that does not apply is left out
    # its cells are not traced (the report runs no controller's code); their parameters
    # are listed by name
    for timeline in summary["timelines"]["cells"]:
        if timeline["found"] and timeline["parameters"]["controller"] == DEADBAND:
            assert not timeline["traced"]
            assert timeline["parameters"]["band"] in (0, 2)
            assert "user's controller" in timeline["why"]


def test_compare_matches_the_users_controller_on_its_parameters(sweeps: Sweeps) -> None:
    same = compare(sweeps.loky, sweeps.dask)
    assert "band" in same.keys
    assert same.identical
    assert (same.matched, same.only_a, same.only_b) == (12, 0, 0)
    other = compare(sweeps.loky, sweeps.other)
    assert other.identical  # the cells in common
    assert (other.matched, other.only_a, other.only_b) == (12, 0, 4)
    assert "band" in other.varying
    assert {(r["controller"], r["band"]) for r in other.only_b_sample} == {(DEADBAND, 3)}


#: What the reading process runs: every reading command, then what it imported.
READER = textwrap.dedent("""
    import importlib.metadata, json, os, sys
    from reconsim.cli import main
    from reconsim import scan

    a, b, results, out = sys.argv[1:]
    armed = [p.value for p in importlib.metadata.entry_points(
        group="reconsim.controllers", name="deadband")]
    codes = {"report": main(["report", a]),
             "compare": main(["compare", a, b, "--json", "--html", out + "/a_vs_b.html"]),
             "publish": main(["publish", results])}
    table = scan(a).collect()
    json.dump({"armed": armed, "codes": codes, "rows": table.height,
               "deadband": table.filter(controller="deadband").height,
               "modules": sorted(m for m in sys.modules
                                if m.split(".")[0] in ("deadband", "reconsim_trap"))},
              open(out + "/reader.json", "w"))
""")


def test_reading_a_sweep_imports_nothing_it_names(sweeps: Sweeps, tmp_path: Path) -> None:
    results = tmp_path / "results"
    a, b = results / "a", results / "b"
    shutil.copytree(sweeps.loky, a)
    shutil.copytree(sweeps.other, b)
    # The trap: a package registering a controller called deadband as an entry point; any
    # resolution of the name the table holds would import it.
    trap = tmp_path / "trap"
    (trap / "reconsim_trap-0.dist-info").mkdir(parents=True)
    (trap / "reconsim_trap-0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: reconsim-trap\nVersion: 0\n", encoding="utf-8")
    (trap / "reconsim_trap-0.dist-info" / "entry_points.txt").write_text(
        "[reconsim.controllers]\ndeadband = reconsim_trap:DEADBAND\n", encoding="utf-8")
    marker = tmp_path / "imported"
    (trap / "reconsim_trap.py").write_text(
        f"open({str(marker)!r}, 'w').write('imported')\n", encoding="utf-8")
    gone = sweeps.module.with_suffix(".gone")
    sweeps.module.rename(gone)  # the module the manifest's import_path and table name
    try:
        done = subprocess.run(
            [sys.executable, "-c", READER, str(a), str(b), str(results), str(tmp_path)],
            env=child_env(PYTHONPATH=f"{ROOT}:{trap}"), cwd=tmp_path, capture_output=True,
            text=True, timeout=300, check=False)
    finally:
        gone.rename(sweeps.module)
    assert done.returncode == 0, done.stderr
    read = json.loads((tmp_path / "reader.json").read_text(encoding="utf-8"))
    assert read["armed"] == ["reconsim_trap:DEADBAND"]
    assert read["codes"] == {"report": 0, "compare": 0, "publish": 0}, done.stderr
    assert (read["rows"], read["deadband"]) == (12, 8)
    assert read["modules"] == []
    assert not marker.exists()
    summary = json.loads((a / "summary.json").read_text(encoding="utf-8"))
    assert [v["variant"] for v in summary["controllers"]["variants"]] == [
        "ledger", "deadband · band=0", "deadband · band=2"]
    compared, _ = json.JSONDecoder().raw_decode(done.stdout, done.stdout.index("{"))
    assert compared["cells"] == {"a": 12, "b": 16, "matched": 12, "only_a": 0, "only_b": 4}
    assert 'href="a/report.html"' in (results / "index.html").read_text(encoding="utf-8")


def test_bench_compare_shows_the_users_controller(tmp_path: Path) -> None:
    # A saved quick run of the benchmark of a user's controller beside a built-in as the
    # base; as the head, the same run with one quality figure of the user's controller
    # moved. bench-compare must pair both variants by name, find the user's controller
    # changed and the built-in the same, and fail on the change. (The benchmark itself runs
    # in the quick benchmarks after the tests, asserting the two variants' metrics equal.)
    params = next(m for m in same_shape.pytestmark if m.name == "parametrize").args[1]
    names = [f"{same_shape.__name__}[{controller}]" for controller in params]
    base = USER_RUN
    run = json.loads(base.read_text(encoding="utf-8"))
    assert [b["name"] for b in run["benchmarks"]] == names  # the bench's variants, as it is
    (moved,) = (b for b in run["benchmarks"]
                if b["name"] == "test_same_shape_as_a_built_in[deadband]")
    moved["extra_info"]["quality"]["reads"] += 1
    head = tmp_path / "head.json"
    head.write_text(json.dumps(run), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "reconsim", "bench-compare", str(base), str(head), "--json",
         "--baseline", str(ROOT / "bench" / "quality-baseline.json")],
        cwd=ROOT, env=child_env(PYTHONPATH=str(ROOT)), capture_output=True, text=True,
        check=False)
    assert done.returncode == 1, done.stderr  # a quality figure changed, not in the baseline
    doc = json.loads(done.stdout)
    variants = {v["name"]: v for v in doc["variants"]}
    assert list(variants) == ["test_same_shape_as_a_built_in[ledger]",
                              "test_same_shape_as_a_built_in[deadband]"]
    ledger, deadband = variants.values()
    assert (ledger["status"], ledger["failing"]) == ("same", False)
    assert (deadband["status"], deadband["failing"]) == ("changed", True)
    changed = {f: v for f, v in deadband["figures"].items() if v["base"] != v["head"]}
    assert list(changed) == ["reads"]
    assert changed["reads"]["head"] == changed["reads"]["base"] + 1
    assert all(v["time_ratio_fastest"] for v in doc["variants"])
    # band 0 decides as ledger does: the base run's figures of both are equal
    assert {f: v["base"] for f, v in deadband["figures"].items()} == {
        f: v["base"] for f, v in ledger["figures"].items()}
    # the head's trade-off: the user's controller reads one entry more for the same quality
    tradeoffs = {t["name"]: t for t in doc["tradeoffs"]}
    assert tradeoffs["test_same_shape_as_a_built_in[ledger]"]["on_frontier"]
    assert tradeoffs["test_same_shape_as_a_built_in[deadband]"]["beaten_by"] == [
        "test_same_shape_as_a_built_in[ledger]"]
    text = subprocess.run([sys.executable, "-m", "reconsim", "bench-compare", str(base),
                           str(head)], cwd=ROOT, env=child_env(PYTHONPATH=str(ROOT)),
                          capture_output=True, text=True, check=False).stdout
    row = next(line for line in text.splitlines()
               if "test_same_shape_as_a_built_in[deadband]" in line and "→" in line)
    reads = changed["reads"]
    assert f"{reads['base']:,} → {reads['head']:,}" in row

