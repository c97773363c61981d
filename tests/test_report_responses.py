"""The section "Each event's response": every (controller, U, kind of event) recounted from
the exploded ``responses`` column of a real sweep, the kind of each event (a death, a step
up, a step down, both in one second, a change to the same desired), the figures of a
hand-built table, and no section for a table without events or without responses."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from reconsim.model.kinds import Scale
from reconsim.model.metrics import RESPONSES_DTYPE, percentile
from reconsim.model.simulate import DEATHS_DTYPE
from reconsim.report import build_report
from reconsim.report.load import ROW_DEATHS, ROW_SCALE, load_sweep
from reconsim.report.sections import responses
from reconsim.report.sections.responses import (
    KINDS,
    Response,
    Spread,
    event_kind,
    with_event_lists,
)
from tests.helpers.sweeps import run_spec
from tests.helpers.tables import HAND_ROWS, hand_table, model_frame, write_table

#: Deaths alone, with a step in their second, steps up and down, a second change, and a
#: change to the count already desired.
SPEC = """
name = "events"
[grid]
controller = ["ledger", "intent", "expectations"]
G = [0, 20]
U = [5, 15]
B = 5
desired = 6
initial = "desired"
duration = 600
schedule = ["none", "early", "together"]
scale = ["none", "up", "down", "up_down", "same"]
[schedule.none]
events = []
[schedule.early]
events = [[100, 2]]
[schedule.together]
events = [[301, 1]]
[scale.up]
changes = [[301, 12]]
[scale.down]
changes = [[301, 2]]
[scale.up_down]
changes = [[301, 12], [450, 6]]
[scale.same]
changes = [[200, 6]]
"""

FIELDS = ("overshoot", "undershoot", "missing", "settle")


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """:data:`SPEC` run for real through the sweep (180 cells)."""
    return run_spec(tmp_path_factory.mktemp("responses"), SPEC)


def kind_by_hand(row: dict[str, Any], at: int) -> str:
    """An event's kind, from the cell's deaths and changes of desired, in plain Python."""
    def desired_at(t: int) -> int:
        now = row["desired"]
        for change in row["scale"]:
            if change["at"] <= t:
                now = change["desired"]
        return int(now)

    death = any(e["at"] == at for e in row["deaths"])
    step = (any(c["at"] == at for c in row["scale"])
            and desired_at(at) != desired_at(at - 1))
    if death and step:
        return "death + step"
    if death:
        return "death"
    if step:
        return "step up" if desired_at(at) > desired_at(at - 1) else "step down"
    return "same desired"


def recount(frame: pl.DataFrame, by_u: bool) -> dict[tuple[Any, ...], dict[str, Any]]:
    """Per (controller, U, kind) (or (controller, kind)), from every record of every cell:
    the events, each figure's median, p95 (nearest rank) and max, and the unsettled."""
    values: dict[tuple[Any, ...], dict[str, list[Any]]] = defaultdict(
        lambda: {f: [] for f in FIELDS})
    for row in frame.iter_rows(named=True):
        for r in row["responses"]:
            key = (row["controller"], *([row["U"]] if by_u else []), kind_by_hand(row, r["at"]))
            for f in FIELDS:
                values[key][f].append(r[f])
    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for key, v in values.items():
        out[key] = {"events": len(v["settle"]),
                    "unsettled": sum(1 for s in v["settle"] if s is None)}
        for f in FIELDS:
            kept = [x for x in v[f] if x is not None]
            out[key][f] = Spread(percentile(kept, 0.5), percentile(kept, 0.95),
                                 max(kept) if kept else None)
    return out


def figures(r: Response) -> dict[str, Any]:
    return {"events": r.events, "unsettled": r.unsettled, **{f: getattr(r, f) for f in FIELDS}}


