"""The history of the controller benchmarks: every saved run read, quality steps found and
named, machines kept apart, and ``reconsim publish`` writing and linking the page.

Saved runs are made from ``tests/data/bench-base.json`` (a real quick run of
``bench/bench_controllers.py``) with another commit, date, machine or figure; one test
saves real runs with pytest-benchmark's ``--benchmark-autosave`` in a git repository.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from reconsim.benchmarks.compare import BenchError
from reconsim.benchmarks.history import load_history
from reconsim.benchmarks.history_page import HISTORY_PAGE, render_html
from reconsim.cli import main
from tests.helpers.child import child_env, pytest_command
from tests.helpers.runs import BASE, MACHINE_ID, saved_run


def base_figures() -> dict[str, dict[str, Any]]:
    doc = json.loads(BASE.read_text())
    return {b["name"]: b for b in doc["benchmarks"]}


def test_every_saved_run_is_read_into_tidy_frames(tmp_path: Path) -> None:
    saved_run(tmp_path, 1, "a" * 40, "2026-11-01T10:00:00+00:00")
    saved_run(tmp_path, 2, "b" * 40, "2026-11-02T11:00:00+01:00")
    h = load_history(tmp_path / "bench")
    assert h.runs.height == 2
    assert h.runs["commit"].to_list() == ["a" * 40, "b" * 40]
    assert h.runs["run"].to_list() == [0, 1]
    # the commit's time, with its offset, in UTC
    assert [str(d) for d in h.runs["date"]] == ["2026-11-01 10:00:00+00:00",
                                                 "2026-11-02 10:00:00+00:00"]
    benchmarks = base_figures()
    assert h.quality.height == 2 * sum(len(b["extra_info"]["quality"])
                                       for b in benchmarks.values())
    ledger = h.quality.filter(pl.col("variant") == "ledger", pl.col("run") == 1)
    assert dict(ledger.select("figure", "value").rows()) == \
        benchmarks["test_variant[ledger]"]["extra_info"]["quality"]
    assert h.quality["value"].dtype == pl.Int64
    stats = benchmarks["test_variant[intent]"]["stats"]
    cells = benchmarks["test_variant[intent]"]["extra_info"]["quality"]["cells"]
    intent = h.timing.filter(pl.col("variant") == "intent", pl.col("run") == 0).row(
        0, named=True)
    assert intent["min_us"] == pytest.approx(stats["min"] / cells * 1e6)
    assert intent["median_us"] == pytest.approx(stats["median"] / cells * 1e6)
    assert intent["rounds"] == stats["rounds"]
    assert h.steps.is_empty()


def test_a_quality_change_between_commits_is_found_and_named(tmp_path: Path) -> None:
    # file names out of commit order: the history follows the commits' dates
    saved_run(tmp_path, 3, "c" * 40, "2026-11-03T10:00:00+00:00",
              changes={("ledger-cap2", "reads"): -7})
    saved_run(tmp_path, 1, "b" * 40, "2026-11-02T10:00:00+00:00",
              changes={("ledger-cap2", "reads"): -7, ("intent", "never_stable"): 2})
    saved_run(tmp_path, 2, "a" * 40, "2026-11-01T10:00:00+00:00")
    h = load_history(tmp_path / "bench")
    assert h.runs["commit"].to_list() == ["a" * 40, "b" * 40, "c" * 40]
    reads = base_figures()["test_variant[ledger-cap2]"]["extra_info"]["quality"]["reads"]
    steps = h.steps.select("variant", "figure", "commit", "previous_commit", "before",
                           "value", "change").rows()
    # b changed two figures; c changed nothing more, and c's return of never_stable to the
    # base value is a step too
    never = base_figures()["test_variant[intent]"]["extra_info"]["quality"]["never_stable"]
    assert steps == [
        ("intent", "never_stable", "b" * 40, "a" * 40, never, never + 2, 2),
        ("ledger-cap2", "reads", "b" * 40, "a" * 40, reads, reads - 7, -7),
        ("intent", "never_stable", "c" * 40, "b" * 40, never + 2, never, -2),
    ]
    page = render_html(h, "bench")
    assert f"{reads:,} → {reads - 7:,}" in page
    assert "bbbbbbbbbb" in page  # the commit that made the step, as the page names it
    assert "cccccccccc: " in page  # and in the chart's step label (JSON in the page)


def test_two_machines_are_shown_apart(tmp_path: Path) -> None:
    # each machine's figures are constant on it; taken together they would alternate
    for n, node in enumerate(["vm", "<laptop>", "vm", "<laptop>"], start=1):
        changes = {("ledger", "reads"): 1} if node == "vm" else {}
        saved_run(tmp_path, n, f"{n}" * 40, f"2026-11-0{n}T10:00:00+00:00", node=node,
                  changes=changes)
    h = load_history(tmp_path / "bench")
    assert len(h.machines) == 2
    assert h.runs.group_by("machine").len()["len"].to_list() == [2, 2]
    assert sorted(h.runs["run"].to_list()) == [0, 0, 1, 1]
    assert h.steps.is_empty()
    page = render_html(h, "bench")
    assert page.count("<h2>Machine: ") == 2
    assert "Machine: &lt;laptop&gt;: Intel" in page
    assert "<laptop>" not in page.split("<script>")[0]  # escaped outside the bundle
    assert 'data-figure="m0-v0"' in page
    assert 'data-figure="m1-v9"' in page


def test_a_run_without_commit_time_is_placed_by_its_own_date(tmp_path: Path) -> None:
    saved_run(tmp_path, 1, "unversioned", None, ran="2026-11-05T10:00:00+00:00",
              changes={("ledger", "reads"): 4})
    saved_run(tmp_path, 2, "a" * 40, "2026-11-04T10:00:00+00:00")
    h = load_history(tmp_path / "bench")
    assert h.runs["commit"].to_list() == ["a" * 40, "unversioned"]
    assert h.runs["commit_time"].to_list()[1] is None
    assert h.steps.select("commit", "change").rows() == [("unversioned", 4)]


def test_publish_writes_and_links_the_history(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    saved_run(tmp_path, 1, "a" * 40, "2026-11-01T10:00:00+00:00")
    saved_run(tmp_path, 2, "b" * 40, "2026-11-02T10:00:00+00:00",
              changes={("ledger", "reads"): 1})
    assert main(["publish", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines() == [str(tmp_path / "index.html"),
                                                    str(tmp_path / HISTORY_PAGE)]
    assert '<a href="bench/history.html">' in (tmp_path / "index.html").read_text()
    page = (tmp_path / HISTORY_PAGE).read_text()
    assert "1 step(s)" in page
    assert "<script src" not in page


def test_publish_without_runs_writes_no_history(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["publish", str(tmp_path)]) == 0
    assert not (tmp_path / HISTORY_PAGE).exists()
    index = (tmp_path / "index.html").read_text()
    assert "history" not in index
    # a page left from runs since removed goes with them; runs of other benchmarks only
    # make no history either
    (tmp_path / "bench").mkdir()
    (tmp_path / HISTORY_PAGE).write_text("old")
    doc = json.loads(BASE.read_text())
    for b in doc["benchmarks"]:
        b["extra_info"] = {}
    (tmp_path / "bench" / "0001_other.json").write_text(json.dumps(doc))
    assert main(["publish", str(tmp_path)]) == 0
    assert not (tmp_path / HISTORY_PAGE).exists()
    assert capsys.readouterr().out.splitlines()[-1] == str(tmp_path / "index.html")
    assert load_history(tmp_path / "bench").skipped == (str(tmp_path / "bench" /
                                                           "0001_other.json"),)


@pytest.mark.parametrize(("content", "message"), [
    ('{"benchmarks": [', "not a JSON file"),
    ('{"runs": []}', "not a pytest-benchmark run (no 'benchmarks' list)"),
    (None, "commit_info.time: not an ISO 8601 time ('yesterday')"),
])
def test_a_corrupt_saved_run_is_one_line_naming_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | None,
        message: str) -> None:
    saved_run(tmp_path, 1, "a" * 40, "2026-11-01T10:00:00+00:00")
    bad = tmp_path / "bench" / MACHINE_ID / "0002_bad.json"
    if content is None:
        saved_run(tmp_path, 2, "bad", "yesterday")
    else:
        bad.write_text(content)
    assert main(["publish", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"error: reconsim publish: {bad}: {message}")
    assert captured.err.count("\n") == 1
    assert not (tmp_path / "index.html").exists()
    assert not (tmp_path / HISTORY_PAGE).exists()
    with pytest.raises(BenchError, match=str(bad)):
        load_history(tmp_path / "bench")


TINY_BENCH = """
import json
import pathlib

