"""The report's sections on costs, in words: c. read cost against the loop period,
d. controllers compared.

Every number comes from the summary dict that is also written as ``summary.json``;
strings from the data are escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final

from reconsim.report.charts import Figure
from reconsim.report.html import (
    Cell,
    cells_text,
    constant_axes,
    esc,
    figure_html,
    fixed_text,
    key_text,
    num,
    pct,
    plain,
    table,
    verdict,
    where_table,
)

# -- c. read cost ----------------------------------------------------------------------------

FLAT_FIGURES: Final = ("U_lowest", "lowest", "U_highest", "highest", "spread", "relative", "cells")


def flat_paragraph(flat: Mapping[str, Any], hide: Iterable[str] = ()) -> str:
    """Is reads per round independent of U where nothing oscillates?"""
    if flat["series"] == 0:
        return ("No two cells with overshoot 0 differ only in U, so whether reads per round "
                "depend on U without oscillation is not tested.")
    spread, rel = flat["spread"], flat["relative"]
    w = flat["widest"]
    answer = ("Yes, exactly" if spread["max"] == 0 else
              f"To within {pct(rel['max'])}" if rel["max"] is not None else "Not measurable")
    return (f"<strong>Is reads per round independent of U where nothing oscillates? {answer}."
            f"</strong> Among the {flat['cells']:,} cells with overshoot 0, in {flat['series']:,} "
            "series of "
            "cells that differ only in U, reads per round move with U by at most "
            f"{num(spread['max'])} entries ({pct(rel['max'])} of the series' lowest), typically "
            f"{num(spread['median'])} ({pct(rel['median'])}, the median; 90th percentile "
            f"{num(spread['p90'])}); {flat['series_within_one_entry']:,} series stay within one "
            "entry. A settled loop reads ledger_base + desired entries per round; what moves is "
            "the share of rounds that fall while copies are starting or being replaced. The "
            f"widest series: {key_text(w, FLAT_FIGURES, hide)}"
            f", from {num(w['lowest'])} at U = {w['U_lowest']} to {num(w['highest'])} at "
            f"U = {w['U_highest']}.")


def inflation_paragraph(inf: Mapping[str, Any], hide: Iterable[str] = ()) -> str:
    """By how much does oscillation inflate reads per round?"""
    if inf["cells"] == 0:
        return "No cell overshoots, so no oscillation inflates reads per round here."
    r = inf["ratio"]
    grows = r["max"] is not None and r["max"] > 1
    text = (f"<strong>Oscillation {'inflates it' if grows else 'does not inflate it'}</strong>: "
            f"on the {inf['cells']:,} cells with overshoot &gt; 0, reads per round are ")
    if inf["with_level"] == 0:
        return text + ("never comparable: no cell of their series has overshoot 0, so there is "
                       "no no-oscillation level to compare with.")
    top = inf["largest"]
    text += (f"up to {num(r['max'], 2)} times their series' no-oscillation level (the median "
             "over the cells of the same series with overshoot 0), typically "
             f"{num(r['median'])} times (median; 90th percentile {num(r['p90'])}). The largest: "
             f"{key_text(top, ('U', 'overshoot', 'reads_per_round', 'level', 'ratio'), hide)}, "
             f"U = {top['U']}, overshoot {num(top['overshoot'])}: {num(top['reads_per_round'], 1)} "
             f"entries per round against {num(top['level'], 2)}.")
    if inf["below_level"]:
        text += (f" {inf['below_level']:,} oscillating cells read slightly fewer entries per "
                 f"round than the level (down to {num(r['min'])} times).")
    if inf["without_level"]:
        text += (f" {inf['without_level']:,} oscillating cells have no such level (their "
                 "whole series overshoots) and are not in these figures.")
    return text


def per_second_paragraph(ps: Mapping[str, Any]) -> str:
    """Do reads per second fall as U grows?"""
    if ps["series"] == 0:
        return "No two cells differ only in U, so no trend in U is measured."
    lf = ps["last_over_first"]
    falls = lf["max"] is not None and lf["max"] < 1
    text = ("<strong>Reads per second "
            + ("fall as the loop slows</strong> (fewer rounds)" if falls else
               "do not always fall as the loop slows</strong>")
            + ": from the smallest to the largest U of a series they end at "
            f"{num(lf['median'], 4)} times their first value (median over {ps['series']:,} "
            f"series; from {num(lf['min'], 4)} to {num(lf['max'], 4)}).")
    if ps["rising"] == 0:
        return text + " They never rise from one U to the next larger one."
    rise = ps["rise"]
    return text + (f" Not strictly: in {ps['rising']:,} of the {ps['series']:,} series they "
                   f"rise somewhere from one U to the next, by at most {pct(rise['max'])} "
                   f"(median {pct(rise['median'])}), where the slower loop's rounds fall at "
                   "seconds when the ledger holds more entries.")


def by_gb_paragraphs(by: Mapping[str, Any], fixed: Mapping[str, Any]) -> list[str]:
    """For each (G, B): the fastest loop without overshoot, the cheapest one, and the price."""
    rows = by["rows"]
    if not rows:
        return ["The sweep has no ledger cells, so no (G, B) is answered."]
    n = len(rows)
    shown = esc(", ".join(f"{k} = {plain(v)}" for k, v in by["shown"].items()))
    at_boundary = [r for r in rows if r["at_boundary"]]
    never = [r for r in rows if r["zero_from"] is None]
    same = all(r["same_for_all"] for r in rows if r["zero_from"] is not None)
    out = []
    off = [r for r in rows if not r["at_boundary"] and r["zero_from"] is not None]
    if len(at_boundary) == n:
        text = (f"<strong>Which U gives zero overshoot?</strong> For every one of the {n} "
                "(G, B) pairs, the fastest loop whose overshoot is 0 under every desired count "
                "and schedule is <strong>U = G + B</strong> (the smallest U ≥ G + B the sweep "
                "ran), and every slower loop has overshoot 0 too")
    else:
        text = (f"<strong>Which U gives zero overshoot?</strong> For {len(at_boundary)} of the "
                f"{n} (G, B) pairs, the fastest loop whose overshoot is 0 under every desired "
                "count and schedule, and at every larger U, is U = G + B (the smallest U ≥ G + B "
                "the sweep ran)")
        if off:
            text += "; it is " + ", ".join(
                f"U = {r['zero_from']} at G = {r['G']}, B = {r['B']}" for r in off)
    if never:
        text += (f"; {len(never)} pair(s) overshoot for some desired count or schedule even at "
                 "the largest U: " + ", ".join(f"G = {r['G']}, B = {r['B']}" for r in never))
    if any(r["series"] > 1 for r in rows):
        text += (". The same U for every desired count and schedule." if same
                 else ". Per series (desired, schedule) it can be smaller; the table gives the "
                 "range.")
    else:
        text += "."
    below = sum(r["zero_below"] for r in rows)
    if below:
        text += (f" Below it, {cells_text(below)} {'has' if below == 1 else 'have'} overshoot 0 "
                 "all the same, under some desired counts and schedules only: nothing to rely "
                 "on.")
    out.append(text)
    cheapest = sorted({r["cheapest_U"] for r in rows if r["cheapest_U"] is not None})
    u_max = sorted({r["U_max"] for r in rows})
    both = [r for r in rows if r["at_zero_from"] and r["at_U_max"]]
    dearer = sum(r["at_zero_from"]["reads_per_second"] > r["at_U_max"]["reads_per_second"]
                 for r in both)
    if cheapest:
        where = (f"U = {cheapest[0]}" if len(cheapest) == 1
                 else f"U from {cheapest[0]} to {cheapest[-1]}, depending on (G, B)")
        out.append("<strong>At the least read cost?</strong> The U with overshoot 0 and the "
                   f"fewest reads per second is {where} for the series shown ({shown}; the "
                   f"sweep's largest U is {', '.join(map(str, u_max))}). In {dearer} of the "
                   f"{len(both)} rows the fastest loop without overshoot reads more per second "
                   "than the slowest loop: that is the trade-off, reacting soonest without "
                   "oscillating against reading least.")
    example = next((r for r in rows if r["G"] == fixed.get("G") and r["B"] == fixed.get("B")),
                   rows[len(rows) // 2])
    fast, slow = example["at_zero_from"], example["at_U_max"]
    if fast and slow:
        out.append(f"<strong>The price</strong>, at G = {example['G']} s, B = {example['B']} s "
                   f"({shown}): the fastest loop without overshoot, U = "
                   f"{example['zero_from']}, reads {num(fast['reads_per_second'])} entries per "
                   f"second and leaves {num(fast['missing_copy_seconds'])} copy-seconds missing; "
                   f"the slowest, U = {example['U_max']}, reads "
                   f"{num(slow['reads_per_second'])} per second and leaves "
                   f"{num(slow['missing_copy_seconds'])} copy-seconds missing.")
    more = sum(r["at_U_max"]["missing_copy_seconds"] > r["at_zero_from"]["missing_copy_seconds"]
               for r in both)
    fewer = sum(r["at_U_max"]["missing_copy_seconds"] < r["at_zero_from"]["missing_copy_seconds"]
                for r in both)
    if both:
        out.append(f"Waiting longer costs missing copy-seconds in {more} of the {len(both)} "
                   f"rows; in {fewer} the slowest loop misses fewer (which second a round "
                   "falls on after a death decides as much as U), in "
                   f"{len(both) - more - fewer} the same.")
    return out


def _slice(fixed: Mapping[str, Any], hide: Iterable[str]) -> str:
    """``, axis = value ...`` for the ledger rows' fixed axes that vary in the sweep, or ''."""
    text = fixed_text(fixed, {*hide, "controller"}, "ledger")
    return "" if text == "the whole sweep" else f", {text}"


