"""Drawing the charts (reconsim/report/drawing.py): made only once the queries are done,
drawn in order as SVG and PNG, a chart that cannot be drawn named in one error, and no
process started."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from reconsim.report import build_report
from reconsim.report.build import build_figures, summarize_sections, vegalite_version
from reconsim.report.charts import Figure
from reconsim.report.drawing import DrawingError, draw_all
from reconsim.report.load import load_sweep
from tests.helpers.tables import model_frame, write_table


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> list[Figure]:
    """Every chart of a report whose sections all have charts."""
    frame = model_frame(controller=["ledger", "intent"], G=[0, 10, 20], U=[1, 5, 15, 35],
                        G_spread=[0, 9], slow_start=[False, True])
    sweep = load_sweep(write_table(tmp_path_factory.mktemp("drawing") / "m", frame))
    return build_figures(summarize_sections(sweep))


def _children() -> set[int]:
    """This process's live child processes."""
    me = os.getpid()
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me and fields[0] != "Z":
            found.add(int(stat.parent.name))
    return found


def test_every_chart_is_drawn_in_the_order_made(figures: list[Figure]) -> None:
    made: list[int] = []

    def batch(i: int, figs: list[Figure]):  # type: ignore[no-untyped-def]
        def charts() -> list[Figure]:
            made.append(i)
            return figs
        return charts

    batches = [batch(0, figures[:1]), batch(1, figures[1:5]), batch(2, figures[5:])]
    assert made == []  # nothing is made before it is drawn
    drawn = draw_all(batches, vegalite_version())
    assert made == [0, 1, 2]
    assert len(figures) == 13
    assert [f.name for f, _, _ in drawn] == [f.name for f in figures]
    for fig, svg, png in drawn:
        assert svg.startswith("<svg"), fig.name
        assert png.startswith(b"\x89PNG"), fig.name


def test_a_chart_that_cannot_be_drawn_is_named(figures: list[Figure]) -> None:
    broken = Figure("broken", "A broken chart", {"mark": "no-such-mark"})
    with pytest.raises(DrawingError, match=r"^chart 'broken': Vega-Lite to SVG conversion "
                                           "failed"):
        draw_all([lambda: [figures[1], broken, *figures]], None)


def test_a_report_starts_no_process(tmp_path: Path) -> None:
    before = _children()
    report = build_report(write_table(tmp_path / "r", model_frame()))
    assert {p.name for p in report.figures} >= {"law.svg", "law.png"}
    assert _children() <= before
