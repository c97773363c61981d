"""Seed 001's experiments: their cells, their published figures, and the tables the model gives.

The published figures are data copied from the seed (its three tables) so that
tests and reports can set the model's output beside them; the tables printed by
``reconsim seed`` are always computed by the model.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Final

import polars as pl

from reconsim.model.laws import law_overshoot
from reconsim.model.params import Cell
from reconsim.model.simulate import cells_frame, simulate

#: The seed's fixed setting: six copies, 5 s startup, two deaths at second 300, 900 s run.
BASE: Final = Cell(desired=6, B=5, duration=900, deaths=((300, 2),))

#: The seed's measured report chain (13.53 s on average, 26.36 s at worst) as the sweeps
#: model it: a ledger delay uniform in 0 … 27 s (mean 13.5 s), B = 5 s fixed, and the
#: seed's loop period, 15 s.
MEASURED: Final[dict[str, int]] = {"G": 0, "G_spread": 27, "B": 5, "B_spread": 0,
                                   "U_jitter": 0}
MEASURED_U: Final = 15
#: The measured chain as ``sweeps/measured.toml`` writes it, a ledger delay table
#: (:mod:`reconsim.model.delays`): mean 13.53 s exactly, worst 27 s (26.36 s in whole
#: seconds, rounded up). The seed's claim reads any ledger delay table of that mean and
#: worst, with G = 0, B = 5 s fixed and no jitter, as its measured delays.
MEASURED_CHAIN_MEAN: Final = Fraction(1353, 100)
MEASURED_CHAIN_WORST: Final = 27

G_SCAN_U: Final = 15
G_SCAN_G: Final = (0, 5, 10, 20, 30, 60)
#: controller -> rows of (G, work/round, created, unneeded, delete commands, deleted,
#: overshoot, stable second or None), as published (work/round to two decimals).
GScanRow = tuple[int, str, int, int, int, int, int, int | None]
G_SCAN_PUBLISHED: Final[dict[str, tuple[GScanRow, ...]]] = {
    "ledger": (
        (0, "0.13", 8, 0, 0, 0, 0, 305),
        (5, "0.13", 8, 0, 0, 0, 0, 320),
        (10, "0.13", 8, 0, 0, 0, 0, 320),
        (20, "0.52", 16, 8, 16, 8, 6, 375),
        (30, "0.92", 24, 16, 32, 16, 12, 405),
        (60, "2.75", 40, 32, 128, 32, 24, 495),
    ),
    "intent": (
        (0, "0.13", 8, 0, 0, 0, 0, 305),
        (5, "0.13", 8, 0, 0, 0, 0, 320),
        (10, "0.13", 8, 0, 0, 0, 0, 320),
        (20, "0.13", 8, 0, 0, 0, 0, 335),
        (30, "0.13", 8, 0, 0, 0, 0, 335),
        (60, "0.13", 8, 0, 0, 0, 0, 365),
    ),
}

U_SCAN_G: Final = 30
#: Rows of (U, ceil((G+B)/U), predicted overshoot, measured overshoot, unneeded, deleted,
#: work/round), ledger controller, G = 30, as published.
U_SCAN_PUBLISHED: Final[tuple[tuple[int, int, int, int, int, int, str], ...]] = (
    (5, 7, 36, 36, 48, 48, "1.90"),
    (10, 4, 18, 18, 24, 24, "1.14"),
    (15, 3, 12, 12, 16, 16, "0.92"),
    (20, 2, 6, 6, 8, 8, "0.70"),
    (30, 2, 6, 6, 8, 8, "0.77"),
    (35, 1, 0, 0, 0, 0, "0.31"),
    (60, 1, 0, 0, 0, 0, "0.50"),
)

TABLE_G: Final = (0, 10, 20, 30, 45, 60, 90)
TABLE_U: Final = (5, 10, 15, 20, 30, 45, 60, 90)
#: Overshoot of the ledger controller, row G, column U, as published.
TABLE_PUBLISHED: Final[tuple[tuple[int, ...], ...]] = (
    (0, 0, 0, 0, 0, 0, 0, 0),
    (12, 6, 0, 0, 0, 0, 0, 0),
    (24, 12, 6, 6, 0, 0, 0, 0),
    (36, 18, 12, 6, 6, 0, 0, 0),
    (54, 24, 18, 12, 6, 6, 0, 0),
    (72, 36, 24, 18, 12, 6, 6, 0),
    (108, 54, 36, 24, 18, 12, 6, 6),
)


@dataclass(frozen=True)
class SeedTables:
    """The model's figures for seed 001's three experiments, as frames."""

    g_scan: pl.DataFrame
    u_scan: pl.DataFrame
    table: pl.DataFrame


def cells() -> Iterator[tuple[str, Cell]]:
    """Every cell seed 001 publishes, tagged with the experiment it belongs to."""
    for controller in G_SCAN_PUBLISHED:
        for G in G_SCAN_G:
            yield "g_scan", replace(BASE, controller=controller, G=G, U=G_SCAN_U)
    for row in U_SCAN_PUBLISHED:
        yield "u_scan", replace(BASE, controller="ledger", G=U_SCAN_G, U=row[0])
    for G in TABLE_G:
        for U in TABLE_U:
            yield "table", replace(BASE, controller="ledger", G=G, U=U)


def compute() -> SeedTables:
    """Run every seed 001 cell through the kernel and split the results by experiment."""
    tagged = list(cells())
    frame = simulate(cells_frame([c for _, c in tagged])).with_columns(
        experiment=pl.Series([tag for tag, _ in tagged]),
        law_overshoot=pl.Series([law_overshoot(c.desired, c.G, c.U, c.B) for _, c in tagged]),
    )
    part = {tag: frame.filter(pl.col("experiment") == tag) for tag in ("g_scan", "u_scan", "table")}
    return SeedTables(**part)


def render(tables: SeedTables) -> str:
    """Seed 001's three tables as text, from the model's figures."""
    b = BASE
    lines = [f"U={G_SCAN_U} s loop, B={b.B} s startup, desired {b.desired} copies, "
             f"deaths {list(b.deaths)}, {b.duration} s run"]
    head = (f"{'G':>4}{'work/round':>12}{'created':>9}{'unneeded':>10}{'delete cmds':>13}"
            f"{'deleted':>9}{'overshoot':>11}{'stable_at':>11}")
    for controller, rows in tables.g_scan.group_by("controller", maintain_order=True):
        lines += ["", f"controller: {controller[0]}", head]
        for r in rows.iter_rows(named=True):
            stable = "none" if r["stable_at"] is None else r["stable_at"]
            lines.append(f"{r['G']:>4}{r['work_per_round']:>12.2f}{r['created']:>9}"
                         f"{r['unneeded']:>10}{r['delete_commands']:>13}{r['deleted']:>9}"
                         f"{r['overshoot']:>11}{stable:>11}")
    lines += ["", f"ledger controller, G={U_SCAN_G} s: scanning the loop period U",
              f"{'U':>4}{'ceil((G+B)/U)':>15}{'predicted':>11}{'measured':>10}{'unneeded':>10}"
              f"{'deleted':>9}{'work/round':>12}"]
    for r in tables.u_scan.iter_rows(named=True):
        blind = math.ceil((r["G"] + r["B"]) / r["U"])
        lines.append(f"{r['U']:>4}{blind:>15}{r['law_overshoot']:>11}{r['overshoot']:>10}"
                     f"{r['unneeded']:>10}{r['deleted']:>9}{r['work_per_round']:>12.2f}")
    lines += ["", "overshoot, ledger controller (row G, column U)",
              "G\\U" + "".join(f"{u:>5}" for u in TABLE_U)]
    grid = tables.table
    for G in TABLE_G:
        row = grid.filter(pl.col("G") == G).sort("U")
        lines.append(f"{G:>3}" + "".join(f"{v:>5}" for v in row["overshoot"]))
    mismatched = grid.filter(pl.col("overshoot") != pl.col("law_overshoot")).height
    lines += ["", f"law overshoot = desired x (ceil((G+B)/U) - 1): "
              f"{grid.height} cells, {mismatched} mismatched"]
    return "\n".join(lines)