def test_every_row_is_a_recount_of_the_exploded_responses(swept: Path) -> None:
    s = responses.summarize(load_sweep(swept))
    frame = pl.read_parquet(swept / "data" / "*.parquet")
    assert s.of == frame.height == 180
    assert s.cells == int((frame["responses"].list.len() > 0).sum())
    assert s.events == int(frame["responses"].list.len().sum())
    assert s.varying == ()
    assert s.U_values == (5, 15)
    want = recount(frame, by_u=True)
    assert {(r.variant, r.U, r.kind) for r in s.rows} == set(want)
    for r in s.rows:
        assert figures(r) == want[(r.variant, r.U, r.kind)], (r.variant, r.U, r.kind)
    pooled = recount(frame, by_u=False)
    assert {(r.variant, r.kind) for r in s.overall} == set(pooled)
    for r in s.overall:
        assert r.U is None
        assert figures(r) == pooled[(r.variant, r.kind)], (r.variant, r.kind)
    # Every kind is there, and every event is counted under one.
    assert set(s.by_kind) == set(KINDS)
    assert sum(s.by_kind.values()) == s.events
    assert sum(r.events for r in s.rows) == sum(r.events for r in s.overall) == s.events
    # The rows come controller by controller, then by U, then kind by kind.
    order = [(r.variant, r.U, list(KINDS).index(r.kind)) for r in s.rows]
    rank = {"ledger": 0, "intent": 1, "expectations": 2}
    assert order == sorted(order, key=lambda k: (rank[k[0]], k[1], k[2]))


def test_the_page_shows_the_section_its_sentences_and_chart(swept: Path) -> None:
    report = build_report(swept)
    data = report.data["responses"]
    assert data["events"] > 0
    assert "chart" not in data
    assert "responses" in report.data["figures"]
    page = report.html.read_text(encoding="utf-8")
    assert '<section id="responses"><h2>d. Each event&#39;s response</h2>' in page
    for sentence in data["sentences"]:
        assert sentence.replace("'", "&#39;") in page
    assert data["sentences"][0].startswith("ledger, over every U, 5 to 15 s: ")
    # The letters run on without a gap.
    letters = re.findall(r'<section id="[a-z_0-9]+"><h2>([a-z])\. ', page)
    assert letters == [chr(ord("a") + i) for i in range(len(letters))]


def _event_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(
        {"desired": [r["desired"] for r in rows],
         ROW_DEATHS: [[{"at": a, "count": c} for a, c in r["deaths"]] for r in rows],
         ROW_SCALE: [[{"at": a, "desired": d} for a, d in r["scale"]] for r in rows],
         "at": [r["at"] for r in rows]},
        schema={"desired": pl.Int64, ROW_DEATHS: DEATHS_DTYPE, ROW_SCALE: Scale().dtype,
                "at": pl.Int64})


@pytest.mark.parametrize(("deaths", "scale", "at", "kind"), [
    ([(300, 2)], [], 300, "death"),
    ([(0, 2)], [], 0, "death"),
    ([], [(301, 12)], 301, "step up"),
    ([], [(301, 2)], 301, "step down"),
    ([(301, 1)], [(301, 12)], 301, "death + step"),
    ([(301, 1)], [(301, 2)], 301, "death + step"),
    ([], [(200, 6)], 200, "same desired"),
    ([(200, 1)], [(200, 6)], 200, "death"),      # the change changes nothing
    ([], [(301, 12), (601, 6)], 601, "step down"),   # from the first change's 12
    ([], [(301, 12), (601, 12)], 601, "same desired"),
    ([(601, 3)], [(301, 12), (601, 12)], 601, "death"),
    ([(100, 1)], [(301, 12), (601, 2)], 100, "death"),
    ([], [(5, 7), (9, 8), (20, 3)], 9, "step up"),
])
def test_kind_of_an_event(deaths: list[tuple[int, int]], scale: list[tuple[int, int]],
                          at: int, kind: str) -> None:
    frame = _event_frame([{"desired": 6, "deaths": deaths, "scale": scale, "at": at}])
    assert with_event_lists(frame.lazy()).select(event_kind(pl.col("at"))).collect().item() == kind
    assert kind_by_hand({"desired": 6, "deaths": [{"at": a} for a, _ in deaths],
                         "scale": [{"at": a, "desired": d} for a, d in scale]}, at) == kind


