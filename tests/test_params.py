"""The cell declaration: defaults, validation, and what derives from it."""

from __future__ import annotations

import dataclasses
import re

import pytest

from reconsim import METRIC_NAMES, PARAM_NAMES, Cell
from reconsim.cli import build_parser


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
        "missing_copy_seconds", "create_commands", "failed_creates",
    )


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
    ("B_spread", -1, "B_spread must be an integer >= 0, got -1"),
    ("G_spread", 1.5, "G_spread must be an integer >= 0, got 1.5"),
    ("U_jitter", -2, "U_jitter must be an integer >= 0, got -2"),
    ("seed", 2**31, "seed must be an integer <= 2147483647, got 2147483648"),
    ("seed", -1, "seed must be an integer >= 0, got -1"),
    ("grace", -1, "grace must be an integer >= 0, got -1"),
    ("delete_order", "random", "delete_order must be one of oldest, newest; got 'random'"),
    ("trigger", "event", "trigger must be one of periodic, watch; got 'event'"),
    ("slow_start", 1, "slow_start must be true or false, got 1"),
    ("fail_rate", 0.0005, "fail_rate must be a multiple of 0.001 in [0, 1], got 0.0005"),
    ("lost_rate", -0.1, "lost_rate must be a multiple of 0.001 in [0, 1], got -0.1"),
    ("lag", [(5, 5, 1)], "lag window must have from < to, got (5, 5)"),
    ("lag", [(1, 5, 0)], "lag window extra must be an integer >= 1, got 0"),
    ("lag", [(-1, 5, 2)], "lag window from must be an integer >= 0, got -1"),
    ("lag", [(1, 5)], "lag record must be (from, to, extra), got (1, 5)"),
    ("lag", "1:5:2", "lag must be a list of (from, to, extra) records"),
    ("create_faults", [(0, 1, "crash")], "create_faults event kind must be one of fail, lost"),
    ("create_faults", [(0, -1, "fail")], "create_faults event count must be an integer >= 0"),
])
def test_bad_world_values_are_named(field: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Cell(**{field: value})  # type: ignore[arg-type]
