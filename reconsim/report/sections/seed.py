"""Seed 001's own tables: the model's figures beside the published ones, when the sweep
holds their cells, every mismatch marked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import polars as pl
from markupsafe import Markup

from reconsim.model.params import PARAM_NAMES, applies
from reconsim.model.studies.seed001 import (
    BASE,
    G_SCAN_PUBLISHED,
    G_SCAN_U,
    TABLE_G,
    TABLE_PUBLISHED,
    TABLE_U,
    U_SCAN_G,
    U_SCAN_PUBLISHED,
)
from reconsim.report.blocks import macro
from reconsim.report.charts import Figure
from reconsim.report.load import SEED_DEATHS, Sweep
from reconsim.report.query import EXAMPLES, Table, collect_all, flat_value, lazy
from reconsim.report.section import Context, Section
from reconsim.web.html import TableCell, plain

#: The figures each experiment publishes, in the seed's column order.
G_SCAN_FIGURES: Final = ("work_per_round", "created", "unneeded", "delete_commands", "deleted",
                         "overshoot", "stable_at")
U_SCAN_FIGURES: Final = ("law_overshoot", "overshoot", "unneeded", "deleted", "work_per_round")
TABLE_FIGURES: Final = ("overshoot",)


def published_rows() -> list[dict[str, Any]]:
    """Seed 001's published figures, one row per (experiment, controller, G, U), each with the
    figures that experiment publishes, as :mod:`reconsim.model.studies.seed001` holds them."""
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


@dataclass(frozen=True, slots=True)
class Mismatch:
    """One figure of a cell that differs from the published one."""

    published: Any
    measured: Any


@dataclass(frozen=True, slots=True)
class Disagreement:
    """A sweep cell that disagrees with a published row, figure by figure."""

    experiment: str
    controller: str
    G: int
    U: int
    schedule: str
    figures: dict[str, Mismatch]


@dataclass(frozen=True, slots=True)
class SeedRow:
    """One published row beside the model's figures for it (``cells`` sweep cells match)."""

    controller: str
    G: int
    U: int
    cells: int
    published: dict[str, Any]
    model: dict[str, Any]
    mismatched: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ScanTable:
    """One of seed 001's scans (of G or of U), row by row."""

    experiment: str
    setting: str
    figures: tuple[str, ...]
    rows: tuple[SeedRow, ...]
    found: int


@dataclass(frozen=True, slots=True)
class GridTable:
    """Seed 001's overshoot table: one row per G, one column per U."""

    experiment: str
    setting: str
    figures: tuple[str, ...]
    G: tuple[int, ...]
    U: tuple[int, ...]
    rows: tuple[SeedRow, ...]
    found: int


@dataclass(frozen=True, slots=True)
class SeedSummary:
    """The sweep's cells in seed 001's setting against the published figures
    (``summary.json``'s ``seed001``)."""

    population: str
    schedules: tuple[str, ...]
    published: int
    found: int
    compared: int
    agree: int
    disagree: int
    disagreements: tuple[Disagreement, ...]
    tables: tuple[ScanTable | GridTable, ...]


