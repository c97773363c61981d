"""The report's verdicts as numbers: every law check compares every cell of the sweep.

Each function takes the sweep's table and returns plain JSON-ready data; the page and
``summary.json`` are both rendered from it, so they carry the same figures.

* ``law``: the ledger controller's overshoot against desired x (ceil((G + B) / U) - 1);
* ``boundary``: overshoot zero above ``U >= G + B`` and positive below it, per controller;
* ``read_cost``: ledger entries read per round and per second as the loop period U varies;
* ``seed001``: the sweep's cells that seed 001 published, against the published figures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import polars as pl

from reconsim.params import PARAM_NAMES, applies
from reconsim.report_data import (
    SEED_DEATHS,
    Deaths,
    Sweep,
    controllers,
    flat_value,
    groups,
    representative,
    select,
    values_of,
    where,
)
from reconsim.seed001 import (
    BASE,
    G_SCAN_PUBLISHED,
    G_SCAN_U,
    TABLE_G,
    TABLE_PUBLISHED,
    TABLE_U,
    U_SCAN_G,
    U_SCAN_PUBLISHED,
)

#: Version of the ``summary.json`` layout.
SUMMARY_FORMAT: Final = 1

#: How many example cells a verdict lists in full.
EXAMPLES: Final = 12

#: Axes with at most this many values are listed value by value in the sweep's facts.
LISTED_VALUES: Final = 30


def summarize(sweep: Sweep) -> dict[str, Any]:
    """Every figure the report shows, as one JSON-ready dict (``summary.json``)."""
    table, axes = sweep.table, sweep.axes
    return {
        "format": SUMMARY_FORMAT,
        "sweep": sweep_facts(sweep),
        "axes": {a: axis_facts(table, a) for a in axes},
        "law": law_verdict(table, axes, sweep.schedules),
        "boundary": boundary_verdict(table, axes),
        "read_cost": read_cost_verdict(table, axes, sweep.schedules),
        "seed001": seed_verdict(table),
    }


def sweep_facts(sweep: Sweep) -> dict[str, Any]:
    """The sweep's identity from ``sweep.json`` beside what the data itself holds."""
    meta = sweep.meta
    return {
        "name": str(meta.get("name", "")),
        "version": meta.get("version"),
        "spec_hash": meta.get("spec_hash"),
        "spec": meta.get("spec"),
        "started": meta.get("started"),
        "finished": meta.get("finished"),
        "cells_per_second": meta.get("cells_per_second"),
        "cells_declared": meta.get("cells"),
        "cells": sweep.table.height,
        "controllers": controllers(sweep.table),
        "schedules": {name: [list(e) for e in d] for name, d in sweep.schedules.items()},
        "stale_law_cells": sweep.stale_law_cells,
    }


def axis_facts(table: pl.DataFrame, axis: str) -> dict[str, Any]:
    """One axis: how many distinct values, its range, and the values when there are few."""
    values = values_of(table, axis)
    non_null = [v for v in values if v is not None]
    return {
        "distinct": len(values),
        "nulls": int(table[axis].null_count()),
        "min": min(non_null) if non_null else None,
        "max": max(non_null) if non_null else None,
        "values": values if len(values) <= LISTED_VALUES else None,
    }


def _examples(cells: pl.DataFrame, axes: Sequence[str], figures: Sequence[str],
              order: pl.Expr) -> list[dict[str, Any]]:
    """Up to :data:`EXAMPLES` cells in full, first by ``order`` (descending), then by their axes;
    one per (G, U, B, desired), so that they differ in more than the schedule."""
    if cells.height == 0:
        return []
    top = cells.with_columns(order.alias("__order")).sort(
        ["__order", *axes], descending=[True, *[False] * len(axes)], nulls_last=True)
    distinct = [a for a in ("G", "U", "B", "desired") if a in axes]
    top = top.unique(subset=distinct, keep="first", maintain_order=True)
    return top.head(EXAMPLES).select(*axes, *figures).to_dicts()


def law_verdict(table: pl.DataFrame, axes: Sequence[str],
                schedules: Mapping[str, Deaths]) -> dict[str, Any]:
    """The ledger controller's measured overshoot against the law, on every ledger cell.

    ``cells`` are the ledger cells the law applies to (``law_holds`` not null;
    ``not_applicable`` counts the others). ``fails`` counts the cells where the two
    differ; ``where`` and ``by_schedule`` say which parameter values those cells have,
    each with the count of all checked cells having that value; ``examples`` lists the
    largest differences in full. ``slice`` fixes every axis but G, U and B for the chart
    of measured overshoot.
    """
    ledger = table.filter(pl.col("controller") == "ledger")
    checked = ledger.filter(pl.col("law_holds").is_not_null())
    rest = [a for a in axes if a != "controller"]
    diff = pl.col("overshoot") - pl.col("law_overshoot")
    fixed = representative(checked, ("G", "U", "B"), axes, schedules) if checked.height else {}
    fails = checked.filter(~pl.col("law_holds"))
    d = fails.select(diff.alias("d"))["d"]
    return {
        "cells": checked.height,
        "not_applicable": ledger.height - checked.height,
        "holds": checked.height - fails.height,
        "fails": fails.height,
        "measured_above_law": int((d > 0).sum()),
        "measured_below_law": int((d < 0).sum()),
        "difference_min": d.min() if fails.height else None,
        "difference_max": d.max() if fails.height else None,
        "law_negative": fails.filter(pl.col("law_overshoot") < 0).height,
        "where": where(fails, checked, rest) if fails.height else [],
        "by_schedule": groups(fails, checked, ["schedule"], rest),
        "examples": _examples(fails, rest, ["overshoot", "law_overshoot"], diff.abs()),
        "slice": fixed,
    }


