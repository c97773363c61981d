"""What every page (the report, compare, the benchmark pages, the index) writes with: the
Jinja2 environment of its templates, the kit's blocks at hand in it, and the text helpers.

Two types, two meanings: a ``str`` is text, a :class:`~markupsafe.Markup` is HTML. HTML is
written in templates (``templates/``, rendered by :func:`render` with autoescaping on),
every variable escaped unless it is Markup already. So a string from a spec or the data
(the sweep's name, schedule names, parameter values) is escaped wherever it is shown, and
nobody has to remember to. The kit's blocks, ``templates/kit.html``, are globals of every
environment: ``table`` (a :class:`TableCell` may carry a class), ``folded`` and
``figure_html``. The text helpers (:func:`num`, :func:`pct`, :func:`share` ...) return
plain text, escaped where it meets markup. The page is self-contained: a chart is its
Vega-Lite spec in a JSON script element, drawn by the inlined vega-embed
(``templates/embed.js``); nothing is fetched from the network.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from typing import Any, Final

import jinja2
from markupsafe import Markup, escape

#: The package whose ``templates/`` every page's templates build on.
KIT: Final = "reconsim.web"
#: The kit's blocks (macros), globals of every page's templates.
BLOCKS: Final = ("table", "folded", "figure_html")


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
    ``text`` if given (escaped unless it is Markup), else as the kit's ``table`` shows the
    value (``templates/kit.html``)."""

    value: Any
    cls: str = ""
    text: str | None = None


def script_markup(data: Any) -> Markup:
    """``data`` as JSON to place, as it is, inside a ``<script>`` element
    (:func:`script_json`): the templates' ``script_json`` filter."""
    return Markup(script_json(data))


@cache
def environment(package: str, number: Callable[[Any], str] = num) -> jinja2.Environment:
    """The templates' environment of ``package`` (its ``templates/`` folder first, then the
    kit's own: ``_base.html``, ``_charts.html``, ``kit.html``, the style and script):
    autoescaping on, an undefined variable an error; the kit's :data:`BLOCKS` and the text
    helpers at hand, ``number`` as the ``num`` filter, ``is cell`` testing for a
    :class:`TableCell`."""
    loaders = [jinja2.PackageLoader(name, "templates") for name in dict.fromkeys((package, KIT))]
    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders), autoescape=True,
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
        keep_trailing_newline=True)
    env.filters |= {"num": number, "pct": pct, "plain": plain, "script_json": script_markup}
    env.tests["cell"] = _is_cell
    kit = env.get_template("kit.html").module
    env.globals |= {name: getattr(kit, name) for name in BLOCKS}
    return env


def _is_cell(value: Any) -> bool:
    """Whether ``value`` is a :class:`TableCell` (the templates' ``is cell``)."""
    return isinstance(value, TableCell)


def render(package: str, template: str, /, **context: Any) -> str:
    """A page from ``template`` (in ``package``'s templates or the kit's), every variable
    escaped unless it is Markup."""
    return environment(package).get_template(template).render(**context)
