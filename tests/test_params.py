"""The cell declaration: defaults, validation, and what derives from it."""

from __future__ import annotations

import dataclasses
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
from reconsim.model.kinds import Cap, Int
from reconsim.model.params import BY_NAME, PARAMS, WORLD_OWN, table_columns
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
    flags = {a.dest for a in run._actions} - {"help", "json", "plot", "check", "window",
                                               "title", "sweep", "cell"}
    assert flags == set(PARAM_NAMES)


def test_metric_names_are_the_published_contract() -> None:
    assert METRIC_NAMES == (
        "rounds", "work", "work_per_round", "created", "unneeded", "delete_commands", "deleted",
        "overshoot", "stable_at", "reads", "reads_per_round", "excess_copy_seconds",
        "missing_copy_seconds", "create_commands", "failed_creates",
        "overshoot_after", "missing_after", "settle_after",
        # the Deployment world's, null in the others
        "max_pods", "max_api_pods", "max_live", "peak_surge", "surge_violation_seconds",
        "api_surge_violation_seconds", "min_available", "min_available_after_rollout",
        "unavailable_seconds", "unavailable_seconds_after_rollout", "rollout_done_at",
        "status_complete_at", "complete_at_end", "rs_syncs", "deploy_syncs", "final_rs_count",
        "surge_budget", "unavailable_budget",
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
    # The richer world's parameters follow them, in declaration order.
    assert PARAM_COLUMNS == ("controller", "G", "U", "B", "desired", "duration", "ledger_base",
                             "schedule", "deaths", "observe", "max_per_round", "gain", "ttl",
                             "restart_at", "B_spread", "G_spread", "B_delays_name",
                             "B_delays", "G_delays_name", "G_delays", "U_jitter", "seed",
                             "delete_order", "grace", "lag", "create_faults", "fail_rate",
                             "lost_rate", "trigger", "slow_start", "log_scale_down",
                             "initial", "scale", "max_surge", "max_unavailable",
                             "min_ready", "rollout")


def test_every_declared_parameter_reaches_the_table() -> None:
    assert sorted(PARAM_COLUMNS) == sorted([*PARAM_NAMES, "schedule", "B_delays_name",
                                            "G_delays_name"])
    assert len(set(PARAM_COLUMNS)) == len(PARAM_COLUMNS)
    # A new field, whatever its kind, lands after the published columns, in declaration order.
    extra = (dataclasses.replace(BY_NAME["G"], name="R"),
             dataclasses.replace(BY_NAME["deaths"], name="births"),
             dataclasses.replace(BY_NAME["observe"], name="ledger_kind"))
    assert table_columns((*PARAMS, *extra)) == (*PARAM_COLUMNS, "R", "schedule", "births",
                                                "ledger_kind")


def test_every_parameter_reaches_the_kernel_and_the_command_line() -> None:
    from reconsim.model.controllers import registry
    from reconsim.model.kernels.arrays import controller_params
    from reconsim.model.kernels.count import COUNT_INPUTS
    from reconsim.model.kernels.world import WORLD_INPUTS

    arrays = kernel_inputs(cells_frame([Cell()]))
    assert controller_params(registry.built_in()) == ("ttl", "log_scale_down")
    assert set(arrays) == {*WORLD_INPUTS, "ttl", "log_scale_down"}
    # (every parameter but a world of its own's, which that world reads itself)
    assert {k.split("_offsets")[0] for k in arrays} >= set(PARAM_NAMES) - set(WORLD_OWN)
    assert not set(arrays) & set(WORLD_OWN)
    # The count kernel takes seed 001's world: every parameter but the richer world's.
    keywords = {*COUNT_INPUTS, "ttl", "log_scale_down"}
    assert set(kernel_inputs(cells_frame([Cell()]), count=True)) == keywords
    assert {k.split("_offsets")[0] for k in keywords} == {
        *PARAM_NAMES[:PARAM_NAMES.index("B_spread")], "log_scale_down", "initial",
        "deaths_at", "deaths_count", "scale", "scale_at", "scale_desired"}


def test_kernel_and_reference_share_one_damped() -> None:
    from reconsim.model import reference
    from reconsim.model.kernels import count as kernel

    assert kernel.damped_int.py_func is params.damped
    from reconsim.model.kernels import world as kernel_world

    assert kernel_world.damped_int is kernel.damped_int
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


def test_world_defaults_are_seed_001s_world() -> None:
    cell = Cell()
    assert (cell.B_spread, cell.G_spread, cell.U_jitter, cell.seed, cell.delete_order,
            cell.grace, cell.lag, cell.create_faults, cell.fail_rate, cell.lost_rate,
            cell.trigger, cell.slow_start) == (0, 0, 0, 0, "oldest", 0, (), (), 0.0, 0.0,
                                               "periodic", False)


def test_schedules_are_normalised_to_tuples() -> None:
    cell = Cell(lag=[[10, 20, 5], {"from": 30, "to": 40, "extra": 1}],
                create_faults=[[0, 2, "lost"], {"at": 5, "count": 1, "kind": "fail"}])
    assert cell.lag == ((10, 20, 5), (30, 40, 1))
    assert cell.create_faults == ((0, 2, "lost"), (5, 1, "fail"))
    assert Cell(fail_rate=0.25, lost_rate=1).lost_rate == 1.0


@pytest.mark.parametrize(("field", "value", "message"), [
    ("B_spread", -1, "B_spread must be an integer in [0, 1000000], got -1"),
    ("G_spread", 1.5, "G_spread must be an integer in [0, 1000000], got 1.5"),
    ("U_jitter", -2, "U_jitter must be an integer in [0, 1000000], got -2"),
    ("seed", 2**31, "seed must be an integer in [0, 2147483647], got 2147483648"),
    ("seed", -1, "seed must be an integer in [0, 2147483647], got -1"),
    ("grace", -1, "grace must be an integer in [0, 1000000], got -1"),
    ("delete_order", "random", "delete_order must be one of oldest, newest; got 'random'"),
    ("trigger", "event", "trigger must be one of periodic, watch; got 'event'"),
    ("slow_start", 1, "slow_start must be true or false, got 1"),
    ("fail_rate", 0.0005, "fail_rate must be a multiple of 0.001 in [0, 1], got 0.0005"),
    ("lost_rate", -0.1, "lost_rate must be a multiple of 0.001 in [0, 1], got -0.1"),
    ("lag", [(5, 5, 1)], "lag window must have from < to, got (5, 5)"),
    ("lag", [(1, 5, 0)], "lag window extra must be an integer in [1, 1000000], got 0"),
    ("lag", [(-1, 5, 2)], "lag window from must be an integer in [0, 1000000], got -1"),
    ("lag", [(1, 5)], "lag window must be (from, to, extra), got (1, 5)"),
    ("lag", "1:5:2", "lag must be a list of (from, to, extra) records"),
    ("create_faults", [(0, 1, "crash")], "create_faults event kind must be one of fail, lost"),
    ("create_faults", [(0, -1, "fail")],
     "create_faults event count must be an integer in [0, 1000000]"),
])
def test_bad_world_values_are_named(field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Cell(**{field: value})  # type: ignore[arg-type]


@pytest.mark.parametrize(("field", "value", "message"), [
    ("grace", 10**6 + 1, "grace must be an integer in [0, 1000000], got 1000001"),
    ("lag", [(0, 10**6 + 1, 1)], "lag window to must be an integer in [0, 1000000]"),
    ("create_faults", [(0, 10**6 + 1, "fail")],
     "create_faults event count must be an integer in [0, 1000000], got 1000001"),
    ("lag", [(t, t + 1, 1) for t in range(10**4 + 1)],
     "lag: 10001 windows, more than the 10000 a cell may hold"),
])
def test_world_values_have_bounds(field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Cell(**{field: value})  # type: ignore[arg-type]


def test_a_frame_with_too_many_lag_windows_is_refused() -> None:
    windows = [{"from": t, "to": t + 1, "extra": 1} for t in range(10**4 + 1)]
    frame = cells_frame([Cell()]).with_columns(
        pl.Series("lag", [windows], dtype=BY_NAME["lag"].kind.dtype))
    with pytest.raises(ValueError, match=re.escape(
            "lag: 10001 windows, more than the 10000 a cell may hold")):
        simulate(frame)


def test_every_default_is_a_checked_value() -> None:
    """A Cell skips the check of a field left at its default: each default must be what
    its check returns for it, of the same type."""
    from reconsim.model.params import PARAMS

    for p in PARAMS:
        checked = p.kind.check(p.name, p.default)
        assert checked == p.default, p.name
        assert type(checked) is type(p.default), p.name
