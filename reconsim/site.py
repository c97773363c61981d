"""The results index: one row per sweep folder, linking its report with its headline figures
(the page is ``templates/index.html``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from markupsafe import Markup

from reconsim.model.laws import BOUNDARY, LAW_FORMULA
from reconsim.report.html import num, pct, render


def read_cost_brief(rc: Mapping[str, Any]) -> Markup:
    """A sweep's read cost in brief: flat without oscillation, inflated with it, and the
    fastest loop without overshoot (``—`` when the sweep answers none of these)."""
    flat, rows = rc["flat"], rc["by_GB"]["rows"]
    reads = []
    if flat["series"]:
        reads.append(Markup("flat within {} without oscillation").format(
            pct(flat["relative"]["max"])))
    if rc["inflation"]["with_level"]:
        reads.append(Markup("up to {}&times; with it").format(
            num(rc["inflation"]["ratio"]["max"], 2)))
    if rows:
        reads.append(Markup("fastest U without overshoot = G + B for {} of {} (G, B)").format(
            sum(r["at_boundary"] for r in rows), len(rows)))
    return Markup("; ").join(reads) or Markup("—")


def render_index(entries: Sequence[Mapping[str, Any]], history: str | None = None) -> str:
    """The results index: one row per sweep directory, linking its report when it has one,
    and the benchmarks' history page at ``history`` (a relative link) when there is one.

    Each entry has ``dir`` (the folder's name), and either ``summary`` (its summary.json)
    or ``note`` (why there is no report to link).
    """
    rows = [{**e, "reads": read_cost_brief(e["summary"]["read_cost"])} if "summary" in e
            else dict(e) for e in entries]
    return render("index.html", rows=rows, law_formula=LAW_FORMULA["ready"],
                  boundary=BOUNDARY, history=history)
