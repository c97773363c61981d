"""Pages other than the report (``reconsim compare``, ``reconsim bench-compare``, the
benchmark history, a cell's timeline), built from their package's Jinja2 templates on the
kit's base (:func:`reconsim.web.html.environment`), autoescaped.

A page is self-contained like the report: its charts are Vega-Lite specs in JSON script
elements, drawn by the Vega bundle inlined from vl-convert (no network at view time).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from markupsafe import Markup

from reconsim.web.bundle import javascript_bundle
from reconsim.web.html import environment, table_number


def chart(name: str, title: str, spec: Mapping[str, Any]) -> dict[str, Any]:
    """A chart for ``_charts.html`` (which writes its spec as JSON safe inside a script
    element)."""
    return {"name": name, "title": title, "spec": spec}


def render_page(package: str, template: str, /, **context: Any) -> str:
    """Render ``template`` with ``context`` and the Vega bundle (the report's style and
chart-drawing script are included by the templates)."""
    return environment(package, table_number).get_template(template).render(
        bundle=Markup(javascript_bundle()), **context,
    )
