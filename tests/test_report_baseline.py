"""The user's current setting (a spec's ``baseline``): refused in one line where it names no
axis, no value or no cell; the Answers section opening with its figures and every other
controller and U against it, recounted from the Parquet table with polars; and the
trade-off frontier's ties."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from reconsim import run_sweep
from reconsim.model.metrics import TIES, frontier, tied
from reconsim.report import build_report
from reconsim.report.load import load_sweep
from reconsim.report.section import to_json
from reconsim.report.sections import answers
from reconsim.sweep.spec import SpecError, parse_spec
from tests.helpers.tables import hand_table, write_table
from tests.test_percentile import by_hand

ROOT = Path(__file__).resolve().parent.parent
#: Three controllers, three periods, two G values, four seeds: 72 cells.
SPEC = """
name = "baseline"
{baseline}
[grid]
controller = ["ledger", "intent", "expectations"]
U = [5, 10, 20]
G = [0, 20]
B = 5
desired = 6
duration = 400
seed = [0, 1, 2, 3]
schedule = "two"

[schedule.two]
events = [[100, 2], [250, 1]]
"""
FIGURES = ("overshoot", "unneeded", "missing_copy_seconds", "reads_per_round")


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = parse_spec(SPEC.format(baseline='baseline = { controller = "ledger", U = 10 }'))
    assert spec.baseline == {"controller": "ledger", "U": 10}
    out = tmp_path_factory.mktemp("baseline") / "sweep"
    run_sweep(spec, out, jobs=1, progress=False)
    return out


def stats(part: pl.DataFrame) -> dict[str, tuple[float, float, float]]:
    """Each figure's median, p95 (nearest rank, by hand) and max over ``part``'s cells."""
    return {m: (float(part[m].median()), float(by_hand(part[m].to_list(), 95)),  # type: ignore[arg-type]
                float(part[m].max()))  # type: ignore[arg-type]
            for m in FIGURES}


def spread(s: answers.Spread) -> tuple[float | None, float | None, float | None]:
    return s.median, s.p95, s.max


def test_the_baseline_and_every_change_equal_a_recount(swept: Path) -> None:
    s = answers.summarize(load_sweep(swept))
    assert s.baseline is not None
    frame = pl.read_parquet(swept / "data" / "*.parquet")
    mine = frame.filter((pl.col("controller") == "ledger") & (pl.col("U") == 10))
    want = stats(mine)
    assert s.baseline.cells == mine.height == 8
    assert s.baseline.kept == ()
    for m in FIGURES:
        assert spread(getattr(s.baseline, m)) == pytest.approx(want[m], abs=1e-9)
    changes = {(c.variant, c.U): c for c in s.baseline.changes}
    groups = {(str(c), int(u)): part for (c, u), part in frame.group_by("controller", "U")}
    assert set(changes) == set(groups) - {("ledger", 10)}
    for key, c in changes.items():
        theirs = stats(groups[key])
        assert c.cells == groups[key].height
        for m in FIGURES:
            delta = tuple(t - w for t, w in zip(theirs[m], want[m], strict=True))
            assert spread(getattr(c, m)) == pytest.approx(delta, abs=1e-9)
    # The ledger overshoots at U = 10 and the others do not: a real question.
    assert want["overshoot"][2] > 0
    assert changes[("intent", 10)].overshoot.median == -want["overshoot"][0]


def test_the_words_open_with_the_setting(swept: Path) -> None:
    report = build_report(swept)
    s = answers.summarize(load_sweep(swept))
    assert s.baseline is not None
    text = s.baseline.text
    b = s.baseline
    assert text.startswith("At your setting (controller ledger, U = 10): overshoot median "
                           f"{answers.num(b.overshoot.median)}, p95 "
                           f"{answers.num(b.overshoot.p95)}, max {answers.num(b.overshoot.max)}")
    intent = next(c for c in b.changes if (c.variant, c.U) == ("intent", 10))
    assert (f"intent at U = 10: overshoot {answers._signed(intent.overshoot.median)}, "
            "unneeded copies") in text
    assert "\u2212" in answers._signed(intent.overshoot.median)
    # summary.json and the page: the baseline first in the box, then its table.
    data = report.data["answers"]
    assert data["baseline"]["setting"] == {"controller": "ledger", "U": 10}
    assert data["baseline"]["text"] == text
    page = report.html.read_text(encoding="utf-8")
    box = page.index('<div class="verdict none"><p><strong>At your setting (controller ledger')
    assert box < page.index("<strong>Over-provisioning</strong>") < page.index(
        "<h3>Against your setting</h3>")
    assert "differences within 1 % count as ties" in page


def test_the_changes_keep_the_setting_s_other_axes(swept: Path) -> None:
    sweep = load_sweep(swept)
    s = answers.with_baseline(answers.answers_verdict(sweep.table, sweep.axes, sweep.sizes),
                              sweep.table, sweep.axes,
                              {"baseline": {"controller": "intent", "U": 20, "G": 20}})
    assert s.baseline is not None
    assert s.baseline.kept == ("G",)
    assert s.baseline.text.startswith("At your setting (controller intent, U = 20, G = 20)")
    frame = pl.read_parquet(swept / "data" / "*.parquet").filter(pl.col("G") == 20)
    assert s.baseline.cells == 4
    assert {c.cells for c in s.baseline.changes} == {4}
    ledger = frame.filter((pl.col("controller") == "ledger") & (pl.col("U") == 20))
    mine = frame.filter((pl.col("controller") == "intent") & (pl.col("U") == 20))
    c = next(c for c in s.baseline.changes if (c.variant, c.U) == ("ledger", 20))
    assert c.missing_copy_seconds.median == pytest.approx(
        ledger["missing_copy_seconds"].median() - mine["missing_copy_seconds"].median())  # type: ignore[operator]


def test_without_a_baseline_the_summary_has_no_baseline_part(tmp_path: Path) -> None:
    rows = [{"controller": c, "U": u, "seed": seed, "overshoot": int(c == "ledger" and u < 30)}
            for c in ("ledger", "intent") for u in (5, 30) for seed in (0, 1)]
    out = write_table(tmp_path / "plain", hand_table(rows))
    s = answers.summarize(load_sweep(out))
    assert s.baseline is None
    data = to_json(s)
    assert "baseline" not in data
    assert all("ties" not in c for c in data["candidates"])
    assert "At your setting" not in json.dumps(data)


@pytest.mark.parametrize(("baseline", "message"), [
    ('baseline = { controller = "ledger", period = 10 }',
     "baseline.period: unknown key (known: "),
    ('baseline = { controller = "ledger", U = 15 }',
     "baseline.U: 15 is not one of the axis's values ([5, 10, 20])"),
    ('baseline = { controller = "oracle" }',
     "baseline.controller: 'oracle' is not one of the axis's values"),
    ('baseline = { U = "ten" }', "baseline.U: U must be an integer"),
    ("baseline = 10", "baseline must be a table of axes and values, got 10"),
])
def test_a_bad_baseline_is_refused_in_one_line(baseline: str, message: str) -> None:
    with pytest.raises(SpecError) as exc:
        parse_spec(SPEC.format(baseline=baseline))
    assert str(exc.value).startswith(message)
    assert "\n" not in str(exc.value)


def test_a_user_s_parameter_that_does_not_apply_is_refused() -> None:
    spec = """