def seed_verdict(table: Table) -> SeedSummary:
    """The sweep's cells in seed 001's setting, each compared with every figure the seed
    publishes for it, and the three tables with the model's figures beside the published.

    Only the cells at a published (G, U) are read, in the table's order."""
    query = lazy(table)
    columns = query.collect_schema().names()
    seedlike = query.filter(pl.any_horizontal(
        in_seed_setting(c, columns) for c in G_SCAN_PUBLISHED))
    published = published_rows()
    gs, us = sorted({p["G"] for p in published}), sorted({p["U"] for p in published})
    names_q = seedlike.select(pl.col("schedule").unique())
    # A filter keeps the table's order (a row index, to sort by, cost 20 times the query).
    rows_q = seedlike.filter(pl.col("G").is_in(gs), pl.col("U").is_in(us))
    names_frame, rows = collect_all([names_q, rows_q])
    names = sorted(names_frame["schedule"].to_list())
    by_key: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
    for row in rows.iter_rows(named=True):
        by_key.setdefault((row["controller"], row["G"], row["U"]), []).append(row)
    found = compared = agree = 0
    disagreements: list[Disagreement] = []
    tables: dict[str, list[SeedRow]] = {}
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
                    wrong[figure] = Mismatch(published=expected, measured=shown)
            mismatched |= set(wrong)
            agree += not wrong
            if wrong and len(disagreements) < 2 * EXAMPLES:
                disagreements.append(Disagreement(
                    experiment=pub["experiment"], controller=pub["controller"],
                    G=pub["G"], U=pub["U"], schedule=cell["schedule"], figures=wrong))
        tables.setdefault(pub["experiment"], []).append(SeedRow(
            controller=pub["controller"], G=pub["G"], U=pub["U"], cells=len(cells),
            published=pub["figures"],
            model={f: _model([_shown(f, c[f]) for c in cells]) for f in pub["figures"]},
            mismatched=tuple(f for f in pub["figures"] if f in mismatched)))

    def found_in(experiment: str) -> int:
        """How many of an experiment's published rows the sweep has cells for."""
        return sum(r.cells > 0 for r in tables[experiment])

    return SeedSummary(
        population="cells in seed 001's setting (deaths 300:2, B = 5, desired = 6, duration "
                   "900, the model's defaults otherwise; any ledger_base) at a published "
                   "controller, G and U",
        schedules=tuple(names),
        published=len(published),
        found=found,
        compared=compared,
        agree=agree,
        disagree=compared - agree,
        disagreements=tuple(disagreements),
        tables=(
            ScanTable("G scan", f"U = {G_SCAN_U} s, both controllers", G_SCAN_FIGURES,
                      tuple(tables["G scan"]), found_in("G scan")),
            ScanTable("U scan", f"G = {U_SCAN_G} s, ledger controller", U_SCAN_FIGURES,
                      tuple(tables["U scan"]), found_in("U scan")),
            GridTable("overshoot table", "ledger controller, row G, column U", TABLE_FIGURES,
                      tuple(TABLE_G), tuple(TABLE_U), tuple(tables["overshoot table"]),
                      found_in("overshoot table")),
        ),
    )


FIGURE_HEADS: Final = {"work_per_round": "work/round", "created": "created",
                       "unneeded": "unneeded", "delete_commands": "delete cmds",
                       "deleted": "deleted", "overshoot": "overshoot", "stable_at": "stable_at",
                       "law_overshoot": "predicted"}


def _model_cell(row: SeedRow, figure: str) -> TableCell:
    """The model's figure for a published row: absent, one value, or several; marked when
    it differs from the published one."""
    value = row.model[figure]
    if row.cells == 0:
        return TableCell("—", "absent", "— (not in the sweep)")
    if isinstance(value, list):
        text = " / ".join(plain(v) for v in value)
        return TableCell(None, "bad" if figure in row.mismatched else "", text)
    return TableCell(value, "bad" if figure in row.mismatched else "",
                     plain(value) if isinstance(value, str) or value is None else None)


def render(seed: SeedSummary, context: Context, figures: Mapping[str, Figure]) -> Markup:
    """Seed 001's published tables beside the model's figures (``templates/seed.html``)."""
    return macro("seed.html", "body")(seed, FIGURE_HEADS, _model_cell)


def summarize(sweep: Sweep) -> SeedSummary:
    """The published cells the sweep holds and how many agree (``summary.json``'s ``seed001``)."""
    return seed_verdict(sweep.table)


def glance(seed: SeedSummary) -> Markup:
    """How many of seed 001's cells agree, in one sentence."""
    return macro("seed.html", "glance")(seed)


SECTION = Section("seed001", summarize, render, glance=glance, anchor="seed",
                  title="Seed 001's tables", checks="seed 001's own tables")