#: Three hand-built cells: a death and a step in one second; a step down, a change to the
#: same desired and a step up; two deaths.
HAND = [
    {"deaths": [(300, 2)], "scale": [(300, 8)],
     "responses": [(300, 1, 2, 40, 30)]},
    {"deaths": [], "scale": [(100, 3), (200, 3), (400, 9)],
     "responses": [(100, 3, 0, 0, 10), (200, 0, 0, 0, 1), (400, 0, 6, 120, None)]},
    {"deaths": [(50, 1), (500, 1)], "scale": [],
     "responses": [(50, 0, 1, 20, 20), (500, 0, 1, 10, None)]},
]


def hand_sweep(tmp: Path, cells: list[dict[str, Any]]) -> Path:
    """The cells of ``cells`` as a ledger sweep at U = 15, each with its own deaths,
    changes of desired and responses."""
    frame = hand_table([{"controller": "ledger", "U": 15} for _ in cells]).with_columns(
        deaths=pl.Series([[{"at": a, "count": c} for a, c in x["deaths"]] for x in cells],
                         dtype=DEATHS_DTYPE),
        schedule=pl.Series([f"s{i}" for i in range(len(cells))]),
        scale=pl.Series([[{"at": a, "desired": d} for a, d in x["scale"]] for x in cells],
                        dtype=Scale().dtype),
        responses=pl.Series([[dict(zip(("at", *FIELDS), r, strict=True))
                              for r in x["responses"]] for x in cells], dtype=RESPONSES_DTYPE))
    return write_table(tmp, frame)


def test_a_hand_built_table_s_figures(tmp_path: Path) -> None:
    s = responses.summarize(load_sweep(hand_sweep(tmp_path / "h", HAND)))
    assert (s.cells, s.of, s.events) == (3, 3, 6)
    assert s.by_kind == {"death": 2, "step up": 1, "step down": 1, "death + step": 1,
                         "same desired": 1}
    by_kind = {r.kind: r for r in s.rows}
    assert [r.kind for r in s.rows] == list(KINDS)
    death = by_kind["death"]
    # Two deaths: nearest rank of 2 values, the median the lower one.
    assert (death.events, death.unsettled) == (2, 1)
    assert death.missing == Spread(10, 20, 20)
    assert death.undershoot == Spread(1, 1, 1)
    assert death.settle == Spread(20, 20, 20)
    up = by_kind["step up"]
    assert (up.events, up.unsettled, up.settle) == (1, 1, Spread(None, None, None))
    assert up.missing == Spread(120, 120, 120)
    assert by_kind["step down"].overshoot == Spread(3, 3, 3)
    assert by_kind["death + step"].settle == Spread(30, 30, 30)
    assert by_kind["same desired"].settle == Spread(1, 1, 1)
    # One U: the sentence says it, and no chart is drawn against U.
    assert s.sentences[0].startswith("ledger, U = 15 s: 2 deaths cost a median 10 (p95 20, "
                                     "max 20) missing copy-seconds and settle in a median 20 s")
    assert "1 step up cost a median 120" in s.sentences[0]
    assert "none settled before the next event or the end" in s.sentences[0]
    assert s.chart is None
    assert responses.charts(s, None) == []  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["no responses", "no events"])
def test_no_section_without_events(tmp_path: Path, kind: str) -> None:
    if kind == "no responses":  # a table written before the responses existed
        frame = hand_table(HAND_ROWS)
        assert "responses" not in frame.columns
    else:
        frame = model_frame({"none": []})
        assert frame["responses"].list.len().max() == 0
    report = build_report(write_table(tmp_path / "t", frame))
    summary = responses.summarize(load_sweep(tmp_path / "t"))
    assert summary.events == 0
    assert not responses.shown(summary)
    assert "responses" not in report.data
    assert "responses" not in report.data["figures"]
    page = report.html.read_text(encoding="utf-8")
    assert 'id="responses"' not in page
    assert 'id="steps"' not in page
    letters = re.findall(r'<section id="[a-z_0-9]+"><h2>([a-z])\. ', page)
    assert letters == [chr(ord("a") + i) for i in range(len(letters))]
    assert "(b) the overshoot law, (c) the boundary U ≥ G + B, (d) " in page
