"""Sections that reason with G + B, on sweeps whose delays vary: a user's measured delay
tables with G = B = 0 (the real worst delay 420 s), uniform spreads with a jittered period,
and a sweep mixing fixed and varying delays. No red verdict may come from the nominal
G + B there: every boundary the words name is the one the cells were placed by, and every
count in the words is recounted here from the table with polars."""

from __future__ import annotations

import dataclasses
import html
import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from reconsim.model.laws import BOUNDARY, BOUNDARY_WORST
from reconsim.report import build_report
from reconsim.report.section import UNLESS_DEFAULT, to_json
from tests.helpers.sweeps import run_spec

#: The user's case: VM boot 40 / 90 / 180 s (p50 / p90 / p99, worst 360 s) and inventory
#: lag 5 / 20 / 60 s, written as G = B = 0 with quantile tables: the worst delay is 420 s.
#: U from below the p99 delays (240 s) to above the worst.
QUANTILE_SPEC = """
name = "quantiles"
[delays.boot]
quantiles = { p50 = 40, p90 = 90, p99 = 180, max = 360 }
[delays.inventory]
quantiles = { p50 = 5, p90 = 20, p99 = 60, max = 60 }
[grid]
controller = ["ledger", "intent"]
G = 0
B = 0
G_delays = "inventory"
B_delays = "boot"
U = [60, 120, 240, 300, 420, 480]
desired = 3
duration = 900
seed = { from = 0, to = 9 }
schedule = "seed"
[schedule.seed]
events = [[300, 2]]
"""
#: The user's worst delay: the two tables' last values.
WORST = 360 + 60

#: Uniform spreads: G + B = 15 nominally, 45 at worst; with U_jitter = 2 the shortest
#: interval is U - 2.
SPREAD_SPEC = """
name = "spreads"
[grid]
controller = ["ledger", "intent"]
G = 10
G_spread = [0, 20]
B = 5
B_spread = 10
U = [10, 20, 30, 45, 60]
U_jitter = [0, 2]
desired = 3
duration = 600
seed = { from = 0, to = 4 }
schedule = "seed"
[schedule.seed]
events = [[300, 2]]
"""

#: Fixed delays (G_spread = 0) beside a spread: each row placed by its own boundary.
MIXED_SPEC = """
name = "mixed"
[grid]
controller = "ledger"
G = 10
G_spread = [0, 20]
B = 5
U = [10, 20, 30, 45]
desired = 3
duration = 600
seed = { from = 0, to = 2 }
schedule = "seed"
[schedule.seed]
events = [[300, 2]]
"""


@dataclasses.dataclass(frozen=True)
class Swept:
    """A swept spec's table (as stored), its summary.json and its page."""

    table: pl.DataFrame
    summary: dict[str, Any]
    page: str


