"""The report's sections on seed 001's claims, in words: a. the overshoot law, b. the
boundary U >= G + B, e. seed 001's own tables.

Every number comes from the summary dict that is also written as ``summary.json``;
strings from the data are escaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from reconsim.report.charts import Figure
from reconsim.report.html import (
    Cell,
    constant_axes,
    esc,
    examples_table,
    figure_html,
    folded,
    num,
    plain,
    share,
    table,
    verdict,
    where_sentence,
    where_table,
)

LAW_TEXT: Final = "desired &times; (&lceil;(G + B) / U&rceil; &minus; 1)"
LAW_CREATED_TEXT: Final = "desired &times; (&lceil;G / U&rceil; &minus; 1)"


# -- a. the overshoot law --------------------------------------------------------------------


def law_paragraphs(law: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The law's verdict in words: its kind and its paragraphs."""
    n, m = law["cells"], law["mismatches"]
    skipped = (f" {law['not_applicable']:,} further ledger cells have a cap on corrections "
               "per round; the law says nothing about them and they are not checked."
               if law["not_applicable"] else "")
    if n == 0:
        return "none", ["This sweep has no ledger-controller cells the law applies to, so the "
                        f"law is not checked.{skipped}"]
    if m == 0:
        return "holds", [f"<strong>The law holds on all {n:,} ledger cells it applies "
                         "to</strong>: on every one, the measured overshoot equals the law's."
                         + skipped]
    out = [f"<strong>The law fails on {m:,} of {n:,} ledger cells ({share(m, n)})</strong>; "
           f"it holds on the other {law['holds']:,}.{skipped}",
           f"The mismatched cells lie at {where_sentence(law['where'])}."]
    causes = law["causes"]
    zero, early, other = causes["zero_delay"], causes["U_below_B"], causes["elsewhere"]
    parts = []
    if zero["cells"]:
        parts.append(f"{zero['cells']:,} of them have no delay at all (G + B = 0; G = 0 where "
                     "copies are listed at creation): there the law's ceiling is 0 and it "
                     "predicts &minus;desired, which no run can match "
                     f"({zero['cells']:,} of the {zero['of']:,} such cells fail)")
    if early["cells"]:
        parts.append(f"{early['cells']:,} have U &lt; B, a loop faster than a copy starts "
                     f"({early['cells']:,} of the {early['of']:,} such cells fail)")
    if other["cells"] == 0:
        parts.append("none lies elsewhere: <strong>on all "
                     f"{other['of']:,} cells with U ≥ B and a positive delay the law holds"
                     "</strong>")
        out.append("By cause: " + "; ".join(parts) + ".")
    else:
        parts.append(f"<strong>{other['cells']:,} of the {other['of']:,} cells with U ≥ B and "
                     "a positive delay fail too</strong>")
        out.append("By cause: " + "; ".join(parts) + ".")
        out.append("So U &lt; B and a zero delay do <strong>not</strong> explain every "
                   f"mismatch. The other {other['cells']:,} lie at "
                   f"{where_sentence(other['where'])}; there, measured minus law "
                   + (f"is {num(other['difference_min'])} on every one."
                      if other["difference_min"] == other["difference_max"] else
                      f"ranges from {num(other['difference_min'])} to "
                      f"{num(other['difference_max'])}."))
    out.append(f"Over all mismatched cells the measured overshoot is above the law's on "
               f"{law['measured_above_law']:,} and below it on {law['measured_below_law']:,}; "
               f"measured minus law ranges from {num(law['difference_min'])} to "
               f"{num(law['difference_max'])}.")
    return "fails", out


def scope_table(scopes: Sequence[Mapping[str, Any]]) -> str:
    """Which law applies to which rows, with the rows' counts."""
    rows = []
    for s in scopes:
        law = s["law"] if s["law"] is not None else "none: not checked"
        mism: Any = s["mismatches"] if s["mismatches"] is not None else "—"
        rows.append([s["rows"], law, s["cells"], mism])
    return table(["rows", "law", "cells", "mismatches"], rows)


