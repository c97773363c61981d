"""The section "The law per step": its counts against a polars recount of the law per step
(:func:`reconsim.model.laws.step_columns`) over a real sweep, every unchecked step counted
by reason, every failure listed where a wrong response is planted, and no section for a
table without a change of desired."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from reconsim.model.laws import STEP_LAWS, STEP_PREFIX, step_columns
from reconsim.report import build_report
from reconsim.report.load import load_sweep
from reconsim.report.sections import steps
from reconsim.report.sections.steps import NO_VALUE, STEP_FIGURES, UNCHECKED
from reconsim.web.html import share
from tests.helpers.sweeps import edited, run_spec
from tests.helpers.tables import HAND_ROWS, hand_table, model_frame, write_table

#: Steps up, down and too late to respond; a death before the step; a start that is not
#: settled; a cap; B >= 2U with blind rounds: every reason but the world's and the ttl's.
SPEC = """
name = "steps"
[grid]
controller = ["ledger", "intent", "expectations"]
G = [0, 10, 30]
U = [5, 15, 40]
B = [5, 20]
desired = 6
initial = ["desired", 0]
max_per_round = ["unlimited", 4]
duration = 600
schedule = ["none", "before"]
scale = ["up", "down", "late"]
[schedule.none]
events = []
[schedule.before]
events = [[100, 1]]
[scale.up]
changes = [[301, 12]]
[scale.down]
changes = [[301, 2]]
[scale.late]
changes = [[590, 12]]
"""


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:data:`SPEC` run for real through the sweep."""
    return run_spec(tmp_path_factory.mktemp("steps"), SPEC)


def raw(sweep_dir: Path) -> pl.DataFrame:
    """The sweep's rows as stored, with the law per step and each row's position."""
    frame = pl.read_parquet(sweep_dir / "data" / "*.parquet")
    return frame.with_columns(step_columns(frame.columns)).with_row_index("row")


def step(name: str) -> str:
    return f"{STEP_PREFIX}{name}"