def by_gb_table(by: Mapping[str, Any]) -> str:
    """One row per (G, B): the fastest and the slowest loop without overshoot, and their cost."""
    rows = []
    for r in by["rows"]:
        fast, slow = r["at_zero_from"] or {}, r["at_U_max"] or {}
        zero: Any = r["zero_from"] if r["zero_from"] is not None else Cell(
            "none", "bad", "none (overshoot at the largest U)")
        if r["zero_from"] is not None and not r["same_for_all"]:
            zero = Cell(r["zero_from"], "", f"{r['zero_from']} (by series: "
                        f"{r['zero_from_min']}\u2013{r['zero_from']})")
        rows.append([r["G"], r["B"], r["G_plus_B"], zero,
                     fast.get("reads_per_round"), fast.get("reads_per_second"),
                     fast.get("missing_copy_seconds"), fast.get("unneeded"),
                     r["U_max"], slow.get("reads_per_second"), slow.get("missing_copy_seconds"),
                     r["cheapest_U"], r["zero_below"]])
    return table(["G", "B", "G + B", "fastest U with overshoot 0", "reads / round",
                  "reads / s", "missing copy-s", "unneeded copies", "slowest U", "reads / s",
                  "missing copy-s",
                  "cheapest U with overshoot 0", "cells with overshoot 0 below the fastest"],
                 rows, missing="—")


