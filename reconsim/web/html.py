"""HTML building blocks of every page (the report, compare, the benchmark pages, the
index): escaping, numbers, tables, verdict boxes, charts, and the Jinja2 templates.

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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache, partial
from typing import Any, Final

import jinja2
from markupsafe import Markup, escape

from reconsim.web.charts import Figure

#: The package whose ``templates/`` every page's templates build on.
KIT: Final = "reconsim.web"
#: Charts with more marks than this are drawn on a canvas rather than as SVG elements.
CANVAS_MARKS: Final = 4000


def esc(value: Any) -> Markup:
    """Any value as escaped HTML text (``None`` shows as ``null``); Markup stays as it is."""
    return escape("null" if value is None else value)


def plain(value: Any) -> str:
    """A value as plain (unescaped) text; ``None`` shows as ``null``."""
    return "null" if value is None else str(value)


def num(value: Any, digits: int = 3, *, significant: int | None = None,
        missing: str = "null") -> str:
    """A figure as text, the one formatter of every page: thousands separated, exact
    integers without a decimal point, other floats to at most ``digits`` decimals (or to
    ``significant`` significant digits), null as ``missing``.

    >>> num(1234567), num(0.038885245901), num(2.0), num(None)
    ('1,234,567', '0.039', '2', 'null')
    >>> num(0.038885245901, significant=6), num(None, missing="—")
    ('0.0388852', '—')
    """
    if value is None:
        return missing
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if not isinstance(value, float):
        return plain(value)
    if value == int(value):
        return f"{value:,.0f}"
    if significant is not None:
        return f"{value:,.{significant}g}"
    return f"{value:,.{digits}f}".rstrip("0").rstrip(".")


#: The figures of the comparison and benchmark pages' tables: six significant digits, a
#: dash for null.
table_number: Final = partial(num, significant=6, missing="\u2014")


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
def environment(package: str, number: Callable[[Any], str] = num) -> jinja2.Environment:
    """The templates' environment of ``package`` (its ``templates/`` folder first, then the
    kit's own: ``_base.html``, ``_charts.html``, the style and script): autoescaping on, an
    undefined variable an error; the kit's :func:`table` and the text helpers at hand,
    ``number`` as the ``num`` filter."""
    loaders = [jinja2.PackageLoader(name, "templates") for name in dict.fromkeys((package, KIT))]
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders), autoescape=True,
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True)
    env.globals["table"] = table
    env.filters |= {"num": number, "pct": pct, "plain": plain}
    return env


def render(package: str, template: str, /, **context: Any) -> str:
    """A page from ``template`` (in ``package``'s templates or the kit's), every variable
    escaped unless it is Markup."""
    return environment(package).get_template(template).render(**context)
