"""Read cost against the loop period: every verdict figure against a table worked out by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconsim.report import build_report
from reconsim.report.build import summarize
from reconsim.report.load import load_sweep
from reconsim.report.sections import read_cost as read_cost_section
from tests.helpers.tables import hand_table, model_frame, write_table


def series(controller: str, G: int, schedule: str,
           cells: list[tuple[int, int, float, int, int]]) -> list[dict[str, Any]]:
    """Rows of one series (cells differing only in U): (U, overshoot, reads_per_round, reads,
    missing_copy_seconds). duration 899: reads per second = reads / 900."""
    return [{"controller": controller, "G": G, "B": 5, "desired": 6, "schedule": schedule,
             "duration": 899, "U": U, "overshoot": o, "reads_per_round": rpr, "reads": reads,
             "missing_copy_seconds": missing}
            for U, o, rpr, reads, missing in cells]


#: Four series. Reads per second (reads / 900) beside each row.
ROWS = [
    # A: overshoot below U = 35 = G + B. Zero-overshoot reads/round 26, 25, 25.2: spread 1,
    # 1 / 25 = 4%; level (their median) 25.2, so 52 / 25.2 = 2.063 and 30 / 25.2 = 1.190.
    *series("ledger", 30, "seed", [(5, 36, 52.0, 9000, 10),     # 10 /s
                                   (15, 12, 30.0, 2700, 20),    # 3
                                   (35, 0, 26.0, 1800, 140),    # 2
                                   (60, 0, 25.0, 900, 120),     # 1
                                   (90, 0, 25.2, 990, 160)]),   # 1.1: a rise of 10% from 1
    # A2: the same (G, B), another schedule: overshoot 0 at U = 5 too (below its zero_from,
    # 35). Zero-overshoot reads/round 24, 26, 25, 25: spread 2, 2 / 24 = 8.33%; level 25,
    # so 28 / 25 = 1.12.
    *series("ledger", 30, "none", [(5, 0, 24.0, 9000, 0), (15, 6, 28.0, 3600, 0),
                                   (35, 0, 26.0, 1800, 0), (60, 0, 25.0, 900, 0),
                                   (90, 0, 25.0, 900, 0)]),      # 10, 4, 2, 1, 1 /s
    # B: G + B = 5, never overshoots: spread 0; zero_from = 5.
    *series("ledger", 0, "seed", [(5, 0, 26.0, 4500, 10), (15, 0, 26.0, 1800, 30),
                                  (35, 0, 26.0, 900, 40)]),      # 5, 2, 1 /s
    # C: another controller: spread 1, 1 / 24 = 4.17%.
    *series("intent", 30, "seed", [(5, 0, 24.0, 900, 0), (15, 0, 25.0, 450, 0)]),  # 1, 0.5
]


@pytest.fixture(scope="module")
def read_cost(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sweep = write_table(tmp_path_factory.mktemp("rc") / "rc", hand_table(ROWS))
    return summarize(load_sweep(sweep))["read_cost"]  # type: ignore[no-any-return]


def test_reads_per_round_without_oscillation(read_cost: dict[str, Any]) -> None:
    flat = read_cost["flat"]
    assert (flat["series"], flat["cells"]) == (4, 3 + 4 + 3 + 2)
    assert (flat["spread"]["max"], flat["spread"]["median"], flat["spread"]["min"]) == (2, 1, 0)
    # relative spreads: 1/25, 2/24, 0, 1/24; median (0.04 + 0.041667) / 2
    assert (flat["relative"]["max"], flat["relative"]["median"]) == (0.0833, 0.0408)
    assert flat["series_within_one_entry"] == 1   # B only: spread 0 < 1
    w = flat["widest"]
    assert (w["schedule"], w["G"], w["U_lowest"], w["lowest"], w["U_highest"], w["highest"]) == (
        "none", 30, 5, 24.0, 35, 26.0)


def test_oscillation_inflates_reads_per_round(read_cost: dict[str, Any]) -> None:
    inf = read_cost["inflation"]
    assert (inf["cells"], inf["with_level"], inf["without_level"], inf["below_level"]) == (
        3, 3, 0, 0)
    # 52 / 25.2, 30 / 25.2, 28 / 25
    assert (inf["ratio"]["max"], inf["ratio"]["median"], inf["ratio"]["min"]) == (
        2.063, 1.19, 1.12)
    top = inf["largest"]
    assert (top["schedule"], top["U"], top["overshoot"], top["level"], top["ratio"]) == (
        "seed", 5, 36, 25.2, 2.0635)
    assert [(c["controller"], c["cells"]) for c in inf["by_controller"]] == [("ledger", 3)]


def test_reads_per_second_fall_with_one_rise(read_cost: dict[str, Any]) -> None:
    ps = read_cost["per_second"]
    assert (ps["series"], ps["rising"]) == (4, 1)
    assert ps["rise"]["max"] == 0.1    # 1 -> 1.1 /s in A, from U = 60 to U = 90
    assert ps["largest_rise"]["schedule"] == "seed"
    # last / first: A 1.1 / 10, A2 1 / 10, B 1 / 5, C 0.5 / 1
    assert (ps["last_over_first"]["min"], ps["last_over_first"]["median"],
            ps["last_over_first"]["max"]) == (0.1, 0.155, 0.5)


def test_fastest_and_cheapest_loop_without_overshoot_per_g_and_b(
        read_cost: dict[str, Any]) -> None:
    by = read_cost["by_GB"]
    assert by["shown"] == {"desired": 6, "schedule": "seed"}
    assert by["fixed"]["duration"] == 899
    low, high = by["rows"]
    assert (low["G"], low["B"], low["series"], low["zero_from"], low["boundary_U"]) == (
        0, 5, 1, 5, 5)
    assert (low["at_boundary"], low["zero_below"], low["cheapest_U"], low["U_max"]) == (
        True, 0, 35, 35)
    assert low["at_zero_from"] == {"reads_per_round": 26.0, "reads_per_second": 5.0,
                                   "missing_copy_seconds": 10, "unneeded": 0, "overshoot": 0}
    assert (high["G"], high["series"], high["zero_from"], high["zero_from_min"]) == (30, 2, 35, 35)
    assert (high["same_for_all"], high["at_boundary"], high["zero_below"]) == (True, True, 1)
    assert (high["cheapest_U"], high["U_max"]) == (60, 90)   # 1 /s at 60 beats 1.1 at 90
    assert high["at_zero_from"]["reads_per_second"] == 2.0
    assert high["at_zero_from"]["missing_copy_seconds"] == 140
    assert high["at_U_max"]["reads_per_second"] == 1.1
    assert high["at_U_max"]["missing_copy_seconds"] == 160


def test_a_series_overshooting_at_its_largest_u_has_no_zero_from(tmp_path: Path) -> None:
    rows = series("ledger", 60, "seed", [(15, 12, 30.0, 1800, 0), (35, 6, 28.0, 900, 0)])
    rows += series("ledger", 0, "seed", [(15, 0, 26.0, 1800, 0), (35, 0, 26.0, 900, 0)])
    report = build_report(write_table(tmp_path / "never", hand_table(rows)))
    rows_by_g = {r["G"]: r for r in report.data["read_cost"]["by_GB"]["rows"]}
    assert (rows_by_g[60]["zero_from"], rows_by_g[60]["never_zero"]) == (None, 1)
    assert rows_by_g[60]["at_boundary"] is False
    assert rows_by_g[60]["cheapest_U"] is None
    assert (rows_by_g[0]["zero_from"], rows_by_g[0]["at_boundary"]) == (15, True)
    page = report.html.read_text(encoding="utf-8")
    assert "none (overshoot at the largest U)" in page
    assert "For 1 of the 2 (G, B) pairs" in page
    assert "even at the largest U: G = 60, B = 5" in page


def test_page_answers_the_read_cost_questions_with_the_summary_s_numbers(
        tmp_path: Path) -> None:
    report = build_report(write_table(tmp_path / "rc", hand_table(ROWS)))
    page = report.html.read_text(encoding="utf-8")
    assert "independent of U where nothing oscillates? To within 8.3%." in page
    assert "move with U by at most 2 entries (8.3% of the series' lowest)" in page
    assert "reads per round are up to 2.06 times their series' no-oscillation level" in page
    assert "typically 1.19 times" in page
    assert "in 1 of the 4 series they rise somewhere from one U to the next, by at most 10.0%" in (
        page)
    assert ("For every one of the 2 (G, B) pairs, the fastest loop whose overshoot is 0 under "
            "every desired count and schedule is <strong>U = G + B</strong>") in page
    assert "Below it, 1 cell has overshoot 0 all the same" in page
    assert "U from 35 to 60, depending on (G, B)" in page     # the cheapest U per row
    assert "In 2 of the 2 rows the fastest loop without overshoot reads more per second" in page
    assert ("at G = 30 s, B = 5 s (desired = 6, schedule = seed): the fastest loop without "
            "overshoot, U = 35, reads 2 entries per second and leaves 140 copy-seconds missing; "
            "the slowest, U = 90, reads 1.1 per second and leaves 160") in page


def test_glance_says_when_read_cost_is_not_measured(tmp_path: Path) -> None:
    # One U and no ledger cell: no series varies U, and no (G, B) has a fastest loop.
    frame = model_frame(controller=["intent"], U=[15])
    page = (build_report(write_table(tmp_path / "s", frame)).html).read_text(encoding="utf-8")
    assert ('<a href="#reads">Read cost</a>: not measured: no cells that differ only in U '
            "without oscillating, and no ledger cells.") in page


@pytest.mark.parametrize("part_cells", [50, 700])
def test_parts_give_the_figures_of_one_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            part_cells: int) -> None:
    """Split into parts (by a series axis's values where one has enough of them, else by the
    series' code), the read-cost figures equal those of one read of the whole table."""
    frame = model_frame(U=[5, 10, 15, 20, 35, 60], desired=[0, 1, 2, 3, 4, 6])
    sweep = load_sweep(write_table(tmp_path / "parts", frame))
    whole = summarize(sweep)["read_cost"]
    calls: list[tuple[int, bool]] = []
    split = read_cost_section._parts

    def counted(*args: Any) -> list[Any]:
        parts = split(*args)
        calls.append((len(parts), "is_in" in parts[0].explain()))
        return parts

    monkeypatch.setattr(read_cost_section, "PART_CELLS", part_cells)
    monkeypatch.setattr(read_cost_section, "_parts", counted)
    assert summarize(sweep)["read_cost"] == whole
    # 1,152 cells: 24 parts at 50 (more than any axis's values: by code), 2 at 700 (by
    # desired's six values, 576 cells each).
    assert calls == [(-(-frame.height // part_cells), part_cells == 700)]


def test_the_chart_takes_seeds_as_a_distribution(tmp_path: Path) -> None:
    # Five seeds per (controller, U): the point is their median, the band their p95 (nearest
    # rank: the 5th of 5), counted by hand; the slice fixes the other axes, not the seed.
    overshoot = {5: [0, 2, 4, 6, 8], 15: [0, 0, 1, 1, 9]}
    rows = [{"controller": "ledger", "G": 30, "B": 5, "U": u, "seed": seed,
             "overshoot": overshoot[u][seed], "reads_per_round": 20.0 + seed, "reads": 100}
            for u in overshoot for seed in range(5)]
    chart = summarize(load_sweep(write_table(tmp_path / "s", hand_table(rows))))[
        "read_cost"]["chart"]
    assert chart["over"] == ["seed"]
    assert "seed" not in chart["fixed"]
    got = {p["U"]: (p["cells"], p["overshoot"], p["overshoot_p95"], p["reads_per_round"],
                    p["reads_per_round_p95"]) for p in chart["points"]}
    assert got == {5: (5, 4.0, 8.0, 22.0, 24.0), 15: (5, 1.0, 9.0, 22.0, 24.0)}
    html = build_report(tmp_path / "s").html.read_text(encoding="utf-8")
    assert "each point the median over its seeds, the band reaching the p95" in html


def test_the_fastest_loop_without_overshoot_holds_for_every_seed(tmp_path: Path) -> None:
    # Seed 0 stops overshooting from U = 15, seed 1 only from U = 35: the (G, B) pair's
    # fastest loop without overshoot is 35, not seed 0's 15.
    overshoot = {0: {5: 3, 15: 0, 35: 0, 60: 0}, 1: {5: 4, 15: 2, 35: 0, 60: 0}}
    rows = [{"controller": "ledger", "G": 30, "B": 5, "U": u, "seed": seed, "overshoot": o,
             "reads_per_round": 25.0, "reads": 900}
            for seed, by_u in overshoot.items() for u, o in by_u.items()]
    sweep = write_table(tmp_path / "s", hand_table(rows))
    by = summarize(load_sweep(sweep))["read_cost"]["by_GB"]
    assert by["over"] == ["seed"]
    (row,) = by["rows"]
    assert (row["zero_from"], row["zero_from_min"], row["series"]) == (35, 15, 2)
    assert row["at_boundary"]
    page = build_report(sweep).html.read_text(encoding="utf-8")
    assert ("the fastest loop whose overshoot is 0 under every desired count, schedule and "
            "seed is <strong>U = G + B</strong>") in page
