"""A kernel compiled in a process is said once, with its time; loaded from numba's cache, not
at all; a sweep's workers' compilations are said by the sweep, once. The command line prints
it on a terminal only."""

from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reconsim import cli
from reconsim.model.kernels.specialise import compile_log
from reconsim.sweep import runner
from reconsim.sweep.runner import run_sweep
from reconsim.sweep.spec import parse_spec
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


@pytest.mark.parametrize(("stream", "shown"), [(_Terminal, True), (io.StringIO, False)])
def test_the_command_line_says_so_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch,
                                                     stream: type[io.StringIO],
                                                     shown: bool) -> None:
    err = stream()
    monkeypatch.setattr(sys, "stderr", err)
    with cli._notices():
        compile_log.info("compiled the count kernel for controller 'ledger' in 7.0 s")
        logging.getLogger("reconsim.sweep").warning("resuming")
    lines = err.getvalue().splitlines()
    assert ("compiled the count kernel for controller 'ledger' in 7.0 s" in lines) is shown
    assert "resuming" in lines  # other notices are printed either way


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
