"""Read cost against the loop period: what a faster loop pays, and what oscillation adds.

Every round reads the whole ledger: the service's own entries plus ``ledger_base``
entries of other services. Seed 001's trade-off: a faster loop (smaller U) reads more
often, and under delay it oscillates, which puts more entries on the ledger. The
verdict measures both, on every cell:

* ``flat``: where nothing oscillates (overshoot 0), how far reads per round move with
  U among cells that differ only in U;
* ``inflation``: each oscillating cell's reads per round against the no-oscillation
  level of its series (the median over the cells of the same series with overshoot 0);
* ``per_second``: whether reads per second ever rise as U grows, series by series;
* ``by_GB``: for each (G, B), the ledger controller's fastest loop with zero overshoot
  and what it reads, against the slowest loop in the sweep.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from reconsim.report.data import (
    Deaths,
    controllers,
    representative,
    select,
    stats,
    where,
)


def reads_per_second() -> pl.Expr:
    """Ledger entries read per second of the run: reads / (duration + 1), the run being the
    seconds 0 .. duration."""
    return (pl.col("reads") / (pl.col("duration") + 1)).alias("reads_per_second")


def read_cost_verdict(table: pl.DataFrame, axes: Sequence[str],
                      schedules: Mapping[str, Deaths]) -> dict[str, Any]:
    """Reads per round and per second against U, on every cell; see the module's docstring."""
    t = table.with_columns(reads_per_second())
    series = [a for a in axes if a != "U"]
    return {
        "definitions": {
            "reads_per_round": "reads / rounds",
            "reads_per_second": "reads / (duration + 1)",
            "series": "cells that differ only in U",
            "no_oscillation_level": "median reads_per_round over the cells of the same series "
                                    "with overshoot 0",
        },
        "flat": flat_verdict(t, series),
        "inflation": inflation_verdict(t, series),
        "per_second": per_second_verdict(t, series),
        "by_GB": by_gb_verdict(t, axes, schedules),
        "chart": chart_slice(t, axes, schedules),
    }


def _row(frame: pl.DataFrame, columns: Sequence[str]) -> dict[str, Any] | None:
    """The first row of ``frame`` as a dict of ``columns``, floats to four places."""
    if frame.height == 0:
        return None
    row = frame.select(columns).row(0, named=True)
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}


def flat_verdict(t: pl.DataFrame, series: Sequence[str]) -> dict[str, Any]:
    """Among cells with overshoot 0, per series of two or more: the spread of reads per
    round (highest minus lowest) in entries, and relative to the lowest."""
    runs = (t.filter(pl.col("overshoot") == 0).group_by(series).agg(
        pl.len().alias("cells"),
        pl.col("reads_per_round").min().alias("lowest"),
        pl.col("reads_per_round").max().alias("highest"),
        pl.col("U").sort_by("reads_per_round", "U").first().alias("U_lowest"),
        pl.col("U").sort_by("reads_per_round", "U").last().alias("U_highest"),
        pl.col("U").min().alias("U_min"), pl.col("U").max().alias("U_max"),
    ).filter(pl.col("cells") >= 2).with_columns(
        (pl.col("highest") - pl.col("lowest")).alias("spread"),
    ).with_columns(
        pl.when(pl.col("lowest") > 0).then(pl.col("spread") / pl.col("lowest")).alias("relative"),
    ))
    worst = runs.sort(["spread", *series], descending=[True, *[False] * len(series)],
                      nulls_last=True)
    return {
        "population": "cells with overshoot 0, in series of two or more cells differing only "
                      "in U",
        "series": runs.height,
        "cells": int(runs["cells"].sum()) if runs.height else 0,
        "spread": stats(runs["spread"]),
        "relative": stats(runs["relative"], digits=4),
        "series_within_one_entry": int((runs["spread"] < 1).sum()),
        "widest": _row(worst, [*series, "U_lowest", "lowest", "U_highest", "highest", "spread",
                               "relative", "cells"]),
    }


def no_oscillation_level(t: pl.DataFrame, series: Sequence[str]) -> pl.DataFrame:
    """Per series: the median reads per round over its cells with overshoot 0."""
    return t.filter(pl.col("overshoot") == 0).group_by(series).agg(
        pl.col("reads_per_round").median().alias("level"))


