"""``reconsim run``: flags derived from the parameters, one-line errors with exit status 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reconsim import run_cell
from reconsim.cli import main


def test_run_json_matches_run_cell(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "--controller", "ledger", "--G", "20", "--U", "15", "--B", "5",
            "--desired", "6", "--duration", "900", "--deaths", "300:2", "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out) == run_cell(G=20)


def test_run_table_lists_every_metric(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--G", "60"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[7].split()[:2] == ["overshoot", "24"]
    assert "stable_at" in out
    assert "missing_copy_seconds" in out


@pytest.mark.parametrize(("deaths", "expected"), [
    (["--deaths", "300:2", "600:1"], ((300, 2), (600, 1))),
    (["--deaths", "300:2,600:1"], ((300, 2), (600, 1))),
    (["--deaths", "none"], ()),
    (["--deaths"], ()),
    ([], ((300, 2),)),
])
def test_deaths_flag_forms(deaths: list[str], expected: tuple,  # type: ignore[type-arg]
                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--G", "30", "--json", *deaths]) == 0
    assert json.loads(capsys.readouterr().out) == run_cell(G=30, deaths=expected)


def test_variant_flags(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "--controller", "expectations", "--ttl", "30", "--G", "60",
            "--observe", "created", "--max_per_round", "2", "--restart_at", "340,610", "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out) == run_cell(
        controller="expectations", ttl=30, G=60, observe="created", max_per_round=2,
        restart_at=(340, 610))
    assert main(["run", "--max_per_round", "unlimited", "--restart_at", "none", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == run_cell()


@pytest.mark.parametrize(("argv", "message"), [
    (["run", "--U", "0"], "U must be an integer in [1, 1000000], got 0"),
    (["run", "--G", "-4"], "G must be an integer in [0, 1000000], got -4"),
    (["run", "--U", "fast"], "argument --U: invalid int value: 'fast'"),
    (["run", "--controller", "pid"],
     "controller 'pid': not a built-in (ledger, intent, expectations, replicaset, "
     "deployment)"),
    (["run", "--deaths", "300"], "argument --deaths: expected AT:COUNT"),
    (["run", "--deaths=-3:2"], "argument --deaths: expected AT:COUNT"),
    (["run", "--Gg", "3"], "error: reconsim run: unrecognized arguments: --Gg 3"),
    (["run", "--max_per_round", "0"], "argument --max_per_round: expected a positive integer"),
    (["run", "--restart_at", "3,x"], "argument --restart_at: expected non-negative integer"),
    (["run", "--observe", "listed"], "argument --observe: invalid choice: 'listed'"),
    (["run", "--ttl", "-1"], "ttl must be an integer in [0, 1000000], got -1"),
    (["run", "--initial", "-3"],
     "initial must be an integer in [0, 1000000] or 'desired', got -3"),
    (["run", "--initial", "1000001"],
     "initial must be an integer in [0, 1000000] or 'desired', got 1000001"),
    (["run", "--initial", "lots"],
     "argument --initial: expected an integer or 'desired', got 'lots'"),
    (["run", "--gain", "2"], "gain must be a multiple of 0.001 in (0, 1], got 2.0"),
    (["run", "--gain", "x"], "argument --gain: invalid float value: 'x'"),
    ([], "the following arguments are required: COMMAND"),
])
def test_bad_input_is_one_line_and_exit_2(argv: list[str], message: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1
    assert message in captured.err
    # the program and command named once
    assert "reconsim run: reconsim run" not in captured.err
    assert "reconsim: reconsim" not in captured.err


def test_console_script_exit_status_without_traceback() -> None:
    proc = subprocess.run([sys.executable, "-m", "reconsim", "run", "--B", "-1"],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("error: reconsim run: B must be an integer in [0, 1000000], "
                                   "got -1")


def test_every_error_of_reconsim_derives_from_one_base() -> None:
    from reconsim.cli import UsageError
    from reconsim.errors import ReconsimError, WriteError
    from reconsim.report import ReportError
    from reconsim.sweep.runner import SweepError
    from reconsim.sweep.spec import SpecError
    from reconsim.sweep.store import StoreError

    for error in (SpecError, StoreError, SweepError, UsageError, ReportError, WriteError):
        assert issubclass(error, ReconsimError), error
    assert issubclass(WriteError, OSError)
    assert issubclass(SpecError, ValueError)
    assert issubclass(ReportError, ValueError)


def test_main_prints_any_reconsim_error_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from reconsim.errors import ReconsimError
    from reconsim.sweep import runner

    class NewError(ReconsimError):
        """An error class main has never heard of."""

    def refuse(*args: object, **kw: object) -> None:
        raise NewError("the directory is on the moon")

    monkeypatch.setattr(runner, "run_sweep", refuse)
    assert main(["sweep", "sweeps/seed.toml"]) == 2
    assert capsys.readouterr().err == "error: reconsim sweep: the directory is on the moon\n"


def test_interrupted_command_says_what_it_left(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C: exit 130, one line, no traceback; only a sweep has chunks to resume."""
    import reconsim.report
    from reconsim.sweep import runner

    def interrupt(*args: object, **kw: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(reconsim.report, "build_report", interrupt)
    monkeypatch.setattr(runner, "run_sweep", interrupt)
    assert main(["report", "results/default"]) == 130
    assert capsys.readouterr().err == "interrupted: no file was left half-written\n"
    assert main(["sweep", "sweeps/seed.toml"]) == 130
    assert capsys.readouterr().err == ("interrupted: finished chunks are kept; run the same "
                                       "command again to resume\n")


def test_world_flags(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["run", "--controller", "intent", "--G", "10", "--G_spread", "27", "--B_spread", "3",
            "--U_jitter", "4", "--seed", "12", "--delete_order", "newest", "--grace", "30",
            "--lag", "100:200:30,400:500:10", "--create_faults", "0:3:lost", "60:1:fail",
            "--fail_rate", "0.05", "--lost_rate", "0.02", "--trigger", "watch", "--slow_start",
            "--json"]
    assert main(argv) == 0
    got = json.loads(capsys.readouterr().out)
    assert got == run_cell(
        controller="intent", G=10, G_spread=27, B_spread=3, U_jitter=4, seed=12,
        delete_order="newest", grace=30, lag=((100, 200, 30), (400, 500, 10)),
        create_faults=((0, 3, "lost"), (60, 1, "fail")), fail_rate=0.05, lost_rate=0.02,
        trigger="watch", slow_start=True)
    assert got["create_commands"] >= got["created"] > 0
    assert main(["run", "--lag", "none", "--create_faults", "none", "--no-slow_start",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == run_cell()


@pytest.mark.parametrize(("argv", "message"), [
    (["run", "--lag", "100:200"], "argument --lag: expected FROM:TO:EXTRA"),
    (["run", "--lag", "200:100:5"], "lag window must have from < to, got (200, 100)"),
    (["run", "--lag", "100:200:0"], "lag window extra must be an integer in [1, 1000000], got 0"),
    (["run", "--create_faults", "0:3:crash"], "create_faults event kind must be one of fail, lost"),
    (["run", "--create_faults", "0:3"], "argument --create_faults: expected AT:COUNT:KIND"),
    (["run", "--fail_rate", "0.0005"], "fail_rate must be a multiple of 0.001 in [0, 1]"),
    (["run", "--lost_rate", "1.5"], "lost_rate must be a multiple of 0.001 in [0, 1]"),
    (["run", "--seed", "2147483648"], "seed must be an integer in [0, 2147483647]"),
    (["run", "--B_spread", "-1"], "B_spread must be an integer in [0, 1000000], got -1"),
    (["run", "--trigger", "event"], "argument --trigger: invalid choice: 'event'"),
    (["run", "--delete_order", "random"], "argument --delete_order: invalid choice"),
])
def test_bad_world_flags_are_one_line_and_exit_2(argv: list[str], message: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1
    assert message in captured.err


@pytest.mark.parametrize(("text", "message"), [
    ('[lag.s]\nwindows = [[5, 5, 1]]\n', "lag.s.windows: window must have from < to, got (5, 5)"),
    ('[grid]\ncreate_faults = "burst"\n', "grid.create_faults: unknown faults schedule 'burst'"),
    ('[grid]\nseed = -1\n', "grid.seed: seed must be an integer in [0, 2147483647], got -1"),
])
def test_bad_world_specs_are_one_line_exit_2_and_write_nothing(
        text: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "bad.toml"
    spec.write_text(f'name = "bad"\n{text}', encoding="utf-8")
    out = tmp_path / "out"
    assert main(["sweep", str(spec), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert message in err
    assert not out.exists()


def fresh_python(code: str, **env: str | None) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a new interpreter, its environment this one's with ``env`` (None:
    removed)."""
    environ = {k: v for k, v in os.environ.items() if k not in env}
    environ |= {k: v for k, v in env.items() if v is not None}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False, env=environ)
    assert proc.returncode == 0, proc.stderr
    return proc


def test_importing_reconsim_changes_nothing_in_the_process() -> None:
    """No environment variable set, and neither polars nor numba imported, by importing
    reconsim, its command line or its process settings; its names import on first use."""
    code = ("import os, sys; before = dict(os.environ); "
            "import reconsim, reconsim.cli, reconsim.process; "
            "print(dict(os.environ) == before, sorted({'polars', 'numba', 'numpy'} & "
            "set(sys.modules))); from reconsim import run_sweep, Cell; print(Cell.__name__)")
    proc = fresh_python(code, _RJEM_MALLOC_CONF=None, POLARS_MAX_THREADS=None)
    assert proc.stdout.splitlines() == ["True []", "Cell"]


@pytest.mark.parametrize(("own", "expected_end"), [
    (None, ",muzzy_decay_ms:0"),
    ("dirty_decay_ms:2000", ",dirty_decay_ms:2000"),
])
def test_the_command_returns_freed_pages_to_the_system(
        own: str | None, expected_end: str) -> None:
    """The reconsim command sets its jemalloc setting before it imports polars, which
    appends it after its own (jemalloc accepts that); a setting of the user's stays."""
    code = ("import os; from reconsim.cli import main; main(['seed']); "
            "print(os.environ['_RJEM_MALLOC_CONF'])")
    proc = fresh_python(code, _RJEM_MALLOC_CONF=own)
    assert proc.stdout.strip().splitlines()[-1].endswith(expected_end)
    assert proc.stdout.count("muzzy_decay_ms:0") == (own is None)
    assert "jemalloc" not in proc.stderr  # "<jemalloc>: Invalid conf pair" on a bad one


def test_main_after_polars_changes_no_setting() -> None:
    """Called from a program that imported polars already, where the setting could no
    longer take effect, main leaves the environment alone."""
    code = ("import os, polars; before = os.environ['_RJEM_MALLOC_CONF']; "
            "from reconsim.cli import main; main(['seed']); "
            "print(os.environ['_RJEM_MALLOC_CONF'] == before)")
    assert fresh_python(code, _RJEM_MALLOC_CONF=None).stdout.strip().endswith("True")
