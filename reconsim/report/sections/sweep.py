"""The sweep itself: what was run (``sweep.json``) beside what the data holds, each axis's
values, the death schedules and the spec."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from markupsafe import Markup

from reconsim.report.charts import Figure
from reconsim.report.data import AxisFacts, Sweep
from reconsim.report.html import num, plain, table
from reconsim.report.section import Section, Summary

#: Axes with at most this many values are listed value by value in the sweep's facts.
LISTED_VALUES: Final = 30


def summarize(sweep: Sweep) -> dict[str, Any]:
    """The sweep's facts and each axis's values."""
    return {"sweep": sweep_facts(sweep),
            "axes": {a: axis_facts(sweep.axis_facts[a]) for a in sweep.axes}}


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
        "cells": sweep.cells,
        "controllers": sweep.controllers,
        "schedules": {name: [list(e) for e in d] for name, d in sweep.schedules.items()},
        "stale_law_cells": sweep.stale_law_cells,
    }


def axis_facts(facts: AxisFacts) -> dict[str, Any]:
    """One axis: how many distinct values, its range, and the values when there are few."""
    values = list(facts.values)
    non_null = [v for v in values if v is not None]
    return {
        "distinct": len(values),
        "nulls": facts.nulls,
        "min": min(non_null) if non_null else None,
        "max": max(non_null) if non_null else None,
        "values": values if len(values) <= LISTED_VALUES else None,
    }


def render(summary: Summary, figures: Mapping[str, Figure]) -> Markup:
    """The sweep's identity, its axes, its schedules and its spec."""
    s = summary["sweep"]
    facts = [("name", s["name"]), ("reconsim version", s["version"]),
             ("spec hash", s["spec_hash"]), ("started", s["started"]),
             ("finished", s["finished"]), ("cells in the data", s["cells"]),
             ("cells declared in sweep.json", s["cells_declared"]),
             ("cells per second (sweep)", s["cells_per_second"])]
    notes = []
    if s["cells_declared"] is not None and s["cells_declared"] != s["cells"]:
        notes.append(f"sweep.json declares {num(s['cells_declared'])} cells but the data holds "
                     f"{s['cells']:,}; this report covers the cells in the data.")
    if s["stale_law_cells"]:
        notes.append(f"The law columns stored with {s['stale_law_cells']:,} cells differ from "
                     "what reconsim.model.laws computes; the report recomputes them for every "
                     "cell.")
    axes = [(a, f["distinct"],
             ", ".join(plain(v) for v in f["values"]) if f["values"] is not None
             else f"{plain(f['min'])} … {plain(f['max'])}", f["nulls"])
            for a, f in summary["axes"].items()]
    schedules = [(name, ", ".join(f"{at}:{count}" for at, count in events) or "none")
                 for name, events in s["schedules"].items()]
    return Markup("").join([
        Markup('<section id="sweep"><h2>The sweep</h2>'),
        table(["", ""], facts),
        *(Markup("<p><strong>Note:</strong> {}</p>").format(n) for n in notes),
        Markup("<h3>Parameters</h3>"
               "<p>A null value is a parameter that does not apply to the row's controller "
               "(max_per_round: null is no cap).</p>"),
        table(["parameter", "distinct values", "values", "nulls"], axes),
        Markup("<h3>Death schedules</h3>"),
        table(["schedule", "deaths (second:copies)"], schedules),
        Markup("<details><summary>The sweep's spec</summary><pre>"),
        json.dumps(s["spec"], indent=2, sort_keys=True, ensure_ascii=False),
        Markup("</pre></details></section>"),
    ])


SECTION = Section("sweep", summarize, render)
