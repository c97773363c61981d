"""Bring your own controller: a definition written once runs on the reference model and on
both kernels alike, from a user's module, and a bad definition is refused in one line."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import re
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import Phase, settings

from reconsim import run_cell, run_reference, trace
from reconsim.cli import main
from reconsim.controllers import (
    Controller,
    ControllerError,
    Int,
    Param,
    RunawayError,
    slots,
)
from reconsim.errors import ReconsimError
from reconsim.model import differential
from reconsim.model.controllers import registry
from reconsim.model.params import Cell, UnknownParameterError, cell_text, make_cell
from reconsim.testing import ControllerMismatchError, check_controller, compare_cell
from tests.helpers import controllers

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "controllers"


@pytest.fixture(autouse=True)
def _examples_importable(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The examples on sys.path; what a test makes known is forgotten after it."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    with registry.scope():
        yield


@pytest.fixture
def module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on sys.path to write a user's controller module into."""
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("userctl_")]:
        del sys.modules[name]


def write_module(folder: Path, name: str, source: str) -> str:
    (folder / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return name


@pytest.mark.parametrize(("ref", "options"), [
    ("deadband:DEADBAND", {"band": 2}), ("deadband:DEADBAND", {"band": 0}),
    ("holdoff:HOLDOFF", {"hold": 30}), ("holdoff:HOLDOFF", {"hold": 500}),
])
@pytest.mark.parametrize("world", [{}, {"B_spread": 4, "G_spread": 5, "restart_at": (100,)},
                                   {"trigger": "watch", "lag": ((100, 200, 7),)}])
@pytest.mark.parametrize("G", [0, 20, 45])
def test_a_users_controller_runs_alike_on_the_kernels_and_the_reference(
        ref: str, options: dict[str, int], world: dict[str, object], G: int) -> None:
    cell = make_cell(controller=ref, G=G, **options, **world)
    assert run_cell(controller=ref, G=G, **options, **world) == run_reference(cell)


def test_the_deadband_leaves_small_gaps_alone() -> None:
    # With G = 20 the ledger loop creates duplicates; a band of 6 (= desired) never acts
    # after the first round, so nothing is created after it.
    wide = run_cell(controller="deadband:DEADBAND", G=20, band=6, deaths=())
    assert wide["created"] == 0
    assert run_cell(controller="deadband:DEADBAND", G=20, band=0) == run_cell(G=20)


def test_our_controllers_pass_the_checker() -> None:
    for controller in registry.built_in():
        if controller.world is None:  # (a world of its own is checked by conformance)
            assert check_controller(controller.name, examples=25) == 25


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.py")), ids=lambda p: p.stem)
def test_every_example_passes_the_checker(path: Path) -> None:
    """Each module of examples/controllers/, by its import path, one definition each."""
    module = importlib.import_module(path.stem)
    (name,) = [n for n, v in vars(module).items() if isinstance(v, Controller)]
    assert check_controller(f"{path.stem}:{name}", examples=25) == 25


def test_memory_slots_by_name_are_the_positional_ones(module: Path) -> None:
    """The hold-off example reads its memory by name (``slots``); the same controller
    reading positions runs the same, and the declaration is the same dictionary."""
    holdoff = registry.resolve("holdoff:HOLDOFF")
    assert holdoff.memory == {"acted_at": -1, "target": 0}
    for bad in ("initial", "_hidden", "del", "mro"):  # not a name a hook could read it by
        with pytest.raises(ControllerError, match=re.escape(f"memory slot {bad!r}: a slot's")):
            slots(**{bad: 0})
    name = controllers.write(module, "userctl_positional")
    for world in ({"G": 20, "hold": 30}, {"G": 45, "hold": 500, "restart_at": (100,),
                                          "deaths": ((200, 3),), "B_spread": 4}):
        by_name = run_cell(controller="holdoff:HOLDOFF", **world)
        assert by_name == run_cell(controller=f"{name}:POSITIONAL", **world)
        assert by_name == run_reference(make_cell(controller="holdoff:HOLDOFF", **world))


def test_a_controller_that_depends_on_t_is_run_every_round(module: Path) -> None:
    """Not declared steady: the kernels skip no idle round, and agree with the reference."""
    name = controllers.write(module, "userctl_clock")
    cell = make_cell(controller=f"{name}:CLOCK", G=0, deaths=((150, 2), (450, 3)))
    compare_cell(cell)
    metrics = run_reference(cell)
    assert metrics["created"] == 6 + 2 + 3  # the first six, then each death's replacements
    assert metrics["missing_copy_seconds"] >= 6 * 110  # nothing before its round at 105
    assert check_controller(f"{name}:CLOCK", examples=20) == 20


@pytest.fixture
def without_shrinking() -> Iterator[None]:
    """Hypothesis, for the checker run inside the test, stops at the first difference
    instead of shrinking it (some 200 more cells, 15-20 s)."""
    settings.register_profile("reconsim-before", parent=settings.default)
    settings.register_profile("reconsim-no-shrink", parent=settings.default,
                              phases=[p for p in Phase if p is not Phase.shrink])
    settings.load_profile("reconsim-no-shrink")
    yield
    settings.load_profile("reconsim-before")


def test_a_false_steady_claim_is_found_by_the_checker(module: Path,
                                                      without_shrinking: None) -> None:
    # userctl_liar's decide acts only in the first half of each minute, yet says steady
    name = controllers.write(module, "userctl_liar")
    with pytest.raises(ControllerMismatchError, match=r"reconsim run --controller "
                       rf"{name}:LIAR .*"):
        check_controller(f"{name}:LIAR", examples=100)


#: A controller that deletes by a rank (tests.helpers.controllers).
RANKED = "userctl_ranked"

#: Worlds where deletions happen and which entries they take changes the live count.
DELETING = [{"G": 20}, {"G": 5, "B": 30, "B_spread": 20, "desired": 10, "grace": 30},
            {"G": 5, "B": 10, "B_spread": 20, "G_spread": 9, "observe": "created",
             "deaths": ((100, 2), (200, 3)), "U": 5},
            {"G": 0, "B": 30, "B_spread": 20, "grace": 30, "desired": 3, "U": 1}]


@pytest.mark.parametrize("world", DELETING)
@pytest.mark.parametrize("order", ["oldest", "newest"])
def test_equal_keys_leave_the_choice_to_the_delete_order(
        module: Path, world: dict[str, object], order: str) -> None:
    ref = controllers.write(module, RANKED) + ":RANKED"
    ledger = run_cell(controller="ledger", delete_order=order, **world)
    assert run_cell(controller=ref, by="equal", delete_order=order, **world) == ledger
    # By creation second, the same order (copies created in one second tie, in that order).
    assert run_cell(controller=ref, by=order, delete_order=order, **world) == ledger


def test_a_rank_overrides_the_delete_order(module: Path) -> None:
    ref = controllers.write(module, RANKED) + ":RANKED"
    overridden = 0
    for world in DELETING:
        cell = make_cell(controller=ref, by="newest", delete_order="oldest", **world)
        compare_cell(cell)
        overridden += run_reference(cell) != run_cell(controller="ledger", delete_order="oldest",
                                                      **world)
    assert overridden >= 1


def test_a_rank_by_readiness_runs_alike_on_the_kernel_and_the_reference(module: Path) -> None:
    ref = controllers.write(module, RANKED) + ":RANKED"
    differs = 0
    for world in DELETING:
        cell = make_cell(controller=ref, **world)
        compare_cell(cell)
        differs += run_reference(cell) != run_cell(controller="ledger", **world)
    assert differs >= 1  # the ranking does change what happens
    assert check_controller(ref, examples=40) == 40


@pytest.mark.parametrize(("body", "message"), [
    ("return 0.5", "rank returned 0.5 at t = "),
    ("return 1 << 63", "not an integer below 2^62"),
    ("raise KeyError('k')", "rank raised KeyError: 'k' at t = "),
])
def test_a_rank_that_misbehaves_is_one_line(module: Path, body: str, message: str) -> None:
    write_module(module, "userctl_badrank", f"""
        from reconsim.controllers import Controller
        def decide(v, p, m):
            return v.desired - v.seen
        def rank(e, p):
            {body}
        BAD = Controller("badrank", decide, "ranks badly", rank=rank)
    """)
    with pytest.raises(ControllerError, match=rf"^controller 'badrank': .*{re.escape(message)}"):
        run_reference(make_cell(controller="userctl_badrank:BAD", G=20))
    with pytest.raises(ControllerError, match="rank must be a function"):
        Controller("badrank2", lambda v, p, m: 0, "x", rank=3)  # type: ignore[arg-type]


def test_the_same_source_under_another_module_name_is_another_identity(module: Path) -> None:
    """Its kernels are cached under its identity: a copied module must not load the
    original's compiled kernel (which would import the original's module)."""
    source = (EXAMPLES / "deadband.py").read_text(encoding="utf-8")
    digests = []
    for name in ("userctl_copy_a", "userctl_copy_b"):
        (module / f"{name}.py").write_text(source, encoding="utf-8")
        with registry.scope():
            digests.append(registry.resolve(f"{name}:DEADBAND").digest)
            registry.forget("deadband")
    assert digests[0] != digests[1]


def test_cell_text_names_a_users_controller_by_its_path() -> None:
    cell = make_cell(controller="deadband:DEADBAND", band=3, G=20)
    assert cell_text(cell).startswith("--controller deadband:DEADBAND ")
    assert cell_text(cell).endswith("--band 3")


def test_the_cli_runs_and_checks_a_users_controller(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--controller", "deadband:DEADBAND", "--band", "6", "--G", "20",
                 "--deaths", "none", "--json"]) == 0
    assert '"created": 0' in capsys.readouterr().out
    assert main(["check-controller", "holdoff:HOLDOFF", "--examples", "5"]) == 0
    assert "holdoff: 5 cells agree on every metric" in capsys.readouterr().out


