"""The report renders in headless Chromium: every chart draws, nothing errs, nothing is fetched.

Chromium is driven over the DevTools protocol on a pipe (``tests/helpers/browser.py``).
Without a Chromium binary the test skips locally and fails where ``CI`` is set: CI must
render (the ``browser`` marker's rule, ``tests/conftest.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reconsim.report import build_report
from tests.helpers.browser import load_page
from tests.helpers.tables import model_frame, write_sweep, write_table

pytestmark = pytest.mark.browser


def wide_sweep(sweep_dir: Path) -> Path:
    """A ledger sweep with more heatmap marks than an SVG chart should hold: drawn on canvas."""
    frame = model_frame(controller=["ledger", "intent"], G=list(range(0, 60, 2)),
                        U=list(range(1, 81)), B=[0, 5], desired=[6])
    return write_table(sweep_dir, frame, name="wide")


#: The report's timelines, both sweeps holding each kind of telling cell.
TIMELINES = ["timeline_law_mismatch", "timeline_below_boundary", "timeline_above_boundary",
             "timeline_slowest_settling"]


@pytest.mark.parametrize("kind", ["small", "wide"])
def test_report_renders_in_headless_chromium(tmp_path: Path, kind: str) -> None:
    if kind == "small":
        sweep = write_sweep(tmp_path / "sweep", name="browser <script>alert(1)</script>")
    else:
        sweep = wide_sweep(tmp_path / "wide")
    report = build_report(sweep)
    page = load_page(report.html.resolve().as_uri())
    assert page["exceptions"] == []
    assert page["errors"] == []
    assert page["remote_requests"] == []
    assert page["state"] == "rendered"
    names = [c["figure"] for c in page["charts"]]
    assert names == list(report.data["figures"]) == ["answers", "law", "boundary",
                                                     "responses", "read_cost", "controllers",
                                                     "tradeoff",
                                                     *TIMELINES]
    for chart in page["charts"]:
        assert chart["rendered"] == "yes", chart
        assert chart["views"] >= 1, chart
        assert chart["marks"] > 0, chart
        if chart["renderer"] == "svg":
            assert chart["svg_marks"] > 0, chart
    renderers = {c["figure"]: c["renderer"] for c in page["charts"]}
    assert renderers["law"] == ("svg" if kind == "small" else "canvas")
