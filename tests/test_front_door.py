"""One front door: reconsim's controllers are registered and resolved as a user's is, and a
controller's parameter is a field of a cell or one of its options by its declaration, not
by who wrote the controller."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

from reconsim import run_cell, run_reference
from reconsim.cli import main
from reconsim.controllers import TTL, Controller, ControllerError, Int, Param
from reconsim.model.controllers import registry
from reconsim.model.params import (
    MAX_SECONDS,
    PARAMS,
    Cell,
    all_params,
    applies,
    cell_text,
    make_cell,
    options_of,
    parameter,
)
from reconsim.model.simulate import cells_frame, simulate
from reconsim.sweep.spec import AXES, parse_spec
from reconsim.testing import check_controller
from tests.helpers.controllers import SOURCES

#: A user's module: Kubernetes' expectations as a user would write them, taking reconsim's
#: ``ttl`` by importing its declaration, beside an option of its own.
MINE = SOURCES["frontdoor_mine"]
REF = "frontdoor_mine:MINE"


@pytest.fixture(autouse=True)
def _forgotten() -> Iterator[None]:
    """What a test makes known is forgotten after it."""
    with registry.scope():
        yield


@pytest.fixture
def mine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Controller]:
    """The user's controller of :data:`MINE`, resolved by its import path."""
    (tmp_path / "frontdoor_mine.py").write_text(textwrap.dedent(MINE), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield registry.resolve(REF)
    sys.modules.pop("frontdoor_mine", None)


def test_the_built_ins_come_through_register_and_are_known_first() -> None:
    built_in = registry.built_in()
    assert [c.name for c in built_in] == ["ledger", "intent", "expectations", "replicaset",
                                          "deployment"]
    assert registry.known()[:len(built_in)] == built_in  # their codes: their index
    for controller in built_in:
        assert registry.register(controller) is controller  # the same definition: known
        assert registry.named_by(controller.name) is None
        registry.forget(controller.name)  # reconsim's own stay
        assert registry.get(controller.name) is controller
    with pytest.raises(ControllerError, match=re.escape(
            "controller 'ledger': the name is a built-in controller's; choose another")):
        registry.register(Controller("ledger", lambda v, p, m: 0, "another ledger"))


def test_a_built_ins_parameters_are_fields_and_it_has_no_options() -> None:
    assert all_params() == PARAMS
    for controller in registry.built_in():
        assert options_of(controller) == {}
        for name in controller.params:
            assert parameter(name).declared == controller.params[name]
            assert applies(name, controller.name)
    assert parameter("ttl").declared is TTL
    assert parameter("ttl").owners() == ("expectations", "replicaset")
    assert parameter("max_surge").owners() == ("deployment",)
    assert parameter("restart_at").owners() == ()  # applies by what a controller does
    with pytest.raises(ValueError, match=re.escape(
            "options: controller 'ledger' takes no options (got band)")):
        Cell(controller="ledger", options=(("band", 1),))
    with pytest.raises(ValueError, match=re.escape(
            "options: ttl = 5 is a field of a Cell, not an option: give it as ttl=")):
        Cell(controller="expectations", options=(("ttl", 5),))


def test_a_users_controller_that_declares_ttl_as_reconsim_does_takes_the_field(
        mine: Controller) -> None:
    assert registry.named_by("mine") == REF
    assert options_of(mine) == {"spare": mine.params["spare"]}
    assert [p.name for p in all_params()] == [*(p.name for p in PARAMS), "spare"]
    assert parameter("ttl").owners() == ("expectations", "replicaset", "mine")
    cell = make_cell(controller=REF, ttl=30, spare=2, G=20)
    assert (cell.controller, cell.ttl, cell.options) == ("mine", 30, (("spare", 2),))
    assert cell_text(cell).startswith(f"--controller {REF} ")
    assert "--ttl 30" in cell_text(cell)
    with pytest.raises(ValueError, match=re.escape(
            "options: ttl = 5 is a field of a Cell, not an option: give it as ttl=")):
        Cell(controller="mine", options=(("ttl", 5),))
    # the others' refusal names every controller that declares it
    with pytest.raises(ValueError, match=re.escape(
            "ttl: 30 does not apply to controller 'ledger' (ttl is a parameter of "
            "expectations, replicaset and mine only)")):
        make_cell(controller="ledger", ttl=30)
    # a frame's ttl column is its parameter; a table's ttl column holds it
    frame = cells_frame([cell, make_cell(controller="expectations", ttl=30, G=20),
                         make_cell(controller="ledger", G=20)])
    assert frame["ttl"].to_list() == [30, 30, None]
    assert frame["spare"].to_list() == [2, None, None]


def test_it_runs_as_expectations_do_on_the_kernels_and_the_reference(
        mine: Controller) -> None:
    """Its decision is expectations', so every metric is theirs: ``ttl`` reaches ``p.ttl``
    in the kernels and the reference model alike, and changes what happens."""
    for world in ({"G": 20, "ttl": 5}, {"G": 45, "ttl": 30, "B_spread": 4, "deaths": ((60, 3),)}):
        ours = run_cell(controller="expectations", **world)
        assert run_cell(controller=REF, **world) == ours
        assert run_reference(make_cell(controller=REF, **world)) == ours
    assert run_cell(controller=REF, G=20, ttl=5) != run_cell(controller=REF, G=20)
    cells = [make_cell(controller=c, G=20, ttl=t) for c in ("expectations", "mine")
             for t in (5, 300)]
    ran = simulate(cells_frame(cells))
    metrics = [c for c in ran.columns if c not in cells_frame(cells).columns]
    assert ran.filter(pl.col("controller") == "mine").select(metrics).equals(
        ran.filter(pl.col("controller") == "expectations").select(metrics))


def test_the_checker_draws_ttl_for_it(mine: Controller) -> None:
    ttls: list[int] = []
    assert check_controller(mine, examples=20, on_example=lambda c: ttls.append(c.ttl)) == 20
    assert len(set(ttls)) > 1


def test_the_cli_and_a_spec_take_its_ttl(mine: Controller, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    shown = []
    for controller in ("expectations", REF):
        assert main(["run", "--controller", controller, "--ttl", "30", "--G", "20",
                     "--json"]) == 0
        shown.append(json.loads(capsys.readouterr().out))
    assert shown[0] == shown[1]
    spec = parse_spec(textwrap.dedent(f"""
        name = "t"
        import_path = ["{tmp_path}"]
        [grid]
        controller = ["expectations", "{REF}", "ledger"]
        ttl = [5, 300]
        spare = [0, 1]
    """))
    assert spec.controllers == (("mine", REF),)
    assert tuple(spec.axes)[:len(AXES)] == AXES
    assert tuple(spec.axes)[len(AXES):] == ("spare",)
    assert {"ttl", "spare"} <= set(spec.block_axes("mine"))
    assert "spare" not in spec.block_axes("expectations")
    assert spec.n_cells == 2 + 2 * 2 + 1


_OTHERWISE = ("parameter 'ttl' is a cell parameter declared otherwise (by expectations and "
              "replicaset) (its kind, default and help must be theirs): declare it as they "
              "do to take it, or choose another name")


@pytest.mark.parametrize(("params", "message"), [
    ({"ttl": Param(Int(0, 10), 5, "mine")}, _OTHERWISE),
    # the same kind and default, another help: declared otherwise all the same
    ({"ttl": Param(Int(0, MAX_SECONDS), TTL.default, "mine")}, _OTHERWISE),
    ({"G": Param(Int(0, 5), 1, "clash")}, "parameter 'G' is a cell parameter's name"),
    ({"options": Param(Int(0, 5), 1, "clash")}, "parameter 'options' is a cell parameter's name"),
])
def test_a_field_declared_otherwise_is_refused(params: dict[str, Param], message: str) -> None:
    with pytest.raises(ControllerError, match=re.escape(f"controller 'other': {message}")):
        registry.register(Controller("other", lambda v, p, m: 0, "x", params=params))
    assert "other" not in registry.names()
    # an equal declaration, written out again, is the same declaration: the field applies
    copy = Param(Int(0, MAX_SECONDS), 300, TTL.help)
    assert copy.kind is not TTL.kind
    registry.register(Controller("copy", lambda v, p, m: 0, "x", params={"ttl": copy}))
    assert applies("ttl", "copy")
    assert options_of(registry.get("copy")) == {}


def test_a_controller_known_before_the_cells_parameters_is_held_to_them() -> None:
    """A controller registered before the cell's parameters are declared (their module not
    imported yet) is checked at once all the same, and refused there: nothing of it stays
    to break later calls."""
    code = textwrap.dedent("""
        import sys
        from reconsim.controllers import Controller, ControllerError, Int, Param, register
        assert "reconsim.model.params" not in sys.modules
        try:
            register(Controller("early", lambda v, p, m: 0, "x",
                                params={"G": Param(Int(0, 5), 1, "clash")}))
        except ControllerError as exc:
            print(exc)
        import reconsim
        print(reconsim.run_cell(controller="ledger", G=60)["overshoot"])
    """)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert run.stdout.splitlines() == [
        "controller 'early': parameter 'G' is a cell parameter's name; choose another", "24"]
