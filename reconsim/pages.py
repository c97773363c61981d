"""HTML pages built from Jinja2 templates (``reconsim/templates/``), autoescaped.

A page is self-contained like the report: its charts are Vega-Lite specs in JSON script
elements, drawn by the Vega bundle inlined from vl-convert (no network at view time).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


def render_page(template: str, charts: Sequence[Mapping[str, Any]], **context: Any) -> str:
    """Render ``template`` with ``context``; each chart (``name``, ``title``, ``spec``) gets
    its spec as JSON safe inside a script element, and the page the Vega bundle."""
    return _environment().get_template(template).render(
        style=Markup(STYLE),
        bundle=Markup(javascript_bundle()),
        embed=Markup(EMBED),
        charts=[{**c, "json": Markup(script_json(c["spec"]))} for c in charts],
        **context,
    )
