"""HTML pages built from Jinja2 templates (``reconsim/templates/``), autoescaped.

A page is self-contained like the report: its charts are Vega-Lite specs in JSON script
elements, drawn by the Vega bundle inlined from vl-convert (no network at view time).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import jinja2
from markupsafe import Markup

from reconsim.report import javascript_bundle
from reconsim.report_html import EMBED, STYLE, script_json


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("reconsim", "templates"),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    env.filters["num"] = lambda v: "—" if v is None else f"{v:,}"
    return env


def chart(name: str, title: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    """A chart for ``_charts.html``: its spec as JSON safe inside a script element."""
    return {"name": name, "title": title, "json": Markup(script_json(spec))}


def render_page(template: str, **context: Any) -> str:
    """Render ``template`` with ``context``, the page style and the Vega bundle."""
    return _environment().get_template(template).render(
        style=Markup(STYLE), bundle=Markup(javascript_bundle()), embed=Markup(EMBED),
        **context,
    )
