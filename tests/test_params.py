"""The cell declaration: defaults, validation, and what derives from it."""

from __future__ import annotations

import dataclasses
import inspect
import re
import subprocess
import sys
from collections.abc import Callable

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconsim import METRIC_NAMES, PARAM_NAMES, Cell
from reconsim.cli import build_parser
from reconsim.model import params
from reconsim.model.params import BY_NAME, PARAMS, Cap, Int, table_columns
from reconsim.model.simulate import cells_frame, kernel_inputs, simulate
from reconsim.sweep.grid import PARAM_COLUMNS


def test_defaults_are_seed_001s_setting() -> None:
    assert Cell() == Cell(controller="ledger", desired=6, U=15, G=0, B=5, duration=900,
                          deaths=((300, 2),), ledger_base=20)


def test_cells_are_frozen_and_keyword_only() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Cell().G = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        Cell("ledger")  # type: ignore[misc]


def test_deaths_are_normalised_to_tuples() -> None:
    assert Cell(deaths=[[10, 1], {"at": 20, "count": 2}]).deaths == ((10, 1), (20, 2))


@pytest.mark.parametrize("deaths", ["300:2", 5, [(1,)], [(1, 2.5)], [(True, 1)]])
def test_malformed_deaths_are_rejected(deaths: object) -> None:
    with pytest.raises(ValueError, match="deaths"):
        Cell(deaths=deaths)  # type: ignore[arg-type]


def test_run_flags_derive_from_the_declaration() -> None:
    run = build_parser()._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr]
    flags = {a.dest for a in run._actions} - {"help", "json"}
    assert flags == set(PARAM_NAMES)


def test_metric_names_are_the_published_contract() -> None:
    assert METRIC_NAMES == (
        "rounds", "work", "work_per_round", "created", "unneeded", "delete_commands", "deleted",
        "overshoot", "stable_at", "reads", "reads_per_round", "excess_copy_seconds",
        "missing_copy_seconds",
    )


def test_importing_parameters_and_grid_does_not_load_numba() -> None:
    code = ("import sys, reconsim.model.params, reconsim.sweep.grid, reconsim.sweep.spec, "
            "reconsim.sweep.store; "
            "assert 'numba' not in sys.modules, sorted(m for m in sys.modules if 'numba' in m)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr


def test_table_columns_keep_the_published_order() -> None:
    # README, "The table": the parameter columns in the order they have always been written.
    assert PARAM_COLUMNS == ("controller", "G", "U", "B", "desired", "duration", "ledger_base",
                             "schedule", "deaths", "observe", "max_per_round", "gain", "ttl",
                             "restart_at")


def test_every_declared_parameter_reaches_the_table() -> None:
    assert sorted(PARAM_COLUMNS) == sorted([*PARAM_NAMES, "schedule"])
    assert len(set(PARAM_COLUMNS)) == len(PARAM_COLUMNS)
    # A new field, whatever its kind, lands after the published columns, in declaration order.
    extra = (dataclasses.replace(BY_NAME["G"], name="R"),
             dataclasses.replace(BY_NAME["deaths"], name="births"),
             dataclasses.replace(BY_NAME["observe"], name="ledger_kind"))
    assert table_columns((*PARAMS, *extra)) == (*PARAM_COLUMNS, "R", "schedule", "births",
                                                "ledger_kind")


def test_every_parameter_reaches_the_kernel_and_the_command_line() -> None:
    from reconsim.model.kernel import simulate_arrays

    keywords = set(inspect.signature(simulate_arrays).parameters) - {"parallel"}
    assert set(kernel_inputs(cells_frame([Cell()]))) == keywords
    assert {k.split("_offsets")[0] for k in keywords} >= set(PARAM_NAMES)


def test_kernel_and_reference_share_one_damped() -> None:
    from reconsim.model import kernel, reference

    assert kernel._damped.py_func is params.damped
    assert reference.damped is params.damped


@settings(deadline=None)
@given(st.one_of(
    st.floats(-0.5, 1.5, allow_nan=False),
    st.integers(-2, 1002).map(lambda k: k / 1000),
    st.tuples(st.integers(0, 1001), st.sampled_from([1e-13, -1e-13, 2e-9, -2e-9, 1e-7]))
    .map(lambda kd: kd[0] / 1000 + kd[1]),
))
def test_gain_value_and_column_checks_agree(gain: float) -> None:
    frame = cells_frame([Cell()]).with_columns(gain=pl.lit(gain, pl.Float64))
    by_value, by_column = error(lambda: Cell(gain=gain)), error(lambda: simulate(frame))
    assert by_value == by_column
    assert by_value in (None, f"gain must be a multiple of 0.001 in (0, 1], got {gain!r}")


def error(call: Callable[[], object]) -> str | None:
    """The message of the ValueError ``call`` raises, or None."""
    try:
        call()
    except ValueError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("kind", [Int(0, 10), Cap(1, 10)])
def test_int_kinds_with_a_maximum(kind: Int) -> None:
    assert kind.check("x", 10) == 10
    extra = " or 'unlimited'" if isinstance(kind, Cap) else ""
    with pytest.raises(ValueError, match=re.escape(f"x must be an integer in [{kind.minimum}, "
                                                   f"10]{extra}, got 11")):
        kind.check("x", 11)
    row = pl.DataFrame({"x": [3, 11, None]}).select(kind.stats("x")).row(0, named=True)
    extra = " or null (unlimited)" if isinstance(kind, Cap) else ""
    with pytest.raises(ValueError, match=re.escape(f"x must be an integer in [{kind.minimum}, "
                                                   f"10]{extra}, got 11")):
        kind.check_stats("x", row, pl.Series())
