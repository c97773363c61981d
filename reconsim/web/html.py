"""HTML building blocks of the report's pages: escaping, numbers, tables, verdict boxes,
charts, and the Jinja2 templates of the page and the index.

Two types, two meanings: a ``str`` is text, a :class:`~markupsafe.Markup` is HTML. The
blocks here return Markup built from literals we wrote, every value put into them escaped
unless it is Markup already (``Markup("<p>{}</p>").format(value)``, ``Markup(sep).join``,
``Markup + str``); the templates (``templates/``, rendered by :func:`render` with
autoescaping on) treat their variables the same way. So a string from a spec or the data
(the sweep's name, schedule names, parameter values) is escaped wherever it is shown,
and nobody has to remember to. The text helpers (:func:`num`, :func:`pct`,
:func:`where_sentence` ...) return plain text, escaped where it meets markup. The page is
self-contained: a chart is its Vega-Lite spec in a JSON script element, drawn by the
inlined vega-embed (``templates/embed.js``); nothing is fetched from the network.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Final

import jinja2
from markupsafe import Markup, escape

from reconsim.report.charts import Figure
from reconsim.report.data import describe

#: Charts with more marks than this are drawn on a canvas rather than as SVG elements.
CANVAS_MARKS: Final = 4000


def esc(value: Any) -> Markup:
    """Any value as escaped HTML text (``None`` shows as ``null``); Markup stays as it is."""
    return escape("null" if value is None else value)


def plain(value: Any) -> str:
    """A value as plain (unescaped) text; ``None`` shows as ``null``."""
    return "null" if value is None else str(value)


def num(value: Any, digits: int = 3) -> str:
    """A figure as text: thousands separated, floats to at most ``digits`` decimals."""
    if isinstance(value, bool) or value is None:
        return plain(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value == int(value):
            return f"{value:,.0f}"
        return f"{value:,.{digits}f}".rstrip("0").rstrip(".")
    return plain(value)


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


@dataclass(frozen=True)
class TableCell:
    """A table cell with a CSS class (``bad``, ``absent``) beside its value, shown as
    ``text`` if given (escaped unless it is Markup), else as :func:`num` shows the value."""

    value: Any
    cls: str = ""
    text: str | None = None


def table(head: Sequence[str], rows: Iterable[Sequence[Any]], missing: str = "null") -> Markup:
    """An HTML table; numbers right-aligned, ``None`` shown as ``missing``, every heading
    and cell escaped unless it is Markup (a :class:`TableCell` may carry a class)."""
    out = [Markup("<table><thead><tr>"), *(Markup("<th>{}</th>").format(h) for h in head),
           Markup("</tr></thead><tbody>")]
    for row in rows:
        out.append(Markup("<tr>"))
        for item in row:
            classes, text, value = [], None, item
            if isinstance(item, TableCell):
                if item.cls:
                    classes.append(item.cls)
                value, text = item.value, item.text
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                classes.append("num")
            cls = Markup(' class="{}"').format(" ".join(classes)) if classes else ""
            shown: Any = (text if text is not None else missing if value is None
                          else value if isinstance(value, Markup) else num(value))
            out.append(Markup("<td{}>{}</td>").format(cls, shown))
        out.append(Markup("</tr>"))
    out.append(Markup("</tbody></table>"))
    return Markup("").join(out)


def constant_axes(summary: Mapping[str, Any]) -> set[str]:
    """The axes that take a single value in the whole sweep (not worth repeating)."""
    return {a for a, f in summary["axes"].items() if f["distinct"] <= 1}


def cells_text(n: int) -> str:
    """``n cells`` (``1 cell``), thousands separated."""
    return f"{n:,} cell" + ("" if n == 1 else "s")


def key_text(row: Mapping[str, Any], skip: Iterable[str], hide: Iterable[str] = ()) -> str:
    """A series' or cell's parameters in words (text); nulls (not applicable) and the keys
    in ``skip`` and ``hide`` left out."""
    left_out = {*skip, *hide}
    return ", ".join(f"{k} = {num(v)}" for k, v in row.items()
                     if k not in left_out and v is not None)


def fixed_text(fixed: Mapping[str, Any], hide: Iterable[str] = (),
               controller: str | None = None) -> str:
    """``axis = value`` pairs of a slice (text); axes in ``hide`` left out, and nulls of
    parameters that do not apply (see :func:`reconsim.report.data.describe`)."""
    hidden = set(hide)
    text = describe({a: v for a, v in fixed.items() if a not in hidden}, controller)
    return text or "the whole sweep"


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


def where_table(where: Sequence[Mapping[str, Any]], what: str, among: str = "cells") -> Markup:
    """The :func:`where_rows` as a table, headed by what is counted among what."""
    return table(["parameter", f"value: {what} of all {among} with that value"],
                 where_rows(where))


def where_sentence(where: Sequence[Mapping[str, Any]], skip: Sequence[str] = ()) -> str:
    """Where cells lie, in words (text): the range among them of each axis that varies in
    the population, with ``every value`` where they take all of the population's."""
    parts = []
    for w in where:
        if w["axis"] in skip or w["distinct_in_population"] <= 1:
            continue
        every = w["distinct"] == w["distinct_in_population"]
        if w["distinct"] == 1:
            text = f"{w['axis']} = {plain(w['min'])}"
        elif isinstance(w["min"], (int, float)) and not isinstance(w["min"], bool):
            text = f"{w['axis']} from {num(w['min'])} to {num(w['max'])}"
        elif w["values"]:
            text = f"{w['axis']} " + ", ".join(plain(v["value"]) for v in w["values"])
        else:
            text = f"{w['axis']}: {w['distinct']:,} values"
        if every and w["distinct"] > 1:
            text += " (every value)"
        parts.append(text)
    return "; ".join(parts)


