"""The sweep itself: what was run (``sweep.json``) beside what the data holds, each axis's
values, the death schedules and the spec."""

from __future__ import annotations

import json
from collections.abc import Mapping

from markupsafe import Markup

from reconsim.report.charts import Figure
from reconsim.report.section import Context, Section
from reconsim.web.html import num, plain, table


def render(summary: Context, context: Context, figures: Mapping[str, Figure]) -> Markup:
    """The sweep's identity, its axes, its schedules and its spec."""
    s = summary.sweep
    facts = [("name", s.name), ("reconsim version", s.version),
             ("spec hash", s.spec_hash), ("started", s.started),
             ("finished", s.finished), ("cells in the data", s.cells),
             ("cells declared in sweep.json", s.cells_declared),
             ("cells per second (sweep, compiling left out)", s.cells_per_second)]
    notes = []
    if s.cells_declared is not None and s.cells_declared != s.cells:
        notes.append(f"sweep.json declares {num(s.cells_declared)} cells but the data holds "
                     f"{s.cells:,}; this report covers the cells in the data.")
    if s.stale_law_cells:
        notes.append(f"The law columns stored with {s.stale_law_cells:,} cells differ from "
                     "what reconsim.model.laws computes; the report recomputes them for every "
                     "cell.")
    axes = [(a, f.distinct,
             ", ".join(plain(v) for v in f.values) if f.values is not None
             else f"{plain(f.min)} … {plain(f.max)}", f.nulls)
            for a, f in summary.axes.items()]
    declared = s.spec.get("schedule", {}) if isinstance(s.spec, dict) else {}
    schedules = [(name, (", ".join(f"{at}:{count}" for at, count in events) or "none")
                  + (" (one cell's: a random schedule's deaths differ from seed to seed)"
                     if "rate" in declared.get(name, {}) else ""))
                 for name, events in s.schedules.items()]
    return Markup("").join([
        table(["", ""], facts),
        *(Markup("<p><strong>Note:</strong> {}</p>").format(n) for n in notes),
        Markup("<h3>Parameters</h3>"
               "<p>A null value is a parameter that does not apply to the row's controller "
               "(max_per_round: null is no cap).</p>"),
        table(["parameter", "distinct values", "values", "nulls"], axes),
        Markup("<h3>Death schedules</h3>"),
        table(["schedule", "deaths (second:copies)"], schedules),
        Markup("<details><summary>The sweep's spec</summary><pre>"),
        json.dumps(s.spec, indent=2, sort_keys=True, ensure_ascii=False),
        Markup("</pre></details>"),
    ])


#: The sweep's facts and axes: summary.json's ``sweep`` and ``axes`` (the page's
#: :class:`~reconsim.report.section.Context`, computed once by :meth:`Context.of`).
SECTION = Section("sweep", Context.of, render, spread=True, title="The sweep",
                  lettered=False)