name = "own"
import_path = ["examples/controllers"]
baseline = {baseline}
[grid]
controller = ["ledger", "deadband:DEADBAND"]
U = [5, 10]
band = [1, 3]
"""
    ok = parse_spec(spec.format(baseline='{ controller = "deadband", band = 3 }'), ROOT)
    assert ok.baseline == {"controller": "deadband", "band": 3}
    for given, message in [
        ('{ controller = "ledger", band = 3 }',
         "baseline.band: 3 does not apply to controller 'ledger': the baseline selects no cell"),
        ('{ controller = "deadband", band = 2 }',
         "baseline.band: 2 is not one of the axis's values ([1, 3])"),
    ]:
        with pytest.raises(SpecError) as exc:
            parse_spec(spec.format(baseline=given), ROOT)
        assert str(exc.value) == message


def test_ttl_on_the_ledger_alone_selects_no_cell() -> None:
    text = SPEC.replace("B = 5", "B = 5\nttl = [60, 300]")
    with pytest.raises(SpecError) as exc:
        parse_spec(text.format(baseline='baseline = { controller = "ledger", ttl = 60 }'))
    assert str(exc.value) == ("baseline.ttl: 60 does not apply to controller 'ledger': the "
                              "baseline selects no cell")
    # Without a controller, the one ttl applies to is enough.
    assert parse_spec(text.format(baseline="baseline = { ttl = 60 }")).baseline == {"ttl": 60}


def test_a_difference_of_0_02_percent_is_a_tie_and_5_percent_is_not() -> None:
    assert TIES == 0.01
    close = {"a": {"reads": 115_163.0, "missing_copy_seconds": 100.0},
             "b": {"reads": 115_183.0, "missing_copy_seconds": 90.0}}
    assert tied(115_163, 115_183)
    rows = {t.name: t for t in frontier(close)}
    # Exactly, a has fewer reads and b fewer missing copy-seconds: both on the frontier.
    assert [t.name for t in frontier(close, ties=0.0) if t.on_frontier] == ["a", "b"]
    # Within 1 % the reads tie: b beats a, and says which difference decided it.
    assert rows["a"].beaten_by == ("b",)
    assert [(t.other, t.figure, t.mine, t.theirs) for t in rows["a"].ties] == [
        ("b", "reads", 115_163.0, 115_183.0)]
    assert rows["b"].on_frontier
    far = {"a": {"reads": 100_000.0, "missing_copy_seconds": 100.0},
           "b": {"reads": 105_000.0, "missing_copy_seconds": 90.0}}
    assert not tied(100_000, 105_000)
    assert all(t.on_frontier and not t.ties for t in frontier(far))


def tie_rows(reads: dict[str, int]) -> list[dict[str, Any]]:
    """Intent and expectations without overshoot at U 5; expectations with fewer missing
    copy-seconds, intent with ``reads`` fewer reads."""
    return [{"controller": c, "U": u, "seed": seed, "missing_copy_seconds": m,
             "reads": reads[c]}
            for c, m in (("intent", 100), ("expectations", 90)) for u in (5, 30)
            for seed in (0, 1)]


def test_the_sentence_says_which_differences_were_ties(tmp_path: Path) -> None:
    near = tie_rows({"intent": 115_163, "expectations": 115_183})
    s = answers.summarize(load_sweep(write_table(tmp_path / "near", hand_table(near))))
    assert s.best == ("expectations",)
    assert s.sentence == (
        "Best choice: expectations at U = 5 s (each controller at its smallest U with zero "
        "overshoot in every cell, by the trade-off rule). Differences within 1 % count as "
        "ties: the reads of intent and expectations (115,163 and 115,183) are taken as equal.")
    far = tie_rows({"intent": 100_000, "expectations": 105_000})
    s = answers.summarize(load_sweep(write_table(tmp_path / "far", hand_table(far))))
    assert s.best == ("intent", "expectations")
    assert s.sentence.startswith("No single best choice")
    assert "ties" not in s.sentence
