"""What a section of the report is: one question, with its numbers, charts and words.

Each module of :mod:`reconsim.report.sections` defines one :class:`Section`; the page
(:mod:`reconsim.report.page`) lists them in order. A section depends on the kit
(:mod:`~reconsim.report.data`, :mod:`~reconsim.report.charts`, :mod:`~reconsim.report.html`)
and never on another section, so a new section is one new module and one line in the list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from reconsim.report.charts import Figure
from reconsim.report.data import Sweep

#: The whole summary (``summary.json``) as the page renders it.
Summary = Mapping[str, Any]


def _no_charts(sweep: Sweep, summary: Summary) -> list[Figure]:
    return []


def _no_glance(summary: Summary) -> Markup | None:
    return None


@dataclass(frozen=True)
class Section:
    """One section: ``summarize`` gives its entries of ``summary.json`` from the sweep;
    ``charts`` its charts (from the sweep and the whole summary); ``render`` its HTML, from
    the whole summary and the charts by name; ``glance`` its one-sentence verdict for the
    top of the page (HTML, or None). HTML is :class:`~markupsafe.Markup`: the page escapes
    a plain ``str``."""

    name: str
    summarize: Callable[[Sweep], dict[str, Any]]
    render: Callable[[Summary, Mapping[str, Figure]], Markup]
    charts: Callable[[Sweep, Summary], list[Figure]] = _no_charts
    glance: Callable[[Summary], Markup | None] = _no_glance
