"""The results index: one row per sweep folder, linking its report with its headline figures."""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import Any

from reconsim.model.laws import BOUNDARY, LAW_FORMULA
from reconsim.report.html import STYLE, esc, num, pct


def _row(folder: str, s: Mapping[str, Any]) -> str:
    """One sweep's row: its name linking the report, its cells, and its verdicts in brief."""
    law, b, rc, seed = s["law"], s["boundary"], s["read_cost"], s["seed001"]
    law_text = ("not checked" if law["cells"] == 0 else
                f"holds on all {law['cells']:,}" if law["mismatches"] == 0 else
                f"<strong>fails on {law['mismatches']:,}</strong> of {law['cells']:,}")
    boundary = (f"above: {b['above_zero']:,} zero, {b['above_positive']:,} positive; "
                f"below: {b['below_zero']:,} zero, {b['below_positive']:,} positive"
                if b["cells"] else "no ledger cells")
    flat, rows = rc["flat"], rc["by_GB"]["rows"]
    reads = []
    if flat["series"]:
        reads.append(f"flat within {pct(flat['relative']['max'])} without oscillation")
    if rc["inflation"]["with_level"]:
        reads.append(f"up to {num(rc['inflation']['ratio']['max'], 2)}&times; with it")
    if rows:
        reads.append(f"fastest U without overshoot = G + B for "
                     f"{sum(r['at_boundary'] for r in rows)} of {len(rows)} (G, B)")
    seed_text = (f"{seed['agree']:,} of {seed['compared']:,} agree" if seed["compared"]
                 else "none in the sweep")
    href = html.escape(f"{folder}/report.html", quote=True)
    return (f'<tr><td><a href="{href}">{esc(s["sweep"]["name"])}</a> ({esc(folder)})</td>'
            f'<td class="num">{s["sweep"]["cells"]:,}</td><td>{law_text}</td>'
            f"<td>{boundary}</td><td>{'; '.join(reads) or '—'}</td><td>{seed_text}</td>"
            f"<td>{esc(s['sweep']['finished'])}</td></tr>")


def render_index(entries: Sequence[Mapping[str, Any]]) -> str:
    """The results index: one row per sweep directory, linking its report when it has one.

    Each entry has ``dir`` (the folder's name), and either ``summary`` (its summary.json)
    or ``note`` (why there is no report to link).
    """
    rows = []
    for e in entries:
        if "summary" in e:
            rows.append(_row(e["dir"], e["summary"]))
        else:
            rows.append(f"<tr><td>{esc(e['dir'])}</td><td colspan=\"6\">{esc(e['note'])}</td></tr>")
    body = "".join(rows) or '<tr><td colspan="7">No sweeps yet.</td></tr>'
    return "".join([
        '<!doctype html><html lang="en"><head><meta charset="utf-8">',
        f"<title>reconsim results</title><style>{STYLE}</style></head><body>",
        "<h1>reconsim results</h1>",
        "<p>One row per sweep; each report is one self-contained page. <em>Overshoot law</em>: "
        f"the ledger controller's measured overshoot against {esc(LAW_FORMULA['ready'])}, "
        f"cell by cell. <em>Boundary</em>: ledger cells with {esc(BOUNDARY)} (above) or "
        "U &lt; G + B (below) whose overshoot is zero or positive. <em>Read "
        "cost</em>: how far reads per round move with U where nothing oscillates, how much "
        "oscillation inflates them, and the fastest loop without overshoot. <em>Seed 001</em>: "
        "the sweep's cells that seed 001 published, and how many agree with every published "
        "figure.</p>",
        "<table><thead><tr><th>sweep</th><th>cells</th><th>overshoot law (ledger cells)</th>"
        "<th>boundary (ledger cells)</th><th>read cost</th><th>seed 001</th><th>finished</th>"
        "</tr></thead>",
        f"<tbody>{body}</tbody></table></body></html>\n",
    ])