def inflation_verdict(t: pl.DataFrame, series: Sequence[str]) -> dict[str, Any]:
    """Each oscillating cell's reads per round divided by its series' no-oscillation level;
    the ratio's distribution over all of them and per controller, and the largest."""
    level = no_oscillation_level(t, series)
    osc = t.filter(pl.col("overshoot") > 0).join(level, on=list(series), how="left",
                                                 nulls_equal=True)
    osc = osc.with_columns(pl.when(pl.col("level") > 0)
                           .then(pl.col("reads_per_round") / pl.col("level")).alias("ratio"))
    rated = osc.filter(pl.col("ratio").is_not_null())
    top = rated.sort(["ratio", *series, "U"], descending=[True, *[False] * (len(series) + 1)],
                     nulls_last=True)
    per = []
    for name in controllers(osc) if osc.height else []:
        part = osc.filter(pl.col("controller") == name)
        per.append({"controller": name, "cells": part.height, "ratio": stats(part["ratio"])})
    return {
        "population": "cells with overshoot > 0; level: their series' no-oscillation level",
        "cells": osc.height,
        "with_level": rated.height,
        "without_level": osc.height - rated.height,
        "ratio": stats(rated["ratio"]),
        "below_level": int((rated["ratio"] < 1).sum()),
        "largest": _row(top, [*series, "U", "overshoot", "reads_per_round", "level", "ratio"]),
        "by_controller": per,
    }


def per_second_verdict(t: pl.DataFrame, series: Sequence[str]) -> dict[str, Any]:
    """Series by series (two or more cells): whether reads per second ever rise from one U
    to the next larger one, by how much at most (relative to the smaller U's), and the
    ratio of reads per second at the largest U to those at the smallest."""
    rps = pl.col("reads_per_second").sort_by("U")
    runs = (t.group_by(series)
            .agg(pl.len().alias("n"),
                 pl.when(rps.shift(1) > 0).then(rps / rps.shift(1) - 1).max().alias("rise"),
                 pl.when(rps.first() > 0).then(rps.last() / rps.first())
                 .alias("last_over_first"),
                 pl.col("U").min().alias("U_min"), pl.col("U").max().alias("U_max"))
            .filter(pl.col("n") >= 2))
    rising = runs.filter(pl.col("rise") > 0)
    top = rising.sort(["rise", *series], descending=[True, *[False] * len(series)],
                      nulls_last=True)
    return {
        "series": runs.height,
        "rising": rising.height,
        "rise": stats(rising["rise"], digits=4),
        "largest_rise": _row(top, [*series, "rise"]),
        "last_over_first": stats(runs["last_over_first"], digits=4),
        "where_rising": where(rising, runs, series) if rising.height else [],
    }


