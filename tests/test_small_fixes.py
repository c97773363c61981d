"""What a new user met on the way: ``reconsim compare`` saying where its page went and never
overwriting another comparison's, every subcommand naming itself in an error, plurals in the
help, a parameter given to a user's controller it does not apply to, and two quantile keys
of one level."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from reconsim import run_cell
from reconsim.cli import main
from reconsim.model import delays
from reconsim.model.controllers import registry
from reconsim.model.params import MAX_EVENTS, Cell, cell_text, make_cell
from reconsim.model.simulate import cells_frame, simulate
from reconsim.sweep.spec import SpecError, parse_spec
from tests.helpers.sweeps import compare_sweep

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "controllers"


@pytest.fixture
def examples(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The example controllers importable; what a test makes known is forgotten after it."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    with registry.scope():
        yield


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one line ``reconsim ARGV`` prints on stderr, refusing with exit status 2."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1, captured.err
    return captured.err.rstrip("\n")


# --- reconsim compare: the page it wrote, and never another comparison's ----------------

@pytest.fixture(scope="module")
def sweeps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two what-if pairs of sweeps with the same directory names: first/u15 and first/u30
    (U = 15 against U = 15 and 30), second/u15 and second/u30."""
    root = tmp_path_factory.mktemp("what-if")
    for pair in ("first", "second"):
        compare_sweep(root / pair / "u15", U="[15]")
        compare_sweep(root / pair / "u30", U="[15, 30]")
    return root


