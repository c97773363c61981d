"""Death schedules: random deaths drawn per cell on its seed, and schedules that combine
scripted events, a period and a rate."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from reconsim import Cell, run_cell, run_reference, run_sweep
from reconsim.cli import main
from reconsim.model import rng
from reconsim.model.metrics import OUTPUT_NAMES
from reconsim.model.simulate import simulate
from reconsim.report import build_report
from reconsim.sweep import store
from reconsim.sweep.grid import expand
from reconsim.sweep.spec import MAX_EVENTS, SpecError, load_spec, parse_spec

SWEEPS = Path(__file__).resolve().parent.parent / "sweeps"

#: The default sweep's random schedule, a mix of all three parts, and each part alone.
SPEC = """
name = "schedules"
[grid]
controller = ["ledger", "intent"]
duration = [900, 7200]
seed = [0, 1, 2, 3]
schedule = ["chaos", "az", "mix", "scripted", "periodic", "random"]
[schedule.chaos]
rate = 0.0066667
count = 1
seed = 2026
[schedule.az]                  # one death an hour, and an availability zone of 5 at once
events = [[5000, 5]]
rate = 0.000277778
count = 1
seed = 7
[schedule.mix]                 # start is the period's and the rate's
events = [[600, 5], [120, 2], [9000, 1]]
every = 480
start = 120
rate = 0.002
count = 1
seed = 11
[schedule.scripted]
events = [[600, 5], [120, 2], [9000, 1]]
[schedule.periodic]
every = 480
start = 120
count = 1
[schedule.random]
rate = 0.002
count = 1
seed = 11
start = 120
"""


def by_hand(schedule_seed: int, rate: float, seed: int, last: int) -> list[int]:
    """The seconds ``0 … last`` with a death, as docs/model.md specifies them: draw t is
    ``splitmix64(splitmix64(schedule_seed) ^ ((seed << 32) | (5 << 28) | t))``, a death
    when it is below ``rate * 2**64``, compared exactly."""
    numerator, denominator = rate.as_integer_ratio()
    key = rng.splitmix64(schedule_seed)
    return [t for t in range(last + 1)
            if rng.splitmix64(key ^ ((seed << 32) | (5 << 28) | t)) * denominator
            < numerator * 2**64]


def seconds(events: tuple[tuple[int, int], ...]) -> list[int]:
    return [at for at, _ in events]


# --- random deaths are the cell's ------------------------------------------------------

def test_two_seeds_give_two_sets_of_deaths_and_one_seed_the_same() -> None:
    chaos = parse_spec(SPEC).schedules["chaos"]
    by_seed = {seed: chaos.events(900, seed) for seed in range(30)}
    assert len(set(by_seed.values())) == 30
    assert all(chaos.events(900, seed) == events for seed, events in by_seed.items())
    again = parse_spec(SPEC).schedules["chaos"]
    assert all(again.events(900, seed) == events for seed, events in by_seed.items())


def test_the_draw_is_the_documented_one() -> None:
    chaos = parse_spec(SPEC).schedules["chaos"]
    # By hand: seed 3 and seed 4 of the default sweep's chaos schedule.
    assert by_hand(2026, 0.0066667, 3, 900) == [84, 270, 367, 392, 420, 441, 541]
    assert by_hand(2026, 0.0066667, 4, 900) == [101, 107, 137, 593, 680, 786, 837]
    for seed in (0, 1, 3, 4, rng.MAX_SEED):
        assert chaos.events(900, seed) == tuple(
            (t, 1) for t in by_hand(2026, 0.0066667, seed, 900)), seed


def test_seed_0_keeps_the_deaths_every_cell_had() -> None:
    """A cell of seed 0 has the deaths the schedule gave every cell before the cell's
    seed entered the draw: the default sweep (no seed axis) is unchanged."""
    spec = load_spec(SWEEPS / "default.toml")
    assert spec.axes["seed"] == (0,)
    assert seconds(spec.schedules["chaos"].events(900)) == [48, 586, 660, 733, 800, 830]


def test_a_shorter_run_sees_a_prefix_and_start_until_cut_the_window() -> None:
    chaos = parse_spec(SPEC).schedules["chaos"]
    long = seconds(chaos.events(7200, 5))
    assert seconds(chaos.events(900, 5)) == [t for t in long if t <= 900]
    window = parse_spec('name = "t"\n[schedule.w]\nrate = 0.0066667\ncount = 2\nseed = 2026\n'
                        "start = 100\nuntil = 600\n").schedules["w"]
    assert window.events(7200, 5) == tuple((t, 2) for t in long if 100 <= t <= 600)


def test_the_grid_draws_each_row_on_its_seed() -> None:
    spec = parse_spec(SPEC)
    frame = expand(spec)
    drawn = frame.filter(pl.col("schedule").is_in(["chaos", "az", "mix", "scripted"]))
    for row in drawn.iter_rows(named=True):
        want = spec.schedules[row["schedule"]].events(row["duration"], row["seed"])
        assert [(e["at"], e["count"]) for e in row["deaths"]] == list(want), row
    chaos = frame.filter(schedule="chaos", duration=900, controller="ledger")
    assert chaos["deaths"].n_unique() == 4  # four seeds, four lists
    # A schedule without random deaths gives every seed the same list.
    assert frame.filter(schedule="periodic", duration=900)["deaths"].n_unique() == 1


# --- combined schedules ----------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 2, 3, 123456])
@pytest.mark.parametrize("duration", [0, 119, 900, 7200, 10_000])
def test_a_combined_schedule_is_the_union_of_its_parts(seed: int, duration: int) -> None:
    s = parse_spec(SPEC).schedules
    mix = s["mix"].events(duration, seed)
    parts = [*s["scripted"].events(duration, seed), *s["periodic"].events(duration, seed),
             *s["random"].events(duration, seed)]
    assert sorted(mix) == sorted(parts)
    # In order of second; within one, scripted (as listed), periodic, random.
    assert mix == tuple(sorted(parts, key=lambda e: e[0]))
    if duration >= 600:
        assert [e for e in mix if e[0] == 120][:2] == [(120, 2), (120, 1)]
        assert [e for e in mix if e[0] == 600][:2] == [(600, 5), (600, 1)]


def test_hourly_random_deaths_and_an_az_drop() -> None:
    az = parse_spec(SPEC).schedules["az"]
    for seed in range(4):
        events = az.events(7200, seed)
        assert (5000, 5) in events
        assert [e for e in events if e != (5000, 5)] == [
            (t, 1) for t in by_hand(7, 0.000277778, seed, 7200)]
        assert seconds(events) == sorted(seconds(events))


def test_events_in_one_second_add_up() -> None:
    """Two events of one second kill as one event of their sum: the model applies them in
    turn, each to the oldest live copies."""
    for controller in ("ledger", "intent", "expectations"):
        runs = [run_cell(controller=controller, deaths=deaths, G=10, desired=8)
                for deaths in (((300, 1), (300, 5)), ((300, 6),), ((300, 5), (300, 1)))]
        assert runs[0] == runs[1] == runs[2], controller
        assert run_reference(Cell(controller=controller, deaths=((300, 1), (300, 5)), G=10,
                                  desired=8)) == runs[1], controller


def test_one_part_alone_means_what_it_meant() -> None:
    s = parse_spec(SPEC).schedules
    assert s["scripted"].events(900) == ((600, 5), (120, 2), (9000, 1))  # as listed
    assert seconds(s["periodic"].events(900)) == [120, 600]
    assert s["random"].events(900, 2) == tuple((t, 1) for t in by_hand(11, 0.002, 2, 900)
                                               if t >= 120)


def test_no_shipped_spec_moves_its_deaths() -> None:
    """The shipped specs with a rate (default, million) have no seed axis: their cells, all
    of seed 0, keep the deaths they had, and so their figures."""
    with_a_rate = []
    for path in sorted(SWEEPS.glob("*.toml")):
        spec = load_spec(path)
        if any(spec.schedules[name].random for name in spec.axes["schedule"]):
            with_a_rate.append(path.stem)
            assert spec.axes["seed"] == (0,), path.name
    assert with_a_rate == ["default", "million"]


# --- refusals -------------------------------------------------------------------------

@pytest.mark.parametrize(("table", "message"), [
    ("events = [[60, 1]]\nrate = 2\ncount = 1\nseed = 1\n",
     "schedule.mix.rate must be deaths per second in (0, 1], got 2"),
    ("events = [[60, 1]]\nrate = 0.01\ncount = 1\n",
     "schedule.mix.seed: missing (a schedule with 'rate' needs count, rate, seed)"),
    ("every = 60\nrate = 0.01\nseed = 1\n",
     "schedule.mix.count: missing (a schedule with 'every' needs count, every)"),
    ("events = [[60, 1]]\ncount = 1\n", "schedule.mix.count: unknown key (known: events)"),
    ("events = [[60, 1]]\nevery = 60\ncount = 1\nseed = 1\n",
     "schedule.mix.seed: unknown key (known: count, events, every, start, until)"),
    ("start = 5\n", "schedule.mix needs at least one of 'events', 'every' or 'rate', got "
     "keys ['start']"),
    ("every = 60\nrate = 0.01\ncount = -1\nseed = 1\n",
     "schedule.mix.count must be an integer in [0, 1000000], got -1"),
    ("events = [[60, 1]]\nrate = 0.01\ncount = 1\nseed = -3\n",
     "schedule.mix.seed must be an integer in [0, 9223372036854775807], got -3"),
    ("events = [[60, 1]]\nrate = true\ncount = 1\nseed = 1\n",
     "schedule.mix.rate must be deaths per second in (0, 1], got True"),
    ("events = [[60, 1]]\nrate = 0.01\ncount = 1\nseed = 1\nuntill = 5\n",
     "schedule.mix.untill: unknown key"),
])
def test_a_bad_schedule_is_one_line_exit_2_and_nothing_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str, message: str) -> None:
    path = tmp_path / "spec.toml"
    path.write_text(f'name = "t"\n[grid]\nschedule = "mix"\nseed = [0, 1]\n[schedule.mix]\n'
                    f"{table}")
    assert main(["sweep", str(path), "--out", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1, captured.err
    assert message in captured.err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.toml"]


RATE_NEAR_THE_BOUND = ('name = "t"\n[grid]\nschedule = "r"\nduration = 1000000\nseed = {seeds}\n'
                       "[schedule.r]\nrate = 0.0099\ncount = 1\nseed = 5\n{more}")


def test_every_seed_of_the_grid_is_counted_against_the_bound() -> None:
    """At rate 0.0099 over 10^6 s, seed 0's cell holds 9,863 deaths and seed 17's 10,092,
    more than a cell may hold: the grid is refused as soon as it holds seed 17."""
    spec = parse_spec(RATE_NEAR_THE_BOUND.format(seeds="{ from = 0, to = 16 }", more=""))
    assert spec.schedules["r"].count(10**6, spec.axes["seed"]) == 9982  # seed 10's
    assert spec.chunk_size == 10**7 // 9982  # a chunk holds up to 10^7 death events
    assert spec.schedules["r"].count(10**6, (0,)) == 9863
    assert spec.schedules["r"].count(10**6, (17,)) == MAX_EVENTS + 1  # counted to the bound
    with pytest.raises(SpecError, match=r"^schedule\.r: in a run of 1000000 s \(the longest "
                       r"grid\.duration\) rate 0\.0099 gives more than 10000 death events "
                       r"\(about 9,900\) with one of the grid's 18 seeds, more than a cell "
                       r"may hold$"):
        parse_spec(RATE_NEAR_THE_BOUND.format(seeds="{ from = 0, to = 17 }", more=""))
    with pytest.raises(SpecError, match=re.escape(
            "rate 0.0099 with its 200 scripted and periodic events gives more than 10000 "
            "death events (about 10,100), more than a cell may hold")):
        parse_spec(RATE_NEAR_THE_BOUND.format(
            seeds=0, more=f"events = [{', '.join(['[5, 1]'] * 200)}]\n"))


# --- a sweep, end to end ---------------------------------------------------------------

def test_a_sweep_with_random_deaths_and_a_seed_axis(tmp_path: Path) -> None:
    spec = parse_spec(SPEC.replace('"mix", "scripted", "periodic", "random"', '"none"')
                      + "[schedule.none]\nevents = []\n")
    result = run_sweep(spec, tmp_path / "out", backend="sequential", progress=False)
    assert result.computed == spec.n_cells == 2 * 2 * 4 * 3
    got = store.scan(tmp_path / "out").collect()
    assert got.select(expand(spec).columns).equals(expand(spec))
    assert got.select(OUTPUT_NAMES).equals(simulate(expand(spec)).select(OUTPUT_NAMES))
    for schedule in ("chaos", "az"):
        lists = got.filter(controller="ledger", duration=7200, schedule=schedule)
        assert lists["seed"].to_list() == [0, 1, 2, 3]
        assert lists["deaths"].n_unique() == 4, schedule  # each seed its own deaths
        assert lists["schedule"].unique().to_list() == [schedule]  # the name stays the name
        assert all((5000, 5) in [(e["at"], e["count"]) for e in deaths]
                   for deaths in lists["deaths"].to_list()) == (schedule == "az")
    assert got.filter(schedule="none")["deaths"].list.len().max() == 0
    # the report's schedules table says a random schedule's listed deaths are one cell's
    page = build_report(tmp_path / "out").html.read_text(encoding="utf-8")
    rows = re.findall(r"<tr><td>(\w+)</td><td>([^<]*)</td></tr>", page)
    said = {name: "differ from seed to seed" in text for name, text in rows
            if name in ("chaos", "az", "none")}
    assert said == {"chaos": True, "az": True, "none": False}