def law_section(summary: Mapping[str, Any], figures: Mapping[str, Figure]) -> str:
    """Section a: the law, where it applies, its verdict, its heatmaps and where it fails."""
    law = summary["law"]
    hide = constant_axes(summary)
    kind, paragraphs = law_paragraphs(law)
    parts = [
        '<section id="law"><h2>a. The overshoot law</h2>',
        "<p>Seed 001 found that the ledger controller, which trusts only the late ledger, "
        f"overshoots by <code>{LAW_TEXT}</code> copies: ⌈(G + B) / U⌉ rounds run between "
        "creating a copy and seeing it on the ledger, and every round after the first creates "
        "the same missing copies again. Seed 001 measured it on 56 cells (B = 5 s, six copies, "
        "two deaths at second 300). Here it is compared with the measured overshoot on "
        "<em>every</em> ledger cell it applies to, as <code>reconsim.model.laws</code> states it: "
        "for the ledger controller without a cap on corrections per round; where copies "
        "reach the ledger G s after creation (observe = created) instead of G s after they "
        f"are ready, the law reads <code>{LAW_CREATED_TEXT}</code>. Nothing else has a law.</p>",
        scope_table(law["scopes"]),
        verdict(kind, paragraphs),
    ]
    if "law" in figures:
        parts.append(figure_html(figures["law"]))
    if law["mismatches"]:
        parts += [
            "<h3>Where the law fails, parameter by parameter</h3>",
            where_table(law["where"], "mismatched cells"),
            "<h3>Mismatched cells by death schedule</h3>",
            "<p>Per schedule: mismatched cells of all checked cells with that schedule, and the "
            "range of each parameter among the mismatched ones (lowest &ndash; highest, "
            "distinct values).</p>",
            folded(by_group_table(law["by_schedule"]), len(law["by_schedule"]), "schedules"),
            "<h3>The largest differences</h3>", examples_table(law["examples"], hide),
        ]
        other = law["causes"]["elsewhere"]
        if other["cells"]:
            parts += ["<h3>Mismatches with U ≥ B and a positive delay</h3>",
                      where_table(other["where"], "such mismatches",
                                  among="cells with U ≥ B and a positive delay"),
                      examples_table(other["examples"], hide)]
    parts.append("</section>")
    return "".join(parts)


def by_group_table(groups: Sequence[Mapping[str, Any]]) -> str:
    """One row per group: its key, its counts and each parameter's range among its cells."""
    if not groups:
        return ""
    keys = list(groups[0]["key"])
    axes = [a for a in groups[0]["ranges"]
            if any(g["ranges"][a]["distinct"] > 1 for g in groups)
            or len({plain(g["ranges"][a]["min"]) for g in groups}) > 1]
    rows = []
    for g in groups:
        ranges = []
        for a in axes:
            r = g["ranges"][a]
            lo, hi = r["min"], r["max"]
            text = plain(lo) if lo == hi else f"{plain(lo)} \u2013 {plain(hi)}"
            ranges.append(f"{text} ({r['distinct']})" if r["distinct"] > 1 else text)
        rows.append([*(g["key"][k] for k in keys), f"{g['cells']:,} of {g['of']:,}", *ranges])
    return table([*keys, "mismatched of all", *axes], rows)


# -- b. the boundary -------------------------------------------------------------------------


def boundary_paragraphs(b: Mapping[str, Any]) -> tuple[str, list[str]]:
    """Both directions of the boundary claim, answered from the four counts."""
    if b["cells"] == 0:
        return "none", ["This sweep has no ledger cells, so the boundary is not checked."]
    out = []
    above, ap = b["above_cells"], b["above_positive"]
    if above == 0:
        out.append("<strong>Does U ≥ G + B imply zero overshoot here?</strong> Not tested: no "
                   "ledger cell has U ≥ G + B.")
    elif ap == 0:
        out.append("<strong>Does U ≥ G + B imply zero overshoot here? Yes</strong>: all "
                   f"{above:,} ledger cells with U ≥ G + B have overshoot 0.")
    else:
        out.append("<strong>Does U ≥ G + B imply zero overshoot here? No</strong>: "
                   f"{ap:,} of the {above:,} ledger cells with U ≥ G + B overshoot, at "
                   f"{where_sentence(b['where_above_positive'])}.")
    below, bz = b["below_cells"], b["below_zero"]
    d0, dpos = b["below_zero_desired_0"], b["below_zero_desired_positive"]
    if below == 0:
        out.append("<strong>Does U &lt; G + B imply overshoot?</strong> Not tested: no ledger "
                   "cell has U &lt; G + B.")
    elif bz == 0:
        out.append("<strong>Does U &lt; G + B imply overshoot? Yes</strong>: all "
                   f"{below:,} ledger cells with U &lt; G + B overshoot.")
    else:
        text = ("<strong>Does U &lt; G + B imply overshoot? Not always</strong>: "
                f"{b['below_positive']:,} of the {below:,} ledger cells with U &lt; G + B "
                f"overshoot; {bz:,} do not")
        if d0 and dpos:
            text += (f": {d0:,} of them with desired = 0 (nothing to overshoot) and "
                     f"{dpos:,} with desired &gt; 0")
        elif d0:
            text += ", all of them with desired = 0, which cannot overshoot"
        else:
            text += " although desired &gt; 0"
        if dpos:
            early = b["below_zero_desired_positive_U_below_B"]
            text += (f". Those {dpos:,} lie at {where_sentence(b['where_below_zero'])}"
                     + (f"; {early:,} of them have U &lt; B, a loop faster than a copy starts"
                        if early else ""))
        out.append(text + ".")
    kind = "fails" if ap or dpos else "holds"
    return kind, out


