"""HTML building blocks of the report's pages: escaping, numbers, tables, verdict boxes, charts.

Every string that comes from a spec or the data (the sweep's name, schedule names,
parameter values) goes through :func:`esc` or :func:`num`. The page is self-contained:
a chart is its Vega-Lite spec in a JSON script element, drawn by the inlined
vega-embed (:data:`EMBED`); nothing is fetched from the network.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from reconsim.report.charts import Figure
from reconsim.report.data import describe

STYLE: Final = """
body { font: 15px/1.5 system-ui, sans-serif; color: #1d2430; max-width: 80rem;
       margin: 2rem auto; padding: 0 1.5rem; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { margin-top: 2.5rem;
  border-bottom: 1px solid #d5dbe3; padding-bottom: .2rem; }
.meta { color: #5a6472; margin-top: 0; }
table { border-collapse: collapse; margin: .8rem 0; font-size: 13px; }
th, td { border: 1px solid #d5dbe3; padding: .2rem .5rem; text-align: left;
         vertical-align: top; }
th { background: #f1f4f8; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.bad { background: #fde2d9; color: #a8071a; font-weight: 600; }
td.absent { color: #8a96a8; }
.verdict { border-left: 4px solid #8a96a8; background: #f6f8fa; padding: .6rem 1rem; }
.verdict.holds { border-color: #2f8f46; } .verdict.fails { border-color: #d4380d; }
.verdict p { margin: .4rem 0; }
.pair { display: flex; flex-wrap: wrap; gap: 1.5rem; align-items: flex-start; }
.pair > div > h4 { margin: .6rem 0 0; }
.pair table { font-size: 12px; } .pair th, .pair td { padding: .15rem .35rem; }
.scroll { max-height: 32rem; overflow: auto; }
figure { margin: 1rem 0; overflow-x: auto; } figcaption { font-size: 13px; color: #5a6472; }
code, pre { font-size: 13px; } pre { background: #f6f8fa; padding: .6rem; overflow-x: auto; }
"""

EMBED: Final = """
(function () {
  // Data marks drawn (role "mark", outside axes, legends and titles), SVG or canvas alike.
  function countMarks(mark) {
    let n = 0;
    (mark.items || []).forEach(function (item) {
      if (mark.marktype === "group") {
        (item.items || []).forEach(function (child) { n += countMarks(child); });
      } else if (mark.role === "mark") {
        n += 1;
      }
    });
    return n;
  }
  const charts = Array.from(document.querySelectorAll("div.chart"));
  const jobs = charts.map(function (el) {
    const spec = JSON.parse(document.getElementById("spec-" + el.dataset.figure).textContent);
    return vegaEmbed(el, spec, {renderer: el.dataset.renderer || "svg", actions: false})
      .then(function (result) {
        el.dataset.marks = String(countMarks(result.view.scenegraph().root));
        el.dataset.rendered = "yes";
      });
  });
  Promise.allSettled(jobs).then(function (results) {
    const failed = results.filter(function (r) { return r.status === "rejected"; });
    failed.forEach(function (r) { console.error("chart failed to render:", r.reason); });
    document.body.dataset.charts = failed.length ? "failed" : "rendered";
  });
})();
"""

#: Charts with more marks than this are drawn on a canvas rather than as SVG elements.
CANVAS_MARKS: Final = 4000


def esc(value: Any) -> str:
    """Any value as escaped HTML text (``None`` shows as ``null``)."""
    return html.escape("null" if value is None else str(value))


def plain(value: Any) -> str:
    """A value as plain (unescaped) text; ``None`` shows as ``null``."""
    return "null" if value is None else str(value)


def num(value: Any, digits: int = 3) -> str:
    """A figure as text: thousands separated, floats to at most ``digits`` decimals."""
    if isinstance(value, bool) or value is None:
        return esc(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value == int(value):
            return f"{value:,.0f}"
        return f"{value:,.{digits}f}".rstrip("0").rstrip(".")
    return esc(value)


def pct(fraction: float | None, digits: int = 1) -> str:
    """A fraction (0.079) as a percentage (7.9%)."""
    return "n/a" if fraction is None else f"{100 * fraction:.{digits}f}%"


def share(part: int, whole: int) -> str:
    """``part`` of ``whole`` as a percentage that never rounds a nonzero part to 0 or 100."""
    if whole == 0:
        return "n/a"
    p = 100 * part / whole
    if 0 < p < 0.1:
        return "< 0.1%"
    if 99.9 < p < 100:
        return "> 99.9%"
    return f"{p:.1f}%"


def script_json(data: Any) -> str:
    """JSON safe to place inside a ``<script>`` element: no ``<``, ``>`` or ``&`` survive."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class Cell:
    """A table cell with a CSS class (``bad``, ``absent``) beside its value."""

    def __init__(self, value: Any, cls: str = "", text: str | None = None) -> None:
        """``value`` shown as ``text`` (trusted HTML) if given, else as :func:`num` shows it."""
        self.value, self.cls, self.text = value, cls, text


def table(head: Sequence[str], rows: Iterable[Sequence[Any]], missing: str = "null") -> str:
    """An HTML table; numbers right-aligned, everything escaped (a :class:`Cell`'s ``text``
    is trusted HTML), ``None`` shown as ``missing``."""
    out = ["<table><thead><tr>", *(f"<th>{esc(h)}</th>" for h in head), "</tr></thead><tbody>"]
    for row in rows:
        out.append("<tr>")
        for item in row:
            classes, text, value = [], None, item
            if isinstance(item, Cell):
                if item.cls:
                    classes.append(item.cls)
                value, text = item.value, item.text
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                classes.append("num")
            cls = f' class="{" ".join(classes)}"' if classes else ""
            shown = esc(missing) if value is None and text is None else (
                num(value) if text is None else text)
            out.append(f"<td{cls}>{shown}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def constant_axes(summary: Mapping[str, Any]) -> set[str]:
    """The axes that take a single value in the whole sweep (not worth repeating)."""
    return {a for a, f in summary["axes"].items() if f["distinct"] <= 1}


def cells_text(n: int) -> str:
    """``n cells`` (``1 cell``), thousands separated."""
    return f"{n:,} cell" + ("" if n == 1 else "s")


def key_text(row: Mapping[str, Any], skip: Iterable[str], hide: Iterable[str] = ()) -> str:
    """A series' or cell's parameters in words; nulls (not applicable) and the keys in
    ``skip`` and ``hide`` left out."""
    left_out = {*skip, *hide}
    return ", ".join(f"{esc(k)} = {num(v)}" for k, v in row.items()
                     if k not in left_out and v is not None)


def fixed_text(fixed: Mapping[str, Any], hide: Iterable[str] = (),
               controller: str | None = None) -> str:
    """``axis = value`` pairs of a slice, escaped; axes in ``hide`` left out, and nulls of
    parameters that do not apply (see :func:`reconsim.report.data.describe`)."""
    hidden = set(hide)
    text = describe({a: v for a, v in fixed.items() if a not in hidden}, controller)
    return esc(text) if text else "the whole sweep"


def where_rows(where: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """One row per axis that varies among the population: the values the cells have, each
    as ``value: cells of all``."""
    rows = []
    for w in where:
        if w["distinct_in_population"] <= 1:
            continue
        if w["truncated"]:
            text = (f"{w['distinct']:,} distinct values from {plain(w['min'])} to "
                    f"{plain(w['max'])} (too many to list)")
        else:
            text = ", ".join(f"{plain(v['value'])}: {v['cells']:,} of {v['of']:,}"
                             for v in w["values"])
        rows.append((w["axis"], text))
    return rows


def where_table(where: Sequence[Mapping[str, Any]], what: str, among: str = "cells") -> str:
    """The :func:`where_rows` as a table, headed by what is counted among what."""
    return table(["parameter", f"value: {what} of all {among} with that value"],
                 where_rows(where))


def where_sentence(where: Sequence[Mapping[str, Any]], skip: Sequence[str] = ()) -> str:
    """Where cells lie, in words: the range among them (escaped) of each axis that varies
    in the population, with ``every value`` where they take all of the population's."""
    parts = []
    for w in where:
        if w["axis"] in skip or w["distinct_in_population"] <= 1:
            continue
        every = w["distinct"] == w["distinct_in_population"]
        if w["distinct"] == 1:
            text = f"{esc(w['axis'])} = {esc(w['min'] if w['min'] is not None else None)}"
        elif isinstance(w["min"], (int, float)) and not isinstance(w["min"], bool):
            text = f"{esc(w['axis'])} from {num(w['min'])} to {num(w['max'])}"
        elif w["values"]:
            text = (f"{esc(w['axis'])} " + ", ".join(esc(plain(v["value"])) for v in w["values"]))
        else:
            text = f"{esc(w['axis'])}: {w['distinct']:,} values"
        if every and w["distinct"] > 1:
            text += " (every value)"
        parts.append(text)
    return "; ".join(parts)


def examples_table(examples: Sequence[Mapping[str, Any]], hide: Iterable[str] = ()) -> str:
    """Example cells in full, one row each; columns in ``hide``, and those null in every
    row (parameters that do not apply), left out."""
    if not examples:
        return ""
    hidden = set(hide)
    head = [h for h in examples[0]
            if h not in hidden and any(e[h] is not None for e in examples)]
    return table(head, ([e[h] for h in head] for e in examples))


def folded(content: str, rows: int, what: str, limit: int = 12) -> str:
    """``content`` as is, or folded under a summary line when it has more than ``limit`` rows."""
    if rows <= limit:
        return content
    return f"<details><summary>{rows:,} {esc(what)}</summary>{content}</details>"


def verdict(kind: str, paragraphs: Iterable[str]) -> str:
    """Paragraphs in a verdict box; ``kind`` is ``holds``, ``fails`` or ``none``."""
    return f'<div class="verdict {kind}">' + "".join(f"<p>{p}</p>" for p in paragraphs) + "</div>"


def figure_html(fig: Figure) -> str:
    """A chart's container, its spec as JSON, a fallback image and links to its files."""
    renderer = "canvas" if fig.meta.get("marks", 0) > CANVAS_MARKS else "svg"
    return (f'<figure><div class="chart" id="chart-{fig.name}" data-figure="{fig.name}" '
            f'data-renderer="{renderer}">'
            f'<noscript><img src="figures/{fig.name}.svg" alt="{esc(fig.title)}"></noscript>'
            f'</div><script type="application/json" id="spec-{fig.name}">'
            f"{script_json(fig.spec)}</script>"
            f'<figcaption>{esc(fig.title)}: <a href="figures/{fig.name}.svg">SVG</a>, '
            f'<a href="figures/{fig.name}.png">PNG</a>. Hover a mark for its cells\' '
            "figures.</figcaption></figure>")
