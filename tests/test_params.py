"""The cell declaration: defaults, validation, and what derives from it."""

from __future__ import annotations

import dataclasses

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
