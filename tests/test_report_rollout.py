"""The section "The rolling update" on a small table of the Deployment world (the reference
model through :mod:`tests.test_rollout_law`'s adapter): its figures against a recount in
Python, the law's failures listed where a wrong duration is planted, the unchecked cells by
reason, and no section for a table without rollouts."""

from __future__ import annotations

import html
import re
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from markupsafe import Markup

from reconsim.model.metrics import METRIC_NAMES, percentile
from reconsim.report.claims import Claim
from reconsim.report.load import CORE_AXES, ROW_DEATHS, ROW_ROLLOUT, ROW_SCALE, load_sweep
from reconsim.report.page import SECTIONS
from reconsim.report.sections import rollout
from reconsim.report.sections.rollout import RolloutSummary, rollout_verdict
from reconsim.sweep.table import flat
from tests.helpers.tables import write_table
from tests.test_rollout_law import frame, grid


def text(fragment: str) -> str:
    """An HTML fragment as its reader sees it: tags as spaces, entities read, spaces one."""
    words = html.unescape(re.sub(r"</?(?:strong|code|a)\b[^>]*>", "", fragment))
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", words)).strip()


@pytest.fixture(scope="module")
def cells() -> pl.DataFrame:
    """32 settled rollouts and 4 cold starts, some not done by the end (duration 60)."""
    f = frame(grid(desired=[3, 10], max_surge=[1, "25%"], max_unavailable=[0, 1],
                   G=[0, 5], B=[2], min_ready_seconds=[0, 5], grace=[5], duration=[60]))
    cold = frame(grid(desired=[3], max_surge=[1], max_unavailable=[0, 1], G=[0, 5],
                      start=["cold"], duration=[60]))
    return pl.concat([f, cold]).with_row_index("__cell")


def recount(f: pl.DataFrame) -> dict[tuple[Any, ...], dict[str, Any]]:
    """Per group, row by row in Python."""
    out: dict[tuple[Any, ...], dict[str, Any]] = defaultdict(lambda: defaultdict(int))
    durations: dict[tuple[Any, ...], list[int]] = defaultdict(list)
    for r in f.iter_rows(named=True):
        key = (r["max_surge"], r["max_unavailable"], r["min_ready"], r["G"], r["B"])
        c = out[key]
        c["rollouts"] += 1
        if r["rollout_done_at"] is None:
            c["not_done"] += 1
        else:
            durations[key].append(r["rollout_done_at"] - r["rollout"][-1])
        c["surge_api_cells"] += r["api_surge_violation_seconds"] > 0
        c["surge_cells"] += r["surge_violation_seconds"] > 0
        c["unavailable_cells"] += r["unavailable_seconds_after_rollout"] > 0
        for name, over in (("surge_api_over", r["max_api_pods"] - r["desired"]
                            - r["surge_budget"]),
                           ("surge_over", r["peak_surge"] - r["surge_budget"]),
                           ("unavailable_over", r["desired"] - r["unavailable_budget"]
                            - r["min_available_after_rollout"])):
            c[name] = max(c[name], over)
    for key, values in durations.items():
        out[key]["median"] = percentile(values, 0.5)
        out[key]["p95"] = percentile(values, 0.95)
    return out


def test_the_figures_are_a_recount(cells: pl.DataFrame) -> None:
    s = rollout_verdict(cells)
    want = recount(cells)
    assert s.rollouts == cells.height == sum(c["rollouts"] for c in want.values())
    assert s.done == cells["rollout_done_at"].is_not_null().sum()
    assert len(s.groups) == len(want)
    assert sum(g.not_done for g in s.groups) > 0  # some rollouts outlast the run
    for g in s.groups:
        c = want[(g.max_surge, g.max_unavailable, g.min_ready, g.G, g.B)]
        assert g.rollouts == c["rollouts"]
        assert g.not_done == c["not_done"]
        assert (g.duration.median, g.duration.p95) == (c.get("median"), c.get("p95"))
        for name in ("surge_api_cells", "surge_cells", "unavailable_cells",
                     "surge_api_over", "surge_over", "unavailable_over"):
            assert getattr(g, name) == c[name], name
    assert any(g.surge_api_cells for g in s.groups)  # grace 5: terminating pods count


def test_the_law_is_checked_and_the_rest_counted_by_reason(cells: pl.DataFrame) -> None:
    s = rollout_verdict(cells)
    assert (s.law.counterexamples, s.law.examples, s.law.verdict) == (0, (), "holds")
    assert s.unchecked == {"unsettled": 4, "staggered": s.unchecked["staggered"]}
    assert s.law.cells == s.law.holds == s.rollouts - sum(s.unchecked.values()) > 20
    page = text(rollout.render(s, None, {}))  # type: ignore[arg-type]
    assert (f"The law of a rollout's duration: holds on all {s.law.cells} rollouts it covers. "
            "On every one, rollout_done_at is r + the law's duration (or, past the end, null)."
            f" {s.rollouts - s.law.cells} further rollouts are not checked, for the law says "
            "nothing of them: 4 with a start that is not settled") in page
    assert "Every failure" not in page