def _sides(cells: pl.DataFrame, rest: Sequence[str], figures: Sequence[str],
           ledger: bool, locate: bool = True) -> dict[str, Any]:
    """Overshoot on each side of the boundary U = G + B; with ``locate``, where the
    exceptions to seed 001's claim lie, and examples of them."""
    above = cells.filter(pl.col("above_boundary"))
    below = cells.filter(~pl.col("above_boundary"))
    above_pos = above.filter(pl.col("overshoot") > 0)
    below_zero = below.filter(pl.col("overshoot") == 0)
    below_zero_desired = below_zero.filter(pl.col("desired") > 0)
    return {
        "cells": cells.height,
        "unclassified": cells.height - above.height - below.height,
        "above": {
            "cells": above.height,
            "overshoot_zero": above.height - above_pos.height,
            "overshoot_positive": above_pos.height,
            "where_positive": (where(above_pos, above, rest)
                               if locate and above_pos.height else []),
            "examples": _examples(above_pos, rest, figures, pl.col("overshoot")) if locate else [],
        },
        "below": {
            "cells": below.height,
            "overshoot_positive": below.height - below_zero.height,
            "overshoot_zero": below_zero.height,
            "zero_with_desired_0": below_zero.height - below_zero_desired.height,
            "zero_with_desired_positive": below_zero_desired.height,
            "where_zero_desired_positive": (
                where(below_zero_desired, below.filter(pl.col("desired") > 0), rest)
                if locate and below_zero_desired.height else []),
            "examples": _examples(below_zero_desired, rest, figures,
                                  pl.col("law_overshoot") if ledger else pl.col("desired"))
            if locate else [],
        },
    }


def boundary_verdict(table: pl.DataFrame, axes: Sequence[str]) -> dict[str, Any]:
    """Overshoot above the boundary ``U >= G + B`` and below it, on every cell.

    ``claim``: seed 001 says the ledger controller overshoots exactly when U < G + B (for
    desired > 0). It is checked on the ledger cells the law covers (``law_holds`` not
    null) whose copies reach the ledger G s after they are ready (``observe`` absent or
    ``ready``: with ``created`` the boundary would be U >= G); ``exceptions`` counts the
    cells that contradict it. ``controllers``: the same counts for every controller on
    all its cells, and where each overshoots.
    """
    rest = [a for a in axes if a != "controller"]
    ledger = table.filter(pl.col("controller") == "ledger")
    scope = pl.col("law_holds").is_not_null()
    if "observe" in table.columns:
        scope &= pl.col("observe").eq_missing("ready")
    covered = ledger.filter(scope)
    claim = _sides(covered, rest, ["overshoot", "law_overshoot"], ledger=True)
    claim["not_covered"] = ledger.height - covered.height
    claim["exceptions"] = (claim["above"]["overshoot_positive"]
                           + claim["below"]["zero_with_desired_positive"])
    out = []
    for name in controllers(table):
        c = table.filter(pl.col("controller") == name)
        positive = c.filter(pl.col("overshoot") > 0)
        largest = _examples(positive, rest, ["overshoot"], pl.col("overshoot"))[:1]
        sides = _sides(c, rest, ["overshoot"], ledger=False, locate=False)
        out.append({
            "controller": name,
            "cells": c.height,
            "unclassified": sides["unclassified"],
            "above": {k: sides["above"][k] for k in ("cells", "overshoot_positive")},
            "below": {k: sides["below"][k] for k in ("cells", "overshoot_positive")},
            "overshoot_positive": positive.height,
            "max_overshoot": c["overshoot"].max(),
            "largest": largest[0] if largest else None,
            "where_positive": where(positive, c, rest) if positive.height else [],
            "unneeded_positive": int((c["unneeded"] > 0).sum()),
            "delete_commands": int(c["delete_commands"].sum()),
            "wasted_delete_commands": int((c["delete_commands"] - c["deleted"]).sum()),
        })
    return {"claim": claim, "controllers": out}


def reads_per_second() -> pl.Expr:
    """Ledger entries read per second of the run: reads / (duration + 1), the run being the
    seconds 0 .. duration."""
    return (pl.col("reads") / (pl.col("duration") + 1)).alias("reads_per_second")


