"""A cell's delay tables in every form a spec writes: through ``run_cell``, ``trace`` and
``reconsim run`` they draw what a sweep's cell named on the same ``[delays.X]`` table
draws; quantiles without ``max`` end on the documented line; bad input is one line."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from reconsim import run_cell, simulate, trace
from reconsim.cli import main
from reconsim.model import delays
from reconsim.model.kinds import MAX_EVENTS
from reconsim.model.metrics import OUTPUT_NAMES
from reconsim.model.params import Cell
from reconsim.sweep.grid import expand
from reconsim.sweep.spec import parse_spec

CSV = "seconds\n12\n5\n\n12\n40\n"

#: (form, its value in Python, the same in TOML)
FORMS: list[tuple[str, Any, str]] = [
    ("quantiles", {"p50": 5, "p90": 20, "p99": 60}, "{ p50 = 5, p90 = 20, p99 = 60 }"),
    ("quantiles", {"min": 1, "p50": 5, "p99.9": 30, "max": 45},
     '{ min = 1, p50 = 5, "p99.9" = 30, max = 45 }'),
    ("samples", [5, 7, 9, 12, 12, 40], "[5, 7, 9, 12, 12, 40]"),
    ("histogram", [[9, 1], [0, 3], [30, 2]], "[[9, 1], [0, 3], [30, 2]]"),
    ("csv", "m.csv", '"m.csv"'),
]


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current folder: a temporary one holding ``m.csv``."""
    (tmp_path / "m.csv").write_text(CSV, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def metrics_of(row: dict[str, Any]) -> dict[str, Any]:
    return {m: row[m] for m in OUTPUT_NAMES}


@pytest.mark.parametrize(("form", "value", "toml"), FORMS, ids=[f[0] for f in FORMS])
def test_each_form_runs_the_cell_a_spec_runs(form: str, value: Any, toml: str,
                                            in_tmp: Path) -> None:
    spec = parse_spec(f'''
name = "t"
[delays.x]
{form} = {toml}
[grid]
controller = ["ledger", "intent", "replicaset"]
G_delays = "x"
B_delays = "x"
seed = [3, 11]
U = 15
''', base=in_tmp)
    (table,) = spec.axes["G_delays"]
    assert Cell(G_delays={form: value}).G_delays == table
    rows = simulate(expand(spec)).to_dicts()
    assert len(rows) == 6
    for row in rows:
        assert run_cell(controller=row["controller"], seed=row["seed"], U=15,
                        G_delays={form: value}, B_delays={form: value}) == metrics_of(row)


def test_a_form_and_its_table_give_the_same_trace(in_tmp: Path) -> None:
    form = {"quantiles": {"p50": 5, "p90": 20, "p99": 60}}
    table = delays.from_quantiles(form["quantiles"])
    assert trace(G_delays=form, seed=4, duration=400).equals(
        trace(G_delays=table, seed=4, duration=400))
    assert trace(B_delays={"csv": Path("m.csv")}, duration=400).equals(
        trace(B_delays=((5, 1), (12, 2), (40, 1)), duration=400))


def run_flags(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    assert main(["run", *argv, "--json"]) == 0
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    return out


@pytest.mark.parametrize(("flag", "value"), [
    ("p50=5,p90=20,p99=60", {"quantiles": {"p50": 5, "p90": 20, "p99": 60}}),
    ("p50=5,p90=20,p99=60,max=90", {"quantiles": {"p50": 5, "p90": 20, "p99": 60, "max": 90}}),
    ("min=2, p99.9=30", {"quantiles": {"min": 2, "p99.9": 30}}),
    ("samples=3,5,8,8", {"samples": [3, 5, 8, 8]}),
    ("histogram=9:1,0:3", {"histogram": [[0, 3], [9, 1]]}),
    ("csv=m.csv", {"csv": "m.csv"}),
    ("5:1,12:2,40:1", ((5, 1), (12, 2), (40, 1))),
])
def test_the_flags_take_every_form(flag: str, value: Any, in_tmp: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("G_delays", "B_delays"):
        assert run_flags([f"--{name}", flag, "--seed", "7"], capsys) == run_cell(
            **{name: value}, seed=7)


def test_the_table_flag_reads_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    table = run_cell(G_delays=((5, 1), (12, 2)), seed=2)
    assert run_flags(["--G_delays", "5:1,12:2", "--seed", "2"], capsys) == table
    assert run_flags(["--G_delays", "5:1", "12:2", "--seed", "2"], capsys) == table
    assert run_flags(["--G_delays", "5:1", "--G_delays", "12:2", "--seed", "2"],
                     capsys) == table
    assert run_flags(["--G_delays", "none"], capsys) == run_cell()


def test_quantiles_without_max_end_on_the_last_segment_s_line() -> None:
    # the documented examples
    assert delays.from_quantiles({"p50": 2}) == (
        (0, 166_666), (1, 166_667), (2, 166_667), (3, 250_000), (4, 250_000))
    assert delays.from_quantiles({"p50": 5, "p90": 20, "p99": 60}) == delays.from_quantiles(
        {"p50": 5, "p90": 20, "p99": 60, "max": 65})
    assert delays.worst(delays.from_quantiles({"p50": 12, "p90": 25, "p99": 40})) == 42
    # the line through min at 0 when one level is given; a last segment of no width
    assert delays.worst(delays.from_quantiles({"min": 10, "p50": 12})) == 14
    assert delays.from_quantiles({"p50": 5, "p90": 5}) == delays.from_quantiles(
        {"p50": 5, "p90": 5, "max": 5})
    # the rule, in fractions, over many chains: max = q_k + ceil(slope x (10^6 - P_k))
    for chain in ({"p10": 1, "p50": 7}, {"p50": 3, "p99.99": 900}, {"p25": 0, "p75": 1},
                  {"min": 4, "p1": 4, "p2": 9}, {"p33.3333": 17, "p66.6667": 18}):
        levels = sorted((delays.level_ppm(k) or 0, v) for k, v in chain.items() if k != "min")
        points = [(0, chain.get("min", 0)), *levels]
        (p0, q0), (p1, q1) = points[-2:]
        tail = Fraction(q1 - q0, p1 - p0) * (delays.PPM - p1)
        table = delays.from_quantiles(chain)
        assert delays.worst(table) == q1 + -(-tail.numerator // tail.denominator)
        assert delays.total(table) == delays.PPM
        for ppm, q in points[1:]:  # the given points stay exact
            assert delays.quantile(table, ppm) == q


def test_the_bound_on_a_quantile_table_is_counted_before_it_is_built() -> None:
    # 1 second below p50, 10,000 above: one too many; 9,999 above fits exactly
    with pytest.raises(ValueError, match=r"^q: 10,001 distinct seconds, more than the 10,000"):
        delays.from_quantiles({"p50": 0, "max": 10_000}, "q")
    assert len(delays.from_quantiles({"p50": 0, "max": 9_999})) == MAX_EVENTS
    # a wide segment of few parts per million weighs only as many seconds
    assert len(delays.from_quantiles({"p99.99": 0, "max": 500_000})) == 101


def one_line_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(["run", *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    return captured.err


@pytest.mark.parametrize(("argv", "message"), [
    (["--G_delays", "p50=30,p90=20"],
     "G_delays.quantiles: quantiles must not decrease, got p50 = 30 above p90 = 20"),
    (["--B_delays", "p50=12,max=20000"],
     "B_delays.quantiles: 20,001 distinct seconds, more than the 10,000 a delay table may "
     "hold: quantiles weigh every second between their points, and p50 = 12 … max = 20000 "
     "alone weighs 19,988; give a histogram on at most 10,000 seconds"),
    (["--G_delays", "p1=20000"], "G_delays.quantiles: max not given, and the line through "
     "min = 0 and p1 = 20000 reaches 2,000,000 s at p100, beyond the 1,000,000 a delay may "
     "be; give max"),
    (["--G_delays", "min=3"], "G_delays.quantiles: no level and no max"),
    (["--G_delays", "p0=3"], "G_delays.quantiles.p0: unknown key"),
    (["--G_delays", "p50=5,p50=6"], "argument --G_delays: quantiles: p50 given twice"),
    (["--G_delays", "p50=5,p90"], "argument --G_delays: quantiles: expected KEY=SECONDS"),
    (["--G_delays", "p50=5.5"], "argument --G_delays: quantiles: expected KEY=SECONDS with "
     "non-negative integers, got '5.5'"),
    (["--G_delays", "p50=5", "p90=20"], "argument --G_delays: a form (quantiles) is the "
     "flag's only argument"),
    (["--G_delays", "5:1", "--G_delays", "samples=3"], "argument --G_delays: a form"),
    (["--G_delays", "samples=3,7.5"], "argument --G_delays: samples: expected S,S,… with "
     "non-negative integers, got '7.5'"),
    (["--G_delays", "samples=3,-1"], "argument --G_delays: samples: expected"),
    (["--G_delays", "histogram=9"], "argument --G_delays: histogram: expected SECONDS:WEIGHT "
     "pairs, got '9'"),
    (["--G_delays", "histogram=9:0"], "G_delays.histogram: weight 0 of second 9 is not a "
     "positive integer"),
    (["--G_delays", "csv=absent.csv"], "G_delays.csv: no such file 'absent.csv'"),
    (["--G_delays", "csv="], "G_delays.csv: must be a file name, got ''"),
    (["--G_delays", "hist=9:1"], "argument --G_delays: unknown form 'hist': expected "
     "VALUE:WEIGHT entries"),
    (["--G_delays", "5:1,5:2"], "G_delays values must increase, got 5 then 5"),
    (["--G_delays", "p50=5", "--G_spread", "3"],
     "G_delays: a delay table and G_spread 3 both given"),
])
def test_bad_flags_are_one_line(argv: list[str], message: str, in_tmp: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    assert one_line_error(argv, capsys).startswith(f"error: reconsim run: {message}")


@pytest.mark.parametrize(("value", "message"), [
    ({"quantiles": {"p50": 30, "p90": 20}},
     "G_delays.quantiles: quantiles must not decrease, got p50 = 30 above p90 = 20"),
    ({"quantiles": {}}, "G_delays.quantiles: no level and no max"),
    ({"quantiles": [5, 20]}, "G_delays.quantiles: must be a table of levels and seconds"),
    ({"samples": [5, 7.5]}, "G_delays.samples: sample 7.5 is not a whole number of seconds"),
    ({"histogram": [[5, 1], [5, 2]]}, "G_delays.histogram: second 5 is listed twice"),
    ({"csv": 3}, "G_delays.csv: must be a file name, got 3"),
    ({"samples": [1], "csv": "m.csv"}, "G_delays needs exactly one of samples, csv, "
     "quantiles, histogram"),
    ({"zzz": 1}, "G_delays.zzz: unknown key (known: samples, csv, quantiles, histogram)"),
    ({}, "G_delays needs exactly one of"),
])
def test_bad_forms_are_one_line_naming_the_field(value: Any, message: str,
                                                 in_tmp: Path) -> None:
    for call in (run_cell, trace, Cell):
        with pytest.raises(ValueError, match="^" + re.escape(message)) as raised:
            call(G_delays=value)
        assert "\n" not in str(raised.value)
