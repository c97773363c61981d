"""A user's controller is run exactly, or refused: a hook that raises or returns what it may
not gets the reference model's one line on every path — the reference model, the count,
world and event kernels (with spreads, tables, faults or none), one cell or a frame — and
a controller whose compiled code decides otherwise than its Python is refused before a
sweep writes anything."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from reconsim import run_cell, run_reference, simulate, trace
from reconsim.cli import main
from reconsim.controllers import DecisionError
from reconsim.model.controllers import registry
from reconsim.model.kernels import count as count_kernel
from reconsim.model.kernels import events as event_kernel
from reconsim.model.kernels import world as world_kernel
from reconsim.model.kernels.arrays import UNRUN
from reconsim.model.params import cell_text, make_cell
from reconsim.model.simulate import cells_frame
from tests.helpers import controllers

#: Worlds that send a cell to each kernel of the controllers that decide in rounds.
WORLDS = {
    "count kernel": {},
    "uniform spread": {"G_spread": 10},
    "delay table": {"B_delays": ((0, 1), (7, 3))},
    "faults": {"fail_rate": 0.2, "create_faults": ((0, 2, "lost"),)},
    "watch trigger": {"trigger": "watch", "U_jitter": 3},
}

#: The module of misbehaving controllers (its source: tests.helpers.controllers): FLOATY,
#: BOOLY, NUMPY_FLOAT (a float or a bool returned), LATE (raises from t = 300 on), ALWAYS,
#: HUGE (10**7 from t = 60 on), BIG_RANK and NEGATIVE_RANK (a rank of +-2^62), STRINGLY
#: (str of a dict), and those that sync on events: EVENT_FLOATY, EVENT_LATE, SETTLE_FLOAT,
#: LESS_FLOAT.
MODULE = "userctl_refused"


@pytest.fixture(autouse=True)
def users(tmp_path_factory: pytest.TempPathFactory,
          monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The module ``userctl_refused`` of misbehaving controllers, importable; what a test
    makes known is forgotten after it."""
    folder = tmp_path_factory.getbasetemp() / "refused"
    folder.mkdir(exist_ok=True)
    controllers.write(folder, MODULE)
    monkeypatch.syspath_prepend(str(folder))
    with registry.scope():
        yield
    sys.modules.pop(MODULE, None)


def ref(name: str) -> str:
    return f"{MODULE}:{name}"


def errors(err: str) -> list[str]:
    """The lines of stderr that are not a kernel's compile notice (printed on first use)."""
    return [x for x in err.splitlines() if not x.startswith("compiled the ")]


def line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    """The refusal's own line, without the cell a frame's refusal adds."""
    assert isinstance(exc.value, DecisionError)
    return exc.value.reason


#: Each controller's refusal, as the reference model says it (its second and its value).
EXPECTED = {
    "FLOATY": "controller 'floaty': decide returned 3.0 at t = 0, not an integer",
    "BOOLY": "controller 'booly': decide returned True at t = 0, not an integer",
    "NUMPY_FLOAT": "controller 'numpy_float': decide returned np.float64(6.0) at t = 0, "
                   "not an integer",
    "LATE": "controller 'late': decide raised ValueError: boom at t = 300",
    "ALWAYS": "controller 'always': decide raised ValueError: always at t = 0",
    "HUGE": "controller 'huge': decide returned 10000000 at t = 60, beyond the 1,000,000 "
            "copies a correction may make",
}


