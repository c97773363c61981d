"""The report's verdicts as numbers: every law check compares every cell of the sweep.

Each function takes the sweep's table and returns plain JSON-ready data; the page and
``summary.json`` are both rendered from it, so they carry the same figures.

* ``law``: the ledger controller's overshoot against desired x (ceil((G + B) / U) - 1)
  (observe = created: desired x (ceil(G / U) - 1)), on every ledger row the law covers;
* ``boundary``: overshoot zero or positive on each side of ``U >= G + B``, on every ledger row;
* ``read_cost``: :mod:`reconsim.report.sections.read_cost`;
* ``controllers``: :mod:`reconsim.report_controllers`;
* ``seed001``: :mod:`reconsim.report.sections.seed`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import polars as pl

from reconsim.model.laws import listing_delay
from reconsim.report.data import (
    Deaths,
    Sweep,
    controllers,
    examples,
    groups,
    values_of,
    variant_label,
    variant_order,
    variant_params,
    where,
)
from reconsim.report.sections.read_cost import read_cost_verdict
from reconsim.report.sections.seed import seed_verdict
from reconsim.report_controllers import controllers_verdict

#: Version of the ``summary.json`` layout.
SUMMARY_FORMAT: Final = 2

#: Axes with at most this many values are listed value by value in the sweep's facts.
LISTED_VALUES: Final = 30

#: The law as ``reconsim.model.laws`` states it, for each value of ``observe``.
LAW_FORMULA: Final = {"ready": "desired \u00d7 (⌈(G + B) / U⌉ \u2212 1)",
                      "created": "desired \u00d7 (⌈G / U⌉ \u2212 1)"}


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
        "controllers": controllers_verdict(table, axes),
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


def law_scopes(table: pl.DataFrame) -> list[dict[str, Any]]:
    """Which law applies to which rows, with how many rows and (where checked) mismatches.

    As :mod:`reconsim.model.laws` states it: the uncapped ledger controller, with the
    ceil(G / U) analogue where copies are listed at creation; no law elsewhere.
    """
    out = []
    ledger = table.filter(pl.col("controller") == "ledger")
    checked = ledger.filter(pl.col("law_holds").is_not_null())
    created = pl.col("observe").eq_missing("created")
    parts = (("ready", checked.filter(~created)), ("created", checked.filter(created)))
    for observe, part in parts:
        if part.height:
            out.append({"rows": f"ledger, observe = {observe}, no cap, undamped",
                        "law": LAW_FORMULA[observe], "cells": part.height,
                        "mismatches": int((~part["law_holds"]).sum())})
    unchecked = ledger.height - checked.height
    if unchecked:
        out.append({"rows": "ledger with a cap on corrections per round (max_per_round) "
                            "or damping (gain < 1)",
                    "law": None, "cells": unchecked, "mismatches": None})
    for name in controllers(table):
        if name != "ledger":
            out.append({"rows": name, "law": None,
                        "cells": table.filter(pl.col("controller") == name).height,
                        "mismatches": None})
    return out


def law_verdict(table: pl.DataFrame, axes: Sequence[str],
                schedules: Mapping[str, Deaths]) -> dict[str, Any]:
    """The ledger controller's measured overshoot against the law, on every ledger row it covers.

    ``cells`` are the ledger rows whose ``law_holds`` is not null (``not_applicable``
    counts the other ledger rows); ``mismatches`` those where measured and law differ.
    ``causes`` splits the mismatches three ways: a zero delay (the law's ceiling is 0 and
    its value negative), U < B (a new copy is not ready before the next round), and the
    rest; ``where`` and ``by_schedule`` say which parameter values the mismatches have,
    each with the count of all checked cells having that value.
    """
    ledger = table.filter(pl.col("controller") == "ledger")
    checked = ledger.filter(pl.col("law_holds").is_not_null())
    rest = [a for a in axes if a != "controller"]
    diff = pl.col("overshoot") - pl.col("law_overshoot")
    mismatched = checked.filter(~pl.col("law_holds"))
    d = mismatched.select(diff.alias("d"))["d"]
    zero_delay = listing_delay() == 0
    early = ~zero_delay & (pl.col("U") < pl.col("B"))
    elsewhere = ~zero_delay & ~early
    other = mismatched.filter(elsewhere)
    other_diff = other.select(diff.alias("d"))["d"]
    return {
        "population": "ledger rows where law_holds is not null: the ledger controller without "
                      "a cap on corrections per round, every observe (created: the "
                      "⌈G / U⌉ analogue)",
        "cells": checked.height,
        "mismatches": mismatched.height,
        "holds": checked.height - mismatched.height,
        "not_applicable": ledger.height - checked.height,
        "scopes": law_scopes(table),
        "measured_above_law": int((d > 0).sum()),
        "measured_below_law": int((d < 0).sum()),
        "difference_min": d.min() if mismatched.height else None,
        "difference_max": d.max() if mismatched.height else None,
        "law_negative": mismatched.filter(pl.col("law_overshoot") < 0).height,
        "causes": {
            "zero_delay": {"cells": mismatched.filter(zero_delay).height,
                           "of": checked.filter(zero_delay).height},
            "U_below_B": {"cells": mismatched.filter(early).height,
                          "of": checked.filter(early).height},
            "elsewhere": {
                "cells": other.height,
                "of": checked.filter(elsewhere).height,
                "difference_min": other_diff.min() if other.height else None,
                "difference_max": other_diff.max() if other.height else None,
                "where": where(other, checked.filter(elsewhere), rest) if other.height else [],
                "examples": examples(other, rest, ["overshoot", "law_overshoot"], diff.abs()),
            },
        },
        "where": where(mismatched, checked, rest) if mismatched.height else [],
        "by_schedule": groups(mismatched, checked, ["schedule"], rest),
        "examples": examples(mismatched, rest, ["overshoot", "law_overshoot"], diff.abs()),
    }


def _four(cells: pl.DataFrame) -> dict[str, int]:
    """The four boundary counts of ``cells``: above or below U >= G + B x overshoot 0 or > 0."""
    above, positive = pl.col("above_boundary"), pl.col("overshoot") > 0
    row = cells.select(
        (above & ~positive).sum().alias("above_zero"),
        (above & positive).sum().alias("above_positive"),
        (~above & ~positive).sum().alias("below_zero"),
        (~above & positive).sum().alias("below_positive"),
    ).row(0, named=True)
    return {k: int(v) for k, v in row.items()}


def boundary_verdict(table: pl.DataFrame, axes: Sequence[str]) -> dict[str, Any]:
    """Overshoot on each side of the boundary ``U >= G + B``, on every ledger row.

    The four counts answer both directions of seed 001's claim: does U >= G + B imply
    zero overshoot (``above_positive`` = 0)? Does U < G + B imply overshoot
    (``below_zero`` = 0; cells with desired = 0 cannot overshoot and are counted apart)?
    ``by_variant`` repeats the counts per ledger variant when the sweep varies observe
    or max_per_round (the boundary is seed 001's for observe = ready without a cap).
    """
    rest = [a for a in axes if a != "controller"]
    ledger = table.filter(pl.col("controller") == "ledger")
    four = _four(ledger)
    above_positive = ledger.filter(pl.col("above_boundary") & (pl.col("overshoot") > 0))
    below = ledger.filter(~pl.col("above_boundary"))
    below_zero = below.filter(pl.col("overshoot") == 0)
    exceptions = below_zero.filter(pl.col("desired") > 0)
    figures = ["overshoot", "law_overshoot", "unneeded", "deleted"]
    params = variant_params(ledger)
    by_variant = []
    if params:
        labelled = ledger.with_columns(variant_label(params))
        for label in variant_order(ledger, params):
            part = labelled.filter(pl.col("variant") == label)
            by_variant.append({"variant": label, "cells": part.height, **_four(part)})
    return {
        "population": "every ledger row (all values of the other parameters)",
        "cells": ledger.height,
        **four,
        "above_cells": four["above_zero"] + four["above_positive"],
        "below_cells": four["below_zero"] + four["below_positive"],
        "below_zero_desired_0": below_zero.height - exceptions.height,
        "below_zero_desired_positive": exceptions.height,
        "below_zero_desired_positive_U_below_B":
            exceptions.filter(pl.col("U") < pl.col("B")).height,
        "above_implies_zero": four["above_positive"] == 0 if ledger.height else None,
        "below_implies_positive": four["below_zero"] == 0 if ledger.height else None,
        "below_implies_positive_for_desired_positive":
            exceptions.height == 0 if ledger.height else None,
        "where_above_positive": (where(above_positive, ledger.filter(pl.col("above_boundary")),
                                       rest) if above_positive.height else []),
        "examples_above_positive": examples(above_positive, rest, figures, pl.col("overshoot")),
        "where_below_zero": (where(exceptions, below.filter(pl.col("desired") > 0), rest)
                             if exceptions.height else []),
        "examples_below_zero": examples(exceptions, rest, figures, pl.col("law_overshoot")),
        "by_variant": by_variant,
    }
