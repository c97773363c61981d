"""The report page: what is measured, the verdicts at a glance, sections a to e, the sweep.

Every number on the page comes from the summary dict that is also written as
``summary.json``; the sections' words are in :mod:`reconsim.report.sections.boundary` (a, b, e)
and :mod:`reconsim.report.sections.controllers` (c, d).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from reconsim.model.params import CONTROLLERS, METRICS
from reconsim.report.charts import Figure
from reconsim.report.html import EMBED, STYLE, esc, num, pct, plain, share, table
from reconsim.report.sections.boundary import boundary_section, law_section, seed_section
from reconsim.report.sections.controllers import controllers_section, read_cost_section


def headline(summary: Mapping[str, Any]) -> list[str]:
    """The verdicts at a glance, one sentence each."""
    out = []
    law = summary["law"]
    if law["cells"] == 0:
        out.append("<a href=\"#law\">Overshoot law</a>: not checked (no ledger cells it "
                   "applies to).")
    elif law["mismatches"] == 0:
        out.append(f"<a href=\"#law\">Overshoot law</a>: holds on all {law['cells']:,} ledger "
                   "cells it applies to.")
    else:
        c = law["causes"]
        out.append(f"<a href=\"#law\">Overshoot law</a>: <strong>fails on "
                   f"{law['mismatches']:,} of {law['cells']:,} ledger cells "
                   f"({share(law['mismatches'], law['cells'])})</strong>: "
                   f"{c['zero_delay']['cells']:,} with no delay (G + B = 0), "
                   f"{c['U_below_B']['cells']:,} with U &lt; B, "
                   f"{c['elsewhere']['cells']:,} elsewhere (U ≥ B, positive delay).")
    b = summary["boundary"]
    if b["cells"]:
        out.append(f"<a href=\"#boundary\">Boundary</a> (ledger): with U ≥ G + B, overshoot 0 "
                   f"in {b['above_zero']:,} of {b['above_cells']:,} cells; with U &lt; G + B, "
                   f"overshoot in {b['below_positive']:,} of {b['below_cells']:,}.")
    rc = summary["read_cost"]
    flat, inf = rc["flat"], rc["inflation"]
    text = "<a href=\"#reads\">Read cost</a>: "
    if flat["series"]:
        text += (f"without oscillation, reads per round move with U by at most "
                 f"{pct(flat['relative']['max'])}; ")
    if inf["with_level"]:
        text += (f"oscillation inflates them up to {num(inf['ratio']['max'], 2)}&times; "
                 f"(median {num(inf['ratio']['median'])}&times;); ")
    rows = rc["by_GB"]["rows"]
    if rows:
        at = sum(r["at_boundary"] for r in rows)
        text += (f"the fastest loop without overshoot is U = G + B for {at} of {len(rows)} "
                 "(G, B) pairs.")
    out.append(text.rstrip("; ") + ("" if text.endswith(".") else "."))
    c = summary["controllers"]
    if c["compared"]:
        f = c["facts"]
        out.append("<a href=\"#controllers\">Controllers</a>: no unneeded copies: "
                   f"{esc(', '.join(f['no_unneeded']) or 'none')}; never overshoots: "
                   f"{esc(', '.join(f['never_overshoot']) or 'none')}.")
    seed = summary["seed001"]
    if seed["compared"]:
        out.append(f"<a href=\"#seed\">Seed 001</a>: {seed['agree']:,} of {seed['compared']:,} "
                   "matching cells agree with every published figure.")
    else:
        out.append("<a href=\"#seed\">Seed 001</a>: the sweep holds none of its published cells.")
    return out


def intro(summary: Mapping[str, Any]) -> str:
    """What a reconciliation loop is, what G, U and B mean, and the controllers in the sweep."""
    rows = [(c, CONTROLLERS.get(c, "(no description in this version of reconsim)"))
            for c in summary["sweep"]["controllers"]]
    return "".join([
        '<section id="intro"><h2>What is measured</h2>',
        "<p>A <strong>reconciliation loop</strong> keeps a service at a desired number of "
        "copies. Every <strong>U</strong> seconds (a <em>round</em>) it compares the desired "
        "count with the ledger, a report of the running copies, and creates or deletes "
        "copies to close the gap. The ledger is late: a new copy starts running "
        "<strong>B</strong> seconds after it is created and appears on the ledger "
        "<strong>G</strong> seconds after that; a copy that dies leaves the ledger G seconds "
        "later. A controller that trusts only the ledger keeps seeing a shortfall it has "
        "already fixed, creates the same copies again and deletes them later: its "
        "<em>overshoot</em> is the most copies it ever runs beyond the desired count.</p>",
        "<p>Each <em>cell</em> of the sweep is one simulated run: a controller, G, U, B, the "
        "desired count, a death schedule (copies killed at scripted seconds) and a "
        "duration. The controllers in this sweep:</p>",
        table(["controller", "what it does"], rows),
        "<p>The sections below check seed 001's claims on every cell: (a) the overshoot law, "
        "(b) the boundary U ≥ G + B, (c) what a faster loop costs in reads, (d) the "
        "controllers side by side, (e) seed 001's own tables.</p>",
        "</section>",
    ])


def sweep_section(summary: Mapping[str, Any]) -> str:
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
    return "".join([
        '<section id="sweep"><h2>The sweep</h2>',
        table(["", ""], facts),
        *(f"<p><strong>Note:</strong> {n}</p>" for n in notes),
        "<h3>Parameters</h3>",
        "<p>A null value is a parameter that does not apply to the row's controller "
        "(max_per_round: null is no cap).</p>",
        table(["parameter", "distinct values", "values", "nulls"], axes),
        "<h3>Death schedules</h3>",
        table(["schedule", "deaths (second:copies)"], schedules),
        "<details><summary>The sweep's spec</summary><pre>",
        esc(json.dumps(s["spec"], indent=2, sort_keys=True, ensure_ascii=False)),
        "</pre></details></section>",
    ])


def definitions() -> str:
    """The metrics and derived figures, defined."""
    rows = [(m.name, m.help) for m in METRICS]
    rows += [("reads_per_second", "reads / (duration + 1): ledger entries read per second of "
              "the run"),
             ("wasted delete commands", "delete_commands \u2212 deleted: commands that killed "
              "nothing"),
             ("law_overshoot", "desired \u00d7 (⌈(G + B) / U⌉ \u2212 1) for the uncapped ledger "
              "controller; desired \u00d7 (⌈G / U⌉ \u2212 1) where observe = created"),
             ("law holds", "measured overshoot == law_overshoot"),
             ("above the boundary", "U ≥ G + B")]
    return ('<section id="definitions"><h2>Definitions</h2>'
            + table(["figure", "meaning"], rows) + "</section>")


def render_page(summary: Mapping[str, Any], figures: Sequence[Figure], bundle: str) -> str:
    """The whole report page, self-contained: ``bundle`` is the Vega/vega-embed JavaScript."""
    by_name = {f.name: f for f in figures}
    name = esc(summary["sweep"]["name"])
    glance = "".join(f"<li>{line}</li>" for line in headline(summary))
    return "".join([
        '<!doctype html><html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>reconsim report: {name}</title><style>{STYLE}</style>",
        f"<script>{bundle}</script></head><body>",
        f"<h1>Reconciliation-loop sweep: {name}</h1>",
        f'<p class="meta">{summary["sweep"]["cells"]:,} cells · reconsim '
        f'{esc(summary["sweep"]["version"])} · spec {esc(summary["sweep"]["spec_hash"])}</p>',
        intro(summary),
        f'<section id="glance"><h2>Verdicts at a glance</h2><ul>{glance}</ul></section>',
        law_section(summary, by_name),
        boundary_section(summary, by_name),
        read_cost_section(summary, by_name),
        controllers_section(summary, by_name),
        seed_section(summary),
        sweep_section(summary),
        definitions(),
        "<footer><p>The same figures are in <a href=\"summary.json\">summary.json</a>; every "
        'chart is in <a href="figures/">figures/</a> as SVG and PNG.</p></footer>',
        f"<script>{EMBED}</script></body></html>\n",
    ])