@pytest.mark.parametrize("world", WORLDS.values(), ids=WORLDS.keys())
@pytest.mark.parametrize("name", EXPECTED)
def test_a_misbehaving_decide_is_the_reference_models_line_on_every_kernel(
        name: str, world: dict[str, Any]) -> None:
    cell = make_cell(controller=ref(name), G=20, U=10, B=5, **world)
    with pytest.raises(DecisionError) as reference:
        run_reference(cell)
    expected = line(reference)  # the line every path gives
    if not world:  # seed 001's world: rounds at 0, 10, 20, ...
        said = EXPECTED[name]
        if name == "NUMPY_FLOAT" and "np.float64" not in expected:  # NumPy < 2 says 6.0
            said = said.replace("np.float64(6.0)", "6.0")
        assert expected == said
    with pytest.raises(DecisionError) as one:
        run_cell(controller=ref(name), G=20, U=10, B=5, **world)
    assert str(one.value) == expected  # one cell: the line alone
    # In a frame, beside cells that run: the row found, the line, then the cell.
    frame = cells_frame([make_cell(G=20, **world), make_cell(G=30, **world), cell])
    with pytest.raises(DecisionError) as batch:
        simulate(frame)
    assert (line(batch), batch.value.row) == (expected, 2)
    assert str(batch.value) == f"{expected}; the cell: reconsim run {cell_text(cell)}"
    with pytest.raises(DecisionError, match=f"^{re.escape(expected)}$"):
        trace(controller=ref(name), G=20, U=10, B=5, **world)


def test_a_frame_names_the_first_refused_row_of_many() -> None:
    """An exception inside a kernel names no row: the frame's halves run again to find it
    (here the 37th of 64 cells, the only one that reaches t = 300)."""
    cells = [make_cell(controller=ref("LATE"), G=20, duration=299) for _ in range(64)]
    cells[37] = make_cell(controller=ref("LATE"), G=20, duration=400)
    with pytest.raises(DecisionError) as refused:
        simulate(cells_frame(cells))
    assert refused.value.row == 37
    assert line(refused) == EXPECTED["LATE"]
    assert "--duration 400" in str(refused.value)


@pytest.mark.parametrize(("name", "expected"), [
    ("EVENT_FLOATY", "controller 'event_floaty': decide returned -1.0 at t = 0, not an "
                     "integer"),
    ("EVENT_LATE", "controller 'event_late': decide raised ValueError: boom at t = 300"),
    ("SETTLE_FLOAT", "controller 'settle_float': settle returned 0.5 at t = 0, not 0 or a "
                     "delay in ms"),
    ("LESS_FLOAT", "controller 'less_float': less returned 0.5 at t = "),
])
def test_an_event_driven_controllers_hooks_are_refused_alike(name: str, expected: str) -> None:
    world = {"G": 2, "B": 1, "deaths": ((100, 2),), "initial": 8, "desired": 6,
             "duration": 400}
    with pytest.raises(DecisionError, match=f"^{re.escape(expected)}"):
        run_reference(make_cell(controller=ref(name), **world))
    with pytest.raises(DecisionError, match=f"^{re.escape(expected)}"):
        run_cell(controller=ref(name), **world)
    frame = cells_frame([make_cell(controller="replicaset", **world),
                         make_cell(controller=ref(name), **world)])
    with pytest.raises(DecisionError, match=f"^{re.escape(expected)}") as batch:
        simulate(frame)
    assert batch.value.row == 1


class FirstCall:
    """A kernel whose first call goes to ``first`` (given the kernel), every later one to
    the kernel itself: what numba's threads may do to a batch, played on its first run."""

    def __init__(self, kernel: Any, first: Any, calls: list[str]) -> None:
        self.kernel, self.first, self.calls = kernel, first, calls
        self.overloads, self.stats = kernel.overloads, kernel.stats  # as a dispatcher's

    def __call__(self, *args: Any) -> Any:
        self.calls.append("first" if not self.calls else "again")
        return self.first(self.kernel, *args) if len(self.calls) == 1 else self.kernel(*args)


def scribbled(out: Any, columns: Any, mark: int) -> Any:
    """Columns of a kernel's ``out`` as a block its threads left: unrun, and garbage."""
    out[1:, columns] = 987_654
    out[0, columns] = mark
    return out


