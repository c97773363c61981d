"""The pages of ``reconsim compare`` and ``reconsim bench-compare`` render in headless
Chromium: every chart draws, nothing errs, nothing is fetched."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from reconsim.cli import main
from tests.helpers.browser import load_page
from tests.helpers.runs import BASE, HEAD, changed_run
from tests.helpers.sweeps import compare_sweep, edited

# Without Chromium: skipped locally, failed under CI (tests/conftest.py).
pytestmark = pytest.mark.browser


def rendered(page: Path) -> list[str]:
    """The page's charts, each checked drawn; their names."""
    state = load_page(page.resolve().as_uri())
    assert state["exceptions"] == []
    assert state["errors"] == []
    assert state["remote_requests"] == []
    assert state["state"] == "rendered"
    for chart in state["charts"]:
        assert chart["rendered"] == "yes", chart
        assert chart["marks"] > 0, chart
    return [c["figure"] for c in state["charts"]]


def test_compare_page_renders(tmp_path: Path) -> None:
    a = compare_sweep(tmp_path / "a")
    b = edited(a, tmp_path / "<b>", overshoot=pl.col("overshoot") + (pl.col("G") == 30),
               reads=pl.col("reads") - (pl.col("U") == 5))
    page = tmp_path / "page.html"
    assert main(["compare", str(a), str(b), "--html", str(page)]) == 1
    assert rendered(page) == ["delta-overshoot", "delta-reads"]
    assert "&lt;b&gt;" in page.read_text()


def test_bench_compare_page_renders(tmp_path: Path) -> None:
    page = tmp_path / "bench.html"
    head = changed_run(tmp_path, "ledger", "reads", 3)
    assert main(["bench-compare", str(BASE), str(head), "--html", str(page)]) == 1
    assert rendered(page) == ["tradeoff"]
    assert main(["bench-compare", str(BASE), str(HEAD), "--html", str(page)]) == 0