def boundary_section(summary: Mapping[str, Any], figures: Mapping[str, Figure]) -> str:
    """Section b: the four counts, the chart with the line U = G + B, and both answers."""
    b = summary["boundary"]
    hide = constant_axes(summary)
    kind, paragraphs = boundary_paragraphs(b)
    counts = table(["ledger cells", "overshoot = 0", "overshoot > 0", "all"], [
        ["U ≥ G + B (on or above the boundary)", b["above_zero"],
         Cell(b["above_positive"], "bad" if b["above_positive"] else ""), b["above_cells"]],
        ["U < G + B (below it)",
         Cell(b["below_zero"], "bad" if b["below_zero_desired_positive"] else ""),
         b["below_positive"], b["below_cells"]],
    ])
    parts = [
        '<section id="boundary"><h2>b. The boundary U ≥ G + B</h2>',
        "<p>By the law, the ledger controller stops overshooting once the loop period U is at "
        "least G + B: a copy is then on the ledger before the next round looks. Seed 001 "
        "claims both directions: U ≥ G + B gives zero overshoot, and U &lt; G + B gives "
        f"overshoot. The four counts are over {b['cells']:,} ledger cells: every ledger row of "
        "the sweep, whatever its other parameters.</p>",
        counts,
        verdict(kind, paragraphs),
    ]
    if "boundary" in figures:
        parts.append(figure_html(figures["boundary"]))
    if b["by_variant"]:
        parts += ["<p>The same counts per ledger variant (the boundary is seed 001's for "
                  "observe = ready without a cap; with observe = created a copy is listed G s "
                  "after creation, so its law's boundary is U ≥ G):</p>",
                  table(["variant", "cells", "U ≥ G + B, overshoot 0", "U ≥ G + B, overshoot > 0",
                         "U < G + B, overshoot 0", "U < G + B, overshoot > 0"],
                        [[v["variant"], v["cells"], v["above_zero"], v["above_positive"],
                          v["below_zero"], v["below_positive"]] for v in b["by_variant"]])]
    if b["where_above_positive"]:
        parts += ["<h3>Overshoot although U ≥ G + B</h3>",
                  where_table(b["where_above_positive"], "such cells",
                              among="cells with U ≥ G + B"),
                  examples_table(b["examples_above_positive"], hide)]
    if b["where_below_zero"]:
        parts += ["<h3>No overshoot although U &lt; G + B (desired &gt; 0)</h3>",
                  where_table(b["where_below_zero"], "such cells",
                              among="cells with U < G + B and desired > 0"),
                  examples_table(b["examples_below_zero"], hide)]
    parts.append("</section>")
    return "".join(parts)


# -- e. seed 001's tables --------------------------------------------------------------------

FIGURE_HEADS: Final = {"work_per_round": "work/round", "created": "created",
                       "unneeded": "unneeded", "delete_commands": "delete cmds",
                       "deleted": "deleted", "overshoot": "overshoot", "stable_at": "stable_at",
                       "law_overshoot": "predicted"}


def _model_cell(row: Mapping[str, Any], figure: str) -> Cell:
    """The model's figure for a published row: absent, one value, or several; marked when
    it differs from the published one."""
    value = row["model"][figure]
    if row["cells"] == 0:
        return Cell("—", "absent", "— (not in the sweep)")
    if isinstance(value, list):
        text = esc(" / ".join(plain(v) for v in value))
        return Cell(None, "bad" if figure in row["mismatched"] else "", text)
    return Cell(value, "bad" if figure in row["mismatched"] else "",
                esc(plain(value)) if isinstance(value, str) or value is None else None)