def count_half(kernel: Any, rows: Any, out: Any, *rest: Any) -> None:
    kernel(rows, out, *rest)
    scribbled(out, rows[: len(rows) // 2], UNRUN)


def world_half(kernel: Any, cparams: Any, rows: Any, out: Any, *rest: Any) -> None:
    kernel(cparams, rows, out, *rest)
    scribbled(out, rows[: len(rows) // 2], UNRUN)


def events_half(kernel: Any, *args: Any) -> Any:
    out = kernel(*args)
    return scribbled(out, slice(0, out.shape[1] // 2), UNRUN)


def quiet(kernel: Any, *args: Any) -> None:
    """A first run whose threads raised and said nothing: the rows stay as marked."""


def events_quiet(kernel: Any, *args: Any) -> Any:
    """The event kernel's (it makes ``out`` itself, every row marked: its fourth argument
    holds each cell's desired count)."""
    return np.full((event_kernel._N_OUT, len(args[3])), UNRUN)


#: For each kernel: its module, the compiled functions a batch's first run may go to, a
#: world that sends a cell there, the misbehaving controller and the built-in run there,
#: a first run that leaves half its rows unrun and one that raised unheard.
UNRUN_KERNELS: dict[str, tuple[Any, tuple[str, ...], dict[str, Any], str, str, Any, Any]] = {
    "count kernel": (count_kernel, ("_simulate", "_simulate@parallel"), {}, "LATE", "ledger",
                     count_half, quiet),
    "world kernel": (world_kernel, ("_simulate_world", "_simulate_world@parallel"),
                     {"G_spread": 10}, "LATE", "ledger", world_half, quiet),
    "event kernel": (event_kernel, ("_simulate_events",),
                     {"G": 2, "B": 1, "deaths": ((100, 2),), "initial": 8, "desired": 6},
                     "EVENT_LATE", "replicaset", events_half, events_quiet),
}


def first_call(monkeypatch: pytest.MonkeyPatch, kernel: str, first: Any) -> list[str]:
    """Give the first call of ``kernel``'s batch to ``first``; the calls made, in a list."""
    module, entries = UNRUN_KERNELS[kernel][:2]
    compiled = module._kernels  # (the kernels a batch runs on)
    calls: list[str] = []

    def patched(controller: Any) -> dict[str, Any]:
        kernels = dict(compiled(controller))
        for entry in entries:
            kernels[entry] = FirstCall(kernels[entry], first, calls)
        return kernels

    monkeypatch.setattr(module, "_kernels", patched)
    return calls


@pytest.mark.parametrize("kernel", UNRUN_KERNELS)
def test_rows_numba_threads_leave_unrun_run_again_alone(
        kernel: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A block stopped in one of numba's threads leaves its rows unwritten, an exception
    not always carried back: those rows run again alone, every figure as if nothing had
    happened, and a controller's exception is raised there, the same line as ever."""
    place, name, built_in, half, unheard = UNRUN_KERNELS[kernel][2:]
    cells = [make_cell(controller=built_in, **{**place, "G": g, "U": u, "duration": 400})
             for g in range(0, 40, 4) for u in (5, 10, 15, 20)]
    expected = simulate(cells_frame(cells))
    with monkeypatch.context() as patch:
        calls = first_call(patch, kernel, half)
        assert_frame_equal(simulate(cells_frame(cells)), expected)
    assert calls[0] == "first"
    late = [make_cell(controller=ref(name), duration=d, **place) for d in (299, 400)]
    calls = first_call(monkeypatch, kernel, unheard)
    with pytest.raises(DecisionError) as refused:
        simulate(cells_frame(late))
    assert calls[0] == "first"
    assert (line(refused), refused.value.row) == (
        f"controller '{name.lower()}': decide raised ValueError: boom at t = 300", 1)


@pytest.mark.parametrize("name", ["BIG_RANK", "NEGATIVE_RANK"])
@pytest.mark.parametrize("world", [{}, {"G_spread": 5}], ids=["plain", "spread"])
def test_a_rank_of_2_to_the_62_is_refused_on_every_path(
        name: str, world: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    key = "4611686018427387904" if name == "BIG_RANK" else "-4611686018427387904"
    expected = (f"controller '{name.lower()}': rank returned {key} at t = 0, not an integer "
                "below 2^62 in magnitude")
    cell = {"controller": ref(name), "initial": 12, "desired": 6, **world}
    with pytest.raises(DecisionError, match=f"^{re.escape(expected)}$"):
        run_reference(make_cell(**cell))
    with pytest.raises(DecisionError, match=f"^{re.escape(expected)}$"):
        run_cell(**cell)
    with pytest.raises(DecisionError, match=f"^{re.escape(expected)}; the cell: "):
        simulate(cells_frame([make_cell(**cell)]))
    flags = [f"--{k}={v}" for k, v in cell.items() if k != "G_spread"]
    assert main(["run", *flags, *(["--G_spread", "5"] if world else [])]) == 2
    assert errors(capsys.readouterr().err) == [f"error: reconsim run: {expected}"]


def test_a_hooks_type_is_checked_for_every_kernel_not_one_case() -> None:
    """numba types the result of every return of decide: a float anywhere is refused,
    even in a cell whose rounds never reach that return."""
    from reconsim.model.kernels.specialise import checked

    controller = registry.resolve(ref("FLOATY"))
    with pytest.raises(DecisionError, match=r"decide returns float64 as numba compiles it, "
                       "not an integer"):
        checked(controller)
    checked(registry.resolve(ref("LATE")))  # an integer: nothing to say


def test_run_check_finds_a_controller_numba_compiles_to_other_decisions(
        capsys: pytest.CaptureFixture[str]) -> None:
    flags = ["--controller", ref("STRINGLY"), "--G", "20", "--U", "10", "--B", "5"]
    assert main(["run", *flags, "--json"]) == 0  # unchecked: the kernel's figures
    capsys.readouterr()
    assert main(["run", *flags, "--check"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("differs: controller 'stringly': the kernels and the reference "
                          "model differ on work (kernel ")
    assert out.endswith(": reconsim run --controller userctl_refused:STRINGLY --desired 6 "
                        "--U 10 --G 20 --B 5 --duration 900 --deaths 300:2\n")
    assert main(["run", "--controller", "ledger", "--G", "20", "--check", "--json"]) == 0


SPEC = """
name = "refused"
import_path = ["{folder}"]

[grid]
controller = ["ledger", "{ref}"]
G = [0, 10, 20, 30]
U = [5, 10, 15]
B = 5
desired = 6
duration = 400
"""


@pytest.mark.parametrize(("name", "expected"), [
    ("STRINGLY", "error: reconsim sweep: controller 'stringly': the kernels and the "
                 "reference model differ on "),
    ("FLOATY", "error: reconsim sweep: " + EXPECTED["FLOATY"] + "; the cell: reconsim run "
               "--controller userctl_refused:FLOATY "),
])
def test_a_sweep_checks_a_users_controller_before_it_writes_anything(
        tmp_path: Path, name: str, expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    registry.resolve(ref(name))
    folder = Path(sys.modules["userctl_refused"].__file__ or "").parent
    spec = tmp_path / "refused.toml"
    spec.write_text(SPEC.format(folder=folder, ref=ref(name)), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out), "--jobs", "1"]) == 2
    (err,) = errors(capsys.readouterr().err)
    assert err.startswith(expected)
    assert not out.exists()
    if name == "STRINGLY":  # --no-check runs it, and the kernels' figures are what they are
        assert main(["sweep", str(spec), "--out", str(out), "--jobs", "1", "--no-check"]) == 0
        table = pl.read_parquet(out / "data")
        assert table.filter(controller="stringly").height == 12


def test_the_check_draws_its_cells_from_the_users_block_alone(tmp_path: Path) -> None:
    from reconsim import load_spec
    from reconsim.sweep.runner import CHECK_CELLS, check_controllers

    registry.resolve(ref("LATE"))
    folder = Path(sys.modules["userctl_refused"].__file__ or "").parent
    spec_path = tmp_path / "ok.toml"
    spec_path.write_text(SPEC.format(folder=folder, ref=ref("LATE")).replace(
        "duration = 400", "duration = 299"), encoding="utf-8")
    spec = load_spec(spec_path)
    assert check_controllers(spec) == CHECK_CELLS  # 12 cells of its own, 8 drawn
    assert check_controllers(spec, cells=50) == 12  # never more than the block holds
