"""Absurd input never yields garbage, a hang or a traceback: every integer parameter has a
bound that keeps every figure exact, the kernel refuses what would overflow, schedules and
grids are counted before they are built."""

from __future__ import annotations

import math
import pickle
import re
import tracemalloc
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from reconsim import Cell, run_cell, run_reference, simulate
from reconsim.cli import main
from reconsim.errors import KernelRefusalError
from reconsim.model import rng
from reconsim.model.deployment import MAX_ROLLOUTS
from reconsim.model.kernels import count as kernel
from reconsim.model.kinds import MAX_DELAY_WEIGHT, Cap, Events, Int, IntOrPercent, Records, Times
from reconsim.model.metrics import WORLD_METRICS
from reconsim.model.params import (
    MAX_COPIES,
    MAX_EVENTS,
    MAX_SECONDS,
    PARAMS,
)
from reconsim.model.simulate import cells_frame, kernel_inputs
from reconsim.sweep import runner
from reconsim.sweep.spec import (
    DEFAULT_CHUNK_SIZE,
    LARGE_CHUNK_SIZE,
    MAX_AXIS_VALUES,
    MAX_CHUNK_ENTRIES,
    TARGET_CHUNKS,
    SpecError,
    parse_spec,
)

INT64_MAX = 2**63 - 1


def refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run the CLI; assert exit 2 with one line on stderr and nothing on stdout; the line."""
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    return lines[0]


# --- the bounds table, row by row -------------------------------------------------------

@pytest.mark.parametrize(("argv", "message"), [
    (["run", "--desired", str(INT64_MAX), "--json"],
     f"desired must be an integer in [0, {MAX_COPIES}], got {INT64_MAX}"),
    (["run", "--desired", "4611686018427387904", "--G", "60"],
     "desired must be an integer in [0, 1000000], got 4611686018427387904"),
    (["run", "--U", "99999999999999999999999"],
     "U must be an integer in [1, 1000000], got 99999999999999999999999"),
    (["run", "--deaths", f"{10**20}:1"], "deaths event at must be an integer in [0, 1000000]"),
    (["run", "--duration", "10000000000", "--U", "1"], "duration must be an integer in [0,"),
    (["run", "--max_per_round", str(2**64)], "max_per_round must be an integer in [1, 1000000]"),
    (["run", "--restart_at", str(10**30)], "restart_at must hold integers in [0, 1000000]"),
    (["run", "--gain", "nan"], "gain must be a multiple of 0.001 in (0, 1], got nan"),
    (["run", "--gain", "1e999"], "gain must be a multiple of 0.001 in (0, 1], got inf"),
    (["run", "--ledger_base", "1" * 5000], "argument --ledger_base: invalid int value"),
])
def test_absurd_flags_are_one_line_and_exit_2(argv: list[str], message: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert message in refused(argv, capsys)


SCHEDULE = 'name = "huge"\n[grid]\nschedule = "s"\nduration = {duration}\n[schedule.s]\n'


@pytest.mark.parametrize(("text", "message"), [
    ('name = "huge"\n[grid]\nduration = 1000000000000\nU = 1\n',
     "grid.duration: duration must be an integer in [0, 1000000], got 1000000000000"),
    ('name = "huge"\n[grid]\ndesired = 100000000000000000000000\n',
     "grid.desired: desired must be an integer in [0, 1000000], "
     "got 100000000000000000000000"),
    ('name = "huge"\n[grid]\nschedule = "x"\n[schedule.x]\nevents = [[100000000000000000000, 1]]\n',
     "schedule.x.events event at must be an integer in [0, 1000000], "
     "got 100000000000000000000"),
    (SCHEDULE.format(duration=10**9) + "every = 1\ncount = 1\n",
     "grid.duration: duration must be an integer in [0, 1000000], got 1000000000"),
    (SCHEDULE.format(duration=10**6) + "every = 1\ncount = 1\n",
     "schedule.s: in a run of 1000000 s (the longest grid.duration) it gives 1000000 death "
     "events, more than the 10000 a cell may hold"),
    (SCHEDULE.format(duration=10**8) + "rate = 1.0\ncount = 1\nseed = 1\n",
     "grid.duration: duration must be an integer in [0, 1000000], got 100000000"),
    (SCHEDULE.format(duration=10**6) + "rate = 1.0\ncount = 1\nseed = 1\n",
     "rate 1.0 gives more than 10000 death events (about 1,000,001)"),
    ('name = "huge"\n[grid]\nG = {from = 0, to = 100000}\nU = {from = 1, to = 100000}\n'
     'B = {from = 0, to = 100000}\ndesired = {from = 0, to = 1000}\n',
     "huge: the grid has about 1.0e+18 cells, more than the limit of 10,000,000,000; "
     "--max-cells N raises it"),
    ('name = "huge"\n[grid]\nG = {from = 0, to = 1000000000000000000}\n',
     "grid.G: the range from 0 to 1000000000000000000 holds 1000000000000000001 values, "
     f"more than the {MAX_AXIS_VALUES:,} an axis may hold"),
    ('name = "huge"\n[grid]\nU = {from = 1, to = 1000000000000000000000000000000}\n',
     "grid.U: the range from 1 to 1000000000000000000000000000000 holds "
     "1000000000000000000000000000000 values"),  # more than len() of a range can count
    ('name = "huge"\n[grid]\nG = {from = 999999, to = 1000001, step = 2}\n',
     "grid.G: G must be an integer in [0, 1000000], got 1000001"),
    ('name = "huge"\n[grid]\nmax_per_round = {from = 0, to = 3}\n',
     "grid.max_per_round: max_per_round must be an integer in [1, 1000000] or 'unlimited', "
     "got 0"),
    ('name = "huge"\n[grid]\nG = ' + "[" * 5000 + "]" * 5000 + "\n", "TOML nesting too deep"),
    ('name = "huge"\n[grid]\nG = ' + "7" * 5000 + "\n", "TOML value error: Exceeds the limit"),
    ('name = "huge"\n[grid]\n"G\\nU" = 1\n', r"grid.'G\nU': unknown key"),
    ('name = "huge"\n[grid]\nG = 1\n[schedule.c]\nrate = nan\ncount = 1\nseed = 1\n',
     "schedule.c.rate must be deaths per second in (0, 1], got nan"),
    ('name = "huge"\n[grid]\nschedule = "c"\n[schedule.c]\nrate = 0.5\ncount = 1\n'
     f"seed = {2**64}\n", "schedule.c.seed must be an integer in [0, 9223372036854775807]"),
    ('name = "huge"\n[grid]\ngain = inf\n', "grid.gain: gain must be a multiple of 0.001"),
])
def test_absurd_specs_are_one_line_exit_2_and_write_nothing(
        tmp_path: Path, text: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "spec.toml"
    path.write_text(text)
    line = refused(["sweep", str(path), "--out", str(tmp_path / "out")], capsys)
    assert message in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["spec.toml"]


def test_run_cell_refuses_a_huge_duration_with_a_value_error() -> None:
    with pytest.raises(ValueError, match=re.escape(
            "duration must be an integer in [0, 1000000], got 10000000000")):
        run_cell(duration=10**10, U=1)


# --- the bounds, declared ------------------------------------------------------------------

def test_every_integer_parameter_is_bounded() -> None:
    for p in PARAMS:
        if p.name == "seed":  # a stream's name, no count: it never enters a sum
            assert p.kind.maximum == rng.MAX_SEED == 2**31 - 1
        elif isinstance(p.kind, (Int, Cap)):
            assert p.kind.maximum in (MAX_SECONDS, MAX_COPIES), p.name
        elif isinstance(p.kind, Records):
            assert p.kind.max_len == MAX_EVENTS, p.name
            for field, kind in p.kind.fields:
                if field == "weight":  # a delay table's: never summed into a count, only
                    # into the table's total, below MAX_EVENTS x 10^9, far inside int64
                    assert isinstance(kind, Int)
                    assert kind.maximum == MAX_DELAY_WEIGHT, (p.name, field)
                elif isinstance(kind, Int):
                    assert kind.maximum in (MAX_SECONDS, MAX_COPIES), (p.name, field)
        elif isinstance(p.kind, Times):
            # (a Deployment's template changes: past MAX_ROLLOUTS the real controller's
            # revision-history cleanup would start, which its model leaves out)
            assert (p.kind.maximum, p.kind.max_len) == (
                MAX_SECONDS, MAX_ROLLOUTS if p.name == "rollout" else MAX_EVENTS), p.name
        elif isinstance(p.kind, IntOrPercent):
            assert p.kind.maximum == MAX_COPIES, p.name
        elif isinstance(p.kind, Events):
            assert (p.kind.max_at, p.kind.max_count, p.kind.max_len) == (
                MAX_SECONDS, MAX_COPIES, MAX_EVENTS), p.name


def frame_at_the_bounds(**change: object) -> pl.DataFrame:
    return cells_frame([Cell()]).with_columns(**{k: pl.lit(v) for k, v in change.items()})


@pytest.mark.parametrize(("change", "message"), [
    ({"desired": pl.Series([2**64 - 1], dtype=pl.UInt64)},
     f"desired must be an integer in [0, 1000000], got {2**64 - 1}"),
    ({"U": pl.Series([INT64_MAX])}, f"U must be an integer in [1, 1000000], got {INT64_MAX}"),
    ({"gain": pl.Series([float("nan")])}, "gain must be a multiple of 0.001 in (0, 1], got nan"),
    ({"deaths": pl.Series([[{"at": 0, "count": 10**7}]])},
     "deaths event count must be an integer in [0, 1000000], got 10000000"),
    ({"deaths": pl.Series([[{"at": 1, "count": 1}] * (MAX_EVENTS + 1)])},
     "deaths: 10001 events, more than the 10000 a cell may hold"),
])
def test_simulate_refuses_a_frame_beyond_the_bounds(change: dict[str, pl.Series],
                                                     message: str) -> None:
    cells = cells_frame([Cell()]).with_columns(**change)
    with pytest.raises(ValueError, match=re.escape(message)):
        simulate(cells)


def test_gain_nan_and_inf_are_refused_by_name() -> None:
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match=r"gain must be a multiple of 0\.001"):
            Cell(gain=bad)


# --- no silent failure in the kernel ------------------------------------------------------

def worst(T: int, d: int, lb: int) -> Cell:
    """A loop that never sees its copies until the very end: it creates ``d`` copies every
    second, so copies, overshoot and excess copy-seconds grow as fast as the model allows."""
    return Cell(controller="ledger", desired=d, U=1, G=T, B=0, duration=T, deaths=(),
                ledger_base=lb)


def worst_metrics(T: int, d: int, lb: int) -> dict[str, object]:
    created, reads = T * d, d + (T + 1) * lb
    return {"rounds": T + 1, "work": created, "work_per_round": created / (T + 1),
            "created": created, "unneeded": created - d, "delete_commands": 0, "deleted": 0,
            "overshoot": (T - 1) * d, "stable_at": None, "reads": reads,
            "reads_per_round": reads / (T + 1),
            "excess_copy_seconds": d * T * (T - 1) // 2 + d * (T - 1),
            "missing_copy_seconds": 0, "create_commands": created, "failed_creates": 0,
            "overshoot_after": None, "missing_after": None, "settle_after": None,
            **dict.fromkeys(WORLD_METRICS["deployment"]), "responses": []}


@pytest.mark.parametrize(("T", "d", "lb"), [(2, 1, 0), (5, 3, 2), (17, 2, 7), (40, 4, 20)])
def test_the_worst_cells_closed_form_is_the_reference_models(T: int, d: int, lb: int) -> None:
    assert run_reference(worst(T, d, lb)) == worst_metrics(T, d, lb)


def test_the_worst_cell_at_the_bounds_is_exact() -> None:
    # excess copy-seconds ~5e17: the largest figure the bounds allow is still exact
    got = run_cell(**{f: getattr(worst(MAX_SECONDS, MAX_COPIES, MAX_COPIES), f)
                      for f in ("controller", "desired", "U", "G", "B", "duration", "deaths",
                                "ledger_base")})
    assert got == worst_metrics(MAX_SECONDS, MAX_COPIES, MAX_COPIES)
    assert got["excess_copy_seconds"] > 4 * 10**17  # type: ignore[operator]


def arrays_at(**change: int) -> dict[str, np.ndarray]:
    arrays = kernel_inputs(cells_frame([Cell(deaths=((1, MAX_COPIES),) * MAX_EVENTS,
                                             restart_at=(0,) * MAX_EVENTS)]))
    arrays.update({k: np.array([v]) for k, v in change.items()})
    return arrays


def bound_arrays(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {k: arrays[k] for k in ("desired", "U", "G", "B", "duration", "ledger_base",
                                   "deaths_offsets", "deaths_count", "restart_at_offsets",
                                   "initial")}


def test_the_bounds_keep_every_cell_inside_the_kernels_limits() -> None:
    # Every parameter at its bound at once (U = 1: the most rounds): the guard has nothing
    # to refuse, so no checked cell can overflow or fail to allocate.
    at_bounds = arrays_at(desired=MAX_COPIES, U=1, G=MAX_SECONDS, B=MAX_SECONDS,
                          duration=MAX_SECONDS, ledger_base=MAX_COPIES, initial=MAX_COPIES)
    kernel.refuse_unsafe(**bound_arrays(at_bounds))
    # ... with a margin: four times the copies still pass
    kernel.refuse_unsafe(**bound_arrays(arrays_at(
        desired=4 * MAX_COPIES, U=1, duration=MAX_SECONDS, ledger_base=4 * MAX_COPIES)))


@pytest.mark.parametrize(("change", "message"), [
    ({"duration": 10**12, "U": 1}, "needs 2.98e+04 GiB of scratch, above the 1 GiB"),
    ({"duration": 10**10, "U": 1}, "needs 298 GiB of scratch"),
    ({"desired": 2**40, "U": 1, "duration": 10**6}, "could count up to 1.1e+24, past int64"),
    ({"desired": INT64_MAX, "duration": 900}, "past int64"),
])
def test_the_kernel_refuses_what_it_cannot_allocate_or_count(change: dict[str, int],
                                                             message: str) -> None:
    # simulate(checked=True) is how sweeps call it: even unchecked values never become numbers
    cells = cells_frame([Cell(), Cell()]).with_columns(
        **{k: pl.Series([getattr(Cell(), k), v]) for k, v in change.items()})
    with pytest.raises(ValueError, match=re.escape("kernel: cell 1 (")) as info:
        simulate(cells, checked=True)
    assert message in str(info.value)


@pytest.mark.parametrize("first", [Cell(grace=1), Cell(controller="replicaset")],
                         ids=["world-kernel-row", "event-row"])
def test_a_refusal_names_the_frames_row_when_the_kernel_ran_part_of_it(first: Cell) -> None:
    # The frame's rows 1 and 2 go to the count kernel together, apart from row 0: the
    # kernel refuses its own second cell, the frame's third.
    cells = cells_frame([first, Cell(), Cell()]).with_columns(
        duration=pl.Series([100, 100, 10**12]), U=pl.Series([15, 15, 1]))
    with pytest.raises(KernelRefusalError) as info:
        simulate(cells, checked=True)
    assert (info.value.row, str(info.value)) == (2, f"kernel: cell 2 {info.value.reason}")
    assert info.value.reason.startswith("(duration 1000000000000, U 1, 1 death events) needs ")


def test_the_world_kernel_checks_only_the_rows_it_is_given() -> None:
    # simulate hands the world kernel a split batch's world rows as row numbers into the
    # whole batch: it refuses one of them by its row in the batch, and never one it was not
    # asked to run (the count kernel's rows, checked there).
    from reconsim.model.kernels.world import WORLD_OUT_COLUMNS, simulate_world_arrays

    cells = cells_frame([Cell(grace=1), Cell(), Cell(grace=1)]).with_columns(
        duration=pl.Series([100, 10**12, 10**12]), U=pl.Series([15, 1, 1]))
    arrays = kernel_inputs(cells)
    out = simulate_world_arrays(rows=np.array([0]), **arrays)
    assert out[0, WORLD_OUT_COLUMNS.index("rounds")] == 7  # seconds 0, 15 ... 90
    with pytest.raises(KernelRefusalError) as info:
        simulate_world_arrays(rows=np.array([2, 0]), **arrays)
    assert info.value.row == 2
    assert info.value.reason.startswith("(duration 1000000000000, U 1, 1 death events) needs ")


def test_a_refusal_is_a_value_error_that_survives_pickling() -> None:
    refusal = KernelRefusalError(4, "(desired 9) could count up to 1e+24, past int64")
    assert isinstance(refusal, ValueError)
    again = pickle.loads(pickle.dumps(refusal))
    assert (again.row, again.reason, str(again)) == (
        4, refusal.reason, "kernel: cell 4 (desired 9) could count up to 1e+24, past int64")


# --- schedules and grids, counted before they are built ------------------------------------

def test_a_schedule_is_counted_at_the_longest_duration() -> None:
    text = ('name = "t"\n[grid]\nschedule = "p"\nduration = [100, {long}]\n'
            "[schedule.p]\nevery = 10\ncount = 1\n")
    assert parse_spec(text.format(long=100_000)).schedules["p"].count(100_000) == MAX_EVENTS
    with pytest.raises(SpecError, match="it gives 10001 death events"):
        parse_spec(text.format(long=100_010))


def test_the_default_chunk_shrinks_to_hold_long_lists_and_a_set_one_is_refused() -> None:
    text = ('name = "t"\n{chunk}[grid]\nschedule = "p"\nduration = 3600\n'
            "restart_at = [[], [1, 2, 3, 4]]\n[schedule.p]\nevery = 10\ncount = 1\n")
    entries = 360 + 4
    assert parse_spec(text.format(chunk="")).chunk_size == MAX_CHUNK_ENTRIES // entries
    assert parse_spec(text.format(chunk="chunk_size = 1000\n")).chunk_size == 1000
    with pytest.raises(SpecError, match=re.escape(
            f"chunk_size: 50000 cells x up to {entries} death events and restart times each is "
            f"18,200,000 list entries a chunk, more than 10,000,000; set chunk_size <= "
            f"{MAX_CHUNK_ENTRIES // entries}")):
        parse_spec(text.format(chunk="chunk_size = 50000\n"))
    assert parse_spec('name = "t"\n').chunk_size == DEFAULT_CHUNK_SIZE


@pytest.mark.parametrize(("g_values", "chunk"), [
    (40, DEFAULT_CHUNK_SIZE),  # 40 chunks of the default size: no larger
    (41, 51_250),  # 2,050,000 cells: 40 chunks
    (200, LARGE_CHUNK_SIZE),  # 10,000,000 cells: 40 chunks at their largest
    (3000, LARGE_CHUNK_SIZE),  # 150,000,000 cells: 600 of the largest
])
def test_a_large_grid_gets_fewer_larger_chunks(g_values: int, chunk: int) -> None:
    spec = parse_spec(f'name = "t"\n[grid]\nG = {{from = 0, to = {g_values - 1}}}\n'
                      "U = {from = 1, to = 50000}\n")
    assert spec.n_cells == g_values * 50_000
    assert spec.chunk_size == chunk
    assert spec.n_chunks == -(-spec.n_cells // chunk)
    assert spec.n_chunks <= TARGET_CHUNKS or chunk == LARGE_CHUNK_SIZE


def test_max_cells_refuses_and_raises_the_limit(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "spec.toml"
    path.write_text('name = "t"\n[grid]\nG = [0, 10, 20]\nduration = 60\n')
    out = tmp_path / "out"
    line = refused(["sweep", str(path), "--out", str(out), "--max-cells", "2"], capsys)
    assert line == ("error: reconsim sweep: t: the grid has 3 cells, more than the limit of 2; "
                    "--max-cells N raises it")
    assert not out.exists()
    for bad in ("0", str(10**16)):
        assert "--max-cells must be an integer in [1, 1000000000000000]" in refused(
            ["sweep", str(path), "--out", str(out), "--max-cells", bad], capsys)
    assert main(["sweep", str(path), "--out", str(out), "--max-cells", "3",
                 "--backend", "sequential", "--no-progress"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "t: 3 cells in 1 chunk of up to 50,000"


class StopError(Exception):
    """Raised by the first chunk: the sweep has started."""


def test_ten_billion_cells_start_without_per_chunk_lists(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # 10**10 cells in 10**10 chunks of one cell: any list or sum over the chunks would take
    # gigabytes before the first chunk runs.
    spec = parse_spec('name = "t"\nchunk_size = 1\n[grid]\nG = {from = 0, to = 99999}\n'
                      "U = {from = 1, to = 100000}\n")
    assert (spec.n_cells, spec.n_chunks) == (10**10, 10**10)
    started = []

    def first_chunk(spec: object, out: object, index: int, threads: object = None,
                    expected: object = None) -> None:
        started.append(index)
        raise StopError

    monkeypatch.setattr(runner, "run_and_write_chunk", first_chunk)
    tracemalloc.start()
    try:
        with pytest.raises(StopError):
            runner.run_sweep(spec, tmp_path / "out", backend="sequential", progress=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert started == [0]
    assert peak < 50 * 2**20, f"{peak / 2**20:.0f} MiB before the first chunk"