def examples_table(examples: Sequence[Mapping[str, Any]], hide: Iterable[str] = ()) -> Markup:
    """Example cells in full, one row each; columns in ``hide``, and those null in every
    row (parameters that do not apply), left out."""
    if not examples:
        return Markup("")
    hidden = set(hide)
    head = [h for h in examples[0]
            if h not in hidden and any(e[h] is not None for e in examples)]
    return table(head, ([e[h] for h in head] for e in examples))


def folded(content: Markup, rows: int, what: str, limit: int = 12) -> Markup:
    """``content`` as is, or folded under a summary line when it has more than ``limit`` rows."""
    if rows <= limit:
        return content
    return Markup("<details><summary>{:,} {}</summary>{}</details>").format(rows, what, content)


def verdict(kind: str, paragraphs: Iterable[str]) -> Markup:
    """Paragraphs (escaped unless Markup) in a verdict box; ``kind`` is ``holds``, ``fails``
    or ``none``."""
    body = Markup("").join(Markup("<p>{}</p>").format(p) for p in paragraphs)
    return Markup('<div class="verdict {}">{}</div>').format(kind, body)


def figure_html(fig: Figure) -> Markup:
    """A chart's container, its spec as JSON, a fallback image and links to its files."""
    renderer = "canvas" if fig.meta.get("marks", 0) > CANVAS_MARKS else "svg"
    return Markup(
        '<figure><div class="chart" id="chart-{name}" data-figure="{name}" '
        'data-renderer="{renderer}">'
        '<noscript><img src="figures/{name}.svg" alt="{title}"></noscript>'
        '</div><script type="application/json" id="spec-{name}">{spec}</script>'
        '<figcaption>{title}: <a href="figures/{name}.svg">SVG</a>, '
        '<a href="figures/{name}.png">PNG</a>. Hover a mark for its cells\' '
        "figures.</figcaption></figure>"
    ).format(name=fig.name, renderer=renderer, title=fig.title,
             spec=Markup(script_json(fig.spec)))


@cache
def environment() -> jinja2.Environment:
    """The templates' environment: autoescaping on, an undefined variable an error; the
    kit's :func:`table` and the text helpers at hand."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("reconsim.report", "templates"), autoescape=True,
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True)
    env.globals["table"] = table
    env.filters |= {"num": num, "pct": pct, "plain": plain}
    return env


def render(template: str, **context: Any) -> str:
    """A page from ``templates/<template>``, every variable escaped unless it is Markup."""
    return environment().get_template(template).render(**context)
