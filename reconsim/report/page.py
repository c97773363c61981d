"""The report page: what is measured, the verdicts at a glance, each section in order,
and the definitions.

:data:`SECTIONS` is the page: each entry is one module of :mod:`reconsim.report.sections`
that owns its numbers, charts and words. Every number on the page comes from the summary
that is also written as ``summary.json``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from reconsim.model.laws import BOUNDARY, LAW_FORMULA, LAW_SCOPE
from reconsim.model.params import CONTROLLERS, METRICS
from reconsim.report.charts import Figure
from reconsim.report.html import EMBED, STYLE, esc, table
from reconsim.report.section import Section, Summary
from reconsim.report.sections import boundary, controllers, law, read_cost, seed, sweep


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




def definitions() -> str:
    """The metrics and derived figures, defined."""
    rows = [(m.name, m.help) for m in METRICS]
    rows += [("reads_per_second", "reads / (duration + 1): ledger entries read per second of "
              "the run"),
             ("wasted delete commands", "delete_commands \u2212 deleted: commands that killed "
              "nothing"),
             ("law_overshoot", f"{LAW_FORMULA['ready']} for {LAW_SCOPE}; "
              f"{LAW_FORMULA['created']} where observe = created"),
             ("law holds", "measured overshoot == law_overshoot"),
             ("above the boundary", BOUNDARY)]
    return ('<section id="definitions"><h2>Definitions</h2>'
            + table(["figure", "meaning"], rows) + "</section>")


#: The report's sections, in page order.
SECTIONS: Final[tuple[Section, ...]] = (
    law.SECTION,
    boundary.SECTION,
    read_cost.SECTION,
    controllers.SECTION,
    seed.SECTION,
    sweep.SECTION,
)


def render_page(summary: Summary, figures: Sequence[Figure], bundle: str) -> str:
    """The whole report page, self-contained: ``bundle`` is the Vega/vega-embed JavaScript."""
    by_name = {f.name: f for f in figures}
    name = esc(summary["sweep"]["name"])
    glance = "".join(f"<li>{line}</li>" for s in SECTIONS
                     if (line := s.glance(summary)) is not None)
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
        *(s.render(summary, by_name) for s in SECTIONS),
        definitions(),
        "<footer><p>The same figures are in <a href=\"summary.json\">summary.json</a>; every "
        'chart is in <a href="figures/">figures/</a> as SVG and PNG.</p></footer>',
        f"<script>{EMBED}</script></body></html>\n",
    ])