def test_every_failure_is_listed(cells: pl.DataFrame) -> None:
    """A wrong rollout_done_at planted in two checked cells: both listed, by cell id."""
    s0 = rollout_verdict(cells)
    checked = cells.with_columns(rollout.rollout_columns(cells.columns)).filter(
        pl.col("__rollout_holds"))
    ids = checked["__cell"].head(2).to_list()
    planted = cells.with_columns(
        rollout_done_at=pl.when(pl.col("__cell").is_in(ids))
        .then(pl.col("rollout_done_at").fill_null(0) + 1).otherwise(pl.col("rollout_done_at")))
    s = rollout_verdict(planted)
    c = s.law
    assert (c.cells, c.counterexamples, c.holds) == (s0.law.cells, 2, s0.law.cells - 2)
    assert [f["cell"] for f in c.examples] == sorted(ids)
    f = c.examples[0]
    law = checked.filter(pl.col("__cell") == f["cell"]).row(0, named=True)
    assert (f["law"], f["at"], f["waves"]) == (law["__rollout_law"], law["__rollout_at"],
                                              law["__rollout_waves"])
    assert f["measured"] == law["__rollout_measured"] + 1 or law["__rollout_measured"] is None
    page = text(rollout.render(replace(s, folder="/tmp/my sweep"), None, {}))  # type: ignore[arg-type]
    assert (f"The law of a rollout's duration: fails on 2 of the {c.cells} rollouts it covers "
            f"({c.counterexamples / c.cells:.1%}). It holds on the other {c.holds}.") in page
    assert ("Every failure Each cell where the law fails, by its id; it runs again with "
            "reconsim run --from '/tmp/my sweep' --cell ID.") in page
    # each failure a row: its id, its parameters, the law's figures and the measured one
    row = " ".join(str(f[k]) for k in ("cell", "desired", "max_surge", "max_unavailable",
                                        "min_ready", "G", "B", "grace", "at"))
    assert row in page
    assert rollout.glance(s) == Markup(
        "<a href=\"#rollout\">The rolling update</a>: <strong>the law of a rollout's duration"
        f" fails on 2 of {c.cells} ({c.counterexamples / c.cells:.1%})</strong>.")


def test_a_loaded_table_reads_the_lists_as_stored(cells: pl.DataFrame) -> None:
    """The loader flattens ``rollout``, ``scale`` and ``deaths`` to text and keeps them as
    stored in its own columns: the same figures, read from those."""
    loaded = cells.with_columns(pl.col("rollout").alias(ROW_ROLLOUT),
                                pl.col("scale").alias(ROW_SCALE),
                                pl.col("deaths").alias(ROW_DEATHS),
                                flat("rollout", cells.schema["rollout"]),
                                scale=pl.lit("none"), deaths=pl.lit("none"))
    assert loaded.schema["rollout"] == pl.String
    assert rollout_verdict(loaded) == rollout_verdict(cells)


def test_the_loader_keeps_the_template_changes_as_stored(tmp_path: Path,
                                                         cells: pl.DataFrame) -> None:
    """Loaded from its files, the table gives the same figures as the frame it was
    written from, ``rollout`` read from the loader's copy as stored."""
    # the copies' world's metrics, which the loader asks for, as zeros
    frame = cells.drop("__cell").with_columns(
        pl.lit(0).alias(c) for c in (*CORE_AXES, *METRIC_NAMES) if c not in cells.columns)
    sweep = load_sweep(write_table(tmp_path / "rollout", frame))
    schema = sweep.table.collect_schema()
    assert (schema["rollout"], schema[ROW_ROLLOUT]) == (pl.String, cells.schema["rollout"])
    loaded, direct = rollout_verdict(sweep.table), rollout_verdict(cells.drop("__cell"))
    assert (loaded.rollouts, loaded.groups, loaded.unchecked) == (
        direct.rollouts, direct.groups, direct.unchecked)
    assert loaded.law.cells == direct.law.cells > 0


def test_shown_only_with_rollouts(cells: pl.DataFrame) -> None:
    assert rollout.SECTION in SECTIONS
    s = rollout_verdict(cells)
    assert rollout.shown(s)
    assert rollout.SECTION.entries(s)["rollout"]["rollouts"] == 36
    assert [f.name for f in rollout.charts(s, None)] == ["rollout"]  # type: ignore[arg-type]
    # a table of the copies' world: no column of the Deployment world
    copies = pl.DataFrame({"controller": ["ledger"], "G": [0], "U": [5], "B": [5]})
    none = rollout_verdict(copies)
    assert none == RolloutSummary(0, 0, (), Claim.of(*rollout.CLAIM, 0, 0), {})
    assert not rollout.shown(none)
    assert rollout.SECTION.entries(none) == {}
    # the columns present, but no row of the Deployment world
    others = cells.with_columns(controller=pl.lit("ledger"))
    assert not rollout.shown(rollout_verdict(others))


def test_the_table_is_read_once_and_once_more_for_failures(
        cells: pl.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every figure comes from one read of the table; the failures, where there are any,
    from one more."""
    reads: list[object] = []

    def counted(query: pl.LazyFrame | pl.DataFrame) -> pl.DataFrame:
        reads.append(query)
        return query.collect() if isinstance(query, pl.LazyFrame) else query

    monkeypatch.setattr(rollout, "collect", counted)
    holding = rollout_verdict(cells.lazy())
    assert (holding.law.verdict, len(reads)) == ("holds", 1)
    reads.clear()
    checked = cells.with_columns(rollout.rollout_columns(cells.columns)).filter(
        pl.col("__rollout_holds"))["__cell"].head(1)
    planted = cells.with_columns(rollout_done_at=pl.when(pl.col("__cell").is_in(checked))
                                 .then(pl.col("rollout_done_at").fill_null(0) + 1)
                                 .otherwise(pl.col("rollout_done_at")))
    failing = rollout_verdict(planted.lazy())
    assert (failing.law.counterexamples, len(reads)) == (1, 2)
