"""``reconsim sweep`` as a user sees it: the lines it prints, and the estimate and question
before a big grid."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from reconsim.cli import main

ONE_CELL = """
name = "one"
[grid]
G = 10
U = 5
duration = 60
"""


def sweep(tmp_path: Path, text: str, *flags: str) -> tuple[int, Path]:
    spec = tmp_path / "spec.toml"
    spec.write_text(text, encoding="utf-8")
    out = tmp_path / "out"
    status = main(["sweep", str(spec), "--out", str(out), "--backend", "sequential",
                   "--no-progress", *flags])
    return status, out


def test_one_cell_is_counted_in_the_singular(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    status, out = sweep(tmp_path, ONE_CELL)
    assert status == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "one: 1 cell in 1 chunk of up to 50,000"
    assert lines[1].startswith(f"{out}: 1 cell in 1 chunk, ")
    assert lines[1].endswith("(table: 1 cell)")
    assert sweep(tmp_path, ONE_CELL)[0] == 0
    assert capsys.readouterr().out.splitlines()[1] == \
        f"{out}: already complete, 1 cell; nothing to do"


#: A grid of 48 cells: "big" for a test that sets --confirm-above 10.
GRID = """
name = "grid"
[grid]
controller = ["ledger", "intent"]
G = [0, 10, 30]
U = [5, 15]
B = [1, 5]
desired = [3, 6]
duration = 120
"""


class _Terminal:
    """Standard input as a terminal."""

    def isatty(self) -> bool:
        return True


def test_a_big_grid_without_a_terminal_or_yes_is_refused_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # no terminal
    status, out = sweep(tmp_path, GRID, "--confirm-above", "10")
    assert status == 2
    stdout, err = capsys.readouterr()
    assert stdout == "grid: 48 cells in 1 chunk of up to 50,000\n"
    # one line, after the kernels' compile notices where the calibration first used them
    (err,) = [x for x in err.splitlines() if not x.startswith("compiled the ")]
    assert err.startswith("error: reconsim sweep: grid: 48 cells: about ")
    assert " on this machine (" in err
    assert " on disk (" in err
    assert "timed on 48 cells of the grid" in err
    assert err.endswith("more than --confirm-above 10 cells and no terminal to ask on: "
                        "pass --yes to run it")
    assert not out.exists()


def test_yes_prints_the_estimate_and_runs(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    status, out = sweep(tmp_path, GRID, "--confirm-above", "10", "--yes")
    assert status == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("grid: 48 cells: about ")
    assert lines[2].startswith(f"{out}: 48 cells in 1 chunk, ")
    # the estimate's disk is the table's, within its footer's facts
    estimated = float(re.search(r"and ([\d.]+) kB on disk", lines[1]).group(1))  # type: ignore[union-attr]
    written = sum(p.stat().st_size for p in (out / "data").iterdir()) / 1e3
    assert 0.5 * written < estimated < 1.5 * written


@pytest.mark.parametrize(("answer", "status"), [("n", 1), ("", 1), ("y", 0), (EOFError, 1)])
def test_on_a_terminal_it_asks(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch, answer: object,
                               status: int) -> None:
    asked = []

    def reply(prompt: str) -> str:
        asked.append(prompt)
        if answer is EOFError:
            raise EOFError
        assert isinstance(answer, str)
        return answer

    monkeypatch.setattr("sys.stdin", _Terminal())
    monkeypatch.setattr("builtins.input", reply)
    got, out = sweep(tmp_path, GRID, "--confirm-above", "47")
    assert got == status
    assert asked == ["continue? [y/N] "]
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].startswith("grid: 48 cells: about ")
    assert out.exists() == (status == 0)
    if status:
        assert lines[2] == "not started; nothing written"


def test_at_or_under_the_threshold_nothing_is_asked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert sweep(tmp_path, GRID, "--confirm-above", "48")[0] == 0
    assert "about" not in capsys.readouterr().out


def test_a_bad_threshold_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = sweep(tmp_path, GRID, "--confirm-above", "-1")
    assert status == 2
    err = capsys.readouterr().err
    assert err == ("error: reconsim sweep: --confirm-above must be an integer in "
                   "[0, 1000000000000000], got -1\n")
    assert not out.exists()


DISTRIBUTION = """
name = "dist"
[delays.chain]
samples = [5, 7, 12, 12, 40]
[grid]
G_delays = "chain"
U = [5, 15]
duration = 120
"""


def test_a_bad_distribution_is_one_line_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out = sweep(tmp_path, DISTRIBUTION.replace("40]", "40.5]"))
    assert status == 2
    _, err = capsys.readouterr()
    assert err.count("\n") == 1
    assert "delays.chain.samples: sample 40.5 is not a whole number of seconds" in err
    assert not out.exists()


def test_resume_refuses_a_spec_whose_distribution_changed(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, _ = sweep(tmp_path, DISTRIBUTION)
    assert status == 0
    status, _ = sweep(tmp_path, DISTRIBUTION)  # the same spec: resumed, nothing to do
    assert status == 0
    capsys.readouterr()
    status, _ = sweep(tmp_path, DISTRIBUTION.replace("40]", "41]"))
    assert status == 2
    assert "holds results of another spec" in capsys.readouterr().err


RUNAWAY = """
name = "runaway"
[lag.stale]
windows = [[0, 26, 48]]
[grid]
controller = "replicaset"
trigger = "watch"
lag = "stale"
G = [1, 0]
duration = 60
"""


def test_a_cell_that_runs_away_is_named_in_one_line(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # G = 0 with a stale read and watch triggers: its syncs never let time pass.
    status, out = sweep(tmp_path, RUNAWAY)
    assert status == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("error: reconsim sweep: controller 'replicaset': the key was still "
                          "queued after 112 syncs at instant 0 ms (t = 0)")
    assert err.endswith("; the cell: reconsim run --controller replicaset --desired 6 --U 15 "
                        "--G 0 --B 5 --duration 60 --deaths 300:2 --lag 0:26:48 "
                        "--trigger watch\n")
    assert not list(out.glob("data/*.parquet"))
