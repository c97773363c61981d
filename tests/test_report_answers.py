"""The Answers section: every (controller, U) row recounted from the Parquet table with
polars, each controller's smallest zero-overshoot U, the sentence's choice, a sweep of one
U, and the controllers section's line when G has one value."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from reconsim import load_spec, run_sweep
from reconsim.report import build_report
from reconsim.report.blocks import macro
from reconsim.report.load import load_sweep
from reconsim.report.sections import answers
from tests.helpers.tables import SCHEDULES, hand_table, model_frame, write_table
from tests.test_percentile import by_hand

SEEDS = list(range(6))
ROOT = Path(__file__).resolve().parent.parent
#: The report page's widest content, px (style.css: max-width 80rem).
PAGE_WIDTH = 1280


def recount(sweep_dir: Path) -> dict[tuple[str, int], dict[str, Any]]:
    """Per (controller, U), straight from the Parquet files: the figures the section shows."""
    frame = pl.read_parquet(sweep_dir / "data" / "*.parquet")
    out = {}
    for (controller, u), part in frame.group_by("controller", "U"):
        over, unneeded = part["overshoot"].to_list(), part["unneeded"].to_list()
        out[(str(controller), int(u))] = {
            "cells": part.height,
            "overshooting": sum(1 for o in over if o > 0),
            "overshoot": (part["overshoot"].median(), by_hand(over, 95),
                          float(max(over))),
            "p99": by_hand(over, 99),
            "unneeded": (part["unneeded"].median(), by_hand(unneeded, 95),
                         float(max(unneeded))),
            "missing": part["missing_copy_seconds"].median(),
            "reads_per_round": part["reads_per_round"].median(),
            "means": {"excess_copy_seconds": part["excess_copy_seconds"].mean(),
                      "wasted_delete_commands": (part["delete_commands"]
                                                 - part["deleted"]).mean(),
                      "missing_copy_seconds": part["missing_copy_seconds"].mean(),
                      "reads": part["reads"].mean()},
        }
    return out


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three controllers, U 5..60, two G values, six seeds, a ledger delay that varies."""
    frame = model_frame({"seed": SCHEDULES["seed"]},
                        controller=["ledger", "intent", "expectations"], G=[0, 20],
                        U=[5, 10, 30, 60], B=[5], desired=[6], seed=SEEDS, G_spread=[10])
    return write_table(tmp_path_factory.mktemp("answers") / "seeded", frame)


def test_every_row_equals_a_recount_from_the_table(seeded: Path) -> None:
    s = answers.summarize(load_sweep(seeded))
    want = recount(seeded)
    assert {(r.variant, r.U) for r in s.rows} == set(want)
    assert s.U_values == (5, 10, 30, 60)
    assert [(o.axis, o.values) for o in s.over] == [("G", 2), ("seed", len(SEEDS))]
    assert s.full_grid
    for r in s.rows:
        w = want[(r.variant, r.U)]
        assert r.cells == w["cells"] == 2 * len(SEEDS)
        assert r.overshooting == w["overshooting"]
        assert (r.overshoot.median, r.overshoot.p95, r.overshoot.max) == w["overshoot"]
        assert r.overshoot_p99 == w["p99"]
        assert (r.unneeded.median, r.unneeded.p95, r.unneeded.max) == w["unneeded"]
        assert r.missing_copy_seconds_median == w["missing"]
        assert r.reads_per_round_median == pytest.approx(w["reads_per_round"], abs=1e-12)
    # The ledger overshoots somewhere: the sweep is a real question, not all zeros.
    assert any(r.overshooting for r in s.rows if r.variant == "ledger")


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A running service (initial = desired): two controllers, U 5..60, six seeds, a
    ledger delay that varies, the seed schedule's death at t = 300 and no deaths at all."""
    frame = model_frame({"seed": SCHEDULES["seed"], "none": SCHEDULES["none"]},
                        controller=["ledger", "intent"], G=[20], U=[5, 15, 60], B=[5],
                        desired=[6], seed=SEEDS, G_spread=[10], initial=[6])
    return write_table(tmp_path_factory.mktemp("answers") / "running", frame)


