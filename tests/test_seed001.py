"""Seed 001's published figures, every one, from both the kernel and the reference model."""

from __future__ import annotations

import dataclasses

import pytest

from reconsim import Cell, run_cell, run_reference
from reconsim.cli import main
from reconsim.model.studies import seed001


@pytest.fixture(params=["kernel", "reference"])
def model(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    if request.param == "kernel":
        return lambda cell: run_cell(**{f: getattr(cell, f) for f in cell.__dataclass_fields__})
    return run_reference


def cell(controller: str, G: int, U: int) -> Cell:
    return dataclasses.replace(seed001.BASE, controller=controller, G=G, U=U)


@pytest.mark.parametrize(("controller", "row"), [
    (c, row) for c, rows in seed001.G_SCAN_PUBLISHED.items() for row in rows
])
def test_g_scan_rows(model, controller: str, row: tuple) -> None:  # type: ignore[no-untyped-def]
    G, work_round, created, unneeded, commands, deleted, overshoot, stable = row
    m = model(cell(controller, G, seed001.G_SCAN_U))
    assert m["rounds"] == 61
    assert f"{m['work_per_round']:.2f}" == work_round
    assert (m["created"], m["unneeded"], m["delete_commands"], m["deleted"],
            m["overshoot"], m["stable_at"]) == (created, unneeded, commands, deleted,
                                                overshoot, stable)


@pytest.mark.parametrize("row", seed001.U_SCAN_PUBLISHED)
def test_u_scan_rows(model, row: tuple) -> None:  # type: ignore[no-untyped-def]
    U, blind, predicted, measured, unneeded, deleted, work_round = row
    m = model(cell("ledger", seed001.U_SCAN_G, U))
    assert blind == -(-(seed001.U_SCAN_G + 5) // U)
    assert seed001.law_overshoot(6, seed001.U_SCAN_G, U, 5) == predicted
    assert (m["overshoot"], m["unneeded"], m["deleted"]) == (measured, unneeded, deleted)
    assert f"{m['work_per_round']:.2f}" == work_round


def test_all_56_cells_of_the_overshoot_table(model) -> None:  # type: ignore[no-untyped-def]
    measured = tuple(
        tuple(model(cell("ledger", G, U))["overshoot"] for U in seed001.TABLE_U)
        for G in seed001.TABLE_G
    )
    assert sum(len(r) for r in measured) == 56
    assert measured == seed001.TABLE_PUBLISHED


def test_settled_service_reads_26_entries_per_round() -> None:
    # Seed 001 counts a verification round's read at 26 entries: 6 own + 20 of others.
    m = run_cell(G=0, U=15, deaths=(), duration=900)
    # Round 0 reads the 20 foreign entries and an empty ledger; the 60 rounds after it read 26.
    assert m["rounds"] == 61
    assert m["reads"] == 20 + 60 * 26


def test_compute_matches_published_tables() -> None:
    tables = seed001.compute()
    assert tables.table.height == 56
    assert (tables.table["overshoot"] == tables.table["law_overshoot"]).all()
    assert tables.u_scan["overshoot"].to_list() == [r[3] for r in seed001.U_SCAN_PUBLISHED]


def test_seed_command_prints_model_tables(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["seed"]) == 0
    out = capsys.readouterr().out
    assert "56 cells, 0 mismatched" in out
    assert "  60        2.75       40        32          128       32         24        495" in out
    assert " 90  108   54   36   24   18   12    6    6" in out
