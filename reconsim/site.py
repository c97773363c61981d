"""The published site: ``results/index.html``, one row per sweep folder linking its report
with its headline figures (``reconsim/web/templates/index.html``), and the benchmark
history page beside it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from markupsafe import Markup

from reconsim.benchmarks.history_page import HISTORY_PAGE, write_history
from reconsim.io import write_atomic
from reconsim.model.laws import BOUNDARY, LAW_FORMULA
from reconsim.report.build import SUMMARY_FORMAT
from reconsim.report.source import ReportError
from reconsim.web.html import KIT, num, pct, render


def read_cost_brief(rc: Mapping[str, Any]) -> Markup:
    """A sweep's read cost in brief: flat without oscillation, inflated with it, and the
    fastest loop without overshoot (``—`` when the sweep answers none of these)."""
    flat, rows = rc["flat"], rc["by_GB"]["rows"]
    reads = []
    if flat["series"]:
        reads.append(Markup("flat within {} without oscillation").format(
            pct(flat["relative"]["max"])))
    if rc["inflation"]["with_level"]:
        reads.append(Markup("up to {}&times; with it").format(
            num(rc["inflation"]["ratio"]["max"], 2)))
    if rows:
        reads.append(Markup("fastest U without overshoot = G + B for {} of {} (G, B)").format(
            sum(r["at_boundary"] for r in rows), len(rows)))
    return Markup("; ").join(reads) or Markup("—")


def render_index(entries: Sequence[Mapping[str, Any]], history: str | None = None) -> str:
    """The results index: one row per sweep directory, linking its report when it has one,
    and the benchmarks' history page at ``history`` (a relative link) when there is one.

    Each entry has ``dir`` (the folder's name), and either ``summary`` (its summary.json)
    or ``note`` (why there is no report to link).
    """
    rows = [{**e, "reads": read_cost_brief(e["summary"]["read_cost"])} if "summary" in e
            else dict(e) for e in entries]
    return render(KIT, "index.html", rows=rows, law_formula=LAW_FORMULA["ready"],
                  boundary=BOUNDARY, history=history)


def publish(results_dir: str | Path = "results") -> Path:
    """Write ``results_dir/index.html`` linking the report of every sweep folder in it.

    A sweep folder is a subdirectory holding ``sweep.json`` or ``summary.json``; one
    without a readable report is listed with the reason. The history page of the
    benchmark runs saved under ``results_dir/bench/`` is written first and linked
    (:mod:`reconsim.benchmarks.history_page`). Returns the index's path.
    """
    results_dir = Path(results_dir)
    if not results_dir.is_dir():
        raise ReportError(f"{results_dir}: no such directory")
    history = HISTORY_PAGE if write_history(results_dir) else None
    entries: list[dict[str, Any]] = []
    for folder in sorted(p for p in results_dir.iterdir() if p.is_dir()):
        if not ((folder / "sweep.json").exists() or (folder / "summary.json").exists()):
            continue
        entries.append({"dir": folder.name, **_index_entry(folder)})
    index = results_dir / "index.html"
    write_atomic(index, render_index(entries, history=history).encode())
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
