"""The HTML page of a benchmark comparison: the tables of ``reconsim bench-compare`` and the
quality-against-cost chart, self-contained."""

from __future__ import annotations

from reconsim.benchmarks.compare import BenchComparison
from reconsim.model.metrics import COST, COST_FIGURES, QUALITY, QUALITY_FIGURES
from reconsim.web.kit import chart, render_page
from reconsim.web.tradeoff import tradeoff_chart


def render_html(c: BenchComparison) -> str:
    """The comparison as one self-contained page."""
    charts = [chart("tradeoff", "Quality against cost (head run)",
                    tradeoff_chart(c.tradeoffs, QUALITY, COST))] if c.tradeoffs else []
    return render_page("reconsim.benchmarks", "benchcmp.html", charts=charts, c=c,
                       quality=QUALITY_FIGURES, cost=COST_FIGURES)