def _pair(left: str, right: str) -> str:
    """A published table and the model's, side by side."""
    return (f'<div class="pair"><div><h4>published</h4>{left}</div>'
            f"<div><h4>model (this sweep)</h4>{right}</div></div>")


def seed_tables(seed: Mapping[str, Any]) -> list[str]:
    """Seed 001's tables that the sweep has cells of, published beside the model's figures."""
    out = []
    for t in seed["tables"]:
        if t["found"] == 0:
            continue
        rows = t["rows"]
        out.append(f"<h3>{esc(t['experiment'])} ({esc(t['setting'])}): {t['found']} of "
                   f"{len(rows)} published rows in the sweep</h3>")
        if t["experiment"] == "overshoot table":
            cell = {(r["G"], r["U"]): r for r in rows}
            head = ["G \\ U", *map(str, t["U"])]
            pub = [[G, *(cell[(G, U)]["published"]["overshoot"] for U in t["U"])] for G in t["G"]]
            mod = [[G, *(_model_cell(cell[(G, U)], "overshoot") for U in t["U"])]
                   for G in t["G"]]
            out.append(_pair(table(head, pub), table(head, mod)))
            continue
        figures = t["figures"]
        key = "G" if t["experiment"] == "G scan" else "U"
        head = [key, *(FIGURE_HEADS.get(f, f) for f in figures)]
        names = list(dict.fromkeys(r["controller"] for r in rows))
        for controller in names:
            mine = [r for r in rows if r["controller"] == controller]
            pub = [[r[key], *(r["published"][f] for f in figures)] for r in mine]
            mod = [[r[key], *(_model_cell(r, f) for f in figures)] for r in mine]
            out.append((f"<h4>controller: {esc(controller)}</h4>" if len(names) > 1 else "")
                       + _pair(table(head, pub), table(head, mod)))
    return out


def seed_paragraphs(seed: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The sweep's seed 001 cells against the published figures, in words."""
    if seed["found"] == 0:
        return "none", [f"The sweep has no cell in seed 001's setting for any of the "
                        f"{seed['published']} published rows (B = 5, desired = 6, duration "
                        "900, two copies dying at second 300, the model's defaults "
                        "otherwise), so none is compared."]
    names = ", ".join(esc(s) for s in seed["schedules"])
    text = (f"The sweep has cells for {seed['found']} of the {seed['published']} rows seed "
            f"001 publishes (schedule {names}); {seed['compared']:,} sweep cells are compared "
            "with them, figure by figure. ")
    if seed["disagree"] == 0:
        return "holds", [text + "<strong>Every one agrees with every figure published "
                         "for it.</strong>"]
    return "fails", [text + f"<strong>{seed['disagree']:,} disagree</strong> with a published "
                     "figure (highlighted in the tables, listed below)."]


def seed_section(summary: Mapping[str, Any]) -> str:
    """Section e: seed 001's published tables beside the model's figures."""
    seed = summary["seed001"]
    kind, paragraphs = seed_paragraphs(seed)
    parts = ['<section id="seed"><h2>e. Seed 001\'s tables</h2>',
             "<p>Seed 001 published three tables: a scan of G (U = 15 s, both controllers), a "
             "scan of U (G = 30 s, ledger) and a 7 &times; 8 overshoot table, all with B = 5 s, "
             "six copies and two deaths at second 300. Where the sweep ran the same cells, the "
             "model's figures are set beside the published ones; a highlighted cell differs. "
             "Where several sweep cells match one row (two schedules with the same deaths, "
             "several ledger_base values) every distinct value is shown.</p>",
             verdict(kind, paragraphs), *seed_tables(seed)]
    rows = [[d["experiment"], d["controller"], d["G"], d["U"], d["schedule"], figure,
             v["published"], v["measured"]]
            for d in seed["disagreements"] for figure, v in d["figures"].items()]
    if rows:
        parts += ["<h3>Disagreements</h3>",
                  table(["experiment", "controller", "G", "U", "schedule", "figure",
                         "published", "model"], rows)]
    parts.append("</section>")
    return "".join(parts)