def by_gb_verdict(t: pl.DataFrame, axes: Sequence[str],
                  schedules: Mapping[str, Deaths]) -> dict[str, Any]:
    """For each (G, B), the ledger controller's fastest loop with zero overshoot.

    The rows are the ledger cells with every axis but G, U, B, desired and schedule fixed
    (seed 001's values where present, see :func:`representative`). Per series (G, B,
    desired, schedule), ``zero_from`` is the smallest U from which overshoot is 0 at every
    larger U of the series. Per (G, B): ``zero_from`` is the largest of its series' (the
    fastest loop that overshoots under no desired count and no schedule; null if some
    series overshoots at its largest U), ``zero_from_min`` the smallest, and
    ``zero_below`` counts the cells below their series' ``zero_from`` whose overshoot is 0
    all the same. The figures at that U and at the largest U are those of one series,
    ``shown`` (desired and schedule as in seed 001 where present); ``cheapest_U`` is the
    U with the fewest reads per second among its cells with overshoot 0.
    """
    ledger = t.filter(pl.col("controller") == "ledger")
    if ledger.height == 0:
        return {"controller": "ledger", "fixed": {}, "shown": {}, "rows": []}
    fixed = representative(ledger, ("G", "U", "B", "desired", "schedule"), axes, schedules)
    pop = select(ledger, fixed)
    shown = representative(pop, ("G", "U", "B"), ["desired", "schedule"], schedules)
    key = ["G", "B", "desired", "schedule"]
    last_positive = pl.col("U").filter(pl.col("overshoot") > 0).max()
    zero_from = (pl.when(last_positive.is_null()).then(pl.col("U").min())
                 .otherwise(pl.col("U").filter(pl.col("U") > last_positive).min()))
    per_series = pop.group_by(key).agg(
        zero_from.alias("zero_from"),
        ((pl.col("U") < zero_from.fill_null(pl.col("U").max() + 1))
         & (pl.col("overshoot") == 0)).sum().alias("zero_below"),
    )
    per_gb = per_series.group_by("G", "B").agg(
        pl.len().alias("series"),
        pl.when(pl.col("zero_from").null_count() == 0).then(pl.col("zero_from").max())
        .alias("zero_from"),
        pl.col("zero_from").min().alias("zero_from_min"),
        pl.col("zero_from").null_count().alias("never_zero"),
        pl.col("zero_below").sum().alias("zero_below"),
    )
    boundary_u = pop.group_by("G", "B").agg(
        pl.col("U").filter(pl.col("U") >= pl.col("G") + pl.col("B")).min().alias("boundary_U"),
        pl.col("U").max().alias("U_max"))
    one = select(pop, shown)
    cheapest = one.filter(pl.col("overshoot") == 0).group_by("G", "B").agg(
        pl.col("U").sort_by("reads_per_second", "U").first().alias("cheapest_U"))
    figures = ["reads_per_round", "reads_per_second", "missing_copy_seconds", "unneeded",
               "overshoot"]
    at = one.select("G", "B", "U", *figures)
    rows = (per_gb.join(boundary_u, on=["G", "B"]).join(cheapest, on=["G", "B"], how="left")
            .join(at.rename({f: f"at_zero_from__{f}" for f in figures}),
                  left_on=["G", "B", "zero_from"], right_on=["G", "B", "U"], how="left")
            .join(at.rename({f: f"at_U_max__{f}" for f in figures}),
                  left_on=["G", "B", "U_max"], right_on=["G", "B", "U"], how="left")
            .sort("G", "B"))
    out = []
    for r in rows.iter_rows(named=True):
        out.append({
            "G": r["G"], "B": r["B"], "G_plus_B": r["G"] + r["B"], "series": r["series"],
            "zero_from": r["zero_from"], "zero_from_min": r["zero_from_min"],
            "same_for_all": r["zero_from"] is not None and r["zero_from"] == r["zero_from_min"],
            "never_zero": r["never_zero"],
            "boundary_U": r["boundary_U"],
            "at_boundary": r["zero_from"] is not None and r["zero_from"] == r["boundary_U"],
            "zero_below": r["zero_below"],
            "cheapest_U": r["cheapest_U"], "U_max": r["U_max"],
            "at_zero_from": _figures(r, "at_zero_from", figures),
            "at_U_max": _figures(r, "at_U_max", figures),
        })
    return {"controller": "ledger", "fixed": fixed, "shown": shown, "rows": out}


def _figures(row: Mapping[str, Any], prefix: str, figures: Sequence[str]) -> dict[str, Any] | None:
    """The ``{prefix}__{figure}`` columns of ``row`` as a dict, or None if the cell is absent."""
    values = {f: row[f"{prefix}__{f}"] for f in figures}
    if all(v is None for v in values.values()):
        return None
    return {f: round(v, 3) if isinstance(v, float) else v for f, v in values.items()}


def chart_slice(t: pl.DataFrame, axes: Sequence[str],
                schedules: Mapping[str, Deaths]) -> dict[str, Any]:
    """The cells of one slice, every axis but controller and U fixed, for the chart."""
    fixed = representative(t, ("controller", "U"), axes, schedules)
    rank = {c: i for i, c in enumerate(controllers(t))}
    cut = select(t, fixed).sort(pl.col("controller").replace_strict(rank, return_dtype=pl.Int64),
                                "U")
    points = cut.select("controller", "U", "reads", "rounds", "reads_per_round",
                        "reads_per_second", "overshoot", "unneeded", "missing_copy_seconds")
    return {"fixed": fixed, "points": points.with_columns(
        pl.col("reads_per_round", "reads_per_second").round(4)).to_dicts()}