import pytest


@pytest.mark.parametrize("name", ["tiny"])
def test_variant(benchmark, name):
    benchmark.pedantic(sum, args=([1, 2],), rounds=3)
    figures = json.loads(pathlib.Path("figures.json").read_text())
    benchmark.extra_info.update(quality=figures)
"""


def test_runs_saved_by_pytest_benchmark_autosave(tmp_path: Path) -> None:
    """Two real runs, autosaved at two commits of a git repository, whose quality differs."""
    git = shutil.which("git")
    if git is None:
        pytest.skip("no git on PATH")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "bench_tiny.py").write_text(TINY_BENCH)
    (repo / ".gitignore").write_text("results/\n__pycache__/\n")
    env = {**child_env(), "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def run(*args: str, **extra: str) -> str:
        done = subprocess.run(args, cwd=repo, env={**env, **extra}, check=True,
                              capture_output=True, text=True)
        return done.stdout.strip()

    run(git, "init", "-q")
    commits = []
    for day, reads in ((1, 5), (2, 7)):
        (repo / "figures.json").write_text(json.dumps({"cells": 2, "reads": reads}))
        date = f"2026-11-0{day}T10:00:00+00:00"
        run(git, "add", "-A")
        run(git, "commit", "-q", "-m", f"day {day}", GIT_COMMITTER_DATE=date,
            GIT_AUTHOR_DATE=date)
        commits.append(run(git, "rev-parse", "HEAD"))
        run(*pytest_command("bench_tiny.py", "-q", "-p", "no:cacheprovider",
                            "--benchmark-storage=results/bench", "--benchmark-autosave"))
    saved = sorted((repo / "results" / "bench").glob("*/*.json"))
    assert [p.name[:4] for p in saved] == ["0001", "0002"]
    h = load_history(repo / "results" / "bench")
    assert h.runs["commit"].to_list() == commits
    assert h.runs["dirty"].to_list() == [False, False]
    assert h.quality.filter(pl.col("figure") == "reads")["value"].to_list() == [5, 7]
    assert h.steps.select("variant", "figure", "commit", "previous_commit", "before",
                          "value").rows() == [("tiny", "reads", commits[1], commits[0], 5, 7)]
    assert h.timing.height == 2
