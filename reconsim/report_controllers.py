"""Controllers and their variants compared, on every cell of each.

A variant is a controller with its values of whichever of observe, max_per_round, ttl
and restart_at vary in the sweep (null where the parameter does not apply; see
:func:`reconsim.report.data.variant_label`). For each variant: the cost of its
corrections (unneeded copies, overshoot, delete commands that killed nothing), the
service it delivers (excess and missing copy-seconds) and when it settles
(``stable_at``; null when a run ends unsettled), over all its cells and per G.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import polars as pl

from reconsim.report.data import examples, variant_label, variant_order, variant_params

#: The figures compared, in the order the page shows them: column -> its heading.
COMPARED: Final = {
    "unneeded": "unneeded copies",
    "overshoot": "overshoot (copies)",
    "wasted_delete_commands": "wasted delete commands",
    "excess_copy_seconds": "excess copy-seconds",
    "missing_copy_seconds": "missing copy-seconds",
    "stable_at": "stable_at (s, settled cells)",
}


def wasted() -> pl.Expr:
    """Delete commands that killed nothing: ``delete_commands - deleted``."""
    return (pl.col("delete_commands") - pl.col("deleted")).alias("wasted_delete_commands")


def _mean(column: str) -> pl.Expr:
    """The mean of ``column``, to three places (null when every value is null)."""
    return pl.col(column).mean().round(3)


def controllers_verdict(table: pl.DataFrame, axes: Sequence[str]) -> dict[str, Any]:
    """Each variant's figures over all its cells, per G, and which variant does best or worst.

    ``compared`` is true when the sweep holds more than one variant. Means and maxima
    are over every cell of the variant (at that G, for ``by_G``): every U, B, desired,
    schedule and other parameter the sweep ran. ``stable_at``'s mean and max are over
    the cells that settle; ``unsettled`` counts the others.
    """
    params = variant_params(table)
    t = table.with_columns(variant_label(params), wasted())
    order = variant_order(table, params)
    rest = [a for a in axes if a != "controller"]
    variants = [_variant(t.filter(pl.col("variant") == label), label, params, rest)
                for label in order]
    by_g = t.group_by("variant", "G").agg(
        pl.len().alias("cells"),
        *(_mean(c).alias(f"{c}__mean") for c in COMPARED),
        *(pl.col(c).max().alias(f"{c}__max") for c in COMPARED),
        pl.col("stable_at").null_count().alias("unsettled"),
    ).with_columns(pl.col("variant").replace_strict({v: i for i, v in enumerate(order)},
                                                    return_dtype=pl.Int64).alias("__rank"))
    by_g = by_g.sort("__rank", "G").drop("__rank")
    return {
        "population": "every cell of each variant; means and maxima over all its cells",
        "compared": len(order) > 1,
        "varying": params,
        "figures": dict(COMPARED),
        "variants": variants,
        "by_G": by_g.to_dicts(),
        "facts": _facts(variants),
    }


def _variant(part: pl.DataFrame, label: str, params: Sequence[str],
             rest: Sequence[str]) -> dict[str, Any]:
    """One variant's figures over all its cells."""
    above = pl.col("above_boundary")
    row = part.select(
        (pl.col("overshoot") > 0).sum().alias("overshoot_cells"),
        _mean("overshoot").alias("overshoot_mean"),
        pl.col("overshoot").max().alias("overshoot_max"),
        (pl.col("unneeded") > 0).sum().alias("unneeded_cells"),
        _mean("unneeded").alias("unneeded_mean"), pl.col("unneeded").max().alias("unneeded_max"),
        (pl.col("wasted_delete_commands") > 0).sum().alias("wasted_cells"),
        pl.col("wasted_delete_commands").sum().alias("wasted_total"),
        pl.col("delete_commands").sum().alias("delete_commands_total"),
        pl.col("wasted_delete_commands").max().alias("wasted_max"),
        _mean("excess_copy_seconds").alias("excess_mean"),
        pl.col("excess_copy_seconds").max().alias("excess_max"),
        _mean("missing_copy_seconds").alias("missing_mean"),
        pl.col("missing_copy_seconds").max().alias("missing_max"),
        _mean("stable_at").alias("stable_mean"), pl.col("stable_at").max().alias("stable_max"),
        pl.col("stable_at").null_count().alias("unsettled"),
        above.sum().alias("above_cells"), (above & (pl.col("overshoot") > 0)).sum()
        .alias("above_overshoot"),
        (~above).sum().alias("below_cells"), (~above & (pl.col("overshoot") > 0)).sum()
        .alias("below_overshoot"),
    ).row(0, named=True)
    first = part.row(0, named=True)
    figures = ["overshoot", "unneeded", "wasted_delete_commands", "stable_at"]
    largest = examples(part.filter(pl.col("overshoot") > 0), rest, figures,
                       pl.col("overshoot"), limit=1)
    latest = examples(part.filter(pl.col("stable_at").is_not_null()), rest, figures,
                      pl.col("stable_at"), limit=1)
    return {
        "variant": label,
        "controller": first["controller"],
        "params": {p: first[p] for p in params},
        "cells": part.height,
        "overshoot": {"cells_positive": row["overshoot_cells"], "mean": row["overshoot_mean"],
                      "max": row["overshoot_max"],
                      "above_boundary": {"cells": row["above_cells"],
                                         "positive": row["above_overshoot"]},
                      "below_boundary": {"cells": row["below_cells"],
                                         "positive": row["below_overshoot"]},
                      "largest": largest[0] if largest else None},
        "unneeded": {"cells_positive": row["unneeded_cells"], "mean": row["unneeded_mean"],
                     "max": row["unneeded_max"]},
        "wasted_delete_commands": {"cells_positive": row["wasted_cells"],
                                   "total": row["wasted_total"], "max": row["wasted_max"],
                                   "of_delete_commands": row["delete_commands_total"]},
        "excess_copy_seconds": {"mean": row["excess_mean"], "max": row["excess_max"]},
        "missing_copy_seconds": {"mean": row["missing_mean"], "max": row["missing_max"]},
        "stable_at": {"mean": row["stable_mean"], "max": row["stable_max"],
                      "unsettled": row["unsettled"], "latest": latest[0] if latest else None},
    }