def recount(frame: pl.DataFrame) -> dict[tuple[str, str], dict[str, Any]]:
    """Per (direction, controller), row by row in Python: the steps, checked, held, failed
    and the unchecked by reason."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r in frame.filter(pl.col(step("at")).is_not_null()).iter_rows(named=True):
        key = ("up" if r[step("delta")] > 0 else "down", r["controller"])
        c = out.setdefault(key, {"steps": 0, "checked": 0, "held": 0, "failed": 0,
                                 "unchecked": Counter()})
        c["steps"] += 1
        holds = r[step("holds")]
        if holds is None:
            c["unchecked"][r[step("excluded")] or NO_VALUE] += 1
        else:
            c["checked"] += 1
            c["held" if holds else "failed"] += 1
    return out


def test_the_counts_are_a_recount_of_the_law_per_step(swept: Path) -> None:
    frame = raw(swept)
    s = steps.summarize(load_sweep(swept))
    want = recount(frame)
    assert {(g.direction, g.controller) for g in s.groups} == set(want)
    for g in s.groups:
        w = want[(g.direction, g.controller)]
        assert (g.steps, g.checked, g.held, g.failed) == (
            w["steps"], w["checked"], w["held"], w["failed"])
        assert g.unchecked == dict(w["unchecked"])
        assert g.steps == g.checked + sum(g.unchecked.values())
    assert s.steps == int(frame[step("at")].is_not_null().sum()) == frame.height
    assert s.law.cells == int(frame[step("holds")].is_not_null().sum())
    assert s.law.counterexamples == int((frame[step("holds")] == False).sum())  # noqa: E712
    assert s.law.holds + s.law.counterexamples == s.law.cells
    # Every reason this sweep holds is counted, and the steps checked are many.
    assert {"capped", "unsettled", "after_death", "cut_short", "slow_start"} <= set(s.unchecked)
    assert set(s.unchecked) <= set(UNCHECKED)
    assert s.law.cells > 100
    # Up first, then down; controllers in reconsim's order.
    assert [(g.direction, g.controller) for g in s.groups] == [
        (d, c) for d in ("up", "down") for c in ("ledger", "intent", "expectations")]
    assert steps.shown(s)


def test_the_page_states_the_law_counts_and_reasons(swept: Path) -> None:
    report = build_report(swept)
    data = report.data["steps"]
    page = report.html.read_text(encoding="utf-8")
    assert '<section id="steps"><h2>e. The law per step</h2>' in page
    for law in STEP_LAWS.values():
        assert f"<code>{law}</code>" in page
    assert "φ = (&minus;a) mod U" in page
    assert "with a death event at or before the step" in page
    assert "with a cap on corrections per round (max_per_round)" in page
    assert f"{data['law']['cells']:,} steps it covers" in page
    assert "(e) the law per step" in page
    assert data["steps"] == sum(g["steps"] for g in data["groups"])
    if data["law"]["counterexamples"] == 0:
        assert "The law per step: holds</strong> on all" in page
        assert data["law"]["examples"] == []


def plant(frame: pl.DataFrame) -> tuple[list[int], list[int]]:
    """Rows whose law per step holds: two steps up and one step down, to plant a wrong
    response in."""
    held = frame.filter(pl.col(step("holds")))
    up = held.filter(pl.col(step("delta")) > 0)["row"].to_list()
    down = held.filter(pl.col(step("delta")) < 0)["row"].to_list()
    return [up[0], up[-1]], [down[len(down) // 2]]


def test_every_failure_is_listed_where_a_wrong_response_is_planted(
        swept: Path, tmp_path: Path) -> None:
    frame = raw(swept)
    up, down = plant(frame)
    record = pl.element().struct
    wrong = pl.struct(record.field("at"), record.field("overshoot") + 1,
                      record.field("undershoot") + 1, record.field("missing"),
                      record.field("settle"))
    rows = pl.int_range(pl.len())
    planted = edited(swept, tmp_path / "planted", responses=pl.when(rows.is_in([*up, *down]))
                     .then(pl.col("responses").list.eval(wrong))
                     .otherwise(pl.col("responses")))
    before = steps.summarize(load_sweep(swept))
    s = steps.summarize(load_sweep(planted))
    assert s.law.counterexamples == before.law.counterexamples + 3
    assert s.law.cells == before.law.cells
    assert s.steps == before.steps
    assert s.unchecked == before.unchecked
    again = raw(planted)
    failing = again.filter(pl.col(step("holds")) == False)  # noqa: E712
    failures = s.law.examples
    assert {f["cell"] for f in failures} == set(failing["row"].to_list()) >= {*up, *down}
    assert len(failures) == s.law.counterexamples
    by_cell = {f["cell"]: f for f in failures}
    for r in failing.iter_rows(named=True):
        f = by_cell[r["row"]]
        assert tuple(f[k] for k in ("controller", "G", "U", "B")) == (
            r["controller"], r["G"], r["U"], r["B"])
        assert {n: f[n] for n in STEP_FIGURES} == {n: r[step(n)] for n in STEP_FIGURES}
        assert f["direction"] == ("up" if r[step("delta")] > 0 else "down")
    # The failures come by cell id; each one's other axes that vary are named.
    cells = [f["cell"] for f in failures if f["cell"] is not None]
    assert cells == sorted(cells)
    assert len(cells) == len(failures)
    assert {"initial", "max_per_round", "schedule", "scale"} <= set(failures[0])
    report = build_report(planted)
    page = report.html.read_text(encoding="utf-8")
    c = s.law
    assert (f"The law per step: fails</strong> on {c.counterexamples:,} of the {c.cells:,} "
            f"steps it covers ({share(c.counterexamples, c.cells)}). It holds on the other "
            f"{c.holds:,}.") in page
    assert "<h3>Every failure</h3>" in page
    assert "--cell ID" in page
    assert page.count("<h4>On a step up (Δ &gt; 0)</h4>") == 1
    assert page.count("<h4>On a step down (Δ &lt; 0)</h4>") == 1
    for cell in (*up, *down):
        assert f'<td class="num">{cell:,}</td>' in page
    saved = report.data["steps"]["law"]
    assert saved["counterexamples"] == c.counterexamples
    assert [f["cell"] for f in saved["examples"]] == [f["cell"] for f in failures]


@pytest.mark.parametrize("kind", ["no responses", "no scale"])
def test_no_section_without_a_change_of_desired(tmp_path: Path, kind: str) -> None:
    frame = hand_table(HAND_ROWS) if kind == "no responses" else model_frame()
    assert "scale" not in frame.columns
    report = build_report(write_table(tmp_path / "t", frame))
    s = steps.summarize(load_sweep(tmp_path / "t"))
    assert s.steps == 0
    assert not steps.shown(s)
    assert "steps" not in report.data
    page = report.html.read_text(encoding="utf-8")
    assert 'id="steps"' not in page
    assert "the law per step" not in page