def recount_after(sweep_dir: Path) -> dict[tuple[str, int], tuple[Any, ...]]:
    """Per (controller, U), from the Parquet files: the response to the disturbance."""
    frame = pl.read_parquet(sweep_dir / "data" / "*.parquet")
    out = {}
    for (controller, u), part in frame.group_by("controller", "U"):
        hit = part.filter(pl.col("overshoot_after").is_not_null())
        out[(str(controller), int(u))] = (
            hit.height, hit.filter(pl.col("overshoot_after") > 0).height,
            hit.filter(pl.col("settle_after").is_null()).height,
            *((hit[m].drop_nulls().median(), by_hand(hit[m].to_list(), 95),
               float(hit[m].max())) for m in answers.AFTER))
    return out


def after_rows(s: answers.AnswersSummary) -> dict[tuple[str, int], tuple[Any, ...]]:
    return {(r.variant, r.U): (r.disturbed, r.overshooting, r.unsettled,
                               *((getattr(r, m).median, getattr(r, m).p95, getattr(r, m).max)
                                 for m in answers.AFTER)) for r in s.after}


def test_the_response_to_the_disturbance_equals_a_recount(running: Path,
                                                          seeded: Path) -> None:
    s = answers.summarize(load_sweep(running))
    assert after_rows(s) == recount_after(running)
    # Half the cells have no death event; the ledger overshoots after the one they have.
    assert {r.disturbed for r in s.after} == {len(SEEDS)}
    assert any(r.overshooting for r in s.after if r.variant == "ledger")
    html = build_report(running).html.read_text(encoding="utf-8")
    assert "After the disturbance</strong>: from the first death event on, ledger " in html
    assert "The response to the disturbance against the loop period U" in html
    # A sweep from zero copies has no such rows, and says nothing of them.
    assert answers.summarize(load_sweep(seeded)).after == ()


def test_each_controller_s_smallest_zero_u_and_the_choice(seeded: Path) -> None:
    s = answers.summarize(load_sweep(seeded))
    want = recount(seeded)
    zero = {}
    for a in s.variants:
        us = sorted(u for c, u in want if c == a.variant)
        first = next((u for u in us if want[(a.variant, u)]["overshooting"] == 0), None)
        p99 = next((u for u in us if want[(a.variant, u)]["p99"] == 0), None)
        assert (a.zero.U if a.zero else None) == first
        assert (a.p99.U if a.p99 else None) == p99
        if a.zero is not None:
            zero[a.variant] = a.zero.U
            assert a.zero.missing_copy_seconds_median == want[(a.variant, a.zero.U)]["missing"]
    # The frontier, recounted: at each one's zero U, no other as good on all four means
    # (to three places, as the report shows them) and better on one, by more than 1 %.
    means = {v: {f: round(x, 3) for f, x in want[(v, u)]["means"].items()}
             for v, u in zero.items()}

    def better(x: float, y: float) -> bool:
        return y - x > 0.01 * max(abs(x), abs(y))

    def beats(a: dict[str, float], b: dict[str, float]) -> bool:
        return (all(not better(b[f], a[f]) for f in a)
                and any(better(a[f], b[f]) for f in a))

    front = [v for v in zero if not any(beats(means[o], means[v]) for o in zero if o != v)]
    assert s.basis == "zero"
    assert list(s.best) == front
    for v in front:
        assert f"{v} at U = {zero[v]} s" in s.sentence