def read_cost_verdict(table: pl.DataFrame, axes: Sequence[str],
                      schedules: Mapping[str, Deaths]) -> dict[str, Any]:
    """Reads per round and per second against U, on a representative slice and on every series.

    The slice fixes every axis except ``controller`` and ``U`` (seed 001's values where
    present). ``series`` counts, over the whole table, the runs of cells differing only
    in U (two or more of them) and ``rising`` those where reads per second ever grows
    as U grows.
    """
    fixed = representative(table, ("controller", "U"), axes, schedules)
    cut = select(table, fixed).with_columns(reads_per_second())
    order = {c: i for i, c in enumerate(controllers(table))}
    cut = cut.sort(pl.col("controller").replace_strict(order, return_dtype=pl.Int64), "U")
    per_controller = []
    for name in controllers(cut):
        s = cut.filter(pl.col("controller") == name)
        first, last = s.row(0, named=True), s.row(-1, named=True)
        per_controller.append({
            "controller": name, "points": s.height,
            "U_min": first["U"], "U_max": last["U"],
            "reads_per_second_at_U_min": first["reads_per_second"],
            "reads_per_second_at_U_max": last["reads_per_second"],
            "reads_per_round_at_U_min": first["reads_per_round"],
            "reads_per_round_at_U_max": last["reads_per_round"],
        })
    key = [a for a in axes if a != "U"]
    runs = (table.group_by(key)
            .agg(pl.len().alias("n"), (pl.col("reads").sort_by("U").diff() > 0).any().alias("up"))
            .filter(pl.col("n") >= 2))
    rising = runs.filter(pl.col("up"))
    return {
        "fixed": fixed,
        "per_controller": per_controller,
        "points": cut.select("controller", "U", "reads", "rounds", "duration",
                             "reads_per_round", "reads_per_second", "overshoot").to_dicts(),
        "reads_per_round_min": table["reads_per_round"].min(),
        "reads_per_round_max": table["reads_per_round"].max(),
        "series": runs.height,
        "rising": rising.height,
        "where_rising": where(rising, runs, key) if rising.height else [],
    }


def _published() -> list[dict[str, Any]]:
    """Seed 001's published figures, one row per (experiment, controller, G, U), each with the
    figures that experiment publishes, as :mod:`reconsim.seed001` holds them."""
    rows: list[dict[str, Any]] = []
    for controller, g_rows in G_SCAN_PUBLISHED.items():
        for G, wpr, created, unneeded, cmds, deleted, overshoot, stable in g_rows:
            rows.append({"experiment": "G scan", "controller": controller, "G": G, "U": G_SCAN_U,
                         "figures": {"work_per_round": wpr, "created": created,
                                     "unneeded": unneeded, "delete_commands": cmds,
                                     "deleted": deleted, "overshoot": overshoot,
                                     "stable_at": stable}})
    for U, _, predicted, overshoot, unneeded, deleted, wpr in U_SCAN_PUBLISHED:
        rows.append({"experiment": "U scan", "controller": "ledger", "G": U_SCAN_G, "U": U,
                     "figures": {"law_overshoot": predicted, "overshoot": overshoot,
                                 "unneeded": unneeded, "deleted": deleted,
                                 "work_per_round": wpr}})
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


def seed_verdict(table: pl.DataFrame) -> dict[str, Any]:
    """The sweep's cells in seed 001's setting (see :func:`in_seed_setting`), each compared
    with every figure the seed publishes for it."""
    seedlike = table.filter(pl.any_horizontal(
        in_seed_setting(c, table.columns) for c in G_SCAN_PUBLISHED))
    names = sorted(seedlike["schedule"].unique().to_list())
    by_key: dict[tuple[str, int, int], list[dict[str, Any]]] = {}
    for row in seedlike.iter_rows(named=True):
        by_key.setdefault((row["controller"], row["G"], row["U"]), []).append(row)
    published = _published()
    found = compared = agree = 0
    disagreements: list[dict[str, Any]] = []
    for pub in published:
        cells = by_key.get((pub["controller"], pub["G"], pub["U"]), [])
        found += bool(cells)
        for cell in cells:
            compared += 1
            wrong = {}
            for figure, expected in pub["figures"].items():
                got = cell[figure]
                shown = f"{got:.2f}" if figure == "work_per_round" else got
                if shown != expected:
                    wrong[figure] = {"published": expected, "measured": shown}
            agree += not wrong
            if wrong and len(disagreements) < 2 * EXAMPLES:
                disagreements.append({
                    "experiment": pub["experiment"], "controller": pub["controller"],
                    "G": pub["G"], "U": pub["U"], "schedule": cell["schedule"],
                    "figures": wrong,
                })
    return {
        "schedules": names,
        "published": len(published),
        "found": found,
        "compared": compared,
        "agree": agree,
        "disagree": compared - agree,
        "disagreements": disagreements,
    }
