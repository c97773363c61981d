"""The HTML result report of a sweep, and the index page of every sweep's report.

:func:`build_report` reads a sweep's output directory (``DIR/data/*.parquet`` and
``DIR/sweep.json``) and writes, into the same directory:

* ``report.html`` — a self-contained page (no network needed): what was swept, and
  for each question the sweep answers a chart and a verdict computed from every cell;
* ``summary.json`` — every figure the page shows, as data;
* ``figures/<name>.svg`` and ``figures/<name>.png`` — each chart as an image.

:func:`publish` writes ``results/index.html``, linking each sweep's report.

The work is split by concern: :mod:`.data` loads the table; :mod:`.sections` compute
the figures and write their words; :mod:`.charts` draws the charts; :mod:`.page` writes
the page and :mod:`.index` the index, from the blocks in :mod:`.html`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import altair as alt
import vl_convert

from reconsim.report.charts import (
    Figure,
    boundary_figure,
    controllers_figure,
    law_figure,
    read_cost_figure,
)
from reconsim.report.data import ReportError, Sweep, controllers, load_sweep
from reconsim.report.index import render_index
from reconsim.report.page import render_page
from reconsim.report.sections.law import SUMMARY_FORMAT, summarize

__all__ = ["Report", "ReportError", "build_report", "publish"]


@dataclass(frozen=True)
class Report:
    """The files one report consists of, and the figures it shows."""

    html: Path
    summary: Path
    figures: tuple[Path, ...]
    data: dict[str, Any]


def build_report(sweep_dir: str | Path) -> Report:
    """Write ``report.html``, ``summary.json`` and ``figures/`` into a sweep's output directory.

    Raises :class:`ReportError` (a ``ValueError``) naming the path when the directory
    is not a readable sweep output.
    """
    sweep_dir = Path(sweep_dir)
    sweep = load_sweep(sweep_dir)
    summary = summarize(sweep)
    figures = build_figures(sweep, summary)
    summary["figures"] = {f.name: {"title": f.title, "svg": f"figures/{f.name}.svg",
                                   "png": f"figures/{f.name}.png"} for f in figures}
    written = write_figures(figures, sweep_dir / "figures")
    summary_path = sweep_dir / "summary.json"
    summary_path.write_text(json.dumps(summary, indent=1, ensure_ascii=False, default=str) + "\n",
                            encoding="utf-8")
    html_path = sweep_dir / "report.html"
    html_path.write_text(render_page(summary, figures, javascript_bundle()), encoding="utf-8")
    return Report(html=html_path, summary=summary_path, figures=written, data=summary)


def build_figures(sweep: Sweep, summary: dict[str, Any]) -> list[Figure]:
    """Every chart of the report, in page order (sections without the cells a chart needs
    have none: no ledger cells, a single controller)."""
    out = []
    if summary["law"]["cells"]:
        out.append(law_figure(sweep.table, sweep.axes))
    if summary["boundary"]["cells"]:
        out.append(boundary_figure(sweep.table))
    chart = summary["read_cost"]["chart"]
    constant = [a for a, f in summary["axes"].items() if f["distinct"] <= 1]
    out.append(read_cost_figure(chart["points"], chart["fixed"], controllers(sweep.table),
                                hide=constant))
    c = summary["controllers"]
    if c["compared"]:
        out.append(controllers_figure(c["by_G"], c["figures"],
                                      [v["variant"] for v in c["variants"]]))
    return out


def vegalite_version() -> str | None:
    """The Vega-Lite version Altair writes specs for, as vl-convert names it (``6.4``)."""
    major_minor = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    return major_minor if major_minor in vl_convert.get_vegalite_versions() else None


def javascript_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one inline script (no network at view time)."""
    # The stub asks for a snippet; None selects vl-convert's default one (which puts
    # vegaEmbed, vega and vegaLite on window) and its cached bundle.
    bundle: str = vl_convert.javascript_bundle(None, vl_version=vegalite_version())  # type: ignore[arg-type]
    # An inline script ends at the first "</script"; the bundle must not contain one.
    return bundle.replace("</script", "<\\/script")


def write_figures(figures: list[Figure], folder: Path) -> tuple[Path, ...]:
    """Render each chart to ``folder/<name>.svg`` and ``.png``; return the paths written.

    SVG and PNG files in ``folder`` that this report does not write (a chart an earlier
    report drew and this sweep has none of) are removed; nothing else there is touched.
    """
    folder.mkdir(parents=True, exist_ok=True)
    keep = {f"{fig.name}.{ext}" for fig in figures for ext in ("svg", "png")}
    for stale in sorted([*folder.glob("*.svg"), *folder.glob("*.png")]):
        if stale.name not in keep and stale.is_file():
            stale.unlink()
    version = vegalite_version()
    written = []
    for fig in figures:
        svg: str = vl_convert.vegalite_to_svg(fig.spec, vl_version=version)
        png: bytes = vl_convert.svg_to_png(svg)
        svg_path, png_path = folder / f"{fig.name}.svg", folder / f"{fig.name}.png"
        svg_path.write_text(svg, encoding="utf-8")
        png_path.write_bytes(png)
        written += [svg_path, png_path]
    return tuple(written)


def publish(results_dir: str | Path = "results") -> Path:
    """Write ``results_dir/index.html`` linking the report of every sweep folder in it.

    A sweep folder is a subdirectory holding ``sweep.json`` or ``summary.json``; one
    without a readable report is listed with the reason. Returns the index's path.
    """
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise ReportError(f"{results_dir}: no such directory")
    entries: list[dict[str, Any]] = []
    for folder in sorted(p for p in results_dir.iterdir() if p.is_dir()):
        if not ((folder / "sweep.json").exists() or (folder / "summary.json").exists()):
            continue
        entries.append({"dir": folder.name, **_index_entry(folder)})
    index = results_dir / "index.html"
    index.write_text(render_index(entries), encoding="utf-8")
    return index


def _index_entry(folder: Path) -> dict[str, Any]:
    """A sweep folder's summary, or a note saying why it has no report to link."""
    if not (folder / "report.html").exists() or not (folder / "summary.json").exists():
        return {"note": f"no report yet (run: reconsim report {folder})"}
    try:
        summary = json.loads((folder / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return {"note": f"summary.json unreadable ({exc}); rebuild the report"}
    if not isinstance(summary, dict) or summary.get("format") != SUMMARY_FORMAT:
        return {"note": "summary.json is from another version of the report; rebuild it"}
    return {"summary": summary}