def hand_rows() -> list[dict[str, Any]]:
    """Two seeds per (controller, U); intent reaches zero overshoot at U 15 with fewer
    missing copy-seconds and reads than the ledger at its zero U (30): the one best
    choice. The oracle overshoots at every U."""
    rows = []
    for seed in (0, 1):
        for u in (5, 15, 30):
            ledger = {5: 6, 15: 3, 30: 0}[u] + seed
            intent = 1 if (u == 5 and seed == 1) else 0
            rows += [
                {"controller": "ledger", "U": u, "seed": seed,
                 "overshoot": 0 if u == 30 else ledger, "missing_copy_seconds": 200,
                 "reads": 60, "delete_commands": 2, "deleted": 2},
                {"controller": "intent", "U": u, "seed": seed, "overshoot": intent,
                 "missing_copy_seconds": 100 + u, "reads": 50},
                {"controller": "oracle", "U": u, "seed": seed, "overshoot": 1,
                 "missing_copy_seconds": 10, "reads": 10},
            ]
    return rows


def test_the_sentence_names_the_one_best_choice(tmp_path: Path) -> None:
    s = answers.summarize(load_sweep(write_table(tmp_path / "hand", hand_table(hand_rows()))))
    by = {a.variant: a for a in s.variants}
    assert by["ledger"].zero is not None
    assert by["ledger"].zero.U == 30
    assert by["intent"].zero is not None
    assert by["intent"].zero.U == 15
    # One seed of two overshoots at U 5: the 99th percentile is that seed's cell.
    assert by["intent"].p99 is not None
    assert by["intent"].p99.U == 15
    assert by["oracle"].zero is None
    assert by["oracle"].p99 is None
    assert s.best == ("intent",)
    assert s.sentence.startswith("Best choice: intent at U = 15 s")
    assert "oracle never reaches zero overshoot in every cell" in s.sentence
    assert [(o.axis, o.values) for o in s.over] == [("seed", 2)]
    # Whether each variant over-provisions, in the answer's words.
    assert macro("answers.html", "provision")(s) == (
        "ledger overshoots in 4 of 6 cells (up to 7 copies, at U from 5 "
        "to 15 s); intent overshoots in 1 of 6 cells (up to 1 copy, at U = 5 s); oracle "
        "overshoots in 6 of 6 cells (up to 1 copy, at U from 5 to 30 s).")


def test_a_larger_u_that_overshoots_again_is_said(tmp_path: Path) -> None:
    rows = [r | {"overshoot": 1} if (r["controller"], r["U"], r["seed"]) == ("intent", 30, 0)
            else r for r in hand_rows()]
    s = answers.summarize(load_sweep(write_table(tmp_path / "again", hand_table(rows))))
    intent = next(a for a in s.variants if a.variant == "intent")
    assert intent.zero is not None
    assert (intent.zero.U, intent.zero_stays) == (15, False)
    assert s.sentence.startswith("Best choice: intent at U = 15 s (a larger swept U "
                                 "overshoots again)")


def test_variants_by_trigger_and_cap_and_many_are_counted(tmp_path: Path) -> None:
    rows = [r | {"trigger": t, "max_per_round": m} for r in hand_rows()
            for t in ("periodic", "watch") for m in (None, 2, 3)]
    s = answers.summarize(load_sweep(write_table(tmp_path / "v", hand_table(rows))))
    assert s.varying == ("max_per_round", "trigger")
    assert "intent \u00b7 max_per_round=unlimited \u00b7 trigger=watch" in {
        a.variant for a in s.variants}
    assert [(o.axis, o.values) for o in s.over] == [("seed", 2)]
    # Every variant's rows hold its two seeds at each U: nothing pooled across variants.
    assert {r.cells for r in s.rows} == {2}
    assert s.best == tuple(a.variant for a in s.variants if a.controller == "intent")
    assert ("6 variants are all on the trade-off frontier" in s.sentence)
    assert "6 variants never reach zero overshoot in every cell" in s.sentence


def test_no_controller_without_overshoot_is_said(tmp_path: Path) -> None:
    rows = [r | {"overshoot": 1} for r in hand_rows()]
    s = answers.summarize(load_sweep(write_table(tmp_path / "all", hand_table(rows))))
    assert s.basis == "none"
    assert s.best == ()
    assert s.candidates == ()
    assert s.sentence.startswith("No controller reaches zero overshoot in the swept U "
                                 "(5 to 30 s)")


