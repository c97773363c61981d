"""``reconsim bench-compare``: two saved runs of the controller benchmarks compared.

``tests/data/bench-base.json`` and ``bench-head.json`` are two real quick runs of
``bench/bench_controllers.py`` (``--benchmark-json``); changed runs are made from them here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reconsim.benchmarks.compare import compare_runs, load_run, render
from reconsim.cli import main
from tests.helpers.runs import BASE, HEAD, changed_run

BASELINE = Path(__file__).resolve().parent.parent / "bench" / "quality-baseline.json"


def baseline_of(run: Path, tmp_path: Path) -> Path:
    """A quality baseline recording ``run``'s figures, as ``--quality-save`` writes it."""
    doc = json.loads(run.read_text())
    saved = {b["name"]: {"quality": b["extra_info"]["quality"], "microseconds_per_cell": 1.0}
             for b in doc["benchmarks"]}
    out = tmp_path / "baseline.json"
    out.write_text(json.dumps(saved))
    return out


def test_identical_quality_passes_and_shows_every_variant(capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    assert main(["bench-compare", str(BASE), str(HEAD), "--baseline", str(BASELINE),
                 "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "identical on all 10 variants" in out
    assert "| ledger | 672 | 13,524 | 216 | 87,474 | 912,093 | 133,647 | 1,118,886 |" in out
    assert "→" not in out.split("### Time")[0].split("| variant |")[1]
    # time: a ratio and its spread per variant, from the saved stats
    base, head = load_run(BASE), load_run(HEAD)
    b, h = base.variants["ledger"].timing, head.variants["ledger"].timing
    assert b is not None
    assert h is not None
    assert f"| {h.min / b.min:.2f}x | {h.median / b.median:.2f}x ({h.q1 / b.q3:.2f}x to" in out


def test_a_changed_figure_is_shown_and_fails(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    head = changed_run(tmp_path, "ledger-cap2", "wasted_delete_commands", 5)
    assert main(["bench-compare", str(BASE), str(head), "--baseline", str(BASELINE),
                 "--markdown"]) == 1
    out = capsys.readouterr().out
    assert "**17,607 → 17,612**" in out
    assert "1 of 10 variants changed; 1 not recorded in the quality baseline" in out
    row = next(line for line in out.splitlines() if line.startswith("| ledger-cap2 |"))
    assert row.endswith("changed: FAILS, not in the baseline |")


def test_a_change_recorded_in_the_baseline_passes(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    head = changed_run(tmp_path, "intent", "reads", -1)
    assert main(["bench-compare", str(BASE), str(head), "--baseline",
                 str(baseline_of(head, tmp_path)), "--markdown"]) == 0
    out = capsys.readouterr().out
    assert "**1,016,715 → 1,016,714**" in out
    assert "each recorded in the quality baseline" in out


def test_without_a_baseline_any_change_fails(tmp_path: Path) -> None:
    head = changed_run(tmp_path, "intent", "reads", -1)
    assert main(["bench-compare", str(BASE), str(head)]) == 1
    assert main(["bench-compare", str(BASE), str(HEAD)]) == 0


def test_time_never_fails(tmp_path: Path) -> None:
    doc = json.loads(HEAD.read_text())
    for b in doc["benchmarks"]:
        b["stats"] = {k: v * 100 if isinstance(v, float) else v for k, v in b["stats"].items()}
    slow = tmp_path / "slow.json"
    slow.write_text(json.dumps(doc))
    c = compare_runs(load_run(BASE), load_run(slow))
    assert not c.failed
    assert all(v.ratio is not None and v.ratio > 10 for v in c.variants)


def test_quality_against_cost_marks_the_frontier() -> None:
    c = compare_runs(load_run(BASE), load_run(HEAD))
    by = {t.name: t for t in c.tradeoffs}
    # intent beats intent-created: equal quality, fewer reads
    assert by["intent-created"].beaten_by == ("intent",)
    assert by["ledger"].on_frontier  # the least missing copy-seconds of all
    assert not by["ledger-cap2"].on_frontier
    for t in c.tradeoffs:
        for other in t.beaten_by:
            o = by[other].figures
            assert all(o[f] <= t.figures[f] for f in o)  # type: ignore[operator]
    text = render(c, markdown=True)
    assert "| intent-created | 0 | 0 | 157,545 | 1,019,766 | no: intent |" in text


def test_json_and_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "pages" / "bench.html"
    assert main(["bench-compare", str(BASE), str(HEAD), "--json", "--html", str(page)]) == 0
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert not doc["failed"]
    assert [v["name"] for v in doc["variants"]][:2] == ["ledger", "intent"]
    assert doc["variants"][0]["figures"]["reads"] == {"base": 1118886, "head": 1118886}
    html = page.read_text()
    assert "<script>" in html
    assert "https://" not in html.split("<script>")[0]
    assert 'id="spec-tradeoff"' in html
    assert "ledger-gain0.5" in html


def test_strings_from_the_files_are_escaped(tmp_path: Path) -> None:
    doc = json.loads(HEAD.read_text())
    doc["benchmarks"][0]["name"] = "test_variant[<b>x</b>]"
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps(doc))
    page = tmp_path / "p.html"
    main(["bench-compare", str(BASE), str(odd), "--html", str(page)])
    html = page.read_text()
    assert "<td>&lt;b&gt;x&lt;/b&gt;</td>" in html
    assert "<b>x</b>" not in html.replace(
        "\\u003cb\\u003ex\\u003c/b\\u003e", "")


@pytest.mark.parametrize(("content", "message"), [
    (None, "no such file"),
    ("{", "not a JSON file"),
    ('{"x": 1}', "not a pytest-benchmark run"),
    ('{"benchmarks": [{"name": "test_simulate", "extra_info": {}}]}',
     "no controller benchmarks"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          content: str | None, message: str) -> None:
    path = tmp_path / "run.json"
    if content is not None:
        path.write_text(content)
    assert main(["bench-compare", str(BASE), str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert message in err
    assert str(path) in err