def test_an_unknown_keyword_names_the_nearest() -> None:
    with pytest.raises(UnknownParameterError, match="did you mean 'band'"):
        make_cell(controller="deadband:DEADBAND", bnad=2)
    with pytest.raises(ValueError, match="band must be an integer in"):
        make_cell(controller="deadband:DEADBAND", band=-1)
    with pytest.raises(ValueError, match="controller 'ledger' takes no options"):
        Cell(controller="ledger", options=(("band", 1),))
    with pytest.raises(UnknownParameterError, match=r"^Gg: not a field of a Cell \(did you "
                       r"mean 'G'\?\); a controller's own parameters go in options"):
        Cell(Gg=1)
    with pytest.raises(UnknownParameterError, match="did you mean 'G'"):
        run_cell(Gg=1)


@pytest.mark.parametrize("function", [run_cell, trace])
def test_one_cells_functions_show_a_cells_keywords(function: Callable[..., Any]) -> None:
    # help() and a notebook's completion read the signature: Cell's fields, keyword-only,
    # with its defaults and types, then a controller's own parameters.
    shown = inspect.signature(function).parameters
    fields = [f for f in dataclasses.fields(Cell) if f.name != "options"]
    assert list(shown) == [*(f.name for f in fields), "options"]
    cell = Cell()
    for f in fields:
        assert shown[f.name].kind is inspect.Parameter.KEYWORD_ONLY, f.name
        assert shown[f.name].default == getattr(cell, f.name), f.name
    assert shown["options"].kind is inspect.Parameter.VAR_KEYWORD
    assert (shown["G"].annotation, shown["max_per_round"].annotation) == ("int", "int | None")
    assert shown["controller"].annotation == "str | Controller"
    assert inspect.signature(function).bind(G=20, band=2).arguments == {
        "G": 20, "options": {"band": 2}}