def read_cost_section(summary: Mapping[str, Any], figures: Mapping[str, Figure]) -> str:
    """Section c: reads per round and per second against U, oscillation's toll, and the
    fastest loop without overshoot for each (G, B)."""
    rc = summary["read_cost"]
    by = rc["by_GB"]
    hide = constant_axes(summary)
    paragraphs = [flat_paragraph(rc["flat"], hide), inflation_paragraph(rc["inflation"], hide),
                  per_second_paragraph(rc["per_second"]),
                  *by_gb_paragraphs(by, rc["chart"]["fixed"])]
    parts = [
        '<section id="reads"><h2>c. Read cost versus period</h2>',
        "<p>Every round, the loop reads the whole ledger: the service's own entries plus "
        "<code>ledger_base</code> entries of other services. <code>reads</code> sums them over "
        "the run; <code>reads_per_round</code> = reads / rounds; "
        "<strong><code>reads_per_second</code> = reads / (duration + 1)</strong>, a run "
        "covering the seconds 0 … duration. Seed 001's trade-off: a faster loop reads more "
        "often, and under delay it oscillates, which puts more entries on the ledger. A "
        "<em>series</em> is a set of cells that differ only in U.</p>",
        f"<p>The chart shows one slice of the sweep: {fixed_text(rc['chart']['fixed'], hide)} "
        "(seed "
        "001's values where the sweep has them, else each parameter's most common value).</p>",
    ]
    if "read_cost" in figures:
        parts.append(figure_html(figures["read_cost"]))
    parts.append(verdict("none", paragraphs))
    if by["rows"]:
        shown = esc(", ".join(f"{k} = {plain(v)}" for k, v in by["shown"].items()))
        parts += [
            "<h3>For each (G, B): the fastest loop without overshoot, and the slowest</h3>",
            f"<p>Ledger controller{_slice(by['fixed'], hide)}. <em>Fastest U with overshoot "
            "0</em>: the smallest U from which overshoot is 0 at every larger U, for every "
            f"desired count and schedule. The figures beside it are those of one series, {shown}: "
            "reads per round and per second, missing copy-seconds (what waiting costs) and, at "
            "the fastest, unneeded copies (zero overshoot does not mean no duplicates), at that "
            "U and at the slowest loop the sweep ran. <em>Cheapest U</em>: the U with the "
            "fewest reads per second among that series' cells with overshoot 0.</p>",
            f'<div class="scroll">{by_gb_table(by)}</div>',
        ]
    ps = rc["per_second"]
    if ps["where_rising"]:
        parts += ["<details><summary>Where reads per second rise somewhere with U</summary>",
                  where_table(ps["where_rising"], "series with a rise", among="series"),
                  "</details>"]
    points = rc["chart"]["points"]
    if points:
        head = list(points[0])
        parts += ["<details><summary>The chart's cells</summary>",
                  table(head, ([p[h] for h in head] for p in points)), "</details>"]
    parts.append("</section>")
    return "".join(parts)


