"""A kernel compiled in a process is said once, with its time; loaded from numba's cache, not
at all. The command line prints it on a terminal only."""

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
