"""Seed 001's three published tables beside the model's figures for the same cells.

A sweep cell matches a published row when it runs seed 001's setting (see
:func:`in_seed_setting`) at the row's controller, G and U. Every matching cell is
compared with every figure the row publishes; the tables set the published figures
beside the distinct values the matching cells give.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import polars as pl

from reconsim.model.params import PARAM_NAMES, applies
from reconsim.model.seed001 import (
    BASE,
    G_SCAN_PUBLISHED,
    G_SCAN_U,
    TABLE_G,
    TABLE_PUBLISHED,
    TABLE_U,
    U_SCAN_G,
    U_SCAN_PUBLISHED,
)
from reconsim.report.data import EXAMPLES, SEED_DEATHS, flat_value

#: The figures each experiment publishes, in the seed's column order.
G_SCAN_FIGURES: Final = ("work_per_round", "created", "unneeded", "delete_commands", "deleted",
                         "overshoot", "stable_at")
U_SCAN_FIGURES: Final = ("law_overshoot", "overshoot", "unneeded", "deleted", "work_per_round")
TABLE_FIGURES: Final = ("overshoot",)


def published_rows() -> list[dict[str, Any]]:
    """Seed 001's published figures, one row per (experiment, controller, G, U), each with the
    figures that experiment publishes, as :mod:`reconsim.model.seed001` holds them."""
    rows: list[dict[str, Any]] = []
    for controller, g_rows in G_SCAN_PUBLISHED.items():
        for G, *figures in g_rows:
            rows.append({"experiment": "G scan", "controller": controller, "G": G, "U": G_SCAN_U,
                         "figures": dict(zip(G_SCAN_FIGURES, figures, strict=True))})
    for U, _, *figures in U_SCAN_PUBLISHED:
        rows.append({"experiment": "U scan", "controller": "ledger", "G": U_SCAN_G, "U": U,
                     "figures": dict(zip(U_SCAN_FIGURES, figures, strict=True))})
    for G, table_row in zip(TABLE_G, TABLE_PUBLISHED, strict=True):
        for U, overshoot in zip(TABLE_U, table_row, strict=True):
            rows.append({"experiment": "overshoot table", "controller": "ledger", "G": G,
                         "U": U, "figures": {"overshoot": overshoot}})
    return rows


def in_seed_setting(controller: str, columns: Sequence[str]) -> pl.Expr:
    """Whether a cell of ``controller`` runs in seed 001's setting: deaths (300, 2), and
    every parameter that applies to the controller at seed 001's value, except G and U
    (the scanned ones) and ledger_base (the seed publishes no reads)."""
    conditions = [pl.col("controller") == controller, pl.col(SEED_DEATHS)]
    for name in PARAM_NAMES:
        if name in ("controller", "G", "U", "ledger_base", "deaths") or name not in columns:
            continue
        if applies(name, controller):
            conditions.append(pl.col(name).eq_missing(flat_value(getattr(BASE, name))))
    return pl.all_horizontal(conditions)


def _shown(figure: str, value: Any) -> Any:
    """A model figure as the seed prints it (work per round to two decimals)."""
    return f"{value:.2f}" if figure == "work_per_round" and value is not None else value


def _model(values: list[Any]) -> Any:
    """The distinct values matching cells give: one value, a sorted list, or None if none."""
    distinct = sorted(set(values), key=lambda v: (v is None, str(v)))
    if not distinct:
        return None
    return distinct[0] if len(distinct) == 1 else distinct


def seed_verdict(table: pl.DataFrame) -> dict[str, Any]:
    """The sweep's cells in seed 001's setting, each compared with every figure the seed
    publishes for it, and the three tables with the model's figures beside the published."""
    seedlike = table.filter(pl.any_horizontal(
        in_seed_setting(c, table.columns) for c in G_SCAN_PUBLISHED))
    names = sorted(seedlike["schedule"].unique().to_list())
    by_key: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
    for row in seedlike.iter_rows(named=True):
        by_key.setdefault((row["controller"], row["G"], row["U"]), []).append(row)
    published = published_rows()
    found = compared = agree = 0
    disagreements: list[dict[str, Any]] = []
    tables: dict[str, list[dict[str, Any]]] = {}
    for pub in published:
        cells = by_key.get((pub["controller"], pub["G"], pub["U"]), [])
        found += bool(cells)
        mismatched: set[str] = set()
        for cell in cells:
            compared += 1
            wrong = {}
            for figure, expected in pub["figures"].items():
                shown = _shown(figure, cell[figure])
                if shown != expected:
                    wrong[figure] = {"published": expected, "measured": shown}
            mismatched |= set(wrong)
            agree += not wrong
            if wrong and len(disagreements) < 2 * EXAMPLES:
                disagreements.append({
                    "experiment": pub["experiment"], "controller": pub["controller"],
                    "G": pub["G"], "U": pub["U"], "schedule": cell["schedule"],
                    "figures": wrong,
                })
        tables.setdefault(pub["experiment"], []).append({
            "controller": pub["controller"], "G": pub["G"], "U": pub["U"], "cells": len(cells),
            "published": pub["figures"],
            "model": {f: _model([_shown(f, c[f]) for c in cells]) for f in pub["figures"]},
            "mismatched": [f for f in pub["figures"] if f in mismatched],
        })
    return {
        "population": "cells in seed 001's setting (deaths 300:2, B = 5, desired = 6, duration "
                      "900, the model's defaults otherwise; any ledger_base) at a published "
                      "controller, G and U",
        "schedules": names,
        "published": len(published),
        "found": found,
        "compared": compared,
        "agree": agree,
        "disagree": compared - agree,
        "disagreements": disagreements,
        "tables": [
            {"experiment": "G scan", "setting": f"U = {G_SCAN_U} s, both controllers",
             "figures": list(G_SCAN_FIGURES), "rows": tables["G scan"],
             "found": sum(r["cells"] > 0 for r in tables["G scan"])},
            {"experiment": "U scan", "setting": f"G = {U_SCAN_G} s, ledger controller",
             "figures": list(U_SCAN_FIGURES), "rows": tables["U scan"],
             "found": sum(r["cells"] > 0 for r in tables["U scan"])},
            {"experiment": "overshoot table", "setting": "ledger controller, row G, column U",
             "figures": list(TABLE_FIGURES), "G": list(TABLE_G), "U": list(TABLE_U),
             "rows": tables["overshoot table"],
             "found": sum(r["cells"] > 0 for r in tables["overshoot table"])},
        ],
    }