# -- d. controllers compared -----------------------------------------------------------------


def _range(lo: Mapping[str, Any], hi: Mapping[str, Any]) -> str:
    """``from X (variant) to Y (variant)``, or ``the same for every variant`` when equal."""
    if lo["value"] == hi["value"]:
        return f"{num(lo['value'])} for every variant"
    return (f"from {num(lo['value'])} ({esc(lo['variant'])}) to {num(hi['value'])} "
            f"({esc(hi['variant'])})")


CELL_FIGURES: Final = ("overshoot", "unneeded", "wasted_delete_commands", "stable_at")


def _labels(names: Sequence[str]) -> str:
    """Variant names in bold, escaped, comma-separated (``none`` if there are none)."""
    return ", ".join(f"<strong>{esc(n)}</strong>" for n in names) if names else "none"


#: Past this many variants, a verdict names the extremes instead of every variant.
LISTED_VARIANTS: Final = 4


def _who(names: Sequence[str], total: int, column: str) -> str:
    """Variants named, or counted (pointing to the table's column) when they are many."""
    if not names:
        return "none"
    if len(names) <= LISTED_VARIANTS:
        return _labels(names)
    return (f"{len(names)} of the {total} variants (those with 0 in the table's "
            f"&ldquo;{esc(column)}&rdquo; column)")


def _the_rest(others: Sequence[Mapping[str, Any]], key: str, say: Any) -> str:
    """Each other variant in words, or, when they are many, the range and the worst one."""
    if len(others) <= LISTED_VARIANTS:
        return "".join(f" {say(v)}." for v in others)
    worst = max(others, key=lambda v: v[key]["cells_positive"])
    least = min(v[key]["cells_positive"] for v in others)
    return (f" The other {len(others)} do, in {least:,} to {worst[key]['cells_positive']:,} "
            f"of their cells; the most: {say(worst)}.")