def _facts(variants: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Which variants never do a thing, and which does the most or least of another."""
    def labels(test: Any) -> list[str]:
        """The variants for which ``test`` holds, in order."""
        return [v["variant"] for v in variants if test(v)]

    def extreme(path: tuple[str, str], pick: Any) -> dict[str, Any] | None:
        """The variant ``pick`` (min or max) chooses by a figure; ties: the first listed."""
        known = [v for v in variants if v[path[0]][path[1]] is not None]
        if not known:
            return None
        best = pick(known, key=lambda v: v[path[0]][path[1]])
        return {"variant": best["variant"], "value": best[path[0]][path[1]]}

    return {
        "no_unneeded": labels(lambda v: v["unneeded"]["cells_positive"] == 0),
        "never_overshoot": labels(lambda v: v["overshoot"]["cells_positive"] == 0),
        "no_wasted_deletes": labels(lambda v: v["wasted_delete_commands"]["total"] == 0),
        "always_settle": labels(lambda v: v["stable_at"]["unsettled"] == 0),
        "least_missing_mean": extreme(("missing_copy_seconds", "mean"), min),
        "most_missing_mean": extreme(("missing_copy_seconds", "mean"), max),
        "least_excess_mean": extreme(("excess_copy_seconds", "mean"), min),
        "most_excess_mean": extreme(("excess_copy_seconds", "mean"), max),
        "latest_stable": extreme(("stable_at", "max"), max),
        "most_unsettled": extreme(("stable_at", "unsettled"), max),
    }