@pytest.mark.parametrize(("source", "message"), [
    ("def decide(v, p, m):\n    return v.desired - v.seen - v.pending\n"
     "BAD = Controller('bad', decide, 'x')",
     "decide reads 'pending' without declaring it: add sees=('pending',)"),
    ("def decide(v, p, m):\n    return 0\nBAD = Controller('bad', decide, 'x', "
     "params={'k': Param(Int(0), 1, 'unbounded')})",
     "parameter 'k' has no upper bound"),
    ("def decide(v, p, m):\n    return 0\nBAD = Controller('ledger', decide, 'x')",
     "the name is a built-in controller's"),
    ("def decide(v, p, m):\n    return 0\nBAD = Controller('bad', decide, 'x', "
     "params={'G': Param(Int(0, 5), 1, 'clash')})",
     "parameter 'G' is a cell parameter's name"),
    ("BAD = 42", "controller 'userctl_bad:BAD': it is a int, not a reconsim Controller"),
    ("raise RuntimeError('broken module')", "importing 'userctl_bad' raised RuntimeError"),
])
def test_a_bad_definition_is_one_line(module: Path, source: str, message: str,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    write_module(module, "userctl_bad",
                 "from reconsim.controllers import Controller, Int, Param\n" + source)
    with pytest.raises(ControllerError, match=message.replace("(", r"\(").replace(")", r"\)")):
        registry.resolve("userctl_bad:BAD")
    assert main(["run", "--controller", "userctl_bad:BAD"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "controller" in err


@pytest.mark.parametrize(("body", "message"), [
    ("if v.t > 30:\n                raise ValueError('no')\n            return 0",
     "controller 'bad2': decide raised ValueError: no"),
    ("return 10**7", "decide returned 10000000 at t = 0, beyond the 1,000,000 copies"),
    ("return {1: 2}", "decide returned {1: 2} at t = 0, not an integer"),
])
def test_a_decision_that_misbehaves_is_one_line(module: Path, body: str, message: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    write_module(module, "userctl_bad2", f"""
        from reconsim.controllers import Controller
        def decide(v, p, m):
            {body}
        BAD = Controller("bad2", decide, "misbehaves")
    """)
    assert main(["run", "--controller", "userctl_bad2:BAD", "--json"]) == 2
    err = capsys.readouterr().err
    assert message in err
    # one line, after the kernel's compile notice where this is its first use
    assert len([x for x in err.splitlines() if not x.startswith("compiled the ")]) == 1


def test_a_path_that_does_not_resolve_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--controller", "no_such_module_here:X"]) == 2
    assert capsys.readouterr().err == (
        "error: reconsim run: controller 'no_such_module_here:X': cannot import "
        "'no_such_module_here' (No module named 'no_such_module_here')\n")
    with pytest.raises(ControllerError, match="not a built-in"):
        registry.resolve("nosuchname")


def test_two_definitions_may_not_share_a_name(module: Path) -> None:
    first = Controller("twin", lambda v, p, m: 0, "one")
    registry.register(first)
    assert registry.register(first) is first
    with pytest.raises(ControllerError, match="another definition of that name is known"):
        registry.register(Controller("twin", lambda v, p, m: 1, "two",
                                     params={"x": Param(Int(0, 3), 0, "differs")}))


SWEEP = """
name = "mine"
import_path = ["{folder}", "{extra}"]

[grid]
controller = ["ledger", "{ref}"]
{param} = {values}
G = [0, 20]
U = [15]
desired = 6
duration = 300
"""


def write_spec(folder: Path, ref: str = "deadband:DEADBAND", param: str = "band",
               values: str = "[0, 2]") -> Path:
    """A spec in ``folder`` importing from the examples and from ``folder`` itself (the
    workers, other processes, import from there too)."""
    spec = folder / "mine.toml"
    spec.write_text(SWEEP.format(folder=EXAMPLES, extra=folder, ref=ref, param=param,
                                 values=values), encoding="utf-8")
    return spec


def test_a_sweep_runs_a_users_controller_beside_ours(tmp_path: Path) -> None:
    from reconsim import load_spec, run_sweep, scan

    spec = load_spec(write_spec(tmp_path))
    assert spec.controllers == (("deadband", "deadband:DEADBAND"),)
    assert spec.n_cells == 2 + 2 * 2  # band multiplies the deadband's block only
    out = tmp_path / "out"
    run_sweep(spec, out, jobs=2, progress=False)
    table = scan(out).collect()
    assert table["controller"].to_list().count("deadband") == 4
    band = table.filter(controller="deadband")["band"].to_list()
    assert sorted(band) == [0, 0, 2, 2]
    assert table.filter(controller="ledger")["band"].null_count() == 2
    # band 0 decides as the ledger loop does: the same figures, cell by cell
    same = table.filter((pl.col("controller") == "ledger") | (pl.col("band") == 0))
    assert same.group_by("G").agg(pl.col("created").n_unique())["created"].to_list() == [1, 1]
    manifest = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    assert manifest["model"]["controllers"] == [registry.get("deadband").identity]


PYTHON_ONLY = """
    from fractions import Fraction
    from reconsim.controllers import Controller, Int, Param
    def decide(v, p, m):
        gap = Fraction(v.desired - v.seen)  # numba knows no Fraction
        return 0 if abs(gap) <= p.band else int(gap)
    MINE = Controller("python_only", decide, "a deadband written with fractions",
                      params={"band": Param(Int(0, 1000), 1, "the gap it leaves alone")},
                      steady=True, compiled=COMPILED)
"""


def test_code_numba_cannot_compile_runs_on_the_reference_model_alone(
        tmp_path: Path, module: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from reconsim import load_spec, run_sweep, scan

    refused = write_module(module, "userctl_dict", PYTHON_ONLY.replace("COMPILED", "True"))
    assert main(["run", "--controller", f"{refused}:MINE"]) == 2
    assert "numba cannot compile its decide" in capsys.readouterr().err
    name = write_module(module, "userctl_dict2", PYTHON_ONLY.replace(
        "COMPILED", "False").replace('"python_only"', '"python_alone"'))
    ref = f"{name}:MINE"
    # The same decisions as the compiled deadband, cell for cell, on every path.
    for band, world in [(0, {"G": 20}), (2, {"G": 45, "B_spread": 4, "trigger": "watch"})]:
        assert run_cell(controller=ref, band=band, **world) == run_cell(
            controller="deadband:DEADBAND", band=band, **world)
    assert main(["check-controller", ref, "--examples", "5"]) == 0
    assert "5 cells ran without error on the reference model" in capsys.readouterr().out
    out = tmp_path / "out"
    run_sweep(load_spec(write_spec(module, ref)), out, jobs=2, progress=False)
    table = scan(out).collect().sort("G", "band", "controller")
    fast = table.filter(controller="ledger")
    alone = table.filter(controller="python_alone", band=0)
    assert alone["created"].to_list() == fast["created"].to_list()
    assert alone["missing_copy_seconds"].to_list() == fast["missing_copy_seconds"].to_list()


def test_a_resume_with_another_version_of_the_controller_is_refused(
        tmp_path: Path, module: Path) -> None:
    from reconsim import load_spec, run_sweep

    name = controllers.write(module, "userctl_v")
    spec_path = write_spec(module, f"{name}:MINE", "k", "[0, 1]")
    out = tmp_path / "out"
    run_sweep(load_spec(spec_path), out, progress=False)
    assert registry.get("mine").identity == "mine@1"
    with registry.scope():
        del sys.modules[name]
        registry.forget("mine")
        (module / f"{name}.py").write_text((module / f"{name}.py").read_text(
            encoding="utf-8").replace('version="1"', 'version="2"'), encoding="utf-8")
        with pytest.raises(ReconsimError, match=r"another model .*mine@1.*mine@2"):
            run_sweep(load_spec(spec_path), out, progress=False)


def test_a_spec_naming_a_missing_controller_is_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = write_spec(tmp_path, "deadband:NOPE")
    assert main(["sweep", str(spec), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "grid.controller: controller 'deadband:NOPE': 'deadband' has no attribute" in err
    assert err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_a_refusal_agrees_only_with_the_same_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    # A stale read, watch triggers, no ledger delay: both models refuse it, with one line.
    runaway = Cell(controller="replicaset", G=0, trigger="watch", lag=((0, 26, 48),))
    compare_cell(runaway)

    def refused(cell: Cell) -> dict[str, Any]:
        raise RunawayError("controller 'ledger': made up")

    monkeypatch.setattr(differential, "run_reference", refused)
    with pytest.raises(ControllerMismatchError, match=re.escape(
            "differ (kernel ran to the end; reference refused: controller 'ledger': made up): "
            "reconsim run --controller ledger")):
        compare_cell(Cell(G=20))