def controllers_paragraphs(c: Mapping[str, Any], hide: Iterable[str] = ()) -> list[str]:
    """Which variant creates no unneeded copies, never overshoots, wastes no deletes, and
    how they compare in missing and excess copy-seconds and in settling."""
    facts, variants = c["facts"], c["variants"]
    n = len(variants)

    def unneeded(v: Mapping[str, Any]) -> str:
        """A variant's unneeded copies in words."""
        u = v["unneeded"]
        return (f"{esc(v['variant'])} creates unneeded copies in {u['cells_positive']:,} of "
                f"{cells_text(v['cells'])} (up to {num(u['max'])} in one)")

    def overshoot(v: Mapping[str, Any]) -> str:
        """A variant's overshoot in words."""
        o = v["overshoot"]
        return (f"{esc(v['variant'])} overshoots in {o['cells_positive']:,} of "
                f"{cells_text(v['cells'])} (up to {num(o['max'])} copies)")

    def wasted(v: Mapping[str, Any]) -> str:
        """A variant's wasted delete commands in words."""
        w = v["wasted_delete_commands"]
        return (f"{esc(v['variant'])}: {num(w['total'])} of its {num(w['of_delete_commands'])} "
                f"delete commands, in {cells_text(w['cells_positive'])} (up to {num(w['max'])} "
                "in one)")

    others = [v for v in variants if v["variant"] not in facts["no_unneeded"]]
    out = ["<strong>No unneeded copy in any cell</strong>: "
           f"{_who(facts['no_unneeded'], n, 'cells with unneeded copies')}."
           + _the_rest(others, "unneeded", unneeded)]
    others = [v for v in variants if v["variant"] not in facts["never_overshoot"]]
    out.append("<strong>Never overshoots</strong>: "
               f"{_who(facts['never_overshoot'], n, 'cells overshooting')}."
               + _the_rest(others, "overshoot", overshoot))
    others = [v for v in variants if v["variant"] not in facts["no_wasted_deletes"]]
    out.append("<strong>No wasted delete command</strong> (one that killed nothing): "
               f"{_who(facts['no_wasted_deletes'], n, 'wasted delete commands')}."
               + _the_rest(others, "wasted_delete_commands", wasted))
    lo, hi = facts["least_missing_mean"], facts["most_missing_mean"]
    elo, ehi = facts["least_excess_mean"], facts["most_excess_mean"]
    if lo and hi and elo and ehi:
        out.append("<strong>Service</strong>, per cell on average: missing copy-seconds "
                   f"{_range(lo, hi)}; excess copy-seconds {_range(elo, ehi)}.")
    latest = facts["latest_stable"]
    text = "<strong>Settling</strong>: "
    if latest:
        worst = next(v for v in variants if v["variant"] == latest["variant"])
        cell = worst["stable_at"]["latest"]
        text += (f"the latest stable_at is second {num(latest['value'])} "
                 f"({esc(latest['variant'])}"
                 + (f", at {key_text(cell, CELL_FIGURES, hide)}" if cell else "") + "). ")
    text += "Cells that never settle (the run ends with live ≠ desired): "
    if n <= LISTED_VARIANTS:
        text += ", ".join(f"{esc(v['variant'])} {v['stable_at']['unsettled']:,} of "
                          f"{v['cells']:,}" for v in variants) + "."
    else:
        fewest = min(variants, key=lambda v: v["stable_at"]["unsettled"])
        most = facts["most_unsettled"]
        text += (f"from {fewest['stable_at']['unsettled']:,} ({esc(fewest['variant'])}) to "
                 f"{most['value']:,} ({esc(most['variant'])}).")
    out.append(text)
    return out


def controllers_table(c: Mapping[str, Any]) -> str:
    """Each variant's figures over all its cells."""
    rows = []
    for v in c["variants"]:
        o, u, w = v["overshoot"], v["unneeded"], v["wasted_delete_commands"]
        rows.append([v["variant"], v["cells"], o["cells_positive"], o["max"], u["cells_positive"],
                     u["max"], w["total"], w["cells_positive"],
                     v["excess_copy_seconds"]["mean"], v["missing_copy_seconds"]["mean"],
                     v["stable_at"]["mean"], v["stable_at"]["max"], v["stable_at"]["unsettled"]])
    return table(["controller / variant", "cells", "cells overshooting", "largest overshoot",
                  "cells with unneeded copies", "most unneeded", "wasted delete commands",
                  "cells with wasted deletes", "excess copy-s (mean)", "missing copy-s (mean)",
                  "stable_at (mean, settled)", "latest stable_at", "cells never settled"], rows)


def controllers_section(summary: Mapping[str, Any], figures: Mapping[str, Figure]) -> str:
    """Section d: every controller and variant side by side, against G."""
    c = summary["controllers"]
    varying = ", ".join(c["varying"])
    parts = ['<section id="controllers"><h2>d. Controllers compared</h2>']
    if not c["compared"]:
        only = c["variants"][0]["variant"] if c["variants"] else "none"
        parts += [f"<p>This sweep holds one controller only ({esc(only)}), so there is nothing "
                  "to compare. Its figures over all its cells:</p>", controllers_table(c),
                  "</section>"]
        return "".join(parts)
    parts.append(
        "<p>Every controller (and variant) the sweep ran, on all its cells: what its "
        "corrections cost (unneeded copies, overshoot, wasted delete commands = "
        "delete_commands &minus; deleted), the service it gives (excess and missing "
        "copy-seconds) and when it settles (stable_at). "
        + (f"A variant is a controller with its values of {esc(varying)}, which vary in this "
           "sweep. " if varying else "")
        + "The chart averages over every U, B, desired count and schedule at each G (left) "
        "and takes the largest (right).</p>")
    if "controllers" in figures:
        parts.append(figure_html(figures["controllers"]))
    parts += [verdict("none", controllers_paragraphs(c, constant_axes(summary))),
              controllers_table(c), "</section>"]
    return "".join(parts)