def test_compare_prints_the_page_it_wrote(sweeps: Path, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    a, b = sweeps / "first" / "u15", sweeps / "first" / "u30"
    assert main(["compare", str(a), str(b), "--ignore", "U"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert re.fullmatch(r"u15_vs_u30\.html: the comparison's page, \d+\.\d MB", lines[-1])
    assert "36 pairs matched (36 cells of 36 in" in "\n".join(lines)
    # The page's own line has its space too, and its counts their plurals.
    page = (tmp_path / "u15_vs_u30.html").read_text(encoding="utf-8")
    (verdict,) = re.findall(r'<div class="verdict fails">(.*?)</div>', page, flags=re.S)
    assert "36 pairs matched (36 cells of A, 72 of B);" in verdict
    assert re.search(r"\d+\s+of \d+ metrics differ\.", verdict)


def test_a_documents_stdout_stays_the_document(sweeps: Path, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "page.html"
    a, b = sweeps / "first" / "u15", sweeps / "first" / "u30"
    assert main(["compare", str(a), str(b), "--ignore", "U", "--json", "--html",
                 str(page)]) == 1
    out, err = capsys.readouterr()
    assert json.loads(out)["pairing"]
    assert err.startswith(f"{page}: the comparison's page, ")


def test_compare_never_overwrites_another_comparison_unasked(
        sweeps: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    first = [str(sweeps / "first" / "u15"), str(sweeps / "first" / "u30"), "--ignore", "U"]
    second = [str(sweeps / "second" / "u15"), str(sweeps / "second" / "u30")]
    page = tmp_path / "u15_vs_u30.html"
    assert main(["compare", *first]) == 1
    written = page.read_bytes()
    capsys.readouterr()
    # The same comparison again (another option too) may overwrite its own page ...
    assert main(["compare", *first, "--tolerance", "overshoot=100"]) == 1
    assert capsys.readouterr().out.splitlines()[-1].startswith("u15_vs_u30.html: ")
    written = page.read_bytes()
    # ... another one, whose default name is the same, is refused before it compares.
    assert refused(["compare", *second], capsys) == (
        f"error: reconsim compare: u15_vs_u30.html: holds the comparison of "
        f"{sweeps / 'first' / 'u15'} and {sweeps / 'first' / 'u30'}; --force overwrites it, "
        "--html FILE writes the page elsewhere")
    assert page.read_bytes() == written
    assert main(["compare", *second, "--force"]) == 0
    assert f"{sweeps / 'second' / 'u15'}" in page.read_text(encoding="utf-8")
    # A file that is no comparison's page is never overwritten unasked either.
    mine = tmp_path / "notes.html"
    mine.write_text("my notes", encoding="utf-8")
    capsys.readouterr()
    assert refused(["compare", *second, "--html", str(mine)], capsys).endswith(
        f"{mine}: is not a comparison's page; --force overwrites it, --html FILE writes the "
        "page elsewhere")
    assert mine.read_text(encoding="utf-8") == "my notes"


# --- every subcommand names itself ----------------------------------------------------------

@pytest.mark.parametrize("argv", [
    ["run"], ["seed"], ["sweep", "spec.toml"], ["report", "dir"], ["publish"],
    ["compare", "a", "b"], ["bench-compare", "a.json", "b.json"], ["check-controller", "ledger"],
    ["conformance"]])
def test_an_unknown_flag_names_the_command(argv: list[str],
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert refused([*argv, "--Gg"], capsys) == (
        f"error: reconsim {argv[0]}: unrecognized arguments: --Gg")


# --- plurals ----------------------------------------------------------------------------------

def test_a_delay_table_has_entries(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # as wrapped to any width
    assert "'none' for no entries (default none)" in text
    assert "entrys" not in text
    with pytest.raises(ValueError, match=re.escape(
            f"G_delays: {MAX_EVENTS + 1} entries, more than the {MAX_EVENTS} a cell may hold")):
        run_cell(G_delays=tuple((v, 1) for v in range(MAX_EVENTS + 1)))


# --- a parameter that does not apply to a user's controller ---------------------------------

TTL = ("ttl: 30 does not apply to controller 'deadband' (ttl is a parameter of expectations "
       "and replicaset only)")


@pytest.mark.usefixtures("examples")
def test_a_parameter_given_to_a_users_controller_it_does_not_apply_to_is_refused() -> None:
    with pytest.raises(ValueError, match=re.escape(TTL)):
        run_cell(controller="deadband:DEADBAND", band=2, ttl=30)
    with pytest.raises(ValueError, match=re.escape(
            "log_scale_down: True does not apply to controller 'deadband' (log_scale_down "
            "is a parameter of replicaset only)")):
        make_cell(controller="deadband:DEADBAND", log_scale_down=True)
    # its default changes nothing; a bad value is named as a bad value
    assert run_cell(controller="deadband:DEADBAND", ttl=300) == run_cell(
        controller="deadband:DEADBAND")
    with pytest.raises(ValueError, match=re.escape("ttl must be an integer in [0, 1000000]")):
        run_cell(controller="deadband:DEADBAND", ttl=-1)
    # A restart applies to every controller: the hold-off forgets when it acted and acts
    # again at once; the deadband, remembering nothing, loses nothing.
    held = {"controller": "holdoff:HOLDOFF", "G": 60, "hold": 120}
    assert (run_cell(**held)["created"], run_cell(**held, restart_at=(15,))["created"]) == (8, 14)
    assert run_cell(controller="deadband:DEADBAND", restart_at=(10,)) == run_cell(
        controller="deadband:DEADBAND")


@pytest.mark.usefixtures("examples")
def test_reconsim_run_refuses_it_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert refused(["run", "--controller", "deadband:DEADBAND", "--ttl", "30"], capsys) == (
        f"error: reconsim run: {TTL}")
    # The command that reproduces a cell leaves out what does not apply to it.
    cell = dataclasses.replace(make_cell(controller="deadband:DEADBAND", band=3), ttl=57)
    assert "--ttl" not in cell_text(cell)
    assert main(["run", *cell_text(cell).split(), "--json"]) == 0


def test_a_built_in_is_refused_another_built_ins_parameter_as_a_users_is(
        capsys: pytest.CaptureFixture[str]) -> None:
    # ledger keeps no expectations; only the Deployment world has a surge budget
    with pytest.raises(ValueError, match=re.escape(
            "ttl: 5 does not apply to controller 'ledger' (ttl is a parameter of "
            "expectations and replicaset only)")):
        run_cell(controller="ledger", ttl=5)
    assert refused(["run", "--controller", "expectations", "--max_surge", "3"], capsys) == (
        "error: reconsim run: max_surge: 3 does not apply to controller 'expectations' "
        "(max_surge is a parameter of deployment only)")
    # at its default it changes nothing; where it applies it is taken
    assert run_cell(controller="ledger", ttl=300) == run_cell(controller="ledger")
    assert run_cell(controller="expectations", G=20, ttl=5) != run_cell(
        controller="expectations", G=20)
    # a frame is a table: a row's column for another controller is not its parameter
    rows = [Cell(controller="ledger", G=20), Cell(controller="replicaset", G=20, ttl=5),
            Cell(controller="deployment", desired=3, G=5, B=5, duration=60)]
    ran = simulate(cells_frame(rows).with_columns(ttl=pl.Series([5, 5, 5])))
    assert ran.drop("ttl").rows() == simulate(cells_frame(rows)).drop("ttl").rows()


@pytest.mark.usefixtures("examples")
def test_a_grid_refuses_an_axis_that_would_reach_a_users_controller_only(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = ('name = "t"\nimport_path = ["{folder}"]\n[grid]\ncontroller = {controllers}\n'
            "{axis}\n")

    def parsed(controllers: str, axis: str) -> int:
        text = spec.format(folder=EXAMPLES, controllers=controllers, axis=axis)
        return parse_spec(text).n_cells

    with pytest.raises(SpecError, match=re.escape(f"grid.{TTL}")):
        parsed('["ledger", "deadband:DEADBAND"]', "ttl = [300, 30]")
    # beside a controller it applies to, it multiplies that one's cells only
    assert parsed('["expectations", "deadband:DEADBAND"]', "ttl = [300, 30]") == 3
    assert parsed('["holdoff:HOLDOFF"]', "restart_at = [[], [10]]") == 2
    assert parsed('["deadband:DEADBAND"]', "restart_at = [[], [10]]") == 1  # loses nothing
    assert parsed('["deadband:DEADBAND"]', "ttl = 300") == 1  # the default: nothing given
    # so are the built-ins: no cell of ledger's would take a ttl
    with pytest.raises(SpecError, match=re.escape(
            "grid.ttl: 5 does not apply to controller 'ledger' (ttl is a parameter of "
            "expectations and replicaset only)")):
        parsed('["ledger"]', "ttl = 5")
    assert parsed('["ledger", "replicaset"]', "ttl = [5, 10]") == 3
    path = tmp_path / "spec.toml"
    path.write_text(spec.format(folder=EXAMPLES, controllers='["deadband:DEADBAND"]',
                                axis="ttl = 30"), encoding="utf-8")
    out = tmp_path / "out"
    assert refused(["sweep", str(path), "--out", str(out)], capsys) == (
        f"error: reconsim sweep: {path}: grid.{TTL}")
    assert not out.exists()


# --- two quantile keys of one level -------------------------------------------------------

def test_two_keys_of_one_quantile_level_are_refused(tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ValueError, match=re.escape(
            "quantiles: p50 and p50.0 are the same level (500,000 ppm); give it once")):
        delays.from_quantiles({"p50": 12, "p50.0": 13, "max": 60})
    with pytest.raises(ValueError, match="p5 and p05 are the same level"):
        delays.from_quantiles({"p5": 1, "p05": 1, "max": 60})
    path = tmp_path / "spec.toml"
    path.write_text('name = "t"\n[delays.q]\nquantiles = {p50 = 12, "p50.0" = 13, max = 60}\n'
                    '[grid]\nG_delays = "q"\n', encoding="utf-8")
    assert refused(["sweep", str(path), "--out", str(tmp_path / "out")], capsys) == (
        f"error: reconsim sweep: {path}: delays.q.quantiles: p50 and p50.0 are the same "
        "level (500,000 ppm); give it once")
    # TOML reads a bare p99.9 as a table: said so, with the quoted form
    with pytest.raises(SpecError, match=re.escape(
            'delays.q.quantiles.p99: {\'9\': 40} is a table, not seconds: a level with a '
            'decimal point goes in quotes ("p99.9" = 40)')):
        parse_spec('name = "t"\n[delays.q]\nquantiles = {p99.9 = 40, max = 60}\n')