def _sweep(tmp: Path, spec: str) -> Swept:
    out = run_spec(tmp, spec)
    report = build_report(out)
    return Swept(pl.read_parquet(out / "data" / "*.parquet"),
                 json.loads(report.summary.read_text(encoding="utf-8")),
                 report.html.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def quantiles(tmp_path_factory: pytest.TempPathFactory) -> Swept:
    return _sweep(tmp_path_factory.mktemp("quantiles"), QUANTILE_SPEC)


@pytest.fixture(scope="module")
def spreads(tmp_path_factory: pytest.TempPathFactory) -> Swept:
    return _sweep(tmp_path_factory.mktemp("spreads"), SPREAD_SPEC)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Swept:
    return _sweep(tmp_path_factory.mktemp("mixed"), MIXED_SPEC)


# ------------------------------------------------------------------ reading the page


def text(fragment: str) -> str:
    """An HTML fragment as its reader sees it: tags dropped, entities read, spaces one."""
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", fragment))).strip()


def glance(page: str, anchor: str) -> str:
    """The glance line linking to section ``anchor``, as text."""
    block = re.search(r'<section id="glance">(.*?)</section>', page, re.S)
    assert block is not None
    lines = [li for li in re.findall(r"<li>(.*?)</li>", block.group(1), re.S)
             if f'href="#{anchor}"' in li]
    assert len(lines) == 1, anchor
    return text(lines[0])


def section(page: str, anchor: str) -> str:
    """Section ``anchor``'s HTML."""
    found = re.search(rf'<section id="{anchor}">(.*?)</section>', page, re.S)
    assert found is not None, anchor
    return found.group(1)


def verdicts(fragment: str) -> list[tuple[str, str]]:
    """Each verdict box of an HTML fragment: its kind and its text."""
    return [(kind, text(body)) for kind, body in
            re.findall(r'<div class="verdict ([a-z]+)">(.*?)</div>', fragment, re.S)]


# ------------------------------------------------------------------ recounting the table


def varies() -> pl.Expr:
    """Cells whose delays or period vary, from the parameters as stored."""
    return ((pl.col("G_spread") > 0) | (pl.col("B_spread") > 0) | (pl.col("U_jitter") > 0)
            | (pl.col("G_delays").list.len() > 0) | (pl.col("B_delays").list.len() > 0))


def boundary_counts(table: pl.DataFrame) -> dict[str, int]:
    """The ledger cells on each side of their own boundary (the worst case where the delays
    vary), overshooting or not, all and those whose delays vary."""
    ledger = table.filter(pl.col("controller") == "ledger")
    above = pl.when(varies()).then(pl.col("above_boundary_worst")).otherwise(
        pl.col("above_boundary"))
    o, v = pl.col("overshoot"), varies()
    return ledger.select(
        pl.len().alias("cells"),
        above.sum().alias("above_cells"), (above & (o == 0)).sum().alias("above_zero"),
        (above & (o > 0)).sum().alias("above_positive"),
        (~above).sum().alias("below_cells"), (~above & (o > 0)).sum().alias("below_positive"),
        v.sum().alias("vary"), (v & ~above).sum().alias("vary_below"),
        (v & ~above & (o > 0)).sum().alias("vary_below_positive"),
        (~v & ~above).sum().alias("fixed_below"),
        (~v & ~above & (o > 0)).sum().alias("fixed_below_positive"),
        (~v & ~above & (pl.col("desired") > 0)).sum().alias("claimed_below"),
        (~v & ~above & (o == 0) & (pl.col("desired") > 0)).sum().alias("exceptions"),
    ).row(0, named=True)


def fastest_without_overshoot(table: pl.DataFrame, fixed: dict[str, Any]) -> dict[str, Any]:
    """The read-cost slice's fastest loop without overshoot (the smallest U from which every
    seed's overshoot is 0 at every larger U) and its first U on the worst-case boundary,
    for its one (G, B); the slice's ledger cells at its delay settings (the sweeps here
    vary no other axis)."""
    cut = table.filter(pl.col("controller") == "ledger",
                       *(pl.col(k) == fixed[k] for k in ("G_spread", "B_spread", "U_jitter")
                         if k in fixed))
    assert cut.select("G", "B").unique().height == 1
    zero_from = 0
    for (_seed,), series in cut.group_by("seed"):
        overshooting = series.filter(pl.col("overshoot") > 0)["U"]
        after = series.filter(pl.col("U") > (overshooting.max() or 0))["U"]
        assert after.len(), "a seed overshoots at the largest U"
        zero_from = max(zero_from, int(after.min()))  # type: ignore[arg-type]
    boundary = cut.filter(pl.col("above_boundary_worst"))["U"].min()
    return {"zero_from": zero_from, "boundary_U": boundary}


# ------------------------------------------------------------------ the user's case


def test_user_s_tables_are_placed_by_their_worst_delay(quantiles: Swept) -> None:
    t = quantiles.table
    # The table's own worst case: U >= 420 (no jitter), whatever the nominal G + B = 0.
    assert t["above_boundary"].all()
    assert (t["above_boundary_worst"] == (t["U"] >= WORST)).all()
    counts = boundary_counts(t)
    assert counts["vary"] == counts["cells"] == 60
    b = quantiles.summary["boundary"]
    assert {k: b[k] for k in ("cells", "above_zero", "above_positive", "below_cells",
                              "below_positive")} == {
        k: counts[k] for k in ("cells", "above_zero", "above_positive", "below_cells",
                               "below_positive")}
    assert (b["above"]["cells"], b["above"]["counterexamples"]) == (
        counts["above_cells"], counts["above_positive"])
    assert b["varying"] == {
        "formula": BOUNDARY_WORST, "cells": counts["vary"],
        "above_cells": counts["above_cells"], "above_positive": counts["above_positive"],
        "below_cells": counts["vary_below"], "below_positive": counts["vary_below_positive"],
        "below_zero_desired_positive": counts["vary_below"] - counts["vary_below_positive"]}
    # Nothing below the boundary is an exception: it is not claimed where delays vary.
    assert (b["below"]["cells"], b["below"]["verdict"], b["below_implies_positive"]) == (
        0, "untested", None)
    assert b["above"]["verdict"] == "holds"
    # The loop does overshoot below the worst case: the words count it, never as a failure.
    assert counts["below_positive"] > 0


def test_user_s_boundary_is_never_red_and_names_the_worst_case(quantiles: Swept) -> None:
    counts = boundary_counts(quantiles.table)
    part = section(quantiles.page, "boundary")
    kinds = verdicts(part)
    assert [k for k, _ in kinds] == ["holds"]
    words = kinds[0][1]
    assert (f"{BOUNDARY_WORST} implies zero overshoot: holds on all "
            f"{counts['above_cells']} ledger cells on or above this worst-case boundary.") in words
    assert (f"{counts['vary_below']} of the {counts['vary']} ledger cells whose delays vary "
            f"lie below it and {counts['vary_below_positive']} of them overshoot.") in words
    assert "U ≥ G + B implies" not in words
    assert "U < G + B" not in words
    assert 'class="bad' not in part   # no count marked red
    assert glance(quantiles.page, "boundary") == (
        f"Boundary (ledger): with {BOUNDARY_WORST}, overshoot 0 in {counts['above_zero']} of "
        f"{counts['above_cells']} cells; below the worst-case boundary, where the delays "
        f"vary, overshoot is not claimed ({counts['vary_below_positive']} of "
        f"{counts['vary_below']} cells overshoot).")


def test_user_s_read_cost_speaks_of_the_worst_case(quantiles: Swept) -> None:
    by = quantiles.summary["read_cost"]["by_GB"]
    assert by["boundary"] == BOUNDARY_WORST
    want = fastest_without_overshoot(quantiles.table, by["fixed"])
    (row,) = by["rows"]
    assert (row["zero_from"], row["boundary_U"]) == (want["zero_from"], want["boundary_U"])
    assert row["boundary_U"] == WORST
    # The loop stops overshooting below the worst case: the longest draws are rare.
    assert row["zero_from"] < WORST
    assert row["at_boundary"] is False
    assert glance(quantiles.page, "reads").endswith(
        "the fastest loop without overshoot is the first U on the worst-case boundary "
        f"{BOUNDARY_WORST} for 0 of 1 (G, B) pairs, below it for 1.")
    words = text(section(quantiles.page, "reads"))
    assert (f"is the first U on the worst-case boundary (the smallest U with {BOUNDARY_WORST} "
            "the sweep ran: the delays vary here); it is "
            f"U = {want['zero_from']} at G = 0, B = 0, below the worst-case boundary's first "
            f"U, {WORST}.") in words
    assert "U = G + B" not in words
    # The chart's dashed line marks the worst case's first U, not U = G + B = 0.
    assert "Dashed: the first swept U on the worst-case boundary" in quantiles.page


def test_user_s_law_says_why_it_is_not_checked(quantiles: Swept) -> None:
    ledger = quantiles.table.filter(pl.col("controller") == "ledger")
    n = ledger.filter(varies()).height
    law = quantiles.summary["law"]
    assert (law["cells"], law["not_applicable"]) == (0, n)
    line = (f"The law's fixed G + B does not describe the {n} ledger cells whose delays vary: "
            "they are read at their lowest, mean and worst delays under Delays that vary.")
    assert glance(quantiles.page, "law") == (
        f"Overshoot law: not checked (no ledger cells it applies to). {line}")
    assert [k for k, _ in verdicts(section(quantiles.page, "law"))] == ["none"]
    assert line in verdicts(section(quantiles.page, "law"))[0][1]


def test_no_section_but_the_delays_reads_the_nominal_boundary(quantiles: Swept) -> None:
    # The answers measure the periods and name no boundary; nothing on the page says that
    # U >= G + B holds, or fails, for these cells.
    assert "G + B" not in text(section(quantiles.page, "answers"))
    fails = [w for k, w in verdicts(quantiles.page) if k == "fails"]
    assert fails == []


# ------------------------------------------------------------------ uniform spreads


def test_spreads_are_placed_by_their_worst_case(spreads: Swept) -> None:
    t = spreads.table
    counts = boundary_counts(t)
    assert counts["vary"] == counts["cells"] == 100
    # Nominally every U >= 15 is on the boundary; at worst, only U - U_jitter >= 25 or 45.
    worst = 10 + pl.col("G_spread") + 5 + 10
    assert (t["above_boundary_worst"] == t.select((pl.col("U") - pl.col("U_jitter")) >= worst)
            .to_series()).all()
    nominal = t.filter(pl.col("controller") == "ledger", pl.col("above_boundary"),
                       ~pl.col("above_boundary_worst"), pl.col("overshoot") > 0)
    assert nominal.height > 0    # the cells the nominal boundary would have counted as red
    b = spreads.summary["boundary"]
    assert (b["above"]["cells"], b["above_positive"], b["below_cells"], b["below_positive"]) == (
        counts["above_cells"], counts["above_positive"], counts["below_cells"],
        counts["below_positive"])
    assert b["varying"]["cells"] == counts["vary"]
    kinds = verdicts(section(spreads.page, "boundary"))
    assert [k for k, _ in kinds] == ["holds"]
    assert glance(spreads.page, "boundary") == (
        f"Boundary (ledger): with {BOUNDARY_WORST}, overshoot 0 in {counts['above_zero']} of "
        f"{counts['above_cells']} cells; below the worst-case boundary, where the delays "
        f"vary, overshoot is not claimed ({counts['vary_below_positive']} of "
        f"{counts['vary_below']} cells overshoot).")


def test_spreads_read_cost_speaks_of_the_worst_case(spreads: Swept) -> None:
    by = spreads.summary["read_cost"]["by_GB"]
    assert by["boundary"] == BOUNDARY_WORST
    want = fastest_without_overshoot(spreads.table, by["fixed"])
    (row,) = by["rows"]
    assert (row["zero_from"], row["boundary_U"]) == (want["zero_from"], want["boundary_U"])
    at = int(row["zero_from"] == row["boundary_U"])
    below = int(row["zero_from"] < row["boundary_U"])
    assert glance(spreads.page, "reads").endswith(
        "the fastest loop without overshoot is the first U on the worst-case boundary "
        f"{BOUNDARY_WORST} for {at} of 1 (G, B) pairs, below it for {below}.")
    assert "U = G + B" not in text(section(spreads.page, "reads"))


def test_spreads_law_names_its_cells_and_where_they_are_read(spreads: Swept) -> None:
    n = spreads.table.filter(pl.col("controller") == "ledger", varies()).height
    assert glance(spreads.page, "law").endswith(
        f"The law's fixed G + B does not describe the {n} ledger cells whose delays vary: "
        "they are read at their lowest, mean and worst delays under Delays that vary.")


# ------------------------------------------------------------------ fixed beside varying


def test_mixed_sweep_places_each_cell_by_its_own_boundary(mixed: Swept) -> None:
    counts = boundary_counts(mixed.table)
    assert 0 < counts["vary"] < counts["cells"]
    assert counts["fixed_below"] > 0
    assert counts["vary_below"] > 0
    b = mixed.summary["boundary"]
    assert (b["above"]["cells"], b["above_positive"], b["below_cells"], b["below_positive"]) == (
        counts["above_cells"], counts["above_positive"], counts["below_cells"],
        counts["below_positive"])
    assert (b["below"]["cells"], b["below"]["counterexamples"]) == (
        counts["claimed_below"], counts["exceptions"])
    assert counts["exceptions"] == 0
    assert b["below_implies_positive"] is (counts["fixed_below"] == counts["fixed_below_positive"])
    mixed_form = f"{BOUNDARY} (where the delays vary, {BOUNDARY_WORST})"
    assert glance(mixed.page, "boundary") == (
        f"Boundary (ledger): with {mixed_form}, overshoot 0 in {counts['above_zero']} of "
        f"{counts['above_cells']} cells; with fixed delays and U < G + B, overshoot in "
        f"{counts['fixed_below_positive']} of {counts['fixed_below']}; below the worst-case "
        "boundary, where the delays vary, overshoot is not claimed "
        f"({counts['vary_below_positive']} of {counts['vary_below']} cells overshoot).")
    kinds = verdicts(section(mixed.page, "boundary"))
    assert [k for k, _ in kinds] == ["holds"]
    assert ("U < G + B implies overshoot: holds on all "
            f"{counts['claimed_below']} ledger cells with fixed delays, U < G + B and "
            "desired > 0.") in kinds[0][1]
    if counts["claimed_below"] < counts["fixed_below"]:   # desired = 0 below, not claimed
        assert (f"In all, {counts['fixed_below_positive']} of the {counts['fixed_below']} "
                "ledger cells with fixed delays and U < G + B overshoot.") in kinds[0][1]
    # The read-cost slice takes G_spread = 0, seed 001's: fixed delays, U = G + B.
    by = mixed.summary["read_cost"]["by_GB"]
    assert "boundary" not in by
    assert by["fixed"].get("G_spread", 0) == 0


# ------------------------------------------------------------------ summary.json


@dataclasses.dataclass(frozen=True, slots=True)
class Optional:
    name: str
    extra: str = dataclasses.field(default="", metadata=UNLESS_DEFAULT)


def test_unless_default_fields_are_in_summary_json_only_when_set() -> None:
    # The fields the worst case adds stay out of a fixed-delay sweep's summary.json.
    assert to_json(Optional("a")) == {"name": "a"}
    assert to_json(Optional("a", "b")) == {"name": "a", "extra": "b"}
