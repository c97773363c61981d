"""``reconsim compare A B``: two sweeps compared cell by cell, with exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from reconsim.cli import main
from reconsim.compare.cells import SAMPLE, CompareError, compare, output_name
from tests.helpers.sweeps import compare_sweep, edited
from tests.test_percentile import by_hand


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return compare_sweep(tmp_path_factory.mktemp("sweeps") / "a")


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(["compare", *args])
    out, err = capsys.readouterr()
    return status, out, err


def test_identical_sweeps_exit_0(base: Path, tmp_path: Path,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    again = compare_sweep(tmp_path / "again")  # the same spec run again: the same figures
    page = tmp_path / "page.html"
    status, out, _ = run([str(base), str(again), "--json", "--html", str(page)], capsys)
    assert status == 0
    doc: dict[str, Any] = json.loads(out)
    assert doc["identical"]
    assert doc["cells"] == {"a": 108, "b": 108, "matched": 108, "only_a": 0, "only_b": 0}
    assert all(m["changed"] == 0 for m in doc["metrics"].values())
    assert "Identical on every metric." in page.read_text()


def test_changed_cells_are_counted_located_and_exit_1(
        base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    hit = (pl.col("controller") == "ledger") & (pl.col("G") == 30) & (pl.col("U") == 5)
    changed = edited(base, tmp_path / "b", overshoot=pl.when(hit).then(pl.col("overshoot") + 2)
                     .otherwise(pl.col("overshoot")),
                     stable_at=pl.when(hit & (pl.col("desired") == 3)).then(None)
                     .otherwise(pl.col("stable_at")))
    table = pl.read_parquet(base / "data" / "*.parquet")
    expected = table.filter(hit).height
    monkeypatch.chdir(tmp_path)
    status, out, _ = run([str(base), str(changed), "--json"], capsys)
    assert status == 1
    m = json.loads(out)["metrics"]
    assert m["overshoot"]["changed"] == expected == 4  # 2 desired x 2 schedules
    assert (m["overshoot"]["delta_min"], m["overshoot"]["delta_max"]) == (0, 2)
    assert m["stable_at"]["changed"] == 2  # a value against null counts as a change
    assert m["reads"]["changed"] == 0
    where = {w["axis"]: w for w in m["overshoot"]["where"]}
    assert [v["G"] for v in where["G"]["values"]] == [30]
    assert where["G"]["values"][0] == {"G": 30, "cells": 4, "of": 36}
    assert [v["controller"] for v in where["controller"]["values"]] == ["ledger"]
    assert "deaths" not in where  # named by the schedule
    largest = m["overshoot"]["largest"]
    assert len(largest) == 4
    assert all(r["delta"] == 2 and r["b"] == r["a"] + 2 for r in largest)
    # the page is written under its default name in the current directory
    page = tmp_path / output_name(base, changed)
    assert page.name == "a_vs_b.html"
    assert 'id="spec-delta-overshoot"' in page.read_text()


def test_tolerance(base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    changed = edited(base, tmp_path / "b", overshoot=pl.col("overshoot") + 1,
                     reads_per_round=pl.col("reads_per_round") * 1.0001)
    page = str(tmp_path / "p.html")
    assert run([str(base), str(changed), "--html", page], capsys)[0] == 1
    assert run([str(base), str(changed), "--html", page, "--tolerance", "overshoot=1"],
               capsys)[0] == 1
    status, out, _ = run([str(base), str(changed), "--html", page, "--markdown",
                          "--tolerance", "overshoot=1", "--tolerance", "reads_per_round=0.1"],
                         capsys)
    assert status == 0
    assert "| overshoot | 0 | 0.0% | 1 | 1 | 1 |" in out


def test_cells_in_one_side_only_are_counted_and_listed(
        base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = compare_sweep(tmp_path / "other", name="other", G="[10, 30, 60, 90]")
    status, out, _ = run([str(base), str(other), "--json", "--html",
                          str(tmp_path / "p.html")], capsys)
    assert status == 0  # the matched cells agree
    doc = json.loads(out)
    assert doc["cells"] == {"a": 108, "b": 144, "matched": 72, "only_a": 36, "only_b": 72}
    assert len(doc["only_a_sample"]) == SAMPLE
    assert {r["G"] for r in doc["only_a_sample"]} == {0}
    # sorted by parameters: the expectations controller's cells at G 60 and 90 come first
    assert {(r["controller"], r["G"]) for r in doc["only_b_sample"]} == {
        ("expectations", 60), ("expectations", 90)}
    text = run([str(base), str(other), "--markdown", "--html", str(tmp_path / "p.html")],
               capsys)[1]
    assert "36 only in" in text
    assert f"Cells only in {other} (72; the first {SAMPLE})" in text


def test_lazy_comparison_matches_a_plain_eager_join(base: Path, tmp_path: Path) -> None:
    changed = edited(base, tmp_path / "b", work=pl.col("work") + (pl.col("U") == 15)
                     * (pl.col("G") + 1))
    c = compare(base, changed)
    a = pl.read_parquet(base / "data" / "*.parquet")
    b = pl.read_parquet(changed / "data" / "*.parquet")
    keys = ["controller", "G", "U", "desired", "schedule"]
    j = a.join(b, on=keys, suffix="_b")
    work = next(m for m in c.metrics if m.metric == "work")
    assert work.changed == j.filter(pl.col("work") != pl.col("work_b")).height == 36
    assert work.delta_max == 31
    assert work.heatmap is not None
    assert c.panels == ("controller", "desired")  # then the axes with fewest values
    assert work.heatmap.height == 3 * 3 * 3 * 2  # G x U x panels
    heat = work.heatmap.filter(pl.col("U") == 15).group_by("G").agg(
        pl.col("delta_max").max(), pl.col("changed").sum()).sort("G")
    assert heat["delta_max"].to_list() == [1, 11, 31]
    assert heat["changed"].to_list() == [12, 12, 12]  # 3 controllers x 2 desired x 2 schedules


@pytest.mark.parametrize("case", ["missing", "not a sweep", "no overlap", "metrics",
                                  "corrupt", "tolerance metric", "tolerance value",
                                  "match axis", "ignore axis", "empty axis"])
def test_bad_input_is_one_line_exit_2_nothing_written(
        base: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    args, message = {
        "missing": ([str(base), str(tmp_path / "nope")], "no such directory"),
        "not a sweep": ([str(base), str(tmp_path)], "not a sweep"),
        "no overlap": ([str(base), str(compare_sweep(tmp_path / "far", G="[60, 90]"))],
                       "no cells in common"),
        "metrics": ([str(base), str(edited(base, tmp_path / "less", reads=pl.lit(0)))
                     ], "different metric sets"),
        "corrupt": ([str(base), str(edited(base, tmp_path / "bad"))], "unreadable table"),
        "tolerance metric": ([str(base), str(base), "--tolerance", "overshot=1"],
                             "unknown metric 'overshot'"),
        "tolerance value": ([str(base), str(base), "--tolerance", "overshoot=-1"],
                            "expected a non-negative number, got '-1'"),
        "match axis": ([str(base), str(base), "--match-on", "G,Ux"],
                       "--match-on: unknown axis 'Ux' (the sweeps' axes: controller, G, U,"),
        "ignore axis": ([str(base), str(base), "--ignore", "delay"],
                        "--ignore: unknown axis 'delay'"),
        "empty axis": ([str(base), str(base), "--ignore", "U,,G"],
                       "--ignore: an empty axis name in 'U,,G'"),
    }[case]
    if case == "corrupt":
        for part in (tmp_path / "bad" / "data").glob("*.parquet"):
            part.write_bytes(part.read_bytes()[:300])
    if case == "metrics":
        for part in (tmp_path / "less" / "data").glob("*.parquet"):
            pl.read_parquet(part).drop("reads").write_parquet(part)
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    status, out, err = run(args, capsys)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1
    assert message in err
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.fixture(scope="module")
def by_u(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two sweeps of the same grid but U: 15 in one, 30 and 45 in the other."""
    root = tmp_path_factory.mktemp("by_u")
    return (compare_sweep(root / "u15", name="u15", U="[15]"),
            compare_sweep(root / "u30", name="u30", U="[30, 45]"))


