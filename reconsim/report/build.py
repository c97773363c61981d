"""The HTML result report of a sweep.

:func:`build_report` reads a sweep's output directory (``DIR/data/*.parquet`` and
``DIR/sweep.json``) and writes, into the same directory:

* ``report.html`` — a self-contained page (no network needed): what was swept, and
  for each question the sweep answers a chart and a verdict computed from every cell;
* ``summary.json`` — every figure the page shows, as data;
* ``figures/<name>.svg`` and ``figures/<name>.png`` — each chart as an image.

The work is split by concern: :mod:`.data` loads the table; :mod:`.sections` compute
the figures and write their words; :mod:`.charts` makes the charts' specs and
:mod:`.drawing` draws them; :mod:`.page` writes the page, from the blocks in
:mod:`.blocks` and the page kit (:mod:`reconsim.web`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from reconsim.io import write_atomic
from reconsim.report.charts import Figure
from reconsim.report.drawing import Drawn, draw_all
from reconsim.report.load import Sweep, load_sweep
from reconsim.report.page import SECTIONS, Summaries, render_page
from reconsim.report.section import Context
from reconsim.report.source import ReportError, SweepSource
from reconsim.web.bundle import javascript_bundle, vegalite_version

__all__ = ["Report", "ReportError", "build_report"]

#: Version of the ``summary.json`` layout.
SUMMARY_FORMAT: Final = 2


@dataclass(frozen=True)
class Report:
    """The files one report consists of, and the figures it shows."""

    html: Path
    summary: Path
    figures: tuple[Path, ...]
    data: dict[str, Any]


def build_report(sweep_dir: str | Path, out: str | Path | None = None) -> Report:
    """Write ``report.html``, ``summary.json`` and ``figures/`` into a sweep's output directory
    (or into the local folder ``out``).

    ``sweep_dir`` is a local path, a ``file://`` URL or an object-store URL (``s3://``,
    ``gs://``, ``az://``; see :mod:`.source`); the table is scanned where it lies, never
    copied. A report of a directory on object storage needs ``out``: object stores have no
    atomic rename, and the report's files are written atomically (a temporary file, then a
    rename), so that a page served from the folder is never half-written and a report
    killed midway leaves the previous one's files intact. Raises :class:`ReportError` (a
    ``ValueError``) naming the path when the directory is not a readable sweep output.
    """
    source = SweepSource.parse(sweep_dir)
    if out is None and source.remote:
        raise ReportError(f"{sweep_dir}: on object storage; name a local folder for the "
                          "report's files (reconsim report DIR --out FOLDER)")
    sweep = load_sweep(source)
    sweep_dir = Path(out) if out is not None else source.local
    sweep_dir.mkdir(parents=True, exist_ok=True)
    summaries, drawn = summarize_and_draw(sweep)
    script = javascript_bundle()
    figures = [fig for fig, _, _ in drawn]
    summary = {"format": SUMMARY_FORMAT} | summaries.to_json()
    summary["figures"] = {f.name: {"title": f.title, "svg": f"figures/{f.name}.svg",
                                   "png": f"figures/{f.name}.png"} for f in figures}
    written = write_figures(drawn, sweep_dir / "figures")
    summary_path = sweep_dir / "summary.json"
    write_atomic(summary_path, (json.dumps(summary, indent=1, ensure_ascii=False, default=str)
                                + "\n").encode())
    html_path = sweep_dir / "report.html"
    write_atomic(html_path, render_page(summaries, figures, script).encode())
    return Report(html=html_path, summary=summary_path, figures=written, data=summary)


def summarize_sections(sweep: Sweep) -> Summaries:
    """Every section's typed summary, in page order, and the sweep's :class:`Context`."""
    return Summaries(Context.of(sweep), tuple(s.summarize(sweep) for s in SECTIONS))


def summarize_and_draw(sweep: Sweep) -> tuple[Summaries, list[Drawn]]:
    """:func:`summarize_sections`, and every chart drawn, in page order: the charts are made
    from the summaries once the queries are done (:mod:`.drawing`)."""
    summaries = summarize_sections(sweep)
    charts = [functools.partial(section.charts, summary, summaries.context)
              for section, summary in zip(SECTIONS, summaries.sections, strict=True)]
    return summaries, draw_all(charts, vegalite_version())


def summarize(sweep: Sweep) -> dict[str, Any]:
    """Every figure the report shows, as one JSON-ready dict (``summary.json`` without its
    ``figures``): each section's entries, in page order."""
    return {"format": SUMMARY_FORMAT} | summarize_sections(sweep).to_json()


def build_figures(summaries: Summaries) -> list[Figure]:
    """Every chart of the report, in page order, drawn from the sections' summaries (a
    section without the cells its chart needs has none: no ledger cells, a single
    controller)."""
    return [fig for section, summary in zip(SECTIONS, summaries.sections, strict=True)
            for fig in section.charts(summary, summaries.context)]


def write_figures(drawn: Sequence[Drawn], folder: Path) -> tuple[Path, ...]:
    """Write each drawn chart to ``folder/<name>.svg`` and ``.png``; return the paths written.

    SVG and PNG files in ``folder`` that this report does not write (a chart an earlier
    report drew and this sweep has none of) are removed; nothing else there is touched.
    """
    folder.mkdir(parents=True, exist_ok=True)
    keep = {f"{fig.name}.{ext}" for fig, _, _ in drawn for ext in ("svg", "png")}
    for stale in sorted([*folder.glob("*.svg"), *folder.glob("*.png")]):
        if stale.name not in keep and stale.is_file():
            stale.unlink()
    written = []
    for fig, svg, png in drawn:
        svg_path, png_path = folder / f"{fig.name}.svg", folder / f"{fig.name}.png"
        write_atomic(svg_path, svg.encode())
        write_atomic(png_path, png)
        written += [svg_path, png_path]
    return tuple(written)
