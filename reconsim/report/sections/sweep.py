"""The sweep itself: what was run (``sweep.json``) beside what the data holds, each axis's
values, the death schedules and the spec."""

from __future__ import annotations

import json
from collections.abc import Mapping

from markupsafe import Markup

from reconsim.report.blocks import macro
from reconsim.report.charts import Figure
from reconsim.report.section import Context, Section


def render(summary: Context, context: Context, figures: Mapping[str, Figure]) -> Markup:
    """The sweep's identity, its axes, its schedules and its spec (``templates/sweep.html``)."""
    spec = json.dumps(summary.sweep.spec, indent=2, sort_keys=True, ensure_ascii=False)
    return macro("sweep.html", "body")(summary, spec)


#: The sweep's facts and axes: summary.json's ``sweep`` and ``axes`` (the page's
#: :class:`~reconsim.report.section.Context`, computed once by :meth:`Context.of`).
SECTION = Section("sweep", Context.of, render, spread=True, title="The sweep",
                  lettered=False)