def _eager_pairs(a: Path, b: Path, on: list[str], metric: str) -> pl.DataFrame:
    """The pairs as a plain eager group-by computes them: per value of ``on``, the metric's
    median, p95 (nearest rank, counted by hand), max and null share on each side."""
    def side(path: Path, tag: str) -> pl.DataFrame:
        col = pl.col(metric)
        frame = pl.read_parquet(path / "data" / "*.parquet").group_by(on).agg(
            pl.len().alias(f"n_{tag}"), col.median().alias(f"median_{tag}"),
            col.alias("values"), col.max().cast(pl.Float64).alias(f"max_{tag}"),
            (col.null_count() / pl.len()).alias(f"nulls_{tag}"))
        p95 = [by_hand(v, 95) for v in frame["values"].to_list()]
        return frame.drop("values").with_columns(pl.Series(f"p95_{tag}", p95, pl.Float64))
    return side(a, "a").join(side(b, "b"), on=on)


def test_ignore_pairs_two_sweeps_that_differ_in_u(
        by_u: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = by_u
    page = tmp_path / "p.html"
    status, out, err = run([str(a), str(b), "--html", str(page)], capsys)
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1
    assert "no cells in common: 36 cells in" in err
    assert "the sweeps differ on U: --ignore U pairs the cells on the other axes" in err
    assert not page.exists()

    status, out, _ = run([str(a), str(b), "--ignore", "U", "--json", "--html", str(page)],
                         capsys)
    assert status == 1
    doc = json.loads(out)
    assert doc["cells"] == {"a": 36, "b": 72, "paired_a": 36, "paired_b": 72}
    assert doc["pairs"] == {"matched": 36, "only_a": 0, "only_b": 0}
    assert doc["pairing"]["ignored"] == ["U"]
    assert doc["pairing"]["distributions"]
    assert doc["axes_differ"] == [{"axis": "U", "only_a": [15], "only_b": [30, 45],
                                   "only_a_count": 1, "only_b_count": 2, "common": 0}]
    on = ["controller", "G", "desired", "schedule"]
    for metric in ("reads", "overshoot", "stable_at"):
        eager = _eager_pairs(a, b, on, metric)
        differs = eager.filter(
            pl.any_horizontal(~pl.col(f"{s}_a").eq_missing(pl.col(f"{s}_b"))
                              for s in ("median", "p95", "max", "nulls")))
        m = doc["metrics"][metric]
        assert m["changed"] == differs.height, metric
        for row in m["largest"]:
            key = pl.all_horizontal(pl.col(k) == row[k] for k in on)
            want = eager.filter(key).row(0, named=True)
            assert (row["cells_a"], row["cells_b"]) == (1, 2) == (want["n_a"], want["n_b"])
            assert (row["a"], row["b"]) == (want["median_a"], want["median_b"])
            assert (row["p95_b"], row["max_b"]) == (want["p95_b"], want["max_b"])
    html = page.read_text()
    assert "Sweeps compared pair by pair" in html
    assert "<td>U</td><td>15</td><td>30, 45</td>" in html
    assert "median A" in html

    text = run([str(a), str(b), "--ignore", "U", "--html", str(page)], capsys)[1]
    assert "Cells paired on every axis but U, compared as distributions" in text
    assert "36 pairs matched (36 cells of 36 in" in text
    assert any(line.split() == ["U", "15", "30,", "45", "0"] for line in text.splitlines())


def test_match_on_names_the_pairing_axes(by_u: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = by_u
    ignored = compare(a, b, ignore=["U"])
    matched = compare(a, b, match_on=["controller", "G", "desired", "schedule"])
    assert matched.grouped
    assert matched.matched == ignored.matched == 36
    assert [m.changed for m in matched.metrics] == [m.changed for m in ignored.metrics]
    # a schedule's deaths go with its name
    assert set(matched.keys) == {"controller", "G", "desired", "schedule", "deaths"}
    with pytest.raises(CompareError, match="no pairs in common"):
        compare(a, b, match_on=["G", "U"])


def test_several_cells_a_side_are_compared_as_distributions(base: Path, tmp_path: Path) -> None:
    same = compare(base, base, match_on=["controller"])
    assert same.identical
    assert (same.matched, same.paired_cells_a, same.paired_cells_b) == (3, 108, 108)
    assert same.axes_differ == []
    changed = edited(base, tmp_path / "b", overshoot=pl.when(pl.col("G") == 30)
                     .then(pl.col("overshoot") + 2).otherwise(pl.col("overshoot")))
    c = compare(base, changed, match_on=["controller"])
    overshoot = next(m for m in c.metrics if m.metric == "overshoot")
    eager = _eager_pairs(base, changed, ["controller"], "overshoot")
    assert {r["controller"]: (r["a"], r["b"], r["max_b"]) for r in overshoot.largest} == {
        r["controller"]: (r["median_a"], r["median_b"], r["max_b"])
        for r in eager.iter_rows(named=True)
        if (r["median_a"], r["p95_a"], r["max_a"]) != (r["median_b"], r["p95_b"], r["max_b"])}
    whole = compare(base, changed, match_on=[])  # no axis: each sweep one distribution
    assert (whole.matched, whole.paired_cells_a) == (1, 108)


def test_axes_that_differ_from_the_footers_or_the_table(by_u: tuple[Path, Path],
                                                        tmp_path: Path) -> None:
    a, b = by_u
    from_footers = compare(a, b, ignore=["U"]).axes_differ
    # rewritten without the chunks' facts: the values are read from the table
    bare_a, bare_b = edited(a, tmp_path / "a"), edited(b, tmp_path / "b")
    part = next((bare_a / "data").glob("*.parquet"))
    assert "reconsim.facts" not in pl.read_parquet_metadata(part)
    assert compare(bare_a, bare_b, ignore=["U"]).axes_differ == from_footers
    assert [x["axis"] for x in from_footers] == ["U"]
