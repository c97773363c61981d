"""Drawing the charts (reconsim/report/drawing.py): beside the queries in a second process or
in the report's own, the same bytes; a chart that cannot be drawn, or a drawing process that
ends, named in one error; no process left behind."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from reconsim.report import build_report, drawing
from reconsim.report.build import build_figures, summarize_sections, vegalite_version
from reconsim.report.charts import Figure
from reconsim.report.data import load_sweep
from reconsim.report.drawing import Beside, DrawingError, Drawn, Inline
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


def test_beside_draws_the_same_bytes_as_inline_in_the_order_submitted(
        figures: list[Figure]) -> None:
    version = vegalite_version()
    inline = Inline(version)
    inline.submit(lambda: figures)
    expected = inline.drawn()
    with drawing.drawing(1, version) as beside:
        assert isinstance(beside, Beside)
        # Submitted in three batches, as sections hand over their charts.
        beside.submit(lambda: figures[:1])
        beside.submit(lambda: figures[1:5])
        beside.submit(lambda: figures[5:])
        drawn = beside.drawn()
    assert [f.name for f, _, _ in drawn] == [f.name for f in figures]
    assert len(figures) == 11
    for (fig, svg, png), (_, svg_in, png_in) in zip(drawn, expected, strict=True):
        assert svg == svg_in, fig.name
        assert png == png_in, fig.name
        assert svg.startswith("<svg"), fig.name
        assert png.startswith(b"\x89PNG"), fig.name


def test_inline_makes_the_charts_only_after_the_queries() -> None:
    made: list[str] = []

    def charts() -> list[Figure]:
        made.append("charts")
        return []

    inline = Inline(None)
    inline.submit(charts)
    assert made == []  # no spec held while the next sections' queries run
    assert inline.drawn() == []
    assert made == ["charts"]


def test_a_table_past_the_limit_is_drawn_in_this_process() -> None:
    before = _children()
    with drawing.drawing(drawing.BESIDE_MAX_CELLS + 1, None) as drawer:
        assert isinstance(drawer, Inline)
        assert drawer.drawn() == []
    with drawing.drawing(drawing.BESIDE_MAX_CELLS, None) as drawer:
        assert isinstance(drawer, Beside)
        assert drawer.drawn() == []
    assert _children() <= before


def _draw_beside(figs: list[Figure], kill: bool = False) -> list[Drawn]:
    """Draw ``figs`` in a drawing process (killed first with ``kill``)."""
    before = _children()
    with drawing.drawing(1, vegalite_version()) as beside:
        assert isinstance(beside, Beside)
        if kill:
            (child,) = _children() - before
            os.kill(child, signal.SIGKILL)
        beside.submit(lambda: figs)
        return beside.drawn()


def test_a_chart_that_cannot_be_drawn_is_named(figures: list[Figure]) -> None:
    broken = Figure("broken", "A broken chart", {"mark": "no-such-mark"})
    inline = Inline(None)
    inline.submit(lambda: [broken])
    with pytest.raises(ValueError, match="Vega-Lite to SVG conversion failed"):
        inline.drawn()
    before = _children()
    # Charts after it still queued: nothing waits on a pipe nobody reads.
    with pytest.raises(DrawingError, match=r"^chart 'broken': ValueError: Vega-Lite to SVG "
                                           "conversion failed"):
        _draw_beside([figures[1], broken, *figures])
    assert _children() <= before


def test_a_drawing_process_that_ends_is_reported(figures: list[Figure]) -> None:
    before = _children()
    with pytest.raises(DrawingError, match=r"^chart 'law': the drawing process ended "
                                           r"\(exit status -9\)"):
        _draw_beside(figures, kill=True)
    assert _children() <= before


def _interrupted(figs: list[Figure], before: set[int]) -> None:
    with drawing.drawing(1, vegalite_version()) as beside:
        beside.submit(lambda: figs)
        assert len(_children() - before) == 1
        raise KeyboardInterrupt


def test_leaving_early_ends_the_drawing_process(figures: list[Figure]) -> None:
    before = _children()
    with pytest.raises(KeyboardInterrupt):
        _interrupted(figures, before)
    assert _children() <= before


def test_a_report_leaves_no_process_behind(tmp_path: Path) -> None:
    before = _children()
    report = build_report(write_table(tmp_path / "r", model_frame()))
    assert {p.name for p in report.figures} >= {"law.svg", "law.png"}
    assert _children() <= before