def test_one_u_says_what_it_cannot_answer(tmp_path: Path) -> None:
    rows = [r for r in hand_rows() if r["U"] == 15]
    report = build_report(write_table(tmp_path / "one", hand_table(rows)))
    s = report.data["answers"]
    assert s["U_values"] == [15]
    page = report.html.read_text(encoding="utf-8")
    assert ("U takes one value in this sweep (15 s)</strong>: this section says whether "
            "each controller overshoots at that period, not which period to choose") in page
    assert "answers" not in report.data["figures"]
    # Nor a read-cost chart against U: one line says why.
    assert "read_cost" not in report.data["figures"]
    assert "U takes one value in this sweep (15 s), so there is no chart against U." in page
    # Still answered at that U: intent has no overshoot there, the ledger has.
    assert s["sentence"].startswith("Best choice: intent at U = 15 s")


def test_controllers_chart_is_a_line_when_g_has_one_value(tmp_path: Path) -> None:
    rows = [r for r in hand_rows() if r["controller"] != "oracle"]
    report = build_report(write_table(tmp_path / "g", hand_table(rows)))
    assert "controllers" not in report.data["figures"]
    assert "tradeoff" in report.data["figures"]
    page = report.html.read_text(encoding="utf-8")
    assert "G takes one value in this sweep (30 s), so there is no chart against G" in page
    # The answers chart is drawn: U has three values.
    assert "answers" in report.data["figures"]


def test_the_measured_running_service_gets_both_answers_first(tmp_path: Path) -> None:
    # sweeps/disturbance.toml: a settled service (initial = "desired"), a ledger delay
    # drawn from its measured quantiles (5 s, median 12 s, p99 40 s), startup 3-20 s, one
    # death at t = 300, 30 seeds: the report's first section answers both questions, every
    # figure a recount of the table.
    out = tmp_path / "disturbance"
    run_sweep(load_spec(ROOT / "sweeps" / "disturbance.toml"), out, jobs=1, progress=False)
    report = build_report(out)
    assert next(k for k in report.data if k != "format") == "answers"
    s = answers.summarize(load_sweep(out))
    want = recount(out)
    assert {(r.variant, r.U): (r.cells, r.overshooting, (r.overshoot.median, r.overshoot.p95,
                                                         r.overshoot.max))
            for r in s.rows} == {k: (w["cells"], w["overshooting"], w["overshoot"])
                                 for k, w in want.items()}
    assert after_rows(s) == recount_after(out)
    assert all(r.cells == 30 for r in s.rows)
    page = report.html.read_text(encoding="utf-8")
    answers_part = page[page.index('id="answers"'):page.index('id="law"')]
    assert "<strong>Over-provisioning</strong>: ledger overshoots in " in answers_part
    assert "best choice" in answers_part.lower()
    assert "<strong>After the disturbance</strong>: from the first death event on, " in (
        answers_part)
    # Every chart fits the page (80rem: 1,280 px), its cell's long command line included.
    widths = {svg.name: float(re.search(r'<svg[^>]*\swidth="([0-9.]+)"', svg.read_text(
        encoding="utf-8")[:4000]).group(1)) for svg in (out / "figures").glob("*.svg")}
    assert len(widths) >= 7
    assert {name: w for name, w in widths.items() if w > PAGE_WIDTH} == {}


def test_the_figures_a_variant_alone_is_lowest_on_are_listed_as_a_sentence_lists() -> None:
    """Three or more read "a, b and c", not "a and b and c"."""
    def candidate(variant: str, figure: float) -> answers.Candidate:
        return answers.Candidate(variant=variant, U=10, excess_copy_seconds=figure,
                                 wasted_delete_commands=figure, missing_copy_seconds=figure,
                                 reads=100.0, beaten_by=(), on_frontier=True)

    front = [candidate("mine", 1.0), candidate("ledger", 50.0)]
    assert answers._least("mine", front) == (
        " (fewest excess copy-seconds, wasted deletes and missing copy-seconds)")
    assert answers._least("ledger", front) == ""
