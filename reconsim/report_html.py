"""The report's HTML: the verdicts put into words and the charts embedded, from the summary.

Every number on the page comes from the summary dict that is also written as
``summary.json``. Every string that comes from a spec or the data (the sweep's
name, schedule names, parameter values) is escaped. The page is self-contained:
Vega, Vega-Lite and vega-embed are inlined, nothing is fetched from the network.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from reconsim.params import CONTROLLERS, METRICS
from reconsim.report_charts import Figure
from reconsim.report_data import describe

LAW_TEXT: Final = "desired &times; (&lceil;(G + B) / U&rceil; &minus; 1)"

STYLE: Final = """
body { font: 15px/1.5 system-ui, sans-serif; color: #1d2430; max-width: 72rem;
       margin: 2rem auto; padding: 0 1.5rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { margin-top: 2.5rem;
  border-bottom: 1px solid #d5dbe3; padding-bottom: .2rem; }
.meta { color: #5a6472; margin-top: 0; }
table { border-collapse: collapse; margin: .8rem 0; font-size: 13px; }
th, td { border: 1px solid #d5dbe3; padding: .2rem .5rem; text-align: left;
         vertical-align: top; }
th { background: #f1f4f8; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.verdict { border-left: 4px solid #8a96a8; background: #f6f8fa; padding: .6rem 1rem; }
.verdict.holds { border-color: #2f8f46; } .verdict.fails { border-color: #d4380d; }
figure { margin: 1rem 0; overflow-x: auto; } figcaption { font-size: 13px; color: #5a6472; }
code, pre { font-size: 13px; } pre { background: #f6f8fa; padding: .6rem; overflow-x: auto; }
.chart-error { color: #d4380d; }
"""

EMBED: Final = """
(function () {
  const charts = Array.from(document.querySelectorAll("div.chart"));
  const jobs = charts.map(function (el) {
    const spec = JSON.parse(document.getElementById("spec-" + el.dataset.figure).textContent);
    return vegaEmbed(el, spec, {renderer: "svg", actions: false}).then(function () {
      el.dataset.rendered = "yes";
    });
  });
  Promise.allSettled(jobs).then(function (results) {
    const failed = results.filter(function (r) { return r.status === "rejected"; });
    failed.forEach(function (r, i) {
      console.error("chart failed to render:", r.reason);
    });
    document.body.dataset.charts = failed.length ? "failed" : "rendered";
  });
})();
"""


def esc(value: Any) -> str:
    """Any value as escaped HTML text (``None`` shows as ``null``)."""
    return html.escape("null" if value is None else str(value))


def _plain(value: Any) -> str:
    """A value as plain (unescaped) text; ``None`` shows as ``null``."""
    return "null" if value is None else str(value)


def num(value: Any) -> str:
    """A figure as text: thousands separated, floats to at most three decimals."""
    if isinstance(value, bool) or value is None:
        return esc(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if value != int(value) else f"{value:,.0f}"
    return esc(value)


def share(part: int, whole: int) -> str:
    """``part`` of ``whole`` as a percentage that never rounds a nonzero part to 0 or 100."""
    if whole == 0:
        return "n/a"
    pct = 100 * part / whole
    if 0 < pct < 0.1:
        return "< 0.1%"
    if 99.9 < pct < 100:
        return "> 99.9%"
    return f"{pct:.1f}%"


def script_json(data: Any) -> str:
    """JSON safe to place inside a ``<script>`` element: no ``<``, ``>`` or ``&`` survive."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def table(head: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """An HTML table; numbers right-aligned, everything escaped."""
    out = ["<table><thead><tr>", *(f"<th>{esc(h)}</th>" for h in head), "</tr></thead><tbody>"]
    for row in rows:
        out.append("<tr>")
        for cell in row:
            cls = ' class="num"' if isinstance(cell, (int, float)) and not isinstance(cell, bool) \
                else ""
            out.append(f"<td{cls}>{num(cell)}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def fixed_text(fixed: Mapping[str, Any]) -> str:
    """``axis = value`` pairs of a slice, escaped."""
    return esc(describe(fixed))


def cell_text(cell: Mapping[str, Any], axes: Iterable[str]) -> str:
    """A cell's parameters, ``G = 0, U = 5, ...``, escaped; null ones (not applicable) left out."""
    return ", ".join(f"{esc(a)} = {esc(cell[a])}" for a in axes
                     if a in cell and cell[a] is not None)


def where_rows(where: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """One row per axis: the values the cells have, each as ``value: cells of all``."""
    rows = []
    for w in where:
        if w["truncated"]:
            text = (f"{w['distinct']:,} distinct values from {w['min']} to {w['max']} "
                    "(too many to list)")
        else:
            text = ", ".join(f"{v['value'] if v['value'] is not None else 'null'}: "
                             f"{v['cells']:,} of {v['of']:,}" for v in w["values"])
        rows.append((w["axis"], text))
    return rows


def where_table(where: Sequence[Mapping[str, Any]], what: str, among: str = "cells") -> str:
    """The :func:`where_rows` as a table, headed by what is counted among what."""
    return table(["parameter", f"value: {what} of all {among} with that value"],
                 where_rows(where))


def examples_table(examples: Sequence[Mapping[str, Any]]) -> str:
    """Example cells in full, one row each."""
    if not examples:
        return ""
    head = list(examples[0])
    return table(head, ([e[h] for h in head] for e in examples))


def folded(content: str, rows: int, what: str, limit: int = 12) -> str:
    """``content`` as is, or folded under a summary line when it has more than ``limit`` rows."""
    if rows <= limit:
        return content
    return f"<details><summary>{rows:,} {esc(what)}</summary>{content}</details>"


def verdict(kind: str, paragraphs: Iterable[str]) -> str:
    """Paragraphs in a verdict box; ``kind`` is ``holds``, ``fails`` or ``none``."""
    return f'<div class="verdict {kind}">' + "".join(f"<p>{p}</p>" for p in paragraphs) + "</div>"


# -- section a: the overshoot law ------------------------------------------------------------


def law_paragraphs(law: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The law's verdict in words: its kind and its paragraphs."""
    n, fails = law["cells"], law["fails"]
    skipped = (f" {law['not_applicable']:,} further ledger cells are outside the law "
               "(reconsim.laws gives it no value there) and not checked."
               if law["not_applicable"] else "")
    if n == 0:
        return "none", ["This sweep has no ledger-controller cells the law applies to, so the "
                        f"law is not checked.{skipped}"]
    if fails == 0:
        return "holds", [f"<strong>The law holds on all {n:,} ledger cells</strong>: on every "
                         f"one, the measured overshoot equals {LAW_TEXT}.{skipped}"]
    out = [f"<strong>The law fails on {fails:,} of {n:,} ledger cells "
           f"({share(fails, n)})</strong>; it holds on the other {law['holds']:,}.{skipped}",
           f"On {law['measured_above_law']:,} failing cells the measured overshoot is larger "
           f"than the law's, on {law['measured_below_law']:,} smaller; measured minus law "
           f"ranges from {law['difference_min']:,} to {law['difference_max']:,}."]
    if law["law_negative"]:
        out.append(f"On {law['law_negative']:,} of the failing cells the law's value is "
                   "negative, which no run can match since overshoot is never below 0: the "
                   "ceiling is 0 there (G + B = 0, or G = 0 for copies listed at creation).")
    out.append("Where the failing cells are, parameter by parameter, is tabulated below.")
    return "fails", out


def law_section(summary: Mapping[str, Any], figures: Mapping[str, Figure]) -> str:
    """Section a: the law, its chart, its verdict and where it fails."""
    law = summary["law"]
    kind, paragraphs = law_paragraphs(law)
    parts = [
        '<section id="law"><h2>a. The overshoot law</h2>',
        "<p>Seed 001 found that the ledger controller, which trusts only the late ledger, "
        f"overshoots by <code>{LAW_TEXT}</code> copies: ⌈(G + B) / U⌉ is the number of rounds "
        "that run between creating a copy and seeing it on the ledger, and every round after "
        "the first one creates the same missing copies again. Seed 001 measured it on 56 cells "
        "with B = 5 s, six copies and two deaths at second 300. Here it is compared with the "
        "measured overshoot on every ledger cell it covers: as <code>reconsim.laws</code> "
        "states it, the law speaks of the ledger controller without a cap on corrections per "
        "round, and for copies that reach the ledger at creation (observe = created) it reads "
        "&lceil;G / U&rceil; for &lceil;(G + B) / U&rceil;.</p>",
        verdict(kind, paragraphs),
        figure_html(figures["law"]),
    ]
    if law["fails"]:
        parts += [
            "<h3>Where the law fails</h3>", where_table(law["where"], "failing cells"),
            "<h3>Failing cells by death schedule</h3>",
            "<p>Per schedule: failing cells of all ledger cells with that schedule, and the "
            "range of each parameter among the failing ones (lowest &ndash; highest, distinct "
            "values).</p>",
            folded(by_group_table(law["by_schedule"]), len(law["by_schedule"]), "schedules"),
            "<h3>The largest differences</h3>", examples_table(law["examples"]),
        ]
    parts += [
        "<p>The measured overshoot itself, on one slice of the sweep, with the cells where "
        "the law fails outlined:</p>",
        figure_html(figures["overshoot"]),
        "</section>",
    ]
    return "".join(parts)


def by_group_table(groups: Sequence[Mapping[str, Any]]) -> str:
    """One row per group: its key, its counts and each parameter's range among its cells."""
    if not groups:
        return ""
    keys = list(groups[0]["key"])
    axes = list(groups[0]["ranges"])
    rows = []
    for g in groups:
        ranges = []
        for a in axes:
            r = g["ranges"][a]
            lo, hi = r["min"], r["max"]
            text = _plain(lo) if lo == hi else f"{_plain(lo)} \u2013 {_plain(hi)}"
            ranges.append(f"{text} ({r['distinct']})" if r["distinct"] > 1 else text)
        rows.append([*(g["key"][k] for k in keys), f"{g['cells']:,} of {g['of']:,}", *ranges])
    return table([*keys, "failing of all", *axes], rows)


# -- section b: the boundary -----------------------------------------------------------------


def claim_paragraphs(claim: Mapping[str, Any]) -> tuple[str, list[str]]:
    """Seed 001's boundary claim against the covered ledger cells, in words."""
    above, below = claim["above"], claim["below"]
    skipped = (f" {claim['not_covered']:,} other ledger cells are outside it (the law gives "
               "them no value, or their copies reach the ledger at creation)."
               if claim["not_covered"] else "")
    if claim["cells"] == 0:
        return "none", [f"No ledger cell is covered by the claim, so it is not checked.{skipped}"]
    out = [f"Checked on the {claim['cells']:,} ledger cells the law covers.{skipped}"]
    text = (f"Above the boundary (U ≥ G + B) overshoot is zero on "
            f"{above['overshoot_zero']:,} of {above['cells']:,} cells")
    out.append(text + (f" and positive on {above['overshoot_positive']:,}."
                       if above["overshoot_positive"] else "."))
    text = (f"Below it (U &lt; G + B) overshoot is positive on {below['overshoot_positive']:,} "
            f"of {below['cells']:,} cells and zero on {below['overshoot_zero']:,}")
    if below["overshoot_zero"]:
        text += (f" ({below['zero_with_desired_0']:,} of those with desired = 0, "
                 f"{below['zero_with_desired_positive']:,} with desired &gt; 0)")
    out.append(text + ".")
    if claim["unclassified"]:
        out.append(f"{claim['unclassified']:,} cells have no value for U ≥ G + B and are "
                   "counted on neither side.")
    if claim["exceptions"]:
        out.append(f"<strong>The claim fails on {claim['exceptions']:,} cells</strong>: "
                   f"{above['overshoot_positive']:,} overshoot although U ≥ G + B, "
                   f"{below['zero_with_desired_positive']:,} do not although U &lt; G + B "
                   "and desired &gt; 0.")
        return "fails", out
    out.append("<strong>The claim holds on every one of them.</strong>")
    return "holds", out


def controller_paragraph(c: Mapping[str, Any]) -> str:
    """One controller's overshoot, over all its cells, in words."""
    above, below = c["above"], c["below"]
    text = (f"<strong>{esc(c['controller'])}</strong>: overshoot is positive on "
            f"{c['overshoot_positive']:,} of {c['cells']:,} cells "
            f"({above['overshoot_positive']:,} of {above['cells']:,} with U ≥ G + B, "
            f"{below['overshoot_positive']:,} of {below['cells']:,} with U &lt; G + B).")
    largest = c["largest"]
    if largest is not None:
        text += (f" Largest: {largest['overshoot']:,}, at "
                 f"{cell_text(largest, [k for k in largest if k != 'overshoot'])}.")
    text += (f" Cells creating unneeded copies: {c['unneeded_positive']:,}; delete commands "
             f"that killed nothing (delete_commands &minus; deleted): "
             f"{c['wasted_delete_commands']:,} of {c['delete_commands']:,}.")
    return text


def boundary_section(summary: Mapping[str, Any], figures: Mapping[str, Figure]) -> str:
    """Section b: where overshoot happens against U = G + B: the claim, then per controller."""
    boundary = summary["boundary"]
    claim = boundary["claim"]
    kind, paragraphs = claim_paragraphs(claim)
    above, below = claim["above"], claim["below"]
    parts = [
        '<section id="boundary"><h2>b. The boundary U ≥ G + B, controller by controller</h2>',
        "<p>By the law, the ledger controller stops overshooting once the loop period U is "
        "at least G + B: a copy then reaches the ledger before the next round looks. Seed "
        "001's claim is that it overshoots exactly below that line (for desired &gt; 0). "
        "The chart counts every cell of every controller on each side of it.</p>",
        figure_html(figures["boundary"]),
        "<h3>Seed 001's claim, ledger controller</h3>",
        verdict(kind, paragraphs),
    ]
    if above["where_positive"]:
        parts += ["<p>Where overshoot is positive although U ≥ G + B:</p>",
                  where_table(above["where_positive"], "such cells"),
                  examples_table(above["examples"])]
    if below["where_zero_desired_positive"]:
        parts += ["<p>Where overshoot is zero although U &lt; G + B (desired &gt; 0):</p>",
                  where_table(below["where_zero_desired_positive"], "such cells"),
                  examples_table(below["examples"])]
    parts.append("<h3>Every controller, every cell</h3>")
    rows = []
    for c in boundary["controllers"]:
        parts.append(f"<p>{controller_paragraph(c)}</p>")
        if c["controller"] != "ledger" and c["where_positive"]:
            parts += [f"<p>{esc(c['controller'])}: where overshoot is positive</p>",
                      where_table(c["where_positive"], "overshooting cells")]
        rows.append([c["controller"], c["cells"], c["above"]["cells"],
                     c["above"]["overshoot_positive"], c["below"]["cells"],
                     c["below"]["overshoot_positive"], c["max_overshoot"],
                     c["unneeded_positive"], c["wasted_delete_commands"]])
    parts += [
        table(["controller", "cells", "cells with U ≥ G + B", "of those, overshoot > 0",
               "cells with U < G + B", "of those, overshoot > 0", "largest overshoot",
               "cells with unneeded copies", "delete commands that killed nothing"], rows),
        "</section>",
    ]
    return "".join(parts)


# -- section c: read cost --------------------------------------------------------------------


def _trend(a: float, b: float) -> str:
    return "falls" if b < a else "rises" if b > a else "stays"


def read_cost_section(summary: Mapping[str, Any], figures: Mapping[str, Figure]) -> str:
    """Section c: reads per round and per second against the loop period."""
    rc = summary["read_cost"]
    paragraphs = []
    for c in rc["per_controller"]:
        a, b = c["reads_per_second_at_U_min"], c["reads_per_second_at_U_max"]
        ra, rb = c["reads_per_round_at_U_min"], c["reads_per_round_at_U_max"]
        paragraphs.append(
            f"<strong>{esc(c['controller'])}</strong>: from U = {c['U_min']} to U = "
            f"{c['U_max']} s, reads per second {_trend(a, b)} from {num(a)} to {num(b)}, and "
            f"reads per round {_trend(ra, rb)} from {num(ra)} to {num(rb)}.")
    if not rc["per_controller"]:
        paragraphs.append("The slice is empty.")
    series, rising = rc["series"], rc["rising"]
    if series == 0:
        paragraphs.append("No two cells of the sweep differ only in U, so no trend in U is "
                          "checked over the whole table.")
    elif rising == 0:
        paragraphs.append(f"<strong>Over the whole table</strong>, in all {series:,} series of "
                          "cells that differ only in U, reads per second never rises as U "
                          "grows.")
    else:
        paragraphs.append(f"<strong>Over the whole table</strong>, {rising:,} of {series:,} "
                          "series of cells that differ only in U have reads per second rising "
                          "somewhere as U grows; the others never rise.")
    kind = "none" if series == 0 else "holds" if rising == 0 else "fails"
    parts = [
        '<section id="reads"><h2>c. Read cost</h2>',
        "<p>Every round, the loop reads the whole ledger: the service's own entries plus "
        "<code>ledger_base</code> entries of other services. <code>reads</code> sums them "
        "over the run; <code>reads_per_round</code> = reads / rounds; and "
        "<strong><code>reads_per_second</code> = reads / (duration + 1)</strong>, a run "
        "covering the seconds 0 … duration. A run has ⌊duration / U⌋ + 1 rounds.</p>",
        f"<p>The chart shows one slice of the sweep: {fixed_text(rc['fixed'])} (seed 001's "
        "values where the sweep has them, else each parameter's most common value).</p>",
        figure_html(figures["read_cost"]),
        verdict(kind, paragraphs),
    ]
    if rc["where_rising"]:
        parts += ["<p>Where the rising series are:</p>",
                  where_table(rc["where_rising"], "rising series", among="series")]
    points = rc["points"]
    if points:
        head = list(points[0])
        parts += ["<details><summary>The slice's cells</summary>",
                  table(head, ([p[h] for h in head] for p in points)), "</details>"]
    parts.append("</section>")
    return "".join(parts)


# -- section d: seed 001 ---------------------------------------------------------------------


def seed_paragraphs(seed: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The sweep's seed 001 cells against the published figures, in words."""
    if seed["found"] == 0:
        return "none", [f"The sweep has no cell in seed 001's setting for any of the "
                        f"{seed['published']} published rows (B = 5, desired = 6, duration "
                        "900, two copies dying at second 300, the model's defaults "
                        "otherwise), so none is compared."]
    names = ", ".join(esc(s) for s in seed["schedules"])
    text = (f"The sweep has cells for {seed['found']} of the {seed['published']} rows seed "
            f"001 publishes (schedule {names}); {seed['compared']:,} sweep cells are compared "
            "with them. ")
    if seed["disagree"] == 0:
        return "holds", [text + "<strong>Every one agrees with every figure published "
                         "for it.</strong>"]
    return "fails", [text + f"<strong>{seed['disagree']:,} disagree</strong> with a published "
                     "figure (listed below)."]


def seed_section(summary: Mapping[str, Any]) -> str:
    """Section d: seed 001's published figures beside the sweep's."""
    seed = summary["seed001"]
    kind, paragraphs = seed_paragraphs(seed)
    parts = ['<section id="seed"><h2>d. Seed 001\'s published figures</h2>',
             "<p>Seed 001 published three tables: a scan of G (U = 15, both controllers), a "
             "scan of U (G = 30, ledger) and a 7 &times; 8 overshoot table. Where the sweep ran "
             "the same cells, its figures are compared with the published ones.</p>",
             verdict(kind, paragraphs)]
    rows = [[d["experiment"], d["controller"], d["G"], d["U"], d["schedule"], figure,
             v["published"], v["measured"]]
            for d in seed["disagreements"] for figure, v in d["figures"].items()]
    if rows:
        parts.append(table(["experiment", "controller", "G", "U", "schedule", "figure",
                            "published", "measured"], rows))
    parts.append("</section>")
    return "".join(parts)


# -- the page --------------------------------------------------------------------------------


def figure_html(fig: Figure) -> str:
    """A chart's container, its spec as JSON, a fallback image and links to its files."""
    return (f'<figure><div class="chart" id="chart-{fig.name}" data-figure="{fig.name}">'
            f'<noscript><img src="figures/{fig.name}.svg" alt="{esc(fig.title)}"></noscript>'
            f'</div><script type="application/json" id="spec-{fig.name}">'
            f"{script_json(fig.spec)}</script>"
            f'<figcaption>{esc(fig.title)}: <a href="figures/{fig.name}.svg">SVG</a>, '
            f'<a href="figures/{fig.name}.png">PNG</a>. Hover a mark for its cells\' '
            "figures.</figcaption></figure>")


def headline(summary: Mapping[str, Any]) -> list[str]:
    """The verdicts at a glance, one sentence each."""
    law = summary["law"]
    out = []
    if law["cells"]:
        out.append(f"Overshoot law: holds on {law['holds']:,} of {law['cells']:,} ledger cells"
                   + (f", fails on {law['fails']:,}." if law["fails"] else " (all)."))
    else:
        out.append("Overshoot law: not checked (no ledger cells).")
    claim = summary["boundary"]["claim"]
    if claim["cells"]:
        out.append("Boundary (ledger overshoots exactly when U &lt; G + B): "
                   + (f"fails on {claim['exceptions']:,} of {claim['cells']:,} cells."
                      if claim["exceptions"] else f"holds on all {claim['cells']:,} cells."))
    for c in summary["boundary"]["controllers"]:
        out.append(f"{esc(c['controller'])}: overshoot positive on "
                   f"{c['overshoot_positive']:,} of {c['cells']:,} cells; largest "
                   f"{num(c['max_overshoot'])}.")
    rc = summary["read_cost"]
    if rc["series"]:
        out.append(f"Read cost: reads per second never rises with U in "
                   f"{rc['series'] - rc['rising']:,} of {rc['series']:,} series.")
    seed = summary["seed001"]
    if seed["compared"]:
        out.append(f"Seed 001: {seed['agree']:,} of {seed['compared']:,} matching cells agree "
                   "with every published figure.")
    else:
        out.append("Seed 001: the sweep holds none of its published cells.")
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
                     "what reconsim.laws computes; this report recomputes them for every cell.")
    axes = [(a, f["distinct"],
             ", ".join(_plain(v) for v in f["values"]) if f["values"] is not None
             else f"{_plain(f['min'])} … {_plain(f['max'])}", f["nulls"])
            for a, f in summary["axes"].items()]
    schedules = [(name, ", ".join(f"{at}:{count}" for at, count in events) or "none")
                 for name, events in s["schedules"].items()]
    return "".join([
        '<section id="sweep"><h2>The sweep</h2>',
        table(["", ""], facts),
        *(f"<p><strong>Note:</strong> {n}</p>" for n in notes),
        "<h3>Parameters</h3>", table(["parameter", "distinct values", "values", "nulls"], axes),
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
             ("law_overshoot", f"{LAW_TEXT}, for the ledger controller"),
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
        seed_section(summary),
        sweep_section(summary),
        definitions(),
        "<footer><p>The same figures are in <a href=\"summary.json\">summary.json</a>; every "
        'chart is in <a href="figures/">figures/</a> as SVG and PNG.</p></footer>',
        f"<script>{EMBED}</script></body></html>\n",
    ])


# -- the index of sweeps ---------------------------------------------------------------------


def render_index(entries: Sequence[Mapping[str, Any]]) -> str:
    """The results index: one row per sweep directory, linking its report when it has one.

    Each entry has ``dir`` (the folder's name), and either ``summary`` (its summary.json)
    or ``note`` (why there is no report to link).
    """
    rows = []
    for e in entries:
        d = esc(e["dir"])
        if "summary" not in e:
            rows.append(f"<tr><td>{d}</td><td colspan=\"5\">{esc(e['note'])}</td></tr>")
            continue
        s = e["summary"]
        law, seed = s["law"], s["seed001"]
        law_text = (f"holds on {law['holds']:,} of {law['cells']:,}"
                    + (f", <strong>fails on {law['fails']:,}</strong>" if law["fails"] else "")
                    if law["cells"] else "not checked")
        overshoot = "; ".join(f"{esc(c['controller'])}: {c['overshoot_positive']:,}"
                              for c in s["boundary"]["controllers"])
        seed_text = (f"{seed['agree']:,} of {seed['compared']:,} agree" if seed["compared"]
                     else "none in the sweep")
        href = html.escape(f"{e['dir']}/report.html", quote=True)
        rows.append(f'<tr><td><a href="{href}">{esc(s["sweep"]["name"])}</a> ({d})</td>'
                    f'<td class="num">{s["sweep"]["cells"]:,}</td><td>{law_text}</td>'
                    f"<td>{overshoot}</td><td>{seed_text}</td>"
                    f"<td>{esc(s['sweep']['finished'])}</td></tr>")
    body = "".join(rows) or '<tr><td colspan="6">No sweeps yet.</td></tr>'
    return "".join([
        '<!doctype html><html lang="en"><head><meta charset="utf-8">',
        f"<title>reconsim results</title><style>{STYLE}</style></head><body>",
        "<h1>reconsim results</h1>",
        f"<p>One row per sweep. The overshoot law is {LAW_TEXT}, checked "
        "on every ledger-controller cell; cells with overshoot &gt; 0 are counted per "
        "controller; seed 001 counts the sweep's cells that seed 001 published and how many "
        "agree with every published figure.</p>",
        "<table><thead><tr><th>sweep</th><th>cells</th><th>overshoot law (ledger cells)</th>"
        "<th>cells with overshoot &gt; 0</th><th>seed 001</th><th>finished</th></tr></thead>",
        f"<tbody>{body}</tbody></table></body></html>\n",
    ])
