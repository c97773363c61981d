"""A kernel compiled in a process is said once, with its time; loaded from numba's cache, not
at all; a sweep's workers' compilations are said by the sweep, once, and their seconds are
left out of its cells per second. The command line prints it whether stderr is a terminal
or not."""

from __future__ import annotations

import io
import json
import logging
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reconsim import cli
from reconsim.model.kernels.specialise import compile_log
from reconsim.sweep import runner
from reconsim.sweep.runner import run_sweep
from reconsim.sweep.spec import Spec, parse_spec
from reconsim.sweep.store import Model
from tests.helpers.compiling import NOTICE, compiling_run_and_write_chunk

_RUN = """
import logging
logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s")
from reconsim import run_cell
run_cell(controller="ledger", G=20)
run_cell(controller="ledger", G=30)
"""


def test_a_compiled_kernel_is_logged_once_and_a_cached_one_not(tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}

    def run() -> list[str]:
        done = subprocess.run([sys.executable, "-c", _RUN], env=env, capture_output=True,
                              text=True, check=True)
        return [line for line in done.stderr.splitlines() if line.startswith("reconsim.compile")]

    cold = run()
    assert len(cold) == 1, cold  # the count kernel for ledger, compiled once for both cells
    assert "compiled the count kernel for controller 'ledger' in " in cold[0]
    seconds = float(cold[0].split(" in ")[1].split(" s ")[0])
    assert seconds > 0
    assert run() == []  # the second process loads it from the cache


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("stream", [_Terminal, io.StringIO])
def test_the_command_line_says_so_on_a_terminal_or_not(monkeypatch: pytest.MonkeyPatch,
                                                       stream: type[io.StringIO]) -> None:
    # A sweep run from a script or a CI job says why its first minute is quiet, too.
    err = stream()
    monkeypatch.setattr(sys, "stderr", err)
    with cli._notices():
        compile_log.info("compiled the count kernel for controller 'ledger' in 7.0 s")
        logging.getLogger("reconsim.sweep").warning("resuming")
    assert err.getvalue().splitlines() == [
        "compiled the count kernel for controller 'ledger' in 7.0 s", "resuming"]


SPEC = """
name = "notice"
chunk_size = 8
[grid]
G = [0, 10, 20, 30]
U = [5, 15, 30, 60]
duration = 60
"""


@pytest.mark.parametrize("backend", ["loky", "sequential"])
def test_a_workers_compilation_is_said_once_by_the_sweep(
        backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    # Each of the two chunks logs a compilation, in a worker whose log reaches no terminal:
    # the sweep reports it once, in the parent, and the table is whole.
    monkeypatch.setattr(runner, "run_and_write_chunk", compiling_run_and_write_chunk)
    caplog.set_level(logging.INFO, logger="reconsim.compile")
    result = run_sweep(parse_spec(SPEC), tmp_path / "out", jobs=2, backend=backend,
                       progress=False)
    assert result.computed == 16
    said = [r.getMessage() for r in caplog.records if r.name == "reconsim.compile"]
    assert said == [NOTICE]



#: Seconds each chunk of :func:`slowly_compiling_chunk` spends "compiling".
COMPILING = 0.4
_run_and_write_chunk = runner.run_and_write_chunk


def slowly_compiling_chunk(spec: Spec, out: Path, index: int, threads: int | None = None,
                           expected: Model | None = None) -> tuple[int, int]:
    """A chunk whose worker first spends :data:`COMPILING` seconds compiling a kernel, and
    logs it with its time as the kernels do."""
    started = time.perf_counter()
    time.sleep(COMPILING)
    logging.getLogger("reconsim.compile").info(
        "compiled the %s for controller %r in %.1f s (its first use here; numba keeps it on "
        "disk for later runs)", "count kernel", "ledger", time.perf_counter() - started)
    return _run_and_write_chunk(spec, out, index, threads, expected)


def test_a_sweeps_cells_per_second_leave_out_its_compiling(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # Two chunks, each compiling for 0.4 s: the sweep says the kernel once on stderr,
    # captured (no terminal), records the seconds, and gives its rate without them (one
    # worker: all of them were wall-clock time) beside its rate with them.
    monkeypatch.setattr(runner, "run_and_write_chunk", slowly_compiling_chunk)
    spec, out = tmp_path / "spec.toml", tmp_path / "out"
    spec.write_text(SPEC, encoding="utf-8")
    assert cli.main(["sweep", str(spec), "--out", str(out), "--backend", "sequential",
                     "--no-progress"]) == 0
    printed, err = capsys.readouterr()
    said = [line for line in err.splitlines() if "for controller 'ledger'" in line]
    assert len(said) == 1, err  # one line for the kernel, not one a chunk
    assert said[0].startswith("compiled the count kernel for controller 'ledger' in 0.4 s")
    manifest = json.loads((out / "sweep.json").read_text(encoding="utf-8"))
    seconds, compiled = manifest["seconds"], manifest["compile_seconds"]
    assert 2 * COMPILING <= compiled < seconds
    assert manifest["cells_per_second"] == pytest.approx(16 / (seconds - compiled), rel=0.05)
    assert manifest["cells_per_second_with_compile"] == pytest.approx(16 / seconds, rel=0.05)
    assert re.fullmatch(rf"{re.escape(str(out))}: 16 cells in 2 chunks, [\d.]+ s \([\d.]+ s "
                        r"of it compiling kernels\), [\d,]+ cells/s without compiling "
                        r"\(table: 16 cells\)", printed.splitlines()[1])
